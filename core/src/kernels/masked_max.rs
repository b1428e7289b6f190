//! The best key inside a node mask, kept up to date leaf by leaf: the maximum over the mask's
//! nodes and the set of nodes holding it, so that a full scan's choice among the mask's nodes
//! (the best key, a random one of the holders in scan order) costs a walk over the holder bits
//! instead of a read of every leaf in the mask.
//!
//! Pods whose bound claims pin them to a zone (issue 22) share the class of their template
//! and pick inside their claims' node mask; 10,000 such pods over three zones of a
//! 10,000-node cluster each read ~3,333 leaves. A leaf change costs O(1) here: a key above the
//! maximum starts a new holder set, a key equal to it joins the set, a holder whose key drops
//! leaves it. Only when the last holder leaves is the mask read again, at the next pick. (A
//! max-tree per mask was tried first: its updates, one more tree path per leaf change of the
//! class, cost more than the reads they saved; docs/performance.md.)

use crate::kernels::maxtree::Key;
use crate::rng::SeededRng;

/// A set of node rows (bit `n % 64` of word `n / 64` for node row `n`) with an identity:
/// within one session two masks with the same `id` hold the same nodes.
#[derive(Clone, Copy, Debug)]
pub struct NodeMask<'m> {
    /// Identity of the mask within the session.
    pub id: u64,
    /// One bit per node row; words past the end are 0.
    pub bits: &'m [u64],
}

impl NodeMask<'_> {
    /// How many nodes the mask holds.
    pub fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// The maximum key over the nodes of one [`NodeMask`] and the nodes holding it, for keys
/// where 0 means "no candidate". Fed every change of a node's key
/// ([`MaskedMax::update`]); reads the keys again ([`MaskedMax::best`]'s `key`) only after
/// the last holder left or [`MaskedMax::invalidate`]. Two bits per node row.
#[derive(Clone, Debug, Default)]
pub struct MaskedMax<K> {
    /// [`NodeMask::id`] of the mask.
    id: u64,
    /// Last use, on the owner's clock (for least-recently-used recycling).
    pub last_used: u64,
    /// The mask's words.
    bits: Vec<u64>,
    /// The mask's nodes whose key is `max` (none when `max` is 0).
    holders: Vec<u64>,
    /// The maximum key over the mask's nodes (0: none is a candidate).
    max: K,
    /// How many bits `holders` has set.
    count: u32,
    /// `max` and `holders` must be read again from the keys.
    stale: bool,
}

impl<K: Key> MaskedMax<K> {
    /// The summary of `mask`, to be read from the keys at the first [`MaskedMax::best`].
    pub fn new(mask: NodeMask<'_>) -> Self {
        MaskedMax {
            id: mask.id,
            last_used: 0,
            bits: mask.bits.to_vec(),
            holders: vec![0; mask.bits.len()],
            max: K::ZERO,
            count: 0,
            stale: true,
        }
    }

    /// [`NodeMask::id`] of the mask.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Node row `n`'s key is now `key` (nothing when the mask does not hold `n`). O(1), or
    /// O(words) when `key` is a new maximum.
    #[inline]
    pub fn update(&mut self, n: usize, key: K) {
        let (w, bit) = (n / 64, 1u64 << (n % 64));
        if self.stale || self.bits.get(w).is_none_or(|b| b & bit == 0) {
            return;
        }
        let held = self.holders[w] & bit != 0;
        if key > self.max {
            self.holders.iter_mut().for_each(|h| *h = 0);
            self.holders[w] = bit;
            (self.max, self.count) = (key, 1);
        } else if key == self.max {
            if !held && key != K::ZERO {
                self.holders[w] |= bit;
                self.count += 1;
            }
        } else if held {
            self.holders[w] &= !bit;
            self.count -= 1;
            if self.count == 0 {
                self.stale = true;
            }
        }
    }

    /// Forgets the maximum: the next [`MaskedMax::best`] reads the keys.
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// The choice of a scan over every node from node row `start` (wrapping) among the mask's
    /// nodes with keys `key(n)`: the maximum key, a random one of its holders (drawn from
    /// `rng` only when several hold it, uniformly by position in scan order). `None` when
    /// every key in the mask is 0. Reads the keys of the mask's nodes when the summary is
    /// stale; `key` must give the keys [`MaskedMax::update`] was last told.
    pub fn best(&mut self, start: usize, key: impl Fn(usize) -> K, rng: &mut SeededRng) -> Option<usize> {
        if self.stale {
            self.read(key);
        }
        if self.max == K::ZERO {
            return None;
        }
        let mut k = if self.count > 1 { rng.below(self.count as usize) } else { 0 };
        // The k-th holder from `start` in scan order: the holders at or after `start`, then
        // those before it.
        let (sw, sb) = (start / 64, start % 64);
        let after = |w: usize| if w == sw { self.holders[w] & (!0u64 << sb) } else { self.holders[w] };
        let before = |w: usize| if w == sw { self.holders[w] & !(!0u64 << sb) } else { self.holders[w] };
        let words = self.holders.len();
        let order = (sw..words).map(|w| (w, after(w))).chain((0..=sw.min(words.saturating_sub(1))).map(|w| (w, before(w))));
        for (w, mut bits) in order {
            let c = bits.count_ones() as usize;
            if k >= c {
                k -= c;
                continue;
            }
            for _ in 0..k {
                bits &= bits - 1;
            }
            return Some(w * 64 + bits.trailing_zeros() as usize);
        }
        unreachable!("count holders are set")
    }

    /// Reads the maximum and its holders from the keys.
    fn read(&mut self, key: impl Fn(usize) -> K) {
        let (mut max, mut count) = (K::ZERO, 0u32);
        for (w, &bits) in self.bits.iter().enumerate() {
            let mut b = bits;
            let mut held = 0u64;
            while b != 0 {
                let i = b.trailing_zeros() as usize;
                b &= b - 1;
                let k = key(w * 64 + i);
                if k > max {
                    // Holders in earlier words are no longer holders.
                    self.holders[..w].iter_mut().for_each(|h| *h = 0);
                    (max, count, held) = (k, 0, 0);
                }
                if k == max && k != K::ZERO {
                    held |= 1 << i;
                    count += 1;
                }
            }
            self.holders[w] = held;
        }
        (self.max, self.count, self.stale) = (max, count, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: every node of the mask read in scan order, as the class path's mask
    /// scan does.
    fn scan(keys: &[u128], bits: &[u64], start: usize, rng: &mut SeededRng) -> Option<usize> {
        let nn = keys.len();
        let (mut max, mut holders) = (0u128, Vec::new());
        for n in (start..nn).chain(0..start) {
            if bits[n / 64] >> (n % 64) & 1 == 0 || keys[n] == 0 {
                continue;
            }
            if keys[n] > max {
                max = keys[n];
                holders.clear();
            }
            if keys[n] == max {
                holders.push(n);
            }
        }
        if holders.is_empty() {
            return None;
        }
        let k = if holders.len() > 1 { rng.below(holders.len()) } else { 0 };
        Some(holders[k])
    }

    /// On random keys (few distinct values, so ties are common, and keys rising and falling),
    /// random masks (from empty to full) and starts, the summary's choice and random draws
    /// equal the plain reading of the mask, after every update; invalidating changes nothing.
    #[test]
    fn best_equals_a_scan_of_the_mask() {
        let mut gen = SeededRng::new(7);
        for case in 0..400 {
            let nn = 1 + gen.below(300);
            let density = gen.below(5);
            let mut bits = vec![0u64; nn.div_ceil(64)];
            for n in 0..nn {
                if density > 0 && gen.below(4) < density {
                    bits[n / 64] |= 1 << (n % 64);
                }
            }
            let values = 1 + gen.below(6) as u128;
            let mut keys: Vec<u128> = (0..nn).map(|_| gen.below(values as usize + 1) as u128).collect();
            let mask = NodeMask { id: case as u64, bits: &bits };
            let mut m = MaskedMax::new(mask);
            assert_eq!(m.id(), case as u64);
            for step in 0..40 {
                for _ in 0..gen.below(4) {
                    let n = gen.below(nn);
                    keys[n] = gen.below(values as usize + 1) as u128;
                    m.update(n, keys[n]);
                }
                if step % 13 == 12 {
                    m.invalidate();
                }
                let start = gen.below(nn);
                let seed = gen.below(1000) as u64;
                let (mut a, mut b) = (SeededRng::new(seed), SeededRng::new(seed));
                let got = m.best(start, |n| keys[n], &mut a);
                let expected = scan(&keys, &bits, start, &mut b);
                assert_eq!(got, expected, "case {case} step {step}: {nn} nodes, start {start}");
                assert_eq!(a.below(1 << 20), b.below(1 << 20), "case {case} step {step}: the draws differ");
            }
        }
    }
}
