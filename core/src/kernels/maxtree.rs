//! A tournament tree over node scores: the maximum, how many leaves hold it, and the k-th such
//! leaf in node order, each in O(log n); a leaf update is O(log n). Infeasible nodes hold
//! `f64::NEG_INFINITY`.

/// Max-tree over `len` leaves.
#[derive(Clone, Debug, Default)]
pub struct MaxTree {
    size: usize,
    max: Vec<f64>,
    count: Vec<u32>,
}

impl MaxTree {
    /// A tree of `len` leaves, all infeasible.
    pub fn new(len: usize) -> Self {
        let size = len.next_power_of_two().max(1);
        MaxTree { size, max: vec![f64::NEG_INFINITY; 2 * size], count: vec![0; 2 * size] }
    }

    /// Resets every leaf to infeasible, keeping the allocation when `len` fits.
    pub fn reset(&mut self, len: usize) {
        let size = len.next_power_of_two().max(1);
        if size != self.size {
            *self = MaxTree::new(len);
        } else {
            self.max.iter_mut().for_each(|x| *x = f64::NEG_INFINITY);
            self.count.iter_mut().for_each(|x| *x = 0);
        }
    }

    /// Sets leaf `i` without fixing its ancestors (call [`MaxTree::rebuild`] after a batch).
    pub fn set_raw(&mut self, i: usize, v: f64) {
        self.max[self.size + i] = v;
        self.count[self.size + i] = u32::from(v != f64::NEG_INFINITY);
    }

    fn pull(&mut self, p: usize) {
        let (l, r) = (2 * p, 2 * p + 1);
        let (ml, mr) = (self.max[l], self.max[r]);
        if ml > mr {
            self.max[p] = ml;
            self.count[p] = self.count[l];
        } else if mr > ml {
            self.max[p] = mr;
            self.count[p] = self.count[r];
        } else {
            self.max[p] = ml;
            self.count[p] = self.count[l] + self.count[r];
        }
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
        if self.max[leaf] == v {
            return;
        }
        self.set_raw(i, v);
        let mut p = leaf / 2;
        while p >= 1 {
            let (old_max, old_count) = (self.max[p], self.count[p]);
            self.pull(p);
            if self.max[p] == old_max && self.count[p] == old_count {
                break;
            }
            p /= 2;
        }
    }

    /// The maximum and how many leaves hold it (`NEG_INFINITY`, 0 when none is feasible).
    pub fn top(&self) -> (f64, u32) {
        (self.max[1], self.count[1])
    }

    /// The leaf index of the `k`-th (0-based, in leaf order) leaf holding the maximum.
    pub fn kth_max(&self, mut k: u32) -> usize {
        let target = self.max[1];
        let mut p = 1;
        while p < self.size {
            let l = 2 * p;
            if self.max[l] == target {
                if k < self.count[l] {
                    p = l;
                    continue;
                }
                k -= self.count[l];
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
