//! Why a task did not fit a node, and the messages Volcano writes for it
//! (`pkg/scheduler/api/unschedule_info.go`, kube-scheduler filter reasons).

use crate::cluster::Cluster;
use crate::intern::Sym;

/// One node's reason for rejecting a task. Copy and small: formatted only when reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// `Insufficient <resource>` (dimension index), from allocate's resource check.
    Insufficient(u16),
    /// `node(s) pod number exceeded` (Volcano predicates).
    PodNumberExceeded,
    /// `node(s) were unschedulable` (NodeUnschedulable).
    NodeUnschedulable,
    /// `node(s) didn't match Pod's node affinity/selector` (NodeAffinity).
    NodeAffinity,
    /// `node(s) had untolerated taint {key: value}` (TaintToleration).
    Taint(Sym, Sym),
    /// `node(s) didn't have free ports for the requested pod ports` (NodePorts).
    NodePorts,
    /// `node(s) didn't match pod affinity rules` (InterPodAffinity).
    PodAffinity,
    /// `node(s) didn't match pod anti-affinity rules` (InterPodAffinity).
    PodAntiAffinity,
    /// `node(s) didn't satisfy existing pods anti-affinity rules` (InterPodAffinity).
    ExistingAntiAffinity,
    /// `node(s) didn't match pod topology spread constraints` (PodTopologySpread).
    Spread,
    /// `node(s) didn't match pod topology spread constraints (missing required label)`.
    SpreadMissingLabel,
    /// `node group label not found` (nodegroup: the node has no `volcano.sh/nodegroup-name`).
    NodeGroupLabelNotFound,
    /// `node group affinity not specified` (nodegroup: the job's queue has no node group rules).
    NodeGroupAffinityNotFound,
    /// `node does not satisfy the node group affinity` (nodegroup).
    NodeGroupUnsatisfied,
    /// `node(s) had volume node affinity conflict` (VolumeBinding: a bound PV's node affinity).
    VolumeNodeConflict,
    /// `node(s) didn't find available persistent volumes to bind` (VolumeBinding: no PV and no
    /// provisioner for an unbound `WaitForFirstConsumer` claim).
    VolumeBindConflict,
    /// `node(s) had no available volume zone` (VolumeZone).
    VolumeZoneConflict,
    /// `node(s) exceed max volume count` (NodeVolumeLimits, CSI).
    VolumeLimitExceeded,
    /// `node(s) unavailable: a ReadWriteOnce claim of the pod is in use on another node`
    /// (Basalt: the volume cannot be attached to two nodes).
    VolumeRwoInUse,
    /// `GpuShare no enough gpu memory on node <name>` (deviceshare, GPU share: no single card
    /// has the memory the pod asks for).
    GpuShareMemory(Sym),
    /// `GpuNumber no enough gpu number on node <name>` (deviceshare, GPU number: fewer idle
    /// cards than the pod asks for).
    GpuNumber(Sym),
    /// `GpuShare cards of node <name> not used: a pod on it has a malformed
    /// volcano.sh/gpu-index` (Basalt: card usage there is unknown, so no card is given out).
    GpuCardsUnknown(Sym),
    /// `hami-vgpuDeviceSharing error` (deviceshare, vGPU: Volcano's `FilterNode` reason when a
    /// container finds no cards; the same text for every cause, as in Volcano).
    VgpuSharing,
    /// `vGPU cards of node <name> not used: its volcano.sh/node-vgpu-register or a pod's
    /// volcano.sh/vgpu-ids-new on it is malformed` (Basalt: card usage there is unknown).
    VgpuCardsUnknown(Sym),
    /// `node isn't in scheduler node shard` (hard node sharding: the node is not in this
    /// scheduler's NodeShard).
    NotInShard,
    /// `numa info is empty` (numa-aware: the pod names a topology policy, the node has no
    /// Numatopology).
    NumaInfoEmpty,
    /// `cpu manager policy isn't static` (numa-aware).
    NumaCpuPolicyNotStatic,
    /// `task topology policy[<pod>] is different with node[<node>]` (numa-aware).
    NumaPolicyMismatch(crate::model::NumaPolicyName, crate::model::NumaPolicyName),
    /// `cpu allocatable map is empty` (numa-aware: no CPU of the node is free for exclusive
    /// use).
    NumaCpuAllocatableEmpty,
    /// `container <index> cannot be assigned by numa` (numa-aware: the node's topology policy
    /// refuses the container's best hint; Volcano names the container, Basalt its index in
    /// `spec.containers`). Unresolvable, as in Volcano.
    NumaContainer(u16),
}

impl Reason {
    /// kube-scheduler's `UnschedulableAndUnresolvable`: preemption cannot help on that node.
    pub fn unresolvable(self) -> bool {
        matches!(
            self,
            Reason::NodeUnschedulable
                | Reason::NodeAffinity
                | Reason::Taint(..)
                | Reason::PodAffinity
                | Reason::SpreadMissingLabel
                | Reason::NodeGroupLabelNotFound
                | Reason::NodeGroupAffinityNotFound
                | Reason::NodeGroupUnsatisfied
                | Reason::VolumeNodeConflict
                | Reason::VolumeBindConflict
                | Reason::VolumeZoneConflict
                | Reason::NotInShard
                | Reason::NumaContainer(_)
        )
    }

    /// The message text.
    pub fn text(self, c: &Cluster) -> String {
        match self {
            Reason::Insufficient(d) => format!("Insufficient {}", c.resources.name(d as usize)),
            Reason::PodNumberExceeded => "node(s) pod number exceeded".into(),
            Reason::NodeUnschedulable => "node(s) were unschedulable".into(),
            Reason::NodeAffinity => "node(s) didn't match Pod's node affinity/selector".into(),
            Reason::Taint(k, v) => format!("node(s) had untolerated taint {{{}: {}}}", c.names.resolve(k), c.names.resolve(v)),
            Reason::NodePorts => "node(s) didn't have free ports for the requested pod ports".into(),
            Reason::PodAffinity => "node(s) didn't match pod affinity rules".into(),
            Reason::PodAntiAffinity => "node(s) didn't match pod anti-affinity rules".into(),
            Reason::ExistingAntiAffinity => "node(s) didn't satisfy existing pods anti-affinity rules".into(),
            Reason::Spread => "node(s) didn't match pod topology spread constraints".into(),
            Reason::SpreadMissingLabel => "node(s) didn't match pod topology spread constraints (missing required label)".into(),
            Reason::NodeGroupLabelNotFound => "node group label not found".into(),
            Reason::NodeGroupAffinityNotFound => "node group affinity not specified".into(),
            Reason::NodeGroupUnsatisfied => "node does not satisfy the node group affinity".into(),
            Reason::VolumeNodeConflict => "node(s) had volume node affinity conflict".into(),
            Reason::VolumeBindConflict => "node(s) didn't find available persistent volumes to bind".into(),
            Reason::VolumeZoneConflict => "node(s) had no available volume zone".into(),
            Reason::VolumeLimitExceeded => "node(s) exceed max volume count".into(),
            Reason::VolumeRwoInUse => "node(s) unavailable: a ReadWriteOnce claim of the pod is in use on another node".into(),
            Reason::GpuShareMemory(n) => format!("GpuShare no enough gpu memory on node {}", c.names.resolve(n)),
            Reason::GpuNumber(n) => format!("GpuNumber no enough gpu number on node {}", c.names.resolve(n)),
            Reason::NotInShard => "node isn't in scheduler node shard".into(),
            Reason::NumaInfoEmpty => "numa info is empty".into(),
            Reason::NumaCpuPolicyNotStatic => "cpu manager policy isn't static".into(),
            Reason::NumaPolicyMismatch(p, n) => {
                format!("task topology policy[{}] is different with node[{}]", p.as_str(), n.as_str())
            }
            Reason::NumaCpuAllocatableEmpty => "cpu allocatable map is empty".into(),
            Reason::NumaContainer(i) => format!("container {i} cannot be assigned by numa"),
            Reason::VgpuSharing => "hami-vgpuDeviceSharing error".into(),
            Reason::VgpuCardsUnknown(n) => format!(
                "vGPU cards of node {} not used: its volcano.sh/node-vgpu-register or a pod's volcano.sh/vgpu-ids-new on it is malformed",
                c.names.resolve(n)
            ),
            Reason::GpuCardsUnknown(n) => format!(
                "GpuShare cards of node {} not used: a pod on it has a malformed volcano.sh/gpu-index",
                c.names.resolve(n)
            ),
        }
    }
}

/// Volcano's `FitErrors` for one task: how many nodes rejected it, for which reasons, or a
/// message that replaces the node histogram.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FitErrors {
    /// Nodes that reported an error.
    pub nodes: u32,
    /// Reason → number of nodes, in first-seen order.
    pub histogram: Vec<(Reason, u32)>,
    /// `SetError` text (replaces the `0/N nodes are unavailable` prefix).
    pub error: Option<String>,
    /// The HyperNode the nodes were searched in (Volcano `SetHyperNode`, set by allocate's
    /// gradient path except for the cluster top): the message then starts `In hyperNode <name>: `.
    pub hyper_node: Option<String>,
}

impl FitErrors {
    /// Records that one node rejected the task for `r`.
    pub fn add(&mut self, r: Reason) {
        self.nodes += 1;
        match self.histogram.iter_mut().find(|(x, _)| *x == r) {
            Some((_, n)) => *n += 1,
            None => self.histogram.push((r, 1)),
        }
    }

    /// A FitErrors that only carries `msg`.
    pub fn message_only(msg: String) -> Self {
        FitErrors { error: Some(msg), ..FitErrors::default() }
    }

    /// Volcano's `FitErrors.Error()`: `0/<N> nodes are unavailable: <sorted 'count reason'>.`
    pub fn message(&self, c: &Cluster) -> String {
        let head = self.error.clone().unwrap_or_else(|| format!("0/{} nodes are unavailable", self.nodes));
        if self.histogram.is_empty() {
            return if self.error.is_some() { head } else { "all nodes are unavailable".to_string() };
        }
        let mut parts: Vec<String> = self.histogram.iter().map(|(r, n)| format!("{n} {}", r.text(c))).collect();
        parts.sort();
        match &self.hyper_node {
            Some(h) => format!("In hyperNode {h}: {head}: {}.", parts.join(", ")),
            None => format!("{head}: {}.", parts.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_sorts_count_reason_strings() {
        let mut c = Cluster::new();
        let k = c.names.intern("dedicated");
        let v = c.names.intern("gpu");
        let mut f = FitErrors::default();
        f.add(Reason::Taint(k, v));
        f.add(Reason::Insufficient(0));
        f.add(Reason::Taint(k, v));
        assert_eq!(
            f.message(&c),
            "0/3 nodes are unavailable: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}."
        );
        assert_eq!(FitErrors::message_only("x".into()).message(&c), "x");
    }

    #[test]
    fn message_names_the_hyper_node_searched() {
        let c = Cluster::new();
        let mut f = FitErrors { hyper_node: Some("leaf1".into()), ..FitErrors::default() };
        f.add(Reason::Insufficient(0));
        f.add(Reason::Insufficient(0));
        assert_eq!(f.message(&c), "In hyperNode leaf1: 0/2 nodes are unavailable: 2 Insufficient cpu.");
        // Volcano prefixes only a node histogram; a bare message stays as it is.
        let m = FitErrors { hyper_node: Some("leaf1".into()), ..FitErrors::message_only("x".into()) };
        assert_eq!(m.message(&c), "x");
    }
}
