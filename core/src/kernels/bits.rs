//! A fixed-length set of flags, one bit each: for per-node marks that every bind reads, where
//! a byte per node (100 KB at 100,000 nodes, per class) would keep falling out of the cache.

/// `len` flags in `u64` words; every flag starts unset. An index past the last word panics
/// (one inside the last word but past `len` is not checked).
#[derive(Clone, Debug, Default)]
pub struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    /// `len` unset flags.
    pub fn new(len: usize) -> Self {
        Bits { words: vec![0; len.div_ceil(64)], len }
    }

    /// Number of flags.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set holds no flag at all (length 0).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes the set `len` flags long, every flag unset, keeping the allocation.
    pub fn reset(&mut self, len: usize) {
        self.words.clear();
        self.words.resize(len.div_ceil(64), 0);
        self.len = len;
    }

    /// Whether flag `i` is set.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Sets flag `i`.
    #[inline]
    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Unsets flag `i`.
    #[inline]
    pub fn unset(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
    }

    /// Unsets every flag.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_set_and_unset_one_at_a_time_across_words() {
        let mut b = Bits::new(130);
        for i in [0, 63, 64, 129] {
            assert!(!b.get(i));
            b.set(i);
            assert!(b.get(i));
        }
        assert!(!b.get(1) && !b.get(65) && !b.get(128), "neighbours stay unset");
        b.unset(64);
        assert!(!b.get(64) && b.get(63) && b.get(129));
        b.clear();
        assert!((0..130).all(|i| !b.get(i)));
        b.set(5);
        b.reset(200);
        assert_eq!(b.len(), 200);
        assert!((0..200).all(|i| !b.get(i)), "reset unsets every flag at the new length");
    }
}
