use super::affinity::{Affinity, Toleration, TopologySpreadConstraint};
use crate::resource::ResourceList;

/// Labels or annotations: key → value, sorted (a [`crate::vec_map::VecMap`]: a few entries
/// each, held as one sorted slice).
pub type Labels = crate::vec_map::VecMap<String, String>;

/// A Kubernetes Node (`v1.Node`) as the scheduler needs it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeSpec {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable`.
    pub unschedulable: bool,
    /// `status.allocatable` (cpu in millicores, memory in bytes, scalars in milli-units, pods).
    pub allocatable: ResourceList,
    /// `status.capacity`, same units.
    pub capacity: ResourceList,
    /// The `Ready` condition is True, or the node has no conditions at all (hand-written YAML).
    /// Volcano schedules only onto Ready nodes.
    pub ready: bool,
    /// GPU share cards (capacity `volcano.sh/gpu-memory` and `volcano.sh/gpu-number`); `None`
    /// when the node registers none, or registers them malformed (the runtime reports it).
    #[serde(default)]
    pub gpu_share: Option<super::device::GpuShareNode>,
    /// vGPU cards (annotation `volcano.sh/node-vgpu-register`) and node lock annotations.
    /// Recorded from the flight recorder's format 3 on (recordings of formats 1 and 2 read
    /// with none; docs/flight-recorder.md).
    #[serde(default)]
    pub devices: super::vgpu::NodeDevices,
}

/// Taint effect (`NoSchedule`, `PreferNoSchedule`, `NoExecute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TaintEffect {
    /// Pods that do not tolerate it are not scheduled.
    NoSchedule,
    /// The scheduler avoids it (tainttoleration score).
    PreferNoSchedule,
    /// Like NoSchedule, and running pods are evicted by the node lifecycle controller.
    NoExecute,
}

/// A node taint (`v1.Taint`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Taint {
    /// `key`.
    pub key: String,
    /// `value` (may be empty).
    pub value: String,
    /// `effect`.
    pub effect: TaintEffect,
}

/// Pod phase (`status.phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum PodPhase {
    /// Not yet running (scheduled or not).
    #[default]
    Pending,
    /// Running.
    Running,
    /// Completed successfully.
    Succeeded,
    /// Completed with failure.
    Failed,
    /// Unknown.
    Unknown,
}

/// A host port a container asks for (`containers[].ports[]` with `hostPort` set).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct HostPort {
    /// `hostIP`; empty means all addresses (`0.0.0.0`).
    pub host_ip: String,
    /// `protocol` (`TCP` when unset).
    pub protocol: String,
    /// `hostPort`.
    pub port: i32,
}

/// A Kubernetes Pod (`v1.Pod`) as the scheduler needs it. Requests are already folded as Volcano
/// folds them (`pkg/scheduler/api/pod_info.go`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PodSpec {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` (the runtime fills `<ns>/<name>` when absent).
    pub uid: String,
    /// `metadata.creationTimestamp` in milliseconds since the Unix epoch (0 when unset).
    pub creation_ms: i64,
    /// When the pod was scheduled, ms since the Unix epoch (0 when unknown): the
    /// `lastTransitionTime` of its `PodScheduled=True` condition, which Volcano's `cdp` plugin
    /// reads, else `status.startTime`.
    pub start_ms: i64,
    /// Label, else annotation, `volcano.sh/cooldown-time` (a Go duration such as `600s`) in
    /// ms: how long after `start_ms` a Running pod is not a victim (`cdp` plugin). `None` when
    /// absent or not a valid duration (the runtime reports the latter).
    pub cooldown_ms: Option<i64>,
    /// `metadata.labels`.
    pub labels: Labels,
    /// Annotation `scheduling.k8s.io/group-name`: the PodGroup (same namespace) it belongs to.
    pub group: Option<String>,
    /// Task role: annotation, else label, `volcano.sh/task-spec` (empty when neither).
    pub role: String,
    /// Annotation `scheduling.volcano.sh/queue-name` (empty when absent): the queue Volcano's
    /// PodGroup controller gives the PodGroup it creates for a pod that names none
    /// (volcano-behaviour.md §5.2). The scheduler itself reads the PodGroup's queue.
    pub queue_name: String,
    /// `spec.schedulerName`.
    pub scheduler_name: String,
    /// `spec.nodeName` (empty when not bound).
    pub node_name: String,
    /// `status.phase`.
    pub phase: PodPhase,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `spec.priority` (Volcano: unset = 1), overridden by annotation `volcano.sh/task-priority`.
    pub priority: Option<i32>,
    /// `spec.priorityClassName`.
    pub priority_class_name: String,
    /// `spec.preemptionPolicy` is `Never`.
    pub preemption_never: bool,
    /// The pod's request, one value for every use (node accounting, fit, queue and job sums;
    /// volcano-behaviour.md §1.3 `pod_info.go`): per dimension max(Σ containers + Σ sidecar init
    /// containers, each regular init container + the sidecars declared before it), then
    /// + overhead and `pods: 1`.
    pub resreq: ResourceList,
    /// CPU request for scoring with kube-scheduler's non-zero defaults (100m per container
    /// without a CPU request), millicores.
    pub nonzero_cpu_milli: i64,
    /// Memory request for scoring with kube-scheduler's non-zero defaults (200 MiB per
    /// container without a memory request), bytes.
    pub nonzero_memory_bytes: i64,
    /// `spec.nodeSelector`.
    pub node_selector: Labels,
    /// `spec.affinity` (held boxed only when set: see [`crate::rare::Rare`]).
    pub affinity: crate::rare::Rare<Affinity>,
    /// `spec.tolerations`.
    pub tolerations: Vec<Toleration>,
    /// Host ports of all containers.
    pub host_ports: Vec<HostPort>,
    /// `spec.topologySpreadConstraints`.
    pub topology_spread: Vec<TopologySpreadConstraint>,
    /// `spec.schedulingGates` is non-empty.
    pub scheduling_gated: bool,
    /// Annotation `volcano.sh/preemptable` (pods default to true).
    pub preemptable: bool,
    /// `status.nominatedNodeName` (empty when unset): the node a preemption reserved for the
    /// pod (volcano-behaviour.md §1.6, §2 preempt).
    pub nominated_node_name: String,
    /// A `DisruptionTarget` condition with status `True` (Volcano's evict writes it); with
    /// `deleting`, the pod is terminating because of a preemption.
    pub disruption_target: bool,
    /// Container images (for image locality; informational).
    pub images: Vec<String>,
    /// Volumes that refer to a PersistentVolumeClaim (`persistentVolumeClaim` or `ephemeral`),
    /// in `spec.volumes` order; the volume filters read them ([`crate::session::volumes`]).
    #[serde(default)]
    pub volume_claims: Vec<super::volume::PodVolumeClaim>,
    /// `spec.resourceClaims[].name` (dynamic resource allocation): Basalt allocates no
    /// ResourceClaims, so such a pod stays pending with a message saying so.
    #[serde(default)]
    pub resource_claims: Vec<String>,
    /// GPU share: memory and whole cards asked for (container limits), cards held
    /// (`volcano.sh/gpu-index`).
    /// Held boxed only when set, as `vgpu`.
    #[serde(default)]
    pub gpu: crate::rare::Rare<super::device::PodGpu>,
    /// vGPU: per container the cards, memory and cores asked for, the card filters, the cards
    /// held (`volcano.sh/vgpu-ids-new`). Recorded from format 3 on, as [`NodeSpec::devices`].
    /// Held boxed only when set ([`crate::rare::Rare`]: most pods ask no card).
    #[serde(default)]
    pub vgpu: crate::rare::Rare<super::vgpu::PodVgpu>,
    /// `spec.schedulingGates` is exactly one gate, Volcano's [`QUEUE_ALLOCATION_GATE`] (Volcano
    /// `HasOnlyVolcanoSchedulingGate`): such a pod is considered by allocate's queue check even
    /// though it is gated (feature gate `SchedulingGatesQueueAdmission`). Recorded from format
    /// 3 on, as [`NodeSpec::devices`].
    #[serde(default)]
    pub volcano_gate_only: bool,
    /// Annotation [`QUEUE_ALLOCATION_GATE`] is `"true"`: the pod opted in to queue admission by
    /// scheduling gate (Volcano `HasQueueAllocationGateAnnotation`). Recorded from format 3
    /// on, as [`NodeSpec::devices`].
    #[serde(default)]
    pub queue_allocation_gate: bool,
}

impl PodSpec {
    /// The pod as its Binding leaves it: `spec.nodeName` set to `node` and the Binding's
    /// `annotations` copied onto it (the API server does both; Kubernetes `pods/binding`), so
    /// the cards they name (`volcano.sh/gpu-index`, `volcano.sh/vgpu-ids-new`) count as held.
    /// The phase is the kubelet's and stays as it was. Used wherever a driver plays the API
    /// server after a cycle's binds: the live mirror's assumed binds, `simulate`, the fuzz
    /// drivers.
    pub fn bound(&self, node: &str, annotations: &Labels) -> PodSpec {
        let mut spec = self.clone();
        spec.node_name = node.to_string();
        spec.gpu.modify(|g| g.apply_annotations(annotations));
        spec.vgpu.modify(|v| v.apply_annotations(annotations));
        spec
    }
}

/// Volcano's scheduling gate and opt-in annotation (`scheduling.volcano.sh/queue-allocation-gate`,
/// `schedulingv1beta1.QueueAllocationGateKey`): the admission webhook adds the gate to pods
/// annotated `"true"`, and the scheduler removes it once the pod's queue admits the pod
/// (feature gate `SchedulingGatesQueueAdmission`, volcano-behaviour.md §2 allocate).
pub const QUEUE_ALLOCATION_GATE: &str = "scheduling.volcano.sh/queue-allocation-gate";

/// PodGroup phase (`status.phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash, serde::Serialize, serde::Deserialize)]
pub enum PodGroupPhase {
    /// Unset in the object.
    #[default]
    Empty,
    /// `Pending`.
    Pending,
    /// `Inqueue`.
    Inqueue,
    /// `Running`.
    Running,
    /// `Unknown`.
    Unknown,
    /// `Completed`.
    Completed,
}

impl PodGroupPhase {
    /// The API spelling (`""` for unset).
    pub fn as_str(self) -> &'static str {
        match self {
            PodGroupPhase::Empty => "",
            PodGroupPhase::Pending => "Pending",
            PodGroupPhase::Inqueue => "Inqueue",
            PodGroupPhase::Running => "Running",
            PodGroupPhase::Unknown => "Unknown",
            PodGroupPhase::Completed => "Completed",
        }
    }

    /// Parses the API spelling; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "" => PodGroupPhase::Empty,
            "Pending" => PodGroupPhase::Pending,
            "Inqueue" => PodGroupPhase::Inqueue,
            "Running" => PodGroupPhase::Running,
            "Unknown" => PodGroupPhase::Unknown,
            "Completed" => PodGroupPhase::Completed,
            _ => return None,
        })
    }
}

/// A PodGroup status condition (`status.conditions[]`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PodGroupCondition {
    /// `type`: `Unschedulable` or `Scheduled`.
    pub kind: String,
    /// `status`: `True`/`False`.
    pub status: String,
    /// `transitionID`: the session that wrote it.
    pub transition_id: String,
    /// `reason`.
    pub reason: String,
    /// `message`.
    pub message: String,
}

/// A Volcano PodGroup (`scheduling.volcano.sh/v1beta1`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PodGroupSpec {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.creationTimestamp`, ms since the Unix epoch.
    pub creation_ms: i64,
    /// `spec.minMember`.
    pub min_member: i32,
    /// `spec.minTaskMember`: role → minimum.
    pub min_task_member: std::collections::BTreeMap<String, i32>,
    /// `spec.queue` (empty = the default queue).
    pub queue: String,
    /// `spec.priorityClassName`.
    pub priority_class_name: String,
    /// `spec.minResources` (None when unset).
    pub min_resources: Option<ResourceList>,
    /// `status.phase`.
    pub phase: PodGroupPhase,
    /// `status.conditions`.
    pub conditions: Vec<PodGroupCondition>,
    /// Annotation, else label, `volcano.sh/preemptable`; `None` when neither is set.
    /// gangpreempt and gangreclaim take a PodGroup that says `false` out of their victims and an
    /// unset one as preemptable (volcano-behaviour.md §2; Volcano's `JobInfo.Preemptable`
    /// reads unset as false, and no other Basalt decision reads it).
    pub preemptable: Option<bool>,
    /// Annotation `sla-waiting-time` (a Go duration such as `1h2m3s`), in nanoseconds: how long
    /// the job may wait before the `sla` plugin admits it (volcano-behaviour.md §3 sla). `None`
    /// when unset; the runtime refuses a value that is not a positive duration.
    pub sla_waiting_ns: Option<i64>,
    /// Annotations `volcano.sh/task-topology-affinity`, `-anti-affinity` and `-task-order`
    /// (the `task-topology` plugin); `None` when none of the three is set.
    pub task_topology: Option<TaskTopology>,
    /// `spec.networkTopology` (`None` when unset): the job's HyperNode constraint
    /// (volcano-behaviour.md §1.4, §2 allocate).
    #[serde(default)]
    pub network_topology: Option<super::NetworkTopologySpec>,
    /// `spec.subGroupPolicy[]` (empty when unset): the job's sub-jobs.
    #[serde(default)]
    pub sub_group_policy: Vec<super::SubGroupPolicySpec>,
}

/// A job's task topology, from its PodGroup's annotations (Volcano `TaskTopology`): groups of
/// task names (`volcano.sh/task-spec`) that should share a node (`affinity`) or not
/// (`anti_affinity`), and the order the job's tasks are placed in. Each annotation is split as
/// Volcano splits it: groups by `;`, names by `,`, kept verbatim (empty names included, which
/// the plugin skips).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaskTopology {
    /// `volcano.sh/task-topology-affinity` (`None` when the annotation is absent).
    pub affinity: Option<Vec<Vec<String>>>,
    /// `volcano.sh/task-topology-anti-affinity`.
    pub anti_affinity: Option<Vec<Vec<String>>>,
    /// `volcano.sh/task-topology-task-order` (`a,b,c`: `a` first).
    pub task_order: Option<Vec<String>>,
}

/// Queue state (`status.state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum QueueState {
    /// `Open` (also assumed when unset: Volcano's queue controller opens new queues).
    #[default]
    Open,
    /// `Closed`.
    Closed,
    /// `Closing`.
    Closing,
    /// `Unknown`.
    Unknown,
}

/// A Volcano Queue (`scheduling.volcano.sh/v1beta1`, cluster-scoped).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueueSpec {
    /// `metadata.name` (the queue's UID in Volcano's session).
    pub name: String,
    /// `metadata.creationTimestamp`, ms since the Unix epoch.
    pub creation_ms: i64,
    /// `spec.weight` (default 1; any value, 0 included: proportion gives a weight-0 queue
    /// nothing beyond its guarantee; a negative weight counts as 0).
    pub weight: i32,
    /// `spec.capability` (empty = unlimited).
    pub capability: ResourceList,
    /// `spec.guarantee.resource`.
    pub guarantee: ResourceList,
    /// `spec.deserved` (capacity plugin).
    pub deserved: ResourceList,
    /// `spec.reclaimable` (default true).
    pub reclaimable: bool,
    /// `spec.priority` (default 0).
    pub priority: i32,
    /// `spec.parent` (hierarchical queues; empty = root).
    pub parent: String,
    /// Annotation `volcano.sh/hierarchy` (`root/a/b`: the queue's path for drf with
    /// `enableHierarchy`); empty when unset.
    pub hierarchy: String,
    /// Annotation `volcano.sh/hierarchy-weights` (`1/w/w`, one weight per path segment); empty
    /// when unset.
    pub hierarchy_weights: String,
    /// `status.state`.
    pub state: QueueState,
    /// `spec.affinity`: the node groups (node label `volcano.sh/nodegroup-name`) the queue's
    /// jobs may, should or must not use (the `nodegroup` plugin); `None` when unset.
    pub node_group_affinity: Option<NodeGroupAffinity>,
}

/// A Queue's `spec.affinity` (Volcano `Affinity`): node group names per rule. An absent rule is
/// an empty list.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeGroupAffinity {
    /// `nodeGroupAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub required: Vec<String>,
    /// `nodeGroupAffinity.preferredDuringSchedulingIgnoredDuringExecution`, in the order given
    /// (`enablePreferredOrder` scores earlier groups higher).
    pub preferred: Vec<String>,
    /// `nodeGroupAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub anti_required: Vec<String>,
    /// `nodeGroupAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub anti_preferred: Vec<String>,
}

/// A PriorityClass (`scheduling.k8s.io/v1`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PriorityClassSpec {
    /// `metadata.name`.
    pub name: String,
    /// `value`.
    pub value: i32,
    /// `globalDefault`.
    pub global_default: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_pod_has_its_node_and_holds_the_cards_its_binding_names() {
        let mut pod = PodSpec { name: "p".into(), phase: PodPhase::Pending, ..Default::default() };
        pod.gpu.memory = 6000;
        let annotations: Labels = [(super::super::device::GPU_INDEX.to_string(), "2".to_string())].into();
        let bound = pod.bound("n1", &annotations);
        assert_eq!(bound.node_name, "n1");
        assert_eq!(bound.gpu.index, vec![2]);
        assert_eq!(bound.phase, PodPhase::Pending, "the phase is the kubelet's");
        let plain = pod.bound("n2", &Labels::new());
        assert!(plain.gpu.index.is_empty() && plain.node_name == "n2");
    }
}
