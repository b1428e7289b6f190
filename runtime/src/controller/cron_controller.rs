//! The CronJob controller (`cronjob-controller`, Volcano's `pkg/controllers/cronjob`,
//! volcano-behaviour.md §5): makes a Volcano Job from each `batch.volcano.sh/v1alpha1` CronJob's
//! `jobTemplate` at each time of its schedule.
//!
//! Each sync of a CronJob, in Volcano's order ([`super::cron_plan`] holds the rules):
//! 1. its finished Jobs leave `status.active` (`SawCompletedJob`), `lastSuccessfulTime` follows
//!    the latest `Completed` one, and the oldest beyond `successfulJobsHistoryLimit` (3) /
//!    `failedJobsHistoryLimit` (1) are deleted (`SuccessfulDelete`, `FailedDelete`);
//! 2. `active` references to Jobs that are gone are dropped (`StaleReference`); a running Job
//!    of the CronJob that `active` does not list is reported (`OrphanedJob`);
//! 3. nothing more while `suspend`; a time zone or a schedule that does not parse is a Warning
//!    Event (`InvalidTimeZone`, `UnParseableCronJobSchedule`) and no retry until the object
//!    changes (never a crash loop);
//! 4. the most recent unmet fire time (not older than `startingDeadlineSeconds`) starts a Job
//!    `<cronjob>-<Unix minutes>` unless that run was started already; `Forbid` skips it while a
//!    Job is active (`ForbidConcurrent`), `Replace` deletes the active ones first
//!    (`ReplaceConcurrent`); the Job is added to `active` and `lastScheduleTime` set
//!    (`SuccessfulCreate`);
//! 5. `status` is written when it changed, and the CronJob is looked at again at its next fire
//!    time (+100 ms).
//!
//! Jobs are watched to wake their CronJob; only Jobs owned by a CronJob are kept. A stale
//! `active` reference is checked against those (Volcano reads any Job of that name). Work:
//! `--worker-threads-for-cronjob` workers, CronJobs hashed to a worker by key.

use super::cron_plan::{self, CronEvent, Plan};
use super::metrics::ControllerMetrics;
use super::queue::{worker_of, WorkQueue};
use super::retry::{api_code, drain, lock, Failure};
use crate::crd::{CronJob, CronJobStatus, Job};
use crate::plumbing::events::{EventSink, Involved, NORMAL, WARNING};
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::watch::{self, WatchStats};
use jiff::Timestamp;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::watcher::{self, Event as WEvent};
use kube::Client;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// The CronJob controller's settings.
#[derive(Clone, Copy, Debug)]
pub struct CronConfig {
    /// `--worker-threads-for-cronjob` (at least 1).
    pub workers: usize,
    /// `--max-requeue-num` (−1: unlimited).
    pub max_requeue: i32,
}

/// What the watches and workers share.
pub struct CronController {
    client: Client,
    limiter: Arc<RateLimiter>,
    metrics: Arc<ControllerMetrics>,
    events: EventSink,
    cfg: CronConfig,
    /// CronJobs by `ns/name`.
    crons: Mutex<BTreeMap<String, CronJob>>,
    /// Jobs owned by a CronJob, by `ns/name`.
    jobs: Mutex<BTreeMap<String, Job>>,
    work: Vec<WorkQueue<String>>,
}

fn key_of(ns: Option<&str>, name: Option<&str>) -> String {
    format!("{}/{}", ns.unwrap_or_default(), name.unwrap_or_default())
}

/// The `ns/name` of the CronJob that owns `job` as controller, if any.
fn owner_key(job: &Job) -> Option<String> {
    let o = job.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true) && o.kind == "CronJob")?;
    Some(key_of(job.metadata.namespace.as_deref(), Some(&o.name)))
}

fn involved(c: &CronJob) -> Involved {
    Involved {
        kind: "CronJob",
        api_version: "batch.volcano.sh/v1alpha1",
        namespace: c.metadata.namespace.clone().unwrap_or_default(),
        name: c.metadata.name.clone().unwrap_or_default(),
        uid: c.metadata.uid.clone().unwrap_or_default(),
    }
}

impl CronController {
    /// Starts the watches (CronJobs, Jobs) and workers; returns their tasks.
    pub fn spawn(
        client: Client,
        limiter: Arc<RateLimiter>,
        metrics: Arc<ControllerMetrics>,
        events: EventSink,
        cfg: CronConfig,
    ) -> Vec<JoinHandle<()>> {
        let workers = cfg.workers.max(1);
        let ctl = Arc::new(CronController {
            client,
            limiter,
            metrics,
            events,
            cfg,
            crons: Mutex::default(),
            jobs: Mutex::default(),
            work: (0..workers).map(|_| WorkQueue::default()).collect(),
        });
        let mut tasks = vec![tokio::spawn(ctl.clone().watch_crons()), tokio::spawn(ctl.clone().watch_jobs())];
        for w in 0..workers {
            tasks.push(tokio::spawn(ctl.clone().worker(w)));
        }
        tasks
    }

    fn queue(&self, key: &str) -> &WorkQueue<String> {
        &self.work[worker_of(key, self.work.len())]
    }

    async fn watch_crons(self: Arc<Self>) {
        let api: Api<CronJob> = Api::all(self.client.clone());
        watch::run("CronJob", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
            match ev {
                WEvent::Apply(c) | WEvent::InitApply(c) => {
                    let key = key_of(c.metadata.namespace.as_deref(), c.metadata.name.as_deref());
                    let old = lock(&self.crons).insert(key.clone(), c.clone());
                    let changed = old.as_ref().is_none_or(|o| o.metadata.resource_version != c.metadata.resource_version);
                    if changed {
                        self.queue(&key).add(key);
                    }
                }
                WEvent::Delete(c) => {
                    lock(&self.crons).remove(&key_of(c.metadata.namespace.as_deref(), c.metadata.name.as_deref()));
                }
                _ => {}
            }
            std::future::ready(true)
        })
        .await
    }

    async fn watch_jobs(self: Arc<Self>) {
        let api: Api<Job> = Api::all(self.client.clone());
        watch::run("Job", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
            match ev {
                WEvent::Apply(j) | WEvent::InitApply(j) => {
                    let key = key_of(j.metadata.namespace.as_deref(), j.metadata.name.as_deref());
                    if let Some(owner) = owner_key(&j) {
                        let old = lock(&self.jobs).insert(key, j.clone());
                        if old.as_ref().is_none_or(|o| o.metadata.resource_version != j.metadata.resource_version) {
                            self.queue(&owner).add(owner.clone());
                        }
                    } else {
                        lock(&self.jobs).remove(&key);
                    }
                }
                WEvent::Delete(j) => {
                    let key = key_of(j.metadata.namespace.as_deref(), j.metadata.name.as_deref());
                    lock(&self.jobs).remove(&key);
                    if let Some(owner) = owner_key(&j) {
                        self.queue(&owner).add(owner.clone());
                    }
                }
                _ => {}
            }
            std::future::ready(true)
        })
        .await
    }

    async fn worker(self: Arc<Self>, w: usize) {
        let q = self.work[w].clone();
        drain(q, self.cfg.max_requeue, &self.metrics, "cronjob", |k| {
            let me = self.clone();
            async move { me.process(&k).await }
        })
        .await
    }

    fn record(&self, c: &CronJob, events: Vec<CronEvent>) {
        for (type_, reason, msg) in events {
            self.events.event(involved(c), type_, reason, &msg);
        }
    }

    /// Deletes Job `name` of `c`'s namespace; a missing Job counts as deleted.
    async fn delete_job(&self, c: &CronJob, name: &str) -> Result<(), Failure> {
        let ns = c.metadata.namespace.clone().unwrap_or_default();
        let api: Api<Job> = Api::namespaced(self.client.clone(), &ns);
        self.limiter.acquire().await;
        self.metrics.record_api("delete_job");
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(e) if api_code(&e) == Some(404) => {}
            Err(e) => {
                self.record(c, vec![(WARNING, "FailedDelete", format!("Error deleting job {name:?}: {e}"))]);
                return Err(Failure::api(
                    format_args!("CronJob {ns}/{}: deleting Job {name}", c.metadata.name.as_deref().unwrap_or_default()),
                    &e,
                ));
            }
        }
        lock(&self.jobs).remove(&key_of(Some(&ns), Some(name)));
        self.record(c, vec![(NORMAL, "SuccessfulDelete", format!("Deleted job {name:?}"))]);
        Ok(())
    }

    /// Creates the Job of the run at `at`; an existing Job of that name owned by `c` and not
    /// finished is taken as created. `None`: nothing to add to `active`.
    async fn create_job(&self, c: &CronJob, at: Timestamp, tz: &jiff::tz::TimeZone) -> Result<Option<Job>, Failure> {
        let job = cron_plan::job_for(c, at, tz);
        let ns = c.metadata.namespace.clone().unwrap_or_default();
        let name = job.metadata.name.clone().unwrap_or_default();
        let ckey = key_of(Some(&ns), c.metadata.name.as_deref());
        let api: Api<Job> = Api::namespaced(self.client.clone(), &ns);
        self.limiter.acquire().await;
        self.metrics.record_api("create_job");
        match api.create(&PostParams::default(), &job).await {
            Ok(j) => {
                self.record(c, vec![(NORMAL, "SuccessfulCreate", format!("Created job {name} for CronJob {ckey}"))]);
                lock(&self.jobs).insert(key_of(Some(&ns), Some(&name)), j.clone());
                Ok(Some(j))
            }
            Err(e) if api_code(&e) == Some(409) => {
                self.limiter.acquire().await;
                self.metrics.record_api("get_job");
                let existing = api
                    .get(&name)
                    .await
                    .map_err(|e| Failure::api(format_args!("CronJob {ckey}: reading the conflicting Job {name}"), &e))?;
                if !cron_plan::owned_by(&existing, c) {
                    let owner = existing.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true));
                    let owner = owner.map_or("none".to_string(), |o| o.name.clone());
                    self.record(
                        c,
                        vec![(
                            WARNING,
                            "ForeignJob",
                            format!("Job {name} exists but is not owned by this CronJob (current owner: {owner})"),
                        )],
                    );
                    return Ok(None);
                }
                Ok(cron_plan::finished_phase(&existing).is_none().then_some(existing))
            }
            Err(e) => {
                self.record(c, vec![(WARNING, "FailedCreate", format!("Failed to create job: {e}"))]);
                Err(Failure::api(format_args!("CronJob {ckey}: creating Job {name}"), &e))
            }
        }
    }

    async fn write_status(&self, c: &CronJob, status: CronJobStatus) -> Result<(), Failure> {
        let ns = c.metadata.namespace.clone().unwrap_or_default();
        let name = c.metadata.name.clone().unwrap_or_default();
        let api: Api<CronJob> = Api::namespaced(self.client.clone(), &ns);
        let mut updated = c.clone();
        updated.status = Some(status);
        self.limiter.acquire().await;
        self.metrics.record_api("update_cronjob_status");
        match api.replace_status(&name, &PostParams::default(), &updated).await {
            Ok(written) => {
                lock(&self.crons).insert(key_of(Some(&ns), Some(&name)), written);
                Ok(())
            }
            Err(e) if api_code(&e) == Some(404) => Ok(()),
            Err(e) => Err(Failure::api(format_args!("CronJob {ns}/{name}: updating status"), &e)),
        }
    }

    /// One sync of CronJob `key` (the module doc's steps).
    ///
    /// Errors (retried with backoff, no sooner than the server's `Retry-After`): an API call
    /// failed.
    async fn process(&self, key: &str) -> Result<(), Failure> {
        let Some(c) = lock(&self.crons).get(key).cloned() else { return Ok(()) };
        if c.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let jobs: Vec<Job> = lock(&self.jobs).values().filter(|j| cron_plan::owned_by(j, &c)).cloned().collect();
        let before = c.status.clone().unwrap_or_default();
        let mut status = before.clone();
        let done = cron_plan::finished(&c, &mut status, &jobs);
        self.record(&c, done.events);
        for (name, uid) in &done.delete {
            if self.delete_job(&c, name).await.is_ok() {
                status.active.retain(|r| r.uid.as_deref() != Some(uid.as_str()));
            }
        }
        let ns = c.metadata.namespace.clone().unwrap_or_default();
        let by_name = |name: &str| lock(&self.jobs).get(&key_of(Some(&ns), Some(name))).and_then(|j| j.metadata.uid.clone());
        let (_, events) = cron_plan::reconcile_active(&mut status, &jobs, by_name);
        self.record(&c, events);
        let result = self.schedule(&c, &mut status, key).await;
        if status != before {
            if let Err(e) = self.write_status(&c, status).await {
                return Err(Failure::first_of(std::iter::once(e).chain(result.err())).unwrap_or_default());
            }
        }
        result
    }

    /// Steps 3 and 4 of the module doc on `status`: carries out [`cron_plan::plan`].
    async fn schedule(&self, c: &CronJob, status: &mut CronJobStatus, key: &str) -> Result<(), Failure> {
        let zone = jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC);
        match cron_plan::plan(c, status, Timestamp::now(), &zone) {
            Plan::Suspended => Ok(()),
            Plan::Refused { field, event } => {
                tracing::warn!(cronjob = %key, "CronJob {key}: {field}: {}", event.2);
                self.record(c, vec![event]);
                Ok(())
            }
            Plan::Wait { events, again } => {
                self.record(c, events);
                self.requeue(key, again);
                Ok(())
            }
            Plan::Start { events, skip, replace, run_at, tz, again } => {
                self.record(c, events);
                if !skip {
                    for r in replace {
                        self.delete_job(c, r.name.as_deref().unwrap_or_default()).await?;
                        status.active.retain(|a| a.uid != r.uid);
                    }
                    if let Some(job) = self.create_job(c, run_at, &tz).await? {
                        if !status.active.iter().any(|r| r.uid == job.metadata.uid) {
                            status.active.push(cron_plan::reference(&job));
                        }
                        status.last_schedule_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(run_at));
                    }
                }
                self.requeue(key, again);
                Ok(())
            }
        }
    }

    fn requeue(&self, key: &str, after: Option<std::time::Duration>) {
        if let Some(d) = after {
            self.queue(key).add_after(key.to_string(), d);
        }
    }
}
