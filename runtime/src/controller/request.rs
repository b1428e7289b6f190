//! The job controller's vocabulary (volcano-behaviour.md §4, §5.1): job [`Phase`]s, policy
//! [`Event`]s and [`Action`]s with Volcano's exact spellings, and the [`Request`] a watch event
//! becomes.

use std::fmt;

/// `Job.status.state.phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Waiting for its PodGroup to be admitted or for `minAvailable` pods to run.
    Pending,
    /// Killing its pods after `AbortJob`.
    Aborting,
    /// Pods gone after `AbortJob`; `ResumeJob` restarts it.
    Aborted,
    /// At least `minAvailable` pods ran.
    Running,
    /// Killing pods for a restart.
    Restarting,
    /// Killing the remaining pods after `CompleteJob`.
    Completing,
    /// Finished successfully.
    Completed,
    /// Killing pods after `TerminateJob`.
    Terminating,
    /// Finished by `TerminateJob`.
    Terminated,
    /// Finished unsuccessfully (retries exhausted, too few successes).
    Failed,
}

impl Phase {
    /// Every phase, in declaration order.
    pub const ALL: [Phase; 10] = [
        Phase::Pending,
        Phase::Aborting,
        Phase::Aborted,
        Phase::Running,
        Phase::Restarting,
        Phase::Completing,
        Phase::Completed,
        Phase::Terminating,
        Phase::Terminated,
        Phase::Failed,
    ];

    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Pending => "Pending",
            Phase::Aborting => "Aborting",
            Phase::Aborted => "Aborted",
            Phase::Running => "Running",
            Phase::Restarting => "Restarting",
            Phase::Completing => "Completing",
            Phase::Completed => "Completed",
            Phase::Terminating => "Terminating",
            Phase::Terminated => "Terminated",
            Phase::Failed => "Failed",
        }
    }

    /// Parses Volcano's spelling; `None` for anything else (an empty phase is an uninitiated
    /// job, which the controller treats as Pending).
    pub fn parse(s: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// Completed, Terminated or Failed: nothing runs any more and the TTL clock starts.
    pub fn is_finished(self) -> bool {
        matches!(self, Phase::Completed | Phase::Terminated | Phase::Failed)
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A policy event (`policies[].event`), user-visible or internal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// `*`: any event.
    Any,
    /// `PodFailed`: a pod entered phase Failed.
    PodFailed,
    /// `PodEvicted`: a pod was deleted.
    PodEvicted,
    /// `PodPending`: a pod was created or went back to Pending.
    PodPending,
    /// `PodRunning`: a pod started running.
    PodRunning,
    /// `Unknown`: the PodGroup went Unknown.
    Unknown,
    /// `TaskCompleted`: every replica of a task Succeeded.
    TaskCompleted,
    /// `TaskFailed`: a task's pods restarted `maxRetry` times.
    TaskFailed,
    /// `JobUpdated`: the job's spec changed.
    JobUpdated,
    /// Internal: the job or its pods changed; reconcile.
    OutOfSync,
    /// Internal: a Command named the job.
    CommandIssued,
}

impl Event {
    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Any => "*",
            Event::PodFailed => "PodFailed",
            Event::PodEvicted => "PodEvicted",
            Event::PodPending => "PodPending",
            Event::PodRunning => "PodRunning",
            Event::Unknown => "Unknown",
            Event::TaskCompleted => "TaskCompleted",
            Event::TaskFailed => "TaskFailed",
            Event::JobUpdated => "JobUpdated",
            Event::OutOfSync => "OutOfSync",
            Event::CommandIssued => "CommandIssued",
        }
    }

    /// Parses Volcano's spelling.
    pub fn parse(s: &str) -> Option<Event> {
        [
            Event::Any,
            Event::PodFailed,
            Event::PodEvicted,
            Event::PodPending,
            Event::PodRunning,
            Event::Unknown,
            Event::TaskCompleted,
            Event::TaskFailed,
            Event::JobUpdated,
            Event::OutOfSync,
            Event::CommandIssued,
        ]
        .into_iter()
        .find(|e| e.as_str() == s)
    }
}

/// A policy or Command action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// `AbortJob`: kill the pods (keeping finished ones), phase Aborting then Aborted.
    AbortJob,
    /// `RestartJob`: kill every pod, retry.
    RestartJob,
    /// `RestartTask`: kill the request's task's pods, retry.
    RestartTask,
    /// `RestartPod`: kill the request's pod, retry.
    RestartPod,
    /// `RestartPartition`: kill the request's partition's pods (treated as its task here).
    RestartPartition,
    /// `TerminateJob`: kill the pods, phase Terminating then Terminated.
    TerminateJob,
    /// `CompleteJob`: kill the remaining pods, phase Completing then Completed.
    CompleteJob,
    /// `ResumeJob`: restart an aborted job.
    ResumeJob,
    /// Internal: reconcile pods and status with the spec.
    SyncJob,
    /// Internal (queue controller): not used by the job controller.
    EnqueueJob,
    /// Internal (queue controller).
    SyncQueue,
    /// Queue Command: open a queue.
    OpenQueue,
    /// Queue Command: close a queue.
    CloseQueue,
}

impl Action {
    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::AbortJob => "AbortJob",
            Action::RestartJob => "RestartJob",
            Action::RestartTask => "RestartTask",
            Action::RestartPod => "RestartPod",
            Action::RestartPartition => "RestartPartition",
            Action::TerminateJob => "TerminateJob",
            Action::CompleteJob => "CompleteJob",
            Action::ResumeJob => "ResumeJob",
            Action::SyncJob => "SyncJob",
            Action::EnqueueJob => "EnqueueJob",
            Action::SyncQueue => "SyncQueue",
            Action::OpenQueue => "OpenQueue",
            Action::CloseQueue => "CloseQueue",
        }
    }

    /// Parses Volcano's spelling.
    pub fn parse(s: &str) -> Option<Action> {
        [
            Action::AbortJob,
            Action::RestartJob,
            Action::RestartTask,
            Action::RestartPod,
            Action::RestartPartition,
            Action::TerminateJob,
            Action::CompleteJob,
            Action::ResumeJob,
            Action::SyncJob,
            Action::EnqueueJob,
            Action::SyncQueue,
            Action::OpenQueue,
            Action::CloseQueue,
        ]
        .into_iter()
        .find(|a| a.as_str() == s)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One unit of work for a job (Volcano's `apis.Request`): which job, what happened, to which
/// task/pod, and the job version the pod belonged to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// The job's namespace.
    pub namespace: String,
    /// The job's name.
    pub job_name: String,
    /// The job UID the event's object belonged to (`None`: not known, not checked).
    pub job_uid: Option<String>,
    /// The task of the pod the event is about.
    pub task_name: Option<String>,
    /// The pod the event is about.
    pub pod_name: Option<String>,
    /// Its `volcano.sh/partition-id` (the partition `RestartPartition` restarts; read from
    /// the pod when the event is made, since a deleted pod is gone by the time it is handled).
    pub partition: Option<String>,
    /// Its UID (delayed actions are cancelled per pod UID).
    pub pod_uid: Option<String>,
    /// What happened.
    pub event: Event,
    /// The first container's exit code of a failed pod.
    pub exit_code: Option<i32>,
    /// An explicit action (Commands, delayed policies, requeue exhaustion); wins over policies.
    pub action: Option<Action>,
    /// `volcano.sh/job-version` of the pod (0 for job-level events).
    pub job_version: i32,
}

impl Request {
    /// A job-level request: no task, no pod.
    pub fn job(namespace: &str, name: &str, event: Event) -> Request {
        Request {
            namespace: namespace.to_string(),
            job_name: name.to_string(),
            job_uid: None,
            task_name: None,
            pod_name: None,
            partition: None,
            pod_uid: None,
            event,
            exit_code: None,
            action: None,
            job_version: 0,
        }
    }

    /// `namespace/name`, the job cache key.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.job_name)
    }
}

/// A request shows as its job's key, `namespace/name` (as the worker logs it).
impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.job_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for p in Phase::ALL {
            assert_eq!(Phase::parse(p.as_str()), Some(p));
        }
        for s in ["*", "PodFailed", "TaskCompleted", "CommandIssued"] {
            assert_eq!(Event::parse(s).map(Event::as_str), Some(s));
        }
        for s in ["AbortJob", "ResumeJob", "RestartPartition", "CloseQueue"] {
            assert_eq!(Action::parse(s).map(Action::as_str), Some(s));
        }
        assert_eq!(Phase::parse("Running "), None);
        assert_eq!(Action::parse("restartjob"), None);
    }
}
