//! What one replay under one conf records, raw, for [`super::metrics`] to summarise: per pod
//! and per job times, resource use at every change, and a sample after every cycle. Resource
//! vectors here are `[cpu millicores, memory bytes, GPU]` ([`Dims`]) in core units.

use super::workload::VirtualMs;

/// Number of reported resources: CPU, memory, GPU.
pub const NDIMS: usize = 3;

/// A reported resource vector: `[cpu millicores, memory bytes, GPU in core units]`.
pub type Dims = [i64; NDIMS];

/// Names of the reported resources, in [`Dims`] order.
pub const DIM_NAMES: [&str; NDIMS] = ["cpu", "memory", "gpu"];

/// One pod.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskRecord {
    /// Its job (index in the workload).
    pub job: usize,
    /// Its queue (index into [`RunRecord::queues`]); `None` when the queue does not exist.
    pub queue: Option<usize>,
    /// Requests.
    pub request: Dims,
    /// When it was created (ms); `None` if it never arrived (the input was refused).
    pub arrival_ms: Option<VirtualMs>,
    /// Already bound when it arrived (not scheduled by the replay).
    pub pre_placed: bool,
    /// When it was bound (the cycle's time, ms).
    pub bind_ms: Option<VirtualMs>,
    /// Node it was bound to.
    pub node: Option<String>,
    /// When it finished (ms).
    pub done_ms: Option<VirtualMs>,
    /// When it was evicted (ms); an evicted pod never completes.
    pub evicted_ms: Option<VirtualMs>,
    /// The last reason the scheduler gave for leaving it pending.
    pub last_reason: Option<String>,
}

/// One job (PodGroup).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobRecord {
    /// When its PodGroup was created (ms).
    pub arrival_ms: VirtualMs,
    /// When its last pod finished (ms); `None` while any pod has not.
    pub done_ms: Option<VirtualMs>,
    /// Its pods: a range of [`RunRecord::tasks`].
    pub tasks: std::ops::Range<usize>,
}

/// Resource use from `t_ms` until the next point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsagePoint {
    /// When (ms).
    pub t_ms: VirtualMs,
    /// Requests of bound, unfinished pods.
    pub used: Dims,
    /// The same per queue.
    pub queue_used: Vec<Dims>,
}

/// The state after one cycle.
#[derive(Clone, Debug, PartialEq)]
pub struct CycleSample {
    /// The cycle's time (ms).
    pub t_ms: VirtualMs,
    /// Binds in the cycle.
    pub binds: usize,
    /// Pods created and not bound.
    pub pending: usize,
    /// Pods bound and not finished.
    pub running: usize,
    /// Requests of bound, unfinished pods.
    pub used: Dims,
    /// The same per queue.
    pub queue_used: Vec<Dims>,
    /// Per queue: requests of its bound-unfinished and pending pods (what proportion calls the
    /// queue's request).
    pub queue_demand: Vec<Dims>,
}

/// A queue of the replayed cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueInfo {
    /// Name.
    pub name: String,
    /// `spec.weight`.
    pub weight: i32,
}

/// Everything one replay recorded.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunRecord {
    /// Per pod, in workload order (job by job).
    pub tasks: Vec<TaskRecord>,
    /// Per job, in workload order.
    pub jobs: Vec<JobRecord>,
    /// Queues, by name.
    pub queues: Vec<QueueInfo>,
    /// Allocatable of the Ready nodes, summed.
    pub total: Dims,
    /// Name of the resource counted as GPU (the GPU-share scalar if nodes offer it, else
    /// `nvidia.com/gpu`).
    pub gpu_resource: String,
    /// Use at every change (bind cycles and completions), in time order.
    pub usage: Vec<UsagePoint>,
    /// One per cycle.
    pub samples: Vec<CycleSample>,
    /// Evictions decided (by reason `preempt`, `reclaim`, …), in order.
    pub evictions: Vec<String>,
    /// Decisions or arrivals the cluster refused (`t=… s: message`); none are expected.
    pub apply_issues: Vec<String>,
    /// Wall time of each cycle's `run_cycle`, ns (not deterministic).
    pub cycle_wall_ns: Vec<u64>,
    /// Virtual time of the last event or cycle (ms).
    pub end_ms: VirtualMs,
}
