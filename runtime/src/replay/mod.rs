//! `basalt replay`: a workload replayed over virtual time on an in-memory cluster, scheduled by
//! the core exactly as `basalt simulate` schedules, with a report of what the scheduler did.
//!
//! * Inputs, each into a [`Workload`]: the embedded default generator ([`generate`]), Alibaba's
//!   GPU v2023 trace ([`alibaba`]) and Kubernetes objects with arrival/duration annotations
//!   ([`kube_yaml`]). [`shapes`] maps trace units to the core model for the first two. Files
//!   with Volcano Jobs take the Job path instead ([`jobs`]: the simulator's job controller).
//! * The clock ([`clock`], [`engine`]): arrivals and completions drive cycles, every period or
//!   on events; bound pods run for their duration and free their resources.
//! * Results ([`record`] → [`metrics`], [`fairness`], [`topology`]) → [`report`], printed as a table
//!   ([`text`]) or JSON, with a CSV time series ([`timeseries`]) and SVG plots ([`plot`]).
//!
//! One replay per conf, in order, each from the same workload and seed; the reports sit side by
//! side. Same input, confs and seed → same `results` in every run report; only `timings` vary.

pub mod alibaba;
pub mod clock;
mod csv_rows;
pub mod engine;
pub mod fairness;
pub mod generate;
pub mod jobs;
pub mod kube_yaml;
pub mod metrics;
pub mod plot;
pub mod progress;
pub mod record;
pub mod report;
pub mod shapes;
pub mod text;
pub mod timeseries;
pub mod topology;
pub mod workload;

pub use clock::CyclePolicy;
pub use engine::{Engine, EngineOptions};
pub use record::RunRecord;
pub use report::Report;
pub use workload::{InputIssue, Workload};

use basalt_core::conf::SchedulerConf;
use std::time::Instant;

/// A conf and the label it is reported under.
#[derive(Clone, Debug)]
pub struct NamedConf {
    /// Column label (`default`, or the conf file's stem).
    pub label: String,
    /// The conf.
    pub conf: SchedulerConf,
}

/// How to replay.
#[derive(Clone, Copy, Debug)]
pub struct ReplayOptions {
    /// Clock and seed.
    pub engine: EngineOptions,
    /// Show a progress bar on stderr (when it is a terminal).
    pub progress: bool,
}

/// The report and the raw records (for the time series and plots), one record per conf.
#[derive(Clone, Debug)]
pub struct ReplayOutput {
    /// The report.
    pub report: Report,
    /// Raw records, in conf order.
    pub records: Vec<RunRecord>,
}

impl ReplayOutput {
    /// (label, record) pairs, in conf order.
    pub fn labelled(&self) -> Vec<(&str, &RunRecord)> {
        self.report.runs.iter().map(|r| r.conf.as_str()).zip(self.records.iter()).collect()
    }
}

/// Replays `w` under one conf; returns the record and the wall time it took, s.
pub fn replay_one(w: &Workload, conf: &NamedConf, opts: &ReplayOptions) -> (RunRecord, f64) {
    let started = Instant::now();
    let bar = progress::Progress::new(opts.progress, &conf.label);
    let mut engine = Engine::new(w, conf.conf.clone(), opts.engine);
    let mut steps = 0u64;
    while engine.step() {
        steps += 1;
        if steps.is_multiple_of(64) {
            let (done, total) = engine.progress();
            bar.update(done, total, engine.now(), engine.pending());
        }
    }
    bar.finish();
    (engine.finish(), started.elapsed().as_secs_f64())
}

/// The input part of the report.
pub fn input_report(w: &Workload) -> report::InputReport {
    let (nodes, queues) = w.setup_counts();
    report::InputReport {
        name: w.name.clone(),
        nodes,
        queues,
        pods: w.pod_count(),
        jobs: w.jobs.len(),
        gangs: w.jobs.iter().filter(|j| j.tasks.len() > 1).count(),
        notes: w.notes.clone(),
        issues: w.issues.iter().map(ToString::to_string).collect(),
        skipped: w.skipped,
    }
}

/// Notes that apply to every replay (what each conf leaves unhonoured is in
/// [`Report::not_honoured`]).
pub fn standing_notes() -> Vec<String> {
    vec!["GPU shares are packed per node, not per device (a node's GPU thousandths are one pool).".to_string()]
}

/// Replays `w` under each conf in turn and builds the report.
pub fn replay(w: &Workload, confs: &[NamedConf], opts: &ReplayOptions) -> ReplayOutput {
    let mut runs = Vec::with_capacity(confs.len());
    let mut records = Vec::with_capacity(confs.len());
    for c in confs {
        let (rec, wall) = replay_one(w, c, opts);
        let mut results = metrics::results(&rec);
        results.topology = topology::shares(w, &rec);
        runs.push(report::RunReport { conf: c.label.clone(), results, timings: metrics::timings(&rec, wall) });
        records.push(rec);
    }
    let report = Report {
        not_honoured: confs.iter().flat_map(|c| crate::sim::NotHonouredReport::of(&c.conf, Some(&c.label))).collect(),
        input: input_report(w),
        cycle_policy: opts.engine.policy.describe(),
        seed: opts.engine.seed,
        runs,
        notes: standing_notes(),
    };
    ReplayOutput { report, records }
}
