//! The job state machine (Volcano's `pkg/controllers/job/state/*.go`, volcano-behaviour.md §5.1):
//! the job's [`Phase`] and the request's [`Action`] give a [`Step`]: an operation on the pods
//! ([`Op::Sync`] or [`Op::Kill`]) and the [`Rule`] that, applied to the counts after the
//! operation, decides the next phase. Pure: the controller executes the operation and then calls
//! [`Rule::apply`].
//!
//! | phase | action | step |
//! |---|---|---|
//! | Pending, Running | RestartJob | kill all (retain none) → retry++, Restarting |
//! | Pending, Running | RestartTask/Pod/Partition | kill target → retry++, Restarting |
//! | Pending, Running | AbortJob | kill soft → Aborting |
//! | Pending, Running | CompleteJob | kill soft → Completing |
//! | Pending, Running | TerminateJob | kill soft → Terminating |
//! | Pending | else | sync → Running when minAvailable ≤ running+succeeded+failed |
//! | Running | else | sync → Completed/Failed by minSuccess/minAvailable, Pending when too many pending |
//! | Restarting | SyncJob | sync → restarting rule |
//! | Restarting | RestartTask/Pod/Partition | kill target → restarting rule |
//! | Restarting | else | kill all if live pods (else sync) → restarting rule |
//! | Aborting | ResumeJob | kill soft → retry++, Restarting |
//! | Aborting | else | kill soft → Aborted when drained |
//! | Aborted | ResumeJob | kill soft → retry++, Restarting |
//! | Aborted | else | kill soft |
//! | Completing / Terminating | any | kill soft → Completed / Terminated when drained |
//! | Completed, Terminated, Failed | any | kill soft |
//!
//! The restarting rule: retryCount ≥ maxRetry ⇒ Failed; Σreplicas − terminating ≥ minAvailable ⇒
//! Pending. "Drained": no pod terminating, pending or running.

use super::defaults::JobFacts;
use super::request::{Action, Phase};
use crate::crd::JobStatus;

/// Which pods a kill keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retain {
    /// Kill every pod.
    None,
    /// Keep Succeeded and Failed pods (their logs and exit codes stay).
    Soft,
}

/// Which pods a kill is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Every pod of the job (bumps `status.version`, deletes the PodGroup).
    Job,
    /// The pods of one task.
    Task(String),
    /// One pod, by name.
    Pod(String),
    /// The pods of one partition of a task (`RestartPartition`): task, `volcano.sh/partition-id`.
    Partition(String, String),
}

/// What to do to the pods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Create missing pods, delete surplus ones, recount.
    Sync,
    /// Delete the target's pods (except those `retain` keeps), recount.
    Kill {
        /// Which pods.
        target: Target,
        /// Which to keep.
        retain: Retain,
    },
}

/// How the phase changes once the operation ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Phase unchanged.
    Keep,
    /// `retryCount++`, phase Restarting.
    Restart,
    /// Phase becomes this.
    Enter(Phase),
    /// Pending's sync rule.
    PendingSync,
    /// Running's sync rule.
    RunningSync,
    /// Restarting's rule.
    Restarting,
    /// Phase becomes this once nothing is terminating, pending or running.
    WhenDrained(Phase),
}

/// One transition: the operation and the phase rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// What to do to the pods.
    pub op: Op,
    /// How the phase changes after it.
    pub rule: Rule,
}

fn kill(target: Target, retain: Retain, rule: Rule) -> Step {
    Step { op: Op::Kill { target, retain }, rule }
}

fn sync(rule: Rule) -> Step {
    Step { op: Op::Sync, rule }
}

/// The step for `action` in `phase`. `target` is the request's task or pod for the restart
/// actions (`None`: the whole job); `has_live_pods` whether some pod is not being deleted
/// (Restarting only kills again while some are, so a late duplicate RestartJob does not delete a
/// freshly recreated PodGroup).
pub fn step(phase: Phase, action: Action, target: Option<Target>, has_live_pods: bool) -> Step {
    let targeted = matches!(action, Action::RestartTask | Action::RestartPod | Action::RestartPartition);
    let target_or_job = target.unwrap_or(Target::Job);
    match phase {
        Phase::Pending | Phase::Running => match action {
            Action::RestartJob => kill(Target::Job, Retain::None, Rule::Restart),
            _ if targeted => kill(target_or_job, Retain::None, Rule::Restart),
            Action::AbortJob => kill(Target::Job, Retain::Soft, Rule::Enter(Phase::Aborting)),
            Action::CompleteJob => kill(Target::Job, Retain::Soft, Rule::Enter(Phase::Completing)),
            Action::TerminateJob => kill(Target::Job, Retain::Soft, Rule::Enter(Phase::Terminating)),
            _ if phase == Phase::Pending => sync(Rule::PendingSync),
            _ => sync(Rule::RunningSync),
        },
        Phase::Restarting => match action {
            Action::SyncJob => sync(Rule::Restarting),
            _ if targeted => kill(target_or_job, Retain::None, Rule::Restarting),
            _ if !has_live_pods => sync(Rule::Restarting),
            _ => kill(Target::Job, Retain::None, Rule::Restarting),
        },
        Phase::Aborting => match action {
            Action::ResumeJob => kill(Target::Job, Retain::Soft, Rule::Restart),
            _ => kill(Target::Job, Retain::Soft, Rule::WhenDrained(Phase::Aborted)),
        },
        Phase::Aborted => match action {
            Action::ResumeJob => kill(Target::Job, Retain::Soft, Rule::Restart),
            _ => kill(Target::Job, Retain::Soft, Rule::Keep),
        },
        Phase::Completing => kill(Target::Job, Retain::Soft, Rule::WhenDrained(Phase::Completed)),
        Phase::Terminating => kill(Target::Job, Retain::Soft, Rule::WhenDrained(Phase::Terminated)),
        Phase::Completed | Phase::Terminated | Phase::Failed => kill(Target::Job, Retain::Soft, Rule::Keep),
    }
}

/// The job's phase as the state machine sees it: an empty or unknown phase is Pending.
pub fn phase_of(status: Option<&JobStatus>) -> Phase {
    status.and_then(|s| s.state.phase.as_deref()).and_then(Phase::parse).unwrap_or(Phase::Pending)
}

impl Rule {
    /// Applies the rule to `status` (its counters already recounted after the operation);
    /// returns the new phase when it changes (`retryCount` is bumped here for
    /// [`Rule::Restart`]).
    pub fn apply(self, facts: &JobFacts, status: &mut JobStatus) -> Option<Phase> {
        let current = phase_of(Some(status));
        let next = match self {
            Rule::Keep => None,
            Rule::Restart => {
                status.retry_count += 1;
                Some(Phase::Restarting)
            }
            Rule::Enter(p) => Some(p),
            Rule::PendingSync => {
                (facts.min_available <= status.running + status.succeeded + status.failed).then_some(Phase::Running)
            }
            Rule::RunningSync => running_sync(facts, status),
            Rule::Restarting => {
                if status.retry_count >= facts.max_retry {
                    Some(Phase::Failed)
                } else if facts.total_replicas - status.terminating >= facts.min_available {
                    Some(Phase::Pending)
                } else {
                    None
                }
            }
            Rule::WhenDrained(p) => (status.terminating == 0 && status.pending == 0 && status.running == 0).then_some(p),
        };
        let next = next?;
        if next == current && self != Rule::Restart {
            return None;
        }
        status.state.phase = Some(next.as_str().to_string());
        Some(next)
    }
}

fn running_sync(facts: &JobFacts, status: &JobStatus) -> Option<Phase> {
    let replicas = facts.total_replicas;
    if replicas == 0 {
        // Scaled to zero: keep the phase.
        return None;
    }
    if let Some(ms) = facts.min_success {
        if status.succeeded >= ms {
            return Some(Phase::Completed);
        }
    }
    if status.succeeded + status.failed == replicas {
        if facts.min_available >= facts.total_task_min_available {
            for t in &facts.tasks {
                let succeeded =
                    status.task_status_count.get(&t.name).and_then(|c| c.phase.get("Succeeded").copied()).unwrap_or(0);
                if status.task_status_count.contains_key(&t.name) && succeeded < t.min_available {
                    return Some(Phase::Failed);
                }
            }
        }
        return Some(match facts.min_success {
            Some(ms) if status.succeeded < ms => Phase::Failed,
            _ if status.succeeded >= facts.min_available => Phase::Completed,
            _ => Phase::Failed,
        });
    }
    if status.pending > replicas - facts.min_available {
        return Some(Phase::Pending);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::defaults::TaskFacts;
    use crate::crd::TaskState;
    use std::collections::BTreeMap;

    fn facts(min_available: i32, min_success: Option<i32>) -> JobFacts {
        // ps ×1 (minAvailable 1), worker ×2 (minAvailable 2): Σ replicas 3.
        JobFacts {
            tasks: vec![
                TaskFacts { name: "ps".into(), replicas: 1, min_available: 1, max_retry: 3 },
                TaskFacts { name: "worker".into(), replicas: 2, min_available: 2, max_retry: 3 },
            ],
            total_replicas: 3,
            total_task_min_available: 3,
            min_available,
            min_success,
            max_retry: 2,
            queue: "default".into(),
        }
    }

    fn facts_zero() -> JobFacts {
        let mut f = facts(0, None);
        f.tasks.iter_mut().for_each(|t| {
            t.replicas = 0;
            t.min_available = 0;
        });
        f.total_replicas = 0;
        f.total_task_min_available = 0;
        f
    }

    fn st(phase: Phase, pending: i32, running: i32, succeeded: i32, failed: i32, terminating: i32, retry: i32) -> JobStatus {
        JobStatus {
            state: crate::crd::JobState { phase: Some(phase.as_str().into()), ..Default::default() },
            min_available: 3,
            pending,
            running,
            succeeded,
            failed,
            terminating,
            retry_count: retry,
            ..Default::default()
        }
    }

    #[test]
    fn step_table() {
        use Action as A;
        use Phase as P;
        let task = || Some(Target::Task("worker".into()));
        let cases: Vec<(P, A, Option<Target>, bool, Step)> = vec![
            (P::Pending, A::RestartJob, None, true, kill(Target::Job, Retain::None, Rule::Restart)),
            (P::Running, A::RestartJob, None, true, kill(Target::Job, Retain::None, Rule::Restart)),
            (P::Running, A::RestartTask, task(), true, kill(Target::Task("worker".into()), Retain::None, Rule::Restart)),
            (
                P::Pending,
                A::RestartPod,
                Some(Target::Pod("j-ps-0".into())),
                true,
                kill(Target::Pod("j-ps-0".into()), Retain::None, Rule::Restart),
            ),
            (P::Pending, A::RestartTask, task(), true, kill(Target::Task("worker".into()), Retain::None, Rule::Restart)),
            (
                P::Running,
                A::RestartPod,
                Some(Target::Pod("j-ps-0".into())),
                true,
                kill(Target::Pod("j-ps-0".into()), Retain::None, Rule::Restart),
            ),
            (P::Running, A::RestartPartition, task(), true, kill(Target::Task("worker".into()), Retain::None, Rule::Restart)),
            (P::Pending, A::RestartPartition, task(), true, kill(Target::Task("worker".into()), Retain::None, Rule::Restart)),
            (P::Running, A::RestartTask, None, true, kill(Target::Job, Retain::None, Rule::Restart)),
            (P::Running, A::AbortJob, None, true, kill(Target::Job, Retain::Soft, Rule::Enter(P::Aborting))),
            (P::Pending, A::AbortJob, None, true, kill(Target::Job, Retain::Soft, Rule::Enter(P::Aborting))),
            (P::Pending, A::CompleteJob, None, true, kill(Target::Job, Retain::Soft, Rule::Enter(P::Completing))),
            (P::Running, A::CompleteJob, None, true, kill(Target::Job, Retain::Soft, Rule::Enter(P::Completing))),
            (P::Running, A::TerminateJob, None, true, kill(Target::Job, Retain::Soft, Rule::Enter(P::Terminating))),
            (P::Pending, A::TerminateJob, None, true, kill(Target::Job, Retain::Soft, Rule::Enter(P::Terminating))),
            (P::Pending, A::SyncJob, None, true, sync(Rule::PendingSync)),
            (P::Pending, A::ResumeJob, None, true, sync(Rule::PendingSync)),
            (P::Pending, A::EnqueueJob, None, true, sync(Rule::PendingSync)),
            (P::Running, A::SyncJob, None, true, sync(Rule::RunningSync)),
            (P::Running, A::ResumeJob, None, true, sync(Rule::RunningSync)),
            (P::Restarting, A::SyncJob, None, true, sync(Rule::Restarting)),
            (P::Restarting, A::SyncJob, None, false, sync(Rule::Restarting)),
            (P::Restarting, A::RestartTask, task(), true, kill(Target::Task("worker".into()), Retain::None, Rule::Restarting)),
            (
                P::Restarting,
                A::RestartPod,
                Some(Target::Pod("j-ps-0".into())),
                true,
                kill(Target::Pod("j-ps-0".into()), Retain::None, Rule::Restarting),
            ),
            (
                P::Restarting,
                A::RestartPartition,
                task(),
                false,
                kill(Target::Task("worker".into()), Retain::None, Rule::Restarting),
            ),
            (P::Restarting, A::RestartJob, None, true, kill(Target::Job, Retain::None, Rule::Restarting)),
            (P::Restarting, A::RestartJob, None, false, sync(Rule::Restarting)),
            (P::Restarting, A::AbortJob, None, true, kill(Target::Job, Retain::None, Rule::Restarting)),
            (P::Restarting, A::TerminateJob, None, false, sync(Rule::Restarting)),
            (P::Aborting, A::ResumeJob, None, true, kill(Target::Job, Retain::Soft, Rule::Restart)),
            (P::Aborting, A::SyncJob, None, true, kill(Target::Job, Retain::Soft, Rule::WhenDrained(P::Aborted))),
            (P::Aborting, A::RestartJob, None, true, kill(Target::Job, Retain::Soft, Rule::WhenDrained(P::Aborted))),
            (P::Aborted, A::ResumeJob, None, false, kill(Target::Job, Retain::Soft, Rule::Restart)),
            (P::Aborted, A::SyncJob, None, false, kill(Target::Job, Retain::Soft, Rule::Keep)),
            (P::Aborted, A::RestartJob, None, false, kill(Target::Job, Retain::Soft, Rule::Keep)),
            (P::Completing, A::SyncJob, None, true, kill(Target::Job, Retain::Soft, Rule::WhenDrained(P::Completed))),
            (P::Completing, A::ResumeJob, None, true, kill(Target::Job, Retain::Soft, Rule::WhenDrained(P::Completed))),
            (P::Terminating, A::RestartJob, None, true, kill(Target::Job, Retain::Soft, Rule::WhenDrained(P::Terminated))),
            (P::Terminating, A::SyncJob, None, true, kill(Target::Job, Retain::Soft, Rule::WhenDrained(P::Terminated))),
            (P::Completed, A::RestartJob, None, false, kill(Target::Job, Retain::Soft, Rule::Keep)),
            (P::Completed, A::SyncJob, None, false, kill(Target::Job, Retain::Soft, Rule::Keep)),
            (P::Terminated, A::ResumeJob, None, false, kill(Target::Job, Retain::Soft, Rule::Keep)),
            (P::Terminated, A::SyncJob, None, false, kill(Target::Job, Retain::Soft, Rule::Keep)),
            (P::Failed, A::SyncJob, None, false, kill(Target::Job, Retain::Soft, Rule::Keep)),
            (P::Failed, A::ResumeJob, None, false, kill(Target::Job, Retain::Soft, Rule::Keep)),
        ];
        for (phase, action, target, live, want) in cases {
            assert_eq!(step(phase, action, target.clone(), live), want, "{phase} × {action} (target {target:?}, live {live})");
        }
    }

    #[test]
    fn rule_table() {
        use Phase as P;
        let f = facts(3, None);
        // (rule, status before, facts, next phase, retry after)
        let cases: Vec<(Rule, JobStatus, JobFacts, Option<P>, i32)> = vec![
            (Rule::Keep, st(P::Aborted, 0, 0, 0, 0, 0, 0), f.clone(), None, 0),
            (Rule::Restart, st(P::Running, 0, 0, 0, 0, 3, 0), f.clone(), Some(P::Restarting), 1),
            (Rule::Restart, st(P::Pending, 2, 0, 0, 0, 1, 1), f.clone(), Some(P::Restarting), 2),
            // Restart reports the phase even from Restarting itself: the retry still counts
            (Rule::Restart, st(P::Restarting, 0, 0, 0, 0, 0, 1), f.clone(), Some(P::Restarting), 2),
            (Rule::Enter(P::Completing), st(P::Running, 0, 3, 0, 0, 0, 0), f.clone(), Some(P::Completing), 0),
            (Rule::Enter(P::Terminating), st(P::Pending, 3, 0, 0, 0, 0, 0), f.clone(), Some(P::Terminating), 0),
            // entering the phase the job is in already is no transition
            (Rule::Enter(P::Aborting), st(P::Aborting, 0, 0, 0, 0, 1, 0), f.clone(), None, 0),
            (Rule::Enter(P::Aborting), st(P::Running, 0, 3, 0, 0, 0, 0), f.clone(), Some(P::Aborting), 0),
            // Pending → Running once minAvailable pods ran (succeeded and failed count)
            (Rule::PendingSync, st(P::Pending, 1, 2, 0, 0, 0, 0), f.clone(), None, 0),
            (Rule::PendingSync, st(P::Pending, 0, 2, 1, 0, 0, 0), f.clone(), Some(P::Running), 0),
            (Rule::PendingSync, st(P::Pending, 0, 1, 1, 1, 0, 0), f.clone(), Some(P::Running), 0),
            // Running: all finished and enough succeeded → Completed
            (Rule::RunningSync, st(P::Running, 0, 0, 3, 0, 0, 0), f.clone(), Some(P::Completed), 0),
            // Running: all finished, too few succeeded → Failed
            (Rule::RunningSync, st(P::Running, 0, 0, 2, 1, 0, 0), f.clone(), Some(P::Failed), 0),
            // Running: still running
            (Rule::RunningSync, st(P::Running, 0, 1, 2, 0, 0, 0), f.clone(), None, 0),
            // Running: minSuccess reached early → Completed
            (Rule::RunningSync, st(P::Running, 0, 2, 1, 0, 0, 0), facts(3, Some(1)), Some(P::Completed), 0),
            // Running: all finished, minSuccess unmet → Failed
            (Rule::RunningSync, st(P::Running, 0, 0, 1, 2, 0, 0), facts(1, Some(2)), Some(P::Failed), 0),
            // Running: all finished, minAvailable 1 met without minSuccess → Completed
            (Rule::RunningSync, st(P::Running, 0, 0, 1, 2, 0, 0), facts(1, None), Some(P::Completed), 0),
            // Running: more pending than spare replicas → back to Pending
            (Rule::RunningSync, st(P::Running, 1, 2, 0, 0, 0, 0), f.clone(), Some(P::Pending), 0),
            // Running: scaled to zero replicas → phase kept
            (Rule::RunningSync, st(P::Running, 0, 0, 0, 0, 0, 0), facts_zero(), None, 0),
            // Running: pending within the spare replicas → stays Running
            (Rule::RunningSync, st(P::Running, 1, 2, 0, 0, 0, 0), facts(2, None), None, 0),
            // Pending: minAvailable 1 reached by one running pod
            (Rule::PendingSync, st(P::Pending, 2, 1, 0, 0, 0, 0), facts(1, None), Some(P::Running), 0),
            // Restarting: retries exhausted → Failed
            (Rule::Restarting, st(P::Restarting, 0, 0, 0, 1, 2, 2), f.clone(), Some(P::Failed), 2),
            // Restarting: retries exhausted wins even with nothing terminating
            (Rule::Restarting, st(P::Restarting, 0, 0, 0, 0, 0, 3), f.clone(), Some(P::Failed), 3),
            // Restarting: minAvailable 2 of 3 replicas: one pod still terminating is enough
            (Rule::Restarting, st(P::Restarting, 0, 0, 0, 0, 1, 1), facts(2, None), Some(P::Pending), 1),
            // Restarting: pods still terminating → stays
            (Rule::Restarting, st(P::Restarting, 0, 0, 0, 0, 1, 1), f.clone(), None, 1),
            // Restarting: drained enough → Pending
            (Rule::Restarting, st(P::Restarting, 0, 0, 0, 0, 0, 1), f.clone(), Some(P::Pending), 1),
            // Drain rules
            (Rule::WhenDrained(P::Aborted), st(P::Aborting, 0, 0, 0, 0, 1, 0), f.clone(), None, 0),
            (Rule::WhenDrained(P::Aborted), st(P::Aborting, 0, 0, 2, 0, 0, 0), f.clone(), Some(P::Aborted), 0),
            (Rule::WhenDrained(P::Completed), st(P::Completing, 0, 1, 0, 0, 0, 0), f.clone(), None, 0),
            (Rule::WhenDrained(P::Aborted), st(P::Aborting, 1, 0, 0, 0, 0, 0), f.clone(), None, 0),
            (Rule::WhenDrained(P::Completed), st(P::Completing, 0, 0, 2, 1, 0, 0), f.clone(), Some(P::Completed), 0),
            (Rule::WhenDrained(P::Terminated), st(P::Terminating, 0, 0, 0, 0, 0, 0), f.clone(), Some(P::Terminated), 0),
            (Rule::WhenDrained(P::Terminated), st(P::Terminating, 0, 0, 0, 0, 2, 0), f.clone(), None, 0),
        ];
        for (rule, before, facts, want, retry) in cases {
            let mut s = before.clone();
            let got = rule.apply(&facts, &mut s);
            assert_eq!(got, want, "{rule:?} on {before:?}");
            assert_eq!(s.retry_count, retry, "{rule:?} retry");
            let phase = want.map(|p| p.as_str().to_string()).or(before.state.phase.clone());
            assert_eq!(s.state.phase, phase, "{rule:?} phase written");
        }
    }

    #[test]
    fn running_fails_when_a_task_succeeded_less_than_its_min_available() {
        let f = facts(3, None);
        let mut s = st(Phase::Running, 0, 0, 3, 0, 0, 0);
        // 3 succeeded overall but per task: ps 1, worker 1 (a stale count): the task check wins.
        s.task_status_count = BTreeMap::from([
            ("ps".to_string(), TaskState { phase: BTreeMap::from([("Succeeded".to_string(), 1)]) }),
            ("worker".to_string(), TaskState { phase: BTreeMap::from([("Succeeded".to_string(), 1)]) }),
        ]);
        assert_eq!(Rule::RunningSync.apply(&f, &mut s), Some(Phase::Failed));
    }

    #[test]
    fn empty_phase_is_pending() {
        assert_eq!(phase_of(None), Phase::Pending);
        assert_eq!(phase_of(Some(&JobStatus::default())), Phase::Pending);
    }
}
