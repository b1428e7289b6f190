//! Node and pod shapes in the Alibaba GPU trace's terms (millicores, MiB, GPUs, thousandths of
//! a GPU, QoS class) → the core's model types. Shared by the trace importer
//! ([`super::alibaba`]) and the embedded default generator ([`super::generate`]), so both map
//! the same way:
//!
//! * node: `cpu: <cpu_milli>m`, `memory: <memory_mib>Mi`, `pods: 110`, and for `g` GPUs
//!   `nvidia.com/gpu: g` and [`GPU_MILLI`]` : g × 1000`; labels `kubernetes.io/hostname` and
//!   [`GPU_MODEL_LABEL`] (GPU nodes);
//! * pod: `cpu`, `memory`, `pods: 1`; a whole-GPU pod (`gpu_milli` = 1000) asks for
//!   `nvidia.com/gpu: n` and [`GPU_MILLI`]` : n × 1000`; a shared-GPU pod (`gpu_milli` < 1000)
//!   only for [`GPU_MILLI`]` : gpu_milli`; allowed GPU models become required node affinity
//!   `gpu-model In [...]`; the QoS class picks the PriorityClass ([`Qos`]).

use super::workload::{GPU_MILLI, GPU_MILLI_PER_GPU, NVIDIA_GPU};
use basalt_core::model::{Affinity, Labels, NodeSelectorTerm, NodeSpec, PodSpec, PriorityClassSpec, Requirement, SelectorOp};
use basalt_core::resource::ResourceList;

/// Node label holding the GPU model (`G2`, `T4`, `V100M32`, …).
pub const GPU_MODEL_LABEL: &str = "gpu-model";

/// Pods a node holds (`status.allocatable.pods`; the trace does not give it).
pub const PODS_PER_NODE: i64 = 110;

/// The scheduler name replayed pods carry.
pub const SCHEDULER_NAME: &str = "volcano";

const MIB: i64 = 1 << 20;

/// Alibaba's QoS class of a pod. `LS` (latency-sensitive) and `BE` (best-effort, which still has
/// non-zero requests) are Alibaba's; `Burstable` and `Guaranteed` are Kubernetes QoS names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Qos {
    /// `LS`: PriorityClass `alibaba-ls`, value 1000.
    Ls,
    /// `Guaranteed`: PriorityClass `alibaba-guaranteed`, value 1000.
    Guaranteed,
    /// `Burstable`: PriorityClass `alibaba-burstable`, value 500.
    Burstable,
    /// `BE`: PriorityClass `alibaba-be`, value 0.
    Be,
}

impl Qos {
    /// Every class, in priority order.
    pub const ALL: [Qos; 4] = [Qos::Ls, Qos::Guaranteed, Qos::Burstable, Qos::Be];

    /// Parses the trace spelling (`LS`, `BE`, `Burstable`, `Guaranteed`).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "LS" => Qos::Ls,
            "BE" => Qos::Be,
            "Burstable" => Qos::Burstable,
            "Guaranteed" => Qos::Guaranteed,
            _ => return None,
        })
    }

    /// The trace spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Qos::Ls => "LS",
            Qos::Be => "BE",
            Qos::Burstable => "Burstable",
            Qos::Guaranteed => "Guaranteed",
        }
    }

    /// Queue name when queues are assigned by QoS (`ls`, `be`, `burstable`, `guaranteed`).
    pub fn queue_name(self) -> &'static str {
        match self {
            Qos::Ls => "ls",
            Qos::Be => "be",
            Qos::Burstable => "burstable",
            Qos::Guaranteed => "guaranteed",
        }
    }

    /// The PriorityClass name.
    pub fn priority_class(self) -> &'static str {
        match self {
            Qos::Ls => "alibaba-ls",
            Qos::Be => "alibaba-be",
            Qos::Burstable => "alibaba-burstable",
            Qos::Guaranteed => "alibaba-guaranteed",
        }
    }

    /// The PriorityClass value.
    pub fn priority(self) -> i32 {
        match self {
            Qos::Ls | Qos::Guaranteed => 1000,
            Qos::Burstable => 500,
            Qos::Be => 0,
        }
    }

    /// The PriorityClass object.
    pub fn priority_class_spec(self) -> PriorityClassSpec {
        PriorityClassSpec { name: self.priority_class().into(), value: self.priority(), global_default: false }
    }
}

/// What one pod asks for, in the trace's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PodShape {
    /// CPU, millicores.
    pub cpu_milli: i64,
    /// Memory, MiB.
    pub memory_mib: i64,
    /// GPUs (0 for a CPU-only pod).
    pub num_gpu: i64,
    /// Share of each GPU in thousandths (1000 = whole GPU; < 1000 only with one GPU).
    pub gpu_milli: i64,
}

impl PodShape {
    /// Thousandths of a GPU in all: `num_gpu × gpu_milli`.
    pub fn gpu_thousandths(&self) -> i64 {
        self.num_gpu * self.gpu_milli
    }

    /// Whether the pod asks for whole GPUs (`nvidia.com/gpu`).
    pub fn whole_gpus(&self) -> bool {
        self.num_gpu > 0 && self.gpu_milli >= 1000
    }

    /// The pod's requests in core units (see the module docs), `pods: 1` included.
    pub fn requests(&self) -> ResourceList {
        let mut r = ResourceList::new();
        r.insert("cpu".into(), self.cpu_milli);
        r.insert("memory".into(), self.memory_mib.saturating_mul(MIB));
        r.insert("pods".into(), 1);
        if self.whole_gpus() {
            r.insert(NVIDIA_GPU.into(), self.num_gpu * 1000);
        }
        if self.gpu_thousandths() > 0 {
            r.insert(GPU_MILLI.into(), self.gpu_thousandths() * 1000);
        }
        r
    }
}

/// A node with `cpu_milli` millicores, `memory_mib` MiB and `gpus` GPUs of `model` (empty for
/// CPU-only), Ready, untainted.
pub fn node_spec(name: &str, cpu_milli: i64, memory_mib: i64, gpus: i64, model: &str) -> NodeSpec {
    let mut alloc = ResourceList::new();
    alloc.insert("cpu".into(), cpu_milli);
    alloc.insert("memory".into(), memory_mib.saturating_mul(MIB));
    alloc.insert("pods".into(), PODS_PER_NODE);
    if gpus > 0 {
        alloc.insert(NVIDIA_GPU.into(), gpus * 1000);
        alloc.insert(GPU_MILLI.into(), gpus * GPU_MILLI_PER_GPU);
    }
    let mut labels = Labels::new();
    labels.insert("kubernetes.io/hostname".into(), name.into());
    if !model.is_empty() {
        labels.insert(GPU_MODEL_LABEL.into(), model.into());
    }
    NodeSpec { name: name.into(), labels, allocatable: alloc.clone(), capacity: alloc, ready: true, ..Default::default() }
}

/// A pending pod of PodGroup `group` in `namespace`, created at `creation_ms`, asking for
/// `shape`, of QoS class `qos`, allowed only on GPU models `models` (empty = any).
pub fn pod_spec(
    namespace: &str,
    name: &str,
    group: &str,
    creation_ms: i64,
    shape: &PodShape,
    qos: Qos,
    models: &[String],
) -> PodSpec {
    let req = shape.requests();
    let mut labels = Labels::new();
    labels.insert("qos".into(), qos.as_str().into());
    let mut affinity = Affinity::default();
    if !models.is_empty() {
        affinity.node_required = Some(vec![NodeSelectorTerm {
            match_expressions: vec![Requirement { key: GPU_MODEL_LABEL.into(), op: SelectorOp::In, values: models.to_vec() }],
            match_fields: Vec::new(),
        }]);
    }
    PodSpec {
        namespace: namespace.into(),
        name: name.into(),
        uid: format!("{namespace}/{name}"),
        creation_ms,
        labels,
        group: Some(group.into()),
        scheduler_name: SCHEDULER_NAME.into(),
        priority: Some(qos.priority()),
        priority_class_name: qos.priority_class().into(),
        nonzero_cpu_milli: shape.cpu_milli,
        nonzero_memory_bytes: shape.memory_mib.saturating_mul(MIB),
        resreq: req,
        affinity: affinity.into(),
        preemptable: true,
        ..Default::default()
    }
}

/// `minResources` of a job: the sum of its pods' requests without `pods`.
pub fn min_resources<'a>(pods: impl IntoIterator<Item = &'a PodSpec>) -> ResourceList {
    let mut out = ResourceList::new();
    for p in pods {
        for (k, &v) in &p.resreq {
            if k != "pods" {
                let e = out.entry(k.clone()).or_insert(0);
                *e = e.saturating_add(v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_and_whole_gpu_requests() {
        let shared = PodShape { cpu_milli: 4000, memory_mib: 1024, num_gpu: 1, gpu_milli: 460 };
        let r = shared.requests();
        assert_eq!(r.get(GPU_MILLI), Some(&460_000));
        assert_eq!(r.get(NVIDIA_GPU), None);
        assert_eq!(r.get("memory"), Some(&(1 << 30)));
        let whole = PodShape { cpu_milli: 4000, memory_mib: 0, num_gpu: 8, gpu_milli: 1000 };
        let r = whole.requests();
        assert_eq!((r.get(NVIDIA_GPU), r.get(GPU_MILLI)), (Some(&8000), Some(&8_000_000)));
        let n = node_spec("n", 8000, 1024, 2, "T4");
        assert_eq!(n.allocatable.get(GPU_MILLI), Some(&2_000_000));
        assert_eq!(n.labels.get(GPU_MODEL_LABEL).map(String::as_str), Some("T4"));
    }
}
