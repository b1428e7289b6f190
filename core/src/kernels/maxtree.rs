//! A wide tournament tree over node keys: the maximum, how many leaves hold it, how many leaves
//! are non-zero, and the k-th such leaf in node order — over all leaves or over a range of them.
//! Each inner entry summarises [`ARITY`] children (their maximum, how many leaves below hold
//! it, how many leaves below are non-zero), so 10,000 nodes need 5 levels and a leaf update
//! recomputes at most one contiguous run of [`ARITY`] entries per level, stopping at the first
//! level that does not change. Contiguous runs are what the memory system serves fast: a binary
//! tree over the same leaves misses cache on nearly every level. Keys are unsigned integers
//! ([`Key`]: `u64` or `K`); key 0 means "no candidate" and is never counted.
//!
//! The range queries serve Volcano's node sampling (volcano-behaviour.md §2 allocate,
//! `numNodesToFind`): the window of a sampled scan is the leaves from a rotating start up to the
//! k-th non-zero one, and the best node is the maximum inside that window. For them the tree
//! has a lazy mode ([`MaxTree::set_lazy`]) in which updates only mark entries stale and each
//! range query fixes the entries it reads ([`MaxTree::clean_range`]).
//!
//! The whole-tree queries ([`MaxTree::top`], [`MaxTree::kth_max`]) read a kept set of the
//! maximum's holders ([`Holders`]) that every leaf write keeps exact while the maximum is still
//! held. Only when its last holder changes is the tree cleaned and the set refilled from it, so
//! in lazy mode a run of changes below the maximum costs a leaf write and a few stale marks
//! each, not a walk to the root: at 100,000 nodes that walk missed the cache on nearly every
//! level.

use crate::kernels::bits::Bits;
use crate::kernels::holders::Holders;

/// A tree key: an unsigned integer whose order is the order of preference; 0 (`ZERO`) means
/// "no candidate". `u64` halves a tree's memory against `K` (a leaf and an inner entry's
/// maximum are the tree's bulk), for users whose keys fit in 64 bits.
pub trait Key: Copy + Ord + Default + std::fmt::Debug + std::ops::BitXor<Output = Self> + 'static {
    /// The key of no candidate.
    const ZERO: Self;
}

impl Key for u64 {
    const ZERO: Self = 0;
}

impl Key for u128 {
    const ZERO: Self = 0;
}

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
struct Level<K> {
    max: Vec<K>,
    count: Vec<u32>,
    nonzero: Vec<u32>,
    /// Entries whose summary is stale (lazy mode, [`MaxTree::set_lazy`]); a dirty entry's
    /// ancestors are dirty too. One bit per entry: every leaf change of every class reads its
    /// bottom entry's flag, and at 100,000 nodes 16 classes' byte flags (200 KB) kept falling
    /// out of the cache where their bits stay in it.
    dirty: Bits,
}

impl<K: Key> Level<K> {
    fn new(len: usize) -> Self {
        Level { max: vec![K::ZERO; len], count: vec![0; len], nonzero: vec![0; len], dirty: Bits::new(len) }
    }

    /// The (maximum, count, non-zero) over entries `g*ARITY .. (g+1)*ARITY`. Always inlined: a
    /// call per level of [`MaxTree::set`] costs the full-scan cycle about 5 % more instructions.
    #[inline(always)]
    fn summarise(&self, g: usize) -> (K, u32, u32) {
        let lo = g * ARITY;
        let hi = (lo + ARITY).min(self.max.len());
        let max = &self.max[lo..hi];
        let count = &self.count[lo..hi];
        let m = max.iter().copied().max().unwrap_or(K::ZERO);
        let mut c = 0;
        for (x, k) in max.iter().zip(count) {
            c += if *x == m { *k } else { 0 };
        }
        (m, c, self.nonzero[lo..hi].iter().sum())
    }

    #[inline]
    fn store(&mut self, g: usize, (m, c, nz): (K, u32, u32)) -> bool {
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
#[inline(always)]
fn summarise_leaves<K: Key>(leaves: &[K], g: usize) -> (K, u32, u32) {
    let lo = g * ARITY;
    let run = &leaves[lo..(lo + ARITY).min(leaves.len())];
    let m = run.iter().copied().max().unwrap_or(K::ZERO);
    if m == K::ZERO {
        return (K::ZERO, 0, 0);
    }
    let (mut c, mut nz) = (0, 0);
    for &x in run {
        c += u32::from(x == m);
        nz += u32::from(x != K::ZERO);
    }
    (m, c, nz)
}

/// Entries `lo..hi` of one tier (leaves in tier 0), all children of one entry above or the
/// root tier, with the maximum below them and how many leaves below hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece<K> {
    tier: u8,
    lo: u32,
    hi: u32,
    max: K,
    count: u32,
}

/// A run of leaves as the runs of tree entries that cover it, in leaf order (at most two per
/// tier), with the run's maximum and how many leaves hold it: the window of a sampled scan
/// ([`MaxTree::extend_window`]). Reused between picks, so it allocates only while it grows.
#[derive(Clone, Debug, Default)]
pub struct Window<K> {
    pieces: Vec<Piece<K>>,
    /// The maximum key over the window (0: every leaf is 0, or the window is empty).
    pub max: K,
    /// How many leaves of the window hold `max` (0 when `max` is 0).
    pub ties: u32,
}

impl<K: Key> Window<K> {
    /// Empties the window.
    pub fn clear(&mut self) {
        self.pieces.clear();
        (self.max, self.ties) = (K::ZERO, 0);
    }

    /// Adds the next piece in leaf order. Only the pieces holding the window's maximum so far
    /// are kept: a pick never looks at the others.
    #[inline]
    fn push(&mut self, p: Piece<K>) {
        if p.max > self.max {
            self.pieces.clear();
            (self.max, self.ties) = (p.max, p.count);
            self.pieces.push(p);
        } else if p.max == self.max && p.max != K::ZERO {
            self.ties += p.count;
            self.pieces.push(p);
        }
    }
}

/// Max-tree over `len` leaves.
#[derive(Clone, Debug, Default)]
pub struct MaxTree<K> {
    len: usize,
    /// The leaf keys.
    leaves: Vec<K>,
    /// Inner levels, bottom up; the last has one entry, the root.
    levels: Vec<Level<K>>,
    /// How many leaves are non-zero (kept by every leaf write, so it holds in lazy mode too).
    nonzero: u32,
    /// Lazy mode: [`MaxTree::set`] marks the entries above a leaf stale instead of fixing them.
    lazy: bool,
    /// The maximum and its holders, while `top_valid` ([`MaxTree::top`] refills them).
    top_max: K,
    holders: Holders,
    top_valid: bool,
    /// Scratch of [`MaxTree::refill_top`]'s walk (tier, entry), kept so a refill allocates
    /// nothing once the tree has refilled before.
    stack: Vec<(usize, usize)>,
}

impl<K: Key> MaxTree<K> {
    /// A tree of `len` leaves, all 0.
    pub fn new(len: usize) -> Self {
        let leaves = vec![K::ZERO; len.max(1)];
        let mut levels = vec![Level::new(leaves.len().div_ceil(ARITY))];
        while levels.last().map_or(0, |l| l.max.len()) > 1 {
            let below = levels.last().map_or(0, |l| l.max.len());
            levels.push(Level::new(below.div_ceil(ARITY)));
        }
        MaxTree {
            len,
            leaves,
            levels,
            nonzero: 0,
            lazy: false,
            top_max: K::ZERO,
            holders: Holders::default(),
            top_valid: false,
            stack: Vec::new(),
        }
    }

    /// Resets every leaf to 0, keeping the allocation when `len` is unchanged, and the mode.
    pub fn reset(&mut self, len: usize) {
        self.top_valid = false;
        if len != self.len || self.levels.is_empty() {
            let lazy = self.lazy;
            *self = MaxTree::new(len);
            self.lazy = lazy;
        } else {
            self.leaves.iter_mut().for_each(|x| *x = K::ZERO);
            self.nonzero = 0;
            for l in &mut self.levels {
                l.max.iter_mut().for_each(|x| *x = K::ZERO);
                l.count.iter_mut().for_each(|x| *x = 0);
                l.nonzero.iter_mut().for_each(|x| *x = 0);
                l.dirty.clear();
            }
        }
    }

    /// Lazy mode on or off. In lazy mode a leaf update only marks the entries above it stale;
    /// the range queries ([`MaxTree::clean_range`] before [`MaxTree::extend_window`]) fix just
    /// the entries they read, once however many updates fell below them, and the whole-tree
    /// queries need [`MaxTree::clean_all`] first. For node sampling, where each pick reads a
    /// window just ahead of the scan's start while the updates fall behind it. Turning it off
    /// fixes every stale entry.
    pub fn set_lazy(&mut self, on: bool) {
        if self.lazy && !on {
            self.clean_all();
        }
        self.lazy = on;
    }

    /// Sets leaf `i` without fixing the levels above (call [`MaxTree::rebuild`] after a batch).
    #[inline]
    pub fn set_raw(&mut self, i: usize, v: K) {
        self.top_valid = false;
        self.nonzero = self.nonzero + u32::from(v != K::ZERO) - u32::from(self.leaves[i] != K::ZERO);
        self.leaves[i] = v;
    }

    /// Reads the leaves `idx` names, all at once, before a run of [`MaxTree::set`]s on them:
    /// the reads do not depend on each other, so the processor overlaps their cache misses,
    /// where the sets one by one would wait for each in turn (at 100,000 leaves nearly every
    /// leaf a class re-evaluates has left the cache since its last change).
    pub fn warm(&self, idx: &[u32]) {
        let mut acc = K::ZERO;
        for &i in idx {
            acc = acc ^ self.leaves[i as usize];
        }
        std::hint::black_box(acc);
    }

    /// Starts loading leaf `i` into the cache ([`crate::kernels::prefetch::line`]); nothing
    /// when the tree has no leaf `i` (a class not built yet).
    #[inline]
    pub fn prefetch_leaf(&self, i: usize) {
        if let Some(x) = self.leaves.get(i) {
            crate::kernels::prefetch::line(x);
        }
    }

    /// The key of leaf `i`.
    #[inline]
    pub fn get(&self, i: usize) -> K {
        self.leaves[i]
    }

    /// Recomputes every inner entry (none is stale afterwards).
    pub fn rebuild(&mut self) {
        self.top_valid = false;
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
        for l in &mut self.levels {
            l.dirty.clear();
        }
    }

    /// Fixes every stale entry (lazy mode), so the root is exact.
    pub fn clean_all(&mut self) {
        if let Some(top) = self.levels.len().checked_sub(1) {
            self.clean(top, 0);
        }
    }

    /// Fixes the stale entries among those that cover leaves `lo..hi` exactly (the runs
    /// [`MaxTree::extend_window`] and [`MaxTree::kth_nonzero`] read over that range) and
    /// below them.
    pub fn clean_range(&mut self, lo: usize, hi: usize) {
        // At most two runs per tier; more than the array holds (never for `u32` leaf counts)
        // falls back to fixing everything, which is exact too.
        let mut runs = [(0usize, 0usize, 0usize); 2 * RIGHT_RUNS + 2];
        let (mut n, mut overflow) = (0, false);
        self.for_each_run(lo, hi, |tier, a, b| {
            if tier > 0 {
                match runs.get_mut(n) {
                    Some(slot) => *slot = (tier, a, b),
                    None => overflow = true,
                }
                n += 1;
            }
            !overflow
        });
        if overflow {
            self.clean_all();
            return;
        }
        for &(tier, a, b) in &runs[..n] {
            for g in a..b {
                self.clean(tier - 1, g);
            }
        }
    }

    /// Fixes entry `g` of inner level `l` and the stale entries below it.
    fn clean(&mut self, l: usize, g: usize) {
        if !self.levels[l].dirty.get(g) {
            return;
        }
        let s = if l == 0 {
            summarise_leaves(&self.leaves, g)
        } else {
            let lo = g * ARITY;
            let hi = (lo + ARITY).min(self.levels[l - 1].max.len());
            for c in lo..hi {
                self.clean(l - 1, c);
            }
            self.levels[l - 1].summarise(g)
        };
        self.levels[l].store(g, s);
        self.levels[l].dirty.unset(g);
    }

    /// Sets leaf `i` to `v` and fixes the levels above, stopping where nothing changes; in
    /// lazy mode ([`MaxTree::set_lazy`]) marks them stale instead, stopping at the first that
    /// already is.
    pub fn set(&mut self, i: usize, v: K) {
        let old = self.leaves[i];
        if old == v {
            return;
        }
        self.nonzero = self.nonzero + u32::from(v != K::ZERO) - u32::from(old != K::ZERO);
        self.leaves[i] = v;
        if self.top_valid {
            self.keep_top(i, old, v);
        }
        let mut g = i / ARITY;
        if self.lazy {
            for l in &mut self.levels {
                if l.dirty.get(g) {
                    return;
                }
                l.dirty.set(g);
                g /= ARITY;
            }
            return;
        }
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

    /// Keeps the maximum's holders exact across leaf `i` changing from `old` to `v`; drops
    /// them when the last holder leaves (the new maximum is then found in the tree).
    #[inline]
    fn keep_top(&mut self, i: usize, old: K, v: K) {
        if v > self.top_max {
            self.holders.clear();
            self.top_max = v;
            self.holders.insert(i);
            return;
        }
        if self.top_max == K::ZERO {
            return;
        }
        if old == self.top_max {
            self.holders.remove(i);
            if self.holders.is_empty() {
                self.top_valid = false;
            }
        } else if v == self.top_max {
            self.holders.insert(i);
        }
    }

    /// Cleans the tree and refills the maximum's holders from it: down the entries that hold
    /// the maximum, O(holders · [`ARITY`] · levels).
    fn refill_top(&mut self) {
        self.clean_all();
        let (max, _) = match self.levels.last() {
            Some(root) => (root.max[0], root.count[0]),
            None => (K::ZERO, 0),
        };
        self.top_max = max;
        self.holders.reset(self.leaves.len());
        if max != K::ZERO {
            let mut stack = std::mem::take(&mut self.stack);
            stack.push((self.levels.len(), 0usize));
            while let Some((tier, i)) = stack.pop() {
                if tier == 0 {
                    self.holders.insert(i);
                    continue;
                }
                let lo = i * ARITY;
                let hi = (lo + ARITY).min(self.tier_len(tier - 1));
                for j in (lo..hi).rev() {
                    if self.piece(tier - 1, j).0 == max {
                        stack.push((tier - 1, j));
                    }
                }
            }
            self.stack = stack;
        }
        self.top_valid = true;
    }

    /// The maximum and how many leaves hold it ((0, 0) when every leaf is 0); in lazy mode
    /// too (the kept holders answer, or the tree is cleaned and they are refilled).
    pub fn top(&mut self) -> (K, u32) {
        if !self.top_valid {
            self.refill_top();
        }
        (self.top_max, self.holders.len())
    }

    /// How many leaves are non-zero (exact in lazy mode too).
    pub fn nonzero(&self) -> u32 {
        self.nonzero
    }

    /// The leaf index of the `k`-th (0-based, in leaf order) leaf holding the maximum; `k` must
    /// be below the count [`MaxTree::top`] gives (in lazy mode too).
    pub fn kth_max(&mut self, k: u32) -> usize {
        let (_, count) = self.top();
        debug_assert!(k < count, "kth_max({k}) of {count} holders");
        self.holders.kth(k).unwrap_or(0)
    }

    /// [`MaxTree::kth_max`] by walking the tree (the kept holders' check); not in lazy mode.
    #[cfg(test)]
    fn kth_max_by_walk(&self, mut k: u32) -> usize {
        let target = self.levels.last().map_or(K::ZERO, |r| r.max[0]);
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
    /// non-zero leaves, with the whole range, returning `Err(n)`. Two walks give the end of a
    /// sampled scan's window ([`MaxTree::kth_nonzero`], over the non-zero counts alone) and then
    /// the window's maximum and ties (over the runs of entries covering exactly the window);
    /// [`MaxTree::kth_max_in_window`] then picks among them without walking the range again.
    /// In lazy mode, call [`MaxTree::clean_range`] over `lo..hi` first.
    pub fn extend_window(&self, lo: usize, hi: usize, k: u32, w: &mut Window<K>) -> Result<usize, u32> {
        let end = self.kth_nonzero(lo, hi, k);
        self.for_each_run(lo, end.map_or(hi, |e| e + 1), |tier, a, b| {
            let (m, c) = self.run_max(tier, a, b);
            w.push(Piece { tier: tier as u8, lo: a as u32, hi: b as u32, max: m, count: c });
            true
        });
        end
    }

    /// The `k`-th (0-based) non-zero leaf of `lo..hi`, or `Err(n)` when the range holds only
    /// `n ≤ k` of them. Reads only the non-zero counts: up the range's runs until one holds the
    /// `k`-th, then down that entry's children. In lazy mode, after [`MaxTree::clean_range`].
    pub fn kth_nonzero(&self, lo: usize, hi: usize, mut k: u32) -> Result<usize, u32> {
        let mut seen = 0u32;
        let mut found = None;
        self.for_each_run(lo, hi, |tier, a, b| {
            let nz = self.run_nonzero(tier, a, b);
            if nz <= k {
                k -= nz;
                seen += nz;
                return true;
            }
            let mut i = a;
            loop {
                let z = self.entry_nonzero(tier, i);
                if k < z {
                    break;
                }
                k -= z;
                i += 1;
            }
            found = Some(self.descend(tier, i, k, |t, j| self.entry_nonzero(t, j)));
            false
        });
        found.ok_or(seen)
    }

    /// Non-zero leaves below entry `i` of tier `tier`.
    #[inline]
    fn entry_nonzero(&self, tier: usize, i: usize) -> u32 {
        if tier == 0 {
            u32::from(self.leaves[i] != K::ZERO)
        } else {
            self.levels[tier - 1].nonzero[i]
        }
    }

    /// Non-zero leaves below entries `a..b` of tier `tier`.
    #[inline]
    fn run_nonzero(&self, tier: usize, a: usize, b: usize) -> u32 {
        if tier == 0 {
            self.leaves[a..b].iter().map(|&v| u32::from(v != K::ZERO)).sum()
        } else {
            self.levels[tier - 1].nonzero[a..b].iter().sum()
        }
    }

    /// The maximum below entries `a..b` of tier `tier` and how many leaves below them hold it
    /// ((0, 0) when all are 0).
    #[inline]
    fn run_max(&self, tier: usize, a: usize, b: usize) -> (K, u32) {
        if tier == 0 {
            let run = &self.leaves[a..b];
            let m = run.iter().copied().max().unwrap_or(K::ZERO);
            let c = if m == K::ZERO { 0 } else { run.iter().map(|&v| u32::from(v == m)).sum() };
            return (m, c);
        }
        let l = &self.levels[tier - 1];
        let max = &l.max[a..b];
        let m = max.iter().copied().max().unwrap_or(K::ZERO);
        let mut c = 0;
        for (x, n) in max.iter().zip(&l.count[a..b]) {
            c += if *x == m { *n } else { 0 };
        }
        (m, c)
    }

    /// The leaf index of the `k`-th (0-based, in window order) leaf of `w` holding the window's
    /// maximum; `None` when `k` is not below [`Window::ties`].
    pub fn kth_max_in_window(&self, w: &Window<K>, mut k: u32) -> Option<usize> {
        let target = w.max;
        if target == K::ZERO {
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
    fn piece(&self, tier: usize, i: usize) -> (K, u32, u32) {
        if tier == 0 {
            let v = self.leaves[i];
            let nz = u32::from(v != K::ZERO);
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
        let mut t = MaxTree::<u128>::new(5);
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
        let mut e = MaxTree::<u64>::new(3);
        assert_eq!(e.top().1, 0);
    }

    /// Against a plain scan, over sizes that give one, two and three inner levels and partial
    /// last groups, with few distinct values so ties are common; both update paths; both key
    /// widths.
    #[test]
    fn agrees_with_a_plain_scan() {
        agrees::<u64>();
        agrees::<u128>();
    }

    fn agrees<K: Key + From<u8>>() {
        let mut rng = SeededRng::new(7);
        for (len, lazy) in [1, 2, 15, 16, 17, 255, 256, 257, 1000, 5000].into_iter().flat_map(|l| [(l, false), (l, true)]) {
            let mut plain = vec![K::ZERO; len];
            let mut t = MaxTree::<K>::new(len);
            t.set_lazy(lazy);
            for step in 0..3000 {
                let i = rng.below(len);
                let v = K::from(rng.below(5) as u8);
                plain[i] = v;
                if step % 500 == 499 {
                    t.set_raw(i, v);
                    t.rebuild();
                } else {
                    t.set(i, v);
                }
                // The kept holders answer in lazy mode without cleaning.
                let m = plain.iter().copied().max().unwrap_or(K::ZERO);
                let holders: Vec<usize> = (0..len).filter(|&j| m != K::ZERO && plain[j] == m).collect();
                assert_eq!(t.top(), (m, holders.len() as u32), "len {len} lazy {lazy} step {step}");
                if !holders.is_empty() {
                    let k = rng.below(holders.len());
                    assert_eq!(t.kth_max(k as u32), holders[k], "len {len} step {step} k {k}");
                }
                if lazy && step % 3 != 0 {
                    continue;
                }
                // The tree itself, walked from the root, agrees.
                t.clean_all();
                if !holders.is_empty() {
                    let k = rng.below(holders.len());
                    assert_eq!(t.kth_max_by_walk(k as u32), holders[k], "walk: len {len} step {step} k {k}");
                }
            }
        }
    }

    /// The window up to the k-th non-zero leaf of a range (or of the whole range), its
    /// maximum, ties and k-th holder against a plain scan of the same leaves, for random ranges
    /// (empty, single-leaf, crossing group and level borders, whole tree) after random updates,
    /// with few distinct values so ties and zeros are common; eagerly and in lazy mode, where
    /// only the queried range is fixed before each query; both key widths.
    #[test]
    fn windows_agree_with_a_plain_scan() {
        windows_agree::<u64>();
        windows_agree::<u128>();
    }

    fn windows_agree<K: Key + From<u8>>() {
        let mut rng = SeededRng::new(11);
        let mut w = Window::default();
        for (len, lazy) in [1, 2, 15, 16, 17, 255, 256, 257, 4097, 5000].into_iter().flat_map(|l| [(l, false), (l, true)]) {
            let mut plain = vec![K::ZERO; len];
            let mut t = MaxTree::<K>::new(len);
            t.set_lazy(lazy);
            for step in 0..1500 {
                let i = rng.below(len);
                let v = K::from(rng.below(4) as u8);
                plain[i] = v;
                t.set(i, v);
                assert_eq!(t.nonzero() as usize, plain.iter().filter(|&&x| x != K::ZERO).count(), "len {len} step {step}");
                let a = rng.below(len + 1);
                let b = if step % 7 == 0 { len } else { rng.below(len + 1) };
                let (lo, hi) = (a.min(b), a.max(b));
                let nonzero: Vec<usize> = (lo..hi).filter(|&j| plain[j] != K::ZERO).collect();
                let k = if step % 5 == 0 { u32::MAX as usize } else { rng.below(nonzero.len() + 2) };
                let want = nonzero.get(k).copied().ok_or(nonzero.len() as u32);
                w.clear();
                // Lazy mode: only the range's own entries are fixed; the rest stays stale.
                if lazy {
                    t.clean_range(lo, hi);
                }
                let got = t.extend_window(lo, hi, k as u32, &mut w);
                assert_eq!(got, want, "len {len} {lo}..{hi} k {k}");
                // The window covers exactly the leaves from `lo` through that one.
                let end = got.map_or(hi, |p| p + 1);
                let m = plain[lo..end].iter().copied().max().unwrap_or(K::ZERO);
                let holders: Vec<usize> = (lo..end).filter(|&j| m != K::ZERO && plain[j] == m).collect();
                assert_eq!((w.max, w.ties), (m, holders.len() as u32), "len {len} {lo}..{end}");
                for (j, &h) in holders.iter().enumerate() {
                    assert_eq!(t.kth_max_in_window(&w, j as u32), Some(h), "len {len} {lo}..{end} tie {j}");
                }
                assert_eq!(t.kth_max_in_window(&w, holders.len() as u32), None, "past the last holder");
            }
        }
    }
}
