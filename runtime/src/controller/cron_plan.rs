//! The CronJob controller's decisions, without I/O (Volcano's `pkg/controllers/cronjob`,
//! volcano-behaviour.md §5): which finished Jobs leave `status.active`, which old Jobs the
//! history limits delete, whether a Job is due now and under what name, what the concurrency
//! policy does with the running ones, and when to look again. [`super::cron_controller`] reads
//! the objects, calls these and carries out the result.
//!
//! A CronJob's Jobs are those naming it as controller owner (kind `CronJob`, its name and UID).
//! A Job is finished in phase `Completed`, `Failed` or `Terminated`. History limits default to
//! 3 successful and 1 failed Job (Volcano's CRD defaults; Basalt's CRD writes no defaults).

use crate::convert::cron::Schedule;
use crate::crd::{CronJob, CronJobStatus, Job};
/// The Event types of [`CronEvent`]s (`Normal`, `Warning`), for whoever carries these rules out.
pub use crate::plumbing::events::{NORMAL, WARNING};
use jiff::tz::TimeZone;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kube::Resource;
use std::time::Duration;

/// The annotation on each Job with its nominal start time (RFC 3339 in the CronJob's zone).
pub const SCHEDULED_TIMESTAMP: &str = "volcano.sh/cronjob-scheduled-timestamp";
/// Volcano's padding of every requeue, against clock skew.
pub const NEXT_DELTA: Duration = Duration::from_millis(100);
/// Default `successfulJobsHistoryLimit`.
pub const DEFAULT_SUCCESSFUL_LIMIT: i32 = 3;
/// Default `failedJobsHistoryLimit`.
pub const DEFAULT_FAILED_LIMIT: i32 = 1;

/// An Event to record on the CronJob: (`Normal`/`Warning`, reason, message).
pub type CronEvent = (&'static str, &'static str, String);

/// Whether `job` is owned (as controller) by `cron`.
pub fn owned_by(job: &Job, cron: &CronJob) -> bool {
    job.metadata.owner_references.iter().flatten().any(|o| {
        o.controller == Some(true)
            && o.kind == "CronJob"
            && Some(&o.name) == cron.metadata.name.as_ref()
            && Some(&o.uid) == cron.metadata.uid.as_ref()
    })
}

/// The Job's phase when it is finished (`Completed`, `Failed`, `Terminated`).
pub fn finished_phase(job: &Job) -> Option<&str> {
    let phase = job.status.as_ref()?.state.phase.as_deref()?;
    matches!(phase, "Completed" | "Failed" | "Terminated").then_some(phase)
}

fn uid(job: &Job) -> &str {
    job.metadata.uid.as_deref().unwrap_or_default()
}

fn in_active(status: &CronJobStatus, uid: &str) -> bool {
    !uid.is_empty() && status.active.iter().any(|r| r.uid.as_deref() == Some(uid))
}

/// What the finished Jobs change: they leave `active` (a `SawCompletedJob` Event each), a
/// `Completed` one moves `lastSuccessfulTime` forward, and the oldest beyond the history limits
/// are to be deleted (by name, oldest first).
#[derive(Debug, Default, PartialEq)]
pub struct Finished {
    /// Whether `status` changed.
    pub changed: bool,
    /// Events to record.
    pub events: Vec<CronEvent>,
    /// Jobs to delete: (name, UID), oldest first.
    pub delete: Vec<(String, String)>,
}

/// Processes `jobs` (this CronJob's) into `status` (Volcano's `processFinishedJobs`).
pub fn finished(cron: &CronJob, status: &mut CronJobStatus, jobs: &[Job]) -> Finished {
    let mut out = Finished::default();
    let (mut ok, mut failed) = (Vec::new(), Vec::new());
    for job in jobs {
        let Some(phase) = finished_phase(job) else { continue };
        if in_active(status, uid(job)) {
            status.active.retain(|r| r.uid.as_deref() != Some(uid(job)));
            let name = job.metadata.name.clone().unwrap_or_default();
            out.events.push((NORMAL, "SawCompletedJob", format!("Saw completed job: {name} in active, remove")));
            out.changed = true;
        }
        match phase {
            "Completed" => {
                let done = job
                    .status
                    .as_ref()
                    .and_then(|s| s.state.last_transition_time.as_deref())
                    .and_then(|t| t.parse::<Timestamp>().ok());
                if let Some(t) = done {
                    if status.last_successful_time.as_ref().is_none_or(|l| t > l.0) {
                        status.last_successful_time = Some(Time(t));
                        out.changed = true;
                    }
                }
                ok.push(job);
            }
            "Failed" => failed.push(job),
            _ => {}
        }
    }
    let limit = |v: Option<i32>, d: i32| v.unwrap_or(d).max(0) as usize;
    for (mut list, keep) in [
        (ok, limit(cron.spec.successful_jobs_history_limit, DEFAULT_SUCCESSFUL_LIMIT)),
        (failed, limit(cron.spec.failed_jobs_history_limit, DEFAULT_FAILED_LIMIT)),
    ] {
        if list.len() <= keep {
            continue;
        }
        list.sort_by(|a, b| {
            let created = |j: &Job| j.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(a).cmp(&created(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
        });
        let n = list.len() - keep;
        out.delete.extend(list[..n].iter().map(|j| (j.metadata.name.clone().unwrap_or_default(), uid(j).to_string())));
    }
    out
}

/// Drops from `active` the references whose Job is gone or has another UID (a
/// `StaleReference` Event each); returns the Events and whether `status` changed. Also an
/// `OrphanedJob` Warning for a running Job of this CronJob that `active` does not list
/// (Volcano's `processCtlJobAndActiveJob`).
pub fn reconcile_active(
    status: &mut CronJobStatus,
    jobs: &[Job],
    all_jobs_by_name: impl Fn(&str) -> Option<String>,
) -> (bool, Vec<CronEvent>) {
    let mut events = Vec::new();
    for job in jobs {
        if !in_active(status, uid(job)) && finished_phase(job).is_none() {
            let name = job.metadata.name.clone().unwrap_or_default();
            events.push((
                WARNING,
                "OrphanedJob",
                format!("Detected orphaned job forgotten or not managed by controller: {name} (UID: {})", uid(job)),
            ));
        }
    }
    let before = status.active.len();
    let mut kept = Vec::new();
    for r in std::mem::take(&mut status.active) {
        let rname = r.name.clone().unwrap_or_default();
        let ruid = r.uid.clone().unwrap_or_default();
        if jobs.iter().any(|j| uid(j) == ruid) {
            kept.push(r);
            continue;
        }
        match all_jobs_by_name(&rname) {
            None => events.push((WARNING, "StaleReference", format!("Active job {rname:?} no longer exists (UID: {ruid})"))),
            Some(actual) if actual != ruid => events.push((
                WARNING,
                "StaleReference",
                format!("Active job reference {rname:?} points to a different UID (expected: {ruid}, actual: {actual})"),
            )),
            Some(_) => kept.push(r),
        }
    }
    status.active = kept;
    (status.active.len() != before, events)
}

/// Times in a CronJob's schedule relative to now (Volcano's `mostRecentScheduleTime`).
#[derive(Debug, PartialEq)]
pub struct Recent {
    /// The last schedule time, else the creation time, else (with the deadline) the deadline.
    pub earliest: Timestamp,
    /// The latest fire time in `(earliest, now]`, `None` if none.
    pub most_recent: Option<Timestamp>,
    /// Whether more than 100 fire times were missed.
    pub many_missed: bool,
    /// Whether any fire time was missed (at least one is in `(earliest, now]`).
    pub missed: bool,
}

/// The most recent unmet fire time of `cron` at `now`. With `deadline`, nothing older than
/// `startingDeadlineSeconds` counts.
pub fn most_recent(cron: &CronJob, now: Timestamp, sched: &Schedule, tz: &TimeZone, deadline: bool) -> Recent {
    let created = cron.metadata.creation_timestamp.as_ref().map(|t| t.0).unwrap_or(now);
    let mut earliest = cron.status.as_ref().and_then(|s| s.last_schedule_time.as_ref()).map(|t| t.0).unwrap_or(created);
    if deadline {
        if let Some(secs) = cron.spec.starting_deadline_seconds {
            let limit = Timestamp::from_second(now.as_second().saturating_sub(secs)).unwrap_or(now);
            if limit > earliest {
                earliest = limit;
            }
        }
    }
    let none = Recent { earliest, most_recent: None, many_missed: false, missed: false };
    let Some(t1) = sched.next(earliest, tz) else { return none };
    if now < t1 {
        return none;
    }
    let mut latest = t1;
    let mut count = 1u32;
    // Walk the fire times up to now; past 100 only the count matters, so jump by the interval.
    while let Some(t) = sched.next(latest, tz).filter(|t| *t <= now) {
        latest = t;
        count += 1;
        if count > 100 {
            // Many missed: find the last one before now by stepping from a point close to it.
            let step = (t.as_second() - t1.as_second()) / i64::from(count - 1);
            let from = Timestamp::from_second(now.as_second() - 2 * step.max(1)).unwrap_or(latest);
            let mut last = latest;
            let mut cur = if from > latest { from } else { latest };
            while let Some(n) = sched.next(cur, tz).filter(|n| *n <= now) {
                last = n;
                cur = n;
            }
            return Recent { earliest, most_recent: Some(last), many_missed: true, missed: true };
        }
    }
    Recent { earliest, most_recent: Some(latest), many_missed: false, missed: true }
}

/// How long until `cron` should be looked at again (Volcano's `nextScheduleTimeDuration`):
/// the next fire time after the most recent one (or after the earliest time when none was
/// missed, or after now when some were), plus [`NEXT_DELTA`]. `None` when the schedule never
/// fires again.
pub fn requeue_after(cron: &CronJob, now: Timestamp, sched: &Schedule, tz: &TimeZone) -> Option<Duration> {
    let r = most_recent(cron, now, sched, tz, false);
    let from = match r.most_recent {
        Some(t) => t,
        None if !r.missed => r.earliest,
        None => now,
    };
    let next = sched.next(from, tz)?;
    let wait = next.as_millisecond() - now.as_millisecond();
    Some(Duration::from_millis(wait.max(0) as u64) + NEXT_DELTA)
}

/// `<cronjob>-<scheduled time in Unix minutes>` (Volcano's `getJobName`).
pub fn job_name(cron: &CronJob, scheduled: Timestamp) -> String {
    format!("{}-{}", cron.metadata.name.as_deref().unwrap_or_default(), scheduled.as_second().div_euclid(60))
}

/// The Job of the run at `scheduled` (Volcano's `getJobFromTemplate`): the template's labels,
/// annotations and spec, the [`SCHEDULED_TIMESTAMP`] annotation in `tz`, and the CronJob as
/// controller owner.
pub fn job_for(cron: &CronJob, scheduled: Timestamp, tz: &TimeZone) -> Job {
    let tmeta = cron.spec.job_template.metadata.clone().unwrap_or_default();
    let mut annotations = tmeta.annotations.unwrap_or_default();
    let local = scheduled.to_zoned(tz.clone());
    annotations.insert(SCHEDULED_TIMESTAMP.into(), local.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string().replace("+00:00", "Z"));
    let mut job = Job::new(&job_name(cron, scheduled), cron.spec.job_template.spec.clone());
    job.metadata = ObjectMeta {
        name: Some(job_name(cron, scheduled)),
        namespace: cron.metadata.namespace.clone(),
        labels: tmeta.labels.filter(|l| !l.is_empty()),
        annotations: Some(annotations),
        owner_references: Some(vec![OwnerReference {
            api_version: CronJob::api_version(&()).into_owned(),
            kind: CronJob::kind(&()).into_owned(),
            name: cron.metadata.name.clone().unwrap_or_default(),
            uid: cron.metadata.uid.clone().unwrap_or_default(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        ..Default::default()
    };
    job
}

/// The `status.active` entry of a created Job.
pub fn reference(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some(Job::api_version(&()).into_owned()),
        kind: Some(Job::kind(&()).into_owned()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        resource_version: job.metadata.resource_version.clone(),
        ..Default::default()
    }
}

/// What the schedule asks for now.
#[derive(Debug, PartialEq)]
pub enum Due {
    /// Nothing to start; look again after this long (`None`: never).
    Wait(Option<Duration>),
    /// Start the run of this nominal time (then look again after the duration).
    Start(Timestamp, Option<Duration>),
}

/// The schedule's decision at `now` (Volcano's `syncCronJob` from `nextScheduleTime` to the
/// already-processed check), with the Events it records (`TooManyMissedTimes`).
pub fn due(cron: &CronJob, status: &CronJobStatus, now: Timestamp, sched: &Schedule, tz: &TimeZone) -> (Due, Vec<CronEvent>) {
    let again = requeue_after(cron, now, sched, tz);
    let r = most_recent(cron, now, sched, tz, true);
    let Some(t) = r.most_recent.filter(|t| *t <= now) else { return (Due::Wait(again), Vec::new()) };
    let mut events = Vec::new();
    if r.many_missed {
        events.push((
            WARNING,
            "TooManyMissedTimes",
            "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew".to_string(),
        ));
    }
    let name = job_name(cron, t);
    let processed =
        status.active.iter().any(|a| a.name.as_deref() == Some(name.as_str()) && a.namespace == cron.metadata.namespace)
            || status.last_schedule_time.as_ref().is_some_and(|l| l.0 == t);
    if processed {
        return (Due::Wait(again), events);
    }
    (Due::Start(t, again), events)
}

/// The CronJob's time zone: `spec.timeZone`, else the controller's (UTC in a container).
///
/// Errors: the name is not in the IANA database (Volcano's `InvalidTimeZone`).
pub fn time_zone(cron: &CronJob) -> Result<TimeZone, String> {
    match cron.spec.time_zone.as_deref() {
        None => Ok(TimeZone::try_system().unwrap_or(TimeZone::UTC)),
        Some("UTC") | Some("") => Ok(TimeZone::UTC),
        Some(name) => TimeZone::get(name).map_err(|e| format!("Invalid time zone {name:?}: {e}")),
    }
}

/// What one sync does once the finished Jobs and `status.active` are settled: Volcano's
/// `syncCronJob` from the suspend check to the Job's creation, decided once for the controller
/// ([`super::cron_controller`]) and the simulator (`sim::cronjobs`), which carry it out with
/// their own effects (API calls, or the simulated world).
#[derive(Debug)]
pub enum Plan {
    /// `spec.suspend` is true: nothing happens.
    Suspended,
    /// `field` (`spec.timeZone` or `spec.schedule`) is refused: no Job is made; `event` (a
    /// Warning: `InvalidTimeZone`, `UnParseableCronJobSchedule`) says why.
    Refused {
        /// The refused field.
        field: &'static str,
        /// The Event to record.
        event: CronEvent,
    },
    /// No run to start now: record `events`, look again after `again` (`None`: never).
    Wait {
        /// Events to record (`TooManyMissedTimes`).
        events: Vec<CronEvent>,
        /// When to look again.
        again: Option<Duration>,
    },
    /// The run of nominal time `run_at` is due. Record `events` in order; with `skip`
    /// (`Forbid` while a Job is active, the last event says so) make nothing; else delete the
    /// active Jobs in `replace` (the `Replace` policy), then create the Job of `run_at` in `tz`
    /// ([`job_for`]) and add it to `status.active`. Look again after `again`.
    Start {
        /// Events to record, in order.
        events: Vec<CronEvent>,
        /// `Forbid` and a Job is active: no Job is made.
        skip: bool,
        /// The active Jobs `Replace` deletes first.
        replace: Vec<ObjectReference>,
        /// The run's nominal time.
        run_at: Timestamp,
        /// The CronJob's time zone.
        tz: TimeZone,
        /// When to look again.
        again: Option<Duration>,
    },
}

/// The [`Plan`] for `cron` whose status is `status` (as settled so far in this sync) at `now`;
/// `default_tz` is the zone of a CronJob without `spec.timeZone` (the controller's own zone;
/// UTC in the simulator, whose runs must not depend on the machine).
pub fn plan(cron: &CronJob, status: &CronJobStatus, now: Timestamp, default_tz: &TimeZone) -> Plan {
    if cron.spec.suspend == Some(true) {
        return Plan::Suspended;
    }
    let tz = match cron.spec.time_zone.as_deref() {
        None => default_tz.clone(),
        Some(_) => match time_zone(cron) {
            Ok(tz) => tz,
            Err(e) => return Plan::Refused { field: "spec.timeZone", event: (WARNING, "InvalidTimeZone", e) },
        },
    };
    let sched = match Schedule::parse(&cron.spec.schedule) {
        Ok(s) => s,
        Err(e) => {
            let msg = format!("unparseable schedule for cronjob: {}: {e}", cron.spec.schedule);
            return Plan::Refused { field: "spec.schedule", event: (WARNING, "UnParseableCronJobSchedule", msg) };
        }
    };
    // The rules read the status as this sync has settled it, as Volcano's in-place copy does.
    let mut view = cron.clone();
    view.status = Some(status.clone());
    let (due, mut events) = due(&view, status, now, &sched, &tz);
    let (run_at, again) = match due {
        Due::Wait(again) => return Plan::Wait { events, again },
        Due::Start(run_at, again) => (run_at, again),
    };
    let (mut skip, mut replace) = (false, Vec::new());
    match cron.spec.concurrency_policy.as_deref().unwrap_or("Allow") {
        "Forbid" if !status.active.is_empty() => {
            let msg = "Skipping job creation because another job is already running".to_string();
            events.push((WARNING, "ForbidConcurrent", msg));
            skip = true;
        }
        "Replace" if !status.active.is_empty() => {
            events.push((WARNING, "ReplaceConcurrent", "Replacing active job for CronJob".into()));
            replace = status.active.clone();
        }
        _ => {}
    }
    Plan::Start { events, skip, replace, run_at, tz, again }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{CronJobSpec, JobState, JobStatus};

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn cron(schedule: &str, created: &str) -> CronJob {
        let mut c = CronJob::new("nightly", CronJobSpec { schedule: schedule.into(), ..Default::default() });
        c.metadata.namespace = Some("ml".into());
        c.metadata.uid = Some("cj-uid".into());
        c.metadata.creation_timestamp = Some(Time(ts(created)));
        c.spec.job_template.metadata =
            Some(ObjectMeta { labels: Some([("team".to_string(), "a".to_string())].into()), ..Default::default() });
        c
    }

    fn job(c: &CronJob, name: &str, created: &str, phase: Option<(&str, &str)>) -> Job {
        let mut j = job_for(c, ts(created), &TimeZone::UTC);
        j.metadata.name = Some(name.into());
        j.metadata.uid = Some(format!("uid-{name}"));
        j.metadata.creation_timestamp = Some(Time(ts(created)));
        if let Some((p, at)) = phase {
            j.status = Some(JobStatus {
                state: JobState { phase: Some(p.into()), last_transition_time: Some(at.into()), ..Default::default() },
                ..Default::default()
            });
        }
        j
    }

    fn sched(c: &CronJob) -> Schedule {
        Schedule::parse(&c.spec.schedule).unwrap()
    }

    #[test]
    fn a_minute_schedule_starts_the_run_of_the_last_minute_once() {
        let mut c = cron("* * * * *", "2026-12-05T10:00:10Z");
        let now = ts("2026-12-05T10:01:20Z");
        let (d, ev) = due(&c, &CronJobStatus::default(), now, &sched(&c), &TimeZone::UTC);
        assert!(ev.is_empty());
        assert_eq!(d, Due::Start(ts("2026-12-05T10:01:00Z"), Some(Duration::from_millis(40_100))));
        let j = job_for(&c, ts("2026-12-05T10:01:00Z"), &TimeZone::UTC);
        assert_eq!(j.metadata.name.as_deref(), Some(format!("nightly-{}", ts("2026-12-05T10:01:00Z").as_second() / 60).as_str()));
        assert_eq!(j.metadata.annotations.as_ref().unwrap()[SCHEDULED_TIMESTAMP], "2026-12-05T10:01:00Z");
        assert_eq!(j.metadata.labels.as_ref().unwrap()["team"], "a");
        assert!(owned_by(&j, &c), "the CronJob owns the Job");
        // once recorded as the last schedule time, the same minute is not started again
        let status = CronJobStatus { last_schedule_time: Some(Time(ts("2026-12-05T10:01:00Z"))), ..Default::default() };
        c.status = Some(status.clone());
        assert_eq!(due(&c, &status, now, &sched(&c), &TimeZone::UTC).0, Due::Wait(Some(Duration::from_millis(40_100))));
        // nothing due before the first fire time
        let fresh = cron("0 2 * * *", "2026-12-05T03:00:00Z");
        let (d, _) = due(&fresh, &CronJobStatus::default(), ts("2026-12-05T04:00:00Z"), &sched(&fresh), &TimeZone::UTC);
        assert_eq!(d, Due::Wait(Some(Duration::from_secs(22 * 3600) + NEXT_DELTA)));
    }

    #[test]
    fn starting_deadline_skips_late_runs_and_many_misses_warn() {
        let mut c = cron("*/5 * * * *", "2026-12-01T00:00:00Z");
        let now = ts("2026-12-05T10:07:00Z");
        let (d, ev) = due(&c, &CronJobStatus::default(), now, &sched(&c), &TimeZone::UTC);
        assert_eq!(d, Due::Start(ts("2026-12-05T10:05:00Z"), Some(Duration::from_secs(180) + NEXT_DELTA)));
        assert_eq!(ev[0].1, "TooManyMissedTimes");
        c.spec.starting_deadline_seconds = Some(60);
        let (d, ev) = due(&c, &CronJobStatus::default(), now, &sched(&c), &TimeZone::UTC);
        assert!(matches!(d, Due::Wait(_)), "10:05 is more than 60 s late: {d:?}");
        assert!(ev.is_empty());
    }

    #[test]
    fn finished_jobs_leave_active_and_history_limits_delete_the_oldest() {
        let mut c = cron("* * * * *", "2026-12-05T10:00:00Z");
        c.spec.successful_jobs_history_limit = Some(1);
        let jobs = vec![
            job(&c, "a", "2026-12-05T10:01:00Z", Some(("Completed", "2026-12-05T10:01:30Z"))),
            job(&c, "b", "2026-12-05T10:02:00Z", Some(("Completed", "2026-12-05T10:02:30Z"))),
            job(&c, "c", "2026-12-05T10:03:00Z", Some(("Failed", "2026-12-05T10:03:30Z"))),
            job(&c, "d", "2026-12-05T10:04:00Z", Some(("Failed", "2026-12-05T10:04:30Z"))),
            job(&c, "e", "2026-12-05T10:05:00Z", None),
        ];
        let mut status = CronJobStatus { active: jobs.iter().skip(1).map(reference).collect(), ..Default::default() };
        let f = finished(&c, &mut status, &jobs);
        assert!(f.changed);
        assert_eq!(status.active.iter().map(|r| r.name.clone().unwrap()).collect::<Vec<_>>(), ["e"]);
        assert_eq!(f.events.len(), 3, "b, c and d seen completed: {:?}", f.events);
        assert_eq!(status.last_successful_time, Some(Time(ts("2026-12-05T10:02:30Z"))));
        let names: Vec<&str> = f.delete.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "c"], "one successful and one failed kept (limits 1 and the default 1)");
    }

    #[test]
    fn stale_and_orphaned_references() {
        let c = cron("* * * * *", "2026-12-05T10:00:00Z");
        let running = job(&c, "run", "2026-12-05T10:01:00Z", None);
        let mut status = CronJobStatus {
            active: vec![
                ObjectReference { name: Some("gone".into()), uid: Some("u-gone".into()), ..Default::default() },
                ObjectReference { name: Some("other".into()), uid: Some("u-old".into()), ..Default::default() },
            ],
            ..Default::default()
        };
        let (changed, ev) =
            reconcile_active(&mut status, std::slice::from_ref(&running), |n| (n == "other").then(|| "u-new".to_string()));
        assert!(changed && status.active.is_empty());
        let reasons: Vec<&str> = ev.iter().map(|e| e.1).collect();
        assert_eq!(reasons, ["OrphanedJob", "StaleReference", "StaleReference"]);
    }

    #[test]
    fn time_zones() {
        let mut c = cron("0 2 * * *", "2026-12-05T00:00:00Z");
        c.spec.time_zone = Some("Europe/Berlin".into());
        let tz = time_zone(&c).unwrap();
        let j = job_for(&c, ts("2026-12-06T01:00:00Z"), &tz);
        assert_eq!(j.metadata.annotations.unwrap()[SCHEDULED_TIMESTAMP], "2026-12-06T02:00:00+01:00");
        c.spec.time_zone = Some("Mars/Olympus".into());
        assert!(time_zone(&c).unwrap_err().starts_with("Invalid time zone \"Mars/Olympus\""));
    }
}
