//! Network topology input types (volcano-behaviour.md §1.4, §4, §9): the HyperNode
//! (`topology.volcano.sh/v1alpha1`, cluster-scoped), a PodGroup's `networkTopology` and its
//! `subGroupPolicy[]`. Plain owned data; [`crate::session::topology`] resolves HyperNodes into
//! session tables and reports an invalid tree.

use super::objects::Labels;

/// How a HyperNode member is selected (Volcano `MemberSelector`: exactly one of the three).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MemberSelector {
    /// `exactMatch.name`: the member with this name.
    Exact(String),
    /// `regexMatch.pattern`: every node whose name matches the pattern (Go RE2 syntax; only
    /// for members of type Node).
    Regex(String),
    /// `labelMatch.matchLabels`: every node carrying all of these labels (only for members of
    /// type Node).
    Labels(Labels),
}

/// Type of a HyperNode member (`members[].type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MemberType {
    /// `Node`: Kubernetes nodes.
    Node,
    /// `HyperNode`: a child HyperNode (selected by `exactMatch` only).
    HyperNode,
}

/// One `spec.members[]` entry of a HyperNode.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HyperNodeMember {
    /// `type`.
    pub kind: MemberType,
    /// `selector`.
    pub selector: MemberSelector,
}

/// A Volcano HyperNode (`topology.volcano.sh/v1alpha1`, cluster-scoped): one network domain
/// (a leaf switch, a spine, an NVLink domain) of tier `tier`, whose members are nodes or
/// lower-tier HyperNodes.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HyperNodeSpec {
    /// `metadata.name`.
    pub name: String,
    /// `spec.tier` (1 = closest; higher tiers are wider and slower domains).
    pub tier: i32,
    /// `spec.tierName` (empty when unset); a PodGroup's `highestTierName` names it.
    pub tier_name: String,
    /// `spec.members[]`, in order.
    pub members: Vec<HyperNodeMember>,
}

/// `networkTopology.mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum TopologyMode {
    /// `hard` (Volcano's default): never placed outside `highestTierAllowed`.
    #[default]
    Hard,
    /// `soft`: lower tiers preferred, any placement accepted.
    Soft,
}

/// A PodGroup's (or sub-group's) `networkTopology` (Volcano `NetworkTopologySpec`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetworkTopologySpec {
    /// `mode` (default hard).
    pub mode: TopologyMode,
    /// `highestTierAllowed` (`None` when unset).
    pub highest_tier_allowed: Option<i32>,
    /// `highestTierName` (empty when unset; exclusive with `highest_tier_allowed`).
    pub highest_tier_name: String,
}

/// A label selector requirement operator of `subGroupPolicy[].labelSelector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LabelSelectorOp {
    /// `In`.
    In,
    /// `NotIn`.
    NotIn,
    /// `Exists`.
    Exists,
    /// `DoesNotExist`.
    DoesNotExist,
}

/// A `metav1.LabelSelector`: `matchLabels` and `matchExpressions`, all must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PodLabelSelector {
    /// `matchLabels`.
    pub match_labels: Labels,
    /// `matchExpressions` as (key, operator, values).
    pub match_expressions: Vec<(String, LabelSelectorOp, Vec<String>)>,
}

impl PodLabelSelector {
    /// Whether `labels` satisfy the selector (Kubernetes `LabelSelectorAsSelector().Matches`).
    pub fn matches(&self, labels: &Labels) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|(k, op, vals)| match op {
                LabelSelectorOp::In => labels.get(k).is_some_and(|v| vals.contains(v)),
                LabelSelectorOp::NotIn => labels.get(k).is_none_or(|v| !vals.contains(v)),
                LabelSelectorOp::Exists => labels.contains_key(k),
                LabelSelectorOp::DoesNotExist => !labels.contains_key(k),
            })
    }
}

/// One `spec.subGroupPolicy[]` entry of a PodGroup (Volcano `SubGroupPolicySpec`): the job's
/// pods that match `label_selector` are grouped by the values of `match_label_keys`; each
/// group is a sub-job of at least `sub_group_size` pods, placed under its own topology.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SubGroupPolicySpec {
    /// `name`.
    pub name: String,
    /// `networkTopology` of each sub-group.
    pub network_topology: Option<NetworkTopologySpec>,
    /// `subGroupSize` (Volcano's default 1): a sub-group's minAvailable.
    pub sub_group_size: Option<i32>,
    /// `minSubGroups` (default 0): sub-groups of this policy that must be ready for the job to be.
    pub min_sub_groups: Option<i32>,
    /// `labelSelector` (`None`: every pod).
    pub label_selector: Option<PodLabelSelector>,
    /// `matchLabelKeys[]`.
    pub match_label_keys: Vec<String>,
}

impl SubGroupPolicySpec {
    /// The label values that place a pod with `labels` in a sub-group of this policy (Volcano
    /// `getSubJobMatchValues`): `None` when the selector rejects it, a key is missing or empty,
    /// or the policy has no keys.
    pub fn match_values(&self, labels: &Labels) -> Option<Vec<String>> {
        if let Some(sel) = &self.label_selector {
            if !sel.matches(labels) {
                return None;
            }
        }
        if self.match_label_keys.is_empty() {
            return None;
        }
        self.match_label_keys.iter().map(|k| labels.get(k).filter(|v| !v.is_empty()).cloned()).collect()
    }
}
