//! The pure part of one job request (Volcano's `processNextReq`, volcano-behaviour.md §5.1),
//! shared by the live executor ([`super::execute`]) and the simulator (`crate::sim::jobs`):
//! [`begin`] turns a request into either a delayed action or the [`Work`] to carry out (the
//! state machine's step, the pods a kill deletes, whether the PodGroup goes, the status with its
//! version bumped), and [`Work::finish`] recounts the pods once the work is done, applies the
//! phase rule and stamps the transition. No I/O: the caller creates and deletes the objects.

use super::defaults::JobFacts;
use super::plan::{self, PodView};
use super::policy::{apply_policies, PolicyError};
use super::request::{Action, Event, Phase, Request};
use super::state::{self, Op, Retain, Step, Target};
use crate::crd::{Job, JobCondition, JobStatus};
use k8s_openapi::jiff::Timestamp;
use std::collections::BTreeMap;
use std::time::Duration;

/// What a request leads to.
#[derive(Clone, Debug, PartialEq)]
pub enum Begin {
    /// A policy with a `timeout` matched: queue the request again with `action` after `delay`.
    Delay {
        /// The action to run later.
        action: Action,
        /// After how long.
        delay: Duration,
    },
    /// Carry the work out now.
    Run(Box<Work>),
}

/// One request's work, decided before any object changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    /// The action (policy, Command or `SyncJob`).
    pub action: Action,
    /// The job's phase when the request was taken.
    pub phase: Phase,
    /// The state machine's step for (phase, action).
    pub step: Step,
    /// The job's numbers, defaults resolved.
    pub facts: JobFacts,
    /// The status as read.
    pub old_status: JobStatus,
    /// The status being built: `version` bumped for a whole-job kill, phase `Pending` for an
    /// uninitiated job's sync; counters are set by [`Work::finish`].
    pub status: JobStatus,
    /// For a kill: the pods to delete, by name (a whole-job kill on the last retry keeps
    /// Succeeded and Failed pods, as Volcano does).
    pub kill: Vec<String>,
    /// A whole-job kill: the PodGroup is deleted too.
    pub delete_pod_group: bool,
}

/// Whether a new `event` of a pod cancels that pod's action delayed by a `timeout` policy
/// that `scheduled` chose (Volcano): a later non-pending event cancels a `PodPending` delay;
/// `PodRunning` cancels `PodFailed` and `PodEvicted` delays.
pub fn cancels(scheduled: Event, event: Event) -> bool {
    (scheduled == Event::PodPending && event != Event::PodPending)
        || (matches!(scheduled, Event::PodFailed | Event::PodEvicted) && event == Event::PodRunning)
}

/// The restart target of `action` for `req`: its task (RestartTask), its pod's partition
/// (RestartPartition; the task when the pod has no `volcano.sh/partition-id`) or its pod
/// (RestartPod); `None` otherwise.
fn target_of(action: Action, req: &Request) -> Option<Target> {
    match action {
        Action::RestartPartition => {
            let task = req.task_name.clone()?;
            Some(match req.partition.clone() {
                Some(id) => Target::Partition(task, id),
                None => Target::Task(task),
            })
        }
        Action::RestartTask => req.task_name.clone().map(Target::Task),
        Action::RestartPod => req.pod_name.clone().map(Target::Pod),
        _ => None,
    }
}

/// Volcano's `processNextReq` up to the first API call: policies give the action (or a delay),
/// the state machine the step; for a kill, the pods to delete among `pods` (the job's pods as
/// the controller sees them).
///
/// Errors: the matching policy names no valid action or has an unparsable `timeout`.
pub fn begin(job: &Job, req: &Request, pods: &BTreeMap<String, PodView>) -> Result<Begin, PolicyError> {
    let decision = apply_policies(job, req)?;
    if let Some(delay) = decision.delay {
        return Ok(Begin::Delay { action: decision.action, delay });
    }
    let action = decision.action;
    let phase = state::phase_of(job.status.as_ref());
    let has_live = pods.values().any(|v| !v.deleting);
    let step = state::step(phase, action, target_of(action, req), has_live);
    let facts = JobFacts::of(job);
    let old_status = job.status.clone().unwrap_or_default();
    let mut status = old_status.clone();
    let mut kill = Vec::new();
    let mut delete_pod_group = false;
    match &step.op {
        Op::Kill { target, retain } => {
            let mut retain = *retain;
            if *target == Target::Job {
                status.version += 1;
                delete_pod_group = true;
                // On the last retry a whole-job kill keeps finished pods (their logs).
                if retain == Retain::None && status.retry_count >= facts.max_retry - 1 {
                    retain = Retain::Soft;
                }
            }
            kill = plan::plan_kill(pods, target, retain);
        }
        Op::Sync => {
            if old_status.state.phase.as_deref().unwrap_or("").is_empty() {
                status.state.phase = Some(Phase::Pending.as_str().into());
            }
        }
    }
    Ok(Begin::Run(Box::new(Work { action, phase, step, facts, old_status, status, kill, delete_pod_group })))
}

impl Work {
    /// A sync of a job without a PodGroup creates one while the job is Pending or Running.
    pub fn creates_pod_group(&self, has_pod_group: bool) -> bool {
        self.step.op == Op::Sync && !has_pod_group && matches!(self.phase, Phase::Pending | Phase::Running)
    }

    /// After the work: recounts `pods` (as they stand now: deleted ones marked `deleting`,
    /// created ones added), applies the step's phase rule, and on a phase change stamps
    /// `lastTransitionTime` and a condition at `now`; `runningDuration` is refreshed when the
    /// status changed. Returns the phase entered (if any) and whether the status changed (the
    /// caller then writes it).
    pub fn finish<'a>(
        &mut self,
        job: &Job,
        pods: impl IntoIterator<Item = &'a PodView>,
        now: Timestamp,
    ) -> (Option<Phase>, bool) {
        plan::recount(&self.facts, pods, &mut self.status);
        let entered = self.step.rule.apply(&self.facts, &mut self.status);
        if entered.is_some() || self.old_status.state.phase != self.status.state.phase {
            let at = now.to_string();
            self.status.state.last_transition_time = Some(at.clone());
            self.status.conditions.push(JobCondition { status: self.status.state.phase.clone(), last_transition_time: Some(at) });
        }
        let changed = self.status != self.old_status;
        if changed {
            self.status.running_duration = running_duration(job, &self.status, now);
        }
        (entered, changed)
    }
}

/// `status.runningDuration`: creation to the last transition of a finished job, else to `now`,
/// as a Go duration; `None` without a creation timestamp.
pub fn running_duration(job: &Job, status: &JobStatus, now: Timestamp) -> Option<String> {
    let created = job.metadata.creation_timestamp.as_ref()?.0;
    let end = if state::phase_of(Some(status)).is_finished() {
        status.state.last_transition_time.as_deref().and_then(|t| t.parse::<Timestamp>().ok()).unwrap_or(now)
    } else {
        now
    };
    let ms = end.as_millisecond().saturating_sub(created.as_millisecond()).max(0);
    Some(super::execute::go_duration(Duration::from_millis(ms as u64)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{JobSpec, JobState, LifecyclePolicy, TaskSpec};

    fn job(phase: &str, retry: i32) -> Job {
        let mut j = Job::new(
            "j",
            JobSpec {
                max_retry: Some(2),
                policies: vec![
                    LifecyclePolicy { event: Some("PodFailed".into()), action: Some("RestartJob".into()), ..Default::default() },
                    LifecyclePolicy {
                        event: Some("PodEvicted".into()),
                        action: Some("RestartJob".into()),
                        timeout: Some("30s".into()),
                        ..Default::default()
                    },
                ],
                tasks: vec![TaskSpec { name: Some("w".into()), replicas: Some(2), ..Default::default() }],
                ..Default::default()
            },
        );
        j.metadata.namespace = Some("ns".into());
        j.metadata.uid = Some("u".into());
        j.status = Some(JobStatus {
            state: JobState { phase: Some(phase.into()), ..Default::default() },
            retry_count: retry,
            version: 1,
            ..Default::default()
        });
        j
    }

    fn view(name: &str, phase: &str) -> (String, PodView) {
        let v = PodView {
            name: name.into(),
            uid: format!("uid-{name}"),
            task: "w".into(),
            phase: phase.into(),
            deleting: false,
            version: 1,
            restarts: 0,
            exit_code: None,
            partition: None,
        };
        (name.to_string(), v)
    }

    fn failed(job_version: i32) -> Request {
        let mut r = Request::job("ns", "j", Event::PodFailed);
        r.task_name = Some("w".into());
        r.pod_name = Some("j-w-0".into());
        r.job_version = job_version;
        r.exit_code = Some(1);
        r
    }

    fn run(b: Begin) -> Work {
        match b {
            Begin::Run(w) => *w,
            other => panic!("expected work, got {other:?}"),
        }
    }

    #[test]
    fn restart_job_kills_every_pod_bumps_the_version_and_enters_restarting() {
        let pods: BTreeMap<_, _> = [view("j-w-0", "Failed"), view("j-w-1", "Running")].into();
        let j = job("Running", 0);
        let mut w = run(begin(&j, &failed(1), &pods).unwrap());
        assert_eq!(
            (w.action, w.kill.clone(), w.delete_pod_group, w.status.version),
            (Action::RestartJob, vec!["j-w-0".to_string(), "j-w-1".to_string()], true, 2)
        );
        let after: Vec<PodView> = pods
            .values()
            .cloned()
            .map(|mut v| {
                v.deleting = true;
                v
            })
            .collect();
        let (entered, changed) = w.finish(&j, after.iter(), Timestamp::from_second(100).unwrap());
        assert_eq!((entered, changed, w.status.retry_count, w.status.terminating), (Some(Phase::Restarting), true, 1, 2));
        assert_eq!(w.status.state.last_transition_time.as_deref(), Some("1970-01-01T00:01:40Z"));
        assert_eq!(w.status.conditions.last().and_then(|c| c.status.as_deref()), Some("Restarting"));
    }

    #[test]
    fn restart_partition_kills_the_event_pods_partition_only() {
        let mut j = job("Running", 0);
        j.spec.policies.clear();
        j.spec.tasks[0].replicas = Some(4);
        j.spec.tasks[0].policies = vec![LifecyclePolicy {
            event: Some("PodEvicted".into()),
            action: Some("RestartPartition".into()),
            ..Default::default()
        }];
        let mut pods = BTreeMap::new();
        for (i, part) in ["0", "0", "1", "1"].iter().enumerate() {
            let (n, mut v) = view(&format!("j-w-{i}"), "Running");
            v.partition = Some(part.to_string());
            pods.insert(n, v);
        }
        // j-w-2 was deleted: gone from the pods, its partition travels in the request
        pods.remove("j-w-2");
        let mut r = Request::job("ns", "j", Event::PodEvicted);
        r.task_name = Some("w".into());
        r.pod_name = Some("j-w-2".into());
        r.partition = Some("1".into());
        r.job_version = 1;
        let w = run(begin(&j, &r, &pods).unwrap());
        assert_eq!((w.action, w.kill.clone()), (Action::RestartPartition, vec!["j-w-3".to_string()]));
        // without a partition the task is the target
        r.partition = None;
        let w = run(begin(&j, &r, &pods).unwrap());
        assert_eq!(w.kill, ["j-w-0", "j-w-1", "j-w-3"]);
    }

    #[test]
    fn delays_cancelled_by_later_events() {
        use Event as E;
        let cases = [
            (E::PodPending, E::PodRunning, true),
            (E::PodPending, E::PodFailed, true),
            (E::PodPending, E::PodPending, false),
            (E::PodFailed, E::PodRunning, true),
            (E::PodEvicted, E::PodRunning, true),
            (E::PodFailed, E::PodPending, false),
            (E::PodEvicted, E::PodFailed, false),
        ];
        for (scheduled, event, want) in cases {
            assert_eq!(cancels(scheduled, event), want, "{scheduled:?} then {event:?}");
        }
    }

    #[test]
    fn the_last_retry_keeps_finished_pods() {
        let pods: BTreeMap<_, _> = [view("j-w-0", "Failed"), view("j-w-1", "Running")].into();
        let w = run(begin(&job("Running", 1), &failed(1), &pods).unwrap());
        assert_eq!(w.kill, vec!["j-w-1".to_string()]);
    }

    #[test]
    fn a_timeout_policy_delays_and_a_stale_request_syncs() {
        let pods = BTreeMap::new();
        let mut evicted = failed(1);
        evicted.event = Event::PodEvicted;
        assert_eq!(
            begin(&job("Running", 0), &evicted, &pods).unwrap(),
            Begin::Delay { action: Action::RestartJob, delay: Duration::from_secs(30) }
        );
        let w = run(begin(&job("Running", 0), &failed(0), &pods).unwrap());
        assert_eq!((w.action, w.step.op.clone(), w.kill.len()), (Action::SyncJob, Op::Sync, 0));
    }

    #[test]
    fn an_uninitiated_job_syncs_as_pending_and_creates_its_pod_group() {
        let mut j = job("", 0);
        j.status = None;
        let mut w = run(begin(&j, &Request::job("ns", "j", Event::OutOfSync), &BTreeMap::new()).unwrap());
        assert!(w.creates_pod_group(false) && !w.creates_pod_group(true));
        let (entered, changed) = w.finish(&j, std::iter::empty(), Timestamp::from_second(0).unwrap());
        assert_eq!((entered, changed), (None, true));
        assert_eq!(w.status.state.phase.as_deref(), Some("Pending"));
        assert_eq!(w.status.min_available, 2);
    }
}
