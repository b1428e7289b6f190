//! The cluster copy's slot for state a higher layer derives from it and keeps between cycles
//! (the session layout, `session::layout::Layout`, kept by `Cluster::prepare`): the cluster
//! stores, clones and renumbers it and notes changes for it ([`super::Changes`]) without naming
//! its type, so the cluster layer names nothing above it.

use crate::intern::Sym;
use std::any::Any;
use std::fmt::Debug;

/// State derived from the cluster copy and kept inside it between cycles.
pub trait Kept: Any + Debug + Send + Sync {
    /// A boxed copy (for `Cluster: Clone`).
    fn clone_box(&self) -> Box<dyn Kept>;
    /// Calls `f` on every interned id it holds (for [`super::Cluster::compact_names`]).
    fn syms(&mut self, f: &mut dyn FnMut(&mut Sym));
    /// As [`Any`], to downcast to the concrete type.
    fn as_any(&self) -> &dyn Any;
    /// As boxed [`Any`], to take the concrete type back out.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// An optional [`Kept`] value (empty by default; cloning clones the value).
#[derive(Debug, Default)]
pub struct KeptSlot(pub Option<Box<dyn Kept>>);

impl Clone for KeptSlot {
    fn clone(&self) -> Self {
        KeptSlot(self.0.as_ref().map(|k| k.clone_box()))
    }
}

impl KeptSlot {
    /// The kept value as `T`, if there is one of that type.
    pub fn get<T: Kept>(&self) -> Option<&T> {
        self.0.as_deref().and_then(|k| k.as_any().downcast_ref::<T>())
    }

    /// Takes the kept value out as `T` (`None`, and the slot emptied, when it holds another
    /// type or nothing).
    pub fn take<T: Kept>(&mut self) -> Option<Box<T>> {
        self.0.take().and_then(|k| k.into_any().downcast::<T>().ok())
    }
}
