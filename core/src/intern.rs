//! String interning: names, label keys and values become [`Sym`] ids at the boundary, so the
//! session compares integers and holds no `String`.

use hashbrown::HashMap;

/// An interned string. `Sym::EMPTY` is the empty string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Sym(pub u32);

impl Sym {
    /// The empty string, always id 0.
    pub const EMPTY: Sym = Sym(0);
}

/// A grow-only string table.
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
}
