//! `applyPolicies` (volcano-behaviour.md §5.1): which [`Action`] a [`Request`] leads to, and
//! after how long.
//!
//! Order, as Volcano: an explicit action wins; internal events (`OutOfSync`, `CommandIssued`)
//! sync; a request from a stale job version or another job UID syncs; then the request's task's
//! policies, then the job's, each matched by event (or `*`) or by exit code; none matches ⇒
//! `SyncJob`. A `PodPending` policy only matches when it has a `timeout` (a pod is Pending at
//! creation; acting at once would kill every new job).

use super::request::{Action, Event, Request};
use crate::crd::{Job, LifecyclePolicy};
use std::time::Duration;

/// What to do with a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The action.
    pub action: Action,
    /// Run it after this long (a policy `timeout`); `None` = now.
    pub delay: Option<Duration>,
    /// Whether a task-level policy chose it (delayed actions are cancelled per level).
    pub task_level: bool,
}

impl Decision {
    fn now(action: Action) -> Decision {
        Decision { action, delay: None, task_level: false }
    }
}

/// An invalid policy, naming where it is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// `action` unset or not one of Volcano's.
    #[error("Job {job}: {at}.action {action:?} is not a Volcano action")]
    BadAction {
        /// `namespace/name`.
        job: String,
        /// `spec.policies[i]` or `spec.tasks[t].policies[i]`.
        at: String,
        /// What was given.
        action: String,
    },
    /// `timeout` is not a Go duration.
    #[error("Job {job}: {at}.timeout {timeout:?}: {reason}")]
    BadTimeout {
        /// `namespace/name`.
        job: String,
        /// Where.
        at: String,
        /// What was given.
        timeout: String,
        /// Why it does not parse.
        reason: String,
    },
}

fn events_of(p: &LifecyclePolicy) -> Vec<&str> {
    let mut v: Vec<&str> = p.events.iter().map(String::as_str).collect();
    if let Some(e) = p.event.as_deref() {
        if !e.is_empty() {
            v.push(e);
        }
    }
    v
}

/// Whether policy `p` matches `req`.
fn matches(p: &LifecyclePolicy, req: &Request) -> bool {
    let events = events_of(p);
    if !events.is_empty() {
        let hit = events.iter().any(|e| *e == req.event.as_str() || *e == Event::Any.as_str());
        if hit && (req.event != Event::PodPending || p.timeout.is_some()) {
            return true;
        }
    }
    matches!((p.exit_code, req.exit_code), (Some(want), Some(got)) if want == got && req.event == Event::PodFailed)
}

fn decide(job: &Job, at: String, p: &LifecyclePolicy, task_level: bool) -> Result<Decision, PolicyError> {
    let key = job_key(job);
    let text = p.action.clone().unwrap_or_default();
    let action = Action::parse(&text).ok_or_else(|| PolicyError::BadAction { job: key.clone(), at: at.clone(), action: text })?;
    let delay = match p.timeout.as_deref() {
        None | Some("") => None,
        Some(t) => Some(crate::convert::duration::parse_go_duration(t).map_err(|reason| PolicyError::BadTimeout {
            job: key,
            at,
            timeout: t.to_string(),
            reason,
        })?),
    };
    Ok(Decision { action, delay: delay.filter(|d| !d.is_zero()), task_level })
}

fn job_key(job: &Job) -> String {
    format!("{}/{}", job.metadata.namespace.as_deref().unwrap_or_default(), job.metadata.name.as_deref().unwrap_or_default())
}

/// Volcano's `applyPolicies` for `req` on `job`.
///
/// Errors: the matching policy names no valid action or has an unparsable timeout.
pub fn apply_policies(job: &Job, req: &Request) -> Result<Decision, PolicyError> {
    if let Some(a) = req.action {
        return Ok(Decision::now(a));
    }
    if matches!(req.event, Event::OutOfSync | Event::CommandIssued) {
        return Ok(Decision::now(Action::SyncJob));
    }
    let version = job.status.as_ref().map(|s| s.version).unwrap_or(0);
    if req.job_version < version {
        return Ok(Decision::now(Action::SyncJob));
    }
    if let (Some(want), Some(have)) = (req.job_uid.as_deref(), job.metadata.uid.as_deref()) {
        if want != have {
            return Ok(Decision::now(Action::SyncJob));
        }
    }
    if let Some(task) = req.task_name.as_deref() {
        for (ti, t) in job.spec.tasks.iter().enumerate() {
            if super::defaults::task_name(t, ti) != task {
                continue;
            }
            for (pi, p) in t.policies.iter().enumerate() {
                if matches(p, req) {
                    return decide(job, format!("spec.tasks[{ti}].policies[{pi}]"), p, true);
                }
            }
        }
    }
    for (pi, p) in job.spec.policies.iter().enumerate() {
        if matches(p, req) {
            return decide(job, format!("spec.policies[{pi}]"), p, false);
        }
    }
    Ok(Decision::now(Action::SyncJob))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{JobSpec, JobStatus, TaskSpec};

    fn pol(event: Option<&str>, exit: Option<i32>, action: &str, timeout: Option<&str>) -> LifecyclePolicy {
        LifecyclePolicy {
            action: Some(action.into()),
            event: event.map(str::to_string),
            exit_code: exit,
            timeout: timeout.map(str::to_string),
            ..Default::default()
        }
    }

    fn job() -> Job {
        let mut j = Job::new(
            "j",
            JobSpec {
                policies: vec![
                    pol(Some("PodFailed"), None, "RestartJob", None),
                    pol(Some("PodPending"), None, "AbortJob", None),
                    pol(None, Some(7), "TerminateJob", None),
                    pol(Some("PodEvicted"), None, "RestartJob", Some("1m30s")),
                ],
                tasks: vec![
                    TaskSpec {
                        name: Some("ps".into()),
                        replicas: Some(1),
                        policies: vec![pol(None, Some(3), "RestartTask", None), pol(Some("*"), None, "CompleteJob", None)],
                        ..Default::default()
                    },
                    TaskSpec { name: Some("worker".into()), replicas: Some(2), ..Default::default() },
                ],
                ..Default::default()
            },
        );
        j.metadata.namespace = Some("ns".into());
        j.metadata.uid = Some("u1".into());
        j.status = Some(JobStatus { version: 2, ..Default::default() });
        j
    }

    fn req(task: Option<&str>, event: Event, exit: Option<i32>) -> Request {
        let mut r = Request::job("ns", "j", event);
        r.task_name = task.map(str::to_string);
        r.exit_code = exit;
        r.job_version = 2;
        r.job_uid = Some("u1".into());
        r
    }

    #[test]
    fn policy_table() {
        let j = job();
        let d = |r: Request| apply_policies(&j, &r).unwrap();
        // (request, action, delay, task-level)
        let cases: Vec<(Request, Action, Option<Duration>, bool)> = vec![
            // job-level event match
            (req(Some("worker"), Event::PodFailed, Some(1)), Action::RestartJob, None, false),
            // task-level exit code beats job-level event
            (req(Some("ps"), Event::PodFailed, Some(3)), Action::RestartTask, None, true),
            // task-level `*` matches any event of that task
            (req(Some("ps"), Event::PodRunning, None), Action::CompleteJob, None, true),
            // job-level exit code
            (req(Some("worker"), Event::PodFailed, Some(7)), Action::RestartJob, None, false),
            // PodPending without timeout never matches
            (req(Some("worker"), Event::PodPending, None), Action::SyncJob, None, false),
            // timeout gives a delay
            (req(Some("worker"), Event::PodEvicted, None), Action::RestartJob, Some(Duration::from_secs(90)), false),
            // internal events sync
            (req(Some("ps"), Event::OutOfSync, None), Action::SyncJob, None, false),
            // no policy ⇒ SyncJob
            (req(Some("worker"), Event::TaskCompleted, None), Action::SyncJob, None, false),
        ];
        for (r, action, delay, task_level) in cases {
            let got = d(r.clone());
            assert_eq!((got.action, got.delay, got.task_level), (action, delay, task_level), "{r:?}");
        }
        // stale version and other UID sync
        let mut stale = req(Some("worker"), Event::PodFailed, Some(1));
        stale.job_version = 1;
        assert_eq!(d(stale).action, Action::SyncJob);
        let mut other = req(Some("worker"), Event::PodFailed, Some(1));
        other.job_uid = Some("u0".into());
        assert_eq!(d(other).action, Action::SyncJob);
        // explicit action wins
        let mut cmd = req(None, Event::CommandIssued, None);
        cmd.action = Some(Action::AbortJob);
        assert_eq!(d(cmd).action, Action::AbortJob);
        // exit code without the PodFailed event does not match
        assert_eq!(d(req(Some("worker"), Event::PodEvicted, Some(7))).action, Action::RestartJob);
    }

    #[test]
    fn bad_action_and_timeout_are_named() {
        let mut j = job();
        j.spec.policies = vec![pol(Some("PodFailed"), None, "Explode", None)];
        let e = apply_policies(&j, &req(Some("worker"), Event::PodFailed, Some(1))).unwrap_err();
        assert_eq!(e.to_string(), "Job ns/j: spec.policies[0].action \"Explode\" is not a Volcano action");
        j.spec.policies = vec![pol(Some("PodFailed"), None, "RestartJob", Some("soon"))];
        let e = apply_policies(&j, &req(Some("worker"), Event::PodFailed, Some(1))).unwrap_err();
        assert!(e.to_string().starts_with("Job ns/j: spec.policies[0].timeout \"soon\""), "{e}");
    }
}
