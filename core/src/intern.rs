//! String interning: names, label keys and values become [`Sym`] ids at the boundary, so the
//! session compares integers and holds no `String`.
//!
//! The table only grows between compactions: [`Interner::retain`] drops the strings no record
//! holds any more and renumbers the rest in their old order, so a slice sorted by `Sym` stays
//! sorted after remapping. The cluster copy decides when and remaps every id it holds
//! ([`crate::cluster::Cluster::compact_names`]).

use hashbrown::HashMap;

/// An interned string. `Sym::EMPTY` is the empty string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Sym(pub u32);

impl Sym {
    /// The empty string, always id 0.
    pub const EMPTY: Sym = Sym(0);
}

/// A string table, compacted by its owner ([`Interner::retain`]).
#[derive(Debug, Clone)]
pub struct Interner {
    map: HashMap<Box<str>, Sym>,
    strs: Vec<Box<str>>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut i = Interner { map: HashMap::new(), strs: Vec::new() };
        i.intern("");
        i
    }
}

/// Old id → new id after [`Interner::retain`].
#[derive(Debug, Clone)]
pub struct Remap {
    to: Vec<u32>,
}

impl Remap {
    /// The new id of `s`. A dropped id (a caller that did not mark a string it holds) becomes
    /// [`Sym::EMPTY`]; debug builds panic on it.
    #[inline]
    pub fn apply(&self, s: &mut Sym) {
        let to = self.to.get(s.0 as usize).copied().unwrap_or(u32::MAX);
        debug_assert!(to != u32::MAX, "Sym({}) was held but not marked live", s.0);
        *s = if to == u32::MAX { Sym::EMPTY } else { Sym(to) };
    }
}

impl Interner {
    /// The id of `s`, adding it when new.
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = Sym(self.strs.len() as u32);
        self.strs.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned.
    pub fn get(&self, s: &str) -> Option<Sym> {
        self.map.get(s).copied()
    }

    /// The string of `id` (empty for an unknown id).
    pub fn resolve(&self, id: Sym) -> &str {
        self.strs.get(id.0 as usize).map(|s| &**s).unwrap_or("")
    }

    /// Number of strings held (the empty string included).
    pub fn len(&self) -> usize {
        self.strs.len()
    }

    /// Always false: the empty string is always held.
    pub fn is_empty(&self) -> bool {
        self.strs.is_empty()
    }

    /// Keeps only the strings whose id is marked in `live` (indexed by id; missing entries are
    /// dead) and the empty string, renumbered densely in their old order. Every id held
    /// anywhere must then be passed through the returned [`Remap`].
    pub fn retain(&mut self, live: &[bool]) -> Remap {
        let mut to = vec![u32::MAX; self.strs.len()];
        let old = std::mem::take(&mut self.strs);
        self.map.clear();
        for (i, s) in old.into_iter().enumerate() {
            if i == 0 || live.get(i).copied().unwrap_or(false) {
                let id = self.strs.len() as u32;
                to[i] = id;
                self.map.insert(s.clone(), Sym(id));
                self.strs.push(s);
            }
        }
        self.map.shrink_to_fit();
        self.strs.shrink_to_fit();
        Remap { to }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retain_keeps_marked_strings_in_order_and_remaps() {
        let mut i = Interner::default();
        let a = i.intern("a");
        let b = i.intern("b");
        let c = i.intern("c");
        let mut live = vec![false; i.len()];
        live[a.0 as usize] = true;
        live[c.0 as usize] = true;
        let r = i.retain(&live);
        assert_eq!(i.len(), 3, "empty, a, c");
        let (mut a2, mut c2) = (a, c);
        r.apply(&mut a2);
        r.apply(&mut c2);
        assert_eq!((i.resolve(a2), i.resolve(c2)), ("a", "c"));
        assert!(a2 < c2, "old order kept");
        assert_eq!(i.get("b"), None);
        assert_eq!(i.get("c"), Some(c2));
        // A new string takes the next id, not a dropped one's.
        assert_eq!(i.intern("d"), Sym(3));
        let _ = b;
    }
}
