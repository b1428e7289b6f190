//! The text of a simulation with Volcano Jobs: each cycle's Job phase changes, the cycles in
//! which nothing happened folded into one line, and the Jobs at the end (phase, retryCount,
//! pod counts per task, the cycle and virtual time each finished). The JSON is the same data
//! under `cycles[].jobs`, `jobs` and `jobsRun` ([`super::report::render_json`]).

use super::report::CycleReport;
use super::SimOutput;
use std::fmt::Write as _;

/// Whether cycle `c` changed nothing worth a block of its own: no binds, evictions, pipelined
/// tasks, scheduling gates removed, Job phase changes or events other than the gang's repeated `Unschedulable` warning.
pub fn is_quiet(c: &CycleReport) -> bool {
    c.binds.is_empty()
        && c.evictions.is_empty()
        && c.pipelined.is_empty()
        && c.gates_removed.is_empty()
        && c.jobs.is_empty()
        && c.events.iter().all(|e| e.kind == "Warning" && e.reason == "Unschedulable")
}

/// A run of consecutive quiet cycles, printed as one line.
#[derive(Debug, Default)]
pub struct QuietCycles {
    range: Option<(usize, usize)>,
}

impl QuietCycles {
    /// Adds cycle `n` (1-based) to the run.
    pub fn add(&mut self, n: usize) {
        self.range = Some(match self.range {
            Some((first, _)) => (first, n),
            None => (n, n),
        });
    }

    /// Writes the run, if any, and starts a new one.
    pub fn flush(&mut self, s: &mut String) {
        match self.range.take() {
            Some((a, b)) if a == b => {
                let _ = writeln!(s, "\nCycle {a}: no binds, evictions or Job changes");
            }
            Some((a, b)) => {
                let _ = writeln!(s, "\nCycles {a}–{b}: no binds, evictions or Job changes");
            }
            None => {}
        }
    }
}

/// Virtual time in seconds: `12 s`, `1.5 s`.
pub fn seconds(ms: i64) -> String {
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        let text = format!("{:.3}", ms as f64 / 1000.0);
        format!("{} s", text.trim_end_matches('0'))
    }
}

/// The `Jobs:` block of one cycle: the phase changes the job controller made before it.
pub fn transitions_text(s: &mut String, c: &CycleReport) {
    if c.jobs.is_empty() {
        return;
    }
    let _ = writeln!(s, "  Jobs:");
    for t in &c.jobs {
        let from = if t.from.is_empty() { "(new)" } else { &t.from };
        let _ = writeln!(s, "    {}: {from} → {}", t.job, t.to);
    }
}

/// The closing `Jobs` section.
pub fn jobs_text(s: &mut String, out: &SimOutput) {
    let Some(run) = &out.jobs_run else { return };
    let period = seconds(run.schedule_period_ms);
    let end = seconds(i64::try_from(run.cycles.saturating_sub(1)).unwrap_or(i64::MAX).saturating_mul(run.schedule_period_ms));
    let how = match run.stopped_at_limit {
        Some(limit) if run.finished < run.total => {
            format!("stopped at the cycle limit ({limit}) with {} of {} unfinished", run.total - run.finished, run.total)
        }
        Some(limit) => format!("all {} finished; stopped at the cycle limit ({limit}) with CronJobs still scheduling", run.total),
        None if run.finished == run.total => format!("all {} finished by cycle {} ({end})", run.total, run.cycles),
        None => format!("{} of {} finished after {} cycles ({end})", run.finished, run.total, run.cycles),
    };
    let _ = writeln!(s, "\nJobs (a cycle every {period} of virtual time; {how}):");
    for j in &out.jobs {
        let phase = if j.phase.is_empty() { "(no phase)" } else { &j.phase };
        let when = match (j.finished_cycle, j.finished_at_ms) {
            (Some(c), Some(t)) => format!(" at cycle {c} ({})", seconds(t)),
            _ => String::new(),
        };
        let when = match j.deleted_at_ms {
            Some(t) => format!("{when}, deleted at {}", seconds(t)),
            None => when,
        };
        let _ = writeln!(
            s,
            "  {}: {phase}{when}, retryCount {}; pending {}, running {}, succeeded {}, failed {}, terminating {}",
            j.job, j.retry_count, j.pending, j.running, j.succeeded, j.failed, j.terminating
        );
        for (task, counts) in &j.task_status_count {
            let c: Vec<String> = counts.iter().map(|(p, n)| format!("{p} {n}")).collect();
            let _ = writeln!(s, "    {task}: {}", c.join(", "));
        }
    }
}

/// The closing `CronJobs` section: per CronJob the Jobs it made (nominal and actual time), its
/// status, and its Events (repeats counted).
pub fn cron_jobs_text(s: &mut String, out: &SimOutput) {
    if out.cron_jobs.is_empty() {
        return;
    }
    let _ = writeln!(s, "\nCronJobs:");
    for c in &out.cron_jobs {
        let made: Vec<String> = c
            .jobs
            .iter()
            .map(|r| {
                let name = r.job.split_once('/').map_or(r.job.as_str(), |(_, n)| n);
                if r.created_at_ms == r.scheduled_at_ms {
                    format!("{name} at {}", seconds(r.created_at_ms))
                } else {
                    format!("{name} at {} (due {})", seconds(r.created_at_ms), seconds(r.scheduled_at_ms))
                }
            })
            .collect();
        let made = if made.is_empty() { "none".to_string() } else { made.join(", ") };
        let _ = writeln!(s, "  {}: {} made: {made}", c.cron_job, plural_jobs(c.jobs.len()));
        let active = if c.active.is_empty() { "none".to_string() } else { c.active.join(", ") };
        let last = |t: Option<i64>| t.map_or("never".to_string(), seconds);
        let _ = writeln!(
            s,
            "    active: {active}; lastScheduleTime {}; lastSuccessfulTime {}",
            last(c.last_schedule_ms),
            last(c.last_successful_ms)
        );
        for e in &c.events {
            let times = if e.count > 1 { format!(" (×{})", e.count) } else { String::new() };
            let _ =
                writeln!(s, "    {} {}: {}{times}, from cycle {} ({})", e.type_, e.reason, e.message, e.cycle, seconds(e.at_ms));
        }
    }
}

fn plural_jobs(n: usize) -> String {
    if n == 1 {
        "1 Job".into()
    } else {
        format!("{n} Jobs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::jobs::{JobReport, JobTransition};
    use crate::sim::JobsRun;
    use std::collections::BTreeMap;

    #[test]
    fn seconds_read_as_seconds() {
        assert_eq!(seconds(0), "0 s");
        assert_eq!(seconds(12_000), "12 s");
        assert_eq!(seconds(1500), "1.5 s");
        assert_eq!(seconds(250), "0.25 s");
    }

    #[test]
    fn quiet_cycles_fold_and_jobs_close_the_text() {
        let busy = CycleReport {
            jobs: vec![JobTransition { job: "ns/j".into(), from: String::new(), to: "Pending".into() }],
            ..Default::default()
        };
        assert!(!is_quiet(&busy) && is_quiet(&CycleReport::default()));
        let out = SimOutput {
            cycles: vec![busy, CycleReport::default(), CycleReport::default()],
            jobs: vec![JobReport {
                job: "ns/j".into(),
                phase: "Completed".into(),
                succeeded: 2,
                task_status_count: BTreeMap::from([("w".to_string(), BTreeMap::from([("Succeeded".to_string(), 2)]))]),
                finished_cycle: Some(3),
                finished_at_ms: Some(2000),
                ..Default::default()
            }],
            jobs_run: Some(JobsRun {
                schedule_period_ms: 1000,
                cycles: 3,
                finished: 1,
                total: 1,
                stopped_at_limit: None,
                cron_jobs_pending: false,
            }),
            ..Default::default()
        };
        let text = super::super::render_text(&out);
        assert!(
            text.contains("\nCycle 1: 0 binds, 0 evictions, 0 pipelined, 0 pending\n  Jobs:\n    ns/j: (new) → Pending\n"),
            "{text}"
        );
        assert!(text.contains("\nCycles 2–3: no binds, evictions or Job changes\n"), "{text}");
        assert!(
            text.ends_with(
                "\nJobs (a cycle every 1 s of virtual time; all 1 finished by cycle 3 (2 s)):\n  \
                 ns/j: Completed at cycle 3 (2 s), retryCount 0; pending 0, running 0, succeeded 2, failed 0, terminating 0\n    \
                 w: Succeeded 2\n"
            ),
            "{text}"
        );
    }
}
