//! `conformance` (volcano-behaviour.md §3): keeps critical pods (priority classes
//! `system-cluster-critical`/`system-node-critical`, namespace `kube-system`) out of eviction.
//! It registers only eviction filters, which the preempt and reclaim actions will use; the
//! predicate-free actions of this version do not call it.

use super::{Fn, Plugin};
use crate::session::tables::TaskIdx;
use crate::session::State;

/// The conformance plugin (stateless).
pub struct Conformance;

impl Conformance {
    /// Whether `t` may be evicted (not critical).
    pub fn evictable(s: &State<'_>, t: TaskIdx) -> bool {
        let p = &s.tasks.rec[t.ix()].spec;
        !(p.priority_class_name == "system-cluster-critical"
            || p.priority_class_name == "system-node-critical"
            || p.namespace == "kube-system")
    }
}

impl<'a> Plugin<'a> for Conformance {
    fn name(&self) -> &'static str {
        "conformance"
    }
    fn fns(&self) -> u32 {
        Fn::Preemptable.bit() | Fn::Reclaimable.bit()
    }
}
