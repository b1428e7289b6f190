//! The input of a replay, whatever it was read from: the objects that exist from the start
//! (nodes, queues, priority classes, pods already placed) and the jobs that arrive later, each
//! pod with its arrival and run time on the virtual clock. Importers ([`super::alibaba`],
//! [`super::kube_yaml`], [`super::generate`]) build it; [`super::engine`] consumes it.

use basalt_core::cluster::Delta;
use basalt_core::model::{PodGroupSpec, PodSpec};
use serde::Serialize;
use std::fmt;

/// Milliseconds of virtual time, counted from the start of the replay (0).
pub type VirtualMs = i64;

/// Milliseconds per second.
pub const MS_PER_S: i64 = 1000;

/// The scalar resource a GPU share is requested in: thousandths of one GPU, written in
/// Kubernetes quantities (`alibabacloud.com/gpu-milli: "460"` = 0.46 GPU). A node with `g` GPUs
/// offers `g × 1000`. The core keeps scalars in milli-units, so 1 thousandth = 1000 core units.
/// Pods asking for whole GPUs request both this and `nvidia.com/gpu`; shared-GPU pods only this.
/// Packing shares onto individual devices is not modelled (the node total is what counts).
pub const GPU_MILLI: &str = "alibabacloud.com/gpu-milli";

/// Whole GPUs (`nvidia.com/gpu`), in core units (1 GPU = 1000).
pub const NVIDIA_GPU: &str = "nvidia.com/gpu";

/// Core units of [`GPU_MILLI`] per whole GPU (1000 thousandths × 1000 milli-units).
pub const GPU_MILLI_PER_GPU: i64 = 1_000_000;

/// One pod of a job, with its timing on the virtual clock.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskArrival {
    /// The pod as it is created (Pending, no node; or bound and Running when pre-placed).
    pub pod: PodSpec,
    /// When the pod is created (ms of virtual time). Never before its job's arrival.
    pub arrival_ms: VirtualMs,
    /// How long the pod runs once bound (ms); `None` runs until the replay ends.
    pub duration_ms: Option<VirtualMs>,
}

impl TaskArrival {
    /// True when the pod is already bound to a node when it arrives (`spec.nodeName` set):
    /// it occupies resources without being scheduled and is left out of wait statistics.
    pub fn pre_placed(&self) -> bool {
        !self.pod.node_name.is_empty()
    }
}

/// A PodGroup and its pods.
#[derive(Clone, Debug, PartialEq)]
pub struct JobArrival {
    /// The PodGroup (its `queue` must name a queue of the workload, else the core skips it).
    pub group: PodGroupSpec,
    /// When the PodGroup is created (ms of virtual time): the earliest arrival of its pods.
    pub arrival_ms: VirtualMs,
    /// Its pods.
    pub tasks: Vec<TaskArrival>,
}

/// A problem found in the input: the row, document or object was skipped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InputIssue {
    /// The file.
    pub file: String,
    /// 1-based line in the file (0 when unknown or about the whole file).
    pub line: usize,
    /// What is wrong, naming the field.
    pub message: String,
}

impl fmt::Display for InputIssue {
    /// `FILE:LINE: message`, or `FILE: message` when the line is unknown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file, self.message)
        }
    }
}

/// Everything a replay needs to know about its input.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    /// What it is, for the report (e.g. `embedded default (seed 1)`).
    pub name: String,
    /// Objects that exist at time 0, applied in order before anything arrives: nodes, queues,
    /// priority classes.
    pub setup: Vec<Delta>,
    /// Jobs, sorted by arrival (ties keep input order).
    pub jobs: Vec<JobArrival>,
    /// Problems with the input; each names what was skipped.
    pub issues: Vec<InputIssue>,
    /// Rows, documents or objects skipped because of an issue (some issues skip nothing, e.g.
    /// a duplicate that replaces an earlier definition).
    pub skipped: usize,
    /// Notes on how the input was mapped (e.g. `window start 10014946 s; 81 pods created
    /// earlier arrive at 0`), printed with the report.
    pub notes: Vec<String>,
}

impl Workload {
    /// Number of pods over all jobs.
    pub fn pod_count(&self) -> usize {
        self.jobs.iter().map(|j| j.tasks.len()).sum()
    }

    /// Sorts jobs by arrival, stably, and makes each job's arrival the earliest of its pods'.
    pub fn normalize(&mut self) {
        for j in &mut self.jobs {
            if let Some(first) = j.tasks.iter().map(|t| t.arrival_ms).min() {
                j.arrival_ms = first;
            }
        }
        self.jobs.sort_by_key(|j| j.arrival_ms);
    }

    /// Counts of setup objects: (nodes, queues).
    pub fn setup_counts(&self) -> (usize, usize) {
        let nodes = self.setup.iter().filter(|d| matches!(d, Delta::Node(_))).count();
        let queues = self.setup.iter().filter(|d| matches!(d, Delta::Queue(_))).count();
        (nodes, queues)
    }
}
