//! `basalt replay`: replay a workload over virtual time and print the report. Without an input
//! flag it replays the embedded default (a generated GPU cluster and workload); with
//! `--alibaba-v2023 DIR` the Alibaba GPU trace; with `--cluster PATH…` Kubernetes objects
//! annotated with arrival and duration. Several `--conf` files are replayed side by side.

use super::simulate::read_conf;
use super::{EXIT_BAD_CONF, EXIT_NOTHING_LOADED, EXIT_OK};
use crate::load::DEFAULT_SCHEDULER_NAME;
use crate::replay::alibaba::{self, AlibabaOptions, GangGrouping, QueueAssignment, WindowStart};
use crate::replay::generate::topology::{GangTopology, TopologyTree};
use crate::replay::generate::{self, DefaultSpec};
use crate::replay::{self, kube_yaml, text, timeseries, CyclePolicy, EngineOptions, NamedConf, ReplayOptions, Workload};
use basalt_core::conf::SchedulerConf;
use clap::{Args, ValueEnum};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Exit code: the report was printed but a `--timeseries` or `--plot` file could not be
/// written.
pub const EXIT_WRITE_FAILED: u8 = 3;

/// How `replay` prints its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A table, one column per conf.
    Text,
    /// The report as JSON (`input`, `runs[].results`, `runs[].timings`, …).
    Json,
}

/// Arguments of `basalt replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Re-run the cycles of a flight recording (`basalt scheduler --record DIR`) offline and
    /// check that they decide what was recorded; with one `--conf`, report what that conf
    /// would have decided differently.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["alibaba_v2023", "cluster", "pods", "nodes", "topology", "timeseries", "plot"])]
    pub recording: Option<PathBuf>,
    /// With --recording: only this cycle: its position `#N` or its session number, as the
    /// listing prints them.
    #[arg(long, value_name = "N", requires = "recording")]
    pub cycle: Option<u64>,
    /// Replay Alibaba's cluster-trace-gpu-v2023 from this directory (openb_*.csv).
    #[arg(long, value_name = "DIR", conflicts_with = "cluster")]
    pub alibaba_v2023: Option<PathBuf>,
    /// Trace pod list: a file name in DIR or a path [default: openb_pod_list_default.csv].
    #[arg(long, value_name = "FILE", requires = "alibaba_v2023")]
    pub pod_list: Option<PathBuf>,
    /// Trace node list: `all` (1,523 nodes), `gpu` (the 1,213 GPU nodes), or a file [default: all].
    #[arg(long, value_name = "all|gpu|FILE", requires = "alibaba_v2023")]
    pub node_list: Option<String>,
    /// Queue of each trace job: `qos` (ls, be, burstable, guaranteed), `single` (every job in
    /// `default`) or `round-robin:N` (q0…qN-1) [default: qos].
    #[arg(long, value_name = "MODE", value_parser = QueueAssignment::parse, requires = "alibaba_v2023")]
    pub queues: Option<QueueAssignment>,
    /// Weight of a trace queue (repeatable; others get 1).
    #[arg(long = "queue-weight", value_name = "NAME=WEIGHT", value_parser = alibaba::parse_queue_weight, requires = "alibaba_v2023")]
    pub queue_weights: Vec<(String, i32)>,
    /// Gangs of trace pods: `none`, `same-shape` (consecutive pods with the same creation time
    /// and shape) or `fixed:N` [default: none].
    #[arg(long, value_name = "MODE", value_parser = GangGrouping::parse, requires = "alibaba_v2023")]
    pub gang: Option<GangGrouping>,
    /// Virtual time 0 on the trace clock: `auto` (1st percentile of creation times) or seconds
    /// [default: auto].
    #[arg(long, value_name = "auto|SECONDS", value_parser = WindowStart::parse, requires = "alibaba_v2023")]
    pub start: Option<WindowStart>,
    /// Multiply trace arrival times by this (0.1 = ten times the arrival rate) [default: 1].
    #[arg(long, value_name = "F", requires = "alibaba_v2023")]
    pub arrival_scale: Option<f64>,
    /// Replay Kubernetes objects (YAML/JSON files or directories) whose Pods carry
    /// basalt.dev/arrival-seconds and basalt.dev/duration-seconds annotations; files with
    /// Volcano batch.volcano.sh/v1alpha1 Jobs are replayed by the job controller's logic (Jobs
    /// arrive at basalt.dev/arrival-seconds, their pods run basalt.dev/duration-seconds).
    #[arg(long, num_args = 1.., value_name = "FILE_OR_DIR")]
    pub cluster: Vec<PathBuf>,
    /// With --cluster: schedule only pods whose spec.schedulerName is this.
    #[arg(long, default_value = DEFAULT_SCHEDULER_NAME, value_name = "NAME")]
    pub scheduler_name: String,
    /// Embedded default: pods to generate [default: 3000].
    #[arg(long, value_name = "N", conflicts_with_all = ["alibaba_v2023", "cluster"])]
    pub pods: Option<usize>,
    /// Embedded default: nodes (1–147, keeping the mix) [default: 147; with --topology, one
    /// spine's nodes, any number allowed].
    #[arg(long, value_name = "N", conflicts_with_all = ["alibaba_v2023", "cluster"])]
    pub nodes: Option<usize>,
    /// Embedded default on a network topology tree, `GPUSxNODESxLEAVES` (e.g. 8x16x8: nodes of 8
    /// GPUs, 16 nodes per leaf HyperNode (tier 1), 8 leaves per spine HyperNode (tier 2)):
    /// identical GPU nodes instead of the embedded mix, the HyperNodes over them, and the
    /// gangs' networkTopology from --gang-topology. The report then gives, per conf, the
    /// share of placed gangs inside one HyperNode of each tier.
    #[arg(long, value_name = "GxNxL", value_parser = TopologyTree::parse, conflicts_with_all = ["alibaba_v2023", "cluster"])]
    pub topology: Option<TopologyTree>,
    /// With --topology: the gangs' PodGroup networkTopology: `hard:TIER` (highestTierAllowed
    /// TIER), `soft`, or `none` (topology-blind gangs on the same tree) [default: hard:1].
    #[arg(long, value_name = "hard:TIER|soft|none", value_parser = GangTopology::parse, requires = "topology")]
    pub gang_topology: Option<GangTopology>,
    /// volcano-scheduler.conf to schedule with; repeat to compare confs side by side
    /// (default: Volcano's built-in conf).
    #[arg(long = "conf", value_name = "FILE")]
    pub confs: Vec<PathBuf>,
    /// Refuse a conf (exit 2) that names an action, plugin, plugin argument or flag Basalt does
    /// not implement; without it these are skipped and listed at the top of the report.
    #[arg(long)]
    pub strict: bool,
    /// Seconds of virtual time between scheduling cycles.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS", conflicts_with = "on_events")]
    pub period: f64,
    /// Run a cycle at each arrival or completion instead of every period.
    #[arg(long)]
    pub on_events: bool,
    /// Seed of the embedded default workload and of the scheduler's tie-breaks.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Report format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub output: ReportFormat,
    /// Also write the per-cycle time series as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub timeseries: Option<PathBuf>,
    /// Also draw SVG plots (utilization, queue shares, wait times) into DIR.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Reads the workload the arguments name. Errors: a message for stderr.
fn workload(args: &ReplayArgs) -> Result<Workload, String> {
    if let Some(dir) = &args.alibaba_v2023 {
        let node_list: PathBuf = match args.node_list.as_deref() {
            None | Some("all") => alibaba::ALL_NODE_LIST.into(),
            Some("gpu") => alibaba::GPU_NODE_LIST.into(),
            Some(p) => p.into(),
        };
        let scale = args.arrival_scale.unwrap_or(1.0);
        if !(scale.is_finite() && scale > 0.0) {
            return Err(format!("--arrival-scale must be a number > 0, got {scale}"));
        }
        let opts = AlibabaOptions {
            pod_list: args.pod_list.clone().unwrap_or_else(|| alibaba::DEFAULT_POD_LIST.into()),
            node_list,
            queues: args.queues.unwrap_or_default(),
            queue_weights: args.queue_weights.iter().cloned().collect(),
            gangs: args.gang.unwrap_or_default(),
            start: args.start.unwrap_or_default(),
            arrival_scale: scale,
        };
        return alibaba::import(dir, &opts).map_err(|i| i.to_string());
    }
    if !args.cluster.is_empty() {
        return Ok(kube_yaml::import(&args.cluster, &args.scheduler_name));
    }
    let d = DefaultSpec::default();
    let nodes = match &args.topology {
        Some(t) => args.nodes.unwrap_or(t.spine_nodes()),
        None => args.nodes.unwrap_or(d.nodes),
    };
    Ok(generate::generate(&DefaultSpec {
        seed: args.seed,
        pods: args.pods.unwrap_or(d.pods),
        nodes,
        topology: args.topology,
        gang_topology: args.gang_topology.unwrap_or(d.gang_topology),
    }))
}

/// Labels for the confs: file stems, made unique.
fn confs(paths: &[PathBuf]) -> Result<Vec<NamedConf>, String> {
    if paths.is_empty() {
        return Ok(vec![NamedConf { label: "default".into(), conf: SchedulerConf::default() }]);
    }
    let mut out: Vec<NamedConf> = Vec::with_capacity(paths.len());
    for p in paths {
        let conf = read_conf(p)?;
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("conf").to_string();
        let mut label = stem.clone();
        let mut n = 2;
        while out.iter().any(|c| c.label == label) {
            label = format!("{stem}#{n}");
            n += 1;
        }
        out.push(NamedConf { label, conf });
    }
    Ok(out)
}

/// Whether the `--cluster` files hold a Volcano Job.
fn has_jobs(paths: &[PathBuf], scheduler_name: &str) -> bool {
    let mut cluster = basalt_core::cluster::Cluster::new();
    let opts = crate::load::LoadOptions { scheduler_name: scheduler_name.to_string() };
    !crate::load::load_paths(paths, &mut cluster, &opts).jobs.is_empty()
}

/// The Job path of `--cluster` ([`replay::jobs`]); `--timeseries`, `--plot` and `--on-events`
/// do not apply to it and are refused.
fn replay_jobs(args: &ReplayArgs, confs: &[NamedConf]) -> u8 {
    if args.timeseries.is_some() || args.plot.is_some() || args.on_events {
        eprintln!("error: --timeseries, --plot and --on-events apply to pod replays, not to files with Volcano Jobs");
        return EXIT_BAD_CONF;
    }
    let period_ms = ((args.period * 1000.0).round() as i64).max(1);
    match replay::jobs::replay_jobs(&args.cluster, confs, period_ms, args.seed, &args.scheduler_name) {
        Ok(report) => {
            let rendered = match args.output {
                ReportFormat::Json => replay::jobs::render_json(&report) + "\n",
                ReportFormat::Text => replay::jobs::render_text(&report),
            };
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(rendered.as_bytes()).and_then(|()| stdout.flush());
            EXIT_OK
        }
        Err(msg) => {
            eprintln!("error: {msg}");
            EXIT_NOTHING_LOADED
        }
    }
}

fn write_timeseries(path: &Path, out: &replay::ReplayOutput) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    timeseries::write_csv(std::io::BufWriter::new(file), &out.labelled())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs `basalt replay`; returns the exit code: 0, [`EXIT_NOTHING_LOADED`] (the input is
/// unusable or empty), [`EXIT_BAD_CONF`] (a conf or option is invalid) or
/// [`EXIT_WRITE_FAILED`].
pub fn run(args: &ReplayArgs) -> u8 {
    if let Some(dir) = &args.recording {
        return super::recording::replay(dir, args.cycle, &args.confs, args.output == ReportFormat::Json);
    }
    let confs = match confs(&args.confs) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("error: {msg}");
            return EXIT_BAD_CONF;
        }
    };
    for c in &confs {
        if args.strict {
            if let Err(msg) = crate::sim::strict_check(&c.conf, &format!("conf {}", c.label)) {
                eprintln!("error: {msg}");
                return EXIT_BAD_CONF;
            }
        }
        for n in crate::sim::NotHonouredReport::of(&c.conf, Some(&c.label)) {
            eprintln!("warning: conf {}: {}", c.label, n.message);
        }
    }
    if !(args.period.is_finite() && args.period > 0.0) {
        eprintln!("error: --period must be a number of seconds > 0, got {}", args.period);
        return EXIT_BAD_CONF;
    }
    if !args.cluster.is_empty() && has_jobs(&args.cluster, &args.scheduler_name) {
        return replay_jobs(args, &confs);
    }
    let w = match workload(args) {
        Ok(w) => w,
        Err(msg) => {
            eprintln!("error: {msg}");
            return EXIT_NOTHING_LOADED;
        }
    };
    // The text report lists the input issues itself; on stderr too they would show twice.
    let (nodes, _) = w.setup_counts();
    let nothing = nodes == 0 || w.pod_count() == 0;
    if args.output == ReportFormat::Json || nothing {
        for i in &w.issues {
            eprintln!("warning: {i}");
        }
    }
    if nothing {
        eprintln!("error: nothing to replay: {nodes} nodes and {} pods were loaded", w.pod_count());
        return EXIT_NOTHING_LOADED;
    }
    let policy =
        if args.on_events { CyclePolicy::OnEvents } else { CyclePolicy::Period(((args.period * 1000.0).round() as i64).max(1)) };
    let opts = ReplayOptions { engine: EngineOptions { policy, seed: args.seed }, progress: !args.quiet };
    let out = replay::replay(&w, &confs, &opts);
    let rendered = match args.output {
        ReportFormat::Json => out.report.to_json() + "\n",
        ReportFormat::Text => text::render(&out.report),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(rendered.as_bytes()).and_then(|()| stdout.flush());
    let mut code = EXIT_OK;
    if let Some(p) = &args.timeseries {
        match write_timeseries(p, &out) {
            Ok(()) => eprintln!("wrote {}", p.display()),
            Err(msg) => {
                eprintln!("error: {msg}");
                code = EXIT_WRITE_FAILED;
            }
        }
    }
    if let Some(dir) = &args.plot {
        match replay::plot::write_plots(dir, &out.labelled()) {
            Ok(files) => {
                for f in files {
                    eprintln!("wrote {}", f.display());
                }
            }
            Err(msg) => {
                eprintln!("error: {msg}");
                code = EXIT_WRITE_FAILED;
            }
        }
    }
    code
}
