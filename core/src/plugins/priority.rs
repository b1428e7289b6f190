//! `priority` (volcano-behaviour.md §3): higher task priority first, higher job priority
//! (PriorityClass value) first; a job starves while Ready + Waiting < #tasks. Preemptable: a
//! task of another job only when that job's priority is lower than the preemptor's job's, a task
//! of the same job only when its own priority is lower than the preemptor's.

use super::{EvictionKind, Verdict};
use crate::session::tables::{JobIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

/// The priority plugin (stateless).
pub struct Priority;

plugin_impl! {
    impl<'a> for Priority {
        fn name(&self) -> &'static str {
            "priority"
        }
        fn task_order(&self, s: &State<'a>, l: TaskIdx, r: TaskIdx) -> Ordering {
            s.tasks.priority[r.ix()].cmp(&s.tasks.priority[l.ix()])
        }
        fn job_order(&self, s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
            s.jobs.priority[r.ix()].cmp(&s.jobs.priority[l.ix()])
        }
        fn preemptable(&self, s: &State<'a>, preemptor: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            let pj = s.tasks.job[preemptor.ix()];
            for &v in candidates {
                let vj = s.tasks.job[v.ix()];
                let lower = if vj != pj {
                    job_priority(s, vj) < job_priority(s, pj)
                } else {
                    s.tasks.priority[v.ix()] < s.tasks.priority[preemptor.ix()]
                };
                if lower {
                    out.push(v);
                }
            }
            Verdict::Decided
        }
        /// Volcano priority's `UnifiedEvictableFn`: gangreclaim may take every candidate;
        /// gangpreempt only tasks of jobs with a lower priority than `job`'s.
        fn unified_evictable(
            &self,
            s: &State<'a>,
            kind: EvictionKind,
            job: JobIdx,
            candidates: &[TaskIdx],
            out: &mut Vec<TaskIdx>,
        ) -> Verdict {
            match kind {
                EvictionKind::GangReclaim => out.extend_from_slice(candidates),
                EvictionKind::GangPreempt => {
                    let mine = job_priority(s, job.0);
                    out.extend(candidates.iter().copied().filter(|&v| job_priority(s, s.tasks.job[v.ix()]) < mine));
                }
            }
            Verdict::Decided
        }
        fn job_starving(&self, s: &State<'a>, j: JobIdx) -> bool {
            s.jobs.ready_num(j) + s.jobs.waiting_num(j) < s.jobs.task_count(j) as i32
        }
    }
}

impl Priority {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::JobOrder.bit() | F::TaskOrder.bit() | F::JobStarving.bit() | F::Preemptable.bit() | F::UnifiedEvictable.bit()
    };
}

/// Priority of job row `j` (a task without a job has none: lowest).
fn job_priority(s: &State<'_>, j: u32) -> i64 {
    if j == crate::session::tables::NONE {
        i64::MIN
    } else {
        s.jobs.priority[j as usize] as i64
    }
}
