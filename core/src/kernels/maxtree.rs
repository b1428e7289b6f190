//! A tournament tree over node scores: the maximum, how many leaves hold it, and the k-th such
//! leaf in node order, each in O(log n); a leaf update is O(log n). Infeasible nodes hold
//! `f64::NEG_INFINITY`.

/// Max-tree over `len` leaves.
#[derive(Clone, Debug, Default)]
pub struct MaxTree {
    size: usize,
    /// Per tree node: (maximum, how many leaves hold it), together so a walk up the tree touches
    /// one cache line per level.
    node: Vec<(f64, u32)>,
}

impl MaxTree {
    /// A tree of `len` leaves, all infeasible.
    pub fn new(len: usize) -> Self {
        let size = len.next_power_of_two().max(1);
        MaxTree { size, node: vec![(f64::NEG_INFINITY, 0); 2 * size] }
    }

    /// Resets every leaf to infeasible, keeping the allocation when `len` fits.
    pub fn reset(&mut self, len: usize) {
        let size = len.next_power_of_two().max(1);
        if size != self.size {
            *self = MaxTree::new(len);
        } else {
            self.node.iter_mut().for_each(|x| *x = (f64::NEG_INFINITY, 0));
        }
    }

    /// Sets leaf `i` without fixing its ancestors (call [`MaxTree::rebuild`] after a batch).
    pub fn set_raw(&mut self, i: usize, v: f64) {
        self.node[self.size + i] = (v, u32::from(v != f64::NEG_INFINITY));
    }

    fn pull(&mut self, p: usize) {
        let (l, r) = (self.node[2 * p], self.node[2 * p + 1]);
        self.node[p] = if l.0 > r.0 {
            l
        } else if r.0 > l.0 {
            r
        } else {
            (l.0, l.1 + r.1)
        };
    }

    /// Recomputes every inner node.
    pub fn rebuild(&mut self) {
        for p in (1..self.size).rev() {
            self.pull(p);
        }
    }

    /// Sets leaf `i` to `v` and fixes its ancestors, stopping where nothing changes.
    pub fn set(&mut self, i: usize, v: f64) {
        let leaf = self.size + i;
        if self.node[leaf].0 == v {
            return;
        }
        self.set_raw(i, v);
        let mut p = leaf / 2;
        while p >= 1 {
            let old = self.node[p];
            self.pull(p);
            if self.node[p] == old {
                break;
            }
            p /= 2;
        }
    }

    /// The maximum and how many leaves hold it (`NEG_INFINITY`, 0 when none is feasible).
    pub fn top(&self) -> (f64, u32) {
        self.node[1]
    }

    /// The leaf index of the `k`-th (0-based, in leaf order) leaf holding the maximum.
    pub fn kth_max(&self, mut k: u32) -> usize {
        let target = self.node[1].0;
        let mut p = 1;
        while p < self.size {
            let l = 2 * p;
            if self.node[l].0 == target {
                if k < self.node[l].1 {
                    p = l;
                    continue;
                }
                k -= self.node[l].1;
            }
            p = l + 1;
        }
        p - self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_count_and_kth_follow_updates() {
        let mut t = MaxTree::new(5);
        for (i, v) in [3.0, 7.0, 7.0, 1.0, 7.0].into_iter().enumerate() {
            t.set(i, v);
        }
        assert_eq!(t.top(), (7.0, 3));
        assert_eq!((t.kth_max(0), t.kth_max(1), t.kth_max(2)), (1, 2, 4));
        t.set(2, f64::NEG_INFINITY);
        assert_eq!(t.top(), (7.0, 2));
        assert_eq!(t.kth_max(1), 4);
        t.set(3, 9.0);
        assert_eq!(t.top(), (9.0, 1));
        assert_eq!(t.kth_max(0), 3);
        let e = MaxTree::new(3);
        assert_eq!(e.top().1, 0);
    }
}
