//! Storage objects as the volume filters need them: PersistentVolumeClaims, PersistentVolumes,
//! StorageClasses and CSINodes (core/v1 and storage.k8s.io/v1), the volumes a pod mounts, and
//! the volume bindings a bind decision carries. Owned strings, no Kubernetes types; read by
//! the predicates plugin's volume filters ([`crate::session::volumes`]).

use super::affinity::{LabelSelector, NodeSelectorTerm, Requirement};
use super::objects::Labels;

/// `kubernetes.io/no-provisioner`: the StorageClass provisioner that provisions nothing
/// (static local volumes).
pub const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";

/// The claim annotation kube-scheduler's volume binder writes for the provisioner of a
/// `WaitForFirstConsumer` claim: the node the pod was scheduled to.
pub const SELECTED_NODE_ANNOTATION: &str = "volume.kubernetes.io/selected-node";

/// The claim annotation the PV controller sets once it has bound the claim
/// (kube-scheduler's `isPVCFullyBound` needs it with `spec.volumeName`).
pub const BIND_COMPLETED_ANNOTATION: &str = "pv.kubernetes.io/bind-completed";

/// PV labels the VolumeZone filter reads, in kube-scheduler's order (v1.20
/// `volumezone.topologyLabels`): the beta failure-domain and the GA topology keys.
pub const ZONE_LABELS: [&str; 4] = [
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
];

/// An access mode (`spec.accessModes[]` of a claim or volume).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum AccessMode {
    /// `ReadWriteOnce`: read-write by the pods of one node.
    ReadWriteOnce,
    /// `ReadOnlyMany`.
    ReadOnlyMany,
    /// `ReadWriteMany`.
    ReadWriteMany,
    /// `ReadWriteOncePod`: read-write by one pod.
    ReadWriteOncePod,
}

impl AccessMode {
    /// Parses the API spelling; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "ReadWriteOnce" => AccessMode::ReadWriteOnce,
            "ReadOnlyMany" => AccessMode::ReadOnlyMany,
            "ReadWriteMany" => AccessMode::ReadWriteMany,
            "ReadWriteOncePod" => AccessMode::ReadWriteOncePod,
            _ => return None,
        })
    }
}

/// A PersistentVolumeClaim (`v1.PersistentVolumeClaim`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PersistentVolumeClaimSpec {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` (may be empty in hand-written YAML).
    pub uid: String,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `spec.storageClassName`: `None` when unset (the default class is the admission
    /// plugin's business; an unset class is never delayed binding, as in kube-scheduler),
    /// `Some("")` for the explicit empty class.
    pub storage_class_name: Option<String>,
    /// `spec.volumeName` (empty when unset).
    pub volume_name: String,
    /// Annotation `pv.kubernetes.io/bind-completed` is present.
    pub bind_completed: bool,
    /// Annotation `volume.kubernetes.io/selected-node` (empty when unset).
    pub selected_node: String,
    /// `spec.accessModes`.
    pub access_modes: Vec<AccessMode>,
    /// `spec.resources.requests.storage`, bytes (0 when unset).
    pub request_bytes: i64,
    /// `spec.volumeMode` is `Block` (unset and `Filesystem` are false).
    pub block: bool,
    /// `spec.selector` (`None` when unset).
    pub selector: Option<LabelSelector>,
}

impl PersistentVolumeClaimSpec {
    /// kube-scheduler's `isPVCFullyBound`: `spec.volumeName` set and the PV controller has
    /// marked the binding complete.
    pub fn fully_bound(&self) -> bool {
        !self.volume_name.is_empty() && self.bind_completed
    }
}

/// A PersistentVolume's `spec.claimRef`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClaimRef {
    /// `namespace`.
    pub namespace: String,
    /// `name`.
    pub name: String,
    /// `uid` (empty when unset: a pre-bound volume names only the claim).
    pub uid: String,
}

/// PersistentVolume phase (`status.phase`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum VolumePhase {
    /// `Pending`.
    Pending,
    /// `Available` (also assumed when unset, as for hand-written YAML).
    #[default]
    Available,
    /// `Bound`.
    Bound,
    /// `Released`.
    Released,
    /// `Failed`.
    Failed,
}

/// A PersistentVolume (`v1.PersistentVolume`, cluster-scoped).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PersistentVolumeSpec {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels` (the zone labels of [`ZONE_LABELS`]).
    pub labels: Labels,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `spec.storageClassName` (empty when unset).
    pub storage_class_name: String,
    /// `spec.capacity.storage`, bytes.
    pub capacity_bytes: i64,
    /// `spec.accessModes`.
    pub access_modes: Vec<AccessMode>,
    /// `spec.volumeMode` is `Block`.
    pub block: bool,
    /// `spec.nodeAffinity.required.nodeSelectorTerms` (`None` when the volume is reachable
    /// from every node).
    pub node_affinity: Option<Vec<NodeSelectorTerm>>,
    /// `spec.claimRef` (`None` when unset).
    pub claim_ref: Option<ClaimRef>,
    /// `status.phase`.
    pub phase: VolumePhase,
    /// `spec.csi.driver` (`None` for in-tree and local volumes): counted against the node's
    /// CSI attach limit.
    pub csi_driver: Option<String>,
}

/// `volumeBindingMode` of a StorageClass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum VolumeBindingMode {
    /// `Immediate`: the PV controller binds or provisions at once; the scheduler only waits.
    #[default]
    Immediate,
    /// `WaitForFirstConsumer`: the scheduler picks the volume (or the provisioning node).
    WaitForFirstConsumer,
}

/// A StorageClass (`storage.k8s.io/v1`, cluster-scoped).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StorageClassSpec {
    /// `metadata.name`.
    pub name: String,
    /// `provisioner` ([`NO_PROVISIONER`] provisions nothing).
    pub provisioner: String,
    /// `volumeBindingMode` (`None` when unset; the API server defaults it to `Immediate`).
    pub binding_mode: Option<VolumeBindingMode>,
    /// `allowedTopologies[].matchLabelExpressions` (empty: every node). Each term's
    /// requirements are `In` requirements on node labels.
    pub allowed_topologies: Vec<Vec<Requirement>>,
}

/// A CSINode (`storage.k8s.io/v1`, named after its node).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CsiNodeSpec {
    /// `metadata.name` (the node's name).
    pub name: String,
    /// `spec.drivers[]`: driver name and `allocatable.count` (`None`: no limit).
    pub drivers: Vec<(String, Option<i32>)>,
}

/// One volume of a pod that refers to a claim (`spec.volumes[]` with `persistentVolumeClaim`,
/// or `ephemeral`, whose claim is `<pod>-<volume>`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PodVolumeClaim {
    /// `spec.volumes[].name`.
    pub volume: String,
    /// The claim's name, in the pod's namespace.
    pub claim: String,
    /// The volume is `ephemeral` (its claim is created by the ephemeral volume controller).
    pub ephemeral: bool,
}

/// What must happen before a pod's Binding is sent: the volume binder's part of a bind
/// decision (kube-scheduler `BindPodVolumes`; volcano-behaviour.md §1.6 PreBind).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VolumeBinding {
    /// Pod namespace (the claims' namespace).
    pub namespace: String,
    /// Pod name.
    pub pod: String,
    /// Node the pod is bound to.
    pub node: String,
    /// Static volumes to bind: (claim name, PV name): the PV's `spec.claimRef` is set to the
    /// claim.
    pub bind: Vec<(String, String)>,
    /// Claims to provision: the claim gets annotation `volume.kubernetes.io/selected-node`
    /// = `node`.
    pub provision: Vec<String>,
}

impl VolumeBinding {
    /// Whether nothing has to happen before the Binding (the pod's claims were all bound).
    pub fn is_empty(&self) -> bool {
        self.bind.is_empty() && self.provision.is_empty()
    }
}
