//! `/podgroups/mutate` and `/podgroups/validate` (Volcano master
//! `pkg/webhooks/admission/podgroups/`), on CREATE.
//!
//! Mutate: a PodGroup in the `default` queue moves to its namespace's
//! `scheduling.volcano.sh/queue-name` annotation when there is one. Validate: the queue exists
//! and is `Open` (an empty queue name is not checked), and `highestTierAllowed` and
//! `highestTierName` are not both set in `networkTopology` or in a `subGroupPolicy` entry.

use super::{queue_not_found, Decision, Operation, PatchOp, QueueIndex};
use crate::crd::PodGroup;
use std::collections::BTreeMap;

/// The namespace annotation naming a namespace's default queue.
pub const QUEUE_NAME_ANNOTATION: &str = "scheduling.volcano.sh/queue-name";

/// `/podgroups/mutate`: `namespace_annotations` are those of the PodGroup's namespace (`None`
/// when it could not be read: Volcano then admits unchanged).
pub fn mutate(op: Operation, pg: &PodGroup, namespace_annotations: Option<&BTreeMap<String, String>>) -> Decision {
    if op != Operation::Create {
        return Decision::deny(format!("invalid operation `{}`, expect operation to be `CREATE`", op.as_str()));
    }
    if pg.spec.queue.as_deref().unwrap_or("") != "default" {
        return Decision::allow();
    }
    match namespace_annotations.and_then(|a| a.get(QUEUE_NAME_ANNOTATION)) {
        Some(q) => Decision::patched(vec![PatchOp::add("/spec/queue", q.clone())]),
        None => Decision::allow(),
    }
}

/// Whether a `networkTopology` object sets both `highestTierAllowed` and `highestTierName`.
pub fn both_tier_limits(nt: Option<&serde_json::Value>) -> bool {
    nt.is_some_and(|n| {
        n.get("highestTierAllowed").is_some_and(|v| !v.is_null())
            && n.get("highestTierName").and_then(|v| v.as_str()).is_some_and(|s| !s.is_empty())
    })
}

/// The message of a Queue that a PodGroup or Job may not be submitted to, or `None`.
fn queue_state(name: &str, queues: &QueueIndex) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let Some(q) = queues.get(name) else {
        return Some(format!("unable to find queue: {}", queue_not_found(name)));
    };
    let state = q.status.as_ref().and_then(|s| s.state.as_deref()).unwrap_or("");
    (state != "Open").then(|| format!("can only submit PodGroup to queue with state `Open`, queue `{name}` status is `{state}`."))
}

/// `/podgroups/validate`.
pub fn validate(op: Operation, pg: &PodGroup, queues: &QueueIndex) -> Decision {
    if op != Operation::Create {
        return Decision::deny(format!("unsupported operation {}", op.as_str()));
    }
    let mut errs = Vec::new();
    if let Some(e) = queue_state(pg.spec.queue.as_deref().unwrap_or(""), queues) {
        errs.push(e);
    }
    let mut topo = Vec::new();
    if both_tier_limits(pg.spec.network_topology.as_ref()) {
        topo.push("must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously.".to_string());
    }
    if let Some(policies) = pg.spec.sub_group_policy.as_ref().and_then(|p| p.as_array()) {
        if let Some(p) = policies.iter().find(|p| both_tier_limits(p.get("networkTopology"))) {
            let name = p.get("name").and_then(|n| n.as_str()).unwrap_or("");
            topo.push(format!(
                "in subGroupPolicy '{name}': must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously."
            ));
        }
    }
    if !topo.is_empty() {
        errs.push(topo.join(" "));
    }
    if errs.is_empty() {
        Decision::allow()
    } else {
        Decision::deny(errs.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::Queue;

    fn pg(spec: &str) -> PodGroup {
        serde_yaml::from_str(&format!("{{metadata: {{name: pg, namespace: ns}}, spec: {spec}}}")).unwrap()
    }

    fn queues() -> QueueIndex {
        let q = |y: &str| -> Queue { serde_yaml::from_str(y).unwrap() };
        QueueIndex::new([
            q("{metadata: {name: open}, spec: {}, status: {state: Open}}"),
            q("{metadata: {name: shut}, spec: {}, status: {state: Closed}}"),
        ])
    }

    #[test]
    fn default_queue_follows_the_namespace_annotation() {
        let ann: BTreeMap<String, String> = [(QUEUE_NAME_ANNOTATION.to_string(), "team-a".to_string())].into();
        let d = mutate(Operation::Create, &pg("{queue: default}"), Some(&ann));
        assert_eq!(d.patch, vec![PatchOp::add("/spec/queue", "team-a")]);
        assert!(mutate(Operation::Create, &pg("{queue: other}"), Some(&ann)).patch.is_empty());
        assert!(mutate(Operation::Create, &pg("{queue: default}"), None).patch.is_empty());
        assert!(mutate(Operation::Create, &pg("{queue: default}"), Some(&BTreeMap::new())).patch.is_empty());
    }

    #[test]
    fn queue_state_and_topology_exclusivity_are_checked() {
        let ix = queues();
        assert!(validate(Operation::Create, &pg("{queue: open}"), &ix).allowed);
        assert!(validate(Operation::Create, &pg("{}"), &ix).allowed, "no queue name is not checked");
        assert_eq!(
            validate(Operation::Create, &pg("{queue: shut}"), &ix).message,
            "can only submit PodGroup to queue with state `Open`, queue `shut` status is `Closed`."
        );
        assert_eq!(
            validate(Operation::Create, &pg("{queue: nope}"), &ix).message,
            "unable to find queue: queue.scheduling.volcano.sh \"nope\" not found"
        );
        let both = pg("{queue: shut, networkTopology: {mode: hard, highestTierAllowed: 1, highestTierName: spine}, subGroupPolicy: [{name: sg, networkTopology: {highestTierAllowed: 1, highestTierName: leaf}}]}");
        assert_eq!(
            validate(Operation::Create, &both, &ix).message,
            "can only submit PodGroup to queue with state `Open`, queue `shut` status is `Closed`.; must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously. in subGroupPolicy 'sg': must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously."
        );
    }
}
