//! `conformance` (volcano-behaviour.md §3): keeps critical pods (priority classes
//! `system-cluster-critical`/`system-node-critical`, namespace `kube-system`) out of eviction.
//! Its rule is registered as the Preemptable, Reclaimable and UnifiedEvictable functions: every
//! candidate but the critical ones.

use super::{EvictionKind, Verdict};
use crate::session::tables::{JobIdx, TaskIdx};
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
        fn preemptable(&self, s: &State<'a>, _preemptor: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            out.extend(candidates.iter().copied().filter(|&t| Conformance::evictable(s, t)));
            Verdict::Decided
        }
        fn reclaimable(&self, s: &State<'a>, _reclaimer: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            out.extend(candidates.iter().copied().filter(|&t| Conformance::evictable(s, t)));
            Verdict::Decided
        }
        fn unified_evictable(
            &self,
            s: &State<'a>,
            _kind: EvictionKind,
            _job: JobIdx,
            candidates: &[TaskIdx],
            out: &mut Vec<TaskIdx>,
        ) -> Verdict {
            out.extend(candidates.iter().copied().filter(|&t| Conformance::evictable(s, t)));
            Verdict::Decided
        }
    }
}

impl Conformance {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::Preemptable.bit() | F::Reclaimable.bit() | F::UnifiedEvictable.bit()
    };
}
