//! `basalt simulate`: load a cluster from files, run scheduling cycles in memory, print the
//! decisions as the conformance JSON (`--output json`) or a readable summary (`--output text`),
//! each with the wall-clock timings of loading and of every cycle's phases (JSON: the separate
//! `timings` key). Issues are printed once: in the text report, or on stderr beside JSON.

use super::feature_gates::{FeatureGates, SCHEDULING_GATES_QUEUE_ADMISSION};
use super::{EXIT_BAD_CONF, EXIT_NOTHING_LOADED, EXIT_OK};
use crate::load::DEFAULT_SCHEDULER_NAME;
use crate::sim::{self, SimError, SimOptions};
use basalt_core::conf::SchedulerConf;
use clap::{Args, ValueEnum};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// How `simulate` prints its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The JSON object of the conformance contract.
    Json,
    /// A readable summary.
    Text,
}

/// Arguments of `basalt simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Cluster files or directories (YAML/JSON: Nodes, Pods, PodGroups, Queues,
    /// PriorityClasses, PodDisruptionBudgets, ResourceQuotas, PersistentVolumeClaims,
    /// PersistentVolumes, StorageClasses, CSINodes, HyperNodes, NodeShards, Numatopologies,
    /// Volcano batch.volcano.sh/v1alpha1 Jobs and CronJobs; directories are read recursively).
    #[arg(long, required = true, num_args = 1.., value_name = "FILE_OR_DIR")]
    pub cluster: Vec<PathBuf>,
    /// volcano-scheduler.conf to schedule with (default: Volcano's built-in conf).
    #[arg(long, value_name = "FILE")]
    pub conf: Option<PathBuf>,
    /// Number of scheduling cycles (default 1). With Volcano Jobs in the input and no
    /// --cycles, the simulation runs until every Job has finished, at most --max-cycles.
    #[arg(long, value_name = "N")]
    pub cycles: Option<u64>,
    /// With Volcano Jobs and no --cycles: the most cycles to run waiting for them to finish.
    #[arg(long, default_value_t = sim::DEFAULT_MAX_JOB_CYCLES, value_name = "N")]
    pub max_cycles: u64,
    /// Virtual time between two cycles (Volcano's --schedule-period, a Go duration such as
    /// 1s or 500ms): pods' basalt.dev/duration-seconds and policy timeouts count on it.
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = schedule_period)]
    pub schedule_period: std::time::Duration,
    /// Termination grace, seconds of virtual time: a pod evicted (or deleted by the job
    /// controller) stays terminating, holding its node's resources, for this long before it is
    /// gone (default 0: gone in the next cycle). Pods that arrive terminating (with a
    /// deletionTimestamp) stay terminating for the whole run.
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS", value_parser = termination_grace)]
    pub termination_grace: f64,
    /// Seed of the random tie-breaks; cycle i uses seed + i.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Schedule only pods whose spec.schedulerName is this.
    #[arg(long, default_value = DEFAULT_SCHEDULER_NAME, value_name = "NAME")]
    pub scheduler_name: String,
    /// Percentage of nodes a predicate scan stops at (0 = Volcano's adaptive; Basalt default 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..=100))]
    pub percentage_nodes_to_find: Option<i32>,
    /// Below this many nodes every node is scanned (default 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..))]
    pub minimum_feasible_nodes: Option<i32>,
    /// Lower bound of the adaptive percentage (default 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..=100))]
    pub minimum_percentage_nodes_to_find: Option<i32>,
    /// Queue of PodGroups that name none (default `default`).
    #[arg(long, value_name = "NAME")]
    pub default_queue: Option<String>,
    /// Refuse the conf (exit 2) when it names an action or plugin Basalt does not implement,
    /// or a plugin argument it does not know or that has no effect here. Without it these are skipped and listed at the top of the
    /// output ("Not honoured" / "notHonoured").
    #[arg(long)]
    pub strict: bool,
    /// Decide with the plain reference scan (every task scans every node) instead of the fast
    /// path (task classes, affinity index); the decisions are the same, only slower. For
    /// comparison tests.
    #[arg(long)]
    pub plain_scan: bool,
    /// Volcano's feature gates, `Name=true|false,…`, as `basalt scheduler` takes them:
    /// `SchedulingGatesQueueAdmission=true` releases pods gated by
    /// `scheduling.volcano.sh/queue-allocation-gate` (and annotated with it) once their queue
    /// admits them; they are scheduled from the next cycle. A malformed entry exits with code 2.
    #[arg(long, value_name = "GATES", default_value = "", value_parser = feature_gates)]
    pub feature_gates: FeatureGates,
}

/// `--feature-gates`, parsed.
fn feature_gates(s: &str) -> Result<FeatureGates, String> {
    FeatureGates::parse(s)
}

/// `--termination-grace`: a finite number of seconds ≥ 0.
fn termination_grace(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("--termination-grace: `{s}` is not a number of seconds >= 0")),
    }
}

/// `--schedule-period`: a Go duration of at least 1 ms.
fn schedule_period(s: &str) -> Result<std::time::Duration, String> {
    let d = crate::convert::duration::parse_go_duration(s)?;
    if d < std::time::Duration::from_millis(1) {
        return Err(format!("{s:?}: must be at least 1ms"));
    }
    Ok(d)
}

/// Reads and parses the conf at `path`, printing its warnings to stderr.
///
/// Errors: a message naming the file (unreadable, nested deeper than
/// [`crate::load::MAX_NESTING_DEPTH`] — refused before parsing, as the loader does —, not valid
/// YAML, unknown action, …).
pub fn read_conf(path: &Path) -> Result<SchedulerConf, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read conf {}: {e}", path.display()))?;
    let limit = crate::load::MAX_NESTING_DEPTH;
    if let Err(deep) = crate::load::nesting::check_depth(&text, limit) {
        return Err(format!("invalid conf {}: nested more than {limit} levels deep at line {}", path.display(), deep.line));
    }
    let (conf, warnings) = SchedulerConf::parse(&text).map_err(|e| format!("invalid conf {}: {e}", path.display()))?;
    for w in warnings {
        eprintln!("warning: {}: {w}", path.display());
    }
    Ok(conf)
}

/// The conf with the command-line scheduler options applied.
fn conf_with_options(mut conf: SchedulerConf, args: &SimulateArgs) -> SchedulerConf {
    let o = &mut conf.options;
    if let Some(v) = args.percentage_nodes_to_find {
        o.percentage_nodes_to_find = v;
    }
    if let Some(v) = args.minimum_feasible_nodes {
        o.minimum_feasible_nodes = v;
    }
    if let Some(v) = args.minimum_percentage_nodes_to_find {
        o.minimum_percentage_nodes_to_find = v;
    }
    if let Some(v) = &args.default_queue {
        o.default_queue = v.clone();
    }
    if args.plain_scan {
        o.class_cache = false;
    }
    o.scheduling_gates_queue_admission = args.feature_gates.enabled(SCHEDULING_GATES_QUEUE_ADMISSION);
    conf
}

impl SimulateArgs {
    /// `conf` with these arguments' scheduler options applied, and the simulation options: what
    /// `basalt simulate` runs [`sim::run`] with once it has read the conf, so a runner in the
    /// same process (runtime/tests/scenarios_in_process.rs) decides exactly as the command.
    pub fn apply(&self, conf: SchedulerConf) -> (SchedulerConf, SimOptions) {
        let opts = SimOptions {
            cycles: self.cycles.unwrap_or(1),
            until_jobs_finished: if self.cycles.is_some() { None } else { Some(self.max_cycles) },
            schedule_period_ms: i64::try_from(self.schedule_period.as_millis()).unwrap_or(i64::MAX),
            seed: self.seed,
            scheduler_name: self.scheduler_name.clone(),
            termination_grace_ms: (self.termination_grace * 1000.0).round().min(i64::MAX as f64) as i64,
            run_cron_jobs: true,
        };
        (conf_with_options(conf, self), opts)
    }
}

/// Runs `basalt simulate`; returns the exit code: 0, [`EXIT_NOTHING_LOADED`] or
/// [`EXIT_BAD_CONF`].
pub fn run(args: &SimulateArgs) -> u8 {
    let conf = match &args.conf {
        None => SchedulerConf::default(),
        Some(p) => match read_conf(p) {
            Ok(c) => c,
            Err(msg) => {
                eprintln!("error: {msg}");
                return EXIT_BAD_CONF;
            }
        },
    };
    let what = args.conf.as_ref().map(|p| format!("conf {}", p.display())).unwrap_or_else(|| "the conf".into());
    if args.strict {
        if let Err(msg) = sim::strict_check(&conf, &what) {
            eprintln!("error: {msg}");
            return EXIT_BAD_CONF;
        }
    }
    for n in sim::NotHonouredReport::of(&conf, None) {
        eprintln!("warning: {what}: {}", n.message);
    }
    let (conf, opts) = args.apply(conf);
    let (out, timings) = match sim::run_timed(&args.cluster, &conf, &opts) {
        Ok(run) => run,
        Err(e @ SimError::NothingLoaded { .. }) => {
            let SimError::NothingLoaded { load, .. } = &e;
            for i in &load.issues {
                eprintln!("warning: {i}");
            }
            eprintln!("error: {e}");
            return EXIT_NOTHING_LOADED;
        }
    };
    // Text output lists the issues itself; repeating them on stderr would show each twice.
    if args.output == OutputFormat::Json {
        for line in out.grouped_issue_lines() {
            if line.starts_with("note: ") {
                eprintln!("{line}");
            } else {
                eprintln!("warning: {line}");
            }
        }
        if out.load.skipped_other_scheduler > 0 {
            eprintln!(
                "warning: {} pending pod(s) skipped: spec.schedulerName is not {:?}",
                out.load.skipped_other_scheduler, opts.scheduler_name
            );
        }
    }
    let rendered = match args.output {
        OutputFormat::Json => sim::render_json_with_timings(&out, &timings) + "\n",
        OutputFormat::Text => sim::render_text_with_timings(&out, &timings),
    };
    // A closed pipe (`basalt simulate … | head`) is not an error worth a panic.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(rendered.as_bytes()).and_then(|()| stdout.flush());
    EXIT_OK
}
