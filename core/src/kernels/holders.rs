//! A set of leaf indices in leaf order with O(1) insert and remove and a fast `k`-th member:
//! the holders of a [`crate::kernels::maxtree::MaxTree`]'s maximum key, kept while leaves change
//! so that a pick over the whole tree (Volcano's random choice among the best-scored nodes)
//! needs neither a walk up the tree per change nor a walk down it per pick.
//!
//! Shape: one bit per leaf, a count per block of [`BLOCK_WORDS`] words, per middle block of
//! [`MID_BLOCKS`] blocks and per super-block of [`SUPER_MIDS`] middle blocks. At 100,000 leaves
//! that is 12.5 KB of bits, 392 B of block counts, 50 B of middle counts and 16 B of
//! super-block counts: small enough to stay in a core's cache for a few dozen classes, where
//! the tree's leaves and levels do not. Finding the `k`-th member scans at most 8 counts per
//! level below the super-blocks (and one super-block count per 32,768 leaves), so its cost
//! grows with the log of the leaves, not with their number: with 64 blocks per super-block and
//! no middle level, the scan at 100,000 leaves read about 3 times the counts it read at 10,000
//! (`MaxTree::kth_max` cost 17–21× as much for 10× the picks; issue 29).

/// Words per counted block (512 leaves).
const BLOCK_WORDS: usize = 8;

/// Blocks per counted middle block (4,096 leaves).
const MID_BLOCKS: usize = 8;

/// Middle blocks per counted super-block (32,768 leaves).
const SUPER_MIDS: usize = 8;

/// Words per middle block.
const MID_WORDS: usize = BLOCK_WORDS * MID_BLOCKS;

/// Words per super-block.
const SUPER_WORDS: usize = MID_WORDS * SUPER_MIDS;

/// Leaf indices `0..len` in a bit set with counts for rank and select.
#[derive(Clone, Debug, Default)]
pub struct Holders {
    bits: Vec<u64>,
    block: Vec<u16>,
    mid: Vec<u16>,
    sup: Vec<u32>,
    /// Words that had a bit set since the last [`Holders::clear`] (maybe repeated): clearing
    /// costs what was set, not the set's span.
    touched: Vec<u32>,
    len: u32,
}

impl Holders {
    /// An empty set over leaves `0..n`, keeping the allocation.
    pub fn reset(&mut self, n: usize) {
        let words = n.div_ceil(64);
        self.bits.clear();
        self.bits.resize(words, 0);
        self.block.clear();
        self.block.resize(words.div_ceil(BLOCK_WORDS), 0);
        self.mid.clear();
        self.mid.resize(words.div_ceil(MID_WORDS), 0);
        self.sup.clear();
        self.sup.resize(words.div_ceil(SUPER_WORDS), 0);
        self.touched.clear();
        self.len = 0;
    }

    /// Members.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds leaf `i` (a member already: no change).
    #[inline]
    pub fn insert(&mut self, i: usize) {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if self.bits[w] & b != 0 {
            return;
        }
        if self.bits[w] == 0 {
            self.touched.push(w as u32);
        }
        self.bits[w] |= b;
        self.block[w / BLOCK_WORDS] += 1;
        self.mid[w / MID_WORDS] += 1;
        self.sup[w / SUPER_WORDS] += 1;
        self.len += 1;
    }

    /// Removes leaf `i` (not a member: no change).
    #[inline]
    pub fn remove(&mut self, i: usize) {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if self.bits[w] & b == 0 {
            return;
        }
        self.bits[w] &= !b;
        self.block[w / BLOCK_WORDS] -= 1;
        self.mid[w / MID_WORDS] -= 1;
        self.sup[w / SUPER_WORDS] -= 1;
        self.len -= 1;
    }

    /// Removes every member, in time proportional to the words set since the last clear.
    pub fn clear(&mut self) {
        for &w in &self.touched {
            let w = w as usize;
            if self.bits[w] != 0 {
                self.bits[w] = 0;
                self.block[w / BLOCK_WORDS] = 0;
                self.mid[w / MID_WORDS] = 0;
                self.sup[w / SUPER_WORDS] = 0;
            }
        }
        self.touched.clear();
        self.len = 0;
    }

    /// The `k`-th member (0-based, in leaf order); `None` when `k ≥ len`.
    pub fn kth(&self, mut k: u32) -> Option<usize> {
        if k >= self.len {
            return None;
        }
        let mut s = 0;
        while k >= self.sup[s] {
            k -= self.sup[s];
            s += 1;
        }
        let mut m = s * SUPER_MIDS;
        while k >= u32::from(self.mid[m]) {
            k -= u32::from(self.mid[m]);
            m += 1;
        }
        let mut b = m * MID_BLOCKS;
        while k >= u32::from(self.block[b]) {
            k -= u32::from(self.block[b]);
            b += 1;
        }
        let mut w = b * BLOCK_WORDS;
        loop {
            let ones = self.bits[w].count_ones();
            if k < ones {
                break;
            }
            k -= ones;
            w += 1;
        }
        let mut bits = self.bits[w];
        for _ in 0..k {
            bits &= bits - 1;
        }
        Some(w * 64 + bits.trailing_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    /// Against a sorted list, over sizes around the word, block and super-block borders, with
    /// inserts, removes (members and not), clears, and every k-th member after each step.
    #[test]
    fn kth_member_agrees_with_a_sorted_list() {
        let mut rng = SeededRng::new(3);
        for n in [1, 63, 64, 65, 511, 512, 513, 4_095, 4_097, 40_000, 70_000] {
            let mut h = Holders::default();
            h.reset(n);
            let mut plain = std::collections::BTreeSet::new();
            for step in 0..2_000 {
                let i = rng.below(n);
                match rng.below(20) {
                    0 => {
                        h.clear();
                        plain.clear();
                    }
                    1..=11 => {
                        h.insert(i);
                        plain.insert(i);
                    }
                    _ => {
                        h.remove(i);
                        plain.remove(&i);
                    }
                }
                assert_eq!(h.len() as usize, plain.len(), "n {n} step {step}");
                let members: Vec<usize> = plain.iter().copied().collect();
                let probes = [0, members.len() / 2, members.len().saturating_sub(1), members.len()];
                for k in probes {
                    assert_eq!(h.kth(k as u32), members.get(k).copied(), "n {n} step {step} k {k}");
                }
            }
        }
    }
}
