//! A wide tournament tree over node keys: the maximum, how many leaves hold it, how many leaves
//! are non-zero, and the k-th such leaf in node order — over all leaves or over a range of them.
//! Each inner entry summarises [`ARITY`] children (their maximum, how many leaves below hold
//! it, how many leaves below are non-zero), so 10,000 nodes need 5 levels and a leaf update
//! recomputes at most one contiguous run of [`ARITY`] entries per level, stopping at the first
//! level that does not change. Contiguous runs are what the memory system serves fast: a binary
//! tree over the same leaves misses cache on nearly every level. Keys are `u128`; key 0 means
//! "no candidate" and is never counted.
//!
//! The range queries serve Volcano's node sampling (volcano-behaviour.md §2 allocate,
//! `numNodesToFind`): the window of a sampled scan is the leaves from a rotating start up to the
//! k-th non-zero one, and the best node is the maximum inside that window.

/// Children per inner entry. 8 rather than 16: at 10,000 nodes / 100,000 pods (`sampling_ab`
/// under cachegrind) the cycle runs 8 % fewer instructions and 3 % fewer L1 data misses, the
/// same last-level misses, with and without sampling; 4 runs more instructions than 8
/// (docs/performance.md, "Node sampling on the fast path").
pub const ARITY: usize = 8;

/// Right-hand runs a range decomposes into, at most: one per tier, for trees of up to
/// `ARITY`¹¹ leaves (more than `u32` node indices can name).
const RIGHT_RUNS: usize = 11;

/// One level: per entry, the maximum below it, how many leaves hold that maximum, and how many
/// leaves below it are non-zero.
#[derive(Clone, Debug, Default)]
struct Level {
    max: Vec<u128>,
    count: Vec<u32>,
    nonzero: Vec<u32>,
}

impl Level {
    fn new(len: usize) -> Self {
        Level { max: vec![0; len], count: vec![0; len], nonzero: vec![0; len] }
    }

    /// The (maximum, count, non-zero) over entries `g*ARITY .. (g+1)*ARITY`.
    #[inline]
    fn summarise(&self, g: usize) -> (u128, u32, u32) {
        let lo = g * ARITY;
        let hi = (lo + ARITY).min(self.max.len());
        let max = &self.max[lo..hi];
        let count = &self.count[lo..hi];
        let m = max.iter().copied().max().unwrap_or(0);
        let mut c = 0;
        for (x, k) in max.iter().zip(count) {
            c += if *x == m { *k } else { 0 };
        }
        (m, c, self.nonzero[lo..hi].iter().sum())
    }

    #[inline]
    fn store(&mut self, g: usize, (m, c, nz): (u128, u32, u32)) -> bool {
        if self.max[g] == m && self.count[g] == c && self.nonzero[g] == nz {
            return false;
        }
        self.max[g] = m;
        self.count[g] = c;
        self.nonzero[g] = nz;
        true
    }
}

/// The (maximum, count, non-zero) over leaves `g*ARITY .. (g+1)*ARITY`; a leaf counts 1 when it
/// is non-zero, so leaves need no count column.
#[inline]
fn summarise_leaves(leaves: &[u128], g: usize) -> (u128, u32, u32) {
    let lo = g * ARITY;
    let run = &leaves[lo..(lo + ARITY).min(leaves.len())];
    let m = run.iter().copied().max().unwrap_or(0);
    if m == 0 {
        return (0, 0, 0);
    }
    let (mut c, mut nz) = (0, 0);
    for &x in run {
        c += u32::from(x == m);
        nz += u32::from(x != 0);
    }
    (m, c, nz)
}

/// Entries `lo..hi` of one tier (leaves in tier 0), all children of one entry above or the
/// root tier, with the maximum below them and how many leaves below hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    tier: u8,
    lo: u32,
    hi: u32,
    max: u128,
    count: u32,
}

/// A run of leaves as the runs of tree entries that cover it, in leaf order (at most two per
/// tier), with the run's maximum and how many leaves hold it: the window of a sampled scan
/// ([`MaxTree::extend_window`]). Reused between picks, so it allocates only while it grows.
#[derive(Clone, Debug, Default)]
pub struct Window {
    pieces: Vec<Piece>,
    /// The maximum key over the window (0: every leaf is 0, or the window is empty).
    pub max: u128,
    /// How many leaves of the window hold `max` (0 when `max` is 0).
    pub ties: u32,
}

impl Window {
    /// Empties the window.
    pub fn clear(&mut self) {
        self.pieces.clear();
        (self.max, self.ties) = (0, 0);
    }

    /// Adds the next piece in leaf order. Only the pieces holding the window's maximum so far
    /// are kept: a pick never looks at the others.
    #[inline]
    fn push(&mut self, p: Piece) {
        if p.max > self.max {
            self.pieces.clear();
            (self.max, self.ties) = (p.max, p.count);
            self.pieces.push(p);
        } else if p.max == self.max && p.max != 0 {
            self.ties += p.count;
            self.pieces.push(p);
        }
    }
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
                l.nonzero.iter_mut().for_each(|x| *x = 0);
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
            first.store(g, summarise_leaves(&self.leaves, g));
        }
        for l in 1..self.levels.len() {
            let (below, above) = self.levels.split_at_mut(l);
            let (below, above) = (&below[l - 1], &mut above[0]);
            for g in 0..above.max.len() {
                above.store(g, below.summarise(g));
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
        let s = summarise_leaves(&self.leaves, g);
        if !self.levels[0].store(g, s) {
            return;
        }
        for l in 1..self.levels.len() {
            g /= ARITY;
            let s = self.levels[l - 1].summarise(g);
            if !self.levels[l].store(g, s) {
                return;
            }
        }
    }

    /// The maximum and how many leaves hold it ((0, 0) when every leaf is 0).
    pub fn top(&self) -> (u128, u32) {
        match self.levels.last() {
            Some(root) => (root.max[0], root.count[0]),
            None => (0, 0),
        }
    }

    /// How many leaves are non-zero.
    pub fn nonzero(&self) -> u32 {
        self.levels.last().map_or(0, |root| root.nonzero[0])
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

    /// Extends `w` with leaves `lo` up to and including the `k`-th (0-based) non-zero leaf of
    /// `lo..hi`, and returns `Ok` with that leaf; or, when the range holds only `n ≤ k`
    /// non-zero leaves, with the whole range, returning `Err(n)`. One walk of the tree gives the
    /// end of a sampled scan's window and the window's maximum and ties;
    /// [`MaxTree::kth_max_in_window`] then picks among them without walking the range again.
    pub fn extend_window(&self, lo: usize, hi: usize, mut k: u32, w: &mut Window) -> Result<usize, u32> {
        let mut found = None;
        let mut seen = 0;
        self.for_each_run(lo, hi, |tier, a, b| {
            let (m, c, nz, stop) = self.take_run(tier, a, b, k);
            k -= nz;
            seen += nz;
            let Some(j) = stop else {
                w.push(Piece { tier: tier as u8, lo: a as u32, hi: b as u32, max: m, count: c });
                return true;
            };
            // The k-th non-zero leaf is below entry `j`: keep the entries before it as one
            // run, and likewise the children before it on the way down.
            if j > a {
                w.push(Piece { tier: tier as u8, lo: a as u32, hi: j as u32, max: m, count: c });
            }
            let (mut tier, mut i) = (tier, j);
            while tier > 0 {
                let first = i * ARITY;
                let last = (first + ARITY).min(self.tier_len(tier - 1));
                let (m, c, nz, stop) = self.take_run(tier - 1, first, last, k);
                debug_assert!(stop.is_some(), "entry {i} of tier {tier} holds more than {k} non-zero leaves");
                let next = stop.unwrap_or(last - 1);
                k -= nz;
                if next > first {
                    w.push(Piece { tier: tier as u8 - 1, lo: first as u32, hi: next as u32, max: m, count: c });
                }
                i = next;
                tier -= 1;
            }
            let v = self.leaves[i];
            w.push(Piece { tier: 0, lo: i as u32, hi: i as u32 + 1, max: v, count: u32::from(v != 0) });
            found = Some(i);
            false
        });
        found.ok_or(seen)
    }

    /// Entries `a..b` of tier `tier`, taken in order while the `k`-th (0-based) non-zero leaf
    /// of the run is not below the next one: the maximum over the entries taken, how many
    /// leaves below them hold it, how many below them are non-zero, and the entry the `k`-th
    /// non-zero leaf is below (`None`: the run holds at most `k` of them, all taken).
    #[inline]
    fn take_run(&self, tier: usize, a: usize, b: usize, k: u32) -> (u128, u32, u32, Option<usize>) {
        let (mut m, mut c, mut nz) = (0u128, 0u32, 0u32);
        if tier == 0 {
            for (off, &v) in self.leaves[a..b].iter().enumerate() {
                let z = u32::from(v != 0);
                if z > k - nz {
                    return (m, c, nz, Some(a + off));
                }
                nz += z;
                if v > m {
                    (m, c) = (v, 1);
                } else if v == m {
                    c += z;
                }
            }
            return (m, c, nz, None);
        }
        let l = &self.levels[tier - 1];
        let entries = l.max[a..b].iter().zip(&l.count[a..b]).zip(&l.nonzero[a..b]);
        for (off, ((&em, &ec), &ez)) in entries.enumerate() {
            if ez > k - nz {
                return (m, c, nz, Some(a + off));
            }
            nz += ez;
            if em > m {
                (m, c) = (em, ec);
            } else if em == m {
                c += ec;
            }
        }
        (m, c, nz, None)
    }

    /// The leaf index of the `k`-th (0-based, in window order) leaf of `w` holding the window's
    /// maximum; `None` when `k` is not below [`Window::ties`].
    pub fn kth_max_in_window(&self, w: &Window, mut k: u32) -> Option<usize> {
        let target = w.max;
        if target == 0 {
            return None;
        }
        for p in &w.pieces {
            debug_assert_eq!(p.max, target, "a window keeps only the pieces holding its maximum");
            if k < p.count {
                let holders = |t: usize, j: usize| {
                    let (m, c, _) = self.piece(t, j);
                    if m == target {
                        c
                    } else {
                        0
                    }
                };
                let tier = p.tier as usize;
                let mut i = p.hi as usize - 1;
                for j in p.lo as usize..p.hi as usize {
                    let h = holders(tier, j);
                    if k < h {
                        i = j;
                        break;
                    }
                    k -= h;
                }
                return Some(self.descend(tier, i, k, holders));
            }
            k -= p.count;
        }
        None
    }

    /// Entries in tier `tier` (0: the leaves, `t ≥ 1`: inner level `t − 1`).
    #[inline]
    fn tier_len(&self, tier: usize) -> usize {
        if tier == 0 {
            self.leaves.len()
        } else {
            self.levels[tier - 1].max.len()
        }
    }

    /// (maximum, count of it, non-zero leaves) of entry `i` of tier `tier`.
    #[inline]
    fn piece(&self, tier: usize, i: usize) -> (u128, u32, u32) {
        if tier == 0 {
            let v = self.leaves[i];
            let nz = u32::from(v != 0);
            (v, nz, nz)
        } else {
            let l = &self.levels[tier - 1];
            (l.max[i], l.count[i], l.nonzero[i])
        }
    }

    /// From entry `i` of tier `tier` down to the leaf that is the `k`-th of those `weight`
    /// counts (`weight(tier, entry)`: how many counted leaves lie below an entry, the sum of its
    /// children's weights).
    fn descend(&self, mut tier: usize, mut i: usize, mut k: u32, weight: impl Fn(usize, usize) -> u32) -> usize {
        while tier > 0 {
            let lo = i * ARITY;
            let hi = (lo + ARITY).min(self.tier_len(tier - 1));
            let mut next = hi - 1;
            for j in lo..hi {
                let w = weight(tier - 1, j);
                if k < w {
                    next = j;
                    break;
                }
                k -= w;
            }
            i = next;
            tier -= 1;
        }
        i
    }

    /// Calls `f(tier, a, b)` for runs of entries `a..b` of one tier that together cover leaves
    /// `lo..hi` exactly, in leaf order (at most two runs per tier, each within one group of
    /// [`ARITY`] siblings), until `f` returns false.
    fn for_each_run(&self, mut lo: usize, hi: usize, mut f: impl FnMut(usize, usize, usize) -> bool) {
        if hi >= self.leaves.len() {
            // A range to the end: each tier's last entry covers the partial group below it,
            // so only the left border needs runs (a sampled scan's usual window).
            let mut tier = 0;
            loop {
                let len = self.tier_len(tier);
                if tier == self.levels.len() {
                    if lo < len {
                        f(tier, lo, len);
                    }
                    return;
                }
                let end = lo.next_multiple_of(ARITY).min(len);
                if lo < end {
                    if !f(tier, lo, end) {
                        return;
                    }
                    lo = end;
                }
                if lo >= len {
                    return;
                }
                lo /= ARITY;
                tier += 1;
            }
        }
        let mut hi = hi;
        let mut right = [(0u8, 0u32, 0u32); RIGHT_RUNS];
        let mut nr = 0;
        let mut tier = 0;
        while lo < hi {
            if tier == self.levels.len() {
                // The root tier has one entry.
                if !f(tier, lo, hi) {
                    return;
                }
                break;
            }
            let end = lo.next_multiple_of(ARITY).min(hi);
            if lo < end {
                if !f(tier, lo, end) {
                    return;
                }
                lo = end;
            }
            let start = (hi - hi % ARITY).max(lo);
            if start < hi {
                right[nr] = (tier as u8, start as u32, hi as u32);
                nr += 1;
                hi = start;
            }
            lo /= ARITY;
            hi /= ARITY;
            tier += 1;
        }
        for &(tier, a, b) in right[..nr].iter().rev() {
            if !f(tier as usize, a as usize, b as usize) {
                return;
            }
        }
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

    /// The window up to the k-th non-zero leaf of a range (or of the whole range), its
    /// maximum, ties and k-th holder against a plain scan of the same leaves, for random ranges
    /// (empty, single-leaf, crossing group and level borders, whole tree) after random updates,
    /// with few distinct values so ties and zeros are common.
    #[test]
    fn windows_agree_with_a_plain_scan() {
        let mut rng = SeededRng::new(11);
        let mut w = Window::default();
        for len in [1, 2, 15, 16, 17, 255, 256, 257, 4097, 5000] {
            let mut plain = vec![0u128; len];
            let mut t = MaxTree::new(len);
            for step in 0..1500 {
                let i = rng.below(len);
                let v = rng.below(4) as u128;
                plain[i] = v;
                t.set(i, v);
                assert_eq!(t.nonzero() as usize, plain.iter().filter(|&&x| x != 0).count(), "len {len} step {step}");
                let a = rng.below(len + 1);
                let b = if step % 7 == 0 { len } else { rng.below(len + 1) };
                let (lo, hi) = (a.min(b), a.max(b));
                let nonzero: Vec<usize> = (lo..hi).filter(|&j| plain[j] != 0).collect();
                let k = if step % 5 == 0 { u32::MAX as usize } else { rng.below(nonzero.len() + 2) };
                let want = nonzero.get(k).copied().ok_or(nonzero.len() as u32);
                w.clear();
                let got = t.extend_window(lo, hi, k as u32, &mut w);
                assert_eq!(got, want, "len {len} {lo}..{hi} k {k}");
                // The window covers exactly the leaves from `lo` through that one.
                let end = got.map_or(hi, |p| p + 1);
                let m = plain[lo..end].iter().copied().max().unwrap_or(0);
                let holders: Vec<usize> = (lo..end).filter(|&j| m != 0 && plain[j] == m).collect();
                assert_eq!((w.max, w.ties), (m, holders.len() as u32), "len {len} {lo}..{end}");
                for (j, &h) in holders.iter().enumerate() {
                    assert_eq!(t.kth_max_in_window(&w, j as u32), Some(h), "len {len} {lo}..{end} tie {j}");
                }
                assert_eq!(t.kth_max_in_window(&w, holders.len() as u32), None, "past the last holder");
            }
        }
    }
}
