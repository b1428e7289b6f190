//! The job controller's cache (Volcano's `pkg/controllers/cache`): Jobs keyed `namespace/name`,
//! each with its pods (by name) and its PodGroup, fed by the watches; and the translation of a
//! watch event into a [`Request`] as Volcano's event handlers build them
//! (volcano-behaviour.md §5.1 "Requests").

use super::defaults::JobFacts;
use super::keys;
use super::plan::PodView;
use super::request::{Event, Request};
use super::state;
use crate::crd::{Job, PodGroup};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use std::collections::{BTreeMap, HashMap, HashSet};
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
    /// UIDs of this job's pods whose deletion the pod watch has delivered: a create or delete
    /// response processed after the watch's event must not bring the pod back into the cache.
    pub deleted_pods: HashSet<String>,
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
    r.partition = v.partition;
    r.pod_uid = Some(v.uid);
    r.job_version = v.version;
    if event == Event::PodFailed {
        r.exit_code = v.exit_code;
    }
    Some(r)
}

/// `metadata.resourceVersion` as a number (etcd revisions are; other servers' may not be).
fn rv(meta: &ObjectMeta) -> Option<u64> {
    meta.resource_version.as_deref()?.parse().ok()
}

/// Whether `new` (a write's response) is older than `cached` (what the watch delivered): the
/// same object (UID) at a lower resourceVersion. Revisions are compared across objects too (etcd
/// revisions are global), so a response for a re-created object is kept only when it is newer.
fn older_than(new: &ObjectMeta, cached: &ObjectMeta) -> bool {
    rv(new).zip(rv(cached)).is_some_and(|(n, c)| n < c)
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
        let older =
            e.job.as_ref().is_some_and(|cur| cur.metadata.uid == job.metadata.uid && older_than(&job.metadata, &cur.metadata));
        if !older {
            e.job = Some(job.clone());
        }
        e.watched = Some(job);
        changed.then(|| Request::job(&ns, &name, Event::OutOfSync))
    }

    /// Stores a job written by the controller itself (the response of its write): the next
    /// request reads it; the watch's copy still decides what changed. A response older than
    /// the copy the watch already delivered is dropped.
    pub fn store_job(&self, job: Job) {
        let (Some(ns), Some(name)) = (job.metadata.namespace.clone(), job.metadata.name.clone()) else { return };
        let mut map = self.lock();
        let e = map.entry(key(&ns, &name)).or_default();
        if e.job.as_ref().is_some_and(|cur| older_than(&job.metadata, &cur.metadata)) {
            return;
        }
        e.job = Some(job);
    }

    /// Forgets a deleted Job (its pods and PodGroup stay cached until their own deletes).
    pub fn delete_job(&self, job: &Job) {
        let (Some(ns), Some(name)) = (job.metadata.namespace.as_deref(), job.metadata.name.as_deref()) else { return };
        let mut map = self.lock();
        let k = key(ns, name);
        if let Some(e) = map.get_mut(&k) {
            e.job = None;
            e.watched = None;
            e.deleted_pods.clear();
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

    /// Stores a pod the controller created (the create's response; no request), unless the
    /// watch already delivered a newer copy of it or its deletion: the watch and the response
    /// race, and a stale response must neither undo a later phase nor bring a deleted pod back.
    pub fn store_pod(&self, pod: Pod) {
        let (Some(k), Some(name)) = (pod_job_key(&pod), pod.metadata.name.clone()) else { return };
        let mut map = self.lock();
        let e = map.entry(k).or_default();
        if pod.metadata.uid.as_ref().is_some_and(|u| e.deleted_pods.contains(u)) {
            return;
        }
        if e.pods.get(&name).is_some_and(|cur| older_than(&pod.metadata, &cur.metadata)) {
            return;
        }
        e.pods.insert(name, pod);
    }

    /// Records that the controller deleted pod `name` (UID `uid`) of job `key`: the cached pod
    /// gets a `deletionTimestamp` and the out-of-sync mark, so the next request counts it as
    /// terminating. Nothing happens when the watch has already removed the pod (or replaced it
    /// with another of the same name): a deleted pod is never brought back.
    pub fn mark_deleting(&self, key: &str, name: &str, uid: &str) {
        let mut map = self.lock();
        let Some(p) = map.get_mut(key).and_then(|e| e.pods.get_mut(name)) else { return };
        if p.metadata.uid.as_deref() != Some(uid) {
            return;
        }
        p.metadata.deletion_timestamp.get_or_insert(Time(k8s_openapi::jiff::Timestamp::now()));
        p.metadata.annotations.get_or_insert_with(Default::default).insert(keys::OUT_OF_SYNC.into(), "true".into());
    }

    /// Forgets a deleted pod; returns `OutOfSync` when the controller deleted it (or it was
    /// already being deleted), else `PodEvicted`.
    pub fn delete_pod(&self, pod: &Pod) -> Option<Request> {
        let k = pod_job_key(pod)?;
        let name = pod.metadata.name.clone()?;
        let mut map = self.lock();
        let old = map.get_mut(&k).and_then(|e| {
            e.deleted_pods.extend(pod.metadata.uid.clone());
            e.pods.remove(&name)
        });
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

    /// Stores a PodGroup the controller created (the create's response; no request), unless
    /// the watch already delivered a newer copy: a stale `Pending` response must not hide the
    /// scheduler's `Inqueue` (pods are only created once the PodGroup has left Pending, and no
    /// further PodGroup event may come to correct it).
    pub fn store_pod_group(&self, pg: PodGroup) {
        let Some(k) = pod_group_job_key(&pg) else { return };
        let mut map = self.lock();
        let e = map.entry(k).or_default();
        if e.pod_group.as_ref().is_some_and(|cur| older_than(&pg.metadata, &cur.metadata)) {
            return;
        }
        e.pod_group = Some(pg);
    }

    /// Forgets a deleted PodGroup (only if it is the cached one: a PodGroup re-created under
    /// the same name keeps its entry). Returns `OutOfSync` while its Job is cached and not
    /// finished, so a PodGroup deleted under a live job is re-created by the next sync; for a
    /// finished job (Completed, Terminated, Failed: the controller's own kill deleted it) or no
    /// Job, `None`. Volcano's job controller has no PodGroup delete handler at all (only
    /// `updatePodGroup`), so a request there would only be a finished-state kill: a `version`
    /// bump and a status write per Job that Volcano does not make.
    pub fn delete_pod_group(&self, pg: &PodGroup) -> Option<Request> {
        let k = pod_group_job_key(pg)?;
        let (ns, job) = k.split_once('/').map(|(a, b)| (a.to_string(), b.to_string()))?;
        let mut map = self.lock();
        let e = map.get_mut(&k)?;
        if e.pod_group.as_ref().map(|p| &p.metadata.uid) == Some(&pg.metadata.uid) {
            e.pod_group = None;
        }
        let live = e.job.as_ref().is_some_and(|j| !state::phase_of(j.status.as_ref()).is_finished());
        live.then(|| Request::job(&ns, &job, Event::OutOfSync))
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
    fn a_late_response_never_brings_a_deleted_pod_back_nor_undoes_a_newer_phase() {
        let c = Cache::default();
        c.apply_job(job());
        // The create's response (rv 1) comes after the watch delivered the pod Running (rv 2).
        c.apply_pod(pod("j-w-0", "w", "1", "Pending"));
        c.apply_pod(pod("j-w-0", "w", "2", "Running"));
        c.store_pod(pod("j-w-0", "w", "1", "Pending"));
        assert_eq!(PodView::of(&c.get("ns/j").unwrap().pods["j-w-0"]).phase, "Running");
        // The watch delivered the deletion before the delete call returned: marking it
        // deleting, or storing an old copy, must not re-insert it.
        let gone = pod("j-w-0", "w", "3", "Failed");
        c.delete_pod(&gone);
        c.mark_deleting("ns/j", "j-w-0", "uid-j-w-0");
        c.store_pod(pod("j-w-0", "w", "1", "Pending"));
        assert!(c.get("ns/j").unwrap().pods.is_empty(), "no ghost pod left terminating");
        // A pod still cached is marked terminating, and only the one with that UID.
        c.apply_pod(pod("j-w-1", "w", "4", "Running"));
        c.mark_deleting("ns/j", "j-w-1", "another-uid");
        assert!(!PodView::of(&c.get("ns/j").unwrap().pods["j-w-1"]).deleting);
        c.mark_deleting("ns/j", "j-w-1", "uid-j-w-1");
        let p = &c.get("ns/j").unwrap().pods["j-w-1"];
        assert!(PodView::of(p).deleting && out_of_sync_marked(p));
    }

    #[test]
    fn a_late_pod_group_response_does_not_hide_the_schedulers_phase() {
        let pg = |rv: &str, phase: &str| -> PodGroup {
            serde_yaml::from_str(&format!(
                "metadata: {{name: j-u, namespace: ns, uid: pg, resourceVersion: '{rv}', ownerReferences: [{{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: j, uid: u, controller: true}}]}}\nspec: {{minMember: 2}}\nstatus: {{phase: {phase}}}\n"
            ))
            .unwrap()
        };
        let c = Cache::default();
        c.apply_job(job());
        assert_eq!(c.apply_pod_group(pg("5", "Inqueue")).map(|r| r.event), Some(Event::OutOfSync));
        c.store_pod_group(pg("4", "Pending"));
        let phase = c.get("ns/j").unwrap().pod_group.and_then(|p| p.status).and_then(|s| s.phase);
        assert_eq!(phase.as_deref(), Some("Inqueue"));
    }

    #[test]
    fn a_pod_group_deleted_under_a_live_job_resyncs_it_but_not_under_a_finished_one() {
        let pg: PodGroup = serde_yaml::from_str(
            "metadata: {name: j-u, namespace: ns, uid: pg, resourceVersion: '5', ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: j, uid: u, controller: true}]}\nspec: {minMember: 2}\n",
        )
        .unwrap();
        let c = Cache::default();
        assert_eq!(c.delete_pod_group(&pg), None, "nothing cached for the job");
        c.apply_job(job());
        c.apply_pod_group(pg.clone());
        assert_eq!(c.delete_pod_group(&pg).map(|r| r.event), Some(Event::OutOfSync), "a job without a phase is live");
        assert!(c.get("ns/j").unwrap().pod_group.is_none());
        for (phase, want) in
            [("Running", true), ("Restarting", true), ("Completed", false), ("Failed", false), ("Terminated", false)]
        {
            let mut j = job();
            j.status = Some(crate::crd::JobStatus {
                state: crate::crd::JobState { phase: Some(phase.into()), ..Default::default() },
                ..Default::default()
            });
            c.store_job(j);
            c.apply_pod_group(pg.clone());
            assert_eq!(c.delete_pod_group(&pg).is_some(), want, "{phase}");
            assert!(c.get("ns/j").unwrap().pod_group.is_none(), "{phase}: forgotten either way");
        }
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
