//! Volcano `PodGroup` → [`PodGroupSpec`].

use super::resources::resource_list;
use super::{creation_ms, namespace, preemptable_set, required_name, ConvertError, ObjRef};
use crate::crd;
use basalt_core::model::{PodGroupCondition, PodGroupPhase, PodGroupSpec, TaskTopology};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// PodGroup annotation: the job's SLA waiting time (a Go duration), read by the `sla` plugin.
pub const SLA_WAITING_TIME: &str = "sla-waiting-time";
/// PodGroup annotations of the `task-topology` plugin.
pub const TASK_TOPOLOGY_AFFINITY: &str = "volcano.sh/task-topology-affinity";
/// See [`TASK_TOPOLOGY_AFFINITY`].
pub const TASK_TOPOLOGY_ANTI_AFFINITY: &str = "volcano.sh/task-topology-anti-affinity";
/// See [`TASK_TOPOLOGY_AFFINITY`].
pub const TASK_TOPOLOGY_TASK_ORDER: &str = "volcano.sh/task-topology-task-order";

fn annotation<'m>(meta: &'m ObjectMeta, key: &str) -> Option<&'m str> {
    meta.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
}

/// Annotation `sla-waiting-time` in nanoseconds (Volcano `extractWaitingTime`). Errors: not a
/// Go duration, or not positive (Volcano logs these and treats the job as having no SLA;
/// Basalt refuses the PodGroup so the mistake is seen).
fn sla_waiting_ns(obj: ObjRef<'_>, meta: &ObjectMeta) -> Result<Option<i64>, ConvertError> {
    let Some(v) = annotation(meta, SLA_WAITING_TIME) else { return Ok(None) };
    let field = format!("metadata.annotations[{SLA_WAITING_TIME}]");
    match basalt_core::conf::parse_go_duration_ns(v) {
        Some(d) if d > 0 => Ok(Some(d)),
        Some(_) => Err(obj.error(field, format!("must be a positive duration, got {v:?}"))),
        None => Err(obj.error(field, format!("not a duration such as \"1h30m\": {v:?}"))),
    }
}

/// The task-topology annotations, split as Volcano splits them (groups by `;`, names by `,`);
/// `None` when none is set. Which names are tasks of the job is checked by the plugin, which
/// sees the job's pods.
fn task_topology(meta: &ObjectMeta) -> Option<TaskTopology> {
    let groups = |key| annotation(meta, key).map(|v| v.split(';').map(|g| g.split(',').map(str::to_string).collect()).collect());
    let t = TaskTopology {
        affinity: groups(TASK_TOPOLOGY_AFFINITY),
        anti_affinity: groups(TASK_TOPOLOGY_ANTI_AFFINITY),
        task_order: annotation(meta, TASK_TOPOLOGY_TASK_ORDER).map(|v| v.split(',').map(str::to_string).collect()),
    };
    (t.affinity.is_some() || t.anti_affinity.is_some() || t.task_order.is_some()).then_some(t)
}

/// Converts a PodGroup.
///
/// Namespace defaults to `default`, `uid` to `<ns>/<name>`, `minMember` to 0, `queue` stays
/// empty when unset (the core uses the default queue). `preemptable` comes from annotation,
/// else label, `volcano.sh/preemptable` (jobs default to false); annotation `sla-waiting-time`
/// and the `volcano.sh/task-topology-*` annotations are read for the sla and task-topology
/// plugins. Errors: missing name, negative `minMember`, malformed `minResources`, unknown
/// `status.phase`, an `sla-waiting-time` that is not a positive Go duration.
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
    let sla_waiting_ns = sla_waiting_ns(obj, meta)?;
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
        preemptable: preemptable_set(meta),
        sla_waiting_ns,
        task_topology: task_topology(meta),
        network_topology: match &spec.network_topology {
            Some(v) => super::hypernode::network_topology(obj, v, "spec.networkTopology")?,
            None => None,
        },
        sub_group_policy: match &spec.sub_group_policy {
            Some(v) => super::hypernode::sub_group_policy(obj, v)?,
            None => Vec::new(),
        },
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
        assert!(got.preemptable.is_none() && got.min_resources.is_none());
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
        assert_eq!(got.preemptable, Some(true));
    }

    #[test]
    fn sla_and_task_topology_annotations() {
        let got = convert_pod_group(&pg(
            "metadata: {name: pg1, annotations: {sla-waiting-time: 1h2m, volcano.sh/task-topology-affinity: 'ps,worker;chief', volcano.sh/task-topology-task-order: 'ps,worker'}}\nspec: {}\n",
        ))
        .unwrap();
        assert_eq!(got.sla_waiting_ns, Some(3_720_000_000_000));
        let t = got.task_topology.unwrap();
        assert_eq!(t.affinity, Some(vec![vec!["ps".to_string(), "worker".to_string()], vec!["chief".to_string()]]));
        assert_eq!(t.anti_affinity, None);
        assert_eq!(t.task_order, Some(vec!["ps".to_string(), "worker".to_string()]));
        let plain = convert_pod_group(&pg("metadata: {name: pg1}\nspec: {}\n")).unwrap();
        assert_eq!((plain.sla_waiting_ns, plain.task_topology), (None, None));
        for bad in ["10", "soon", "-5m", "0s"] {
            let e = convert_pod_group(&pg(&format!(
                "metadata: {{name: pg1, annotations: {{sla-waiting-time: '{bad}'}}}}\nspec: {{}}\n"
            )))
            .unwrap_err();
            assert_eq!(e.field, "metadata.annotations[sla-waiting-time]", "{bad}");
            assert!(e.to_string().starts_with("PodGroup default/pg1: field metadata.annotations[sla-waiting-time]: "), "{e}");
        }
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
