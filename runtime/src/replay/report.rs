//! The replay report as plain serde data: what was replayed ([`InputReport`]) and, per conf,
//! the deterministic results ([`RunResults`]) and the wall-clock timings ([`Timings`]) kept
//! apart so that the same seed gives an identical `results`. [`super::text`] renders it as a
//! table; `--output json` prints it with serde.

use serde::Serialize;

/// Summary statistics of a sample, in seconds. Percentiles are nearest-rank (the smallest
/// value with at least p % of the sample at or below it). Of an empty sample only the count is
/// known: every other field is `None` (JSON `null`, text `–`), never a made-up 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Sample size.
    pub count: usize,
    /// Mean.
    pub mean: Option<f64>,
    /// 50th percentile.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
}

/// Pod counts at the end of the replay.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PodCounts {
    /// Pods created (pre-placed ones included).
    pub submitted: usize,
    /// Pods that were already bound when they arrived.
    pub pre_placed: usize,
    /// Pods the scheduler bound.
    pub scheduled: usize,
    /// Pods created and never bound.
    pub never_scheduled: usize,
    /// Pods that ran to completion.
    pub completed: usize,
    /// Pods still running when the replay ended (no duration, or the replay stopped).
    pub running_at_end: usize,
    /// Pods evicted.
    pub evicted: usize,
}

/// How many never-scheduled pods were last left pending with one message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReasonCount {
    /// Pods.
    pub pods: usize,
    /// The scheduler's message (pod condition, else the reason the job was skipped).
    pub message: String,
}

/// Time-weighted mean and peak of one resource's utilization (fraction 0–1 of the Ready
/// nodes' allocatable, by requests of running pods); `None` when there is nothing to measure
/// (no node offers the resource, or the makespan window is empty).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Utilization {
    /// `cpu`, `memory` or `gpu`.
    pub resource: String,
    /// Time-weighted mean over the makespan.
    pub mean: Option<f64>,
    /// Largest value.
    pub peak: Option<f64>,
}

/// One queue's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueResult {
    /// Name.
    pub name: String,
    /// `spec.weight`.
    pub weight: i32,
    /// Pods submitted to it.
    pub pods: usize,
    /// Of which bound.
    pub scheduled: usize,
    /// Mean wait of its bound pods, s (`None` when none was bound).
    pub wait_mean_s: Option<f64>,
    /// Time-weighted mean dominant share (0–1) of the cluster it held (`None` for an empty
    /// makespan window).
    pub share_mean: Option<f64>,
    /// Time-weighted mean dominant share it deserved (see `replay::fairness`; `None` as
    /// `share_mean`).
    pub deserved_mean: Option<f64>,
}

/// The deterministic results of one replay under one conf.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunResults {
    /// Pod counts.
    pub pods: PodCounts,
    /// Jobs (PodGroups) submitted.
    pub jobs_submitted: usize,
    /// Jobs whose every pod completed.
    pub jobs_completed: usize,
    /// The most common last messages of never-scheduled pods (at most 5).
    pub never_scheduled_reasons: Vec<ReasonCount>,
    /// Wait from creation to bind of scheduled pods, s.
    pub wait_s: Stats,
    /// Job completion time (PodGroup creation → last pod done) of completed jobs, s.
    pub job_completion_s: Stats,
    /// First arrival → last completion, s (`None` when nothing completed).
    pub makespan_s: Option<f64>,
    /// Utilization of cpu, memory and gpu.
    pub utilization: Vec<Utilization>,
    /// The resource counted as `gpu`.
    pub gpu_resource: String,
    /// Per queue, by name.
    pub queues: Vec<QueueResult>,
    /// Time-weighted mean of Jain's index over queues with demand (`None` if never defined).
    pub jain_index: Option<f64>,
    /// Evictions with reason `preempt` (`preempt by <pod>` in topology-aware mode) or
    /// `gangpreempt`.
    pub preemptions: usize,
    /// All evictions.
    pub evictions: usize,
    /// Scheduling cycles run.
    pub cycles: usize,
    /// Of which cycles that bound something.
    pub cycles_with_binds: usize,
    /// Virtual time of the last event or cycle, s.
    pub end_s: f64,
    /// Decisions or arrivals the cluster refused (none expected).
    pub apply_issues: Vec<String>,
    /// With HyperNodes in the workload: the share of placed gangs inside one HyperNode of
    /// each tier ([`super::topology`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology: Option<super::topology::TopologyShares>,
}

/// Wall-clock measurements (vary run to run); the per-cycle ones are `None` when no cycle ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timings {
    /// Mean `run_cycle` wall time, ms.
    pub cycle_mean_ms: Option<f64>,
    /// Median, ms.
    pub cycle_p50_ms: Option<f64>,
    /// 99th percentile, ms.
    pub cycle_p99_ms: Option<f64>,
    /// Largest, ms.
    pub cycle_max_ms: Option<f64>,
    /// Sum over cycles, s.
    pub scheduler_total_s: f64,
    /// The whole replay under this conf (clock, bookkeeping and cycles), s.
    pub replay_total_s: f64,
}

/// One conf's replay.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// Conf label (`default` for Volcano's built-in conf, else the file's stem).
    pub conf: String,
    /// Deterministic results.
    pub results: RunResults,
    /// Wall-clock timings.
    pub timings: Timings,
}

/// What was replayed.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct InputReport {
    /// Input description.
    pub name: String,
    /// Nodes.
    pub nodes: usize,
    /// Queues.
    pub queues: usize,
    /// Pods.
    pub pods: usize,
    /// Jobs.
    pub jobs: usize,
    /// Jobs of more than one pod.
    pub gangs: usize,
    /// How the input was mapped.
    pub notes: Vec<String>,
    /// Input problems, each `FILE:LINE: message`.
    pub issues: Vec<String>,
    /// Rows, documents or objects skipped because of an issue.
    pub skipped: usize,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// What of each conf Basalt does not honour (skipped actions, plugins, arguments, flags).
    #[serde(rename = "notHonoured")]
    pub not_honoured: Vec<crate::sim::NotHonouredReport>,
    /// What was replayed.
    pub input: InputReport,
    /// The cycle policy, in words.
    pub cycle_policy: String,
    /// Base seed.
    pub seed: u64,
    /// One per conf, in command-line order.
    pub runs: Vec<RunReport>,
    /// Caveats that apply to every run.
    pub notes: Vec<String>,
}

impl Report {
    /// The report as pretty JSON (no trailing newline).
    pub fn to_json(&self) -> String {
        // Plain structs of strings, numbers and lists; non-finite floats become null.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
    }
}
