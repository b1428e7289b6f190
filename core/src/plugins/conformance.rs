//! `conformance` (volcano-behaviour.md §3): keeps critical pods (priority classes
//! `system-cluster-critical`/`system-node-critical`, namespace `kube-system`) out of eviction.
//! Volcano registers its rule as Preemptable/Reclaimable/UnifiedEvictable functions, which only
//! the preempt and reclaim actions call; Basalt implements neither action yet, so the plugin
//! registers no function ([`Conformance::evictable`] is the rule, for when they come).

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

plugin_impl! {
    impl<'a> for Conformance {
        fn name(&self) -> &'static str {
            "conformance"
        }
    }
}
