//! What a scheduling cycle returns: plain data for the runtime (or the simulator) to apply.
//! Pods, nodes and PodGroups are named by their [`crate::cluster`] ids; the cluster resolves
//! names.

use crate::cluster::{NodeId, PodGroupId, PodId};
use crate::model::{PodGroupCondition, PodGroupPhase};
use crate::resource::ResourceList;

/// Bind `pod` to `node` (`POST pods/binding`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bind {
    /// The pod.
    pub pod: PodId,
    /// The chosen node.
    pub node: NodeId,
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

/// A PodGroup's status after the cycle (Volcano `jobStatus` + gang conditions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodGroupStatus {
    /// The PodGroup.
    pub group: PodGroupId,
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

/// A Queue's `status.allocated` after the cycle: Σ requests of its allocated-status tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueStatus {
    /// Queue name.
    pub name: String,
    /// Allocated resources, in core units (see [`crate::resource`]).
    pub allocated: ResourceList,
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

/// An event to record (kind Normal/Warning on a Pod or PodGroup).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The PodGroup it is about.
    pub group: PodGroupId,
    /// `Normal` or `Warning`.
    pub kind: &'static str,
    /// Reason, e.g. `Unschedulable`.
    pub reason: String,
    /// Message.
    pub message: String,
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
    /// Conditions of pending pods.
    pub unschedulable: Vec<PodCondition>,
    /// PodGroups left out of the session, with the reason (e.g. their queue does not exist).
    pub skipped: Vec<(PodGroupId, String)>,
    /// Events to record.
    pub events: Vec<Event>,
}
