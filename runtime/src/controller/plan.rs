//! What a sync or a kill does to a job's pods, and the status counts afterwards
//! (volcano-behaviour.md §5.1 "KillJob", "SyncJob"). Pure: the controller's executor carries the
//! plans out against the API.

use super::defaults::JobFacts;
use super::keys;
use super::state::{Retain, Target};
use crate::crd::{Job, JobStatus, TaskState};
use k8s_openapi::api::core::v1::Pod;
use std::collections::BTreeMap;

/// What the controller reads of one of its pods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodView {
    /// The pod's name.
    pub name: String,
    /// Its UID.
    pub uid: String,
    /// `volcano.sh/task-spec`.
    pub task: String,
    /// `status.phase` (`Pending` when unset).
    pub phase: String,
    /// Being deleted (`deletionTimestamp` set, or deleted by this controller).
    pub deleting: bool,
    /// `volcano.sh/job-version`.
    pub version: i32,
    /// Σ container and init-container restarts.
    pub restarts: i32,
    /// The first container's exit code when terminated.
    pub exit_code: Option<i32>,
    /// `volcano.sh/partition-id` (label), for a task with a `partitionPolicy`.
    pub partition: Option<String>,
}

impl PodView {
    /// Reads `pod`.
    pub fn of(pod: &Pod) -> PodView {
        let ann = pod.metadata.annotations.as_ref();
        let get = |k: &str| ann.and_then(|a| a.get(k)).cloned();
        let status = pod.status.as_ref();
        let restarts = status
            .map(|s| {
                s.container_statuses.iter().flatten().map(|c| c.restart_count).sum::<i32>()
                    + s.init_container_statuses.iter().flatten().map(|c| c.restart_count).sum::<i32>()
            })
            .unwrap_or(0);
        let exit_code = status
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|cs| cs.first())
            .and_then(|c| c.state.as_ref())
            .and_then(|st| st.terminated.as_ref())
            .map(|t| t.exit_code);
        PodView {
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            task: get(keys::TASK_SPEC).unwrap_or_default(),
            phase: status.and_then(|s| s.phase.clone()).filter(|p| !p.is_empty()).unwrap_or_else(|| "Pending".into()),
            deleting: pod.metadata.deletion_timestamp.is_some(),
            version: get(keys::JOB_VERSION).and_then(|v| v.parse().ok()).unwrap_or(0),
            restarts,
            exit_code,
            partition: pod.metadata.labels.as_ref().and_then(|l| l.get(keys::PARTITION_ID)).cloned(),
        }
    }

    /// Running and not being deleted, or Succeeded: counts as ready for `dependsOn`.
    pub fn ready(&self) -> bool {
        (self.phase == "Running" && !self.deleting) || self.phase == "Succeeded"
    }
}

/// Recounts `status`'s counters and `taskStatusCount` from `pods` and sets `minAvailable`.
pub fn recount<'a>(facts: &JobFacts, pods: impl IntoIterator<Item = &'a PodView>, status: &mut JobStatus) {
    let (mut pending, mut running, mut succeeded, mut failed, mut terminating, mut unknown) = (0, 0, 0, 0, 0, 0);
    let mut per_task: BTreeMap<String, TaskState> = BTreeMap::new();
    for p in pods {
        if p.deleting {
            terminating += 1;
            continue;
        }
        match p.phase.as_str() {
            "Pending" => pending += 1,
            "Running" => running += 1,
            "Succeeded" => succeeded += 1,
            "Failed" => failed += 1,
            _ => unknown += 1,
        }
        *per_task.entry(p.task.clone()).or_default().phase.entry(p.phase.clone()).or_default() += 1;
    }
    status.pending = pending;
    status.running = running;
    status.succeeded = succeeded;
    status.failed = failed;
    status.terminating = terminating;
    status.unknown = unknown;
    status.task_status_count = per_task;
    status.min_available = facts.min_available;
}

/// A sync's work.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncPlan {
    /// Pods to create: (task index, pod index).
    pub create: Vec<(usize, i32)>,
    /// Pods to delete (beyond `replicas`, or of a task no longer in the spec).
    pub delete: Vec<String>,
    /// Tasks whose pods wait on `dependsOn`.
    pub waiting: Vec<String>,
}

/// Whether task `ti`'s `dependsOn` is met: `all` (default) or `any` of the named tasks has at
/// least its `minAvailable` pods ready.
fn depends_met(job: &Job, facts: &JobFacts, ti: usize, pods: &BTreeMap<String, PodView>) -> bool {
    let Some(dep) = job.spec.tasks[ti].depends_on.as_ref() else { return true };
    if dep.name.is_empty() {
        return true;
    }
    let ready = |name: &str| {
        let need = facts.task(name).map(|t| t.min_available).unwrap_or(0);
        pods.values().filter(|p| p.task == name && p.ready()).count() as i32 >= need
    };
    if dep.iteration.as_deref() == Some("any") {
        dep.name.iter().any(|n| ready(n))
    } else {
        dep.name.iter().all(|n| ready(n))
    }
}

/// Volcano's SyncJob pod work: once the PodGroup has left Pending (`pg_phase` not `None`,
/// empty or `Pending`), create pods `0..replicas` missing from `pods` for each task whose
/// `dependsOn` is met; delete pods past `replicas` or of unknown tasks.
pub fn plan_sync(job: &Job, facts: &JobFacts, pods: &BTreeMap<String, PodView>, pg_phase: Option<&str>) -> SyncPlan {
    let mut plan = SyncPlan::default();
    let admitted = !matches!(pg_phase, None | Some("") | Some("Pending"));
    let jname = job.metadata.name.as_deref().unwrap_or_default();
    let mut expected = std::collections::BTreeSet::new();
    for (ti, t) in facts.tasks.iter().enumerate() {
        let met = depends_met(job, facts, ti, pods);
        if !met {
            plan.waiting.push(t.name.clone());
        }
        for i in 0..t.replicas {
            let name = super::build::pod_name(jname, &t.name, i);
            if !pods.contains_key(&name) && admitted && met {
                plan.create.push((ti, i));
            }
            expected.insert(name);
        }
    }
    for p in pods.values() {
        if !expected.contains(&p.name) && !p.deleting {
            plan.delete.push(p.name.clone());
        }
    }
    plan
}

/// Volcano's KillJob/KillTarget pod work: the target's pods not being deleted already, except
/// Succeeded and Failed ones when `retain` is Soft.
pub fn plan_kill(pods: &BTreeMap<String, PodView>, target: &Target, retain: Retain) -> Vec<String> {
    pods.values()
        .filter(|p| !p.deleting)
        .filter(|p| match target {
            Target::Job => true,
            Target::Task(t) => &p.task == t,
            Target::Pod(n) => &p.name == n,
            Target::Partition(t, id) => &p.task == t && p.partition.as_deref() == Some(id.as_str()),
        })
        .filter(|p| retain == Retain::None || !matches!(p.phase.as_str(), "Succeeded" | "Failed"))
        .map(|p| p.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{DependsOn, JobSpec, TaskSpec};

    fn v(name: &str, task: &str, phase: &str, deleting: bool) -> (String, PodView) {
        (
            name.to_string(),
            PodView {
                name: name.into(),
                uid: format!("uid-{name}"),
                task: task.into(),
                phase: phase.into(),
                deleting,
                version: 0,
                restarts: 0,
                exit_code: None,
                partition: None,
            },
        )
    }

    fn job(depends: Option<DependsOn>) -> Job {
        let mut j = Job::new(
            "j",
            JobSpec {
                tasks: vec![
                    TaskSpec { name: Some("ps".into()), replicas: Some(1), ..Default::default() },
                    TaskSpec { name: Some("worker".into()), replicas: Some(2), depends_on: depends, ..Default::default() },
                ],
                ..Default::default()
            },
        );
        j.metadata.namespace = Some("ns".into());
        j
    }

    #[test]
    fn sync_waits_for_the_pod_group_then_creates_missing_pods() {
        let j = job(None);
        let f = JobFacts::of(&j);
        let pods: BTreeMap<_, _> = [v("j-worker-1", "worker", "Running", false)].into();
        for phase in [None, Some(""), Some("Pending")] {
            assert!(plan_sync(&j, &f, &pods, phase).create.is_empty(), "{phase:?}");
        }
        let plan = plan_sync(&j, &f, &pods, Some("Inqueue"));
        assert_eq!(plan.create, vec![(0, 0), (1, 0)]);
        assert!(plan.delete.is_empty());
    }

    #[test]
    fn sync_deletes_surplus_and_keeps_terminating_names() {
        let j = job(None);
        let f = JobFacts::of(&j);
        let pods: BTreeMap<_, _> = [
            v("j-ps-0", "ps", "Running", true),
            v("j-worker-2", "worker", "Running", false),
            v("j-old-0", "old", "Running", false),
        ]
        .into();
        let plan = plan_sync(&j, &f, &pods, Some("Running"));
        // j-ps-0 is terminating: its name is taken until it is gone, so it is not re-created yet.
        assert_eq!(plan.create, vec![(1, 0), (1, 1)]);
        assert_eq!(plan.delete, vec!["j-old-0".to_string(), "j-worker-2".to_string()]);
    }

    #[test]
    fn depends_on_waits_for_ready_pods() {
        let j = job(Some(DependsOn { name: vec!["ps".into()], iteration: None }));
        let f = JobFacts::of(&j);
        let none = BTreeMap::new();
        let plan = plan_sync(&j, &f, &none, Some("Inqueue"));
        assert_eq!(plan.create, vec![(0, 0)]);
        assert_eq!(plan.waiting, vec!["worker".to_string()]);
        let pending: BTreeMap<_, _> = [v("j-ps-0", "ps", "Pending", false)].into();
        assert!(plan_sync(&j, &f, &pending, Some("Inqueue")).create.is_empty());
        let running: BTreeMap<_, _> = [v("j-ps-0", "ps", "Running", false)].into();
        assert_eq!(plan_sync(&j, &f, &running, Some("Inqueue")).create, vec![(1, 0), (1, 1)]);
    }

    #[test]
    fn kill_targets_and_retains() {
        let pods: BTreeMap<_, _> = [
            v("j-ps-0", "ps", "Succeeded", false),
            v("j-worker-0", "worker", "Failed", false),
            v("j-worker-1", "worker", "Running", false),
            v("j-worker-2", "worker", "Running", true),
        ]
        .into();
        assert_eq!(plan_kill(&pods, &Target::Job, Retain::None), vec!["j-ps-0", "j-worker-0", "j-worker-1"]);
        assert_eq!(plan_kill(&pods, &Target::Job, Retain::Soft), vec!["j-worker-1"]);
        assert_eq!(plan_kill(&pods, &Target::Task("worker".into()), Retain::None), vec!["j-worker-0", "j-worker-1"]);
        assert_eq!(plan_kill(&pods, &Target::Pod("j-ps-0".into()), Retain::None), vec!["j-ps-0"]);
        let mut parted = pods.clone();
        parted.get_mut("j-worker-1").unwrap().partition = Some("1".into());
        parted.get_mut("j-worker-0").unwrap().partition = Some("0".into());
        let one = Target::Partition("worker".into(), "1".into());
        assert_eq!(plan_kill(&parted, &one, Retain::None), vec!["j-worker-1"], "only the partition's pods");
    }

    #[test]
    fn recount_by_phase_and_task() {
        let j = job(None);
        let f = JobFacts::of(&j);
        let pods: BTreeMap<_, _> = [
            v("a", "ps", "Succeeded", false),
            v("b", "worker", "Running", false),
            v("c", "worker", "Running", true),
            v("d", "worker", "Pending", false),
        ]
        .into();
        let mut s = JobStatus::default();
        recount(&f, pods.values(), &mut s);
        assert_eq!((s.pending, s.running, s.succeeded, s.failed, s.terminating, s.min_available), (1, 1, 1, 0, 1, 3));
        assert_eq!(s.task_status_count["worker"].phase["Running"], 1);
        assert_eq!(s.task_status_count["ps"].phase["Succeeded"], 1);
    }
}
