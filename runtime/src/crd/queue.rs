//! `Queue` (`scheduling.volcano.sh/v1beta1`, cluster-scoped, short name `q`, status
//! subresource): a share of the cluster that PodGroups are submitted to.

use super::schema;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `Queue.spec`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "scheduling.volcano.sh",
    version = "v1beta1",
    kind = "Queue",
    shortname = "q",
    status = "QueueStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct QueueSpec {
    /// `weight`: share relative to sibling queues (the CRD schema allows 1..65535; the scheduler
    /// uses any value it reads, 0 included); unset = 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
    /// `capability`: upper bound of the queue's allocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::quantity_map")]
    pub capability: Option<BTreeMap<String, Quantity>>,
    /// `reclaimable`: whether other queues may reclaim from it; unset = true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaimable: Option<bool>,
    /// `extendClusters[]` (multi-cluster scheduling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extend_clusters: Option<Vec<ExtendCluster>>,
    /// `guarantee`: resources reserved for the queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guarantee: Option<Guarantee>,
    /// `affinity` (`nodeGroupAffinity`, `nodeGroupAntiAffinity`), kept opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::opaque_object")]
    pub affinity: Option<serde_json::Value>,
    /// `type`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `parent`: the parent queue (hierarchical queues); unset = `root`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// `deserved`: the share the capacity plugin aims for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::quantity_map")]
    pub deserved: Option<BTreeMap<String, Quantity>>,
    /// `priority` (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// `dequeueStrategy`: `fifo` or `traverse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dequeue_strategy: Option<String>,
}

/// One `Queue.spec.extendClusters[]` entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtendCluster {
    /// `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `weight`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
    /// `capacity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::quantity_map")]
    pub capacity: Option<BTreeMap<String, Quantity>>,
}

/// `Queue.spec.guarantee`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Guarantee {
    /// `resource`: the guaranteed resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::quantity_map")]
    pub resource: Option<BTreeMap<String, Quantity>>,
}

/// `Queue.status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueueStatus {
    /// `state`: `Open`, `Closed`, `Closing` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// `unknown`: PodGroups in phase Unknown (no longer written by Volcano).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<i32>,
    /// `pending`: PodGroups pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<i32>,
    /// `running`: PodGroups running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<i32>,
    /// `inqueue`: PodGroups inqueue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inqueue: Option<i32>,
    /// `completed`: PodGroups completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<i32>,
    /// `reservation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<Reservation>,
    /// `allocated`: Σ requests of the queue's allocated tasks (written by the scheduler).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::quantity_map")]
    pub allocated: Option<BTreeMap<String, Quantity>>,
}

/// `Queue.status.reservation`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reservation {
    /// `nodes`: reserved node names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    /// `resource`: reserved resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::quantity_map")]
    pub resource: Option<BTreeMap<String, Quantity>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::{CustomResourceExt, Resource};

    #[test]
    fn identity_matches_volcano() {
        assert_eq!(Queue::api_version(&()), "scheduling.volcano.sh/v1beta1");
        assert_eq!(Queue::plural(&()), "queues");
        let crd = Queue::crd();
        assert_eq!(crd.spec.scope, "Cluster");
        assert_eq!(crd.spec.names.short_names, Some(vec!["q".to_string()]));
        assert!(crd.spec.versions[0].subresources.as_ref().and_then(|s| s.status.as_ref()).is_some());
    }

    #[test]
    fn volcano_field_names_round_trip() {
        let yaml = r#"
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: prod}
spec:
  weight: 1
  capability: {cpu: "16", memory: 64Gi}
  reclaimable: false
  extendClusters: [{name: c1, weight: 2, capacity: {cpu: 8}}]
  guarantee: {resource: {cpu: "2"}}
  affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [g1]}}
  type: x
  parent: root
  deserved: {cpu: "8"}
  priority: 3
  dequeueStrategy: fifo
status:
  state: Open
  reservation: {nodes: [n1], resource: {cpu: "1"}}
  allocated: {cpu: "3"}
"#;
        let q: Queue = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(q.spec.reclaimable, Some(false));
        assert_eq!(q.spec.guarantee.as_ref().unwrap().resource.as_ref().unwrap()["cpu"], Quantity("2".into()));
        let json = serde_json::to_value(&q).unwrap();
        for key in ["extendClusters", "dequeueStrategy", "type", "deserved", "affinity"] {
            assert!(json["spec"].get(key).is_some(), "spec.{key}");
        }
        assert_eq!(json["status"]["reservation"]["nodes"][0], "n1");
        let back: Queue = serde_json::from_value(json).unwrap();
        assert_eq!(back, q);
    }
}
