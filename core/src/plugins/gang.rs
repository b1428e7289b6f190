//! `gang` (volcano-behaviour.md §3, §1.4, §1.7): all-or-nothing by `minMember` and per-role
//! `minTaskMember`; not-ready jobs first; writes the PodGroup Unschedulable/Scheduled condition
//! at close. Preemptable = Reclaimable: a job gives up tasks only while its ready count stays
//! above `minMember`. UnifiedEvictable permits every candidate (the gang actions' bundles keep
//! victims' gangs).

use super::{EvictionKind, Invalid, Verdict, Vote};
use crate::model::PodGroupCondition;
use crate::session::notes::CloseNotes;
use crate::session::tables::{JobIdx, TaskIdx, TaskStatus, NONE};
use crate::session::State;
use std::cmp::Ordering;

/// The gang plugin (stateless).
pub struct Gang;

/// Which per-role tally a check uses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tally {
    Valid,
    Ready,
    Pipelined,
}

/// Volcano `CheckTaskValid/Ready/Pipelined`: every role with a `minTaskMember` has enough
/// tasks in the tallied statuses. Skipped (true) when minMember < Σ minTaskMember.
fn check_roles(s: &State<'_>, j: JobIdx, tally: Tally) -> bool {
    let rec = s.jobs.rec[j.ix()];
    if rec.min_task_member.is_empty() || s.jobs.min_available[j.ix()] < s.jobs.min_task_total[j.ix()] {
        return true;
    }
    rec.min_task_member.iter().all(|&(role, min)| {
        let mut n = 0;
        for t in s.jobs.tasks(j).filter(|&t| s.role(t) == role) {
            let st = s.tasks.status()[t.ix()];
            let counted = match tally {
                Tally::Valid => {
                    st.allocated() || matches!(st, TaskStatus::Succeeded | TaskStatus::Pipelined | TaskStatus::Pending)
                }
                Tally::Ready => {
                    st.allocated() || st == TaskStatus::Succeeded || (st == TaskStatus::Pending && s.tasks.best_effort[t.ix()])
                }
                Tally::Pipelined => {
                    st.allocated()
                        || matches!(st, TaskStatus::Succeeded | TaskStatus::Pipelined)
                        || (st == TaskStatus::Pending && s.tasks.best_effort[t.ix()])
                }
            };
            if counted {
                n += 1;
            }
        }
        n >= min
    })
}

/// Volcano gang's `preemptableFn`: candidates in order; a job's tally starts at its
/// `ReadyTaskNum` and each victim taken from it lowers the tally, which must stay above
/// `minMember` before the take. Tasks without a job are not victims.
fn gang_victims(s: &State<'_>, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) {
    // (job row, tally) of the jobs seen so far; a node holds few jobs.
    let mut tally: Vec<(u32, i32)> = Vec::new();
    for &v in candidates {
        let j = s.tasks.job[v.ix()];
        if j == NONE {
            continue;
        }
        let i = match tally.iter().position(|(x, _)| *x == j) {
            Some(i) => i,
            None => {
                tally.push((j, s.jobs.ready_num(JobIdx(j))));
                tally.len() - 1
            }
        };
        if tally[i].1 > s.jobs.min_available[j as usize] {
            tally[i].1 -= 1;
            out.push(v);
        }
    }
}

plugin_impl! {
    impl<'a> for Gang {
        fn name(&self) -> &'static str {
            "gang"
        }
        fn job_valid(&self, s: &State<'a>, j: JobIdx) -> Option<Invalid> {
            if !check_roles(s, j, Tally::Valid) {
                return Some(Invalid {
                    reason: "NotEnoughPodsOfTask",
                    message: "Not enough valid pods of each task for gang-scheduling".into(),
                });
            }
            let valid = s.jobs.valid_num(j);
            let min = s.jobs.min_available[j.ix()];
            if valid < min {
                return Some(Invalid {
                    reason: "NotEnoughTasks",
                    message: format!("Not enough valid tasks for gang-scheduling, valid: {valid}, min: {min}"),
                });
            }
            None
        }
        fn job_order(&self, s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
            match (s.jobs.is_ready(l), s.jobs.is_ready(r)) {
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => Ordering::Equal,
            }
        }
        fn job_ready(&self, s: &State<'a>, j: JobIdx) -> bool {
            check_roles(s, j, Tally::Ready) && s.jobs.is_ready(j)
        }
        fn job_pipelined(&self, s: &State<'a>, j: JobIdx) -> Vote {
            if check_roles(s, j, Tally::Pipelined) && s.jobs.is_pipelined(j) {
                Vote::Permit
            } else {
                Vote::Reject
            }
        }
        fn job_starving(&self, s: &State<'a>, j: JobIdx) -> bool {
            s.jobs.is_starving(j)
        }
        fn preemptable(&self, s: &State<'a>, _preemptor: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            gang_victims(s, candidates, out);
            Verdict::Decided
        }
        fn reclaimable(&self, s: &State<'a>, _reclaimer: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            gang_victims(s, candidates, out);
            Verdict::Decided
        }
        /// Volcano gang's `UnifiedEvictableFn`: every candidate (gangpreempt and gangreclaim keep
        /// victims' gangs through their safe/whole bundles instead).
        fn unified_evictable(
            &self,
            _s: &State<'a>,
            _kind: EvictionKind,
            _job: JobIdx,
            candidates: &[TaskIdx],
            out: &mut Vec<TaskIdx>,
        ) -> Verdict {
            out.extend_from_slice(candidates);
            Verdict::Decided
        }
        fn on_close(&mut self, s: &State<'a>, notes: &mut CloseNotes) {
            for j in (0..s.jobs.len).map(|i| JobIdx(i as u32)) {
                // A job without tasks (a PodGroup whose pods are not created yet, e.g. a Volcano
                // Job the controller holds until its PodGroup is Inqueue) gets no condition:
                // Volcano master's gang OnSessionClose skips it.
                if s.jobs.task_count(j) == 0 {
                    continue;
                }
                // Volcano master's `shouldSkipUnschedulableForReleasing` (d725ce4db): a job that is
                // not ready, waits for no Pending or Pipelined task, and whose scheduled tasks
                // (Running, Bound, Failed, Succeeded) with its Releasing tasks still on a node
                // cover minAvailable is winding down, not unschedulable: no condition.
                let releasing = crate::session::releasing_scheduled_num(s, j);
                let waiting = s.jobs.count(j, TaskStatus::Pending) + s.jobs.count(j, TaskStatus::Pipelined);
                if !s.jobs.is_ready(j)
                    && releasing > 0
                    && waiting == 0
                    && s.jobs.scheduled_num(j) + releasing >= s.jobs.min_available[j.ix()]
                {
                    continue;
                }
                if !s.jobs.is_ready(j) {
                    // Tasks whose last transaction allocated them count as schedulable.
                    let schedulable = s
                        .jobs
                        .tasks(j)
                        .filter(|&t| s.tasks.status()[t.ix()] == TaskStatus::Pending && s.tasks.last_status()[t.ix()].allocated())
                        .count() as i32
                        + s.jobs.ready_num(j);
                    let unready = s.jobs.min_available[j.ix()] - schedulable;
                    let fit = crate::session::close_job_fit_error(s, j);
                    let msg = format!("{}/{} tasks in gang unschedulable: {}", unready, s.jobs.task_count(j), fit);
                    notes.unready_jobs.push((s.jobs.group[j.ix()], unready.max(0) as u32));
                    notes.job_fit_error[j.ix()] = msg.clone();
                    notes.job_condition[j.ix()] = Some(PodGroupCondition {
                        kind: "Unschedulable".into(),
                        status: "True".into(),
                        transition_id: s.uid.clone(),
                        reason: "NotEnoughResources".into(),
                        message: msg,
                    });
                } else {
                    notes.job_condition[j.ix()] = Some(PodGroupCondition {
                        kind: "Scheduled".into(),
                        status: "True".into(),
                        transition_id: s.uid.clone(),
                        reason: "tasks in gang are ready to be scheduled".into(),
                        message: String::new(),
                    });
                }
            }
        }
    }
}

impl Gang {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::JobOrder.bit()
            | F::JobReady.bit()
            | F::JobPipelined.bit()
            | F::JobValid.bit()
            | F::JobStarving.bit()
            | F::Preemptable.bit()
            | F::Reclaimable.bit()
            | F::UnifiedEvictable.bit()
    };
}
