//! Volcano CronJobs (`batch.volcano.sh/v1alpha1`) in the simulator: the CronJob controller's
//! rules — the same pure functions `basalt controller`'s CronJob controller runs
//! ([`cron_plan`]: finished Jobs, history limits, stale references, whether a run is due,
//! `Forbid`/`Replace`, the Job made from the template; volcano-behaviour.md §5) — on the
//! virtual clock, making and deleting Jobs in the simulator's [`JobWorld`].
//!
//! A CronJob is synced in a step when the step's time has reached its next run (the controller
//! requeues it for then plus 100 ms against clock skew, which the virtual clock has not), when one of its Jobs
//! changed phase or went away since its last sync, and in the step it is created. It is created
//! at virtual time 0, or at its `basalt.dev/arrival-seconds` annotation as Jobs are. The step
//! runs after the kubelet and before the job controller, so a Job made at `t` has its PodGroup
//! and pods in the cycle at `t`; the CronJob sees its Jobs' phases as the job controller left
//! them in the step before.
//!
//! What differs from the live controller, on purpose: a CronJob with no `spec.timeZone` runs in
//! UTC (the live controller uses its machine's zone; the simulation must not depend on the
//! machine); a status write cannot fail; Events are kept in the report (repeats of the same
//! Event counted, as the API server's event aggregation counts them).

use super::jobs::{JobWorld, ARRIVAL_ANNOTATION};
use crate::controller::cron_plan::{self, CronEvent, NEXT_DELTA};
use crate::convert::cron::Schedule;
use crate::crd::{CronJob, CronJobStatus, Job};
use crate::load::LoadedCronJob;
use basalt_core::cluster::Cluster;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Serialize;

/// An Event the CronJob controller recorded on a CronJob (`cronJobs[].events`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CronEventReport {
    /// The cycle (1-based) of its first occurrence.
    pub cycle: u64,
    /// Its virtual time, ms.
    pub at_ms: i64,
    /// `Normal` or `Warning`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The reason (`SuccessfulCreate`, `ForbidConcurrent`, …).
    pub reason: String,
    /// The message, in Volcano's words.
    pub message: String,
    /// Occurrences in a row (the API server's aggregation).
    pub count: u32,
}

/// A Job a CronJob made (`cronJobs[].jobs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CronRun {
    /// The Job, `namespace/name` (`<cronjob>-<minutes since the epoch>`).
    pub job: String,
    /// The nominal time of the run, ms of virtual time.
    pub scheduled_at_ms: i64,
    /// When it was made, ms of virtual time (later than the nominal time when a `Forbid`
    /// CronJob waited for its running Job).
    pub created_at_ms: i64,
}

/// A CronJob at the end of the simulation (`--output json`: key `cronJobs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CronJobReport {
    /// `namespace/name`.
    pub cron_job: String,
    /// The Jobs it made, in order.
    pub jobs: Vec<CronRun>,
    /// `status.active`: its Jobs still running, by name.
    pub active: Vec<String>,
    /// `status.lastScheduleTime`, ms of virtual time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_schedule_ms: Option<i64>,
    /// `status.lastSuccessfulTime`, ms of virtual time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_successful_ms: Option<i64>,
    /// The Events recorded on it.
    pub events: Vec<CronEventReport>,
}

/// One CronJob and what the controller keeps about it.
#[derive(Debug)]
struct Entry {
    cron: CronJob,
    key: String,
    arrival_ms: i64,
    created: bool,
    /// When it is due for a sync (the controller's requeue); `None`: only on Job changes.
    requeue_ms: Option<i64>,
    /// Its Jobs at the last sync: (name, UID, phase).
    seen: Vec<(String, String, String)>,
    runs: Vec<CronRun>,
    events: Vec<CronEventReport>,
}

/// The CronJobs of a simulation.
#[derive(Debug, Default)]
pub struct CronWorld {
    entries: Vec<Entry>,
    issues: Vec<String>,
}

fn at(t_ms: i64) -> Timestamp {
    Timestamp::from_millisecond(t_ms).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn ms(t: &Time) -> i64 {
    t.0.as_millisecond()
}

fn jobs_of(world: &JobWorld, cron: &CronJob) -> Vec<Job> {
    world.existing().into_iter().filter(|j| cron_plan::owned_by(j, cron)).collect()
}

fn signature(jobs: &[Job]) -> Vec<(String, String, String)> {
    jobs.iter()
        .map(|j| {
            let phase = j.status.as_ref().and_then(|s| s.state.phase.clone()).unwrap_or_default();
            (j.metadata.name.clone().unwrap_or_default(), j.metadata.uid.clone().unwrap_or_default(), phase)
        })
        .collect()
}

impl CronWorld {
    /// The controller's view of `cron_jobs`, none created yet. A bad arrival annotation is
    /// reported ([`CronWorld::issues`]) and the CronJob created at 0.
    pub fn new(cron_jobs: &[LoadedCronJob]) -> CronWorld {
        let mut w = CronWorld::default();
        for (i, l) in cron_jobs.iter().enumerate() {
            let mut cron = l.cron_job.clone();
            let key = format!(
                "{}/{}",
                cron.metadata.namespace.as_deref().unwrap_or_default(),
                cron.metadata.name.as_deref().unwrap_or_default()
            );
            cron.metadata.uid = Some(format!("00000000-0000-4000-9000-{:012}", i + 1));
            cron.status = None;
            let arrival = cron.metadata.annotations.as_ref().and_then(|a| a.get(ARRIVAL_ANNOTATION));
            let arrival_ms = match arrival.map(|v| super::jobs::arrival_ms(v)) {
                None => 0,
                Some(Ok(t)) => t,
                Some(Err(v)) => {
                    w.issues.push(format!(
                        "CronJob {key}: annotation {ARRIVAL_ANNOTATION}: not a number of seconds >= 0: {v:?}; created at 0"
                    ));
                    0
                }
            };
            w.entries.push(Entry {
                cron,
                key,
                arrival_ms,
                created: false,
                requeue_ms: None,
                seen: Vec::new(),
                runs: Vec::new(),
                events: Vec::new(),
            });
        }
        w
    }

    /// Whether there are no CronJobs.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether a CronJob may still make a Job: one not created yet, or one that is not
    /// suspended and whose schedule parses.
    pub fn may_make_jobs(&self) -> bool {
        self.entries
            .iter()
            .any(|e| !e.created || (e.cron.spec.suspend != Some(true) && Schedule::parse(&e.cron.spec.schedule).is_ok()))
    }

    /// Problems met, each once (bad schedules and time zones also as Events).
    pub fn issues(&self) -> &[String] {
        &self.issues
    }

    /// Syncs every CronJob that is due at `t_ms` (cycle `cycle`; see the module doc).
    pub fn step(&mut self, jobs: &mut JobWorld, cluster: &mut Cluster, cycle: u64, t_ms: i64) {
        for i in 0..self.entries.len() {
            let e = &mut self.entries[i];
            if e.arrival_ms > t_ms {
                continue;
            }
            let first = !e.created;
            if first {
                e.created = true;
                e.cron.metadata.creation_timestamp = Some(Time(at(t_ms)));
            }
            let mine = jobs_of(jobs, &e.cron);
            let changed = signature(&mine) != e.seen;
            let due = e.requeue_ms.is_some_and(|r| r <= t_ms);
            if first || changed || due {
                self.sync(i, jobs, cluster, cycle, t_ms);
            }
        }
    }

    fn record(&mut self, i: usize, cycle: u64, t_ms: i64, events: Vec<CronEvent>) {
        let e = &mut self.entries[i];
        for (type_, reason, message) in events {
            if let Some(last) = e.events.last_mut() {
                if last.type_ == type_ && last.reason == reason && last.message == message {
                    last.count += 1;
                    continue;
                }
            }
            e.events.push(CronEventReport {
                cycle,
                at_ms: t_ms,
                type_: type_.to_string(),
                reason: reason.to_string(),
                message,
                count: 1,
            });
        }
    }

    fn issue(&mut self, msg: String) {
        if !self.issues.contains(&msg) {
            self.issues.push(msg);
        }
    }

    /// One sync, in the live controller's order (`cron_controller::process`).
    fn sync(&mut self, i: usize, jobs: &mut JobWorld, cluster: &mut Cluster, cycle: u64, t_ms: i64) {
        let cron = self.entries[i].cron.clone();
        let ns = cron.metadata.namespace.clone().unwrap_or_default();
        let mine = jobs_of(jobs, &cron);
        let mut status = cron.status.clone().unwrap_or_default();
        let done = cron_plan::finished(&cron, &mut status, &mine);
        self.record(i, cycle, t_ms, done.events);
        for (name, uid) in &done.delete {
            jobs.delete(cluster, cycle, &format!("{ns}/{name}"), t_ms);
            status.active.retain(|r| r.uid.as_deref() != Some(uid.as_str()));
            self.record(i, cycle, t_ms, vec![(cron_plan::NORMAL, "SuccessfulDelete", format!("Deleted job {name:?}"))]);
        }
        let mine = jobs_of(jobs, &cron);
        let by_name = |name: &str| jobs.job(&format!("{ns}/{name}")).and_then(|j| j.metadata.uid);
        let (_, events) = cron_plan::reconcile_active(&mut status, &mine, by_name);
        self.record(i, cycle, t_ms, events);
        self.schedule(i, &cron, &mut status, jobs, cluster, cycle, t_ms);
        let e = &mut self.entries[i];
        e.cron.status = Some(status);
        e.seen = signature(&jobs_of(jobs, &e.cron));
    }

    /// Carries out [`cron_plan::plan`] on the simulated world, as `cron_controller::schedule`
    /// does on the API.
    #[allow(clippy::too_many_arguments)]
    fn schedule(
        &mut self,
        i: usize,
        cron: &CronJob,
        status: &mut CronJobStatus,
        jobs: &mut JobWorld,
        cluster: &mut Cluster,
        cycle: u64,
        t_ms: i64,
    ) {
        use cron_plan::{Plan, NORMAL, WARNING};
        self.entries[i].requeue_ms = None;
        let key = self.entries[i].key.clone();
        // The virtual clock has no skew: the run is looked at on its time, without the padding.
        let requeue = |again: Option<std::time::Duration>| {
            again.map(|d| t_ms.saturating_add(i64::try_from(d.saturating_sub(NEXT_DELTA).as_millis()).unwrap_or(i64::MAX)))
        };
        let (run_at, tz) = match cron_plan::plan(cron, status, at(t_ms), &TimeZone::UTC) {
            Plan::Suspended => return,
            Plan::Refused { field, event } => {
                self.issue(format!("CronJob {key}: {field}: {}; no Jobs are made", event.2));
                return self.record(i, cycle, t_ms, vec![event]);
            }
            Plan::Wait { events, again } => {
                self.record(i, cycle, t_ms, events);
                self.entries[i].requeue_ms = requeue(again);
                return;
            }
            Plan::Start { events, skip, replace, run_at, tz, again } => {
                self.record(i, cycle, t_ms, events);
                self.entries[i].requeue_ms = requeue(again);
                if skip {
                    return;
                }
                for r in replace {
                    let name = r.name.clone().unwrap_or_default();
                    jobs.delete(cluster, cycle, &format!("{}/{name}", r.namespace.as_deref().unwrap_or_default()), t_ms);
                    status.active.retain(|a| a.uid != r.uid);
                    self.record(i, cycle, t_ms, vec![(NORMAL, "SuccessfulDelete", format!("Deleted job {name:?}"))]);
                }
                (run_at, tz)
            }
        };
        let job = cron_plan::job_for(cron, run_at, &tz);
        let name = job.metadata.name.clone().unwrap_or_default();
        let made = match jobs.create(job, t_ms) {
            Ok(j) => {
                self.record(i, cycle, t_ms, vec![(NORMAL, "SuccessfulCreate", format!("Created job {name} for CronJob {key}"))]);
                self.entries[i].runs.push(CronRun {
                    job: crate::controller::build::job_key(&j),
                    scheduled_at_ms: run_at.as_millisecond(),
                    created_at_ms: t_ms,
                });
                Some(j)
            }
            Err(existing) if !cron_plan::owned_by(&existing, cron) => {
                let owner = existing.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true));
                let owner = owner.map_or("none".to_string(), |o| o.name.clone());
                let msg = format!("Job {name} exists but is not owned by this CronJob (current owner: {owner})");
                self.record(i, cycle, t_ms, vec![(WARNING, "ForeignJob", msg)]);
                None
            }
            Err(existing) => cron_plan::finished_phase(&existing).is_none().then_some(*existing),
        };
        if let Some(job) = made {
            if !status.active.iter().any(|r| r.uid == job.metadata.uid) {
                status.active.push(cron_plan::reference(&job));
            }
            status.last_schedule_time = Some(Time(run_at));
        }
    }

    /// Every CronJob as it stands, in load order (one not created yet has no Jobs).
    pub fn reports(&self) -> Vec<CronJobReport> {
        self.entries
            .iter()
            .map(|e| {
                let s = e.cron.status.clone().unwrap_or_default();
                CronJobReport {
                    cron_job: e.key.clone(),
                    jobs: e.runs.clone(),
                    active: s.active.iter().filter_map(|r| r.name.clone()).collect(),
                    last_schedule_ms: s.last_schedule_time.as_ref().map(ms),
                    last_successful_ms: s.last_successful_time.as_ref().map(ms),
                    events: e.events.clone(),
                }
            })
            .collect()
    }
}
