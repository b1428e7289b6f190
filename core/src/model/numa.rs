//! NUMA topology (Volcano `nodeinfo.volcano.sh/v1alpha1` `Numatopology`, read by the
//! `numa-aware` plugin; Volcano `api/numa_info.go` `NumatopoInfo`): per node, the kubelet's
//! topology manager and CPU manager policies, its CPUs with their NUMA node, socket and core,
//! the CPUs still free for exclusive use, and the CPUs the kubelet reserves; per pod, its
//! `volcano.sh/numa-topology-policy` annotation, whether it is Guaranteed and the whole CPUs each
//! container asks for.

/// Pod annotation: the topology manager policy the pod asks for (`none`, `best-effort`,
/// `restricted`, `single-numa-node`; Volcano `v1beta1.NumaPolicyKey`).
pub const NUMA_POLICY: &str = "volcano.sh/numa-topology-policy";

/// Key of `spec.policies` holding the kubelet's topology manager policy.
pub const TOPOLOGY_MANAGER_POLICY: &str = "TopologyManagerPolicy";
/// Key of `spec.policies` holding the kubelet's CPU manager policy.
pub const CPU_MANAGER_POLICY: &str = "CPUManagerPolicy";

/// The most NUMA nodes a node may have (Kubernetes' topology manager `bitmask.BitMask` is 64
/// bits wide).
pub const MAX_NUMA_NODES: u32 = 64;

/// The most NUMA nodes one Numatopology may describe: the plugin tries every set of them (2^n
/// hints per container); the kubelet's topology manager refuses more than 8.
pub const MAX_NUMA_NODES_PER_NODE: usize = 16;

/// One logical CPU of a node (`spec.cpuDetail[<cpu id>]`, Kubernetes `topology.CPUInfo`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NumaCpu {
    /// The CPU id (the map key).
    pub id: u32,
    /// `numa`: its NUMA node, below [`MAX_NUMA_NODES`].
    pub numa: u32,
    /// `socket`.
    pub socket: u32,
    /// `core`: the physical core id, unique within its socket.
    pub core: u32,
}

/// A pod the resource exporter reports as holding NUMA resources on the node
/// (`spec.podAllocations[]`; Volcano `CheckNumaPodAssigned` matches by UID or by namespace and
/// name).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NumaPodAllocation {
    /// `uid`.
    pub uid: String,
    /// `namespace`.
    pub namespace: String,
    /// `name`.
    pub name: String,
}

/// CPUs the `numa-aware` plugin gave a pod it bound, kept on the node until the resource
/// exporter lists the pod in the node's Numatopology (Volcano `NodeInfo.UnassignedNumaPods`,
/// filled by `AddUnassignedNumaPods` at the plugin's session close;
/// [`crate::cluster::Delta::PodNumaAssumed`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NumaAssumed {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub name: String,
    /// The node it was bound to (= the Numatopology's name).
    pub node: String,
    /// The CPU ids the plugin assigned it (`spec.cpuDetail` ids), ascending.
    pub cpus: Vec<u32>,
}

impl NumatopologySpec {
    /// Whether `spec.podAllocations` lists the pod (Volcano `CheckNumaPodAssigned`: by UID, or
    /// by namespace and name; an empty UID matches no UID).
    pub fn lists_pod(&self, uid: &str, namespace: &str, name: &str) -> bool {
        self.pod_allocations.iter().any(|a| (!uid.is_empty() && a.uid == uid) || (a.namespace == namespace && a.name == name))
    }
}

/// A `Numatopology` (cluster-scoped, named after its node) as the scheduler reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NumatopologySpec {
    /// `metadata.name`: the node it describes.
    pub name: String,
    /// `spec.policies[TopologyManagerPolicy]` (empty when absent).
    pub topology_manager_policy: String,
    /// `spec.policies[CPUManagerPolicy]` (empty when absent); only `static` nodes take part.
    pub cpu_manager_policy: String,
    /// `spec.numares.cpu.allocatable` as CPU ids, ascending, no repeats: the CPUs free for
    /// exclusive use; `None` when `spec.numares` has no `cpu` entry (then Volcano's cpumanager
    /// provider has no preference).
    pub cpu_allocatable: Option<Vec<u32>>,
    /// `spec.numares.cpu.capacity`.
    pub cpu_capacity: i64,
    /// `spec.cpuDetail`, by CPU id ascending.
    pub cpus: Vec<NumaCpu>,
    /// `spec.resReserved.cpu` in millicores (0 when absent): the kubelet's reserved CPUs,
    /// rounded up to whole CPUs and taken by topology from all CPUs (Volcano's cpumanager
    /// provider).
    pub reserved_cpu_milli: i64,
    /// `spec.podAllocations`: pods the exporter reports as placed.
    pub pod_allocations: Vec<NumaPodAllocation>,
}

impl NumatopologySpec {
    /// The NUMA node ids of its CPUs, ascending, no repeats (Volcano
    /// `CPUDetail.NUMANodes().List()`).
    pub fn numa_nodes(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.cpus.iter().map(|c| c.numa).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// What the `numa-aware` plugin reads of a pod.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PodNuma {
    /// Annotation [`NUMA_POLICY`] (empty when absent).
    pub policy: String,
    /// The pod's QoS class is Guaranteed (Kubernetes `GetPodQOS`, requests defaulted from
    /// limits as the API server does); the plugin checks only such pods.
    pub guaranteed: bool,
    /// `spec.containers[]` in order (init containers are not read, as in Volcano).
    pub containers: Vec<NumaContainer>,
}

/// One container as the `numa-aware` plugin reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NumaContainer {
    /// `name`.
    pub name: String,
    /// The CPU request when it is a whole number of CPUs, else 0 (Volcano's cpumanager
    /// `guaranteedCPUs`; 0 means no NUMA preference).
    pub cpus: u32,
}

/// A topology manager policy name as a fit error reports it (Volcano `batch.NumaPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumaPolicyName {
    /// Absent or empty.
    Empty,
    /// `none`.
    None,
    /// `best-effort`.
    BestEffort,
    /// `restricted`.
    Restricted,
    /// `single-numa-node`.
    SingleNumaNode,
    /// Any other value (the kubelet accepts none other).
    Other,
}

impl NumaPolicyName {
    /// Reads a policy name.
    pub fn parse(s: &str) -> Self {
        match s {
            "" => NumaPolicyName::Empty,
            "none" => NumaPolicyName::None,
            "best-effort" => NumaPolicyName::BestEffort,
            "restricted" => NumaPolicyName::Restricted,
            "single-numa-node" => NumaPolicyName::SingleNumaNode,
            _ => NumaPolicyName::Other,
        }
    }

    /// The name (`<other>` for [`NumaPolicyName::Other`]).
    pub fn as_str(self) -> &'static str {
        match self {
            NumaPolicyName::Empty => "",
            NumaPolicyName::None => "none",
            NumaPolicyName::BestEffort => "best-effort",
            NumaPolicyName::Restricted => "restricted",
            NumaPolicyName::SingleNumaNode => "single-numa-node",
            NumaPolicyName::Other => "<other>",
        }
    }
}

impl PodNuma {
    /// Whether the plugin could act on the pod: it is Guaranteed or names a policy. A pod
    /// without either is not given to the cluster (no [`crate::cluster::Delta::PodNuma`]).
    pub fn relevant(&self) -> bool {
        self.guaranteed || !self.policy.is_empty()
    }
}
