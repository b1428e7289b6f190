//! What a scheduling cycle returns: plain data for the runtime (or the simulator) to apply.
//! Pods, nodes and PodGroups are named by their [`crate::cluster`] ids; the cluster resolves
//! names.

use crate::cluster::{NodeId, PodGroupId, PodId};
use crate::model::{PodGroupCondition, PodGroupPhase};
use crate::rare::Rare;
use crate::resource::ResourceList;
use std::borrow::Cow;

/// Bind `pod` to `node` (`POST pods/binding`). 24 bytes: the two rarely set parts are held as
/// nothing while they are empty ([`crate::rare::Rare`], read as the plain value), because a
/// cycle at 1,000,000 pods returns as many binds and every byte of them is memory the cycle
/// touches for the first time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bind {
    /// The pod.
    pub pod: PodId,
    /// The chosen node.
    pub node: NodeId,
    /// Annotations the plugins put on the pod with this bind (Volcano `TaskInfo.PodAnnotations`,
    /// sent in the Binding's `metadata.annotations`, which the API server copies onto the pod):
    /// `volcano.sh/gpu-index` and `volcano.sh/predicate-time` for GPU share, the vGPU keys
    /// (`volcano.sh/vgpu-ids-new`, …) for vGPU. Empty for most binds.
    pub annotations: Rare<crate::model::Labels>,
    /// `deviceshare.NodeLockEnable`: the node lock annotation to take on the node before the
    /// Binding ([`crate::model::NODE_LOCK_VGPU`] or [`crate::model::NODE_LOCK_GPU`], value the
    /// bind time in RFC 3339); `None` for most binds.
    pub node_lock: Rare<Option<String>>,
}

impl Bind {
    /// A bind of `pod` to `node` without annotations or node lock.
    pub fn new(pod: PodId, node: NodeId) -> Self {
        Bind { pod, node, annotations: Rare::default(), node_lock: Rare::default() }
    }
}

/// Evict `pod` (Volcano reasons: `preempt`, `reclaim`, `shuffle`, `gangpreempt`, `gangreclaim`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Eviction {
    /// The victim.
    pub pod: PodId,
    /// Why.
    pub reason: String,
}

/// A task left Pipelined on `node` at the end of the cycle (waiting for releasing resources).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipelined {
    /// The pod.
    pub pod: PodId,
    /// The node whose releasing resources it waits for.
    pub node: NodeId,
    /// Victims were evicted for it on `node` (Volcano `EvictionOccurred`): the pod's
    /// `status.nominatedNodeName` becomes `node` (volcano-behaviour.md §1.6).
    pub nominated: bool,
}

/// A PodGroup's status after the cycle (Volcano `jobStatus` + gang conditions). `G` names the
/// PodGroup: its [`PodGroupId`] here; the runtime's flight recorder keys the statuses by name
/// and stores them with `G = ()` (the fields in this order are its file format).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PodGroupStatus<G = PodGroupId> {
    /// The PodGroup.
    pub group: G,
    /// `status.phase`.
    pub phase: PodGroupPhase,
    /// `status.conditions` (the cycle's condition replaces one of the same type).
    pub conditions: Vec<PodGroupCondition>,
    /// `status.running`.
    pub running: i32,
    /// `status.succeeded`.
    pub succeeded: i32,
    /// `status.failed`.
    pub failed: i32,
    /// Whether anything but condition timestamps/transition ids changed (Volcano writes only
    /// then).
    pub changed: bool,
}

impl<G> PodGroupStatus<G> {
    /// The same status naming its PodGroup by `group` instead.
    pub fn naming<H>(&self, group: H) -> PodGroupStatus<H> {
        PodGroupStatus {
            group,
            phase: self.phase,
            conditions: self.conditions.clone(),
            running: self.running,
            succeeded: self.succeeded,
            failed: self.failed,
            changed: self.changed,
        }
    }
}

/// A Queue's `status.allocated` after the cycle: Σ requests of its allocated-status tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueStatus {
    /// Queue name.
    pub name: String,
    /// Allocated resources, in core units (see [`crate::resource`]).
    pub allocated: ResourceList,
}

/// One queue's fair-share accounting at session close, as the `proportion` plugin keeps it
/// (Volcano's `volcano_queue_{allocated,request,deserved}_*`, `volcano_queue_share`,
/// `volcano_queue_weight` and `volcano_queue_overused` gauges, which proportion's
/// `OnSessionClose` sets; volcano-behaviour.md §3, §8.1). Only queues with jobs in the session
/// are listed, as Volcano keeps attributes only for those.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueShare {
    /// Queue name.
    pub name: String,
    /// `spec.weight` (negative read as 0).
    pub weight: f64,
    /// max over dimensions with deserved ≥ 0.1 of allocated / deserved.
    pub share: f64,
    /// Allocated (this session's accounting, allocations of the cycle included), core units.
    pub allocated: ResourceList,
    /// Request (allocated + pending), core units.
    pub request: ResourceList,
    /// Deserved, core units rounded to the nearest integer (the water-filling is in `f64`).
    pub deserved: ResourceList,
    /// Whether every dimension's allocated has reached its deserved (proportion's overused;
    /// capacity: share > 1, as its close records it).
    pub overused: bool,
    /// `inqueue` (Volcano `attr.inqueue`: resources reserved by enqueued jobs not yet
    /// allocated), core units; `volcano_queue_inqueue_*`.
    pub inqueue: ResourceList,
    /// `spec.capability`, only the dimensions it names (`None` when unset, or with
    /// `proportion`, which does not report it); `volcano_queue_capacity_*`, set by `capacity`.
    pub capability: Option<ResourceList>,
    /// The real capability the `capacity` plugin enforces (dimensions without a limit left
    /// out; `None` with `proportion`); `volcano_queue_real_capacity_*`.
    pub real_capability: Option<ResourceList>,
}

// `weight` and `share` are finite: weights are integers, shares divide by at least 0.1.
impl Eq for QueueShare {}

/// What the eviction actions counted in one cycle, for Volcano's preemption metrics
/// (volcano-behaviour.md §8.1; `pkg/scheduler/metrics`): the runtime adds `attempts` to
/// `volcano_total_preemption_attempts`, sets `volcano_pod_preemption_victims` to
/// `last_victims`, and adds `eviction_transactions` to `volcano_eviction_transactions_total`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreemptionStats {
    /// The number of victims the plugins' `Preemptable` returned on the last node `preempt`
    /// considered (Volcano `UpdatePreemptionVictimsCount`, set once per node); `None` when
    /// `preempt` considered no node this cycle.
    pub last_victims: Option<u32>,
    /// Nodes on which `preempt` had valid victims and tried evicting (Volcano
    /// `RegisterPreemptionAttempts` in normal preemption), plus preemptors the topology-aware
    /// mode pipelined (its own call site).
    pub attempts: u32,
    /// Statements committed with at least one eviction, per action (`preempt`, `reclaim`,
    /// `gangpreempt`, `gangreclaim`; Volcano `RegisterEvictionTransaction`), in first-seen
    /// order.
    pub eviction_transactions: Vec<(&'static str, u32)>,
}

impl PreemptionStats {
    /// Counts one committed statement with evictions for `action`.
    pub fn count_transaction(&mut self, action: &'static str) {
        match self.eviction_transactions.iter_mut().find(|(a, _)| *a == action) {
            Some((_, n)) => *n += 1,
            None => self.eviction_transactions.push((action, 1)),
        }
    }
}

/// The `PodScheduled=False` condition of a pod that is still pending after the cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodCondition {
    /// The pod.
    pub pod: PodId,
    /// `Unschedulable` or `Schedulable`.
    pub reason: String,
    /// Volcano's message, e.g. `0/3 nodes are unavailable: 1 Insufficient cpu, 2 node(s) had
    /// untolerated taint {key: value}.`
    pub message: String,
}

/// Where allocate's HyperNode gradient path searched for a PodGroup it could not place this
/// cycle (Basalt's explain note; Volcano only logs it, and its PodGroup condition names the
/// last HyperNode tried: `In hyperNode <name>: …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologySearch {
    /// The PodGroup.
    pub group: PodGroupId,
    /// Its highest allowed tier after Volcano's rewrites (`highestTierName` resolved, soft
    /// turned into hard at the cluster-top tier); `None` when only its sub-groups have a limit.
    pub highest_tier: Option<i32>,
    /// The tiers searched, lowest first, each with the number of HyperNodes tried in it.
    pub tiers: Vec<(i32, u32)>,
    /// Why nothing fitted: no HyperNode within the limit had the resources, or the last
    /// HyperNode tried and its fit errors.
    pub reason: String,
    /// HyperNodes the search tried, tier by tier in the order it tried them (at most
    /// [`TRIED_PER_TIER`] of a tier), each with why it did not hold the gang.
    pub tried: Vec<HyperNodeTried>,
}

/// At most this many HyperNodes of one tier are named in [`TopologySearch::tried`] (the tier's
/// count is in [`TopologySearch::tiers`]).
pub const TRIED_PER_TIER: usize = 8;

/// One HyperNode a topology search tried for a PodGroup it could not place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyperNodeTried {
    /// The HyperNode's name.
    pub hyper_node: String,
    /// Its `spec.tier`.
    pub tier: i32,
    /// Why it did not hold the gang: its nodes' idle (and future idle) resources have room for
    /// fewer tasks than the gang still needs, or the dry run in it ended neither ready nor
    /// pipelined (with the first fit error).
    pub why: String,
}

/// An event to record (kind Normal/Warning on a Pod or PodGroup).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The PodGroup it is about.
    pub group: PodGroupId,
    /// `Normal` or `Warning`.
    pub kind: &'static str,
    /// Reason, e.g. `Unschedulable` (borrowed when it is a fixed text: a cycle that readies
    /// 100,000 PodGroups records as many `Scheduled` events).
    pub reason: Cow<'static, str>,
    /// Message (borrowed when it is a fixed text, e.g. `pod group is ready`).
    pub message: Cow<'static, str>,
}

/// Everything one cycle decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decisions {
    /// Binds, in the order they were committed.
    pub binds: Vec<Bind>,
    /// Evictions, in order.
    pub evictions: Vec<Eviction>,
    /// Tasks pipelined at the end of the cycle.
    pub pipelined: Vec<Pipelined>,
    /// Status of every PodGroup in the session.
    pub pod_groups: Vec<PodGroupStatus>,
    /// `status.allocated` of every Queue.
    pub queues: Vec<QueueStatus>,
    /// Fair-share accounting of the queues with jobs (empty without the `proportion` plugin).
    pub queue_shares: Vec<QueueShare>,
    /// PodGroups the `gang` plugin found not ready at close, with their unready task count
    /// (minAvailable − schedulable; Volcano's `volcano_unschedule_task_count{job_id}`, and
    /// their number its `volcano_unschedule_job_count`, set in gang's `OnSessionClose`).
    pub unready_jobs: Vec<(PodGroupId, u32)>,
    /// Conditions of pending pods.
    pub unschedulable: Vec<PodCondition>,
    /// PodGroups left out of the session, with the reason (e.g. their queue does not exist).
    pub skipped: Vec<(PodGroupId, String)>,
    /// Events to record.
    pub events: Vec<Event>,
    /// The eviction actions' counters (Volcano's preemption metrics).
    pub preemption: PreemptionStats,
    /// The cycle's `now_ms` when the `rescheduling` plugin's strategies were due and ran in
    /// this session (ms since the Unix epoch; `None`: not due, no such plugin, or the cycle had
    /// no clock). Set by the plugin's close. The driver of the core (simulator, replay, live
    /// scheduler) applies it as [`crate::cluster::Delta::Rescheduled`] after the cycle, which is
    /// how the plugin's `interval` (Volcano `util.IsToBeExecuted`, volcano-behaviour.md §3) is
    /// kept across cycles while the core stays without a clock or memory of its own.
    pub rescheduled_ms: Option<i64>,
    /// What must happen before some of `binds` are sent (kube-scheduler's volume binder,
    /// volcano-behaviour.md §1.6 PreBind): PVs to bind to claims and claims to provision for the
    /// chosen node. A bind whose pod has an entry here waits until its claims are bound.
    pub volume_bindings: Vec<crate::model::VolumeBinding>,
    /// PodGroups with a hard network topology (or sub-groups) that allocate's gradient path
    /// could not place, with the tiers it searched and why ([`TopologySearch`]).
    pub topology_searches: Vec<TopologySearch>,
    /// Pods whose Volcano scheduling gate is to be removed because their queue admitted them
    /// (feature gate `SchedulingGatesQueueAdmission`), in decision order, each pod once.
    pub gate_removals: Vec<GateRemoval>,
    /// The CPUs the `numa-aware` plugin assigned the pods bound this cycle (Volcano's plugin
    /// hands them to `AddUnassignedNumaPods` at session close), in bind order, only binds with
    /// CPUs. The driver applies them after the binds as [`crate::cluster::Delta::PodNumaAssumed`]
    /// ([`Decisions::numa_deltas`]), so later sessions do not offer those CPUs again before the
    /// node's Numatopology lists the pod.
    pub numa_assignments: Vec<NumaAssignment>,
}

/// The CPUs the `numa-aware` plugin assigned a bound pod on its node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumaAssignment {
    /// The pod.
    pub pod: PodId,
    /// The node it is bound to.
    pub node: NodeId,
    /// CPU ids (`spec.cpuDetail` ids of the node's Numatopology), ascending.
    pub cpus: Vec<u32>,
}

impl NumaAssignment {
    /// The assignment named on `cluster` (the cluster the cycle ran on); `None` when it no
    /// longer has the pod or the node.
    pub fn named(&self, cluster: &crate::cluster::Cluster) -> Option<crate::model::NumaAssumed> {
        let p = cluster.pod(self.pod)?;
        let n = cluster.node(self.node)?;
        Some(crate::model::NumaAssumed {
            namespace: p.spec.namespace.clone(),
            name: p.spec.name.clone(),
            node: n.spec.name.clone(),
            cpus: self.cpus.clone(),
        })
    }
}

impl Decisions {
    /// [`Decisions::numa_assignments`] as [`crate::cluster::Delta::PodNumaAssumed`] deltas
    /// named on `cluster` (the cluster the cycle ran on; an id it no longer has is left out).
    pub fn numa_deltas(&self, cluster: &crate::cluster::Cluster) -> Vec<crate::cluster::Delta> {
        self.numa_assignments.iter().filter_map(|a| a.named(cluster)).map(crate::cluster::Delta::PodNumaAssumed).collect()
    }
}

/// Remove Volcano's scheduling gate ([`crate::model::QUEUE_ALLOCATION_GATE`]) from `pod`: allocate
/// found the pod gated only by that gate, opted in by its annotation, and its queue able to take
/// it (Volcano allocate's `ssn.SchGateManager().Enqueue(task)`). The pod is not placed in this
/// cycle; once the gate is gone it is scheduled like any pod, in a later cycle. The runtime's
/// gate-removal workers apply it (`runtime/src/live/gate_removal.rs`), the simulator clears the
/// gate after the cycle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateRemoval {
    /// The pod.
    pub pod: PodId,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bind without annotations or node lock is 24 bytes and reads as empty; one with them
    /// reads them back and compares by value.
    #[test]
    fn a_plain_bind_is_small_and_reads_its_rare_parts() {
        assert_eq!(std::mem::size_of::<Bind>(), 24);
        let plain = Bind::new(PodId(1), NodeId(2));
        assert!(plain.annotations.is_empty());
        assert_eq!(*plain.node_lock, None);
        let mut labels = crate::model::Labels::new();
        labels.insert("volcano.sh/gpu-index".to_string(), "0".to_string());
        let gpu = Bind { annotations: labels.clone().into(), node_lock: Some("lock".to_string()).into(), ..plain.clone() };
        assert_eq!(gpu.annotations.get("volcano.sh/gpu-index").map(String::as_str), Some("0"));
        assert_eq!(gpu.node_lock.as_deref(), Some("lock"));
        assert_ne!(gpu, plain);
        assert_eq!(Bind { annotations: crate::model::Labels::new().into(), node_lock: None.into(), ..gpu }, plain);
    }
}
