//! `Numatopology` (`nodeinfo.volcano.sh/v1alpha1`, cluster-scoped, short name `numatopo`, no
//! status): the NUMA topology of the node of the same name, written by Volcano's resource
//! exporter and read by the scheduler's `numa-aware` plugin (Volcano
//! `staging/src/volcano.sh/apis/pkg/apis/nodeinfo/v1alpha1/numatopo_types.go`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `Numatopology.spec` (Volcano `NumatopoSpec`).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "nodeinfo.volcano.sh",
    version = "v1alpha1",
    kind = "Numatopology",
    shortname = "numatopo",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct NumatopoSpec {
    /// `policies`: `CPUManagerPolicy` and `TopologyManagerPolicy` → the kubelet's policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policies: Option<BTreeMap<String, String>>,
    /// `resReserved`: resource name → quantity the kubelet reserves (e.g. `cpu: "1"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub res_reserved: Option<BTreeMap<String, String>>,
    /// `numares`: resource name → what is free for exclusive use.
    #[serde(default, rename = "numares", skip_serializing_if = "Option::is_none")]
    pub numa_res_map: Option<BTreeMap<String, ResourceInfo>>,
    /// `cpuDetail`: CPU id (decimal) → its NUMA node, socket and core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_detail: Option<BTreeMap<String, CpuInfo>>,
    /// `podAllocations`: pods the exporter reports as holding NUMA resources on the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_allocations: Option<Vec<PodAllocation>>,
}

/// One `numares` entry (Volcano `ResourceInfo`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// `allocatable`: for `cpu`, a Linux CPU list such as `0-3,8`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<String>,
    /// `capacity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<i64>,
}

/// One `cpuDetail` entry (Volcano `CPUInfo`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuInfo {
    /// `numa`: the NUMA node id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<i64>,
    /// `socket`: the socket id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<i64>,
    /// `core`: the core id (unique within its socket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<i64>,
}

/// One `podAllocations` entry (Volcano `PodAllocation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodAllocation {
    /// `uid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `namespace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `containerAllocations`: per container, resource name → what it holds (a CPU list for
    /// `cpu`). Kept, not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_allocations: Option<Vec<ContainerAllocation>>,
}

/// One `containerAllocations` entry (Volcano `ContainerAllocation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContainerAllocation {
    /// `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `allocations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocations: Option<BTreeMap<String, String>>,
}

/// The Numatopology CRD (`deploy/crds/nodeinfo.volcano.sh_numatopologies.yaml`).
pub fn numatopology_crd() -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    <Numatopology as kube::CustomResourceExt>::crd()
}
