//! `sla` (volcano-behaviour.md §3 sla; Volcano `plugins/sla/sla.go`): a job may wait at most its
//! SLA waiting time, from its PodGroup's annotation `sla-waiting-time`, else the plugin argument
//! `sla-waiting-time` (no default: without either a job has no SLA).
//!
//! - JobOrder: jobs with an SLA before jobs without; among them, the earlier deadline
//!   (creationTimestamp + waiting time) first; equal deadlines, and two jobs without an SLA,
//!   are left to the next plugin.
//! - JobEnqueueable and JobPipelined: a job that has waited its SLA time or longer (now −
//!   creationTimestamp ≥ waiting time) is permitted (enqueued at once by `enqueue`, taken as
//!   pipelined by `allocate`, as Volcano's same function registered twice); every other job,
//!   and every job while the cycle's time is unknown ([`crate::CycleOptions::now_ms`] = 0),
//!   abstains.
//!
//! Volcano reads `time.Now()` inside the function; Basalt reads the cycle's one "now"
//! ([`State::now_ms`]), so every job of a cycle is judged against the same instant.

use super::Vote;
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::session::tables::JobIdx;
use crate::session::State;
use std::cmp::Ordering;

/// The `arguments` key sla reads.
pub const ARGS: &[ArgSpec] =
    &[ArgSpec::new("sla-waiting-time", ArgKind::Duration, "(none: only jobs with the annotation have an SLA)")];

/// Nanoseconds per millisecond.
const NS_PER_MS: i64 = 1_000_000;

/// The sla plugin: the global waiting time.
pub struct Sla {
    /// `sla-waiting-time`, ns (None: unset or not a positive duration, as Volcano ignores it).
    global_ns: Option<i64>,
}

impl Sla {
    /// Reads `sla-waiting-time` (a YAML string with a positive Go duration; anything else is
    /// ignored with the conf warning, as Volcano logs and ignores it).
    pub fn open(a: &Arguments) -> Self {
        Sla { global_ns: a.duration_ns("sla-waiting-time") }
    }

    /// Job `j`'s waiting time, ns: its annotation, else the global argument (Volcano
    /// `readJobWaitingTime`).
    pub fn waiting_ns(&self, s: &State<'_>, j: JobIdx) -> Option<i64> {
        s.jobs.rec[j.ix()].spec.sla_waiting_ns.or(self.global_ns)
    }

    /// Job `j`'s SLA deadline, ns since the Unix epoch (creationTimestamp + waiting time).
    fn deadline_ns(&self, s: &State<'_>, j: JobIdx) -> Option<i64> {
        let wait = self.waiting_ns(s, j)?;
        Some(s.jobs.creation[j.ix()].saturating_mul(NS_PER_MS).saturating_add(wait))
    }

    /// Volcano's `permitableFn`: Permit once `j` has waited its SLA time, else Abstain.
    fn permit(&self, s: &State<'_>, j: JobIdx) -> Vote {
        match self.deadline_ns(s, j) {
            Some(deadline) if s.now_ms > 0 && s.now_ms.saturating_mul(NS_PER_MS) >= deadline => Vote::Permit,
            _ => Vote::Abstain,
        }
    }
}

plugin_impl! {
    impl<'a> for Sla {
        fn name(&self) -> &'static str {
            "sla"
        }
        fn job_order(&self, s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
            match (self.deadline_ns(s, l), self.deadline_ns(s, r)) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(&b),
            }
        }
        fn job_enqueueable(&self, s: &State<'a>, j: JobIdx) -> Vote {
            self.permit(s, j)
        }
        fn job_pipelined(&self, s: &State<'a>, j: JobIdx) -> Vote {
            self.permit(s, j)
        }
    }
}

impl Sla {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::JobOrder.bit() | F::JobPipelined.bit() | F::JobEnqueueable.bit()
    };
}
