//! `basalt replay --cluster` over files with Volcano Jobs (`batch.volcano.sh/v1alpha1`): each
//! Job is submitted at its `basalt.dev/arrival-seconds` annotation and run by the simulator's
//! job controller and kubelet ([`crate::sim::jobs`]) beside the scheduler, a cycle every
//! `--period` of virtual time, until every Job has finished (or [`MAX_JOB_REPLAY_CYCLES`]).
//! One run per conf; the report lists each Job's final phase, retryCount, pod counts and when
//! it finished, with counts by phase, job completion times (submission to finish) and the
//! makespan.
//!
//! Difference from the pod replay ([`super::engine`]): the cycle runs every period, also when
//! nothing changed (the controller's delays and the kubelet count on it), and the pod-level
//! metrics (waits, utilization, queue shares) are not computed for Jobs. Plain Pods in the same
//! files are scheduled as `basalt simulate` schedules them; their replay annotations are not
//! read on this path.

use super::metrics::stats;
use super::report::Stats;
use super::NamedConf;
use crate::sim::jobs::JobReport;
use crate::sim::{self, NotHonouredReport, SimOptions};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The most cycles one Job replay runs, waiting for its Jobs to finish.
pub const MAX_JOB_REPLAY_CYCLES: u64 = 1_000_000;

/// One conf's run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobsRunReport {
    /// The conf's label.
    pub conf: String,
    /// Cycles run.
    pub cycles: u64,
    /// Jobs by final phase (`Completed`, `Failed`, …; `""` for a Job never submitted).
    pub phases: std::collections::BTreeMap<String, usize>,
    /// Submission to Completed/Failed/Terminated, s, over the finished Jobs.
    pub job_completion_s: Stats,
    /// First submission to the last finish, s (`None` when none finished).
    pub makespan_s: Option<f64>,
    /// Whether the run stopped at [`MAX_JOB_REPLAY_CYCLES`] with Jobs unfinished.
    pub stopped_at_limit: bool,
    /// Every Job at the end, in load order.
    pub jobs: Vec<JobReport>,
    /// Problems met while running (`cycle N: …`).
    pub issues: Vec<String>,
}

/// The report of a Job replay (`--output json` prints it).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobsReplayReport {
    /// The input paths.
    pub input: Vec<String>,
    /// Nodes loaded.
    pub nodes: usize,
    /// Jobs loaded.
    pub job_count: usize,
    /// Virtual time between cycles, s.
    pub period_s: f64,
    /// Seed of the tie-breaks.
    pub seed: u64,
    /// What each conf leaves unhonoured.
    pub not_honoured: Vec<NotHonouredReport>,
    /// Load issues.
    pub load_issues: Vec<String>,
    /// One run per conf, in order.
    pub runs: Vec<JobsRunReport>,
}

/// Replays the Jobs in `paths` under each conf.
///
/// Errors: nothing could be loaded, or the files hold no Job (then the pod replay applies).
pub fn replay_jobs(
    paths: &[PathBuf],
    confs: &[NamedConf],
    period_ms: i64,
    seed: u64,
    scheduler_name: &str,
) -> Result<JobsReplayReport, String> {
    let opts = SimOptions {
        cycles: MAX_JOB_REPLAY_CYCLES,
        until_jobs_finished: Some(MAX_JOB_REPLAY_CYCLES),
        schedule_period_ms: period_ms.max(1),
        seed,
        scheduler_name: scheduler_name.to_string(),
        termination_grace_ms: 0,
        run_cron_jobs: false,
    };
    let mut report = JobsReplayReport {
        input: paths.iter().map(|p| p.display().to_string()).collect(),
        nodes: 0,
        job_count: 0,
        period_s: period_ms.max(1) as f64 / 1000.0,
        seed,
        not_honoured: confs.iter().flat_map(|c| NotHonouredReport::of(&c.conf, Some(&c.label))).collect(),
        load_issues: Vec::new(),
        runs: Vec::new(),
    };
    for c in confs {
        let out = sim::run(paths, &c.conf, &opts).map_err(|e| e.to_string())?;
        if out.jobs.is_empty() {
            return Err("no batch.volcano.sh/v1alpha1 Job in the files".into());
        }
        report.nodes = out.counts.nodes;
        report.job_count = out.counts.jobs;
        report.load_issues = crate::load::grouped_issue_lines(&out.load.issues);
        report.runs.push(run_report(&c.label, &out));
    }
    Ok(report)
}

fn run_report(label: &str, out: &sim::SimOutput) -> JobsRunReport {
    let mut phases = std::collections::BTreeMap::new();
    for j in &out.jobs {
        *phases.entry(j.phase.clone()).or_default() += 1;
    }
    let done: Vec<(i64, i64)> = out.jobs.iter().filter_map(|j| Some((j.submitted_at_ms?, j.finished_at_ms?))).collect();
    let first = out.jobs.iter().filter_map(|j| j.submitted_at_ms).min();
    let last = done.iter().map(|(_, f)| *f).max();
    let run = out.jobs_run.clone().unwrap_or_default();
    JobsRunReport {
        conf: label.to_string(),
        cycles: run.cycles,
        phases,
        job_completion_s: stats(done.iter().map(|(s, f)| (f - s) as f64 / 1000.0).collect()),
        makespan_s: first.zip(last).map(|(a, b)| (b - a) as f64 / 1000.0),
        stopped_at_limit: run.stopped_at_limit.is_some(),
        jobs: out.jobs.clone(),
        issues: out.startup_notes.iter().chain(&out.apply_issues).cloned().collect(),
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.1}"))
}

/// The report as text: per conf the counts by phase, job completion times, makespan, then one
/// line per Job.
pub fn render_text(r: &JobsReplayReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Basalt replay: Volcano Jobs from {}", r.input.join(" "));
    let _ = writeln!(
        s,
        "  {} nodes, {} Jobs; a cycle every {} s of virtual time; seed {}",
        r.nodes,
        r.job_count,
        crate::sim::job_report::seconds((r.period_s * 1000.0).round() as i64).trim_end_matches(" s"),
        r.seed
    );
    for n in &r.not_honoured {
        let _ = writeln!(s, "  not honoured ({}): {}", n.conf.as_deref().unwrap_or(""), n.message);
    }
    for i in &r.load_issues {
        let _ = writeln!(s, "  issue: {i}");
    }
    for run in &r.runs {
        let phases: Vec<String> =
            run.phases.iter().map(|(p, n)| format!("{} {n}", if p.is_empty() { "(not submitted)" } else { p })).collect();
        let _ =
            writeln!(s, "\nConf {}: {} cycles{}", run.conf, run.cycles, if run.stopped_at_limit { " (cycle limit)" } else { "" });
        let _ = writeln!(s, "  Jobs by phase: {}", phases.join(", "));
        let j = &run.job_completion_s;
        let _ = writeln!(
            s,
            "  Job completion time (s): count {}, mean {}, p50 {}, p90 {}, max {}",
            j.count,
            opt(j.mean),
            opt(j.p50),
            opt(j.p90),
            opt(j.max)
        );
        let _ = writeln!(s, "  Makespan (s): {}", opt(run.makespan_s));
        for job in &run.jobs {
            let phase = if job.phase.is_empty() { "(no phase)" } else { &job.phase };
            let when = job.finished_at_ms.map(|t| format!(" at {}", crate::sim::job_report::seconds(t))).unwrap_or_default();
            let _ = writeln!(
                s,
                "  {}: {phase}{when}, retryCount {}; succeeded {}, failed {}, running {}, pending {}",
                job.job, job.retry_count, job.succeeded, job.failed, job.running, job.pending
            );
        }
        for i in &run.issues {
            let _ = writeln!(s, "  issue: {i}");
        }
    }
    s
}

/// The report as pretty JSON.
pub fn render_json(r: &JobsReplayReport) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
}
