//! A wide tournament tree over node keys: the maximum, how many leaves hold it, and the k-th
//! such leaf in node order. Each inner entry summarises [`ARITY`] children (their maximum and how
//! many leaves below hold it), so 10,000 nodes need 4 levels and a leaf update recomputes at most
//! one contiguous run of [`ARITY`] entries per level, stopping at the first level that does not
//! change. Contiguous runs are what the memory system serves fast: a binary tree over the same
//! leaves misses cache on nearly every level. Keys are `u128`; key 0 means "no candidate" and
//! is never counted.

/// Children per inner entry.
pub const ARITY: usize = 16;

/// One level: per entry, the maximum below it and how many leaves hold that maximum.
#[derive(Clone, Debug, Default)]
struct Level {
    max: Vec<u128>,
    count: Vec<u32>,
}

impl Level {
    fn new(len: usize) -> Self {
        Level { max: vec![0; len], count: vec![0; len] }
    }

    /// The (maximum, count) over entries `g*ARITY .. (g+1)*ARITY`.
    #[inline]
    fn summarise(&self, g: usize) -> (u128, u32) {
        let lo = g * ARITY;
        let hi = (lo + ARITY).min(self.max.len());
        let max = &self.max[lo..hi];
        let count = &self.count[lo..hi];
        let m = max.iter().copied().max().unwrap_or(0);
        let mut c = 0;
        for (x, k) in max.iter().zip(count) {
            c += if *x == m { *k } else { 0 };
        }
        (m, c)
    }
}

/// The (maximum, count) over leaves `g*ARITY .. (g+1)*ARITY`; a leaf counts 1 when it is
/// non-zero, so leaves need no count column.
#[inline]
fn summarise_leaves(leaves: &[u128], g: usize) -> (u128, u32) {
    let lo = g * ARITY;
    let run = &leaves[lo..(lo + ARITY).min(leaves.len())];
    let m = run.iter().copied().max().unwrap_or(0);
    if m == 0 {
        return (0, 0);
    }
    (m, run.iter().map(|&x| u32::from(x == m)).sum())
}

/// Max-tree over `len` leaves.
#[derive(Clone, Debug, Default)]
pub struct MaxTree {
    len: usize,
    /// The leaf keys.
    leaves: Vec<u128>,
    /// Inner levels, bottom up; the last has one entry, the root.
    levels: Vec<Level>,
}

impl MaxTree {
    /// A tree of `len` leaves, all 0.
    pub fn new(len: usize) -> Self {
        let leaves = vec![0; len.max(1)];
        let mut levels = vec![Level::new(leaves.len().div_ceil(ARITY))];
        while levels.last().map_or(0, |l| l.max.len()) > 1 {
            let below = levels.last().map_or(0, |l| l.max.len());
            levels.push(Level::new(below.div_ceil(ARITY)));
        }
        MaxTree { len, leaves, levels }
    }

    /// Resets every leaf to 0, keeping the allocation when `len` is unchanged.
    pub fn reset(&mut self, len: usize) {
        if len != self.len || self.levels.is_empty() {
            *self = MaxTree::new(len);
        } else {
            self.leaves.iter_mut().for_each(|x| *x = 0);
            for l in &mut self.levels {
                l.max.iter_mut().for_each(|x| *x = 0);
                l.count.iter_mut().for_each(|x| *x = 0);
            }
        }
    }

    /// Sets leaf `i` without fixing the levels above (call [`MaxTree::rebuild`] after a batch).
    #[inline]
    pub fn set_raw(&mut self, i: usize, v: u128) {
        self.leaves[i] = v;
    }

    /// The key of leaf `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u128 {
        self.leaves[i]
    }

    /// Recomputes every inner entry.
    pub fn rebuild(&mut self) {
        let first = &mut self.levels[0];
        for g in 0..first.max.len() {
            let (m, c) = summarise_leaves(&self.leaves, g);
            first.max[g] = m;
            first.count[g] = c;
        }
        for l in 1..self.levels.len() {
            let (below, above) = self.levels.split_at_mut(l);
            let (below, above) = (&below[l - 1], &mut above[0]);
            for g in 0..above.max.len() {
                let (m, c) = below.summarise(g);
                above.max[g] = m;
                above.count[g] = c;
            }
        }
    }

    /// Sets leaf `i` to `v` and fixes the levels above, stopping where nothing changes.
    pub fn set(&mut self, i: usize, v: u128) {
        if self.leaves[i] == v {
            return;
        }
        self.leaves[i] = v;
        let mut g = i / ARITY;
        let (m, c) = summarise_leaves(&self.leaves, g);
        let first = &mut self.levels[0];
        if first.max[g] == m && first.count[g] == c {
            return;
        }
        first.max[g] = m;
        first.count[g] = c;
        for l in 1..self.levels.len() {
            g /= ARITY;
            let (m, c) = self.levels[l - 1].summarise(g);
            let above = &mut self.levels[l];
            if above.max[g] == m && above.count[g] == c {
                return;
            }
            above.max[g] = m;
            above.count[g] = c;
        }
    }

    /// The maximum and how many leaves hold it ((0, 0) when every leaf is 0).
    pub fn top(&self) -> (u128, u32) {
        match self.levels.last() {
            Some(root) => (root.max[0], root.count[0]),
            None => (0, 0),
        }
    }

    /// The leaf index of the `k`-th (0-based, in leaf order) leaf holding the maximum; `k` must
    /// be below the count [`MaxTree::top`] gives.
    pub fn kth_max(&self, mut k: u32) -> usize {
        let (target, _) = self.top();
        let mut g = 0;
        for l in (0..self.levels.len() - 1).rev() {
            let level = &self.levels[l];
            let lo = g * ARITY;
            let hi = (lo + ARITY).min(level.max.len());
            let mut next = hi - 1;
            for j in lo..hi {
                if level.max[j] == target {
                    if k < level.count[j] {
                        next = j;
                        break;
                    }
                    k -= level.count[j];
                }
            }
            g = next;
        }
        let lo = g * ARITY;
        let hi = (lo + ARITY).min(self.leaves.len());
        let mut last = hi - 1;
        for j in lo..hi {
            if self.leaves[j] == target {
                if k == 0 {
                    return j;
                }
                k -= 1;
                last = j;
            }
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    #[test]
    fn max_count_and_kth_follow_updates() {
        let mut t = MaxTree::new(5);
        for (i, v) in [3, 7, 7, 1, 7].into_iter().enumerate() {
            t.set(i, v);
        }
        assert_eq!(t.top(), (7, 3));
        assert_eq!((t.kth_max(0), t.kth_max(1), t.kth_max(2)), (1, 2, 4));
        t.set(2, 0);
        assert_eq!(t.top(), (7, 2));
        assert_eq!(t.kth_max(1), 4);
        t.set(3, 9);
        assert_eq!(t.top(), (9, 1));
        assert_eq!(t.kth_max(0), 3);
        let e = MaxTree::new(3);
        assert_eq!(e.top().1, 0);
    }

    /// Against a plain scan, over sizes that give one, two and three inner levels and partial
    /// last groups, with few distinct values so ties are common; both update paths.
    #[test]
    fn agrees_with_a_plain_scan() {
        let mut rng = SeededRng::new(7);
        for len in [1, 2, 15, 16, 17, 255, 256, 257, 1000, 5000] {
            let mut plain = vec![0u128; len];
            let mut t = MaxTree::new(len);
            for step in 0..3000 {
                let i = rng.below(len);
                let v = rng.below(5) as u128;
                plain[i] = v;
                if step % 500 == 499 {
                    t.set_raw(i, v);
                    t.rebuild();
                } else {
                    t.set(i, v);
                }
                let m = plain.iter().copied().max().unwrap_or(0);
                let holders: Vec<usize> = (0..len).filter(|&j| m != 0 && plain[j] == m).collect();
                assert_eq!(t.top(), (m, holders.len() as u32), "len {len} step {step}");
                if !holders.is_empty() {
                    let k = rng.below(holders.len());
                    assert_eq!(t.kth_max(k as u32), holders[k], "len {len} step {step} k {k}");
                }
            }
        }
    }
}
