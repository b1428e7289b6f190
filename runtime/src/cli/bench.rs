//! `basalt bench`: time session open (cold, on an unchanged cluster copy, and after a live
//! cycle's changes) and one full cycle of a seeded synthetic workload
//! (`basalt_core::workload`), so the speed numbers can be reproduced without criterion. With
//! `--percentage-nodes-to-find` (and the other sampling flags) the same cycle is also timed with
//! Volcano's node sampling, in the same run, beside Basalt's default full scan.
//!
//! `--sweep 1000,5000,10000` repeats the run at each node count, each in a child process of the
//! same binary (`basalt bench --nodes N ... --output json`): every size gets a fresh cluster and
//! its own honest peak RSS; `--repeat R` runs each size R times, in R rounds that run every
//! size once, and keeps the median and the spread ([`super::bench_sweep`]). The points can be
//! drawn with `--plot FILE.svg` (cycle time and session open against cluster size, log-log,
//! with power-law fits; see [`super::bench_plot`]),
//! and a saved JSON array can be drawn again with `--from-json FILE` without measuring.

use super::bench_plot;
use super::bench_sweep::{SweepPoint, DEFAULT_REPEAT};
use basalt_core::conf::SchedulerConf;
use basalt_core::framework::Session;
use basalt_core::scheduler::{run_cycle_in, run_cycle_observed, CyclePhase};
use basalt_core::workload::{generate_into, Churn, Variant, WorkloadSpec};
use basalt_core::{Cluster, CycleOptions};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// How `bench` prints its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchOutput {
    /// One JSON object (a JSON array of them for --sweep and --from-json).
    Json,
    /// A readable line per run.
    Text,
}

/// Arguments of `basalt bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Nodes (32 cores, 128 GiB, 110 pods each).
    #[arg(long, default_value_t = 1000, conflicts_with_all = ["sweep", "from_json"])]
    pub nodes: usize,
    /// Pending pods (default: --pods-per-node per node).
    #[arg(long, conflicts_with_all = ["sweep", "from_json"])]
    pub pods: Option<usize>,
    /// Pending pods per node when --pods is not given (also every size of --sweep).
    #[arg(long, value_name = "K", default_value_t = 10, conflicts_with = "from_json")]
    pub pods_per_node: usize,
    /// Pods per gang job.
    #[arg(long, default_value_t = 10, conflicts_with = "from_json")]
    pub gang: usize,
    /// Queues.
    #[arg(long, default_value_t = 4, conflicts_with = "from_json")]
    pub queues: usize,
    /// Workload shape: identical, distinct, selectors, taints, anti-affinity, topology (a
    /// 3-tier HyperNode tree, 16 nodes per leaf, 8 leaves per spine, 8 spines per tier 3, every
    /// gang hard within one leaf) or subgroups (Volcano's 1,000-node / 1,000-pod / 100-sub-group
    /// allocate benchmark at --nodes 1000 --pods 1000). The two topology shapes also time the
    /// same workload without its topology in the same run (`plain_cycle_ms`). With --sweep a
    /// comma list runs every size for each shape (one plotted series each). `volumes` (not with
    /// --sweep): the identical shape on zone-labelled nodes without claims and with every
    /// --claims-every-th pending pod on a bound zonal claim, measured alternately in this
    /// process, and their CPU-time ratio (issue 22). `devices` (not with --sweep): the identical
    /// shape on nodes of 8 GPU share cards, every pending pod asking --card-memory MiB of a card,
    /// scheduled without and with `deviceshare` GPU share, alternately, and their CPU-time ratio
    /// (issue 26).
    #[arg(long, default_value = "identical", conflicts_with = "from_json")]
    pub variant: String,
    /// Worker threads for the parallel node scans (default: all cores).
    #[arg(long, conflicts_with = "from_json")]
    pub threads: Option<usize>,
    /// Seed of the workload and of the tie-breaks.
    #[arg(long, default_value_t = 1, conflicts_with = "from_json")]
    pub seed: u64,
    /// volcano-scheduler.conf (default: Volcano's built-in conf).
    #[arg(long, conflicts_with = "from_json")]
    pub conf: Option<PathBuf>,
    /// Output format. With --sweep or --from-json, json prints one array of the per-size objects
    /// and the fits go to stderr; text prints one line per size, then the fits.
    #[arg(long, value_enum, default_value_t = BenchOutput::Text)]
    pub output: BenchOutput,
    /// Comma-separated node counts, e.g. 1000,5000,10000,50000: runs the shape at each size in
    /// turn, each in a fresh child process (so peak RSS is per size), and prints one report per
    /// size and the fitted growth cycle_ms = c · (nodes/1000)^b.
    #[arg(long, value_name = "NODES_LIST", conflicts_with = "from_json")]
    pub sweep: Option<String>,
    /// With --sweep: runs per size (each a fresh process), in rounds that run every size once;
    /// the median is reported and fitted, with the smallest and largest run beside it.
    #[arg(long, value_name = "R", default_value_t = DEFAULT_REPEAT as u64, value_parser = clap::value_parser!(u64).range(1..=100), requires = "sweep")]
    pub repeat: u64,
    /// Draw cycle time and session open (ms, log scale) against cluster size (nodes, log scale)
    /// with the measured points and the power-law fits into this SVG file. Needs --sweep or
    /// --from-json.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Live-change rounds timed for `session_open_after_change_ms` (the median is reported).
    #[arg(long, default_value_t = 5, conflicts_with = "from_json")]
    pub change_rounds: usize,
    /// Cycles timed on the same cluster copy, one after the other in this process, each a
    /// fresh session as a live scheduler's cycles are. The first is `cycle_ms` (the first
    /// cycle after start). The median of the others is `steady_cycle_ms`: a cycle of a
    /// scheduler that has run before, whose allocator holds the memory the previous cycle
    /// freed (of an even number, the slower middle one, so that its phases are one cycle's).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100), conflicts_with = "from_json")]
    pub cycles: u64,
    /// Read the points of an earlier `--sweep ... --output json` from this file instead of
    /// measuring; prints them and the fits, and draws --plot.
    #[arg(long, value_name = "FILE")]
    pub from_json: Option<PathBuf>,
    /// Also time the cycle with Volcano's node sampling, in the same run on the same cluster
    /// copy: a predicate scan stops at this percentage of the nodes (0 = Volcano's adaptive
    /// default, max(50 − nodes/125, 5) %). Reported beside the default full scan as
    /// `sampled_cycle_ms`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..=100), conflicts_with = "from_json")]
    pub percentage_nodes_to_find: Option<i32>,
    /// With sampling: below this many nodes every node is scanned (Volcano default 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..), conflicts_with = "from_json")]
    pub minimum_feasible_nodes: Option<i32>,
    /// With sampling: lower bound of the adaptive percentage (Volcano default 5).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..=100), conflicts_with = "from_json")]
    pub minimum_percentage_nodes_to_find: Option<i32>,
    /// With --variant volumes: every K-th pending pod carries a bound zonal claim.
    #[arg(long, value_name = "K", default_value_t = 10, conflicts_with = "from_json")]
    pub claims_every: usize,
    /// With --variant volumes or devices: timed cycles per side (alternating; the median is
    /// reported).
    #[arg(long, value_name = "R", default_value_t = 5, conflicts_with = "from_json")]
    pub volume_rounds: usize,
    /// With --variant devices: card memory (MiB) each pending pod asks of one 16,000 MiB card.
    #[arg(long, value_name = "MIB", default_value_t = 6000, value_parser = clap::value_parser!(u64).range(1..=16000), conflicts_with = "from_json")]
    pub card_memory: u64,
}

impl BenchArgs {
    /// The conf of the sampled cycle: `conf` with the sampling flags given; `None` when none is
    /// (only the default full scan is timed). A minimum flag alone samples at Volcano's adaptive
    /// percentage.
    fn sampled_conf(&self, conf: &SchedulerConf) -> Option<SchedulerConf> {
        if self.percentage_nodes_to_find.is_none()
            && self.minimum_feasible_nodes.is_none()
            && self.minimum_percentage_nodes_to_find.is_none()
        {
            return None;
        }
        let mut c = conf.clone();
        c.options.percentage_nodes_to_find = self.percentage_nodes_to_find.unwrap_or(0);
        if let Some(v) = self.minimum_feasible_nodes {
            c.options.minimum_feasible_nodes = v;
        }
        if let Some(v) = self.minimum_percentage_nodes_to_find {
            c.options.minimum_percentage_nodes_to_find = v;
        }
        Some(c)
    }
}

/// What `bench` measured (one object of the JSON output; `--from-json` reads an array of them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Nodes.
    pub nodes: usize,
    /// Pending pods.
    pub pods: usize,
    /// Workload variant.
    pub variant: String,
    /// Worker threads.
    pub threads: usize,
    /// Opening the session from an unchanged cluster copy whose kept layout is current,
    /// milliseconds (the open only copies columns). Not the cost of a live cycle: see
    /// `session_open_after_change_ms`.
    pub session_open_ms: f64,
    /// Opening the session with no kept layout (layout computed from every record; the first
    /// cycle after start), milliseconds.
    #[serde(default)]
    pub session_open_cold_ms: f64,
    /// Opening the session after a live cycle's changes (median of the change rounds):
    /// `basalt_core::workload::Churn` applies 1 % of the pods created, deleted or bound plus
    /// the previous cycle's binds and PodGroup status updates, then `Cluster::prepare` patches
    /// the kept layout and the session opens; both are timed. Milliseconds.
    #[serde(default)]
    pub session_open_after_change_ms: f64,
    /// The patch alone (`Cluster::prepare` after the change), median of the same rounds, ms.
    #[serde(default)]
    pub layout_patch_ms: f64,
    /// Deltas applied per change round.
    #[serde(default)]
    pub change_deltas: usize,
    /// One full cycle (open, enqueue/allocate/backfill, close), milliseconds.
    pub cycle_ms: f64,
    /// CPU time of that cycle over all threads, milliseconds (absent where `/proc` does not
    /// say): what the cycle costs regardless of how busy the machine's other cores were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_cpu_ms: Option<f64>,
    /// That cycle split at its phases, milliseconds: session open (tables built and plugins
    /// opened), the actions, session close (plugins closed and the decisions built). Absent
    /// from reports written before the split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_phases_ms: Option<CyclePhasesMs>,
    /// With `--cycles N` (N ≥ 2): the median of cycles 2..N (of an even number, the slower
    /// middle one) on the same cluster copy, in the same process after the first,
    /// milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_cycle_ms: Option<f64>,
    /// The phases of the cycle whose time is `steady_cycle_ms`, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_cycle_phases_ms: Option<CyclePhasesMs>,
    /// How many cycles `steady_cycle_ms` is the median of (N − 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_cycles: Option<usize>,
    /// Pods bound by the cycle.
    pub pods_bound: usize,
    /// Pods bound per second of cycle time.
    pub pods_per_s: f64,
    /// Peak resident memory of the process (`VmHWM`), bytes; 0 where unavailable.
    pub peak_rss_bytes: u64,
    /// With the sampling flags: one full cycle on the same cluster copy right after the
    /// default one (same seed), with Volcano's node sampling, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_cycle_ms: Option<f64>,
    /// CPU time of the sampled cycle over all threads, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_cycle_cpu_ms: Option<f64>,
    /// Pods bound by the sampled cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_pods_bound: Option<usize>,
    /// Feasible nodes a sampled predicate scan stops at (Volcano `numNodesToFind` for this
    /// cluster size and the flags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_nodes_to_find: Option<usize>,
    /// Variants `topology` and `subgroups`: one full cycle of the same nodes, PodGroups and pods
    /// without HyperNodes, `networkTopology` and `subGroupPolicy`, timed in the same process
    /// right after the topology cycle, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_cycle_ms: Option<f64>,
    /// CPU time of the plain cycle over all threads, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_cycle_cpu_ms: Option<f64>,
    /// Pods bound by the plain cycle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_pods_bound: Option<usize>,
}

/// A cycle's wall time by phase ([`BenchReport::cycle_phases_ms`]), milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CyclePhasesMs {
    /// Session open: tables built, every plugin opened.
    pub open: f64,
    /// The conf's actions, in order.
    pub actions: f64,
    /// Session close: every plugin closed, the decisions built.
    pub close: f64,
}

impl CyclePhasesMs {
    /// Times `run` (a cycle that reports its phases to the observer it is given) by phase.
    fn measure<T>(run: impl FnOnce(&mut dyn FnMut(CyclePhase)) -> T) -> (T, CyclePhasesMs) {
        let start = Instant::now();
        let (mut opened, mut acted) = (None, None);
        let out = run(&mut |ph| match ph {
            CyclePhase::Opened => opened = Some(start.elapsed()),
            CyclePhase::ActionDone(_) => acted = Some(start.elapsed()),
            _ => {}
        });
        let end = start.elapsed();
        let opened = opened.unwrap_or(end);
        let acted = acted.unwrap_or(opened);
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        (out, CyclePhasesMs { open: ms(opened), actions: ms(acted - opened), close: ms(end - acted) })
    }
}

impl BenchReport {
    /// The report as one readable line (times in ms, peak RSS in MiB).
    pub fn text_line(&self) -> String {
        let cpu = |ms: Option<f64>| ms.map(|c| format!(" ({c:.0} ms CPU)")).unwrap_or_default();
        let sampled = match (self.sampled_cycle_ms, self.sampled_pods_bound, self.sampled_nodes_to_find) {
            (Some(ms), Some(bound), Some(k)) => format!(
                "; sampled (stop at {k} feasible of {} nodes): cycle {ms:.1} ms{}, {bound} bound",
                self.nodes,
                cpu(self.sampled_cycle_cpu_ms)
            ),
            _ => String::new(),
        };
        let plain = match (self.plain_cycle_ms, self.plain_pods_bound) {
            (Some(ms), Some(bound)) => format!(
                "; without topology: cycle {ms:.1} ms{}, {bound} bound; topology / plain {:.2}x",
                cpu(self.plain_cycle_cpu_ms),
                match (self.cycle_cpu_ms, self.plain_cycle_cpu_ms) {
                    (Some(a), Some(b)) if b > 0.0 => a / b,
                    _ => self.cycle_ms / ms.max(1e-9),
                }
            ),
            _ => String::new(),
        };
        let cycle_cpu = match (self.cycle_cpu_ms, self.cycle_phases_ms) {
            (c, Some(p)) => format!(
                " ({}open {:.1}, actions {:.1}, close {:.1} ms)",
                c.map(|c| format!("{c:.0} ms CPU; ")).unwrap_or_default(),
                p.open,
                p.actions,
                p.close
            ),
            (c, None) => cpu(c),
        };
        let steady = match (self.steady_cycle_ms, self.steady_cycle_phases_ms, self.steady_cycles) {
            (Some(ms), Some(p), Some(k)) => format!(
                "; steady cycle {ms:.1} ms (open {:.1}, actions {:.1}, close {:.1} ms; {})",
                p.open,
                p.actions,
                p.close,
                if k == 1 { "cycle 2".to_string() } else { format!("median of cycles 2–{}", k + 1) }
            ),
            _ => String::new(),
        };
        format!(
            "{} nodes, {} pods ({}), {} thread(s): session open {:.1} ms unchanged, {:.1} ms after a 1 % change (patch {:.1} ms, {} deltas), {:.1} ms cold; cycle {:.1} ms{cycle_cpu}{steady}, {} bound, {:.0} pods/s{sampled}{plain}, peak RSS {} MiB",
            self.nodes,
            self.pods,
            self.variant,
            self.threads,
            self.session_open_ms,
            self.session_open_after_change_ms,
            self.layout_patch_ms,
            self.change_deltas,
            self.session_open_cold_ms,
            self.cycle_ms,
            self.pods_bound,
            self.pods_per_s,
            self.peak_rss_bytes >> 20
        )
    }
}

/// CPU time the process's threads have used so far, milliseconds (Σ of
/// `/proc/self/task/*/schedstat`; `None` where unavailable). Unlike the wall clock it does not
/// count time the threads waited for a core, so it compares two cycles fairly on a busy
/// machine.
pub(crate) fn process_cpu_ms() -> Option<f64> {
    let mut ns = 0u64;
    for e in std::fs::read_dir("/proc/self/task").ok()? {
        let s = std::fs::read_to_string(e.ok()?.path().join("schedstat")).ok()?;
        ns += s.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(ns as f64 / 1e6)
}

fn peak_rss_bytes() -> u64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else { return 0 };
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// Parses a `--sweep` list such as `1000,5000,10000` (spaces around items allowed; every item a
/// positive integer). The error names the offending item.
pub fn parse_nodes_list(list: &str) -> Result<Vec<usize>, String> {
    list.split(',')
        .map(|item| match item.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("--sweep: '{}' is not a node count", item.trim())),
        })
        .collect()
}

/// Parses `--variant`: one name, or a comma list of names.
fn parse_variants(list: &str) -> Result<Vec<Variant>, String> {
    list.split(',')
        .map(|v| {
            Variant::parse(v.trim()).ok_or_else(|| {
                format!(
                    "--variant '{}': expected identical, uniform, distinct, selectors, taints, anti-affinity, topology or subgroups (or volumes or devices alone)",
                    v.trim()
                )
            })
        })
        .collect()
}

/// Runs the benchmark (a single run, a sweep, or a saved sweep); returns the exit code.
pub fn run(args: &BenchArgs) -> u8 {
    if let Some(file) = &args.from_json {
        return from_json(args, file);
    }
    let paired = args.variant.trim();
    if paired == "volumes" || paired == "devices" {
        if args.sweep.is_some() || args.plot.is_some() {
            eprintln!("error: --variant {paired} is one comparison: not with --sweep or --plot");
            return 2;
        }
        let conf = match &args.conf {
            Some(p) => match super::simulate::read_conf(p) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {e}");
                    return super::EXIT_BAD_CONF;
                }
            },
            None => SchedulerConf::default(),
        };
        return if paired == "volumes" { super::bench_volumes::run(args, &conf) } else { super::bench_devices::run(args, &conf) };
    }
    let variants = match parse_variants(&args.variant) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if let Some(list) = &args.sweep {
        let sizes = match parse_nodes_list(list) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        };
        return sweep(args, &sizes, &variants);
    }
    if args.plot.is_some() {
        eprintln!("error: --plot needs --sweep or --from-json (a single run is one point)");
        return 2;
    }
    let [variant] = variants[..] else {
        eprintln!("error: --variant {:?}: several variants need --sweep", args.variant);
        return 2;
    };
    single(args, variant)
}

/// One measurement in this process.
fn single(args: &BenchArgs, variant: Variant) -> u8 {
    let conf = match &args.conf {
        Some(p) => match super::simulate::read_conf(p) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return super::EXIT_BAD_CONF;
            }
        },
        None => SchedulerConf::default(),
    };
    let spec = WorkloadSpec {
        nodes: args.nodes,
        pods: args.pods.unwrap_or(args.nodes * args.pods_per_node),
        gang: args.gang.max(1),
        queues: args.queues.max(1),
        variant,
        seed: args.seed,
    };
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: --threads {threads}: {e}");
            return 2;
        }
    };
    // The topology shapes are compared with the same workload without its topology.
    let mut plain_cluster = matches!(variant, Variant::Topology | Variant::SubGroups).then(|| {
        let mut c = Cluster::new();
        generate_into(&spec, |d| {
            if let Some(d) = basalt_core::workload::strip_topology(d) {
                let _ = c.apply(d);
            }
        });
        c.prepare(&conf.options.default_queue);
        c
    });
    // Each object goes into the cluster as it is generated: the workload is never held as a
    // whole beside the cluster (at 1,000,000 pods the list was about a gigabyte of the peak).
    let mut cluster = Cluster::new();
    generate_into(&spec, |d| {
        if let Err(e) = cluster.apply(d) {
            eprintln!("warning: {e}");
        }
    });
    let opts = CycleOptions { seed: args.seed, cycle: 1, now_ms: 0 };
    let report = pool.install(|| {
        let mut arena = bumpalo::Bump::new();
        // Cold: no kept layout, as in the first cycle after start.
        let t = Instant::now();
        let open = Session::open(&arena, &cluster, &conf, &opts, &basalt_core::plugins::REGISTRY);
        let session_open_cold_ms = t.elapsed().as_secs_f64() * 1e3;
        drop(open);
        arena.reset();
        // Session open from an unchanged cluster copy: the layout is kept between cycles.
        cluster.prepare(&conf.options.default_queue);
        let t = Instant::now();
        let open = Session::open(&arena, &cluster, &conf, &opts, &basalt_core::plugins::REGISTRY);
        let session_open_ms = t.elapsed().as_secs_f64() * 1e3;
        drop(open);
        arena.reset();
        let (t, cpu) = (Instant::now(), process_cpu_ms());
        let (d, phases) = CyclePhasesMs::measure(|observe| run_cycle_observed(&arena, &cluster, &conf, &opts, observe));
        let cycle_ms = t.elapsed().as_secs_f64() * 1e3;
        let cycle_cpu_ms = process_cpu_ms().zip(cpu).map(|(b, a)| b - a);
        let bound = d.binds.len();
        drop(d);
        // Later cycles on the same copy, as a live scheduler runs them.
        let mut steady: Vec<(f64, CyclePhasesMs)> = (1..args.cycles)
            .map(|_| {
                arena.reset();
                let t = Instant::now();
                let (d, phases) = CyclePhasesMs::measure(|observe| run_cycle_observed(&arena, &cluster, &conf, &opts, observe));
                let ms = t.elapsed().as_secs_f64() * 1e3;
                drop(d);
                (ms, phases)
            })
            .collect();
        steady.sort_by(|a, b| a.0.total_cmp(&b.0));
        let steady_cycles = steady.len();
        let steady = steady.get(steady_cycles / 2).copied();
        // The same cycle with node sampling, on the same (unchanged) cluster copy.
        let sampled = args.sampled_conf(&conf).map(|sconf| {
            arena.reset();
            let (t, cpu) = (Instant::now(), process_cpu_ms());
            let d = run_cycle_in(&arena, &cluster, &sconf, &opts);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let cpu_ms = process_cpu_ms().zip(cpu).map(|(b, a)| b - a);
            (ms, cpu_ms, d.binds.len(), sconf.options.nodes_to_find(spec.nodes))
        });
        let plain = plain_cluster.take().map(|plain| {
            arena.reset();
            let (t, cpu) = (Instant::now(), process_cpu_ms());
            let d = run_cycle_in(&arena, &plain, &conf, &opts);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let cpu_ms = process_cpu_ms().zip(cpu).map(|(b, a)| b - a);
            (ms, cpu_ms, d.binds.len())
        });
        arena.reset();
        let change = open_after_change(&mut cluster, &spec, &conf, &opts, &mut arena, args.change_rounds.max(1));
        BenchReport {
            nodes: spec.nodes,
            pods: spec.pods,
            variant: variant.name().to_string(),
            threads,
            session_open_ms,
            session_open_cold_ms,
            session_open_after_change_ms: change.open_ms,
            layout_patch_ms: change.patch_ms,
            change_deltas: change.deltas,
            cycle_ms,
            cycle_phases_ms: Some(phases),
            steady_cycle_ms: steady.map(|x| x.0),
            steady_cycle_phases_ms: steady.map(|x| x.1),
            steady_cycles: steady.map(|_| steady_cycles),
            pods_bound: bound,
            pods_per_s: if cycle_ms > 0.0 { bound as f64 / (cycle_ms / 1e3) } else { 0.0 },
            peak_rss_bytes: peak_rss_bytes(),
            cycle_cpu_ms,
            sampled_cycle_ms: sampled.map(|x| x.0),
            sampled_cycle_cpu_ms: sampled.and_then(|x| x.1),
            sampled_pods_bound: sampled.map(|x| x.2),
            sampled_nodes_to_find: sampled.map(|x| x.3),
            plain_cycle_ms: plain.map(|x| x.0),
            plain_cycle_cpu_ms: plain.and_then(|x| x.1),
            plain_pods_bound: plain.map(|x| x.2),
        }
    });
    match args.output {
        BenchOutput::Json => println!("{}", serde_json::to_string(&report).unwrap_or_default()),
        BenchOutput::Text => println!("{}", report.text_line()),
    }
    super::EXIT_OK
}

/// Medians of the live-change rounds.
struct AfterChange {
    open_ms: f64,
    patch_ms: f64,
    deltas: usize,
}

/// `rounds` live cycles' changes on `cluster`: each round applies a [`Churn`] round of 1 % of
/// the pods (untimed), then times `Cluster::prepare` (the patch) and the session open. One
/// untimed round first, so the timed ones also confirm the previous round's binds.
fn open_after_change(
    cluster: &mut Cluster,
    spec: &WorkloadSpec,
    conf: &SchedulerConf,
    opts: &CycleOptions,
    arena: &mut bumpalo::Bump,
    rounds: usize,
) -> AfterChange {
    let dq = conf.options.default_queue.as_str();
    let mut churn = Churn::new(cluster, spec);
    let changed = (spec.pods / 100).max(1);
    let (mut open, mut patch, mut deltas) = (Vec::new(), Vec::new(), 0);
    for round in 0..=rounds {
        let batch = churn.round(cluster, changed);
        let n = batch.len();
        for d in batch {
            if let Err(e) = cluster.apply(d) {
                eprintln!("warning: {e}");
            }
        }
        arena.reset();
        let t = Instant::now();
        cluster.prepare(dq);
        let p = t.elapsed().as_secs_f64() * 1e3;
        let ssn = Session::open(arena, cluster, conf, opts, &basalt_core::plugins::REGISTRY);
        let o = t.elapsed().as_secs_f64() * 1e3;
        drop(ssn);
        if round > 0 {
            open.push(o);
            patch.push(p);
            deltas = n;
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    AfterChange { open_ms: median(open), patch_ms: median(patch), deltas }
}

/// Runs one size of a sweep as `basalt bench --nodes N ... --output json` in a child process
/// (stderr passes through) and reads its report.
fn measure_in_child(exe: &Path, args: &BenchArgs, nodes: usize, variant: Variant) -> Result<BenchReport, String> {
    let mut cmd = Command::new(exe);
    cmd.arg("bench")
        .args(["--nodes", &nodes.to_string(), "--pods", &(nodes * args.pods_per_node).to_string()])
        .args(["--gang", &args.gang.to_string(), "--queues", &args.queues.to_string()])
        .args(["--variant", variant.name(), "--seed", &args.seed.to_string(), "--output", "json"])
        .args(["--change-rounds", &args.change_rounds.to_string()])
        .args(["--cycles", &args.cycles.to_string()]);
    if let Some(t) = args.threads {
        cmd.args(["--threads", &t.to_string()]);
    }
    if let Some(c) = &args.conf {
        cmd.arg("--conf").arg(c);
    }
    for (flag, v) in [
        ("--percentage-nodes-to-find", args.percentage_nodes_to_find),
        ("--minimum-feasible-nodes", args.minimum_feasible_nodes),
        ("--minimum-percentage-nodes-to-find", args.minimum_percentage_nodes_to_find),
    ] {
        if let Some(v) = v {
            cmd.args([flag, &v.to_string()]);
        }
    }
    let what = format!("{nodes} nodes ({})", variant.name());
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {} for {what}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!("the run at {what} failed ({})", out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("the run at {what} printed no report: {e}"))
}

/// `--sweep`: every variant at every size, `--repeat` child processes each (in rounds that run
/// every size once), summarised as a [`SweepPoint`]. A run that fails is reported and left out
/// (a size with no run left is skipped); the others are still printed and plotted, and the
/// exit code is 1.
fn sweep(args: &BenchArgs, sizes: &[usize], variants: &[Variant]) -> u8 {
    // A bad conf fails here once rather than in every child.
    if let Some(Err(e)) = args.conf.as_deref().map(super::simulate::read_conf) {
        eprintln!("error: {e}");
        return super::EXIT_BAD_CONF;
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: --sweep: cannot find the basalt binary to run each size: {e}");
            return 1;
        }
    };
    let progress = args.output == BenchOutput::Json && std::io::stderr().is_terminal();
    let mut reports = Vec::with_capacity(sizes.len() * variants.len());
    let mut failed = false;
    // The runs take turns: each round runs every variant at every size once, so a machine
    // whose speed drifts during the sweep (other work on the host) moves every size alike
    // instead of only the sizes measured while it lasted.
    let points: Vec<(Variant, usize)> = variants.iter().flat_map(|&v| sizes.iter().map(move |&n| (v, n))).collect();
    let mut runs: Vec<Vec<BenchReport>> = vec![Vec::new(); points.len()];
    for _ in 0..args.repeat {
        for (i, &(variant, nodes)) in points.iter().enumerate() {
            match measure_in_child(&exe, args, nodes, variant) {
                Ok(r) => runs[i].push(r),
                Err(e) => {
                    eprintln!("error: --sweep: {e}");
                    failed = true;
                }
            }
        }
    }
    for runs in &runs {
        let Some(p) = SweepPoint::from_runs(runs) else { continue };
        if args.output == BenchOutput::Text {
            println!("{}", p.text_line());
        } else if progress {
            eprintln!("{}", p.text_line());
        }
        reports.push(p);
    }
    if args.output == BenchOutput::Json {
        println!("{}", serde_json::to_string_pretty(&reports).unwrap_or_default());
    }
    let code = finish(args, &reports);
    if failed {
        1
    } else {
        code
    }
}

/// `--from-json`: prints the saved reports and their fits, draws `--plot`.
fn from_json(args: &BenchArgs, file: &Path) -> u8 {
    let reports: Vec<SweepPoint> = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()))
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: --from-json {}: {e}", file.display());
            return 1;
        }
    };
    match args.output {
        BenchOutput::Json => println!("{}", serde_json::to_string_pretty(&reports).unwrap_or_default()),
        BenchOutput::Text => reports.iter().for_each(|r| println!("{}", r.text_line())),
    }
    finish(args, &reports)
}

/// Prints the fits (stdout for text, stderr for JSON so stdout stays one array) and draws the
/// plot when asked.
fn finish(args: &BenchArgs, reports: &[SweepPoint]) -> u8 {
    for line in bench_plot::fit_lines(reports) {
        match args.output {
            BenchOutput::Json => eprintln!("{line}"),
            BenchOutput::Text => println!("{line}"),
        }
    }
    if let Some(file) = &args.plot {
        if let Err(e) = bench_plot::draw(file, reports) {
            eprintln!("error: --plot: {e}");
            return 1;
        }
    }
    super::EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::conf::ActionKind;

    /// The split hands the run's value back; a run that reports no phase is all open, and one
    /// that reports its phases in order splits into non-negative parts (times are not asserted).
    #[test]
    fn cycle_phases_follow_the_reported_phases() {
        let (v, p) = CyclePhasesMs::measure(|_| 7);
        assert_eq!(v, 7);
        assert_eq!((p.actions, p.close), (0.0, 0.0));
        assert!(p.open >= 0.0);
        let (_, p) = CyclePhasesMs::measure(|observe| {
            observe(CyclePhase::TablesBuilt);
            observe(CyclePhase::Opened);
            observe(CyclePhase::ActionDone(ActionKind::Enqueue));
            observe(CyclePhase::ActionDone(ActionKind::Allocate));
            observe(CyclePhase::Closed);
        });
        assert!(p.open >= 0.0 && p.actions >= 0.0 && p.close >= 0.0, "{p:?}");
    }

    #[test]
    fn nodes_list_parses_and_names_the_bad_item() {
        assert_eq!(parse_nodes_list("1000,5000, 10000").unwrap(), vec![1000, 5000, 10000]);
        assert_eq!(parse_nodes_list("20").unwrap(), vec![20]);
        assert_eq!(parse_nodes_list("1000,10x").unwrap_err(), "--sweep: '10x' is not a node count");
        assert_eq!(parse_nodes_list("1000,,2000").unwrap_err(), "--sweep: '' is not a node count");
        assert_eq!(parse_nodes_list("0").unwrap_err(), "--sweep: '0' is not a node count");
        assert_eq!(parse_nodes_list("-5").unwrap_err(), "--sweep: '-5' is not a node count");
    }

    #[test]
    fn variants_list() {
        assert_eq!(parse_variants("identical, distinct").unwrap(), vec![Variant::Identical, Variant::Distinct]);
        assert!(parse_variants("identical,bogus").unwrap_err().contains("'bogus'"));
    }
}
