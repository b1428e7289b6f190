//! [`Rare`]: a field that nearly every object leaves at its default (a pod's affinity, its GPU
//! share and vGPU requests), held as nothing while it is the default and boxed otherwise. It
//! reads as the value (`Deref`), compares, hashes and serializes as the value (so postcard,
//! JSON and YAML read and write the bytes of the plain field), and costs 8 bytes inline
//! instead of the value's size (144 bytes for an affinity, 176 for vGPU requests).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A type with a shared default value for [`Rare`] to read when it holds nothing.
pub trait RareDefault: Default + PartialEq + 'static {
    /// The default value, shared (built once).
    fn empty() -> &'static Self;
}

/// Implements [`RareDefault`] for types with `Default + PartialEq + Sync`, each with its own
/// shared default.
#[macro_export]
macro_rules! rare_default {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::rare::RareDefault for $t {
            fn empty() -> &'static Self {
                static EMPTY: std::sync::OnceLock<$t> = std::sync::OnceLock::new();
                EMPTY.get_or_init(<$t>::default)
            }
        }
    )*};
}

/// A value that is nearly always `T::default()`: `None` (no allocation) while it is, boxed
/// otherwise. Two `Rare`s are equal when their values are, however they are held.
#[derive(Clone, Default)]
pub struct Rare<T>(Option<Box<T>>);

impl<T: RareDefault> Rare<T> {
    /// Whether the value is the default (`T::default()`).
    pub fn is_default(&self) -> bool {
        self.0.as_deref().is_none_or(|v| v == T::empty())
    }

    /// Changes the value with `f`; a value left at the default is freed. Unlike a write
    /// through `DerefMut` (which boxes the value first), a change that leaves the default
    /// allocates nothing.
    pub fn modify<R>(&mut self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut v = self.0.take().unwrap_or_default();
        let r = f(&mut v);
        *self = Rare::from_box(v);
        r
    }

    fn from_box(v: Box<T>) -> Self {
        if *v == *T::empty() {
            Rare(None)
        } else {
            Rare(Some(v))
        }
    }
}

impl<T: RareDefault> From<T> for Rare<T> {
    fn from(v: T) -> Self {
        if v == *T::empty() {
            Rare(None)
        } else {
            Rare(Some(Box::new(v)))
        }
    }
}

impl<T: RareDefault> Deref for Rare<T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self.0.as_deref() {
            Some(v) => v,
            None => T::empty(),
        }
    }
}

impl<T: RareDefault> DerefMut for Rare<T> {
    /// The value, boxed first if it was the default (see [`Rare::modify`]).
    fn deref_mut(&mut self) -> &mut T {
        self.0.get_or_insert_with(Box::default)
    }
}

impl<T: RareDefault> PartialEq for Rare<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: RareDefault + Eq> Eq for Rare<T> {}

impl<T: RareDefault + std::hash::Hash> std::hash::Hash for Rare<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (**self).hash(h)
    }
}

impl<T: RareDefault + fmt::Debug> fmt::Debug for Rare<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: RareDefault + Serialize> Serialize for Rare<T> {
    /// As the value itself.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, T: RareDefault + Deserialize<'de>> Deserialize<'de> for Rare<T> {
    /// As the value itself (held as nothing when it is the default).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Rare::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    struct Big {
        v: Vec<u32>,
        s: Option<String>,
    }
    crate::rare_default!(Big);

    #[test]
    fn default_holds_nothing_and_reads_as_default() {
        let r: Rare<Big> = Rare::default();
        assert!(r.0.is_none() && r.is_default());
        assert_eq!(*r, Big::default());
        assert!(Rare::from(Big::default()).0.is_none(), "a default value is not boxed");
        assert_eq!(std::mem::size_of::<Rare<Big>>(), 8);
    }

    #[test]
    fn writes_box_and_modify_frees_a_default_again() {
        let mut r: Rare<Big> = Rare::default();
        r.v.push(1);
        assert_eq!(r.v, [1]);
        assert!(r.0.is_some() && !r.is_default());
        r.modify(|b| b.v.clear());
        assert!(r.0.is_none(), "back to the default: freed");
        r.modify(|_| ());
        assert!(r.0.is_none(), "an unchanged default is not boxed");
        // A boxed default equals an unboxed one.
        let mut boxed: Rare<Big> = Rare::default();
        boxed.v.clear();
        assert!(boxed.0.is_some());
        assert_eq!(boxed, Rare::default());
    }

    #[test]
    fn serializes_as_the_plain_value() {
        let set = Big { v: vec![3, 4], s: Some("x".into()) };
        for b in [Big::default(), set] {
            let r = Rare::from(b.clone());
            assert_eq!(postcard::to_stdvec(&r).unwrap(), postcard::to_stdvec(&b).unwrap());
            assert_eq!(serde_json::to_string(&r).unwrap(), serde_json::to_string(&b).unwrap());
            let back: Rare<Big> = postcard::from_bytes(&postcard::to_stdvec(&b).unwrap()).unwrap();
            assert_eq!(back, r);
            assert_eq!(back.0.is_none(), b == Big::default());
        }
    }
}
