//! The job controller's cache (Volcano's `pkg/controllers/cache`): Jobs keyed `namespace/name`,
//! each with its pods (by name) and its PodGroup, fed by the watches; and the translation of a
//! watch event into a [`Request`] as Volcano's event handlers build them
//! (volcano-behaviour.md §5.1 "Requests").

use super::defaults::JobFacts;
use super::keys;
use super::plan::PodView;
use super::request::{Event, Request};
use crate::crd::{Job, PodGroup};
use k8s_openapi::api::core::v1::Pod;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// One job's cached objects. A pod or PodGroup may arrive before its Job (`job` is `None`).
#[derive(Clone, Debug, Default)]
pub struct JobEntry {
    /// The Job.
    pub job: Option<Job>,
    /// Its pods by name.
    pub pods: BTreeMap<String, Pod>,
    /// Its PodGroup.
    pub pod_group: Option<PodGroup>,
    /// The Job as the watch last delivered it: changes are detected against this (as an
    /// informer's old/new pair), not against `job`, which the controller's own status writes
    /// also update, so a phase the controller wrote still produces a request when it comes back.
    pub watched: Option<Job>,
}

/// The cache; every method takes the lock briefly (never across an await).
#[derive(Debug, Default)]
pub struct Cache {
    entries: Mutex<HashMap<String, JobEntry>>,
}

/// `namespace/name`.
pub fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// The job key of a pod the controller owns (label `volcano.sh/job-name`), else `None`.
pub fn pod_job_key(pod: &Pod) -> Option<String> {
    let job = pod.metadata.labels.as_ref()?.get(keys::JOB_NAME)?;
    Some(key(pod.metadata.namespace.as_deref()?, job))
}

/// The job key of a PodGroup whose controller owner is a Volcano Job.
pub fn pod_group_job_key(pg: &PodGroup) -> Option<String> {
    let owner = pg
        .metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|o| o.kind == "Job" && o.api_version.starts_with("batch.volcano.sh/"))?;
    Some(key(pg.metadata.namespace.as_deref()?, &owner.name))
}

fn job_uid_of_pod(pod: &Pod) -> Option<String> {
    pod.metadata.owner_references.as_ref()?.iter().find(|o| o.kind == "Job").map(|o| o.uid.clone())
}

fn pod_request(pod: &Pod, event: Event) -> Option<Request> {
    let v = PodView::of(pod);
    let (ns, job) = (pod.metadata.namespace.as_deref()?, pod.metadata.labels.as_ref()?.get(keys::JOB_NAME)?);
    let mut r = Request::job(ns, job, event);
    r.job_uid = job_uid_of_pod(pod);
    r.task_name = Some(v.task.clone()).filter(|t| !t.is_empty());
    r.pod_name = Some(v.name);
    r.pod_uid = Some(v.uid);
    r.job_version = v.version;
    if event == Event::PodFailed {
        r.exit_code = v.exit_code;
    }
    Some(r)
}

/// `metadata.resourceVersion` as a number (etcd revisions are; other servers' may not be).
fn rv(job: &Job) -> Option<u64> {
    job.metadata.resource_version.as_deref()?.parse().ok()
}

fn out_of_sync_marked(pod: &Pod) -> bool {
    pod.metadata.annotations.as_ref().is_some_and(|a| a.get(keys::OUT_OF_SYNC).is_some_and(|v| v == "true"))
}

impl Cache {
    /// A copy of `key`'s entry.
    pub fn get(&self, key: &str) -> Option<JobEntry> {
        self.lock().get(key).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, JobEntry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every job key with a Job.
    pub fn job_keys(&self) -> Vec<String> {
        self.lock().iter().filter(|(_, e)| e.job.is_some()).map(|(k, _)| k.clone()).collect()
    }

    /// Stores `job` (from the watch or a write's response); returns the request Volcano makes:
    /// `OutOfSync` when the job is new, its spec changed or its phase changed, else `None`.
    pub fn apply_job(&self, job: Job) -> Option<Request> {
        let (ns, name) = (job.metadata.namespace.clone()?, job.metadata.name.clone()?);
        let mut map = self.lock();
        let e = map.entry(key(&ns, &name)).or_default();
        let changed = match &e.watched {
            None => true,
            Some(old) if old.metadata.uid != job.metadata.uid => true,
            Some(old) => {
                old.spec != job.spec
                    || old.status.as_ref().map(|s| &s.state.phase) != job.status.as_ref().map(|s| &s.state.phase)
                    || old.metadata.deletion_timestamp != job.metadata.deletion_timestamp
            }
        };
        // A watch event older than what the controller wrote keeps the newer copy.
        let older = e
            .job
            .as_ref()
            .is_some_and(|cur| cur.metadata.uid == job.metadata.uid && rv(cur).zip(rv(&job)).is_some_and(|(c, n)| n < c));
        if !older {
            e.job = Some(job.clone());
        }
        e.watched = Some(job);
        changed.then(|| Request::job(&ns, &name, Event::OutOfSync))
    }

    /// Stores a job written by the controller itself (the response of its write): the next
    /// request reads it; the watch's copy still decides what changed.
    pub fn store_job(&self, job: Job) {
        let (Some(ns), Some(name)) = (job.metadata.namespace.clone(), job.metadata.name.clone()) else { return };
        self.lock().entry(key(&ns, &name)).or_default().job = Some(job);
    }

    /// Forgets a deleted Job (its pods and PodGroup stay cached until their own deletes).
    pub fn delete_job(&self, job: &Job) {
        let (Some(ns), Some(name)) = (job.metadata.namespace.as_deref(), job.metadata.name.as_deref()) else { return };
        let mut map = self.lock();
        let k = key(ns, name);
        if let Some(e) = map.get_mut(&k) {
            e.job = None;
            e.watched = None;
            if e.pods.is_empty() && e.pod_group.is_none() {
                map.remove(&k);
            }
        }
    }

    /// Stores a pod from the watch; returns Volcano's request for the change (see the module
    /// doc), or `None` when nothing the controller reacts to changed.
    pub fn apply_pod(&self, pod: Pod) -> Option<Request> {
        let k = pod_job_key(&pod)?;
        let name = pod.metadata.name.clone()?;
        let mut map = self.lock();
        let e = map.entry(k).or_default();
        let old = e.pods.insert(name, pod.clone());
        let facts = e.job.as_ref().map(JobFacts::of);
        let Some(old) = old else {
            return pod_request(
                &pod,
                if pod.metadata.deletion_timestamp.is_some() { Event::OutOfSync } else { Event::PodPending },
            );
        };
        if old.metadata.resource_version == pod.metadata.resource_version && old.metadata.resource_version.is_some() {
            return None;
        }
        if pod.metadata.deletion_timestamp.is_some() {
            if old.metadata.deletion_timestamp.is_some() {
                return None;
            }
            let ev = if out_of_sync_marked(&pod) { Event::OutOfSync } else { Event::PodEvicted };
            return pod_request(&pod, ev);
        }
        let (ov, nv) = (PodView::of(&old), PodView::of(&pod));
        let event = match nv.phase.as_str() {
            "Failed" if ov.phase != "Failed" => Event::PodFailed,
            "Succeeded" if ov.phase != "Succeeded" => {
                let replicas = facts.as_ref().and_then(|f| f.task(&nv.task)).map(|t| t.replicas).unwrap_or(i32::MAX);
                let done =
                    e.pods.values().filter(|p| PodView::of(p).task == nv.task && PodView::of(p).phase == "Succeeded").count()
                        as i32;
                if done >= replicas {
                    Event::TaskCompleted
                } else {
                    Event::OutOfSync
                }
            }
            "Running" | "Pending" => {
                let max_retry = facts.as_ref().and_then(|f| f.task(&nv.task)).map(|t| t.max_retry).unwrap_or(-1);
                let restarts: i32 = e
                    .pods
                    .values()
                    .map(PodView::of)
                    .filter(|p| p.task == nv.task && matches!(p.phase.as_str(), "Running" | "Pending"))
                    .map(|p| p.restarts)
                    .sum();
                if max_retry != -1 && restarts >= max_retry {
                    Event::TaskFailed
                } else if nv.phase != ov.phase {
                    if nv.phase == "Running" {
                        Event::PodRunning
                    } else {
                        Event::PodPending
                    }
                } else {
                    Event::OutOfSync
                }
            }
            _ => Event::OutOfSync,
        };
        pod_request(&pod, event)
    }

    /// Stores a pod the controller created or deleted itself (no request).
    pub fn store_pod(&self, pod: Pod) {
        let (Some(k), Some(name)) = (pod_job_key(&pod), pod.metadata.name.clone()) else { return };
        self.lock().entry(k).or_default().pods.insert(name, pod);
    }

    /// Forgets a deleted pod; returns `OutOfSync` when the controller deleted it (or it was
    /// already being deleted), else `PodEvicted`.
    pub fn delete_pod(&self, pod: &Pod) -> Option<Request> {
        let k = pod_job_key(pod)?;
        let name = pod.metadata.name.clone()?;
        let mut map = self.lock();
        let old = map.get_mut(&k).and_then(|e| e.pods.remove(&name));
        let was_deleting = old.as_ref().is_some_and(|o| o.metadata.deletion_timestamp.is_some());
        let ev = if out_of_sync_marked(pod) || was_deleting { Event::OutOfSync } else { Event::PodEvicted };
        pod_request(pod, ev)
    }

    /// Stores a PodGroup; returns a request when its phase changed (`Unknown` event when the
    /// new phase is Unknown, else `OutOfSync`).
    pub fn apply_pod_group(&self, pg: PodGroup) -> Option<Request> {
        let k = pod_group_job_key(&pg)?;
        let (ns, job) = k.split_once('/').map(|(a, b)| (a.to_string(), b.to_string()))?;
        let mut map = self.lock();
        let e = map.entry(k).or_default();
        let phase = |p: &PodGroup| p.status.as_ref().and_then(|s| s.phase.clone());
        let changed = e.pod_group.as_ref().map(phase) != Some(phase(&pg));
        let new_phase = phase(&pg);
        e.pod_group = Some(pg);
        if !changed {
            return None;
        }
        let ev = if new_phase.as_deref() == Some("Unknown") { Event::Unknown } else { Event::OutOfSync };
        Some(Request::job(&ns, &job, ev))
    }

    /// Forgets a deleted PodGroup (only if it is the cached one: a PodGroup re-created under
    /// the same name keeps its entry).
    pub fn delete_pod_group(&self, pg: &PodGroup) -> Option<Request> {
        let k = pod_group_job_key(pg)?;
        let (ns, job) = k.split_once('/').map(|(a, b)| (a.to_string(), b.to_string()))?;
        let mut map = self.lock();
        let e = map.get_mut(&k)?;
        if e.pod_group.as_ref().map(|p| &p.metadata.uid) == Some(&pg.metadata.uid) {
            e.pod_group = None;
        }
        Some(Request::job(&ns, &job, Event::OutOfSync))
    }

    /// Clears the cached PodGroup of `key` (after the controller deleted it).
    pub fn forget_pod_group(&self, key: &str) {
        if let Some(e) = self.lock().get_mut(key) {
            e.pod_group = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ContainerState, ContainerStateTerminated, ContainerStatus, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    fn pod(name: &str, task: &str, rv: &str, phase: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                resource_version: Some(rv.into()),
                uid: Some(format!("uid-{name}")),
                labels: Some(BTreeMap::from([(keys::JOB_NAME.to_string(), "j".to_string())])),
                annotations: Some(BTreeMap::from([
                    (keys::TASK_SPEC.to_string(), task.to_string()),
                    (keys::JOB_VERSION.to_string(), "1".to_string()),
                ])),
                ..Default::default()
            },
            spec: None,
            status: Some(PodStatus { phase: Some(phase.into()), ..Default::default() }),
        }
    }

    fn job() -> Job {
        let mut j: Job =
            serde_yaml::from_str("metadata: {name: j, namespace: ns, uid: u}\nspec: {tasks: [{name: w, replicas: 2}]}\n")
                .unwrap();
        j.metadata.resource_version = Some("1".into());
        j
    }

    #[test]
    fn pod_events_become_volcanos_requests() {
        let c = Cache::default();
        assert_eq!(c.apply_job(job()).map(|r| r.event), Some(Event::OutOfSync));
        assert_eq!(c.apply_job(job()), None, "same job again: nothing changed");
        assert_eq!(c.apply_pod(pod("j-w-0", "w", "1", "Pending")).map(|r| r.event), Some(Event::PodPending));
        assert_eq!(c.apply_pod(pod("j-w-0", "w", "1", "Pending")), None, "same resourceVersion");
        let r = c.apply_pod(pod("j-w-0", "w", "2", "Running")).unwrap();
        assert_eq!((r.event, r.task_name.as_deref(), r.job_version), (Event::PodRunning, Some("w"), 1));
        let mut failed = pod("j-w-0", "w", "3", "Failed");
        failed.status.as_mut().unwrap().container_statuses = Some(vec![ContainerStatus {
            name: "c".into(),
            state: Some(ContainerState {
                terminated: Some(ContainerStateTerminated { exit_code: 3, ..Default::default() }),
                ..Default::default()
            }),
            ..Default::default()
        }]);
        let r = c.apply_pod(failed).unwrap();
        assert_eq!((r.event, r.exit_code), (Event::PodFailed, Some(3)));
        // one of two replicas succeeded: OutOfSync; both: TaskCompleted
        c.apply_pod(pod("j-w-1", "w", "4", "Running"));
        c.apply_pod(pod("j-w-0", "w", "5", "Succeeded"));
        assert_eq!(c.apply_pod(pod("j-w-1", "w", "6", "Succeeded")).map(|r| r.event), Some(Event::TaskCompleted));
        // deletion by someone else: PodEvicted; by the controller (annotated): OutOfSync
        let mut del = pod("j-w-1", "w", "7", "Succeeded");
        del.metadata.deletion_timestamp = Some(Time(Default::default()));
        assert_eq!(c.apply_pod(del.clone()).map(|r| r.event), Some(Event::PodEvicted));
        assert_eq!(c.delete_pod(&del).map(|r| r.event), Some(Event::OutOfSync), "already reported when its deletion started");
        let mut marked = pod("j-w-0", "w", "8", "Succeeded");
        marked.metadata.annotations.as_mut().unwrap().insert(keys::OUT_OF_SYNC.into(), "true".into());
        assert_eq!(c.delete_pod(&marked).map(|r| r.event), Some(Event::OutOfSync));
        assert_eq!(c.delete_pod(&pod("j-w-9", "w", "9", "Running")).map(|r| r.event), Some(Event::PodEvicted));
    }

    #[test]
    fn a_phase_the_controller_wrote_still_makes_a_request_when_watched() {
        let c = Cache::default();
        c.apply_job(job());
        let mut written = job();
        written.metadata.resource_version = Some("2".into());
        written.status = Some(crate::crd::JobStatus {
            state: crate::crd::JobState { phase: Some("Running".into()), ..Default::default() },
            ..Default::default()
        });
        c.store_job(written.clone());
        assert_eq!(c.get("ns/j").unwrap().job.unwrap().metadata.resource_version.as_deref(), Some("2"));
        // a late watch event of the old version does not replace the newer copy
        assert_eq!(c.apply_job(job()), None);
        assert_eq!(c.get("ns/j").unwrap().job.unwrap().metadata.resource_version.as_deref(), Some("2"));
        assert_eq!(c.apply_job(written).map(|r| r.event), Some(Event::OutOfSync));
    }

    #[test]
    fn restarts_past_task_max_retry_are_task_failed() {
        let c = Cache::default();
        c.apply_job(job());
        c.apply_pod(pod("j-w-0", "w", "1", "Running"));
        let mut p = pod("j-w-0", "w", "2", "Running");
        p.status.as_mut().unwrap().container_statuses =
            Some(vec![ContainerStatus { name: "c".into(), restart_count: 3, ..Default::default() }]);
        assert_eq!(c.apply_pod(p).map(|r| r.event), Some(Event::TaskFailed));
    }
}
