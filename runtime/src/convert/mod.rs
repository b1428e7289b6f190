//! Kubernetes and Volcano objects → the core's plain model types ([`basalt_core::model`]).
//!
//! Owns every rule about reading API objects: quantities and units, Volcano's pod request
//! folding, defaults Kubernetes' API server would have applied to hand-written YAML, and which
//! annotations mean what. Each converter is a pure function returning the model type or a
//! [`ConvertError`] naming the object and the field. It refuses I/O and never panics on input;
//! Kubernetes types stop here and never reach the core.

mod affinity;
pub mod cron;
pub mod device;
pub mod disruption;
pub mod duration;
pub mod hypernode;
pub mod node;
pub mod nodeshard;
pub mod numatopology;
pub mod pod;
pub mod podgroup;
pub mod priorityclass;
pub mod quantity;
pub mod queue;
pub mod quota;
pub mod resources;
pub mod vgpu;
pub mod volume;

pub use disruption::convert_pod_disruption_budget;
pub use hypernode::convert_hyper_node;
pub use node::convert_node;
pub use nodeshard::convert_node_shard;
pub use numatopology::{convert_numatopology, pod_numa};
pub use pod::convert_pod;
pub use podgroup::convert_pod_group;
pub use priorityclass::convert_priority_class;
pub use queue::convert_queue;
pub use quota::convert_resource_quota;
pub use volume::{convert_csi_node, convert_persistent_volume, convert_persistent_volume_claim, convert_storage_class};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The namespace of objects whose `metadata.namespace` is empty or absent.
pub const DEFAULT_NAMESPACE: &str = "default";

/// An object that could not be converted: `{kind} {name}: field {field}: {message}`, e.g.
/// `Pod ns/p: field spec.containers[0].resources.requests.cpu: invalid quantity "abc"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} {name}: field {field}: {message}")]
pub struct ConvertError {
    /// Kind of the object (`Pod`, `Node`, `PodGroup`, `Queue`, `PriorityClass`,
    /// `PodDisruptionBudget`, `ResourceQuota`).
    pub kind: &'static str,
    /// `namespace/name` for namespaced kinds, `name` otherwise (`<unnamed>` when absent).
    pub name: String,
    /// Path of the offending field, e.g. `spec.containers[0].resources.requests.cpu`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// The identity of the object being converted, used to build [`ConvertError`]s.
#[derive(Clone, Copy, Debug)]
pub struct ObjRef<'a> {
    /// Kind of the object.
    pub kind: &'static str,
    /// `namespace/name` or `name`.
    pub name: &'a str,
}

impl ObjRef<'_> {
    /// An error about `field` of this object.
    pub fn error(&self, field: impl Into<String>, message: impl Into<String>) -> ConvertError {
        ConvertError { kind: self.kind, name: self.name.to_string(), field: field.into(), message: message.into() }
    }
}

/// `metadata.name`, which must be non-empty. `kind` names the object in the error.
pub(crate) fn required_name(kind: &'static str, meta: &ObjectMeta) -> Result<String, ConvertError> {
    match meta.name.as_deref() {
        Some(n) if !n.is_empty() => Ok(n.to_string()),
        _ => Err(ObjRef { kind, name: "<unnamed>" }.error("metadata.name", "required")),
    }
}

/// `metadata.namespace`, or [`DEFAULT_NAMESPACE`] when empty or absent.
pub(crate) fn namespace(meta: &ObjectMeta) -> String {
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => ns.to_string(),
        _ => DEFAULT_NAMESPACE.to_string(),
    }
}

/// `metadata.creationTimestamp` in milliseconds since the Unix epoch (0 when unset).
pub(crate) fn creation_ms(meta: &ObjectMeta) -> i64 {
    meta.creation_timestamp.as_ref().map(|t| t.0.as_millisecond()).unwrap_or(0)
}

/// Go's `strconv.ParseBool`: `1 t T TRUE true True` and `0 f F FALSE false False`; `None`
/// otherwise.
pub(crate) fn parse_go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Volcano's `volcano.sh/preemptable` lookup: the annotation if present, else the label; a
/// value that is not a Go bool means false; absent from both means `default`.
pub(crate) fn preemptable(meta: &ObjectMeta, default: bool) -> bool {
    preemptable_set(meta).unwrap_or(default)
}

/// `volcano.sh/preemptable` from the annotation, else the label (a value that is not a Go bool
/// reads as false); `None` when neither is set.
pub(crate) fn preemptable_set(meta: &ObjectMeta) -> Option<bool> {
    const KEY: &str = "volcano.sh/preemptable";
    let from = |m: &Option<std::collections::BTreeMap<String, String>>| {
        m.as_ref().and_then(|m| m.get(KEY)).map(|v| parse_go_bool(v).unwrap_or(false))
    };
    from(&meta.annotations).or_else(|| from(&meta.labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_display_names_kind_object_and_field() {
        let e =
            ObjRef { kind: "Pod", name: "ns/p" }.error("spec.containers[0].resources.requests.cpu", "invalid quantity \"abc\"");
        assert_eq!(e.to_string(), "Pod ns/p: field spec.containers[0].resources.requests.cpu: invalid quantity \"abc\"");
    }

    #[test]
    fn preemptable_annotation_then_label_then_default() {
        let mut m = ObjectMeta::default();
        assert!(preemptable(&m, true));
        assert!(!preemptable(&m, false));
        m.labels = Some([("volcano.sh/preemptable".to_string(), "true".to_string())].into());
        assert!(preemptable(&m, false));
        m.annotations = Some([("volcano.sh/preemptable".to_string(), "F".to_string())].into());
        assert!(!preemptable(&m, true));
        m.annotations = Some([("volcano.sh/preemptable".to_string(), "yes".to_string())].into());
        assert!(!preemptable(&m, true), "not a Go bool means false");
    }
}
