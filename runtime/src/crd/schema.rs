//! JSON schemas for fields whose Rust type carries none: resource quantity maps (the
//! `k8s-openapi` `schemars` feature stays off to keep the build lean) and opaque Volcano
//! sub-objects, written as Kubernetes structural-schema fragments.

use schemars::{json_schema, Schema, SchemaGenerator};

/// `map[string]Quantity`: integers or strings, as `x-kubernetes-int-or-string`.
pub(crate) fn quantity_map(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "additionalProperties": {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
            "x-kubernetes-int-or-string": true
        }
    })
}

/// An object kept verbatim.
pub(crate) fn opaque_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

/// A list of objects kept verbatim.
pub(crate) fn opaque_list(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
    })
}

/// An RFC 3339 time (`metav1.Time`).
pub(crate) fn date_time(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "string", "format": "date-time"})
}
