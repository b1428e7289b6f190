//! The simulated cluster behind `basalt simulate`: a core [`Cluster`] loaded from files, run
//! for N scheduling cycles, each cycle's [`Decisions`] applied back as [`Delta`]s the way a
//! real cluster would react: a bound pod runs from the next cycle on, an evicted pod is gone in
//! the next cycle (by default; with [`SimOptions::termination_grace_ms`] it is terminating —
//! Releasing, with Volcano's `DisruptionTarget` condition — for that much virtual time first), a
//! pod that arrives terminating stays terminating for the whole run ([`lifecycle`], the
//! conformance contract); a preemptor pipelined where victims were
//! evicted carries `status.nominatedNodeName`; a PodGroup takes the phase and conditions the
//! scheduler wrote.
//!
//! Volcano Jobs in the files are run by the job controller's logic beside the scheduler
//! ([`jobs`], with the simulated kubelet of [`kubelet`]): cycle `k` (1-based) happens at
//! `(k − 1) ×` [`SimOptions::schedule_period_ms`] of virtual time, and the simulation runs
//! until every Job has finished (at most [`SimOptions::until_jobs_finished`] cycles).
//!
//! Deterministic: cycle `i` (0-based) runs with seed `seed + i`, cycle number `i + 1` and at
//! a simulated time: without Jobs the one [`SimClock`] gives it (the latest timestamp in the
//! input, then one second per cycle, Volcano's default `--schedule-period`); with Jobs the
//! Jobs' virtual time (`i` periods from the Unix epoch, the clock the controller and kubelet
//! stamp their objects with). Nothing else varies. A pod bound in a cycle is scheduled at that
//! cycle's time (`start_ms`). It refuses threads and I/O beyond reading the input files; the wall
//! clock is read only for [`SimTimings`], which are kept apart from the decisions
//! ([`run_timed`]) and never feed back into them.

pub mod cronjobs;
pub mod job_report;
pub mod jobs;
pub mod kubelet;
pub mod lifecycle;
pub mod report;
pub mod startup;
pub mod timing;
pub mod topology_report;
pub mod volumes;

use crate::load::{self, LoadOptions, LoadReport};
use basalt_core::cluster::{Cluster, Delta};
use basalt_core::conf::SchedulerConf;
use basalt_core::decision::Decisions;
use basalt_core::model::PodPhase;
use basalt_core::scheduler::CycleOptions;
pub use report::{
    render_json, render_json_with_timings, render_text, render_text_with_timings, strict_check, CycleReport, NotHonouredReport,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;
pub use timing::SimTimings;
use timing::{ms_since, timed_cycle, CycleTimings};

/// Cycles a simulation with Jobs runs at most by default, waiting for them to finish.
pub const DEFAULT_MAX_JOB_CYCLES: u64 = 1000;

/// Virtual time between two cycles by default, ms (Volcano's `--schedule-period` default, 1 s).
pub const DEFAULT_SCHEDULE_PERIOD_MS: i64 = 1000;

/// How to run a simulation.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Number of scheduling cycles (0 runs none), unless the input has Jobs and
    /// [`SimOptions::until_jobs_finished`] is set.
    pub cycles: u64,
    /// With Jobs in the input: run until every Job is Completed, Failed or Terminated, at most
    /// this many cycles (`None`: run [`SimOptions::cycles`] exactly).
    pub until_jobs_finished: Option<u64>,
    /// Virtual time per cycle, ms: a pod's run time and a policy's `timeout` are counted on it.
    pub schedule_period_ms: i64,
    /// Base seed; cycle `i` uses `seed + i` (wrapping).
    pub seed: u64,
    /// The scheduler name pods must carry to be scheduled (default `volcano`).
    pub scheduler_name: String,
    /// Termination grace of pods that start terminating during the run (evicted, or deleted
    /// by the job controller), ms of virtual time (`--termination-grace`, default 0: gone in
    /// the next cycle); see [`lifecycle`].
    pub termination_grace_ms: i64,
    /// Whether CronJobs in the input make Jobs ([`cronjobs`]; default true). `basalt replay`
    /// sets it false: a replay runs until its Jobs finish, and a CronJob never does; each
    /// CronJob is then reported as not run.
    pub run_cron_jobs: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            cycles: 1,
            until_jobs_finished: Some(DEFAULT_MAX_JOB_CYCLES),
            schedule_period_ms: DEFAULT_SCHEDULE_PERIOD_MS,
            seed: 0,
            scheduler_name: load::DEFAULT_SCHEDULER_NAME.into(),
            termination_grace_ms: 0,
            run_cron_jobs: true,
        }
    }
}

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// No object at all could be loaded from the given paths; `load` holds the issues.
    #[error("nothing could be loaded from {paths}")]
    NothingLoaded {
        /// The paths, joined with spaces.
        paths: String,
        /// What the load found, issues included.
        load: LoadReport,
    },
}

/// Object counts of the loaded cluster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClusterCounts {
    /// Nodes.
    pub nodes: usize,
    /// Pods.
    pub pods: usize,
    /// PodGroups.
    pub pod_groups: usize,
    /// Queues.
    pub queues: usize,
    /// Volcano Jobs.
    pub jobs: usize,
}

/// How the Jobs of a simulation ran (`--output json`: key `jobsRun`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobsRun {
    /// Virtual time per cycle, ms.
    pub schedule_period_ms: i64,
    /// Cycles run.
    pub cycles: u64,
    /// Jobs Completed, Failed or Terminated.
    pub finished: usize,
    /// Jobs.
    pub total: usize,
    /// The cycle limit, when the run stopped at it with Jobs unfinished or CronJobs that would
    /// make more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_at_limit: Option<u64>,
    /// Whether a CronJob would still make Jobs (a run with CronJobs and no `--cycles` then
    /// runs to the cycle limit).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cron_jobs_pending: bool,
}

/// Everything a simulation produced; [`render_json`] and [`render_text`] print it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimOutput {
    /// One report per cycle, in order.
    pub cycles: Vec<CycleReport>,
    /// `ns/pod` → `ns/podgroup` for every loaded pod with a `scheduling.k8s.io/group-name`.
    pub pod_group_of_pod: BTreeMap<String, String>,
    /// What the load did, issues included.
    pub load: LoadReport,
    /// Decisions the simulated cluster refused to apply (`cycle N: message`).
    pub apply_issues: Vec<String>,
    /// What the startup step changed or found ([`startup::prepare`]).
    pub startup_notes: Vec<String>,
    /// Counts of the cluster as loaded.
    pub counts: ClusterCounts,
    /// The scheduler name pods had to carry.
    pub scheduler_name: String,
    /// What of the conf Basalt does not honour (listed first in both outputs).
    pub not_honoured: Vec<NotHonouredReport>,
    /// Every Volcano Job at the end, in load order (empty without Jobs).
    pub jobs: Vec<jobs::JobReport>,
    /// How the Jobs ran (`None` without Jobs or CronJobs).
    pub jobs_run: Option<JobsRun>,
    /// Every CronJob at the end, in load order (empty without CronJobs).
    pub cron_jobs: Vec<cronjobs::CronJobReport>,
    /// Where each PodGroup with a network topology or sub-groups was placed (text output).
    pub topology_placements: Vec<topology_report::Placement>,
}

impl SimOutput {
    /// Every issue as one line: load issues (`FILE doc N Kind ns/name: message`), then apply
    /// issues.
    pub fn issue_lines(&self) -> Vec<String> {
        self.load
            .issues
            .iter()
            .map(ToString::to_string)
            .chain(self.startup_notes.iter().cloned())
            .chain(self.apply_issues.iter().cloned())
            .collect()
    }

    /// [`SimOutput::issue_lines`] for people: load issues grouped by kind and message
    /// ([`load::grouped_issue_lines`]), then the startup notes and apply issues.
    pub fn grouped_issue_lines(&self) -> Vec<String> {
        load::grouped_issue_lines(&self.load.issues)
            .into_iter()
            .chain(self.startup_notes.iter().cloned())
            .chain(self.apply_issues.iter().cloned())
            .collect()
    }
}

/// The simulated clock of `basalt simulate`: cycle `i` (0-based) runs at `start_ms + i ×
/// period_ms`, ms since the Unix epoch. The start is the latest timestamp in the input (object
/// creation times, pods' scheduled times), so "now" is never before what the input records; an
/// input without any timestamp has no clock (`now_ms` 0 for every cycle: time-based rules such
/// as `cdp`'s cooldown are off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimClock {
    /// Time of the first cycle (0 = no clock).
    pub start_ms: i64,
    /// Time between cycles.
    pub period_ms: i64,
}

/// Time between simulated cycles: Volcano's default `--schedule-period` (1 s).
pub const SIM_PERIOD_MS: i64 = 1000;

impl SimClock {
    /// The clock of `cluster` as loaded (see the type's docs).
    pub fn of(cluster: &Cluster) -> Self {
        let pods = cluster.pods().flat_map(|(_, p)| [p.spec.creation_ms, p.spec.start_ms]);
        let groups = cluster.pod_groups().map(|(_, g)| g.spec.creation_ms);
        let queues = cluster.queues().map(|q| q.spec.creation_ms);
        let start_ms = pods.chain(groups).chain(queues).max().unwrap_or(0).max(0);
        SimClock { start_ms, period_ms: SIM_PERIOD_MS }
    }

    /// "Now" of cycle `i` (0-based), or 0 without a clock.
    pub fn now_ms(&self, i: u64) -> i64 {
        if self.start_ms == 0 {
            return 0;
        }
        self.start_ms.saturating_add(self.period_ms.saturating_mul(i.min(i64::MAX as u64) as i64))
    }
}

/// An in-memory cluster that schedules itself, one cycle per [`Simulator::step`].
#[derive(Debug)]
pub struct Simulator {
    cluster: Cluster,
    conf: SchedulerConf,
    seed: u64,
    clock: SimClock,
    cycles_run: u64,
    jobs: Option<jobs::JobWorld>,
    crons: Option<cronjobs::CronWorld>,
    period_ms: i64,
    lifecycle: lifecycle::Lifecycle,
}

impl Simulator {
    /// A simulator over `cluster`, scheduling with `conf`, seeded with `seed`, on the clock
    /// [`SimClock::of`] the cluster; pods that start terminating are gone in the next cycle
    /// ([`Simulator::with_termination_grace`] changes that).
    pub fn new(cluster: Cluster, conf: SchedulerConf, seed: u64) -> Self {
        let clock = SimClock::of(&cluster);
        let lifecycle = lifecycle::Lifecycle::new(&cluster, 0);
        Simulator {
            cluster,
            conf,
            seed,
            clock,
            cycles_run: 0,
            jobs: None,
            crons: None,
            period_ms: DEFAULT_SCHEDULE_PERIOD_MS,
            lifecycle,
        }
    }

    /// Keeps pods that start terminating (evicted, deleted by the controller) for `grace_ms` of
    /// virtual time before they are gone ([`lifecycle`]); pods that arrived terminating stay.
    pub fn with_termination_grace(mut self, grace_ms: i64) -> Self {
        self.lifecycle = lifecycle::Lifecycle::new(&self.cluster, grace_ms);
        self
    }

    /// Runs `jobs` with the job controller's logic beside the scheduler, a cycle every
    /// `period_ms` of virtual time (see [`jobs`] for the order within a step).
    pub fn with_jobs(mut self, jobs: jobs::JobWorld, period_ms: i64) -> Self {
        self.jobs = Some(jobs);
        self.period_ms = period_ms.max(1);
        self
    }

    /// Runs `crons` with the CronJob controller's rules, making their Jobs in the job world
    /// (call after [`Simulator::with_jobs`]; without a job world the CronJobs make nothing).
    pub fn with_cron_jobs(mut self, crons: cronjobs::CronWorld) -> Self {
        self.crons = Some(crons);
        self
    }

    /// The CronJobs, when there are any.
    pub fn cron_jobs(&self) -> Option<&cronjobs::CronWorld> {
        self.crons.as_ref()
    }

    /// The Jobs, when there are any.
    pub fn jobs(&self) -> Option<&jobs::JobWorld> {
        self.jobs.as_ref()
    }

    /// The cluster as it stands (after every applied cycle).
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// Cycles run so far.
    pub fn cycles_run(&self) -> u64 {
        self.cycles_run
    }

    /// Runs the next cycle, reports it with names resolved, then applies its decisions.
    /// Returns the report and the decisions the cluster refused (`cycle N: message`; none are
    /// expected).
    pub fn step(&mut self) -> (CycleReport, Vec<String>) {
        let (report, refused, _) = self.step_timed();
        (report, refused)
    }

    /// [`Simulator::step`], also returning the wall time of the cycle's phases (the decisions
    /// are the same).
    pub fn step_timed(&mut self) -> (CycleReport, Vec<String>, CycleTimings) {
        let i = self.cycles_run;
        let t_ms = i64::try_from(i).unwrap_or(i64::MAX).saturating_mul(self.period_ms);
        let mut transitions = Vec::new();
        if let Some(j) = self.jobs.as_mut() {
            j.kubelet(&mut self.cluster, i + 1, t_ms);
            if let Some(c) = self.crons.as_mut() {
                c.step(j, &mut self.cluster, i + 1, t_ms);
            }
            transitions = j.control(&mut self.cluster, i + 1, t_ms);
        }
        let now_ms = if self.jobs.is_some() { t_ms } else { self.clock.now_ms(i) };
        let opts = CycleOptions { seed: self.seed.wrapping_add(i), cycle: i + 1, now_ms };
        let (decisions, timings) = timed_cycle(&self.cluster, &self.conf, &opts);
        let mut report = CycleReport::from_decisions(&self.cluster, &decisions);
        report.jobs = transitions;
        let deltas = deltas_for(&self.cluster, &decisions, opts.now_ms);
        let mut refused = Vec::new();
        for d in deltas {
            if let Err(e) = self.cluster.apply(d) {
                refused.push(format!("cycle {}: {e}", i + 1));
            }
        }
        let next_ms = t_ms.saturating_add(self.period_ms);
        for d in self.lifecycle.finish_step(&self.cluster, t_ms, next_ms) {
            if let Err(e) = self.cluster.apply(d) {
                refused.push(format!("cycle {}: {e}", i + 1));
            }
        }
        if let Some(j) = self.jobs.as_mut() {
            j.observe(&self.cluster, i + 1, t_ms);
        }
        self.cycles_run += 1;
        (report, refused, timings)
    }
}

/// The changes a cluster makes in answer to `d`: the claims of its volume bindings are bound
/// ([`volumes::bind_volumes`]); bound pods get their node and run; pods whose queue admitted
/// them lose Volcano's scheduling gate (their only gate); evicted
/// pods start terminating (deletion timestamp and `DisruptionTarget`, as Volcano's evict writes
/// them; volcano-behaviour.md §1.6; [`lifecycle::Lifecycle`] then decides when they are gone); a
/// pod pipelined where victims were evicted for it gets
/// `status.nominatedNodeName`; PodGroups take their new phase and conditions; a cycle in which
/// the `rescheduling` strategies ran leaves [`Delta::Rescheduled`] (last), so their `interval`
/// counts from it; the CPUs `numa-aware` assigned the bound pods are kept on their nodes
/// ([`Delta::PodNumaAssumed`], after the binds). A bound pod is scheduled at `now_ms` (its `start_ms`; left as it was when
/// `now_ms` is 0). All ids are resolved before anything changes.
pub fn deltas_for(cluster: &Cluster, d: &Decisions, now_ms: i64) -> Vec<Delta> {
    let mut out = Vec::with_capacity(d.binds.len() + d.evictions.len() + d.pod_groups.len());
    // The PV controller binds the claims before the pods' Bindings land.
    out.extend(volumes::bind_volumes(cluster, &d.volume_bindings));
    for b in &d.binds {
        if let (Some(p), Some(n)) = (cluster.pod(b.pod), cluster.node(b.node)) {
            let mut spec = p.spec.bound(&n.spec.name, &b.annotations);
            spec.phase = PodPhase::Running;
            if now_ms > 0 {
                spec.start_ms = now_ms;
            }
            out.push(Delta::Pod(spec));
            // deviceshare.NodeLockEnable: the node carries the lock from now on (no device
            // plugin in the simulator releases it; it expires after 5 minutes).
            if let Some(lock) = b.node_lock.as_ref() {
                let mut node = n.spec.clone();
                node.devices.locks.retain(|l| &l.name != lock);
                node.devices.locks.push(basalt_core::model::NodeLock { name: lock.clone(), since_ms: Some(now_ms) });
                out.push(Delta::Node(node));
            }
        }
    }
    // The gate-removal workers' patch: the pod's one gate, Volcano's, is gone; the next cycle
    // schedules it like any pod.
    for g in &d.gate_removals {
        if let Some(p) = cluster.pod(g.pod) {
            let mut spec = p.spec.clone();
            spec.scheduling_gated = false;
            spec.volcano_gate_only = false;
            out.push(Delta::Pod(spec));
        }
    }
    for e in &d.evictions {
        if let Some(p) = cluster.pod(e.pod) {
            if p.spec.deleting {
                continue;
            }
            let mut spec = p.spec.clone();
            spec.deleting = true;
            spec.disruption_target = true;
            out.push(Delta::Pod(spec));
        }
    }
    for x in d.pipelined.iter().filter(|x| x.nominated) {
        if let (Some(p), Some(n)) = (cluster.pod(x.pod), cluster.node(x.node)) {
            if p.spec.nominated_node_name != n.spec.name {
                let mut spec = p.spec.clone();
                spec.nominated_node_name = n.spec.name.clone();
                out.push(Delta::Pod(spec));
            }
        }
    }
    for s in &d.pod_groups {
        if let Some(g) = cluster.pod_group(s.group) {
            let mut spec = g.spec.clone();
            spec.phase = s.phase;
            spec.conditions = s.conditions.clone();
            out.push(Delta::PodGroup(spec));
        }
    }
    // numa-aware's CPUs for the pods just bound, kept until the node's Numatopology lists them
    // (no resource exporter runs in the simulator: until the pods end or are deleted).
    out.extend(d.numa_deltas(cluster));
    if let Some(at_ms) = d.rescheduled_ms {
        out.push(Delta::Rescheduled { at_ms });
    }
    out
}

/// `ns/pod` → `ns/podgroup` for every pod of `cluster` that names a PodGroup.
pub fn pod_group_of_pod(cluster: &Cluster) -> BTreeMap<String, String> {
    cluster
        .pods()
        .filter_map(|(_, p)| {
            p.spec.group.as_ref().map(|g| (format!("{}/{}", p.spec.namespace, p.spec.name), format!("{}/{g}", p.spec.namespace)))
        })
        .collect()
}

/// Simulates an already loaded `cluster` for `opts.cycles` cycles. `load` is carried into the
/// output for reporting.
pub fn simulate(cluster: Cluster, conf: &SchedulerConf, opts: &SimOptions, load: LoadReport) -> SimOutput {
    simulate_timed(cluster, conf, opts, load).0
}

/// [`simulate`], also returning the wall time of the startup step and of every cycle's phases
/// (`load_ms` is left 0: the caller loaded the cluster).
pub fn simulate_timed(
    mut cluster: Cluster,
    conf: &SchedulerConf,
    opts: &SimOptions,
    load: LoadReport,
) -> (SimOutput, SimTimings) {
    let mut timings = SimTimings::default();
    let (nodes, pods, pod_groups, queues) = cluster.counts();
    let world = jobs::JobWorld::new(&load.jobs);
    let crons = if opts.run_cron_jobs { cronjobs::CronWorld::new(&load.cron_jobs) } else { cronjobs::CronWorld::default() };
    let crons_not_run: Vec<String> = if opts.run_cron_jobs {
        Vec::new()
    } else {
        load.cron_jobs
            .iter()
            .map(|c| {
                let m = &c.cron_job.metadata;
                let (ns, name) = (m.namespace.as_deref().unwrap_or_default(), m.name.as_deref().unwrap_or_default());
                format!("note: CronJob {ns}/{name}: not run by a replay (basalt simulate runs CronJobs)")
            })
            .collect()
    };
    let job_count = load.jobs.len();
    let t = Instant::now();
    let topology = topology_report::TopologyInput::of(&cluster);
    let startup_notes =
        startup::prepare(&mut cluster, &conf.options.default_queue, &opts.scheduler_name, startup::hierarchical(conf));
    let mut out = SimOutput {
        pod_group_of_pod: pod_group_of_pod(&cluster),
        load,
        counts: ClusterCounts { nodes, pods, pod_groups, queues, jobs: job_count },
        scheduler_name: opts.scheduler_name.clone(),
        startup_notes,
        not_honoured: NotHonouredReport::of(conf, None),
        apply_issues: crons_not_run,
        ..Default::default()
    };
    timings.startup_ms = ms_since(t);
    let has_jobs = !world.is_empty() || !crons.is_empty();
    let has_crons = !crons.is_empty();
    let mut sim = Simulator::new(cluster, conf.clone(), opts.seed).with_termination_grace(opts.termination_grace_ms);
    if has_jobs {
        sim = sim.with_jobs(world, opts.schedule_period_ms);
    }
    if has_crons {
        sim = sim.with_cron_jobs(crons);
    }
    let limit = match opts.until_jobs_finished {
        Some(max) if has_jobs => max,
        _ => opts.cycles,
    };
    let until_finished = has_jobs && opts.until_jobs_finished.is_some();
    while sim.cycles_run() < limit {
        let crons_done = !sim.cron_jobs().is_some_and(cronjobs::CronWorld::may_make_jobs);
        if until_finished && crons_done && sim.jobs().is_some_and(jobs::JobWorld::all_finished) {
            break;
        }
        let (report, refused, cycle) = sim.step_timed();
        out.cycles.push(report);
        out.apply_issues.extend(refused);
        timings.cycles.push(cycle);
    }
    if let Some(j) = sim.jobs() {
        let (finished, total) = j.finished_count();
        let crons_pending = sim.cron_jobs().is_some_and(cronjobs::CronWorld::may_make_jobs);
        out.jobs = j.reports();
        out.jobs_run = Some(JobsRun {
            schedule_period_ms: opts.schedule_period_ms.max(1),
            cycles: sim.cycles_run(),
            finished,
            total,
            stopped_at_limit: (until_finished && (finished < total || crons_pending) && sim.cycles_run() >= limit)
                .then_some(limit),
            cron_jobs_pending: crons_pending,
        });
        out.apply_issues.extend(j.issues().iter().cloned());
        if let Some(c) = sim.cron_jobs() {
            out.cron_jobs = c.reports();
            out.apply_issues.extend(c.issues().iter().cloned());
        }
        out.pod_group_of_pod.extend(j.pod_group_of_pod().iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let binds: BTreeMap<String, String> =
        out.cycles.iter().flat_map(|c| c.binds.iter().map(|b| (b.pod.clone(), b.node.clone()))).collect();
    out.topology_placements = topology.placements(&binds, &out.pod_group_of_pod);
    (out, timings)
}

/// Loads `paths` (files or directories, see [`load::load_paths`]) and simulates them.
///
/// Errors: [`SimError::NothingLoaded`] when not a single object could be loaded. Issues with
/// individual files, documents or objects do not fail the run; they are in
/// [`SimOutput::load`].
pub fn run(paths: &[PathBuf], conf: &SchedulerConf, opts: &SimOptions) -> Result<SimOutput, SimError> {
    run_timed(paths, conf, opts).map(|(out, _)| out)
}

/// [`run`], also returning how long loading, startup and each cycle's phases took. The
/// [`SimOutput`] is the one [`run`] returns. Errors as [`run`].
pub fn run_timed(paths: &[PathBuf], conf: &SchedulerConf, opts: &SimOptions) -> Result<(SimOutput, SimTimings), SimError> {
    let mut cluster = Cluster::new();
    let t = Instant::now();
    let load = load::load_paths(paths, &mut cluster, &LoadOptions { scheduler_name: opts.scheduler_name.clone() });
    let load_ms = ms_since(t);
    if load.loaded == 0 {
        let paths = paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ");
        return Err(SimError::NothingLoaded { paths, load });
    }
    let (out, mut timings) = simulate_timed(cluster, conf, opts, load);
    timings.load_ms = load_ms;
    Ok((out, timings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::decision::{Bind, Eviction, PodGroupStatus};
    use basalt_core::model::{NodeSpec, PodGroupCondition, PodGroupPhase, PodGroupSpec, PodSpec};

    fn cluster() -> Cluster {
        let mut c = Cluster::new();
        let deltas = [
            Delta::Node(NodeSpec { name: "n1".into(), ready: true, ..Default::default() }),
            Delta::PodGroup(PodGroupSpec { namespace: "ns".into(), name: "pg".into(), min_member: 1, ..Default::default() }),
            Delta::Pod(PodSpec { namespace: "ns".into(), name: "a".into(), group: Some("pg".into()), ..Default::default() }),
            Delta::Pod(PodSpec {
                namespace: "ns".into(),
                name: "b".into(),
                node_name: "n1".into(),
                phase: PodPhase::Running,
                ..Default::default()
            }),
        ];
        for d in deltas {
            c.apply(d).unwrap();
        }
        c
    }

    #[test]
    fn decisions_become_deltas() {
        let mut c = cluster();
        let a = c.pod_id("ns", "a").unwrap();
        let b = c.pod_id("ns", "b").unwrap();
        let n1 = c.node_id("n1").unwrap();
        let pg = c.pod_group_id("ns", "pg").unwrap();
        let cond = PodGroupCondition {
            kind: "Scheduled".into(),
            status: "True".into(),
            transition_id: "1".into(),
            ..Default::default()
        };
        let d = Decisions {
            binds: vec![Bind::new(a, n1)],
            evictions: vec![Eviction { pod: b, reason: "preempt".into() }],
            pod_groups: vec![PodGroupStatus {
                group: pg,
                phase: PodGroupPhase::Running,
                conditions: vec![cond.clone()],
                running: 1,
                succeeded: 0,
                failed: 0,
                changed: true,
            }],
            ..Default::default()
        };
        let report = CycleReport::from_decisions(&c, &d);
        assert_eq!(
            report.binds,
            vec![report::PodNode { pod: "ns/a".into(), node: "n1".into(), annotations: Default::default() }]
        );
        assert_eq!(report.evictions[0].pod, "ns/b");
        assert_eq!(report.pod_groups[0].pod_group, "ns/pg");
        assert_eq!(report.pod_groups[0].phase, "Running");
        for delta in deltas_for(&c, &d, 0) {
            c.apply(delta).unwrap();
        }
        let a = c.pod(c.pod_id("ns", "a").unwrap()).unwrap();
        assert_eq!((a.spec.node_name.as_str(), a.spec.phase), ("n1", PodPhase::Running));
        let b = &c.pod(c.pod_id("ns", "b").unwrap()).unwrap().spec;
        assert!(b.deleting && b.disruption_target, "an evicted pod starts terminating");
        let g = c.pod_group(c.pod_group_id("ns", "pg").unwrap()).unwrap();
        assert_eq!((g.spec.phase, g.spec.conditions.clone()), (PodGroupPhase::Running, vec![cond]));
        // Without a termination grace the lifecycle deletes it before the next cycle.
        let mut l = lifecycle::Lifecycle::new(&cluster(), 0);
        for delta in l.finish_step(&c, 0, 1000) {
            c.apply(delta).unwrap();
        }
        assert!(c.pod_id("ns", "b").is_none(), "an evicted pod is gone in the next cycle");
    }

    /// A cycle in which the rescheduling strategies ran leaves its time on the cluster, so the
    /// next cycles count their `interval` from it (volcano-behaviour.md §3).
    #[test]
    fn rescheduling_time_becomes_a_delta() {
        let mut c = cluster();
        assert!(!deltas_for(&c, &Decisions::default(), 5).iter().any(|d| matches!(d, Delta::Rescheduled { .. })));
        let d = Decisions { rescheduled_ms: Some(1_700_000_000_000), ..Default::default() };
        for delta in deltas_for(&c, &d, 1_700_000_000_000) {
            c.apply(delta).unwrap();
        }
        assert_eq!(c.rescheduled_ms(), Some(1_700_000_000_000));
    }

    #[test]
    fn json_rendering_follows_the_contract() {
        let out = SimOutput {
            cycles: vec![CycleReport {
                binds: vec![report::PodNode { pod: "ns/a".into(), node: "n1".into(), annotations: Default::default() }],
                pod_groups: vec![report::PodGroupReport {
                    pod_group: "ns/pg".into(),
                    phase: "Inqueue".into(),
                    conditions: vec![report::ConditionReport {
                        kind: "Unschedulable".into(),
                        status: "True".into(),
                        reason: "NotEnoughResources".into(),
                        message: "m".into(),
                        transition_id: "1".into(),
                    }],
                    running: 1,
                    succeeded: 2,
                    failed: 0,
                }],
                ..Default::default()
            }],
            pod_group_of_pod: [("ns/a".to_string(), "ns/pg".to_string())].into(),
            ..Default::default()
        };
        let v: serde_json::Value = serde_json::from_str(&render_json(&out)).unwrap();
        let want = serde_json::json!({
            "cycles": [{
                "binds": [{"pod": "ns/a", "node": "n1"}],
                "evictions": [],
                "pipelined": [],
                "podGroups": [{"podGroup": "ns/pg", "phase": "Inqueue", "conditions": [
                    {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": "m", "transitionID": "1"}
                ], "running": 1, "succeeded": 2, "failed": 0}],
                "unschedulable": [],
                "queues": [],
                "events": [],
                "skipped": []
            }],
            "podGroupOfPod": {"ns/a": "ns/pg"},
            "issues": [],
            "notHonoured": []
        });
        assert_eq!(v, want);
        let text = render_text(&out);
        assert!(text.contains("n1: ns/a") && text.contains("ns/pg: Inqueue"), "{text}");
    }
}
