//! `HyperNode` (`topology.volcano.sh/v1alpha1`, cluster-scoped, short name `hn`, status
//! subresource): one network domain of the cluster (volcano-behaviour.md §4, §9). Members are
//! nodes (by exact name, regex or labels) or lower-tier HyperNodes (by exact name).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `HyperNode.spec`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "topology.volcano.sh",
    version = "v1alpha1",
    kind = "HyperNode",
    shortname = "hn",
    status = "HyperNodeStatus",
    derive = "Default",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
pub struct HyperNodeSpec {
    /// `tier`: 1 is the closest domain; higher tiers are wider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<i32>,
    /// `tierName`: a name for the tier, which a PodGroup's `highestTierName` refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier_name: Option<String>,
    /// `members[]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<MemberSpec>>,
}

/// One `spec.members[]` entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberSpec {
    /// `type`: `Node` or `HyperNode`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `selector`: exactly one of `exactMatch`, `regexMatch`, `labelMatch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<MemberSelector>,
}

/// `members[].selector`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberSelector {
    /// `exactMatch.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact_match: Option<ExactMatch>,
    /// `regexMatch.pattern`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex_match: Option<RegexMatch>,
    /// `labelMatch.matchLabels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_match: Option<LabelMatch>,
}

/// `selector.exactMatch`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExactMatch {
    /// `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `selector.regexMatch`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegexMatch {
    /// `pattern` (Go RE2 syntax).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

/// `selector.labelMatch`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelMatch {
    /// `matchLabels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
}

/// `HyperNode.status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HyperNodeStatus {
    /// `nodeCount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_count: Option<i64>,
}

/// The HyperNode CRD (`deploy/crds/topology.volcano.sh_hypernodes.yaml`).
pub fn hyper_node_crd() -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    <HyperNode as kube::CustomResourceExt>::crd()
}
