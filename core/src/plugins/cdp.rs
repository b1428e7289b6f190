//! `cdp`, cooldown protection (volcano-behaviour.md §3 cdp; Volcano `plugins/cdp/cdp.go`): a
//! Running pod with the label or annotation `volcano.sh/cooldown-time` (a Go duration, label
//! first) is not a victim until that long after it was scheduled. Registered as Preemptable
//! and Reclaimable; every other candidate is a victim. Arguments: none.
//!
//! "Now" is the session's [`State::now_ms`] (the caller's clock: simulated time in `simulate`,
//! the wall clock at cycle start live) and "scheduled" the pod's `start_ms` (its
//! `PodScheduled=True` transition time, as Volcano reads it, else `status.startTime`). With
//! either unknown (0) the pod is not protected: Volcano also protects only pods whose
//! scheduled time it can read. A cooldown value that is not a valid duration means no
//! protection, as in Volcano (the runtime reports it when loading the pod).

use super::Verdict;
use crate::model::PodPhase;
use crate::session::tables::TaskIdx;
use crate::session::State;

/// The cdp plugin (stateless).
pub struct Cdp;

impl Cdp {
    /// Whether task `t` is still cooling down at the session's now (and so not a victim).
    pub fn cooling_down(s: &State<'_>, t: TaskIdx) -> bool {
        let p = &s.tasks.rec[t.ix()].spec;
        let Some(cooldown) = p.cooldown_ms else {
            return false;
        };
        p.phase == PodPhase::Running && s.now_ms > 0 && p.start_ms > 0 && p.start_ms.saturating_add(cooldown) > s.now_ms
    }

    fn filter(s: &State<'_>, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
        out.extend(candidates.iter().copied().filter(|&t| !Cdp::cooling_down(s, t)));
        Verdict::Decided
    }
}

plugin_impl! {
    impl<'a> for Cdp {
        fn name(&self) -> &'static str {
            "cdp"
        }
        fn preemptable(&self, s: &State<'a>, _preemptor: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            Cdp::filter(s, candidates, out)
        }
        fn reclaimable(&self, s: &State<'a>, _reclaimer: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            Cdp::filter(s, candidates, out)
        }
    }
}

impl Cdp {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::Preemptable.bit() | F::Reclaimable.bit()
    };
}
