use super::objects::{Labels, TaintEffect};

/// Operator of a label or node selector requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SelectorOp {
    /// `In`: the value is one of `values`.
    In,
    /// `NotIn`: the key is absent or its value is not one of `values`.
    NotIn,
    /// `Exists`: the key is present.
    Exists,
    /// `DoesNotExist`: the key is absent.
    DoesNotExist,
    /// `Gt`: the value, as an integer, is greater than the single value (node selectors only).
    Gt,
    /// `Lt`: the value, as an integer, is less than the single value (node selectors only).
    Lt,
}

/// One requirement (`matchExpressions[]` of a label or node selector).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Requirement {
    /// `key`.
    pub key: String,
    /// `operator`.
    pub op: SelectorOp,
    /// `values`.
    pub values: Vec<String>,
}

/// A `metav1.LabelSelector`: `matchLabels` and `matchExpressions`, ANDed. An empty selector
/// matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct LabelSelector {
    /// `matchLabels`.
    pub match_labels: Labels,
    /// `matchExpressions`.
    pub match_expressions: Vec<Requirement>,
}

/// A `v1.NodeSelectorTerm`: expressions on labels and fields (`metadata.name`), ANDed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct NodeSelectorTerm {
    /// `matchExpressions`.
    pub match_expressions: Vec<Requirement>,
    /// `matchFields` (only `metadata.name` is defined by Kubernetes).
    pub match_fields: Vec<Requirement>,
}

/// A preferred scheduling term with its weight (1–100).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PreferredSchedulingTerm {
    /// `weight`.
    pub weight: i32,
    /// `preference`.
    pub preference: NodeSelectorTerm,
}

/// A `v1.PodAffinityTerm`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct PodAffinityTerm {
    /// `labelSelector` (None matches no pod, as in Kubernetes).
    pub label_selector: Option<LabelSelector>,
    /// `namespaces`; with no `namespaceSelector` and no namespaces, the pod's own namespace.
    pub namespaces: Vec<String>,
    /// `namespaceSelector`: `Some(empty)` = all namespaces. Namespace labels are not modelled,
    /// so a non-empty namespace selector matches only namespaces listed in `namespaces`.
    pub namespace_selector: Option<LabelSelector>,
    /// `topologyKey`.
    pub topology_key: String,
}

/// A weighted pod affinity term.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct WeightedPodAffinityTerm {
    /// `weight` (1–100).
    pub weight: i32,
    /// `podAffinityTerm`.
    pub term: PodAffinityTerm,
}

/// `spec.affinity`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Affinity {
    /// `nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`
    /// (None when unset; `Some(vec![])` matches no node).
    pub node_required: Option<Vec<NodeSelectorTerm>>,
    /// `nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub node_preferred: Vec<PreferredSchedulingTerm>,
    /// `podAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub pod_required: Vec<PodAffinityTerm>,
    /// `podAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub pod_preferred: Vec<WeightedPodAffinityTerm>,
    /// `podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub anti_required: Vec<PodAffinityTerm>,
    /// `podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`.
    pub anti_preferred: Vec<WeightedPodAffinityTerm>,
}

/// Toleration operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub enum TolerationOp {
    /// `Equal` (the default): key and value must match.
    #[default]
    Equal,
    /// `Exists`: any value; an empty key tolerates every taint.
    Exists,
}

/// A `v1.Toleration`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Toleration {
    /// `key` (empty with `Exists` matches all keys).
    pub key: String,
    /// `operator`.
    pub op: TolerationOp,
    /// `value`.
    pub value: String,
    /// `effect` (None matches all effects).
    pub effect: Option<TaintEffect>,
}

/// `whenUnsatisfiable` of a topology spread constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum WhenUnsatisfiable {
    /// `DoNotSchedule`: a filter.
    DoNotSchedule,
    /// `ScheduleAnyway`: a score.
    ScheduleAnyway,
}

/// A `v1.TopologySpreadConstraint`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TopologySpreadConstraint {
    /// `maxSkew` (≥ 1).
    pub max_skew: i32,
    /// `topologyKey`.
    pub topology_key: String,
    /// `whenUnsatisfiable`.
    pub when_unsatisfiable: WhenUnsatisfiable,
    /// `labelSelector` (None matches no pod).
    pub label_selector: Option<LabelSelector>,
    /// `minDomains` (DoNotSchedule only; default 1).
    pub min_domains: i32,
    /// `nodeAffinityPolicy` is `Ignore` (default `Honor`).
    pub ignore_node_affinity: bool,
    /// `nodeTaintsPolicy` is `Honor` (default `Ignore`).
    pub honor_node_taints: bool,
    /// `matchLabelKeys`: keys whose pod label values are ANDed into the selector.
    pub match_label_keys: Vec<String>,
}
