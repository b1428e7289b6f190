//! The cluster copy the runtime keeps between cycles (the "mirror"): nodes, pods, PodGroups,
//! Queues, PriorityClasses and storage objects, changed only through [`Delta`]s, with names interned and
//! scheduling constraints compiled once on arrival. Sessions are built from it each cycle.
//!
//! It refuses I/O and Kubernetes types: the runtime converts objects into [`crate::model`]
//! types first.

pub mod compile;
pub mod kept;
mod names;
pub mod numa_assumed;
pub mod volumes;

use crate::intern::{Interner, Sym};
use crate::model::*;
use crate::resource::{Resource, ResourceNames};
use compile::{CLabels, CPod, CTaint};
use hashbrown::HashMap;
use std::collections::BTreeMap;

/// Stable id of a node slot in the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);
/// Stable id of a pod slot in the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodId(pub u32);
/// Stable id of a PodGroup slot in the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodGroupId(pub u32);

/// One change to the cluster copy. Upserts replace the whole object.
///
/// Variants differ in size (a pod carries its whole spec); deltas are short-lived messages
/// consumed at once, so boxing them would only add an allocation per object.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[allow(clippy::large_enum_variant)]
pub enum Delta {
    /// A node was added or changed.
    Node(NodeSpec),
    /// A node was deleted (by name).
    NodeDeleted(String),
    /// A pod was added or changed.
    Pod(PodSpec),
    /// A pod was deleted.
    PodDeleted {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A PodGroup was added or changed.
    PodGroup(PodGroupSpec),
    /// A PodGroup was deleted.
    PodGroupDeleted {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A Queue was added or changed.
    Queue(QueueSpec),
    /// A Queue was deleted (by name).
    QueueDeleted(String),
    /// A PriorityClass was added or changed.
    PriorityClass(PriorityClassSpec),
    /// A PriorityClass was deleted (by name).
    PriorityClassDeleted(String),
    /// A PodDisruptionBudget was added or changed.
    PodDisruptionBudget(PodDisruptionBudgetSpec),
    /// A PodDisruptionBudget was deleted.
    PodDisruptionBudgetDeleted {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A ResourceQuota was added or changed.
    ResourceQuota(ResourceQuotaSpec),
    /// A ResourceQuota was deleted.
    ResourceQuotaDeleted {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// The `rescheduling` plugin's strategies ran in the session at `at_ms` (ms since the Unix
    /// epoch): the cycle's [`crate::decision::Decisions::rescheduled_ms`], applied by the
    /// driver after the cycle so that later sessions know when they last ran (Volcano's
    /// process-global last-run time of `reschedulingFns`, `util.IsToBeExecuted`;
    /// volcano-behaviour.md §3). Not a Kubernetes object: journaled and recorded with the
    /// others so a replay of the deltas rebuilds the same memory. Read with
    /// [`Cluster::rescheduled_ms`].
    Rescheduled {
        /// When the strategies ran, ms since the Unix epoch.
        at_ms: i64,
    },
    /// A PersistentVolumeClaim was added or changed.
    PersistentVolumeClaim(PersistentVolumeClaimSpec),
    /// A PersistentVolumeClaim was deleted.
    PersistentVolumeClaimDeleted {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// A PersistentVolume was added or changed.
    PersistentVolume(PersistentVolumeSpec),
    /// A PersistentVolume was deleted (by name).
    PersistentVolumeDeleted(String),
    /// A StorageClass was added or changed.
    StorageClass(StorageClassSpec),
    /// A StorageClass was deleted (by name).
    StorageClassDeleted(String),
    /// A CSINode was added or changed.
    CsiNode(CsiNodeSpec),
    /// A CSINode was deleted (by name).
    CsiNodeDeleted(String),
    /// A HyperNode was added or changed (resolved into session tables by
    /// [`crate::session::topology`]).
    HyperNode(HyperNodeSpec),
    /// A HyperNode was deleted (by name).
    HyperNodeDeleted(String),
    /// A NodeShard (`shard.volcano.sh/v1alpha1`) was added or changed (resolved into the
    /// session's per-node shard column, [`Cluster::shard_bits`]). Appended after every older
    /// variant so recordings made before node sharding still decode.
    NodeShard(NodeShardSpec),
    /// A NodeShard was deleted (by name).
    NodeShardDeleted(String),
    /// A Numatopology (`nodeinfo.volcano.sh/v1alpha1`) was added or changed: the NUMA topology
    /// of the node of the same name, read by the `numa-aware` plugin. Appended after every
    /// older variant so older recordings still decode.
    Numatopology(NumatopologySpec),
    /// A Numatopology was deleted (by name).
    NumatopologyDeleted(String),
    /// What the `numa-aware` plugin reads of pod `namespace/name` (its policy annotation, QoS
    /// and whole-CPU container requests), kept beside the pod so that [`PodSpec`] and the
    /// encoding of [`Delta::Pod`] stay as they were. Sent after the pod's [`Delta::Pod`] when
    /// [`PodNuma::relevant`], or to clear an earlier value (a default `numa` removes it);
    /// [`Delta::PodDeleted`] removes it too. Appended last, as above.
    PodNuma {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// The pod's NUMA request.
        numa: PodNuma,
    },
    /// The `numa-aware` plugin bound pod `namespace/name` to `node` with these CPUs: the
    /// cycle's [`crate::decision::Decisions::numa_assignments`], applied by the driver of the
    /// core after the cycle (Volcano's plugin calls `AddUnassignedNumaPods` at session close).
    /// The cluster keeps the CPUs on the node and the plugin takes them from the node's free
    /// CPUs in later sessions until the node's Numatopology lists the pod in
    /// `spec.podAllocations`, or the pod is deleted, ends or leaves the node
    /// ([`numa_assumed`] has the rules). A pod the cluster does not hold is not kept (it is
    /// gone); an empty `cpus` removes the pod's entry. Not a Kubernetes object: journaled and
    /// recorded with the others so a replay rebuilds the same memory. Appended last, as above.
    PodNumaAssumed(NumaAssumed),
}

/// An object the cluster refused, with the object and field named.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClusterError {
    /// A resource list names more resources than [`crate::limits::MAX_RESOURCE_DIMS`].
    #[error("{kind} {name}: field {field}: too many distinct resource names; dropped {dropped:?}")]
    TooManyResources {
        /// Kind of the object.
        kind: &'static str,
        /// `ns/name` or name.
        name: String,
        /// Field path.
        field: &'static str,
        /// Resource names dropped.
        dropped: Vec<String>,
    },
    /// A field holds a value the scheduler cannot use.
    #[error("{kind} {name}: field {field}: {message}")]
    Invalid {
        /// Kind of the object.
        kind: &'static str,
        /// `ns/name` or name.
        name: String,
        /// Field path.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// A node in the cluster copy.
#[derive(Clone, Debug)]
pub struct NodeRec {
    /// The node as converted.
    pub spec: NodeSpec,
    /// Interned name.
    pub name: Sym,
    /// Interned labels.
    pub labels: CLabels,
    /// Interned taints.
    pub taints: Box<[CTaint]>,
    /// Allocatable as a vector.
    pub allocatable: Resource,
}

/// A pod in the cluster copy.
#[derive(Clone, Debug)]
pub struct PodRec {
    /// The pod as converted.
    pub spec: PodSpec,
    /// Compiled constraints.
    pub c: CPod,
    /// Resreq vector.
    pub resreq: Resource,
    /// Bumped on every change (incremental session builds).
    pub generation: u64,
}

/// A PodGroup in the cluster copy.
#[derive(Clone, Debug)]
pub struct PodGroupRec {
    /// The PodGroup as converted.
    pub spec: PodGroupSpec,
    /// Interned `namespace/name`: Volcano's job id (`api.JobID`), the last key of the job order.
    pub uid: Sym,
    /// `minResources` as a vector.
    pub min_resources: Option<Resource>,
    /// `minTaskMember` with interned roles, sorted by role.
    pub min_task_member: Box<[(Sym, i32)]>,
}

/// A Queue in the cluster copy.
#[derive(Clone, Debug)]
pub struct QueueRec {
    /// The Queue as converted.
    pub spec: QueueSpec,
    /// `spec.capability` (None when empty).
    pub capability: Option<Resource>,
    /// `spec.guarantee.resource`.
    pub guarantee: Resource,
    /// `spec.deserved`.
    pub deserved: Option<Resource>,
}

/// What changed since the kept session layout was made: the input of
/// `session::layout::Layout::patch`. Recorded by [`Cluster::apply`] only while a layout
/// is kept, and emptied by `Cluster::prepare` (`session::kept_layout`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Pod slots whose record was created, replaced or removed (in apply order, may repeat).
    pub pods: Vec<PodId>,
    /// PodGroup slots replaced with the same namespace/name and the same `spec.queue` (status
    /// updates): their job row stays where it is.
    pub groups: Vec<PodGroupId>,
    /// PodGroup slots created, removed or moved to another queue: job rows come or go.
    pub groups_moved: Vec<PodGroupId>,
    /// Node slots replaced with the same readiness (allocatable, labels, taints changed).
    pub nodes: Vec<NodeId>,
    /// A change every row may depend on: a node added, removed or changing readiness, a queue
    /// added or removed, any PriorityClass change, or more changes than a rebuild costs.
    pub global: bool,
}

impl Changes {
    fn len(&self) -> usize {
        self.pods.len() + self.groups.len() + self.groups_moved.len() + self.nodes.len()
    }
}

/// The long-lived cluster copy.
#[derive(Debug, Default, Clone)]
pub struct Cluster {
    /// Interned strings shared with every session.
    pub names: Interner,
    /// Resource dimensions.
    pub resources: ResourceNames,
    // Records are boxed so a slab entry is one pointer: resolving an id (every session open
    // resolves every live id) reads the dense slab, not the far-apart records.
    nodes: Vec<Option<Box<NodeRec>>>,
    node_index: BTreeMap<String, NodeId>,
    free_nodes: Vec<u32>,
    pods: Vec<Option<Box<PodRec>>>,
    pod_index: BTreeMap<(String, String), PodId>,
    free_pods: Vec<u32>,
    groups: Vec<Option<Box<PodGroupRec>>>,
    group_index: BTreeMap<(String, String), PodGroupId>,
    free_groups: Vec<u32>,
    queues: BTreeMap<String, QueueRec>,
    priority_classes: BTreeMap<String, PriorityClassSpec>,
    /// PodDisruptionBudgets by (namespace, name); sessions read them directly (`pdb` plugin).
    disruption_budgets: BTreeMap<(String, String), PodDisruptionBudgetSpec>,
    /// ResourceQuotas by (namespace, name); sessions read them directly (`resourcequota`).
    resource_quotas: BTreeMap<(String, String), ResourceQuotaSpec>,
    /// Pods by namespace and `scheduling.k8s.io/group-name` (unordered): the members of a
    /// PodGroup, so a job that appears can find pods that arrived before it.
    members: HashMap<String, HashMap<String, Vec<PodId>>>,
    generation: u64,
    /// The kept session layout (`session::kept_layout`), stored without naming its type.
    pub(crate) prepared: kept::KeptSlot,
    /// The buffers of the layout before the last patch, reused by the next one.
    pub(crate) spare: kept::KeptSlot,
    /// Changes since `prepared` was made.
    pub(crate) changes: Changes,
    /// Interner length that triggers the next compaction (see [`Cluster::compact_names`]).
    names_limit: usize,
    /// The last [`Delta::Rescheduled`] applied (`None`: the strategies never ran).
    rescheduled_ms: Option<i64>,
    /// PVCs, PVs, StorageClasses and CSINodes (read at session open, not laid out in rows).
    volumes: volumes::VolumeStore,
    /// HyperNodes by name; sessions that schedule topology jobs resolve them.
    hyper_nodes: BTreeMap<String, HyperNodeSpec>,
    /// NodeShards by name.
    node_shards: BTreeMap<String, NodeShardSpec>,
    /// Numatopologies by name (= node name).
    numatopologies: BTreeMap<String, NumatopologySpec>,
    /// The `numa-aware` plugin's view of pods, by namespace and name ([`Delta::PodNuma`]).
    pod_numa: BTreeMap<String, BTreeMap<String, PodNuma>>,
    /// CPUs the `numa-aware` plugin gave pods it bound, until the exporter reports them
    /// ([`Delta::PodNumaAssumed`]).
    numa_assumed: numa_assumed::NumaAssumedStore,
    /// The shard membership by node slot, resolved for one shard name once per change of the
    /// NodeShards or of the node set ([`Cluster::shard_bits`]); emptied by such a change.
    shard_memo: std::sync::OnceLock<ShardBits>,
}

/// One shard's membership resolved over the node slots ([`Cluster::shard_bits`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardBits {
    /// The shard (`--scheduler-sharding-name`).
    pub name: String,
    /// Whether a NodeShard of that name exists (without one no node is in the shard).
    pub found: bool,
    /// By node slot ([`NodeId`]): whether the node is in the shard now (its `nodesDesired`,
    /// minus the nodes other shards have in use).
    pub by_slot: Vec<bool>,
}

/// What the core refuses in a Numatopology (the converter refuses malformed text first): a
/// NUMA node id of [`MAX_NUMA_NODES`] or more, a CPU listed twice in `spec.cpuDetail`, or an
/// allocatable CPU that `spec.cpuDetail` does not describe, or more than
/// [`MAX_NUMA_NODES_PER_NODE`] NUMA nodes (the plugin tries every set of them).
fn check_numatopology(t: &NumatopologySpec) -> Result<(), ClusterError> {
    let invalid = |field: &'static str, message: String| ClusterError::Invalid {
        kind: "Numatopology",
        name: t.name.clone(),
        field,
        message,
    };
    if let Some(c) = t.cpus.iter().find(|c| c.numa >= MAX_NUMA_NODES) {
        return Err(invalid("spec.cpuDetail", format!("cpu {}: numa {} is not below {MAX_NUMA_NODES}", c.id, c.numa)));
    }
    if let Some(w) = t.cpus.windows(2).find(|w| w[0].id >= w[1].id) {
        return Err(invalid("spec.cpuDetail", format!("cpu {} is not in ascending order or is listed twice", w[1].id)));
    }
    let distinct = t.numa_nodes().len();
    if distinct > MAX_NUMA_NODES_PER_NODE {
        return Err(invalid(
            "spec.cpuDetail",
            format!("{distinct} NUMA nodes, more than the {MAX_NUMA_NODES_PER_NODE} the scheduler checks"),
        ));
    }
    let allocatable = t.cpu_allocatable.as_deref().unwrap_or_default();
    if let Some(c) = allocatable.iter().find(|&&c| t.cpus.binary_search_by_key(&c, |x| x.id).is_err()) {
        return Err(invalid("spec.numares.cpu.allocatable", format!("cpu {c} is not in spec.cpuDetail")));
    }
    Ok(())
}

/// Whether a label selector requirement is one Kubernetes' `LabelSelectorAsSelector` accepts:
/// `In`/`NotIn` need values, `Exists`/`DoesNotExist` none, `Gt`/`Lt` are node-selector only.
fn selector_requirement_valid(r: &Requirement) -> bool {
    match r.op {
        SelectorOp::In | SelectorOp::NotIn => !r.values.is_empty(),
        SelectorOp::Exists | SelectorOp::DoesNotExist => r.values.is_empty(),
        SelectorOp::Gt | SelectorOp::Lt => false,
    }
}

fn slot<T>(v: &mut Vec<Option<Box<T>>>, free: &mut Vec<u32>, x: T) -> u32 {
    if let Some(i) = free.pop() {
        v[i as usize] = Some(Box::new(x));
        i
    } else {
        v.push(Some(Box::new(x)));
        (v.len() - 1) as u32
    }
}

impl Cluster {
    /// An empty cluster.
    pub fn new() -> Self {
        Self::default()
    }

    fn resource(
        &mut self,
        kind: &'static str,
        name: &str,
        field: &'static str,
        l: &crate::resource::ResourceList,
    ) -> Result<Resource, ClusterError> {
        let (r, dropped) = self.resources.resource(l);
        if dropped.is_empty() {
            Ok(r)
        } else {
            Err(ClusterError::TooManyResources { kind, name: name.to_string(), field, dropped })
        }
    }

    /// Applies one change. On error the object is not stored (an older version, if any, stays).
    ///
    /// While a session layout is kept, the change is noted for [`Cluster::prepare`]; when the
    /// interner has grown past its limit, dead names are compacted away
    /// ([`Cluster::compact_names`]). [`Delta::Rescheduled`] changes no object: it leaves the
    /// generation and the kept layout as they are.
    pub fn apply(&mut self, d: Delta) -> Result<(), ClusterError> {
        if !matches!(d, Delta::Rescheduled { .. }) {
            self.generation += 1;
        }
        let r = self.apply_inner(d);
        if self.changes.len() > crate::limits::MAX_TRACKED_CHANGES.max(self.pod_index.len() / 4) {
            // Patching would cost about as much as a rebuild: stop tracking.
            self.changes = Changes { global: true, ..Changes::default() };
        }
        if self.names.len() > self.names_limit.max(crate::limits::MIN_INTERNER_COMPACT) {
            self.compact_names();
        }
        r
    }

    /// Notes a change for the kept layout (nothing is kept: nothing to note).
    fn note(&mut self, f: impl FnOnce(&mut Changes)) {
        if self.prepared.0.is_some() && !self.changes.global {
            f(&mut self.changes);
        }
    }

    fn remove_pod_numa(&mut self, namespace: &str, name: &str) {
        if let Some(m) = self.pod_numa.get_mut(namespace) {
            m.remove(name);
            if m.is_empty() {
                self.pod_numa.remove(namespace);
            }
        }
    }

    fn add_member(&mut self, p: &PodSpec, id: PodId) {
        if let Some(g) = &p.group {
            self.members.entry_ref(p.namespace.as_str()).or_default().entry_ref(g.as_str()).or_default().push(id);
        }
    }

    fn remove_member(&mut self, p: &PodSpec, id: PodId) {
        let Some(g) = &p.group else { return };
        let Some(by_group) = self.members.get_mut(p.namespace.as_str()) else { return };
        if let Some(v) = by_group.get_mut(g.as_str()) {
            v.retain(|&x| x != id);
            if v.is_empty() {
                by_group.remove(g.as_str());
            }
        }
        if by_group.is_empty() {
            self.members.remove(p.namespace.as_str());
        }
    }

    fn apply_inner(&mut self, d: Delta) -> Result<(), ClusterError> {
        match d {
            Delta::Node(n) => {
                let allocatable = self.resource("Node", &n.name, "status.allocatable", &n.allocatable)?;
                let rec = NodeRec {
                    name: self.names.intern(&n.name),
                    labels: compile::labels(&mut self.names, &n.labels),
                    taints: n
                        .taints
                        .iter()
                        .map(|t| CTaint { key: self.names.intern(&t.key), value: self.names.intern(&t.value), effect: t.effect })
                        .collect(),
                    allocatable,
                    spec: n,
                };
                match self.node_index.get(&rec.spec.name).copied() {
                    Some(id) => {
                        let was_ready = self.nodes[id.0 as usize].as_ref().is_some_and(|n| n.spec.ready);
                        let ready = rec.spec.ready;
                        self.nodes[id.0 as usize] = Some(Box::new(rec));
                        self.note(|c| if was_ready == ready { c.nodes.push(id) } else { c.global = true });
                    }
                    None => {
                        let name = rec.spec.name.clone();
                        let id = slot(&mut self.nodes, &mut self.free_nodes, rec);
                        self.node_index.insert(name, NodeId(id));
                        self.shard_memo = Default::default();
                        self.note(|c| c.global = true);
                    }
                }
            }
            Delta::NodeDeleted(name) => {
                self.numa_assumed.node_deleted(&name);
                if let Some(id) = self.node_index.remove(&name) {
                    self.nodes[id.0 as usize] = None;
                    self.free_nodes.push(id.0);
                    self.shard_memo = Default::default();
                    self.note(|c| c.global = true);
                }
            }
            Delta::Pod(mut p) => {
                p.nonzero_cpu_milli = p.nonzero_cpu_milli.clamp(0, crate::limits::MAX_QUANTITY);
                p.nonzero_memory_bytes = p.nonzero_memory_bytes.clamp(0, crate::limits::MAX_QUANTITY);
                let key = format!("{}/{}", p.namespace, p.name);
                let resreq = self.resource("Pod", &key, "spec.containers[].resources.requests", &p.resreq)?;
                if !self.numa_assumed.is_empty() {
                    let topos = &self.numatopologies;
                    self.numa_assumed.pod_changed(&p, |n| topos.get(n));
                }
                let rec = PodRec { c: compile::pod(&mut self.names, &p), resreq, generation: self.generation, spec: p };
                let k = (rec.spec.namespace.clone(), rec.spec.name.clone());
                let id = match self.pod_index.get(&k).copied() {
                    Some(id) => {
                        if let Some(old) = self.pods[id.0 as usize].take() {
                            if old.spec.group != rec.spec.group {
                                self.remove_member(&old.spec, id);
                                self.add_member(&rec.spec, id);
                            }
                        }
                        self.pods[id.0 as usize] = Some(Box::new(rec));
                        id
                    }
                    None => {
                        let spec_group = rec.spec.group.clone();
                        let ns = rec.spec.namespace.clone();
                        let id = PodId(slot(&mut self.pods, &mut self.free_pods, rec));
                        self.pod_index.insert(k, id);
                        if let Some(g) = spec_group {
                            self.members.entry(ns).or_default().entry(g).or_default().push(id);
                        }
                        id
                    }
                };
                self.note(|c| c.pods.push(id));
            }
            Delta::PodDeleted { namespace, name } => {
                self.remove_pod_numa(&namespace, &name);
                let topos = &self.numatopologies;
                self.numa_assumed.pod_deleted(&namespace, &name, |n| topos.get(n));
                let key = (namespace, name);
                if let Some(id) = self.pod_index.remove(&key) {
                    if let Some(old) = self.pods[id.0 as usize].take() {
                        self.remove_member(&old.spec, id);
                    }
                    self.free_pods.push(id.0);
                    self.note(|c| c.pods.push(id));
                }
            }
            Delta::PodGroup(g) => {
                let key = format!("{}/{}", g.namespace, g.name);
                if g.min_member < 0 {
                    return Err(ClusterError::Invalid {
                        kind: "PodGroup",
                        name: key,
                        field: "spec.minMember",
                        message: format!("must be >= 0, got {}", g.min_member),
                    });
                }
                let min_resources = match &g.min_resources {
                    Some(l) => Some(self.resource("PodGroup", &key, "spec.minResources", l)?),
                    None => None,
                };
                let min_task_member = g.min_task_member.iter().map(|(k, &v)| (self.names.intern(k), v)).collect();
                let uid = self.names.intern(&key);
                let rec = PodGroupRec { spec: g, uid, min_resources, min_task_member };
                let k = (rec.spec.namespace.clone(), rec.spec.name.clone());
                match self.group_index.get(&k).copied() {
                    Some(id) => {
                        let same_queue = self.groups[id.0 as usize].as_ref().is_some_and(|o| o.spec.queue == rec.spec.queue);
                        self.groups[id.0 as usize] = Some(Box::new(rec));
                        self.note(|c| if same_queue { c.groups.push(id) } else { c.groups_moved.push(id) });
                    }
                    None => {
                        let id = PodGroupId(slot(&mut self.groups, &mut self.free_groups, rec));
                        self.group_index.insert(k, id);
                        self.note(|c| c.groups_moved.push(id));
                    }
                }
            }
            Delta::PodGroupDeleted { namespace, name } => {
                if let Some(id) = self.group_index.remove(&(namespace, name)) {
                    self.groups[id.0 as usize] = None;
                    self.free_groups.push(id.0);
                    self.note(|c| c.groups_moved.push(id));
                }
            }
            Delta::Queue(q) => {
                let capability = if q.capability.is_empty() {
                    None
                } else {
                    Some(self.resource("Queue", &q.name, "spec.capability", &q.capability)?)
                };
                let guarantee = self.resource("Queue", &q.name, "spec.guarantee.resource", &q.guarantee)?;
                let deserved = if q.deserved.is_empty() {
                    None
                } else {
                    Some(self.resource("Queue", &q.name, "spec.deserved", &q.deserved)?)
                };
                // A new queue shifts the queue rows and may bring skipped PodGroups in; a changed
                // one only changes its record, which sessions read directly.
                if self.queues.insert(q.name.clone(), QueueRec { spec: q, capability, guarantee, deserved }).is_none() {
                    self.note(|c| c.global = true);
                }
            }
            Delta::QueueDeleted(name) => {
                if self.queues.remove(&name).is_some() {
                    self.note(|c| c.global = true);
                }
            }
            Delta::PriorityClass(pc) => {
                self.priority_classes.insert(pc.name.clone(), pc);
                self.note(|c| c.global = true);
            }
            Delta::PriorityClassDeleted(name) => {
                if self.priority_classes.remove(&name).is_some() {
                    self.note(|c| c.global = true);
                }
            }
            // Budgets and quotas are read by their plugins at session open, not laid out in
            // rows: the kept layout does not depend on them.
            Delta::PodDisruptionBudget(b) => {
                if let Some(r) = b.selector.match_expressions.iter().find(|r| !selector_requirement_valid(r)) {
                    return Err(ClusterError::Invalid {
                        kind: "PodDisruptionBudget",
                        name: format!("{}/{}", b.namespace, b.name),
                        field: "spec.selector.matchExpressions",
                        message: format!(
                            "operator {:?} on key {:?} with values {:?} is not a valid label selector",
                            r.op, r.key, r.values
                        ),
                    });
                }
                self.disruption_budgets.insert((b.namespace.clone(), b.name.clone()), b);
            }
            Delta::PodDisruptionBudgetDeleted { namespace, name } => {
                self.disruption_budgets.remove(&(namespace, name));
            }
            Delta::ResourceQuota(q) => {
                self.resource_quotas.insert((q.namespace.clone(), q.name.clone()), q);
            }
            Delta::ResourceQuotaDeleted { namespace, name } => {
                self.resource_quotas.remove(&(namespace, name));
            }
            // Read by the rescheduling plugin at session open, never laid out in rows.
            Delta::Rescheduled { at_ms } => self.rescheduled_ms = Some(at_ms),
            // Storage objects are read by the volume filters at session open.
            Delta::PersistentVolumeClaim(c) => {
                self.volumes.claims.insert((c.namespace.clone(), c.name.clone()), c);
            }
            Delta::PersistentVolumeClaimDeleted { namespace, name } => {
                self.volumes.claims.remove(&(namespace, name));
            }
            Delta::PersistentVolume(v) => {
                self.volumes.volumes.insert(v.name.clone(), v);
            }
            Delta::PersistentVolumeDeleted(name) => {
                self.volumes.volumes.remove(&name);
            }
            Delta::StorageClass(c) => {
                self.volumes.classes.insert(c.name.clone(), c);
            }
            Delta::StorageClassDeleted(name) => {
                self.volumes.classes.remove(&name);
            }
            Delta::CsiNode(n) => {
                self.volumes.csi_nodes.insert(n.name.clone(), n);
            }
            Delta::CsiNodeDeleted(name) => {
                self.volumes.csi_nodes.remove(&name);
            }
            // Resolved per session by the topology tables, never laid out in rows.
            Delta::HyperNode(h) => {
                self.hyper_nodes.insert(h.name.clone(), h);
            }
            Delta::HyperNodeDeleted(name) => {
                self.hyper_nodes.remove(&name);
            }
            // Resolved into the shard column of the next session ([`Cluster::shard_bits`]).
            Delta::NodeShard(s) => {
                if let Some(i) = s.nodes_desired.iter().position(String::is_empty) {
                    return Err(ClusterError::Invalid {
                        kind: "NodeShard",
                        name: s.name.clone(),
                        field: "spec.nodesDesired",
                        message: format!("entry {i} is an empty node name"),
                    });
                }
                self.node_shards.insert(s.name.clone(), s);
                self.shard_memo = Default::default();
            }
            Delta::NodeShardDeleted(name) => {
                if self.node_shards.remove(&name).is_some() {
                    self.shard_memo = Default::default();
                }
            }
            // Read by the numa-aware plugin at session open, never laid out in rows.
            Delta::Numatopology(t) => {
                check_numatopology(&t)?;
                self.numa_assumed.settle(&t.name, Some(&t));
                self.numatopologies.insert(t.name.clone(), t);
            }
            Delta::NumatopologyDeleted(name) => {
                self.numatopologies.remove(&name);
            }
            Delta::PodNuma { namespace, name, numa } => {
                if numa == PodNuma::default() {
                    self.remove_pod_numa(&namespace, &name);
                } else {
                    self.pod_numa.entry(namespace).or_default().insert(name, numa);
                }
            }
            Delta::PodNumaAssumed(a) => {
                let uid = match self.pod_index.get(&(a.namespace.clone(), a.name.clone())) {
                    Some(id) => self.pods[id.0 as usize].as_ref().map(|p| p.spec.uid.clone()).unwrap_or_default(),
                    None => return Ok(()),
                };
                let topo = self.numatopologies.get(&a.node);
                self.numa_assumed.insert(a, &uid, topo);
            }
        }
        Ok(())
    }

    /// Nodes in name order.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &NodeRec)> + '_ {
        self.node_index.values().map(|&id| (id, self.nodes[id.0 as usize].as_deref().expect("indexed node slot is filled")))
    }

    /// Pods in `namespace/name` order.
    pub fn pods(&self) -> impl Iterator<Item = (PodId, &PodRec)> + '_ {
        self.pod_index.values().map(|&id| (id, self.pods[id.0 as usize].as_deref().expect("indexed pod slot is filled")))
    }

    /// PodGroups in `namespace/name` order.
    pub fn pod_groups(&self) -> impl Iterator<Item = (PodGroupId, &PodGroupRec)> + '_ {
        self.group_index.values().map(|&id| (id, self.groups[id.0 as usize].as_deref().expect("indexed group slot is filled")))
    }

    /// Queues in name order.
    pub fn queues(&self) -> impl Iterator<Item = &QueueRec> + '_ {
        self.queues.values()
    }

    /// A queue by name.
    pub fn queue(&self, name: &str) -> Option<&QueueRec> {
        self.queues.get(name)
    }

    /// A node by id.
    pub fn node(&self, id: NodeId) -> Option<&NodeRec> {
        self.nodes.get(id.0 as usize).and_then(Option::as_deref)
    }

    /// A node id by name.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.node_index.get(name).copied()
    }

    /// A pod by id.
    pub fn pod(&self, id: PodId) -> Option<&PodRec> {
        self.pods.get(id.0 as usize).and_then(Option::as_deref)
    }

    /// A pod id by namespace and name.
    pub fn pod_id(&self, namespace: &str, name: &str) -> Option<PodId> {
        self.pod_index.get(&(namespace.to_string(), name.to_string())).copied()
    }

    /// A PodGroup by id.
    pub fn pod_group(&self, id: PodGroupId) -> Option<&PodGroupRec> {
        self.groups.get(id.0 as usize).and_then(Option::as_deref)
    }

    /// A PodGroup id by namespace and name.
    pub fn pod_group_id(&self, namespace: &str, name: &str) -> Option<PodGroupId> {
        self.group_index.get(&(namespace.to_string(), name.to_string())).copied()
    }

    /// PriorityClasses by name.
    pub fn priority_class(&self, name: &str) -> Option<&PriorityClassSpec> {
        self.priority_classes.get(name)
    }

    /// HyperNodes in name order.
    pub fn hyper_nodes(&self) -> impl Iterator<Item = &HyperNodeSpec> + '_ {
        self.hyper_nodes.values()
    }

    /// Numatopologies in name order.
    pub fn numatopologies(&self) -> impl Iterator<Item = &NumatopologySpec> + '_ {
        self.numatopologies.values()
    }

    /// The Numatopology of node `name`.
    pub fn numatopology(&self, name: &str) -> Option<&NumatopologySpec> {
        self.numatopologies.get(name)
    }

    /// What the `numa-aware` plugin reads of pod `namespace/name` (`None`: the pod is neither
    /// Guaranteed nor names a policy, or is unknown).
    pub fn pod_numa(&self, namespace: &str, name: &str) -> Option<&PodNuma> {
        self.pod_numa.get(namespace)?.get(name)
    }

    /// Every pod's [`PodNuma`] as `(namespace, name, numa)`, in `namespace/name` order.
    pub fn pod_numas(&self) -> impl Iterator<Item = (&str, &str, &PodNuma)> + '_ {
        self.pod_numa.iter().flat_map(|(ns, m)| m.iter().map(move |(n, p)| (ns.as_str(), n.as_str(), p)))
    }

    /// The CPU ids the `numa-aware` plugin takes from node `node`'s free CPUs at session open:
    /// those of the pods it bound there that the node's Numatopology does not list yet (all of
    /// the node's kept pods while any is unlisted, as Volcano; [`Delta::PodNumaAssumed`]).
    /// Ascending, each once.
    pub fn numa_pre_occupied(&self, node: &str) -> Vec<u32> {
        self.numa_assumed.pre_occupied(node, self.numatopologies.get(node))
    }

    /// Every pod's kept NUMA CPUs ([`Delta::PodNumaAssumed`]), by node then `namespace/name`.
    pub fn numa_assumed(&self) -> impl Iterator<Item = NumaAssumed> + '_ {
        self.numa_assumed.all()
    }

    /// Whether any pod has a [`PodNuma`] or any node a Numatopology (the `numa-aware` plugin
    /// has nothing to do otherwise).
    pub fn has_numa(&self) -> bool {
        !self.pod_numa.is_empty() || !self.numatopologies.is_empty()
    }

    /// NodeShards in name order.
    pub fn node_shards(&self) -> impl Iterator<Item = &NodeShardSpec> + Clone + '_ {
        self.node_shards.values()
    }

    /// The membership of shard `name` by node slot: resolved once after each change of the
    /// NodeShards or of the node set and kept for the sessions that follow (a session copies
    /// it into its node column, no name lookup per node or per pod). A name other than the
    /// kept one is resolved without being kept.
    pub fn shard_bits(&self, name: &str) -> std::borrow::Cow<'_, ShardBits> {
        let resolve = || {
            let set = crate::model::nodes_in_shard(self.node_shards.values(), name);
            let mut by_slot = vec![false; self.nodes.len()];
            if let Some(set) = &set {
                for n in set {
                    if let Some(id) = self.node_index.get(*n) {
                        by_slot[id.0 as usize] = true;
                    }
                }
            }
            ShardBits { name: name.to_string(), found: set.is_some(), by_slot }
        };
        let kept = self.shard_memo.get_or_init(resolve);
        if kept.name == name {
            std::borrow::Cow::Borrowed(kept)
        } else {
            std::borrow::Cow::Owned(resolve())
        }
    }

    /// What is wrong with the NodeShard of shard `name` for a scheduler that uses it, each
    /// message naming the object and field: no NodeShard of that name (then no node is in the
    /// shard: hard sharding places nothing, soft sharding treats every node as another
    /// shard's), or `spec.nodesDesired` entries naming nodes the cluster does not have (they
    /// are ignored until such a node appears). Empty when all is well.
    pub fn shard_problems(&self, name: &str) -> Vec<String> {
        let Some(s) = self.node_shards.get(name) else {
            return vec![format!(
                "NodeShard {name}: not found (--scheduler-sharding-name {name}): no node is in this scheduler's shard"
            )];
        };
        let unknown: Vec<&str> =
            s.nodes_desired.iter().filter(|n| !self.node_index.contains_key(*n)).map(String::as_str).collect();
        if unknown.is_empty() {
            return Vec::new();
        }
        vec![format!("NodeShard {name}: field spec.nodesDesired: unknown node(s) {}, ignored", unknown.join(", "))]
    }

    /// PriorityClasses in name order.
    pub fn priority_classes(&self) -> impl Iterator<Item = &PriorityClassSpec> + '_ {
        self.priority_classes.values()
    }

    /// PodDisruptionBudgets in `namespace/name` order.
    pub fn disruption_budgets(&self) -> impl Iterator<Item = &PodDisruptionBudgetSpec> + '_ {
        self.disruption_budgets.values()
    }

    /// ResourceQuotas of `namespace`, in name order.
    pub fn resource_quotas_in<'s>(&'s self, namespace: &str) -> impl Iterator<Item = &'s ResourceQuotaSpec> + 's {
        let from = (namespace.to_string(), String::new());
        let ns = namespace.to_string();
        self.resource_quotas.range(from..).take_while(move |((n, _), _)| *n == ns).map(|(_, q)| q)
    }

    /// ResourceQuotas in `namespace/name` order.
    pub fn resource_quotas(&self) -> impl Iterator<Item = &ResourceQuotaSpec> + '_ {
        self.resource_quotas.values()
    }

    /// The global default PriorityClass value, if one is marked `globalDefault` (the highest
    /// value wins when several are, as the admission plugin does).
    pub fn global_default_priority(&self) -> Option<i32> {
        self.priority_classes.values().filter(|p| p.global_default).map(|p| p.value).max()
    }

    /// Drops the kept layout (the next session open computes one; the next
    /// [`Cluster::prepare`] makes a fresh one).
    pub fn forget_prepared(&mut self) {
        self.prepared = kept::KeptSlot::default();
        self.spare = kept::KeptSlot::default();
        self.changes = Changes::default();
    }

    /// Pods whose `scheduling.k8s.io/group-name` is `name` in `namespace`, in no particular
    /// order (the PodGroup itself need not exist).
    pub fn pod_group_members(&self, namespace: &str, name: &str) -> &[PodId] {
        self.members.get(namespace).and_then(|m| m.get(name)).map(|v| &v[..]).unwrap_or(&[])
    }

    /// Number of pod slots (ids are below it).
    pub fn pod_slots(&self) -> usize {
        self.pods.len()
    }

    /// Number of node slots (ids are below it).
    pub fn node_slots(&self) -> usize {
        self.nodes.len()
    }

    /// Number of PodGroup slots (ids are below it).
    pub fn pod_group_slots(&self) -> usize {
        self.groups.len()
    }

    /// When the `rescheduling` plugin's strategies last ran, ms since the Unix epoch (the last
    /// [`Delta::Rescheduled`] applied); `None` when they never ran on this cluster copy.
    pub fn rescheduled_ms(&self) -> Option<i64> {
        self.rescheduled_ms
    }

    /// The storage objects (PVCs, PVs, StorageClasses, CSINodes).
    pub fn volumes(&self) -> &volumes::VolumeStore {
        &self.volumes
    }

    /// Bumped on every applied delta except [`Delta::Rescheduled`].
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Counts (nodes, pods, podgroups, queues).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        (self.node_index.len(), self.pod_index.len(), self.group_index.len(), self.queues.len())
    }
}
