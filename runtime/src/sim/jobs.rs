//! Volcano Jobs (`batch.volcano.sh/v1alpha1`) in the simulator: the job controller's logic —
//! the same pure functions `basalt controller` runs ([`reconcile`], [`build`], [`plan`], the
//! [`Cache`]'s event → request translation; volcano-behaviour.md §5.1) — over the in-memory
//! cluster, with a simulated kubelet ([`super::kubelet`]) that runs each bound pod for its run
//! time and ends it with its exit code.
//!
//! The objects the controller reads (Jobs, their pods, their PodGroups) are kept as Kubernetes
//! objects in the controller's [`Cache`], as the live watches keep them; every change is also
//! applied to the core [`Cluster`] as a [`Delta`], which is what the scheduler sees.
//!
//! One simulated step, at virtual time `t` (cycle `k`, 1-based, runs at `t = (k − 1) ×` the
//! schedule period):
//! 1. [`JobWorld::kubelet`]: pods whose run time is over end `Succeeded` or `Failed`;
//! 2. [`JobWorld::control`]: delayed policy actions that are due join the work queue, then the
//!    queue is drained (Volcano's `processNextReq` per request: PodGroup, pods, kills, status);
//! 3. the scheduling cycle, its decisions applied as `basalt simulate` applies them;
//! 4. [`JobWorld::observe`]: binds start pods (`Running` at `t`), pods the kubelet removed are
//!    deleted, scheduler evictions mark pods terminating, PodGroup phases written by the
//!    scheduler reach the controller; each change becomes the request Volcano's handlers make.
//!
//! A Job with annotation `basalt.dev/arrival-seconds` (seconds of virtual time, as `basalt
//! replay` reads it on pods) is submitted at the first step at or after that time; others at 0.
//!
//! Job plugins (`spec.plugins`: env, svc, ssh, …) are not modelled: no Service, ConfigMap or
//! Secret exists in the simulated cluster (noted once per Job); nor is a `volumeClaim` entry's
//! PVC (noted once per entry). Partitions are: pods get `volcano.sh/partition-id`, the PodGroup
//! its `subGroupPolicy`, and `RestartPartition` restarts one partition, through the same
//! `build` and `reconcile` functions the controller runs. CronJobs make their Jobs here through
//! [`JobWorld::create`] and delete them through [`JobWorld::delete`] ([`super::cronjobs`]).
//!
//! Deterministic: one FIFO work queue (deduplicated like client-go's), jobs in load order, UIDs
//! and resource versions from counters, timestamps from the virtual clock (Unix time 0 is the
//! simulation's start). Each Job starts as submitted: `metadata.uid`, `creationTimestamp` and
//! `status` from the files are replaced.

use super::kubelet;
use crate::controller::build;
use crate::controller::cache::Cache;
use crate::controller::keys;
use crate::controller::plan::{self, PodView};
use crate::controller::reconcile::{self, Begin};
use crate::controller::request::{Event, Request};
use crate::controller::state::{self, Op};
use crate::convert;
use crate::crd::{Job, PodGroup};
use crate::load::LoadedJob;
use basalt_core::cluster::{Cluster, Delta};
use basalt_core::model::PodPhase;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// Job annotation: when the Job is submitted, seconds of virtual time (decimals allowed).
pub const ARRIVAL_ANNOTATION: &str = "basalt.dev/arrival-seconds";

/// Parses an arrival annotation into ms; `Err` carries the text.
pub(crate) fn arrival_ms(v: &str) -> Result<i64, String> {
    match v.trim().parse::<f64>() {
        Ok(s) if (0.0..1e12).contains(&s) => Ok((s * 1000.0).round() as i64),
        _ => Err(v.to_string()),
    }
}

/// Requests one step processes per job at most; the rest wait for the next step. A bound
/// against a request loop (none is known: every request sequence of the state machine settles
/// in a few requests).
pub const MAX_REQUESTS_PER_JOB_PER_STEP: usize = 64;

/// A Job's state at the end of the simulation (`--output json`: key `jobs`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobReport {
    /// `namespace/name`.
    pub job: String,
    /// `status.state.phase`.
    pub phase: String,
    /// `status.retryCount`.
    pub retry_count: i32,
    /// `status.version`.
    pub version: i32,
    /// `status.minAvailable`.
    pub min_available: i32,
    /// `status.pending`.
    pub pending: i32,
    /// `status.running`.
    pub running: i32,
    /// `status.succeeded`.
    pub succeeded: i32,
    /// `status.failed`.
    pub failed: i32,
    /// `status.terminating`.
    pub terminating: i32,
    /// `status.taskStatusCount`: task → pod phase → pods.
    pub task_status_count: BTreeMap<String, BTreeMap<String, i32>>,
    /// When it was submitted, ms of virtual time (`None`: not yet, at the end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submitted_at_ms: Option<i64>,
    /// The cycle (1-based) in which it first reached Completed, Failed or Terminated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_cycle: Option<u64>,
    /// That cycle's virtual time, ms from the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at_ms: Option<i64>,
    /// When it was deleted (by its CronJob's history limit or `Replace` policy), ms of virtual
    /// time; its status is the last one before the deletion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_at_ms: Option<i64>,
}

/// A Job phase change during one step (`cycles[].jobs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobTransition {
    /// `namespace/name`.
    pub job: String,
    /// Phase before (`""` for a job not initiated yet).
    pub from: String,
    /// Phase after.
    pub to: String,
}

/// A policy action waiting for its `timeout`.
#[derive(Clone, Debug)]
struct Delayed {
    due_ms: i64,
    pod_uid: Option<String>,
    event: Event,
    req: Request,
}

/// A pod the kubelet runs: when it ends and how.
#[derive(Clone, Debug)]
struct Running {
    uid: String,
    ends_ms: Option<i64>,
    exit_code: i32,
}

/// The Jobs of a simulation and the controller and kubelet state around them.
#[derive(Debug)]
pub struct JobWorld {
    cache: Cache,
    /// Jobs not submitted yet: (arrival ms, job), by arrival then load order.
    arrivals: VecDeque<(i64, Job)>,
    /// Job keys in load order.
    keys: Vec<String>,
    queue: VecDeque<Request>,
    queued: HashSet<Request>,
    delayed: Vec<Delayed>,
    /// Running pods by `ns/name`.
    running: BTreeMap<String, Running>,
    rv: u64,
    finished: HashMap<String, (u64, i64)>,
    submitted: HashMap<String, i64>,
    group_of_pod: BTreeMap<String, String>,
    /// Deleted Jobs: key → (when, the last status).
    deleted: HashMap<String, (i64, crate::crd::JobStatus)>,
    issues: Vec<String>,
    reported: HashSet<String>,
}

fn at(t_ms: i64) -> Timestamp {
    Timestamp::from_millisecond(t_ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn pod_key(p: &Pod) -> String {
    format!("{}/{}", p.metadata.namespace.as_deref().unwrap_or_default(), p.metadata.name.as_deref().unwrap_or_default())
}

fn phase_text(job: &Job) -> String {
    job.status.as_ref().and_then(|s| s.state.phase.clone()).unwrap_or_default()
}

impl JobWorld {
    /// The controller's view of `jobs` at time 0, each with a request to sync it queued.
    pub fn new(jobs: &[LoadedJob]) -> JobWorld {
        let mut w = JobWorld {
            cache: Cache::default(),
            arrivals: VecDeque::new(),
            keys: Vec::new(),
            queue: VecDeque::new(),
            queued: HashSet::new(),
            delayed: Vec::new(),
            running: BTreeMap::new(),
            rv: 0,
            finished: HashMap::new(),
            submitted: HashMap::new(),
            group_of_pod: BTreeMap::new(),
            deleted: HashMap::new(),
            issues: Vec::new(),
            reported: HashSet::new(),
        };
        let mut arrivals = Vec::new();
        for (i, l) in jobs.iter().enumerate() {
            let mut job = l.job.clone();
            job.metadata.uid = Some(format!("00000000-0000-4000-8000-{:012}", i + 1));
            job.status = None;
            let key = build::job_key(&job);
            let arrival = job.metadata.annotations.as_ref().and_then(|a| a.get(ARRIVAL_ANNOTATION)).map(|v| arrival_ms(v));
            let arrival = match arrival {
                None => 0,
                Some(Ok(ms)) => ms,
                Some(Err(v)) => {
                    w.issue(
                        0,
                        format!(
                            "Job {key}: annotation {ARRIVAL_ANNOTATION}: not a number of seconds >= 0: {v:?}; submitted at 0"
                        ),
                    );
                    0
                }
            };
            if !job.spec.plugins.is_empty() {
                let names: Vec<&str> = job.spec.plugins.keys().map(String::as_str).collect();
                w.issue(
                    0,
                    format!(
                        "note: Job {key}: spec.plugins {} not modelled by the simulator (no Service, ConfigMap, Secret or env is made)",
                        names.join(", ")
                    ),
                );
            }
            for (i, v) in job.spec.volumes.iter().enumerate() {
                if v.volume_claim_name.as_deref().is_none_or(str::is_empty) {
                    w.issue(
                        0,
                        format!(
                            "note: Job {key}: spec.volumes[{i}].volumeClaim: the simulator creates no PVC (basalt controller \
                             does); its pods run without that volume"
                        ),
                    );
                }
            }
            w.keys.push(key);
            arrivals.push((arrival, job));
        }
        arrivals.sort_by_key(|(t, _)| *t);
        w.arrivals = arrivals.into();
        w
    }

    /// Submits the Jobs whose arrival is at or before `t_ms` (creation time `t_ms`).
    fn submit(&mut self, t_ms: i64) {
        while self.arrivals.front().is_some_and(|(a, _)| *a <= t_ms) {
            let Some((_, mut job)) = self.arrivals.pop_front() else { break };
            job.metadata.creation_timestamp = Some(Time(at(t_ms)));
            job.metadata.resource_version = Some(self.next_rv());
            self.submitted.insert(build::job_key(&job), t_ms);
            if let Some(r) = self.cache.apply_job(job) {
                self.enqueue(r);
            }
        }
    }

    /// Creates `job` at `t_ms` (as the API server would: UID, creation time, resource
    /// version) and queues its first sync; returns it as stored. Used by the simulator's
    /// CronJob controller. `Err`: a Job of that namespace and name exists (returned).
    pub fn create(&mut self, mut job: Job, t_ms: i64) -> Result<Job, Box<Job>> {
        job.metadata.namespace.get_or_insert_with(|| crate::convert::DEFAULT_NAMESPACE.into());
        let key = build::job_key(&job);
        if let Some(existing) = self.cache.get(&key).and_then(|e| e.job) {
            return Err(Box::new(existing));
        }
        job.metadata.uid = Some(format!("00000000-0000-4000-8000-{:012}", self.keys.len() + 1));
        job.metadata.creation_timestamp = Some(Time(at(t_ms)));
        job.metadata.resource_version = Some(self.next_rv());
        job.status = None;
        self.deleted.remove(&key);
        self.finished.remove(&key);
        if !self.keys.contains(&key) {
            self.keys.push(key.clone());
        }
        self.submitted.insert(key, t_ms);
        if let Some(r) = self.cache.apply_job(job.clone()) {
            self.enqueue(r);
        }
        Ok(job)
    }

    /// The Job `namespace/name` as the controller sees it now.
    pub fn job(&self, key: &str) -> Option<Job> {
        self.cache.get(key).and_then(|e| e.job)
    }

    /// Every Job that exists now, in creation order.
    pub fn existing(&self) -> Vec<Job> {
        self.keys.iter().filter_map(|k| self.job(k)).collect()
    }

    /// Deletes Job `key` with background propagation, as `basalt controller`'s CronJob
    /// controller asks the API server to: the Job is gone at once; the garbage collector then
    /// deletes its pods (a bound one terminates, Releasing its node, until the kubelet removes
    /// it) and its PodGroup. Its report keeps its last status. A Job that is gone is no error.
    pub fn delete(&mut self, cluster: &mut Cluster, cycle: u64, key: &str, t_ms: i64) {
        let Some(entry) = self.cache.get(key) else { return };
        let Some(job) = entry.job else { return };
        for pod in entry.pods.values() {
            if pod.metadata.deletion_timestamp.is_none() {
                self.delete_pod(cluster, cycle, pod, t_ms);
            }
        }
        if entry.pod_group.is_some() {
            self.delete_pod_group(cluster, cycle, &job);
        }
        self.cache.delete_job(&job);
        self.deleted.insert(key.to_string(), (t_ms, job.status.clone().unwrap_or_default()));
        self.finished.entry(key.to_string()).or_insert((cycle, t_ms));
        self.delayed.retain(|d| d.req.key() != key);
    }

    /// Whether there are no Jobs.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether every Job is Completed, Failed or Terminated.
    pub fn all_finished(&self) -> bool {
        self.keys.iter().all(|k| self.finished.contains_key(k))
    }

    /// (finished, total) Jobs.
    pub fn finished_count(&self) -> (usize, usize) {
        (self.finished.len(), self.keys.len())
    }

    /// Problems met (`cycle N: message`), each once.
    pub fn issues(&self) -> &[String] {
        &self.issues
    }

    /// `ns/pod` → `ns/podgroup` of every pod the controller created.
    pub fn pod_group_of_pod(&self) -> &BTreeMap<String, String> {
        &self.group_of_pod
    }

    fn next_rv(&mut self) -> String {
        self.rv += 1;
        self.rv.to_string()
    }

    /// Records `msg` once; `cycle` 0 means before the first cycle (no prefix).
    fn issue(&mut self, cycle: u64, msg: String) {
        if self.reported.insert(msg.clone()) {
            self.issues.push(if cycle == 0 { msg } else { format!("cycle {cycle}: {msg}") });
        }
    }

    fn enqueue(&mut self, r: Request) {
        if self.queued.insert(r.clone()) {
            self.queue.push_back(r);
        }
    }

    fn apply(&mut self, cluster: &mut Cluster, cycle: u64, d: Delta) {
        if let Err(e) = cluster.apply(d) {
            self.issue(cycle, e.to_string());
        }
    }

    /// Step 1: pods whose run time has passed by `t_ms` end with their exit code.
    pub fn kubelet(&mut self, cluster: &mut Cluster, cycle: u64, t_ms: i64) {
        let due: Vec<(String, Running)> = self
            .running
            .iter()
            .filter(|(_, r)| r.ends_ms.is_some_and(|e| e <= t_ms))
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect();
        for (key, r) in due {
            self.running.remove(&key);
            let Some((ns, name)) = key.split_once('/') else { continue };
            let Some(mut pod) = self.cached_pod(ns, name) else { continue };
            if pod.metadata.uid.as_deref() != Some(r.uid.as_str()) || pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            kubelet::finish(&mut pod, r.exit_code, at(t_ms));
            pod.metadata.resource_version = Some(self.next_rv());
            if let Some(id) = cluster.pod_id(ns, name) {
                if let Some(rec) = cluster.pod(id) {
                    let mut spec = rec.spec.clone();
                    spec.phase = if r.exit_code == 0 { PodPhase::Succeeded } else { PodPhase::Failed };
                    self.apply(cluster, cycle, Delta::Pod(spec));
                }
            }
            if let Some(req) = self.cache.apply_pod(pod) {
                self.enqueue(req);
            }
        }
    }

    fn cached_pod(&self, ns: &str, name: &str) -> Option<Pod> {
        self.keys.iter().find_map(|k| {
            let (jns, _) = k.split_once('/')?;
            if jns != ns {
                return None;
            }
            self.cache.get(k)?.pods.get(name).cloned()
        })
    }

    /// Step 2: queues the delayed actions due by `t_ms`, then processes requests until the
    /// queue is empty (at most [`MAX_REQUESTS_PER_JOB_PER_STEP`] per job). Returns the Job
    /// phase changes, in order.
    pub fn control(&mut self, cluster: &mut Cluster, cycle: u64, t_ms: i64) -> Vec<JobTransition> {
        self.submit(t_ms);
        let mut due: Vec<Delayed> = Vec::new();
        self.delayed.retain(|d| {
            if d.due_ms <= t_ms {
                due.push(d.clone());
                false
            } else {
                true
            }
        });
        for d in due {
            self.enqueue(d.req);
        }
        let mut transitions = Vec::new();
        let mut done: HashMap<String, usize> = HashMap::new();
        let mut later = Vec::new();
        while let Some(req) = self.queue.pop_front() {
            self.queued.remove(&req);
            let n = done.entry(req.key()).or_default();
            if *n >= MAX_REQUESTS_PER_JOB_PER_STEP {
                later.push(req);
                continue;
            }
            *n += 1;
            let before = self.cache.get(&req.key()).and_then(|e| e.job).map(|j| phase_text(&j));
            self.process(cluster, &req, cycle, t_ms);
            let after = self.cache.get(&req.key()).and_then(|e| e.job).map(|j| phase_text(&j));
            if let (Some(from), Some(to)) = (before, after) {
                if from != to {
                    transitions.push(JobTransition { job: req.key(), from, to });
                }
            }
        }
        for r in later {
            self.enqueue(r);
        }
        for k in self.keys.clone() {
            let finished =
                self.cache.get(&k).and_then(|e| e.job).is_some_and(|j| state::phase_of(j.status.as_ref()).is_finished());
            if finished && !self.finished.contains_key(&k) {
                self.finished.insert(k, (cycle, t_ms));
            }
        }
        transitions
    }

    /// Volcano's `processNextReq` for one request, on the simulated cluster (the live
    /// counterpart is `controller::execute::process`).
    fn process(&mut self, cluster: &mut Cluster, req: &Request, cycle: u64, t_ms: i64) {
        let Some(entry) = self.cache.get(&req.key()) else { return };
        let Some(job) = entry.job else { return };
        if let Some(uid) = req.pod_uid.as_deref() {
            self.delayed.retain(|d| d.pod_uid.as_deref() != Some(uid) || !reconcile::cancels(d.event, req.event));
        }
        let mut views: BTreeMap<String, PodView> =
            entry.pods.values().map(|p| (p.metadata.name.clone().unwrap_or_default(), PodView::of(p))).collect();
        let mut work = match reconcile::begin(&job, req, &views) {
            Err(e) => return self.issue(cycle, format!("{e}; request {} ignored", req.event.as_str())),
            Ok(Begin::Delay { action, delay }) => {
                let mut later = req.clone();
                later.action = Some(action);
                let due_ms = t_ms.saturating_add(i64::try_from(delay.as_millis()).unwrap_or(i64::MAX));
                self.delayed.push(Delayed { due_ms, pod_uid: req.pod_uid.clone(), event: req.event, req: later });
                return;
            }
            Ok(Begin::Run(w)) => *w,
        };
        match &work.step.op {
            Op::Kill { .. } => {
                for name in work.kill.clone() {
                    if let Some(p) = entry.pods.get(&name) {
                        self.delete_pod(cluster, cycle, p, t_ms);
                        if let Some(v) = views.get_mut(&name) {
                            v.deleting = true;
                        }
                    }
                }
                if work.delete_pod_group && entry.pod_group.is_some() {
                    self.delete_pod_group(cluster, cycle, &job);
                }
            }
            Op::Sync => {
                let mut pg_phase = entry.pod_group.as_ref().and_then(|pg| pg.status.as_ref()).and_then(|s| s.phase.clone());
                if work.creates_pod_group(entry.pod_group.is_some()) {
                    pg_phase = self.create_pod_group(cluster, cycle, &job, t_ms);
                }
                let sync = plan::plan_sync(&job, &work.facts, &views, pg_phase.as_deref());
                for (ti, i) in sync.create {
                    if let Some(p) = self.create_pod(cluster, cycle, &job, ti, i, t_ms) {
                        let v = PodView::of(&p);
                        views.insert(v.name.clone(), v);
                    }
                }
                for name in sync.delete {
                    if let Some(p) = entry.pods.get(&name) {
                        self.delete_pod(cluster, cycle, p, t_ms);
                        if let Some(v) = views.get_mut(&name) {
                            v.deleting = true;
                        }
                    }
                }
            }
        }
        let (_, changed) = work.finish(&job, views.values(), at(t_ms));
        if changed {
            let mut written = job;
            written.status = Some(work.status);
            written.metadata.resource_version = Some(self.next_rv());
            // The status write comes back through the watch, as in the live controller.
            if let Some(r) = self.cache.apply_job(written) {
                self.enqueue(r);
            }
        }
    }

    fn create_pod_group(&mut self, cluster: &mut Cluster, cycle: u64, job: &Job, t_ms: i64) -> Option<String> {
        let mut pg: PodGroup = match build::pod_group(job) {
            Ok(pg) => pg,
            Err(e) => {
                self.issue(cycle, e.to_string());
                return None;
            }
        };
        pg.metadata.uid = pg.metadata.name.clone();
        pg.metadata.creation_timestamp = Some(Time(at(t_ms)));
        pg.metadata.resource_version = Some(self.next_rv());
        match convert::convert_pod_group(&pg) {
            Ok(spec) => self.apply(cluster, cycle, Delta::PodGroup(spec)),
            Err(e) => {
                self.issue(cycle, format!("Job {}: its PodGroup: {e}", build::job_key(job)));
                return None;
            }
        }
        let phase = pg.status.as_ref().and_then(|s| s.phase.clone());
        self.cache.apply_pod_group(pg);
        phase
    }

    fn create_pod(&mut self, cluster: &mut Cluster, cycle: u64, job: &Job, ti: usize, i: i32, t_ms: i64) -> Option<Pod> {
        let mut pod = match build::pod(job, ti, i) {
            Ok(p) => p,
            Err(e) => {
                self.issue(cycle, e.to_string());
                return None;
            }
        };
        let rv = self.next_rv();
        pod.metadata.uid = Some(format!("{}-{}-{rv}", job.metadata.uid.as_deref().unwrap_or_default(), pod_key(&pod)));
        pod.metadata.creation_timestamp = Some(Time(at(t_ms)));
        pod.metadata.resource_version = Some(rv);
        let spec = match convert::convert_pod(&pod) {
            Ok(s) => s,
            Err(e) => {
                self.issue(cycle, format!("Job {}: spec.tasks[{ti}].template: {e}", build::job_key(job)));
                return None;
            }
        };
        if let Some(g) = &spec.group {
            self.group_of_pod.insert(pod_key(&pod), format!("{}/{g}", spec.namespace));
        }
        let (ns, name) = (spec.namespace.clone(), spec.name.clone());
        self.apply(cluster, cycle, Delta::Pod(spec));
        let numa = convert::pod_numa(&pod);
        if numa.relevant() {
            self.apply(cluster, cycle, Delta::PodNuma { namespace: ns, name, numa });
        }
        self.cache.store_pod(pod.clone());
        Some(pod)
    }

    /// Deletes `pod` as the controller does (marked out of sync first): an unbound pod is gone
    /// at once; a bound one terminates (Releasing its node) until the kubelet removes it.
    fn delete_pod(&mut self, cluster: &mut Cluster, cycle: u64, pod: &Pod, t_ms: i64) {
        let mut p = pod.clone();
        p.metadata.annotations.get_or_insert_with(Default::default).insert(keys::OUT_OF_SYNC.into(), "true".into());
        p.metadata.deletion_timestamp.get_or_insert(Time(at(t_ms)));
        p.metadata.resource_version = Some(self.next_rv());
        let key = pod_key(&p);
        self.running.remove(&key);
        let (ns, name) = (p.metadata.namespace.clone().unwrap_or_default(), p.metadata.name.clone().unwrap_or_default());
        let bound = cluster.pod_id(&ns, &name).and_then(|id| cluster.pod(id)).filter(|r| !r.spec.node_name.is_empty());
        match bound {
            Some(rec) => {
                let mut spec = rec.spec.clone();
                spec.deleting = true;
                self.apply(cluster, cycle, Delta::Pod(spec));
                self.cache.store_pod(p);
            }
            None => {
                if cluster.pod_id(&ns, &name).is_some() {
                    self.apply(cluster, cycle, Delta::PodDeleted { namespace: ns, name });
                }
                self.cache.store_pod(p.clone());
                if let Some(r) = self.cache.delete_pod(&p) {
                    self.enqueue(r);
                }
            }
        }
    }

    fn delete_pod_group(&mut self, cluster: &mut Cluster, cycle: u64, job: &Job) {
        let Ok(name) = build::pod_group_name(job) else { return };
        let ns = job.metadata.namespace.clone().unwrap_or_default();
        if cluster.pod_group_id(&ns, &name).is_some() {
            self.apply(cluster, cycle, Delta::PodGroupDeleted { namespace: ns, name });
        }
        self.cache.forget_pod_group(&build::job_key(job));
    }

    /// Step 4: what the scheduling cycle and the kubelet changed, seen by the controller at
    /// `t_ms`: bound pods start (run time from their annotations), pods gone from the cluster
    /// are deleted, pods the scheduler evicted terminate, PodGroup phases are updated.
    pub fn observe(&mut self, cluster: &Cluster, cycle: u64, t_ms: i64) {
        for k in self.keys.clone() {
            let Some(entry) = self.cache.get(&k) else { continue };
            for (name, pod) in &entry.pods {
                let ns = pod.metadata.namespace.clone().unwrap_or_default();
                let core = cluster.pod_id(&ns, name).and_then(|id| cluster.pod(id)).map(|r| r.spec.clone());
                let Some(core) = core else {
                    self.running.remove(&pod_key(pod));
                    if let Some(r) = self.cache.delete_pod(pod) {
                        self.enqueue(r);
                    }
                    continue;
                };
                let bound_here = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
                if core.deleting && pod.metadata.deletion_timestamp.is_none() {
                    let mut p = pod.clone();
                    p.metadata.deletion_timestamp = Some(Time(at(t_ms)));
                    p.metadata.resource_version = Some(self.next_rv());
                    self.running.remove(&pod_key(pod));
                    if let Some(r) = self.cache.apply_pod(p) {
                        self.enqueue(r);
                    }
                } else if !core.node_name.is_empty() && !bound_here && pod.metadata.deletion_timestamp.is_none() {
                    self.start(cycle, pod, &core.node_name, t_ms);
                }
            }
            if let Some(pg) = entry.pod_group {
                let (ns, name) =
                    (pg.metadata.namespace.clone().unwrap_or_default(), pg.metadata.name.clone().unwrap_or_default());
                let core = cluster.pod_group_id(&ns, &name).and_then(|id| cluster.pod_group(id)).map(|g| g.spec.phase.as_str());
                let cached = pg.status.as_ref().and_then(|s| s.phase.as_deref());
                if let Some(phase) = core.filter(|p| Some(*p) != cached) {
                    let mut updated = pg.clone();
                    updated.status.get_or_insert_with(Default::default).phase = Some(phase.to_string());
                    updated.metadata.resource_version = Some(self.next_rv());
                    if let Some(r) = self.cache.apply_pod_group(updated) {
                        self.enqueue(r);
                    }
                }
            }
        }
    }

    fn start(&mut self, cycle: u64, pod: &Pod, node: &str, t_ms: i64) {
        let mut p = pod.clone();
        kubelet::start(&mut p, node, at(t_ms));
        p.metadata.resource_version = Some(self.next_rv());
        let run = match kubelet::run_spec(&p) {
            Ok(r) => r,
            Err(e) => {
                self.issue(cycle, format!("{e}; the pod runs until deleted"));
                kubelet::RunSpec { duration_ms: None, exit_code: 0 }
            }
        };
        self.running.insert(
            pod_key(&p),
            Running {
                uid: p.metadata.uid.clone().unwrap_or_default(),
                ends_ms: run.duration_ms.map(|d| t_ms.saturating_add(d)),
                exit_code: run.exit_code,
            },
        );
        if let Some(r) = self.cache.apply_pod(p) {
            self.enqueue(r);
        }
    }

    /// Every Job as it stands, in load order (one not submitted yet has no phase).
    pub fn reports(&self) -> Vec<JobReport> {
        self.keys
            .iter()
            .map(|k| {
                let deleted = self.deleted.get(k);
                let s = match deleted {
                    Some((_, s)) => s.clone(),
                    None => self.cache.get(k).and_then(|e| e.job).and_then(|j| j.status).unwrap_or_default(),
                };
                let (finished_cycle, finished_at_ms) =
                    self.finished.get(k).map(|(c, t)| (Some(*c), Some(*t))).unwrap_or_default();
                JobReport {
                    job: k.clone(),
                    phase: s.state.phase.clone().unwrap_or_default(),
                    retry_count: s.retry_count,
                    version: s.version,
                    min_available: s.min_available,
                    pending: s.pending,
                    running: s.running,
                    succeeded: s.succeeded,
                    failed: s.failed,
                    terminating: s.terminating,
                    task_status_count: s.task_status_count.iter().map(|(t, c)| (t.clone(), c.phase.clone())).collect(),
                    submitted_at_ms: self.submitted.get(k).copied(),
                    finished_cycle,
                    finished_at_ms,
                    deleted_at_ms: deleted.map(|(t, _)| *t),
                }
            })
            .collect()
    }
}
