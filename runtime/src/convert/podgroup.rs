//! Volcano `PodGroup` → [`PodGroupSpec`].

use super::resources::resource_list;
use super::{creation_ms, namespace, preemptable, required_name, ConvertError, ObjRef};
use crate::crd;
use basalt_core::model::{PodGroupCondition, PodGroupPhase, PodGroupSpec};

/// Converts a PodGroup.
///
/// Namespace defaults to `default`, `uid` to `<ns>/<name>`, `minMember` to 0, `queue` stays
/// empty when unset (the core uses the default queue). `preemptable` comes from annotation,
/// else label, `volcano.sh/preemptable` (jobs default to false). Errors: missing name,
/// negative `minMember`, malformed `minResources`, unknown `status.phase`.
pub fn convert_pod_group(pg: &crd::PodGroup) -> Result<PodGroupSpec, ConvertError> {
    let meta = &pg.metadata;
    let name = required_name("PodGroup", meta)?;
    let ns = namespace(meta);
    let key = format!("{ns}/{name}");
    let obj = ObjRef { kind: "PodGroup", name: &key };
    let spec = &pg.spec;
    let min_member = spec.min_member.unwrap_or(0);
    if min_member < 0 {
        return Err(obj.error("spec.minMember", format!("must be >= 0, got {min_member}")));
    }
    // Quota-usage keys (`requests.cpu`, `limits.memory`, `count/pods`), which Volcano's PodGroup
    // controller writes for plain pods, name no schedulable resource: Volcano's `NewResource`
    // skips them, and so does Basalt (they would be dimensions no node has).
    let schedulable = |k: &String| !(k.starts_with("requests.") || k.starts_with("limits.") || k.starts_with("count/"));
    let min_resources = spec
        .min_resources
        .as_ref()
        .map(|l| {
            let kept: std::collections::BTreeMap<_, _> =
                l.iter().filter(|(k, _)| schedulable(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
            resource_list(obj, "spec.minResources", Some(&kept))
        })
        .transpose()?;
    let status = pg.status.clone().unwrap_or_default();
    let phase_str = status.phase.as_deref().unwrap_or("");
    let phase = PodGroupPhase::parse(phase_str)
        .ok_or_else(|| obj.error("status.phase", format!("unknown PodGroup phase {phase_str:?}")))?;
    let conditions = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .map(|c| PodGroupCondition {
            kind: c.type_.unwrap_or_default(),
            status: c.status.unwrap_or_default(),
            transition_id: c.transition_id.unwrap_or_default(),
            reason: c.reason.unwrap_or_default(),
            message: c.message.unwrap_or_default(),
        })
        .collect();
    Ok(PodGroupSpec {
        uid: meta.uid.clone().filter(|u| !u.is_empty()).unwrap_or_else(|| key.clone()),
        creation_ms: creation_ms(meta),
        min_member,
        min_task_member: spec.min_task_member.clone().unwrap_or_default(),
        queue: spec.queue.clone().unwrap_or_default(),
        priority_class_name: spec.priority_class_name.clone().unwrap_or_default(),
        min_resources,
        phase,
        conditions,
        preemptable: preemptable(meta, false),
        namespace: ns,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(yaml: &str) -> crd::PodGroup {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn converts_with_defaults() {
        let got = convert_pod_group(&pg("metadata: {name: pg1}\nspec: {}\n")).unwrap();
        assert_eq!(
            (got.namespace.as_str(), got.uid.as_str(), got.min_member, got.queue.as_str()),
            ("default", "default/pg1", 0, "")
        );
        assert_eq!(got.phase, PodGroupPhase::Empty);
        assert!(!got.preemptable && got.min_resources.is_none());
    }

    #[test]
    fn converts_fields() {
        let got = convert_pod_group(&pg(
            "metadata: {name: pg1, namespace: ml, uid: u1, annotations: {volcano.sh/preemptable: 'true'}}\nspec: {minMember: 4, queue: research, priorityClassName: high, minTaskMember: {worker: 3}, minResources: {cpu: 4, nvidia.com/gpu: 4}}\nstatus: {phase: Running, conditions: [{type: Scheduled, status: 'True', transitionID: '7', reason: tasks in gang are ready to be scheduled}]}\n",
        ))
        .unwrap();
        assert_eq!(got.min_member, 4);
        assert_eq!(got.min_task_member.get("worker"), Some(&3));
        assert_eq!(got.min_resources.as_ref().unwrap().get("nvidia.com/gpu"), Some(&4000));
        assert_eq!(got.phase, PodGroupPhase::Running);
        assert_eq!(got.conditions[0].kind, "Scheduled");
        assert_eq!(got.conditions[0].transition_id, "7");
        assert!(got.preemptable);
    }

    #[test]
    fn quota_usage_keys_are_not_resources() {
        let got = convert_pod_group(&pg(
            "metadata: {name: pg1, namespace: ml}\nspec: {minResources: {cpu: 500m, requests.cpu: 500m, limits.cpu: '1', count/pods: '1', pods: '1', requests.nvidia.com/gpu: '1', nvidia.com/gpu: '1'}}\n",
        ))
        .unwrap();
        let keys: Vec<&String> = got.min_resources.as_ref().unwrap().keys().collect();
        assert_eq!(keys, ["cpu", "nvidia.com/gpu", "pods"]);
    }

    #[test]
    fn errors_name_the_field() {
        let e = convert_pod_group(&pg("metadata: {name: pg1, namespace: ml}\nspec: {minMember: -1}\n")).unwrap_err();
        assert_eq!(e.to_string(), "PodGroup ml/pg1: field spec.minMember: must be >= 0, got -1");
        let e = convert_pod_group(&pg("metadata: {name: pg1}\nspec: {}\nstatus: {phase: Sleeping}\n")).unwrap_err();
        assert_eq!(e.field, "status.phase");
        let e = convert_pod_group(&pg("metadata: {name: pg1}\nspec: {minResources: {memory: 1Qi}}\n")).unwrap_err();
        assert_eq!(e.field, "spec.minResources.memory");
    }
}
