//! What the plugins' `OnSessionClose` hand to the cycle's decisions ([`CloseNotes`]): the one
//! part of a session a plugin writes. A plugin's close gets the session read-only and these
//! notes to write (`crate::framework::Plugin::on_close`); the session's close turns them into
//! [`crate::decision::Decisions`] with everything else.

use crate::cluster::PodGroupId;
use crate::decision::{Event, NumaAssignment, QueueShare};
use crate::model::{PodGroupCondition, VolumeBinding};

/// The notes the plugins write at session close, kept in [`super::State::notes`].
#[derive(Debug, Default)]
pub struct CloseNotes {
    /// Per job: the condition written this session (the gang plugin: `Unschedulable` or
    /// `Scheduled`), `None` for none.
    pub job_condition: Vec<Option<PodGroupCondition>>,
    /// Per job: the gang's not-ready message (Volcano `JobFitErrors`), empty for none.
    pub job_fit_error: Vec<String>,
    /// Jobs the `gang` plugin found not ready, with minAvailable − schedulable tasks.
    pub unready_jobs: Vec<(PodGroupId, u32)>,
    /// Queue fair-share accounting (the `proportion` or `capacity` plugin).
    pub queue_shares: Vec<QueueShare>,
    /// When the `rescheduling` plugin's strategies ran this session, ms since the Unix epoch
    /// ([`crate::decision::Decisions::rescheduled_ms`]).
    pub rescheduled_ms: Option<i64>,
    /// What must happen before the committed binds' Bindings (claims the predicates plugin's
    /// volume binder assumed, [`crate::decision::Decisions::volume_bindings`]).
    pub volume_bindings: Vec<VolumeBinding>,
    /// Events the plugins record at close (after the session's own, e.g. task-topology's
    /// invalid-affinity warnings).
    pub events: Vec<Event>,
    /// The CPUs the `numa-aware` plugin assigned the session's binds
    /// ([`crate::decision::Decisions::numa_assignments`]).
    pub numa_assignments: Vec<NumaAssignment>,
}

impl CloseNotes {
    /// Empty notes for a session of `jobs` jobs.
    pub fn new(jobs: usize) -> Self {
        CloseNotes { job_condition: vec![None; jobs], job_fit_error: vec![String::new(); jobs], ..Default::default() }
    }
}
