//! `NodeShard` (`shard.volcano.sh/v1alpha1`, cluster-scoped, short name `nsh`, status
//! subresource): the nodes one scheduler of a sharded cluster uses (Volcano
//! `staging/src/volcano.sh/apis/pkg/apis/shard/v1alpha1/types.go`). The sharding controller
//! writes `spec.nodesDesired`; the scheduler whose `--scheduler-sharding-name` is the shard's
//! name writes `status`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `NodeShard.spec`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "shard.volcano.sh",
    version = "v1alpha1",
    kind = "NodeShard",
    shortname = "nsh",
    status = "NodeShardStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct NodeShardSpec {
    /// `nodesDesired`: the nodes desired in this shard (required, as in Volcano's CRD).
    pub nodes_desired: Vec<String>,
}

/// `NodeShard.status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeShardStatus {
    /// `lastUpdateTime` (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<String>,
    /// `nodesInUse`: the nodes the shard's scheduler uses now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes_in_use: Option<Vec<String>>,
    /// `nodesToAdd`: desired nodes not in use yet (another shard still uses them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes_to_add: Option<Vec<String>>,
    /// `nodesToRemove`: nodes in use that are no longer desired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes_to_remove: Option<Vec<String>>,
}

/// The NodeShard CRD (`deploy/crds/shard.volcano.sh_nodeshards.yaml`).
pub fn node_shard_crd() -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    <NodeShard as kube::CustomResourceExt>::crd()
}
