//! Volcano `Queue` → [`QueueSpec`].

use super::resources::resource_list;
use super::{creation_ms, required_name, ConvertError, ObjRef};
use crate::crd;
use basalt_core::model::{NodeGroupAffinity, QueueSpec, QueueState};
use serde_json::Value as Json;

/// `spec.affinity` (Volcano `Affinity`: `nodeGroupAffinity` / `nodeGroupAntiAffinity`, each
/// with `requiredDuringSchedulingIgnoredDuringExecution` and
/// `preferredDuringSchedulingIgnoredDuringExecution` lists of node group names). `None` when
/// unset or null; other keys are ignored as the API server prunes them. Errors: the field, a
/// rule or a list of the wrong type, or a group name that is not a string.
fn node_group_affinity(obj: ObjRef<'_>, v: Option<&Json>) -> Result<Option<NodeGroupAffinity>, ConvertError> {
    let v = match v {
        None | Some(Json::Null) => return Ok(None),
        Some(v) => v,
    };
    let Json::Object(m) = v else {
        return Err(obj.error("spec.affinity", "must be an object with nodeGroupAffinity / nodeGroupAntiAffinity"));
    };
    let mut out = NodeGroupAffinity::default();
    for (rule, anti) in [("nodeGroupAffinity", false), ("nodeGroupAntiAffinity", true)] {
        let r = match m.get(rule) {
            None | Some(Json::Null) => continue,
            Some(Json::Object(r)) => r,
            Some(_) => return Err(obj.error(format!("spec.affinity.{rule}"), "must be an object")),
        };
        for (list, preferred) in
            [("requiredDuringSchedulingIgnoredDuringExecution", false), ("preferredDuringSchedulingIgnoredDuringExecution", true)]
        {
            let field = format!("spec.affinity.{rule}.{list}");
            let names = match r.get(list) {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, x)| match x {
                        Json::String(s) => Ok(s.clone()),
                        _ => Err(obj.error(format!("{field}[{i}]"), "must be a node group name (a string)")),
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(obj.error(field, "must be a list of node group names")),
            };
            let slot = match (anti, preferred) {
                (false, false) => &mut out.required,
                (false, true) => &mut out.preferred,
                (true, false) => &mut out.anti_required,
                (true, true) => &mut out.anti_preferred,
            };
            *slot = names;
        }
    }
    Ok(Some(out))
}

/// Converts a Queue.
///
/// Defaults: `weight` 1, `reclaimable` true, `priority` 0, `parent` empty, `status.state`
/// unset ⇒ `Open` (Volcano's queue controller opens new queues). Any `weight` is kept as
/// given, 0 included: range checks belong to the CRD schema and the admission webhook, and
/// Volcano's scheduler uses the value it reads (volcano-behaviour.md §3). `spec.affinity` is
/// read for the nodegroup plugin. Errors: missing name, negative `priority`, malformed
/// quantities, unknown state, a malformed `spec.affinity`.
pub fn convert_queue(q: &crd::Queue) -> Result<QueueSpec, ConvertError> {
    let name = required_name("Queue", &q.metadata)?;
    let obj = ObjRef { kind: "Queue", name: &name };
    let spec = &q.spec;
    let weight = spec.weight.unwrap_or(1);
    let priority = spec.priority.unwrap_or(0);
    if priority < 0 {
        return Err(obj.error("spec.priority", format!("must be >= 0, got {priority}")));
    }
    let state_str = q.status.as_ref().and_then(|s| s.state.as_deref()).unwrap_or("");
    let state = match state_str {
        "" | "Open" => QueueState::Open,
        "Closed" => QueueState::Closed,
        "Closing" => QueueState::Closing,
        "Unknown" => QueueState::Unknown,
        other => return Err(obj.error("status.state", format!("unknown queue state {other:?}"))),
    };
    Ok(QueueSpec {
        creation_ms: creation_ms(&q.metadata),
        weight,
        capability: resource_list(obj, "spec.capability", spec.capability.as_ref())?,
        guarantee: resource_list(obj, "spec.guarantee.resource", spec.guarantee.as_ref().and_then(|g| g.resource.as_ref()))?,
        deserved: resource_list(obj, "spec.deserved", spec.deserved.as_ref())?,
        reclaimable: spec.reclaimable.unwrap_or(true),
        priority,
        parent: spec.parent.clone().unwrap_or_default(),
        hierarchy: annotation(&q.metadata, "volcano.sh/hierarchy"),
        hierarchy_weights: annotation(&q.metadata, "volcano.sh/hierarchy-weights"),
        node_group_affinity: node_group_affinity(obj, spec.affinity.as_ref())?,
        state,
        name,
    })
}

/// An annotation's value, empty when unset.
fn annotation(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta, key: &str) -> String {
    meta.annotations.as_ref().and_then(|a| a.get(key)).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(yaml: &str) -> crd::Queue {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn defaults() {
        let got = convert_queue(&queue("metadata: {name: default}\nspec: {}\n")).unwrap();
        assert_eq!((got.weight, got.reclaimable, got.priority, got.state), (1, true, 0, QueueState::Open));
        assert!(got.capability.is_empty() && got.deserved.is_empty() && got.guarantee.is_empty());
    }

    #[test]
    fn fields_and_states() {
        let got = convert_queue(&queue(
            "metadata: {name: prod}\nspec: {weight: 3, reclaimable: false, capability: {cpu: 8, memory: 16Gi}, guarantee: {resource: {cpu: 1}}, deserved: {nvidia.com/gpu: 2}, parent: root, priority: 2}\nstatus: {state: Closing}\n",
        ))
        .unwrap();
        assert_eq!(got.weight, 3);
        assert!(!got.reclaimable);
        assert_eq!(got.capability.get("cpu"), Some(&8000));
        assert_eq!(got.guarantee.get("cpu"), Some(&1000));
        assert_eq!(got.deserved.get("nvidia.com/gpu"), Some(&2000));
        assert_eq!((got.parent.as_str(), got.priority, got.state), ("root", 2, QueueState::Closing));
        let got = convert_queue(&queue(
            "metadata: {name: a, annotations: {volcano.sh/hierarchy: root/eng/a, volcano.sh/hierarchy-weights: 1/2/3}}\nspec: {}\n",
        ))
        .unwrap();
        assert_eq!((got.hierarchy.as_str(), got.hierarchy_weights.as_str()), ("root/eng/a", "1/2/3"));
        for (s, want) in [("Open", QueueState::Open), ("Closed", QueueState::Closed), ("Unknown", QueueState::Unknown)] {
            let q = queue(&format!("metadata: {{name: q}}\nspec: {{}}\nstatus: {{state: {s}}}\n"));
            assert_eq!(convert_queue(&q).unwrap().state, want);
        }
    }

    #[test]
    fn any_weight_is_kept() {
        for w in [0, 1, 65535, 100_000] {
            let got = convert_queue(&queue(&format!("metadata: {{name: q}}\nspec: {{weight: {w}}}\n"))).unwrap();
            assert_eq!(got.weight, w);
        }
    }

    #[test]
    fn node_group_affinity_lists() {
        let got = convert_queue(&queue(
            "metadata: {name: q}\nspec: {affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [g1, g2], preferredDuringSchedulingIgnoredDuringExecution: [g1]}, nodeGroupAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [g3]}}}\n",
        ))
        .unwrap();
        let a = got.node_group_affinity.unwrap();
        assert_eq!((a.required, a.preferred), (vec!["g1".to_string(), "g2".to_string()], vec!["g1".to_string()]));
        assert_eq!((a.anti_required, a.anti_preferred), (vec!["g3".to_string()], vec![]));
        assert_eq!(convert_queue(&queue("metadata: {name: q}\nspec: {}\n")).unwrap().node_group_affinity, None);
        let empty = convert_queue(&queue("metadata: {name: q}\nspec: {affinity: {}}\n")).unwrap();
        assert_eq!(empty.node_group_affinity, Some(NodeGroupAffinity::default()), "set but empty: no rules");
        let table = [
            ("{affinity: [g1]}", "spec.affinity"),
            ("{affinity: {nodeGroupAffinity: [g1]}}", "spec.affinity.nodeGroupAffinity"),
            (
                "{affinity: {nodeGroupAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: g1}}}",
                "spec.affinity.nodeGroupAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            ),
            (
                "{affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [g1, 7]}}}",
                "spec.affinity.nodeGroupAffinity.requiredDuringSchedulingIgnoredDuringExecution[1]",
            ),
        ];
        for (spec, field) in table {
            let e = convert_queue(&queue(&format!("metadata: {{name: q}}\nspec: {spec}\n"))).unwrap_err();
            assert_eq!(e.field, field, "{spec}");
        }
    }

    #[test]
    fn errors_name_the_field() {
        let table = [
            ("spec: {priority: -1}", "spec.priority"),
            ("spec: {capability: {cpu: x}}", "spec.capability.cpu"),
            ("spec: {}\nstatus: {state: Half}", "status.state"),
        ];
        for (body, field) in table {
            let e = convert_queue(&queue(&format!("metadata: {{name: q}}\n{body}\n"))).unwrap_err();
            assert_eq!(e.field, field, "{body}");
            assert_eq!(e.kind, "Queue");
        }
    }
}
