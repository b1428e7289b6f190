//! The objects a Job owns, built as Volcano builds them (volcano-behaviour.md §5.1): its
//! PodGroup `<job>-<jobUID>` and its pods `<job>-<task>-<index>`. Pure.

use super::defaults::{task_name, JobFacts, DEFAULT_SCHEDULER};
use super::keys;
use crate::crd::{Job, PodGroup, PodGroupSpec, PodGroupStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaimVolumeSource, Pod, PodSpec, ResourceRequirements, Volume, VolumeMount};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;
use std::collections::BTreeMap;

/// A Job that cannot be turned into pods, naming the object and field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The job has no UID yet (not read from the API).
    #[error("Job {0}: metadata.uid is not set")]
    NoUid(String),
    /// A task has no `template.spec`.
    #[error("Job {job}: spec.tasks[{task}].template.spec is not set")]
    NoTemplate {
        /// `namespace/name`.
        job: String,
        /// The task index.
        task: usize,
    },
}

/// `<job>-<jobUID>`, the PodGroup's name.
pub fn pod_group_name(job: &Job) -> Result<String, BuildError> {
    let uid = job.metadata.uid.as_deref().ok_or_else(|| BuildError::NoUid(job_key(job)))?;
    Ok(format!("{}-{uid}", job.metadata.name.as_deref().unwrap_or_default()))
}

/// `<job>-<task>-<index>`, a pod's name.
pub fn pod_name(job: &str, task: &str, index: i32) -> String {
    format!("{job}-{task}-{index}")
}

/// `namespace/name`.
pub fn job_key(job: &Job) -> String {
    format!("{}/{}", job.metadata.namespace.as_deref().unwrap_or_default(), job.metadata.name.as_deref().unwrap_or_default())
}

/// The Job as controller owner of what it creates.
pub fn owner_reference(job: &Job) -> OwnerReference {
    OwnerReference {
        api_version: Job::api_version(&()).into_owned(),
        kind: Job::kind(&()).into_owned(),
        name: job.metadata.name.clone().unwrap_or_default(),
        uid: job.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Adds `reqs`' requests in thousandths; a quantity that does not parse is skipped here (the
/// apiserver rejects the pod when it is created, and that error is reported).
fn add_quantities(into: &mut BTreeMap<String, i64>, reqs: Option<&ResourceRequirements>) {
    let Some(reqs) = reqs.and_then(|r| r.requests.as_ref()) else { return };
    for (k, q) in reqs {
        if let Ok(v) = crate::convert::quantity::to_milli(&q.0) {
            *into.entry(k.clone()).or_default() += v;
        }
    }
}

fn quantity_text(milli: i64) -> String {
    if milli % 1000 == 0 {
        format!("{}", milli / 1000)
    } else {
        format!("{milli}m")
    }
}

/// `minResources`: requests of the first `minAvailable` pods, each task's `minAvailable` pods
/// first (tasks in spec order), then the spare replicas.
fn min_resources(job: &Job, facts: &JobFacts) -> BTreeMap<String, Quantity> {
    let mut sum = BTreeMap::new();
    let mut left = facts.min_available;
    let per_pod: Vec<_> = job
        .spec
        .tasks
        .iter()
        .map(|t| {
            let mut one = BTreeMap::new();
            if let Some(spec) = t.template.as_ref().and_then(|tp| tp.spec.as_ref()) {
                for c in &spec.containers {
                    add_quantities(&mut one, c.resources.as_ref());
                }
            }
            one
        })
        .collect();
    let mut take = |ti: usize, n: i32, sum: &mut BTreeMap<String, i64>| {
        let n = n.min(left).max(0);
        left -= n;
        for (k, v) in &per_pod[ti] {
            *sum.entry(k.clone()).or_default() += v * i64::from(n);
        }
    };
    for (ti, t) in facts.tasks.iter().enumerate() {
        take(ti, t.min_available, &mut sum);
    }
    for (ti, t) in facts.tasks.iter().enumerate() {
        take(ti, t.replicas - t.min_available, &mut sum);
    }
    sum.into_iter().map(|(k, v)| (k, Quantity(quantity_text(v)))).collect()
}

/// The job's PodGroup: owner the Job, the job's labels and annotations, `minMember` =
/// minAvailable, `minTaskMember`, `queue`, `priorityClassName`, `minResources`,
/// `networkTopology`; phase Pending.
///
/// Errors: [`BuildError::NoUid`].
pub fn pod_group(job: &Job) -> Result<PodGroup, BuildError> {
    let facts = JobFacts::of(job);
    Ok(PodGroup {
        metadata: ObjectMeta {
            name: Some(pod_group_name(job)?),
            namespace: job.metadata.namespace.clone(),
            labels: job.metadata.labels.clone(),
            annotations: job.metadata.annotations.clone(),
            owner_references: Some(vec![owner_reference(job)]),
            ..Default::default()
        },
        spec: PodGroupSpec {
            min_member: Some(facts.min_available),
            min_task_member: Some(facts.tasks.iter().map(|t| (t.name.clone(), t.min_available)).collect()),
            queue: Some(facts.queue.clone()),
            priority_class_name: job.spec.priority_class_name.clone(),
            min_resources: Some(min_resources(job, &facts)),
            network_topology: job.spec.network_topology.clone(),
            sub_group_policy: sub_group_policy(job),
        },
        status: Some(PodGroupStatus { phase: Some("Pending".into()), ..Default::default() }),
    })
}

/// `spec.subGroupPolicy` of the job's PodGroup (Volcano's `setPgSubGroupPolicy`): one entry per
/// task with a `partitionPolicy`, named after the task, its pods (label `volcano.sh/task-spec`)
/// grouped by `volcano.sh/partition-id`, `subGroupSize` the partition size, `minSubGroups` the
/// minimum partitions, and the partition's `networkTopology`. `None` when no task has one.
pub fn sub_group_policy(job: &Job) -> Option<serde_json::Value> {
    let mut out = Vec::new();
    for (ti, t) in job.spec.tasks.iter().enumerate() {
        let Some(p) = t.partition() else { continue };
        let name = task_name(t, ti);
        let mut entry = serde_json::json!({
            "name": name,
            "subGroupSize": p.partition_size,
            "minSubGroups": p.min_partitions,
            "labelSelector": {"matchLabels": {keys::TASK_SPEC: name}},
            "matchLabelKeys": [keys::PARTITION_ID],
        });
        if let Some(nt) = p.network_topology {
            entry["networkTopology"] = nt;
        }
        out.push(entry);
    }
    (!out.is_empty()).then_some(serde_json::Value::Array(out))
}

/// The merge patch that brings an existing PodGroup's spec to what `job` asks now (Volcano's
/// `shouldUpdateExistingPodGroup`): `priorityClassName`, `minMember`, `minResources`, each
/// task's `minTaskMember` and `subGroupPolicy`; `None` when they agree.
///
/// Errors: as [`pod_group`].
pub fn pod_group_patch(job: &Job, existing: &PodGroup) -> Result<Option<serde_json::Value>, BuildError> {
    let want = pod_group(job)?.spec;
    let have = &existing.spec;
    let mut spec = serde_json::Map::new();
    if want.priority_class_name.as_deref().unwrap_or_default() != have.priority_class_name.as_deref().unwrap_or_default() {
        spec.insert("priorityClassName".into(), serde_json::json!(want.priority_class_name));
    }
    if want.min_member != have.min_member || !same_quantities(want.min_resources.as_ref(), have.min_resources.as_ref()) {
        spec.insert("minMember".into(), serde_json::json!(want.min_member));
        spec.insert("minResources".into(), serde_json::json!(want.min_resources));
    }
    let have_tasks = have.min_task_member.clone().unwrap_or_default();
    let changed: BTreeMap<String, i32> =
        want.min_task_member.clone().unwrap_or_default().into_iter().filter(|(k, v)| have_tasks.get(k) != Some(v)).collect();
    if !changed.is_empty() || have.min_task_member.is_none() {
        spec.insert("minTaskMember".into(), serde_json::json!(changed));
    }
    if want.sub_group_policy.as_ref().unwrap_or(&serde_json::Value::Null)
        != have.sub_group_policy.as_ref().unwrap_or(&serde_json::Value::Null)
    {
        let had = have.sub_group_policy.as_ref().and_then(|v| v.as_array()).is_some_and(|a| !a.is_empty());
        // Volcano replaces the list only when a task's entry changed or one went away.
        if want.sub_group_policy.is_some() || had {
            spec.insert("subGroupPolicy".into(), want.sub_group_policy.unwrap_or_else(|| serde_json::json!([])));
        }
    }
    Ok((!spec.is_empty()).then(|| serde_json::json!({ "spec": spec })))
}

/// Whether two resource lists hold the same amounts (the server writes quantities in its
/// canonical form: `67108864` comes back as `64Mi`). Unset equals empty.
fn same_quantities(a: Option<&BTreeMap<String, Quantity>>, b: Option<&BTreeMap<String, Quantity>>) -> bool {
    let milli = |m: Option<&BTreeMap<String, Quantity>>| -> BTreeMap<String, Option<i64>> {
        m.into_iter().flatten().map(|(k, q)| (k.clone(), crate::convert::quantity::to_milli(&q.0).ok())).collect()
    };
    milli(a) == milli(b)
}

/// Pod `index` of task `ti`: the template with Volcano's name, owner, labels, annotations,
/// scheduler and priority class (when the template names none) and the job's volumes.
///
/// Errors: no UID, no `template.spec`.
pub fn pod(job: &Job, ti: usize, index: i32) -> Result<Pod, BuildError> {
    let task = &job.spec.tasks[ti];
    let tname = task_name(task, ti);
    let jname = job.metadata.name.clone().unwrap_or_default();
    let ns = job.metadata.namespace.clone();
    let facts = JobFacts::of(job);
    let status = job.status.clone().unwrap_or_default();
    let template = task.template.clone().unwrap_or_default();
    let mut spec: PodSpec = template.spec.ok_or_else(|| BuildError::NoTemplate { job: job_key(job), task: ti })?;
    let tmeta = template.metadata.unwrap_or_default();
    if spec.scheduler_name.as_deref().is_none_or(str::is_empty) {
        spec.scheduler_name =
            Some(job.spec.scheduler_name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| DEFAULT_SCHEDULER.into()));
    }
    if spec.priority_class_name.as_deref().is_none_or(str::is_empty) {
        spec.priority_class_name = job.spec.priority_class_name.clone();
    }
    for (vi, v) in job.spec.volumes.iter().enumerate() {
        let Some(claim) = v.volume_claim_name.clone() else { continue };
        let vname = format!("{jname}-volume-{vi}");
        spec.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: vname.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource { claim_name: claim, read_only: None }),
            ..Default::default()
        });
        for c in &mut spec.containers {
            c.volume_mounts.get_or_insert_with(Vec::new).push(VolumeMount {
                name: vname.clone(),
                mount_path: v.mount_path.clone(),
                ..Default::default()
            });
        }
    }
    let mut annotations = tmeta.annotations.unwrap_or_default();
    let index_text = index.to_string();
    for (k, v) in [
        (keys::TASK_INDEX, index_text.clone()),
        (keys::TASK_SPEC, tname.clone()),
        (keys::GROUP_NAME, pod_group_name(job)?),
        (keys::JOB_NAME, jname.clone()),
        (keys::QUEUE_NAME, facts.queue.clone()),
        (keys::JOB_VERSION, status.version.to_string()),
        (keys::TEMPLATE_UID, format!("{jname}-{tname}")),
        (keys::JOB_RETRY_COUNT, status.retry_count.to_string()),
    ] {
        annotations.insert(k.to_string(), v);
    }
    if let Some(p) = task.topology_policy.as_deref().filter(|p| !p.is_empty()) {
        annotations.insert(keys::NUMA_POLICY.into(), p.into());
    }
    let mut labels = tmeta.labels.unwrap_or_default();
    for (k, v) in [
        (keys::TASK_INDEX, index_text),
        (keys::JOB_NAME, jname.clone()),
        (keys::TASK_SPEC, tname.clone()),
        (keys::JOB_NAMESPACE, ns.clone().unwrap_or_default()),
        (keys::QUEUE_NAME, facts.queue.clone()),
    ] {
        labels.insert(k.to_string(), v);
    }
    if let Some(p) = task.partition() {
        // Volcano: index / partitionSize, partition 0 for a size that is not positive.
        let id = if p.partition_size > 0 { index / p.partition_size } else { 0 };
        labels.insert(keys::PARTITION_ID.into(), id.to_string());
    }
    if let Some(ja) = job.metadata.annotations.as_ref() {
        for (i, k) in keys::COPIED_FROM_JOB.iter().enumerate() {
            if let Some(v) = ja.get(*k) {
                annotations.insert(k.to_string(), v.clone());
                if i < 2 {
                    labels.insert(k.to_string(), v.clone());
                }
            }
        }
    }
    Ok(Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(&jname, &tname, index)),
            namespace: ns,
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references: Some(vec![owner_reference(job)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{JobSpec, TaskSpec};
    use k8s_openapi::api::core::v1::{Container, PodTemplateSpec};

    pub(crate) fn two_task_job() -> Job {
        let tpl = |cpu: &str| PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(BTreeMap::from([("app".to_string(), "tf".to_string())])),
                ..Default::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "c".into(),
                    image: Some("busybox".into()),
                    resources: Some(ResourceRequirements {
                        requests: Some(BTreeMap::from([("cpu".to_string(), Quantity(cpu.into()))])),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            }),
        };
        let mut j = Job::new(
            "tf",
            JobSpec {
                min_available: Some(2),
                priority_class_name: Some("high".into()),
                tasks: vec![
                    TaskSpec { name: Some("ps".into()), replicas: Some(1), template: Some(tpl("1")), ..Default::default() },
                    TaskSpec {
                        name: Some("worker".into()),
                        replicas: Some(2),
                        min_available: Some(1),
                        template: Some(tpl("500m")),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            },
        );
        j.metadata.namespace = Some("ns".into());
        j.metadata.uid = Some("uid-1".into());
        j.metadata.annotations = Some(BTreeMap::from([("volcano.sh/preemptable".to_string(), "true".to_string())]));
        j
    }

    #[test]
    fn pod_group_as_volcano_computes_it() {
        let pg = pod_group(&two_task_job()).unwrap();
        assert_eq!(pg.metadata.name.as_deref(), Some("tf-uid-1"));
        assert_eq!(pg.spec.min_member, Some(2));
        assert_eq!(pg.spec.min_task_member, Some(BTreeMap::from([("ps".to_string(), 1), ("worker".to_string(), 1)])));
        assert_eq!(pg.spec.queue.as_deref(), Some("default"));
        assert_eq!(pg.spec.priority_class_name.as_deref(), Some("high"));
        // first minAvailable (2) pods: ps's 1 CPU and one worker's 0.5 CPU
        assert_eq!(pg.spec.min_resources.unwrap()["cpu"], Quantity("1500m".into()));
        let owner = &pg.metadata.owner_references.unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.controller), ("Job", Some(true)));
    }

    #[test]
    fn pod_as_volcano_names_and_labels_it() {
        let mut job = two_task_job();
        job.status = Some(crate::crd::JobStatus { version: 4, retry_count: 2, ..Default::default() });
        let p = pod(&job, 1, 1).unwrap();
        assert_eq!(p.metadata.name.as_deref(), Some("tf-worker-1"));
        let a = p.metadata.annotations.unwrap();
        assert_eq!(a[keys::GROUP_NAME], "tf-uid-1");
        assert_eq!(a[keys::JOB_VERSION], "4");
        assert_eq!(a[keys::JOB_RETRY_COUNT], "2");
        assert_eq!(a[keys::TEMPLATE_UID], "tf-worker");
        assert_eq!(a[keys::TASK_INDEX], "1");
        assert_eq!(a["volcano.sh/preemptable"], "true");
        let l = p.metadata.labels.unwrap();
        assert_eq!(
            (l[keys::JOB_NAME].as_str(), l[keys::TASK_SPEC].as_str(), l[keys::JOB_NAMESPACE].as_str()),
            ("tf", "worker", "ns")
        );
        assert_eq!(l["app"], "tf");
        let spec = p.spec.unwrap();
        assert_eq!(spec.scheduler_name.as_deref(), Some("volcano"));
        assert_eq!(spec.priority_class_name.as_deref(), Some("high"));
    }

    #[test]
    fn missing_template_and_uid_are_named() {
        let mut job = two_task_job();
        job.spec.tasks[0].template = None;
        assert_eq!(pod(&job, 0, 0).unwrap_err().to_string(), "Job ns/tf: spec.tasks[0].template.spec is not set");
        job.metadata.uid = None;
        assert_eq!(pod_group(&job).unwrap_err().to_string(), "Job ns/tf: metadata.uid is not set");
    }

    /// The worker task of [`two_task_job`] with 4 replicas in partitions of 2 (at least 1).
    fn partitioned() -> Job {
        let mut j = two_task_job();
        let w = &mut j.spec.tasks[1];
        w.replicas = Some(4);
        w.min_available = None;
        w.partition_policy = Some(serde_json::json!({
            "totalPartitions": 2, "partitionSize": 2, "minPartitions": 1,
            "networkTopology": {"mode": "hard", "highestTierAllowed": 1}
        }));
        j
    }

    #[test]
    fn partitions_label_pods_and_become_sub_groups() {
        let j = partitioned();
        let ids: Vec<String> =
            (0..4).map(|i| pod(&j, 1, i).unwrap().metadata.labels.unwrap()[keys::PARTITION_ID].clone()).collect();
        assert_eq!(ids, ["0", "0", "1", "1"]);
        assert!(!pod(&j, 0, 0).unwrap().metadata.labels.unwrap().contains_key(keys::PARTITION_ID), "ps has no partitions");
        let pg = pod_group(&j).unwrap();
        assert_eq!(pg.spec.min_task_member.as_ref().unwrap()["worker"], 2, "minPartitions × partitionSize");
        assert_eq!(
            pg.spec.sub_group_policy,
            Some(serde_json::json!([{
                "name": "worker", "subGroupSize": 2, "minSubGroups": 1,
                "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "worker"}},
                "matchLabelKeys": ["volcano.sh/partition-id"],
                "networkTopology": {"mode": "hard", "highestTierAllowed": 1}
            }]))
        );
        assert_eq!(sub_group_policy(&two_task_job()), None);
    }

    #[test]
    fn an_existing_pod_group_follows_the_job() {
        let plain = two_task_job();
        let mut pg = pod_group(&plain).unwrap();
        assert_eq!(pod_group_patch(&plain, &pg).unwrap(), None, "nothing changed");
        // the server's canonical quantities are the same amounts
        pg.spec.min_resources.as_mut().unwrap().insert("cpu".into(), Quantity("1500m".into()));
        let before = pg.spec.min_resources.clone().unwrap();
        pg.spec.min_resources =
            Some(before.into_iter().map(|(k, v)| (k, if v.0 == "1500m" { Quantity("1.5".into()) } else { v })).collect());
        assert_eq!(pod_group_patch(&plain, &pg).unwrap(), None, "1.5 and 1500m are the same");
        let patch = pod_group_patch(&partitioned(), &pg).unwrap().expect("a patch");
        let spec = &patch["spec"];
        assert_eq!(spec["minTaskMember"], serde_json::json!({"worker": 2}), "only the changed task");
        assert_eq!(spec["subGroupPolicy"][0]["name"], "worker");
        assert!(spec.get("priorityClassName").is_none());
        // a partition policy removed: the sub-groups go
        let mut pg2 = pod_group(&partitioned()).unwrap();
        pg2.spec.min_task_member = pod_group(&plain).unwrap().spec.min_task_member;
        let patch = pod_group_patch(&plain, &pg2).unwrap().expect("a patch");
        assert_eq!(patch["spec"]["subGroupPolicy"], serde_json::json!([]));
    }
}
