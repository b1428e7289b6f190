//! The live scheduler's cluster copy: watch events in, core [`Delta`]s out, plus what the
//! scheduler itself has decided and the API has not confirmed yet (assumed binds).
//!
//! Rules (volcano-behaviour.md §1.3, kubernetes-api.md §7):
//! * A pod is kept when its `spec.schedulerName` is one of ours, or when it is bound to a node
//!   (its requests count there whoever scheduled it); anything else is dropped.
//! * **Assumed binds.** A pod the scheduler decided to bind counts on its node from the
//!   decision until the API shows it bound or the bind fails. A pod update that still has no
//!   `nodeName` meanwhile (a stale update, or the kubelet/status writes racing the bind) keeps
//!   the assumption: it never puts the pod back to pending (Volcano's double-bind bug). A bind
//!   slower than one period keeps reserving its node for as long as it runs.
//! * **Relists.** A watcher that relists (start, 410 Gone, reconnect) reports every object
//!   again between `Init` and `InitDone`; at `InitDone` whatever was not reported is removed,
//!   so a missed delete is not kept forever and nothing that still exists is lost.
//! * A bad object is skipped and reported (once per distinct problem), never a panic.

use crate::convert::{convert_csi_node, convert_persistent_volume, convert_persistent_volume_claim, convert_storage_class};
use crate::convert::{
    convert_hyper_node, convert_node, convert_node_shard, convert_numatopology, convert_pod, convert_pod_disruption_budget,
    convert_pod_group, convert_priority_class, convert_queue, convert_resource_quota, pod_numa,
};
use crate::crd;
use basalt_core::cluster::{Cluster, Delta, NodeId, PodId};
use basalt_core::model::PodSpec;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod, ResourceQuota};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kube::api::DynamicObject;
use kube::ResourceExt;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// `(namespace, name)`; cluster-scoped kinds use an empty namespace.
pub type Key = (String, String);

/// The kinds the scheduler watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `v1.Node`.
    Node,
    /// `v1.Pod`.
    Pod,
    /// `scheduling.volcano.sh/v1beta1` PodGroup.
    PodGroup,
    /// `scheduling.volcano.sh/v1beta1` Queue.
    Queue,
    /// `scheduling.k8s.io/v1` PriorityClass.
    PriorityClass,
    /// `policy/v1` (`policy/v1beta1` before 1.21) PodDisruptionBudget (`pdb` plugin).
    PodDisruptionBudget,
    /// `v1.ResourceQuota` (`resourcequota` plugin).
    ResourceQuota,
    /// `v1.PersistentVolumeClaim` (volume filters).
    PersistentVolumeClaim,
    /// `v1.PersistentVolume`.
    PersistentVolume,
    /// `storage.k8s.io/v1` StorageClass.
    StorageClass,
    /// `storage.k8s.io/v1` CSINode (attach limits).
    CsiNode,
    /// `topology.volcano.sh/v1alpha1` HyperNode (network topology).
    HyperNode,
    /// `shard.volcano.sh/v1alpha1` NodeShard (node sharding; watched only when
    /// `--scheduler-sharding-mode` is not `none`).
    NodeShard,
    /// `nodeinfo.volcano.sh/v1alpha1` Numatopology (the `numa-aware` plugin).
    Numatopology,
}

impl Kind {
    /// Every watched kind.
    pub const ALL: [Kind; 14] = [
        Kind::Node,
        Kind::Pod,
        Kind::PodGroup,
        Kind::Queue,
        Kind::PriorityClass,
        Kind::PodDisruptionBudget,
        Kind::ResourceQuota,
        Kind::PersistentVolumeClaim,
        Kind::PersistentVolume,
        Kind::StorageClass,
        Kind::CsiNode,
        Kind::HyperNode,
        Kind::NodeShard,
        Kind::Numatopology,
    ];

    fn ix(self) -> usize {
        self as usize
    }

    /// The API kind name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Node => "Node",
            Kind::Pod => "Pod",
            Kind::PodGroup => "PodGroup",
            Kind::Queue => "Queue",
            Kind::PriorityClass => "PriorityClass",
            Kind::PodDisruptionBudget => "PodDisruptionBudget",
            Kind::ResourceQuota => "ResourceQuota",
            Kind::PersistentVolumeClaim => "PersistentVolumeClaim",
            Kind::PersistentVolume => "PersistentVolume",
            Kind::StorageClass => "StorageClass",
            Kind::CsiNode => "CSINode",
            Kind::HyperNode => "HyperNode",
            Kind::NodeShard => "NodeShard",
            Kind::Numatopology => "Numatopology",
        }
    }
}

/// One object as a watcher reports it.
#[derive(Clone, Debug)]
pub enum Object {
    /// A Node.
    Node(Box<Node>),
    /// A Pod.
    Pod(Box<Pod>),
    /// A PodGroup, kept untyped so an update writes back every field it was read with.
    PodGroup(Box<DynamicObject>),
    /// A Queue, kept untyped for the same reason.
    Queue(Box<DynamicObject>),
    /// A PriorityClass.
    PriorityClass(Box<PriorityClass>),
    /// A PodDisruptionBudget, untyped: the server serves `policy/v1` or (before 1.21)
    /// `policy/v1beta1`, read alike.
    PodDisruptionBudget(Box<DynamicObject>),
    /// A ResourceQuota.
    ResourceQuota(Box<ResourceQuota>),
    /// A PersistentVolumeClaim.
    PersistentVolumeClaim(Box<PersistentVolumeClaim>),
    /// A PersistentVolume.
    PersistentVolume(Box<PersistentVolume>),
    /// A StorageClass.
    StorageClass(Box<StorageClass>),
    /// A CSINode.
    CsiNode(Box<CSINode>),
    /// A HyperNode.
    HyperNode(Box<crd::HyperNode>),
    /// A NodeShard.
    NodeShard(Box<crd::NodeShard>),
    /// A Numatopology.
    Numatopology(Box<crd::Numatopology>),
}

impl Object {
    /// The kind.
    pub fn kind(&self) -> Kind {
        match self {
            Object::Node(_) => Kind::Node,
            Object::Pod(_) => Kind::Pod,
            Object::PodGroup(_) => Kind::PodGroup,
            Object::Queue(_) => Kind::Queue,
            Object::PriorityClass(_) => Kind::PriorityClass,
            Object::PodDisruptionBudget(_) => Kind::PodDisruptionBudget,
            Object::ResourceQuota(_) => Kind::ResourceQuota,
            Object::PersistentVolumeClaim(_) => Kind::PersistentVolumeClaim,
            Object::PersistentVolume(_) => Kind::PersistentVolume,
            Object::StorageClass(_) => Kind::StorageClass,
            Object::CsiNode(_) => Kind::CsiNode,
            Object::HyperNode(_) => Kind::HyperNode,
            Object::NodeShard(_) => Kind::NodeShard,
            Object::Numatopology(_) => Kind::Numatopology,
        }
    }

    /// `(namespace, name)` (namespace `default` when a namespaced object has none).
    pub fn key(&self) -> Key {
        let ns = |n: Option<String>| n.filter(|s| !s.is_empty()).unwrap_or_else(|| crate::convert::DEFAULT_NAMESPACE.into());
        match self {
            Object::Node(o) => (String::new(), o.name_any()),
            Object::Pod(o) => (ns(o.namespace()), o.name_any()),
            Object::PodGroup(o) => (ns(o.namespace()), o.name_any()),
            Object::Queue(o) => (String::new(), o.name_any()),
            Object::PriorityClass(o) => (String::new(), o.name_any()),
            Object::PodDisruptionBudget(o) => (ns(o.namespace()), o.name_any()),
            Object::ResourceQuota(o) => (ns(o.namespace()), o.name_any()),
            Object::PersistentVolumeClaim(o) => (ns(o.namespace()), o.name_any()),
            Object::PersistentVolume(o) => (String::new(), o.name_any()),
            Object::StorageClass(o) => (String::new(), o.name_any()),
            Object::CsiNode(o) => (String::new(), o.name_any()),
            Object::HyperNode(o) => (String::new(), o.name_any()),
            Object::NodeShard(o) => (String::new(), o.name_any()),
            Object::Numatopology(o) => (String::new(), o.name_any()),
        }
    }
}

/// A watcher's report, tagged with the kind (kube-rs `watcher::Event`).
#[derive(Clone, Debug)]
pub enum WatchEvent {
    /// A (re)list of `Kind` starts.
    Init(Kind),
    /// An object of the (re)list.
    InitApply(Object),
    /// The (re)list is complete: objects of the kind it did not report are gone.
    InitDone(Kind),
    /// An object was added or changed.
    Apply(Object),
    /// An object was deleted.
    Delete(Object),
}

/// The `PodScheduled` condition as last seen or written: `(status, reason, message)`.
pub type PodScheduled = (String, String, String);

/// What the mirror keeps about a pod besides its core record.
#[derive(Clone, Debug, Default)]
struct PodMeta {
    uid: String,
    /// `PodScheduled` as the API last showed it.
    observed: Option<PodScheduled>,
    /// `PodScheduled` as the scheduler last wrote it (pending the watch's echo).
    written: Option<PodScheduled>,
    /// `status.nominatedNodeName` as the scheduler last wrote it.
    written_nominated: Option<String>,
}

/// A bind decided and not yet confirmed by the API.
#[derive(Clone, Debug)]
pub struct Assumed {
    /// The pod's UID when the bind was decided.
    pub uid: String,
    /// The chosen node.
    pub node: String,
    /// When the decision was taken.
    pub since: Instant,
}

/// A bind for the binder to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindRequest {
    /// Pod namespace.
    pub namespace: String,
    /// Pod name.
    pub name: String,
    /// Pod UID (sent in the Binding so a recreated pod of the same name is not bound).
    pub uid: String,
    /// Target node.
    pub node: String,
    /// Claims to bind before the Binding (the decision's volume binding), `None` when the
    /// pod's claims are all bound (or it has none).
    pub volumes: Option<basalt_core::model::VolumeBinding>,
    /// Annotations the decision put on the bind (`volcano.sh/gpu-index`, …), sent in the
    /// Binding's `metadata.annotations`; the API server copies them onto the pod.
    pub annotations: basalt_core::model::Labels,
    /// The node lock to take before the Binding (`deviceshare.NodeLockEnable`,
    /// [`super::node_lock`]); `None` for most binds.
    pub node_lock: Option<String>,
}

/// How one watch event changed the mirror (for logs and tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Stored.
    Stored,
    /// Removed from the copy (deleted, or no longer ours).
    Removed,
    /// Ignored: not ours and not bound, or unchanged.
    Ignored,
    /// A stale update of an assumed pod: its assumed node was kept.
    KeptAssumed,
    /// Refused: the object is invalid (the message names object and field).
    Refused(String),
}

/// The live cluster copy.
#[derive(Debug)]
pub struct Mirror {
    /// The core's cluster copy sessions are opened from.
    pub cluster: Cluster,
    scheduler_names: Vec<String>,
    node_selector: Vec<(String, String)>,
    pods: HashMap<Key, PodMeta>,
    assumed: HashMap<Key, Assumed>,
    pod_groups: HashMap<Key, DynamicObject>,
    queues: HashMap<String, DynamicObject>,
    nodes: HashSet<String>,
    priority_classes: HashSet<String>,
    budgets: HashSet<Key>,
    quotas: HashSet<Key>,
    /// Storage objects stored (PVC, PV, StorageClass, CSINode), by kind and key.
    storage: HashSet<(Kind, Key)>,
    /// HyperNodes stored, by name.
    hyper_nodes: HashSet<String>,
    /// NodeShards stored, by name.
    node_shards: HashSet<String>,
    /// Numatopologies stored, by name.
    numatopologies: HashSet<String>,
    /// Whether what node sharding is resolved from (NodeShards, the node set) changed since
    /// [`Mirror::take_shard_changed`].
    shard_changed: bool,
    /// Whether what the network topology is resolved from (HyperNodes, the node set or node
    /// labels, PodGroups' `networkTopology`) changed since [`Mirror::take_topology_changed`].
    topology_changed: bool,
    relist: [Option<HashSet<Key>>; Kind::ALL.len()],
    synced: [bool; Kind::ALL.len()],
    reported: HashMap<(Kind, Key), String>,
    /// Every delta applied to `cluster` since the last [`Mirror::take_journal`], in order, while
    /// journaling is on (the flight recorder's input; off by default).
    journal: Option<Vec<Delta>>,
    /// Objects refused so far (each distinct problem counted once).
    pub refused: u64,
    /// Pending pods of ours that name no PodGroup, reported once per PodGroup-to-be.
    ungrouped: super::ungrouped::Ungrouped,
}

impl Mirror {
    /// An empty mirror for pods of `scheduler_names` and nodes matching `node_selector`
    /// (`key:value` pairs, any one matching; empty = every node).
    pub fn new(scheduler_names: Vec<String>, node_selector: Vec<(String, String)>) -> Self {
        Mirror {
            cluster: Cluster::new(),
            scheduler_names,
            node_selector,
            pods: HashMap::new(),
            assumed: HashMap::new(),
            pod_groups: HashMap::new(),
            queues: HashMap::new(),
            nodes: HashSet::new(),
            priority_classes: HashSet::new(),
            budgets: HashSet::new(),
            quotas: HashSet::new(),
            storage: HashSet::new(),
            hyper_nodes: HashSet::new(),
            node_shards: HashSet::new(),
            numatopologies: HashSet::new(),
            shard_changed: true,
            topology_changed: false,
            relist: Default::default(),
            synced: [false; Kind::ALL.len()],
            reported: HashMap::new(),
            journal: None,
            refused: 0,
            ungrouped: Default::default(),
        }
    }

    /// Turns the journal of applied deltas on or off (on: every later change of `cluster` is
    /// also kept, in order, until [`Mirror::take_journal`]).
    pub fn set_journal(&mut self, on: bool) {
        self.journal = on.then(Vec::new);
    }

    /// The deltas applied since the last call (empty when journaling is off), including those
    /// the cluster refused: replaying them in order on a copy rebuilds the same state.
    pub fn take_journal(&mut self) -> Vec<Delta> {
        self.journal.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The one way the mirror changes `cluster`: applies `d`, journaled when on.
    fn put(&mut self, d: Delta) -> Result<(), basalt_core::cluster::ClusterError> {
        if let Some(j) = self.journal.as_mut() {
            j.push(d.clone());
        }
        self.cluster.apply(d)
    }

    /// Remembers that the `rescheduling` plugin's strategies ran in the cycle at `at_ms` (ms
    /// since the Unix epoch; the cycle's [`basalt_core::decision::Decisions::rescheduled_ms`]),
    /// as [`Delta::Rescheduled`] through the journal, so the flight recorder and a re-run see
    /// it. Cannot fail: the cluster refuses no such delta.
    pub fn note_rescheduled(&mut self, at_ms: i64) {
        if let Err(e) = self.put(Delta::Rescheduled { at_ms }) {
            tracing::error!("cluster copy refused the rescheduling time: {e}");
        }
    }

    /// Whether the network topology's inputs (HyperNodes, the node set or node labels,
    /// topology PodGroups) changed since the last call; clears the flag.
    pub fn take_topology_changed(&mut self) -> bool {
        std::mem::take(&mut self.topology_changed)
    }

    /// Whether the NodeShards or the node set changed since the last call (true before the
    /// first call); clears the flag.
    pub fn take_shard_changed(&mut self) -> bool {
        std::mem::take(&mut self.shard_changed)
    }

    /// Whether every kind has completed its first list.
    pub fn synced(&self) -> bool {
        self.synced.iter().all(|s| *s)
    }

    /// Kinds that have not completed their first list.
    pub fn unsynced(&self) -> Vec<Kind> {
        Kind::ALL.into_iter().filter(|k| !self.synced[k.ix()]).collect()
    }

    /// Binds decided and not yet confirmed.
    pub fn assumed(&self) -> &HashMap<Key, Assumed> {
        &self.assumed
    }

    /// The PodGroup object last seen (for a full update of its status).
    pub fn pod_group_object(&self, key: &Key) -> Option<&DynamicObject> {
        self.pod_groups.get(key)
    }

    /// The Queue object last seen.
    pub fn queue_object(&self, name: &str) -> Option<&DynamicObject> {
        self.queues.get(name)
    }

    /// Applies one watch event.
    pub fn handle(&mut self, ev: WatchEvent) -> Applied {
        match ev {
            WatchEvent::Init(kind) => {
                self.relist[kind.ix()] = Some(HashSet::new());
                Applied::Ignored
            }
            WatchEvent::InitApply(obj) => {
                let kind = obj.kind();
                if let Some(seen) = self.relist[kind.ix()].as_mut() {
                    seen.insert(obj.key());
                }
                self.apply(obj)
            }
            WatchEvent::InitDone(kind) => {
                let seen = self.relist[kind.ix()].take().unwrap_or_default();
                let gone = self.gone(kind, &seen);
                for k in &gone {
                    self.remove(kind, k);
                }
                self.synced[kind.ix()] = true;
                if gone.is_empty() {
                    Applied::Ignored
                } else {
                    tracing::info!(kind = kind.as_str(), removed = gone.len(), "relist removed objects that no longer exist");
                    Applied::Removed
                }
            }
            WatchEvent::Apply(obj) => self.apply(obj),
            WatchEvent::Delete(obj) => {
                let kind = obj.kind();
                let key = obj.key();
                self.remove(kind, &key)
            }
        }
    }

    /// The keys of `kind` stored here that a relist did not report (`seen`). Only those are
    /// cloned: at the end of a relist of a million pods, the stored keys are not copied.
    fn gone(&self, kind: Kind, seen: &HashSet<Key>) -> Vec<Key> {
        let named = |names: &mut dyn Iterator<Item = &String>| -> Vec<Key> {
            names.map(|n| (String::new(), n.clone())).filter(|k| !seen.contains(k)).collect()
        };
        let keyed = |keys: &mut dyn Iterator<Item = &Key>| -> Vec<Key> { keys.filter(|k| !seen.contains(*k)).cloned().collect() };
        match kind {
            Kind::Node => named(&mut self.nodes.iter()),
            Kind::Pod => keyed(&mut self.pods.keys()),
            Kind::PodGroup => keyed(&mut self.pod_groups.keys()),
            Kind::Queue => named(&mut self.queues.keys()),
            Kind::PriorityClass => named(&mut self.priority_classes.iter()),
            Kind::PodDisruptionBudget => keyed(&mut self.budgets.iter()),
            Kind::ResourceQuota => keyed(&mut self.quotas.iter()),
            Kind::PersistentVolumeClaim | Kind::PersistentVolume | Kind::StorageClass | Kind::CsiNode => {
                keyed(&mut self.storage.iter().filter(|(k, _)| *k == kind).map(|(_, key)| key))
            }
            Kind::HyperNode => named(&mut self.hyper_nodes.iter()),
            Kind::NodeShard => named(&mut self.node_shards.iter()),
            Kind::Numatopology => named(&mut self.numatopologies.iter()),
        }
    }

    fn remove(&mut self, kind: Kind, key: &Key) -> Applied {
        self.reported.remove(&(kind, key.clone()));
        let delta = match kind {
            Kind::Node => self.nodes.remove(&key.1).then(|| Delta::NodeDeleted(key.1.clone())),
            Kind::HyperNode => self.hyper_nodes.remove(&key.1).then(|| Delta::HyperNodeDeleted(key.1.clone())),
            Kind::NodeShard => self.node_shards.remove(&key.1).then(|| Delta::NodeShardDeleted(key.1.clone())),
            Kind::Numatopology => self.numatopologies.remove(&key.1).then(|| Delta::NumatopologyDeleted(key.1.clone())),
            Kind::Pod => {
                self.assumed.remove(key);
                self.pods.remove(key).map(|_| Delta::PodDeleted { namespace: key.0.clone(), name: key.1.clone() })
            }
            Kind::PodGroup => {
                self.pod_groups.remove(key).map(|_| Delta::PodGroupDeleted { namespace: key.0.clone(), name: key.1.clone() })
            }
            Kind::Queue => self.queues.remove(&key.1).map(|_| Delta::QueueDeleted(key.1.clone())),
            Kind::PriorityClass => self.priority_classes.remove(&key.1).then(|| Delta::PriorityClassDeleted(key.1.clone())),
            Kind::PodDisruptionBudget => self
                .budgets
                .remove(key)
                .then(|| Delta::PodDisruptionBudgetDeleted { namespace: key.0.clone(), name: key.1.clone() }),
            Kind::ResourceQuota => {
                self.quotas.remove(key).then(|| Delta::ResourceQuotaDeleted { namespace: key.0.clone(), name: key.1.clone() })
            }
            Kind::PersistentVolumeClaim | Kind::PersistentVolume | Kind::StorageClass | Kind::CsiNode => {
                self.storage.remove(&(kind, key.clone())).then(|| match kind {
                    Kind::PersistentVolumeClaim => {
                        Delta::PersistentVolumeClaimDeleted { namespace: key.0.clone(), name: key.1.clone() }
                    }
                    Kind::PersistentVolume => Delta::PersistentVolumeDeleted(key.1.clone()),
                    Kind::StorageClass => Delta::StorageClassDeleted(key.1.clone()),
                    _ => Delta::CsiNodeDeleted(key.1.clone()),
                })
            }
        };
        match delta {
            Some(d) => {
                if matches!(kind, Kind::Node | Kind::HyperNode | Kind::PodGroup) {
                    self.topology_changed = true;
                }
                self.shard_changed |= matches!(kind, Kind::Node | Kind::NodeShard);
                // Deletes of stored objects cannot be refused.
                let _ = self.put(d);
                Applied::Removed
            }
            None => Applied::Ignored,
        }
    }

    fn refuse(&mut self, kind: Kind, key: &Key, message: String) -> Applied {
        if self.reported.get(&(kind, key.clone())) != Some(&message) {
            tracing::warn!(kind = kind.as_str(), object = %display_key(key), "skipped: {message}");
            self.reported.insert((kind, key.clone()), message.clone());
            self.refused += 1;
        }
        Applied::Refused(message)
    }

    fn store(&mut self, kind: Kind, key: &Key, d: Delta) -> Result<(), Applied> {
        match self.put(d) {
            Ok(()) => {
                self.reported.remove(&(kind, key.clone()));
                Ok(())
            }
            Err(e) => Err(self.refuse(kind, key, e.to_string())),
        }
    }

    fn apply(&mut self, obj: Object) -> Applied {
        let kind = obj.kind();
        let key = obj.key();
        match obj {
            Object::Node(n) => {
                let spec = match convert_node(&n) {
                    Ok(s) => s,
                    Err(e) => return self.refuse(kind, &key, e.to_string()),
                };
                let selected = self.node_selector.is_empty()
                    || self.node_selector.iter().any(|(k, v)| spec.labels.get(k).is_some_and(|x| x == v));
                if !selected {
                    return self.remove(kind, &key);
                }
                let old_labels = self.cluster.node_id(&spec.name).and_then(|id| self.cluster.node(id)).map(|n| &n.spec.labels);
                if old_labels != Some(&spec.labels) {
                    self.topology_changed = true;
                }
                if let Err(a) = self.store(kind, &key, Delta::Node(spec)) {
                    return a;
                }
                self.shard_changed |= self.nodes.insert(key.1);
                Applied::Stored
            }
            Object::Pod(p) => self.apply_pod(&p, key),
            Object::PodGroup(o) => {
                let typed: crd::PodGroup = match o.clone().try_parse() {
                    Ok(t) => t,
                    Err(e) => return self.refuse(kind, &key, format!("PodGroup {}: {e}", display_key(&key))),
                };
                let spec = match convert_pod_group(&typed) {
                    Ok(s) => s,
                    Err(e) => return self.refuse(kind, &key, e.to_string()),
                };
                let topology = spec.network_topology.is_some() || !spec.sub_group_policy.is_empty();
                if let Err(a) = self.store(kind, &key, Delta::PodGroup(spec)) {
                    return a;
                }
                self.pod_groups.insert(key, *o);
                self.topology_changed |= topology;
                Applied::Stored
            }
            Object::Queue(o) => {
                let typed: crd::Queue = match o.clone().try_parse() {
                    Ok(t) => t,
                    Err(e) => return self.refuse(kind, &key, format!("Queue {}: {e}", key.1)),
                };
                let spec = match convert_queue(&typed) {
                    Ok(s) => s,
                    Err(e) => return self.refuse(kind, &key, e.to_string()),
                };
                if let Err(a) = self.store(kind, &key, Delta::Queue(spec)) {
                    return a;
                }
                self.queues.insert(key.1, *o);
                Applied::Stored
            }
            Object::PriorityClass(pc) => {
                let spec = match convert_priority_class(&pc) {
                    Ok(s) => s,
                    Err(e) => return self.refuse(kind, &key, e.to_string()),
                };
                if let Err(a) = self.store(kind, &key, Delta::PriorityClass(spec)) {
                    return a;
                }
                self.priority_classes.insert(key.1);
                Applied::Stored
            }
            Object::PodDisruptionBudget(o) => {
                let spec = match pdb_of(&o).and_then(|b| convert_pod_disruption_budget(&b).map_err(|e| e.to_string())) {
                    Ok(s) => s,
                    Err(e) => return self.refuse(kind, &key, e),
                };
                if let Err(a) = self.store(kind, &key, Delta::PodDisruptionBudget(spec)) {
                    return a;
                }
                self.budgets.insert(key);
                Applied::Stored
            }
            Object::ResourceQuota(q) => {
                let spec = match convert_resource_quota(&q) {
                    Ok(s) => s,
                    Err(e) => return self.refuse(kind, &key, e.to_string()),
                };
                if let Err(a) = self.store(kind, &key, Delta::ResourceQuota(spec)) {
                    return a;
                }
                self.quotas.insert(key);
                Applied::Stored
            }
            Object::PersistentVolumeClaim(o) => {
                let d = convert_persistent_volume_claim(&o).map(Delta::PersistentVolumeClaim);
                self.apply_storage(kind, key, d)
            }
            Object::PersistentVolume(o) => {
                let d = convert_persistent_volume(&o).map(Delta::PersistentVolume);
                self.apply_storage(kind, key, d)
            }
            Object::StorageClass(o) => {
                let d = convert_storage_class(&o).map(Delta::StorageClass);
                self.apply_storage(kind, key, d)
            }
            Object::CsiNode(o) => {
                let d = convert_csi_node(&o).map(Delta::CsiNode);
                self.apply_storage(kind, key, d)
            }
            Object::HyperNode(h) => {
                let spec = match convert_hyper_node(&h) {
                    Ok(s) => s,
                    Err(e) => return self.refuse(kind, &key, e.to_string()),
                };
                if let Err(a) = self.store(kind, &key, Delta::HyperNode(spec)) {
                    return a;
                }
                self.hyper_nodes.insert(key.1);
                self.topology_changed = true;
                Applied::Stored
            }
            Object::NodeShard(o) => {
                let spec = match convert_node_shard(&o) {
                    Ok(s) => s,
                    Err(e) => return self.refuse(kind, &key, e.to_string()),
                };
                if let Err(a) = self.store(kind, &key, Delta::NodeShard(spec)) {
                    return a;
                }
                self.node_shards.insert(key.1);
                self.shard_changed = true;
                Applied::Stored
            }
            Object::Numatopology(o) => {
                // A Numatopology that cannot be read must not leave a stale one (its free CPUs)
                // in use: the node is then one without NUMA information.
                let spec = match convert_numatopology(&o) {
                    Ok(s) => s,
                    Err(e) => {
                        self.remove_keeping_report(kind, &key);
                        return self.refuse(kind, &key, e.to_string());
                    }
                };
                if let Err(a) = self.store(kind, &key, Delta::Numatopology(spec)) {
                    self.remove_keeping_report(kind, &key);
                    return a;
                }
                self.numatopologies.insert(key.1);
                Applied::Stored
            }
        }
    }

    /// Removes a stored object and keeps what was reported about it (a refused update).
    fn remove_keeping_report(&mut self, kind: Kind, key: &Key) {
        let reported = self.reported.remove(&(kind, key.clone()));
        self.remove(kind, key);
        if let Some(r) = reported {
            self.reported.insert((kind, key.clone()), r);
        }
    }

    /// Stores a converted storage object (or refuses it, naming the field).
    fn apply_storage(&mut self, kind: Kind, key: Key, d: Result<Delta, crate::convert::ConvertError>) -> Applied {
        let d = match d {
            Ok(d) => d,
            Err(e) => return self.refuse(kind, &key, e.to_string()),
        };
        if let Err(a) = self.store(kind, &key, d) {
            return a;
        }
        self.storage.insert((kind, key));
        Applied::Stored
    }

    fn apply_pod(&mut self, pod: &Pod, key: Key) -> Applied {
        let mut spec = match convert_pod(pod) {
            Ok(s) => s,
            Err(e) => {
                // A pod we cannot read must not keep a stale version counting on a node.
                let reported = self.reported.remove(&(Kind::Pod, key.clone()));
                self.remove(Kind::Pod, &key);
                if let Some(r) = reported {
                    self.reported.insert((Kind::Pod, key.clone()), r);
                }
                return self.refuse(Kind::Pod, &key, e.to_string());
            }
        };
        let ours = self.scheduler_names.contains(&spec.scheduler_name);
        let terminal = matches!(spec.phase, basalt_core::model::PodPhase::Succeeded | basalt_core::model::PodPhase::Failed);
        if !(ours || (!spec.node_name.is_empty() && !terminal)) {
            return self.remove(Kind::Pod, &key);
        }
        if ours && spec.group.is_none() && spec.node_name.is_empty() && !spec.deleting && !terminal {
            self.ungrouped.note(pod);
        }
        let mut result = Applied::Stored;
        if let Some(a) = self.assumed.get(&key) {
            if a.uid != spec.uid {
                // Recreated under the same name: the decision was for another pod.
                self.assumed.remove(&key);
            } else if spec.node_name.is_empty() && !spec.deleting && !terminal {
                spec.node_name = a.node.clone();
                result = Applied::KeptAssumed;
            } else {
                // Bound (by us or anyone: the API's word wins), deleting, or finished.
                self.assumed.remove(&key);
            }
        }
        let observed = pod_scheduled(pod);
        let uid = spec.uid.clone();
        if let Err(a) = self.store(Kind::Pod, &key, Delta::Pod(spec)) {
            return a;
        }
        // What numa-aware reads of the pod, sent only when it changes (the cluster refuses
        // no such delta).
        let numa = pod_numa(pod);
        let changed = match self.cluster.pod_numa(&key.0, &key.1) {
            Some(old) => *old != numa,
            None => numa.relevant(),
        };
        if changed {
            let _ = self.put(Delta::PodNuma { namespace: key.0.clone(), name: key.1.clone(), numa });
        }
        let meta = self.pods.entry(key).or_default();
        if meta.uid != uid {
            *meta = PodMeta { uid, ..Default::default() };
        }
        meta.observed = observed;
        result
    }

    /// Records what a bind's volume binding will write (the PVs' `claimRef`s) in the cluster
    /// copy at once, as kube-scheduler's assume cache does: later cycles do not offer those PVs
    /// to other claims while the PV controller works. The watch's echo replaces it.
    pub fn assume_volumes(&mut self, vb: &basalt_core::model::VolumeBinding) {
        for (claim, pv) in &vb.bind {
            let Some(spec) = self.cluster.volumes().volumes.get(pv) else { continue };
            let mut spec = spec.clone();
            let uid = self.cluster.volumes().claim(&vb.namespace, claim).map(|c| c.uid.clone()).unwrap_or_default();
            spec.claim_ref = Some(basalt_core::model::ClaimRef { namespace: vb.namespace.clone(), name: claim.clone(), uid });
            let _ = self.put(Delta::PersistentVolume(spec));
        }
    }

    /// Records that a bind takes node lock `name` on `node` at `now_ms`
    /// (`deviceshare.NodeLockEnable`): the node carries the lock from now on, as it will once
    /// the binder has written it, so the next cycle does not send the node another device pod
    /// before the node's watch event arrives.
    pub fn assume_node_lock(&mut self, node: NodeId, name: &str, now_ms: i64) {
        let Some(rec) = self.cluster.node(node) else { return };
        let mut spec = rec.spec.clone();
        spec.devices.locks.retain(|l| l.name != name);
        spec.devices.locks.push(basalt_core::model::NodeLock { name: name.to_string(), since_ms: Some(now_ms) });
        let _ = self.put(Delta::Node(spec));
    }

    /// Records the CPUs numa-aware assigned a pod just assumed on its node
    /// ([`Delta::PodNumaAssumed`]): later cycles do not offer them again until the node's
    /// Numatopology lists the pod (Volcano `AddUnassignedNumaPods`).
    pub fn assume_numa(&mut self, a: basalt_core::model::NumaAssumed) {
        if let Err(e) = self.put(Delta::PodNumaAssumed(a)) {
            tracing::warn!("numa-aware CPUs not kept: {e}");
        }
    }

    /// Records the decision to bind `pod` to `node`: the pod counts on the node from now on.
    /// Returns the bind to send, or `None` when the pod or node is gone.
    pub fn assume(&mut self, pod: PodId, node: NodeId, annotations: &basalt_core::model::Labels) -> Option<BindRequest> {
        let node_name = self.cluster.node(node)?.spec.name.clone();
        // The assumed pod holds its cards as the bound pod will (the API server copies the
        // Binding's annotations onto it), so the next cycle does not give them out again.
        let spec: PodSpec = self.cluster.pod(pod)?.spec.bound(&node_name, annotations);
        let key = (spec.namespace.clone(), spec.name.clone());
        let req = BindRequest {
            namespace: spec.namespace.clone(),
            name: spec.name.clone(),
            uid: spec.uid.clone(),
            node: node_name,
            volumes: None,
            annotations: annotations.clone(),
            node_lock: None,
        };
        self.assumed.insert(key, Assumed { uid: spec.uid.clone(), node: req.node.clone(), since: Instant::now() });
        self.put(Delta::Pod(spec)).ok()?;
        Some(req)
    }

    /// A bind failed for good: the pod is pending again (unless the API has meanwhile shown it
    /// bound, or it is gone). Returns whether it went back to pending.
    pub fn bind_failed(&mut self, req: &BindRequest) -> bool {
        let key = (req.namespace.clone(), req.name.clone());
        match self.assumed.get(&key) {
            Some(a) if a.uid == req.uid && a.node == req.node => {}
            _ => return false,
        }
        self.assumed.remove(&key);
        let Some(id) = self.cluster.pod_id(&req.namespace, &req.name) else { return false };
        let Some(rec) = self.cluster.pod(id) else { return false };
        let mut spec = rec.spec.clone();
        spec.node_name.clear();
        self.put(Delta::Pod(spec)).is_ok()
    }

    /// The `PodScheduled` condition last written or observed for `key` (written wins until
    /// the pod changes UID).
    pub fn pod_scheduled(&self, key: &Key) -> Option<&PodScheduled> {
        let m = self.pods.get(key)?;
        m.written.as_ref().or(m.observed.as_ref())
    }

    /// Notes that `PodScheduled` was written as `cond` for the pod `key` with `uid`.
    pub fn note_written(&mut self, key: &Key, uid: &str, cond: PodScheduled) {
        if let Some(m) = self.pods.get_mut(key) {
            if m.uid == uid {
                m.written = Some(cond);
            }
        }
    }

    /// The pod's `status.nominatedNodeName`: as last written by the scheduler, else as the
    /// API last showed it (empty when unset or the pod is unknown).
    pub fn nominated(&self, key: &Key) -> &str {
        if let Some(n) = self.pods.get(key).and_then(|m| m.written_nominated.as_deref()) {
            return n;
        }
        let id = self.cluster.pod_id(&key.0, &key.1);
        id.and_then(|id| self.cluster.pod(id)).map_or("", |p| p.spec.nominated_node_name.as_str())
    }

    /// Notes that `status.nominatedNodeName` was written as `node` for the pod `key` with `uid`.
    pub fn note_nominated(&mut self, key: &Key, uid: &str, node: &str) {
        if let Some(m) = self.pods.get_mut(key) {
            if m.uid == uid {
                m.written_nominated = Some(node.to_string());
            }
        }
    }

    /// The UID of a kept pod.
    pub fn pod_uid(&self, key: &Key) -> Option<&str> {
        self.pods.get(key).map(|m| m.uid.as_str())
    }
}

/// A PodDisruptionBudget of either API version as the `policy/v1` type (the fields the plugin
/// reads are the same in `policy/v1beta1`). Errors: the object does not have that shape.
pub fn pdb_of(o: &DynamicObject) -> Result<k8s_openapi::api::policy::v1::PodDisruptionBudget, String> {
    let mut v = serde_json::to_value(o).map_err(|e| format!("PodDisruptionBudget: {e}"))?;
    if let Some(m) = v.as_object_mut() {
        m.insert("apiVersion".into(), "policy/v1".into());
        m.insert("kind".into(), "PodDisruptionBudget".into());
    }
    serde_json::from_value(v).map_err(|e| format!("PodDisruptionBudget {}: {e}", o.name_any()))
}

/// `ns/name`, or `name` for cluster-scoped objects.
pub fn display_key(k: &Key) -> String {
    if k.0.is_empty() {
        k.1.clone()
    } else {
        format!("{}/{}", k.0, k.1)
    }
}

fn pod_scheduled(pod: &Pod) -> Option<PodScheduled> {
    let c = pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "PodScheduled")?;
    Some((c.status.clone(), c.reason.clone().unwrap_or_default(), c.message.clone().unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1 as k8s;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use kube::api::ObjectMeta;

    fn node(name: &str, cpu: &str) -> Object {
        Object::Node(Box::new(k8s::Node {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            status: Some(k8s::NodeStatus {
                allocatable: Some(
                    [("cpu".to_string(), Quantity(cpu.into())), ("pods".to_string(), Quantity("110".into()))].into(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    fn pod(name: &str, uid: &str, node: &str, scheduler: &str) -> Object {
        Object::Pod(Box::new(k8s::Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                uid: Some(uid.into()),
                annotations: Some([("scheduling.k8s.io/group-name".to_string(), "pg".to_string())].into()),
                ..Default::default()
            },
            spec: Some(k8s::PodSpec {
                scheduler_name: Some(scheduler.into()),
                node_name: (!node.is_empty()).then(|| node.to_string()),
                containers: vec![k8s::Container {
                    name: "c".into(),
                    resources: Some(k8s::ResourceRequirements {
                        requests: Some([("cpu".to_string(), Quantity("1".into()))].into()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: Some(k8s::PodStatus { phase: Some("Pending".into()), ..Default::default() }),
        }))
    }

    fn mirror() -> Mirror {
        let mut m = Mirror::new(vec!["volcano".into()], vec![]);
        for k in Kind::ALL {
            m.handle(WatchEvent::Init(k));
            m.handle(WatchEvent::InitDone(k));
        }
        m.handle(WatchEvent::Apply(node("n1", "4")));
        m
    }

    fn node_of(m: &Mirror, name: &str) -> String {
        let id = m.cluster.pod_id("ns", name).unwrap();
        m.cluster.pod(id).unwrap().spec.node_name.clone()
    }

    #[test]
    fn an_assumed_node_lock_is_on_the_node_for_the_next_cycle() {
        let mut m = mirror();
        let n = m.cluster.node_id("n1").unwrap();
        m.assume_node_lock(n, "hamivgpu", 5_000);
        m.assume_node_lock(n, "hamivgpu", 6_000);
        let want = vec![basalt_core::model::NodeLock { name: "hamivgpu".into(), since_ms: Some(6_000) }];
        assert_eq!(m.cluster.node(n).unwrap().spec.devices.locks, want, "one lock per name, the latest time");
    }

    #[test]
    fn stale_update_does_not_undo_an_assumed_bind() {
        let mut m = mirror();
        m.handle(WatchEvent::Apply(pod("a", "u1", "", "volcano")));
        let (p, n) = (m.cluster.pod_id("ns", "a").unwrap(), m.cluster.node_id("n1").unwrap());
        let req = m.assume(p, n, &Default::default()).unwrap();
        assert_eq!(
            req,
            BindRequest {
                namespace: "ns".into(),
                name: "a".into(),
                uid: "u1".into(),
                node: "n1".into(),
                volumes: None,
                annotations: Default::default(),
                node_lock: None,
            }
        );
        assert_eq!(node_of(&m, "a"), "n1");
        // An update still without nodeName (e.g. a status write) arrives before the bind lands.
        assert_eq!(m.handle(WatchEvent::Apply(pod("a", "u1", "", "volcano"))), Applied::KeptAssumed);
        assert_eq!(node_of(&m, "a"), "n1", "the pod keeps reserving its node");
        // The API confirms the bind.
        assert_eq!(m.handle(WatchEvent::Apply(pod("a", "u1", "n1", "volcano"))), Applied::Stored);
        assert!(m.assumed().is_empty());
        assert!(!m.bind_failed(&req), "a confirmed bind cannot fail afterwards");
        assert_eq!(node_of(&m, "a"), "n1");
    }

    #[test]
    fn failed_bind_returns_the_pod_to_pending() {
        let mut m = mirror();
        m.handle(WatchEvent::Apply(pod("a", "u1", "", "volcano")));
        let req = m.assume(m.cluster.pod_id("ns", "a").unwrap(), m.cluster.node_id("n1").unwrap(), &Default::default()).unwrap();
        assert!(m.bind_failed(&req));
        assert_eq!(node_of(&m, "a"), "");
        assert!(m.assumed().is_empty());
    }

    #[test]
    fn recreated_pod_drops_the_assumption() {
        let mut m = mirror();
        m.handle(WatchEvent::Apply(pod("a", "u1", "", "volcano")));
        let req = m.assume(m.cluster.pod_id("ns", "a").unwrap(), m.cluster.node_id("n1").unwrap(), &Default::default()).unwrap();
        m.handle(WatchEvent::Apply(pod("a", "u2", "", "volcano")));
        assert_eq!(node_of(&m, "a"), "", "a new pod of the same name is pending");
        assert!(!m.bind_failed(&req));
    }

    #[test]
    fn pods_of_other_schedulers_count_only_when_bound() {
        let mut m = mirror();
        assert_eq!(m.handle(WatchEvent::Apply(pod("x", "u1", "", "default-scheduler"))), Applied::Ignored);
        assert!(m.cluster.pod_id("ns", "x").is_none());
        assert_eq!(m.handle(WatchEvent::Apply(pod("y", "u2", "n1", "default-scheduler"))), Applied::Stored);
        assert!(m.cluster.pod_id("ns", "y").is_some());
    }

    fn budget(name: &str, api_version: &str, min_available: i64) -> Object {
        let v = serde_json::json!({
            "apiVersion": api_version,
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
        });
        Object::PodDisruptionBudget(Box::new(serde_json::from_value(v).unwrap()))
    }

    fn quota(name: &str, cpu: &str) -> Object {
        Object::ResourceQuota(Box::new(k8s::ResourceQuota {
            metadata: ObjectMeta { name: Some(name.into()), namespace: Some("ns".into()), ..Default::default() },
            spec: Some(k8s::ResourceQuotaSpec {
                hard: Some([("cpu".to_string(), Quantity(cpu.into()))].into()),
                ..Default::default()
            }),
            status: None,
        }))
    }

    #[test]
    fn budgets_and_quotas_become_deltas_and_resync_on_relist() {
        let mut m = mirror();
        assert_eq!(m.handle(WatchEvent::Apply(budget("old", "policy/v1beta1", 1))), Applied::Stored);
        assert_eq!(m.handle(WatchEvent::Apply(budget("new", "policy/v1", 2))), Applied::Stored);
        assert_eq!(m.handle(WatchEvent::Apply(quota("q", "4"))), Applied::Stored);
        let mins: Vec<_> = m.cluster.disruption_budgets().map(|b| (b.name.clone(), b.min_available)).collect();
        assert_eq!(
            mins,
            [
                ("new".to_string(), Some(basalt_core::model::IntOrPercent::Int(2))),
                ("old".to_string(), Some(basalt_core::model::IntOrPercent::Int(1)))
            ]
        );
        assert_eq!(m.cluster.resource_quotas_in("ns").next().map(|q| q.hard["cpu"]), Some(4000));
        // A bad budget is refused naming its field, and the stored one stays.
        let bad = budget("new", "policy/v1", -1);
        assert!(matches!(m.handle(WatchEvent::Apply(bad)), Applied::Refused(msg) if msg.contains("spec.minAvailable")));
        assert_eq!(m.cluster.disruption_budgets().count(), 2);
        // Relists remove what vanished.
        m.handle(WatchEvent::Init(Kind::PodDisruptionBudget));
        m.handle(WatchEvent::InitApply(budget("old", "policy/v1beta1", 1)));
        m.handle(WatchEvent::InitDone(Kind::PodDisruptionBudget));
        assert_eq!(m.cluster.disruption_budgets().map(|b| b.name.as_str()).collect::<Vec<_>>(), ["old"]);
        m.handle(WatchEvent::Init(Kind::ResourceQuota));
        m.handle(WatchEvent::InitDone(Kind::ResourceQuota));
        assert_eq!(m.cluster.resource_quotas().count(), 0);
        assert_eq!(m.handle(WatchEvent::Delete(budget("old", "policy/v1beta1", 1))), Applied::Removed);
        assert_eq!(m.cluster.disruption_budgets().count(), 0);
    }

    #[test]
    fn relist_removes_what_vanished_and_keeps_the_rest() {
        let mut m = mirror();
        m.handle(WatchEvent::Apply(pod("a", "u1", "", "volcano")));
        m.handle(WatchEvent::Apply(pod("b", "u2", "", "volcano")));
        m.handle(WatchEvent::Init(Kind::Pod));
        m.handle(WatchEvent::InitApply(pod("b", "u2", "", "volcano")));
        assert!(m.cluster.pod_id("ns", "a").is_some(), "nothing is removed before the relist completes");
        m.handle(WatchEvent::InitDone(Kind::Pod));
        assert!(m.cluster.pod_id("ns", "a").is_none());
        assert!(m.cluster.pod_id("ns", "b").is_some());
    }

    #[test]
    fn bad_objects_are_refused_and_reported_once() {
        let mut m = mirror();
        let mut bad = pod("a", "u1", "", "volcano");
        if let Object::Pod(p) = &mut bad {
            p.spec.as_mut().unwrap().containers[0]
                .resources
                .as_mut()
                .unwrap()
                .requests
                .as_mut()
                .unwrap()
                .insert("cpu".into(), Quantity("lots".into()));
        }
        match m.handle(WatchEvent::Apply(bad.clone())) {
            Applied::Refused(msg) => assert!(msg.contains("ns/a") && msg.contains("cpu"), "{msg}"),
            other => panic!("{other:?}"),
        }
        m.handle(WatchEvent::Apply(bad));
        assert_eq!(m.refused, 1);
    }

    #[test]
    fn node_selector_keeps_only_matching_nodes() {
        let mut m = Mirror::new(vec!["volcano".into()], vec![("pool".into(), "gpu".into())]);
        m.handle(WatchEvent::Apply(node("n1", "4")));
        assert!(m.cluster.node_id("n1").is_none());
        let mut n = node("n2", "4");
        if let Object::Node(o) = &mut n {
            o.metadata.labels = Some([("pool".to_string(), "gpu".to_string())].into());
        }
        m.handle(WatchEvent::Apply(n));
        assert!(m.cluster.node_id("n2").is_some());
    }

    fn hyper_node(name: &str, tier: i32, members: &[&str]) -> Object {
        let members: Vec<_> =
            members.iter().map(|n| serde_json::json!({"type": "Node", "selector": {"exactMatch": {"name": n}}})).collect();
        let v = serde_json::json!({
            "apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
            "metadata": {"name": name}, "spec": {"tier": tier, "members": members},
        });
        Object::HyperNode(Box::new(serde_json::from_value(v).unwrap()))
    }

    fn hyper_nodes(m: &Mirror) -> Vec<(String, i32, usize)> {
        m.cluster.hyper_nodes().map(|h| (h.name.clone(), h.tier, h.members.len())).collect()
    }

    #[test]
    fn hyper_nodes_are_added_changed_and_deleted_and_flag_the_topology() {
        let mut m = mirror();
        m.take_topology_changed();
        assert_eq!(m.handle(WatchEvent::Apply(hyper_node("leaf-0", 1, &["n1"]))), Applied::Stored);
        assert_eq!(hyper_nodes(&m), [("leaf-0".to_string(), 1, 1)]);
        assert!(m.take_topology_changed(), "an added HyperNode changes the topology");
        assert!(!m.take_topology_changed(), "the flag clears when taken");
        // Changed members replace the stored HyperNode.
        assert_eq!(m.handle(WatchEvent::Apply(hyper_node("leaf-0", 1, &["n1", "n2"]))), Applied::Stored);
        assert_eq!(hyper_nodes(&m), [("leaf-0".to_string(), 1, 2)]);
        assert!(m.take_topology_changed());
        // A bad one is refused naming object and field; the stored version stays.
        let mut bad = hyper_node("leaf-0", 1, &["n1"]);
        if let Object::HyperNode(h) = &mut bad {
            h.spec.members.as_mut().unwrap()[0].type_ = Some("Switch".into());
        }
        match m.handle(WatchEvent::Apply(bad)) {
            Applied::Refused(msg) => assert!(msg.contains("HyperNode leaf-0") && msg.contains("spec.members[0].type"), "{msg}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(hyper_nodes(&m), [("leaf-0".to_string(), 1, 2)]);
        // Deleted.
        assert_eq!(m.handle(WatchEvent::Delete(hyper_node("leaf-0", 1, &[]))), Applied::Removed);
        assert!(hyper_nodes(&m).is_empty());
        assert!(m.take_topology_changed(), "a deleted HyperNode changes the topology");
        // A relist drops the HyperNodes that vanished.
        m.handle(WatchEvent::Apply(hyper_node("leaf-1", 1, &["n1"])));
        m.handle(WatchEvent::Apply(hyper_node("leaf-2", 1, &["n1"])));
        m.handle(WatchEvent::Init(Kind::HyperNode));
        m.handle(WatchEvent::InitApply(hyper_node("leaf-2", 1, &["n1"])));
        m.handle(WatchEvent::InitDone(Kind::HyperNode));
        assert_eq!(hyper_nodes(&m), [("leaf-2".to_string(), 1, 1)]);
    }

    fn numatopology(name: &str, allocatable: &str) -> Object {
        let v = serde_json::json!({
            "apiVersion": "nodeinfo.volcano.sh/v1alpha1", "kind": "Numatopology",
            "metadata": {"name": name},
            "spec": {
                "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"},
                "numares": {"cpu": {"allocatable": allocatable, "capacity": 2}},
                "cpuDetail": {"0": {"numa": 0}, "1": {"numa": 1}},
            },
        });
        Object::Numatopology(Box::new(serde_json::from_value(v).unwrap()))
    }

    #[test]
    fn numatopologies_are_stored_refused_naming_the_field_and_deleted() {
        let mut m = mirror();
        m.set_journal(true);
        assert_eq!(m.handle(WatchEvent::Apply(numatopology("n1", "0-1"))), Applied::Stored);
        assert_eq!(m.cluster.numatopology("n1").and_then(|t| t.cpu_allocatable.clone()), Some(vec![0, 1]));
        assert!(matches!(m.take_journal().as_slice(), [Delta::Numatopology(t)] if t.name == "n1"), "journaled for the recorder");
        // A bad update is refused naming object and field, reported once, and the stale
        // version is dropped (the node has no NUMA information until a good one arrives).
        let bad = || numatopology("n1", "0-z");
        match m.handle(WatchEvent::Apply(bad())) {
            Applied::Refused(msg) => {
                assert_eq!(msg, "Numatopology n1: field spec.numares.cpu.allocatable: \"0-z\" is not a CPU list (part \"0-z\")")
            }
            other => panic!("{other:?}"),
        }
        assert!(m.cluster.numatopology("n1").is_none());
        let refused = m.refused;
        assert!(matches!(m.handle(WatchEvent::Apply(bad())), Applied::Refused(_)));
        assert_eq!(m.refused, refused, "the same problem is counted once");
        // A CPU the cpuDetail does not describe is refused by the core, naming the field.
        match m.handle(WatchEvent::Apply(numatopology("n1", "0-2"))) {
            Applied::Refused(msg) => {
                assert!(msg.contains("Numatopology n1") && msg.contains("spec.numares.cpu.allocatable"), "{msg}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(m.handle(WatchEvent::Apply(numatopology("n1", "1"))), Applied::Stored);
        assert_eq!(m.handle(WatchEvent::Delete(numatopology("n1", "1"))), Applied::Removed);
        assert!(m.cluster.numatopology("n1").is_none());
    }

    #[test]
    fn a_pods_numa_request_follows_the_pod() {
        let mut m = mirror();
        let guaranteed = |policy: Option<&str>| {
            let mut p = match pod("p", "u1", "", "volcano") {
                Object::Pod(p) => p,
                _ => unreachable!(),
            };
            let q = |v: &str| Quantity(v.into());
            p.spec.as_mut().unwrap().containers[0].resources = Some(k8s::ResourceRequirements {
                limits: Some([("cpu".to_string(), q("2")), ("memory".to_string(), q("1Gi"))].into()),
                ..Default::default()
            });
            if let Some(v) = policy {
                p.metadata
                    .annotations
                    .get_or_insert_with(Default::default)
                    .insert(basalt_core::model::NUMA_POLICY.into(), v.into());
            }
            Object::Pod(p)
        };
        m.handle(WatchEvent::Apply(guaranteed(Some("single-numa-node"))));
        let got = m.cluster.pod_numa("ns", "p").cloned().expect("stored beside the pod");
        assert!(got.guaranteed);
        assert_eq!(got.policy, "single-numa-node");
        assert_eq!(got.containers[0].cpus, 2);
        m.set_journal(true);
        m.handle(WatchEvent::Apply(guaranteed(Some("single-numa-node"))));
        assert!(!m.take_journal().iter().any(|d| matches!(d, Delta::PodNuma { .. })), "unchanged: not sent again");
        m.handle(WatchEvent::Apply(guaranteed(None)));
        assert_eq!(m.cluster.pod_numa("ns", "p").map(|n| n.policy.as_str()), Some(""), "the annotation was removed");
        m.handle(WatchEvent::Delete(guaranteed(None)));
        assert!(m.cluster.pod_numa("ns", "p").is_none(), "gone with the pod");
    }

    #[test]
    fn node_labels_flag_the_topology_other_node_changes_do_not() {
        let mut m = mirror();
        m.take_topology_changed();
        m.handle(WatchEvent::Apply(node("n1", "8")));
        assert!(!m.take_topology_changed(), "an allocatable change does not move a node in the tree");
        let mut n = node("n1", "8");
        if let Object::Node(o) = &mut n {
            o.metadata.labels = Some([("rack".to_string(), "a".to_string())].into());
        }
        m.handle(WatchEvent::Apply(n));
        assert!(m.take_topology_changed(), "labelMatch members depend on node labels");
        m.handle(WatchEvent::Apply(node("n9", "8")));
        assert!(m.take_topology_changed(), "a new node may be a regex member");
    }
}
