//! `/pods/mutate`'s scheduling gate (Volcano master `pkg/webhooks/admission/pods/mutate`
//! `patchSchedulingGates`, feature gate `SchedulingGatesQueueAdmission`): a pod created with the
//! opt-in annotation `scheduling.volcano.sh/queue-allocation-gate: "true"` gets Volcano's
//! scheduling gate of the same name, which the scheduler removes once the pod's queue admits it
//! (`runtime/src/live/gate_removal.rs`). The gate patch comes first, then the resource group's
//! (Volcano's order). Volcano adds it only while its admission configuration is loaded; Basalt
//! adds it with or without `--admission-conf`.

use super::{Decision, Operation, PatchOp};
use basalt_core::model::QUEUE_ALLOCATION_GATE;
use k8s_openapi::api::core::v1::Pod;

/// The patch that adds Volcano's gate to `pod`, if it opted in and lacks it: `add
/// /spec/schedulingGates` with the one gate when the pod has no list, else an append
/// (`/spec/schedulingGates/-`), which keeps gates other webhooks added. `None` when the pod did
/// not opt in or already has the gate.
pub fn gate_patch(pod: &Pod) -> Option<PatchOp> {
    let opted_in = pod.metadata.annotations.as_ref().and_then(|a| a.get(QUEUE_ALLOCATION_GATE)).is_some_and(|v| v == "true");
    if !opted_in {
        return None;
    }
    let gates = pod.spec.as_ref().and_then(|s| s.scheduling_gates.as_ref());
    let gate = serde_json::json!({"name": QUEUE_ALLOCATION_GATE});
    match gates {
        None => Some(PatchOp::add("/spec/schedulingGates", serde_json::json!([gate]))),
        Some(g) if g.iter().any(|x| x.name == QUEUE_ALLOCATION_GATE) => None,
        Some(_) => Some(PatchOp::add("/spec/schedulingGates/-", gate)),
    }
}

/// `/pods/mutate` with the gate: `groups` is the resource groups' decision for the same pod
/// ([`super::resource_groups::mutate`]); with `gate_on`, the gate patch goes before its patches.
pub fn mutate(op: Operation, pod: &Pod, groups: Decision, gate_on: bool) -> Decision {
    if !gate_on || op != Operation::Create || !groups.allowed {
        return groups;
    }
    match gate_patch(pod) {
        Some(p) => {
            let mut patch = vec![p];
            patch.extend(groups.patch);
            Decision::patched(patch)
        }
        None => groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(ann: serde_json::Value, spec: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p", "namespace": "ns", "annotations": ann}, "spec": spec})).unwrap()
    }

    const OPT_IN: &str = "scheduling.volcano.sh/queue-allocation-gate";

    #[test]
    fn an_opted_in_pod_gets_the_gate_once() {
        let p = pod(json!({OPT_IN: "true"}), json!({"containers": []}));
        let d = mutate(Operation::Create, &p, Decision::allow(), true);
        assert!(d.allowed);
        assert_eq!(d.patch.len(), 1);
        assert_eq!((d.patch[0].op, d.patch[0].path.as_str()), ("add", "/spec/schedulingGates"));
        assert_eq!(d.patch[0].value, json!([{"name": OPT_IN}]));

        let other = pod(json!({OPT_IN: "true"}), json!({"containers": [], "schedulingGates": [{"name": "x"}]}));
        let d = mutate(Operation::Create, &other, Decision::allow(), true);
        assert_eq!((d.patch[0].path.as_str(), &d.patch[0].value), ("/spec/schedulingGates/-", &json!({"name": OPT_IN})));

        let has = pod(json!({OPT_IN: "true"}), json!({"containers": [], "schedulingGates": [{"name": OPT_IN}]}));
        assert!(mutate(Operation::Create, &has, Decision::allow(), true).patch.is_empty(), "idempotent");
    }

    #[test]
    fn nothing_without_opt_in_or_feature_gate_and_group_patches_follow() {
        for ann in [json!({}), json!({OPT_IN: "false"})] {
            let p = pod(ann, json!({"containers": []}));
            assert!(mutate(Operation::Create, &p, Decision::allow(), true).patch.is_empty());
        }
        let p = pod(json!({OPT_IN: "true"}), json!({"containers": []}));
        assert!(mutate(Operation::Create, &p, Decision::allow(), false).patch.is_empty(), "feature gate off");
        let groups = Decision::patched(vec![PatchOp::add("/spec/schedulerName", "volcano")]);
        let d = mutate(Operation::Create, &p, groups, true);
        let paths: Vec<&str> = d.patch.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, vec!["/spec/schedulingGates", "/spec/schedulerName"]);
        let denied = Decision::deny("expect operation to be 'CREATE' ");
        assert_eq!(mutate(Operation::Update, &p, denied.clone(), true), denied);
    }
}
