//! `v1.Node` → [`NodeSpec`]: labels, taints, `spec.unschedulable`, allocatable and capacity in
//! core units, and readiness.

use super::affinity::taint_effect;
use super::resources::resource_list;
use super::{required_name, ConvertError, ObjRef};
use basalt_core::model::{NodeSpec, Taint};
use k8s_openapi::api::core::v1 as k8s;

/// Converts a `v1.Node`.
///
/// `status.allocatable` defaults to `status.capacity` when absent (as the API server defaults
/// it). `ready` is true when the `Ready` condition is `True`, or when the node has no
/// conditions at all (hand-written YAML). Errors: missing name, malformed quantity, unknown
/// taint effect, each naming the field.
pub fn convert_node(node: &k8s::Node) -> Result<NodeSpec, ConvertError> {
    let name = required_name("Node", &node.metadata)?;
    let obj = ObjRef { kind: "Node", name: &name };
    let spec = node.spec.as_ref();
    let status = node.status.as_ref();
    let taints = spec
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, t)| {
            Ok(Taint {
                key: t.key.clone(),
                value: t.value.clone().unwrap_or_default(),
                effect: taint_effect(obj, &format!("spec.taints[{i}].effect"), &t.effect)?,
            })
        })
        .collect::<Result<Vec<_>, ConvertError>>()?;
    let capacity = resource_list(obj, "status.capacity", status.and_then(|s| s.capacity.as_ref()))?;
    let allocatable = match status.and_then(|s| s.allocatable.as_ref()) {
        Some(a) => resource_list(obj, "status.allocatable", Some(a))?,
        None => capacity.clone(),
    };
    let ready = match status.and_then(|s| s.conditions.as_ref()) {
        None => true,
        Some(c) if c.is_empty() => true,
        Some(c) => c.iter().any(|c| c.type_ == "Ready" && c.status == "True"),
    };
    Ok(NodeSpec {
        labels: node.metadata.labels.clone().unwrap_or_default().into(),
        taints,
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        allocatable,
        capacity,
        ready,
        gpu_share: super::device::node_gpu_share(&name, node),
        devices: super::vgpu::node_devices(&name, node),
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::model::TaintEffect;

    fn node(yaml: &str) -> k8s::Node {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn converts_a_node() {
        let n = node(
            "metadata: {name: n1, labels: {zone: a}}\nspec: {unschedulable: true, taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\nstatus:\n  capacity: {cpu: '8', memory: 32Gi, pods: 110, nvidia.com/gpu: 4}\n",
        );
        let got = convert_node(&n).unwrap();
        assert_eq!(got.name, "n1");
        assert_eq!(got.labels.get("zone").map(String::as_str), Some("a"));
        assert_eq!(got.taints, vec![Taint { key: "dedicated".into(), value: "gpu".into(), effect: TaintEffect::NoSchedule }]);
        assert!(got.unschedulable && got.ready);
        assert_eq!(got.allocatable, got.capacity, "allocatable defaults to capacity");
        assert_eq!(got.allocatable.get("nvidia.com/gpu"), Some(&4000));
        assert_eq!(got.allocatable.get("pods"), Some(&110));
    }

    #[test]
    fn readiness_from_conditions() {
        let table = [
            ("status: {conditions: [{type: Ready, status: 'True'}]}", true),
            ("status: {conditions: [{type: Ready, status: 'False'}]}", false),
            ("status: {conditions: [{type: MemoryPressure, status: 'False'}]}", false),
            ("status: {conditions: []}", true),
            ("status: {}", true),
        ];
        for (status, ready) in table {
            let n = node(&format!("metadata: {{name: n}}\n{status}\n"));
            assert_eq!(convert_node(&n).unwrap().ready, ready, "{status}");
        }
    }

    #[test]
    fn errors_name_the_field() {
        let e = convert_node(&node("metadata: {name: n}\nspec: {taints: [{key: k, effect: Never}]}\n")).unwrap_err();
        assert_eq!(e.to_string(), "Node n: field spec.taints[0].effect: unsupported taint effect \"Never\"");
        let e = convert_node(&node("metadata: {name: n}\nstatus: {allocatable: {cpu: lots}}\n")).unwrap_err();
        assert_eq!(e.field, "status.allocatable.cpu");
    }
}
