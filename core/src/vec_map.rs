//! [`VecMap`]: a small ordered map held as one sorted boxed slice of pairs, with the part of
//! `BTreeMap`'s API the model uses. Labels, annotations and resource lists
//! ([`crate::model::Labels`], [`crate::resource::ResourceList`]) have a handful of entries;
//! a `BTreeMap` allocates a whole B-tree node for them (about 540 bytes for `String → String`,
//! 360 for `String → i64`, whatever the count), a `VecMap` exactly its entries (48 or 32 bytes
//! each) and 16 bytes inline.
//!
//! Everything a `BTreeMap` promises that callers can observe is kept: iteration in ascending
//! key order, equality, ordering and hashing over the pairs in that order, and serde as a map
//! in key order (so postcard, JSON and YAML read and write the same bytes as before). Lookups
//! are binary searches; an insert or a removal moves the later entries and reallocates the
//! slice to its exact length, which is cheap at these sizes and linear per change in general.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::marker::PhantomData;

/// An ordered map over a sorted boxed slice of `(key, value)` pairs; no key twice.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VecMap<K, V> {
    entries: Box<[(K, V)]>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap { entries: Box::default() }
    }
}

/// Borrowed pair of an entry, as `BTreeMap::iter` yields it.
fn pair<K, V>(e: &(K, V)) -> (&K, &V) {
    (&e.0, &e.1)
}

/// Mutably borrowed value of an entry, as `BTreeMap::iter_mut` yields it.
fn pair_mut<K, V>(e: &mut (K, V)) -> (&K, &mut V) {
    (&e.0, &mut e.1)
}

/// Iterator over `(&key, &value)` in key order.
pub type Iter<'a, K, V> = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;
/// Iterator over `(&key, &mut value)` in key order.
pub type IterMut<'a, K, V> = std::iter::Map<std::slice::IterMut<'a, (K, V)>, fn(&'a mut (K, V)) -> (&'a K, &'a mut V)>;

impl<K, V> VecMap<K, V> {
    /// An empty map (allocates nothing).
    pub fn new() -> Self {
        VecMap { entries: Box::default() }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in key order.
    pub fn iter(&self) -> Iter<'_, K, V> {
        self.entries.iter().map(pair as fn(&(K, V)) -> (&K, &V))
    }

    /// Entries in key order, values mutable.
    pub fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        self.entries.iter_mut().map(pair_mut as fn(&mut (K, V)) -> (&K, &mut V))
    }

    /// Keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator + Clone + '_ {
        self.entries.iter().map(|e| &e.0)
    }

    /// Values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone + '_ {
        self.entries.iter().map(|e| &e.1)
    }

    /// Values in key order, mutable.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator + '_ {
        self.entries.iter_mut().map(|e| &mut e.1)
    }

    /// Keys in order, by value.
    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        self.entries.into_vec().into_iter().map(|e| e.0)
    }

    /// Values in key order, by value.
    pub fn into_values(self) -> impl DoubleEndedIterator<Item = V> + ExactSizeIterator {
        self.entries.into_vec().into_iter().map(|e| e.1)
    }

    /// The entry of the smallest key.
    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.entries.first().map(pair)
    }

    /// The entry of the largest key.
    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.entries.last().map(pair)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries = Box::default();
    }

    /// Keeps the entries for which `f` is true (in key order).
    pub fn retain(&mut self, mut f: impl FnMut(&K, &mut V) -> bool) {
        let mut v = std::mem::take(&mut self.entries).into_vec();
        v.retain_mut(|e| f(&e.0, &mut e.1));
        self.entries = v.into_boxed_slice();
    }
}

impl<K: Ord, V> VecMap<K, V> {
    fn find<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.entries.binary_search_by(|e| e.0.borrow().cmp(key))
    }

    /// The value of `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    /// The stored key and value of `key`.
    pub fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| pair(&self.entries[i]))
    }

    /// The value of `key`, mutable.
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    /// Whether `key` has an entry.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`; returns the value it replaced. (As `BTreeMap::insert`, a key
    /// already present is kept, only its value replaced.)
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.insert_at(i, key, value);
                None
            }
        }
    }

    fn insert_at(&mut self, i: usize, key: K, value: V) -> &mut V {
        let mut v = std::mem::take(&mut self.entries).into_vec();
        v.reserve_exact(1);
        v.insert(i, (key, value));
        self.entries = v.into_boxed_slice();
        &mut self.entries[i].1
    }

    /// Removes `key`; returns its value.
    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.remove_entry(key).map(|e| e.1)
    }

    /// Removes `key`; returns its stored key and value.
    pub fn remove_entry<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let i = self.find(key).ok()?;
        let mut v = std::mem::take(&mut self.entries).into_vec();
        let e = v.remove(i);
        self.entries = v.into_boxed_slice();
        Some(e)
    }

    /// The entry of `key`, for in-place insertion or update.
    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        match self.find(&key) {
            Ok(i) => Entry::Occupied(OccupiedEntry { map: self, index: i }),
            Err(i) => Entry::Vacant(VacantEntry { map: self, index: i, key }),
        }
    }

    /// Moves every entry of `other` into `self` (a key of both takes `other`'s value).
    pub fn append(&mut self, other: &mut Self) {
        let other = std::mem::take(other);
        self.extend(other);
    }

    /// The map of `pairs` sorted by key; of equal keys the last one wins (as inserting them in
    /// turn into a `BTreeMap`).
    fn from_vec(mut pairs: Vec<(K, V)>) -> Self {
        // Stable: equal keys stay in input order, so keeping the last of each run keeps the
        // last inserted.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(K, V)> = Vec::with_capacity(pairs.len());
        for e in pairs {
            match out.last_mut() {
                Some(last) if last.0 == e.0 => last.1 = e.1,
                _ => out.push(e),
            }
        }
        VecMap { entries: out.into_boxed_slice() }
    }
}

/// An entry of a [`VecMap`] (`BTreeMap`'s `Entry`).
pub enum Entry<'a, K, V> {
    /// The key has no entry yet.
    Vacant(VacantEntry<'a, K, V>),
    /// The key has an entry.
    Occupied(OccupiedEntry<'a, K, V>),
}

/// A key without an entry, and where it goes.
pub struct VacantEntry<'a, K, V> {
    map: &'a mut VecMap<K, V>,
    index: usize,
    key: K,
}

/// A key with an entry.
pub struct OccupiedEntry<'a, K, V> {
    map: &'a mut VecMap<K, V>,
    index: usize,
}

impl<'a, K: Ord, V> VacantEntry<'a, K, V> {
    /// Inserts `value` for the key; returns it, mutable.
    pub fn insert(self, value: V) -> &'a mut V {
        self.map.insert_at(self.index, self.key, value)
    }

    /// The key.
    pub fn key(&self) -> &K {
        &self.key
    }
}

impl<'a, K, V> OccupiedEntry<'a, K, V> {
    /// The value.
    pub fn get(&self) -> &V {
        &self.map.entries[self.index].1
    }

    /// The value, mutable.
    pub fn get_mut(&mut self) -> &mut V {
        &mut self.map.entries[self.index].1
    }

    /// The value, mutable, for the map's lifetime.
    pub fn into_mut(self) -> &'a mut V {
        &mut self.map.entries[self.index].1
    }

    /// Replaces the value; returns the old one.
    pub fn insert(&mut self, value: V) -> V {
        std::mem::replace(self.get_mut(), value)
    }

    /// The key.
    pub fn key(&self) -> &K {
        &self.map.entries[self.index].0
    }
}

impl<'a, K: Ord, V> Entry<'a, K, V> {
    /// The value, inserting `default` first if the key has none.
    pub fn or_insert(self, default: V) -> &'a mut V {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(default),
        }
    }

    /// The value, inserting `f()` first if the key has none.
    pub fn or_insert_with(self, f: impl FnOnce() -> V) -> &'a mut V {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(f()),
        }
    }

    /// The value, inserting `V::default()` first if the key has none.
    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }

    /// Applies `f` to the value if the key has one.
    pub fn and_modify(mut self, f: impl FnOnce(&mut V)) -> Self {
        if let Entry::Occupied(o) = &mut self {
            f(o.get_mut());
        }
        self
    }

    /// The key.
    pub fn key(&self) -> &K {
        match self {
            Entry::Occupied(o) => o.key(),
            Entry::Vacant(v) => v.key(),
        }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self::from_vec(iter.into_iter().collect())
    }
}

impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        let mut v = std::mem::take(&mut self.entries).into_vec();
        v.extend(iter);
        *self = Self::from_vec(v);
    }
}

impl<'a, K: Ord + Copy, V: Copy> Extend<(&'a K, &'a V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (&'a K, &'a V)>>(&mut self, iter: I) {
        self.extend(iter.into_iter().map(|(k, v)| (*k, *v)));
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for VecMap<K, V> {
    fn from(pairs: [(K, V); N]) -> Self {
        Self::from_vec(Vec::from(pairs))
    }
}

impl<K: Ord, V> From<std::collections::BTreeMap<K, V>> for VecMap<K, V> {
    fn from(m: std::collections::BTreeMap<K, V>) -> Self {
        // Already in key order, no key twice.
        VecMap { entries: m.into_iter().collect() }
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_vec().into_iter()
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, K, V> IntoIterator for &'a mut VecMap<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter = IterMut<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<K: Ord, V, Q: Ord + ?Sized> std::ops::Index<&Q> for VecMap<K, V>
where
    K: Borrow<Q>,
{
    type Output = V;
    /// The value of `key`; panics when the key has no entry (as `BTreeMap`'s index).
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<K: Serialize, V: Serialize> Serialize for VecMap<K, V> {
    /// As a map in key order: the bytes of the same `BTreeMap`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> Deserialize<'de> for VecMap<K, V> {
    /// From a map in any order; of a key given twice the last value wins (as a `BTreeMap`).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MapVisitor<K, V>(PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de> + Ord, V: Deserialize<'de>> Visitor<'de> for MapVisitor<K, V> {
            type Value = VecMap<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                // The size hint comes from the input: bounded so a corrupt length cannot
                // reserve without limit.
                let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0).min(4096));
                while let Some(e) = a.next_entry()? {
                    v.push(e);
                }
                Ok(VecMap::from_vec(v))
            }
        }
        d.deserialize_map(MapVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::hash::{BuildHasher, BuildHasherDefault};

    type M = VecMap<String, i64>;

    fn pairs() -> Vec<(String, i64)> {
        vec![("memory".into(), 2), ("cpu".into(), 1), ("pods".into(), 3), ("cpu".into(), 7), ("a/b".into(), 0)]
    }

    #[test]
    fn collect_sorts_by_key_and_keeps_the_last_of_a_key_like_btreemap() {
        let m: M = pairs().into_iter().collect();
        let b: BTreeMap<String, i64> = pairs().into_iter().collect();
        assert_eq!(m.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>());
        assert_eq!(m.get("cpu"), Some(&7));
        assert_eq!(m.len(), 4);
        assert_eq!(M::from(b.clone()), m);
    }

    #[test]
    fn insert_remove_entry_follow_btreemap() {
        let (mut m, mut b) = (M::new(), BTreeMap::new());
        for (i, (k, v)) in pairs().into_iter().enumerate() {
            assert_eq!(m.insert(k.clone(), v), b.insert(k, v), "insert {i}");
        }
        assert_eq!(m.remove("pods"), b.remove("pods"));
        assert_eq!(m.remove("pods"), None);
        *m.entry("gpu".into()).or_insert(0) += 5;
        *b.entry("gpu".to_string()).or_insert(0) += 5;
        *m.entry("cpu".into()).or_default() += 1;
        *b.entry("cpu".to_string()).or_default() += 1;
        m.entry("memory".into()).and_modify(|v| *v *= 10);
        b.entry("memory".to_string()).and_modify(|v| *v *= 10);
        m.retain(|k, _| k != "a/b");
        b.retain(|k, _| k != "a/b");
        m.extend([("zz".to_string(), 1), ("cpu".to_string(), 100)]);
        b.extend([("zz".to_string(), 1), ("cpu".to_string(), 100)]);
        assert_eq!(m.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>());
        assert_eq!(m.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        assert_eq!(m.values().collect::<Vec<_>>(), b.values().collect::<Vec<_>>());
        assert!(m.contains_key("zz") && !m.contains_key("pods"));
        assert_eq!(m["cpu"], 100);
        assert_eq!(format!("{m:?}"), format!("{b:?}"));
    }

    #[test]
    fn serializes_to_the_bytes_of_the_same_btreemap() {
        let m: M = pairs().into_iter().collect();
        let b: BTreeMap<String, i64> = pairs().into_iter().collect();
        assert_eq!(serde_json::to_string(&m).unwrap(), serde_json::to_string(&b).unwrap());
        assert_eq!(serde_yaml::to_string(&m).unwrap(), serde_yaml::to_string(&b).unwrap());
        let bytes = postcard::to_stdvec(&m).unwrap();
        assert_eq!(bytes, postcard::to_stdvec(&b).unwrap(), "the recorder's encoding");
        assert_eq!(postcard::from_bytes::<M>(&bytes).unwrap(), m);
        // JSON in another key order, with a key twice, reads as a BTreeMap reads it.
        let text = r#"{"pods":1,"cpu":2,"memory":3,"cpu":4}"#;
        let back: M = serde_json::from_str(text).unwrap();
        let want: BTreeMap<String, i64> = serde_json::from_str(text).unwrap();
        assert_eq!(back, M::from(want));
    }

    #[test]
    fn orders_and_hashes_as_the_same_btreemap() {
        let a: VecMap<String, String> = [("k".to_string(), "1".to_string()), ("a".into(), "2".into())].into();
        let b: VecMap<String, String> = [("k".to_string(), "2".to_string())].into();
        let (ba, bb): (BTreeMap<_, _>, BTreeMap<_, _>) = (a.clone().into_iter().collect(), b.clone().into_iter().collect());
        assert_eq!(a.cmp(&b), ba.cmp(&bb));
        assert_eq!(b.cmp(&a), bb.cmp(&ba));
        let h = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        assert_eq!(h.hash_one(&a), h.hash_one(&ba));
        assert_eq!(h.hash_one(VecMap::<String, String>::new()), h.hash_one(BTreeMap::<String, String>::new()));
    }
}
