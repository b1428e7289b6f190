//! `PodGroup` (`scheduling.volcano.sh/v1beta1`, namespaced, short name `pg`): a gang of pods
//! scheduled together. Volcano's CRD has **no status subresource**: status is written with the
//! object, so [`pod_group_crd`] is the definition to install, not `PodGroup::crd()`.

use super::schema;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `PodGroup.spec`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "scheduling.volcano.sh",
    version = "v1beta1",
    kind = "PodGroup",
    namespaced,
    shortname = "pg",
    status = "PodGroupStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupSpec {
    /// `minMember`: pods that must be schedulable together (gang size); unset = 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_member: Option<i32>,
    /// `minTaskMember`: task role → minimum pods of that role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_task_member: Option<BTreeMap<String, i32>>,
    /// `queue`: the Queue's name; unset = the scheduler's default queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// `priorityClassName`: the job's PriorityClass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// `minResources`: resources the gang needs to be enqueued (Kubernetes quantities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::quantity_map")]
    pub min_resources: Option<BTreeMap<String, Quantity>>,
    /// `networkTopology` (`mode`, `highestTierAllowed`, `highestTierName`), kept opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::opaque_object")]
    pub network_topology: Option<serde_json::Value>,
    /// `subGroupPolicy[]`, kept opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::opaque_list")]
    pub sub_group_policy: Option<serde_json::Value>,
}

/// `PodGroup.status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupStatus {
    /// `phase`: `Pending`, `Running`, `Unknown`, `Inqueue` or `Completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// `conditions[]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<PodGroupCondition>>,
    /// `running`: pods running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<i32>,
    /// `succeeded`: pods succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<i32>,
    /// `failed`: pods failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<i32>,
}

/// One `PodGroup.status.conditions[]` entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupCondition {
    /// `type`: `Unschedulable` or `Scheduled`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `status`: `True`, `False` or `Unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `transitionID`: the scheduling session that wrote the condition.
    #[serde(default, rename = "transitionID", skip_serializing_if = "Option::is_none")]
    pub transition_id: Option<String>,
    /// `lastTransitionTime`, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    /// `reason`, e.g. `NotEnoughResources`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The PodGroup CRD as Volcano installs it: `PodGroup::crd()` without the status subresource
/// that kube's derive adds for any type with a status.
pub fn pod_group_crd() -> CustomResourceDefinition {
    let mut crd = PodGroup::crd();
    for v in &mut crd.spec.versions {
        v.subresources = None;
    }
    crd
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::Resource;

    #[test]
    fn identity_matches_volcano() {
        assert_eq!(PodGroup::api_version(&()), "scheduling.volcano.sh/v1beta1");
        assert_eq!(PodGroup::kind(&()), "PodGroup");
        assert_eq!(PodGroup::plural(&()), "podgroups");
        let crd = pod_group_crd();
        assert_eq!(crd.spec.scope, "Namespaced");
        assert_eq!(crd.spec.names.short_names, Some(vec!["pg".to_string()]));
        assert!(crd.spec.versions.iter().all(|v| v.subresources.is_none()), "Volcano's PodGroup has no status subresource");
    }

    #[test]
    fn volcano_field_names_round_trip() {
        let yaml = r#"
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg1, namespace: ns}
spec:
  minMember: 2
  minTaskMember: {worker: 2}
  queue: research
  priorityClassName: high
  minResources: {cpu: 4, nvidia.com/gpu: "2"}
  networkTopology: {mode: hard, highestTierAllowed: 1}
  subGroupPolicy: [{name: a, subGroupSize: 2}]
status:
  phase: Inqueue
  conditions:
  - {type: Unschedulable, status: "True", transitionID: "3", lastTransitionTime: "2025-01-01T00:00:00Z", reason: NotEnoughResources, message: m}
  running: 1
  succeeded: 0
  failed: 0
"#;
        let pg: PodGroup = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(pg.spec.min_member, Some(2));
        assert_eq!(pg.spec.min_resources.as_ref().unwrap()["cpu"], Quantity("4".into()));
        let st = pg.status.as_ref().unwrap();
        assert_eq!(st.conditions.as_ref().unwrap()[0].transition_id.as_deref(), Some("3"));
        let json = serde_json::to_value(&pg).unwrap();
        assert_eq!(json["spec"]["priorityClassName"], "high");
        assert_eq!(json["status"]["conditions"][0]["transitionID"], "3");
        assert_eq!(json["status"]["conditions"][0]["type"], "Unschedulable");
        assert_eq!(json["spec"]["subGroupPolicy"][0]["subGroupSize"], 2);
        let back: PodGroup = serde_json::from_value(json).unwrap();
        assert_eq!(back, pg);
    }

    #[test]
    fn empty_spec_parses() {
        let pg: PodGroup = serde_yaml::from_str("metadata: {name: x}\nspec: {}\n").unwrap();
        assert_eq!(pg.spec, PodGroupSpec::default());
        assert!(pg.status.is_none());
    }
}
