//! `basalt bench`: time one session open and one full cycle of a seeded synthetic workload
//! (`basalt_core::workload`), so the speed numbers can be reproduced without criterion.

use basalt_core::conf::SchedulerConf;
use basalt_core::scheduler::run_cycle_in;
use basalt_core::session::Session;
use basalt_core::workload::{generate, Variant, WorkloadSpec};
use basalt_core::{Cluster, CycleOptions};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::time::Instant;

/// How `bench` prints its result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchOutput {
    /// One JSON object.
    Json,
    /// A readable line.
    Text,
}

/// Arguments of `basalt bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Nodes (32 cores, 128 GiB, 110 pods each).
    #[arg(long, default_value_t = 1000)]
    pub nodes: usize,
    /// Pending pods (default: 10 per node).
    #[arg(long)]
    pub pods: Option<usize>,
    /// Pods per gang job.
    #[arg(long, default_value_t = 10)]
    pub gang: usize,
    /// Queues.
    #[arg(long, default_value_t = 4)]
    pub queues: usize,
    /// Workload shape: identical, distinct, selectors, taints, anti-affinity.
    #[arg(long, default_value = "identical")]
    pub variant: String,
    /// Worker threads for the parallel node scans (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seed of the workload and of the tie-breaks.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// volcano-scheduler.conf (default: Volcano's built-in conf).
    #[arg(long)]
    pub conf: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = BenchOutput::Text)]
    pub output: BenchOutput,
}

/// What `bench` measured.
#[derive(Debug, Serialize)]
pub struct BenchReport {
    /// Nodes.
    pub nodes: usize,
    /// Pending pods.
    pub pods: usize,
    /// Workload variant.
    pub variant: String,
    /// Worker threads.
    pub threads: usize,
    /// Opening the session from an unchanged (prepared) cluster copy, milliseconds.
    pub session_open_ms: f64,
    /// One full cycle (open, enqueue/allocate/backfill, close), milliseconds.
    pub cycle_ms: f64,
    /// Pods bound by the cycle.
    pub pods_bound: usize,
    /// Pods bound per second of cycle time.
    pub pods_per_s: f64,
    /// Peak resident memory of the process (`VmHWM`), bytes; 0 where unavailable.
    pub peak_rss_bytes: u64,
}

fn peak_rss_bytes() -> u64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else { return 0 };
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// Runs the benchmark; returns the exit code.
pub fn run(args: &BenchArgs) -> u8 {
    let Some(variant) = Variant::parse(&args.variant) else {
        eprintln!("error: --variant {:?}: expected identical, distinct, selectors, taints or anti-affinity", args.variant);
        return 2;
    };
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
        pods: args.pods.unwrap_or(args.nodes * 10),
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
    let mut cluster = Cluster::new();
    for d in generate(&spec) {
        if let Err(e) = cluster.apply(d) {
            eprintln!("warning: {e}");
        }
    }
    let opts = CycleOptions { seed: args.seed, cycle: 1 };
    let report = pool.install(|| {
        let mut arena = bumpalo::Bump::new();
        // Session open from an unchanged cluster copy: the layout is kept between cycles.
        cluster.prepare(&conf.options.default_queue);
        let t = Instant::now();
        let open = Session::open(&arena, &cluster, &conf, &opts);
        let session_open_ms = t.elapsed().as_secs_f64() * 1e3;
        drop(open);
        arena.reset();
        let t = Instant::now();
        let d = run_cycle_in(&arena, &cluster, &conf, &opts);
        let cycle_ms = t.elapsed().as_secs_f64() * 1e3;
        BenchReport {
            nodes: spec.nodes,
            pods: spec.pods,
            variant: variant.name().to_string(),
            threads,
            session_open_ms,
            cycle_ms,
            pods_bound: d.binds.len(),
            pods_per_s: if cycle_ms > 0.0 { d.binds.len() as f64 / (cycle_ms / 1e3) } else { 0.0 },
            peak_rss_bytes: peak_rss_bytes(),
        }
    });
    match args.output {
        BenchOutput::Json => println!("{}", serde_json::to_string(&report).unwrap_or_default()),
        BenchOutput::Text => println!(
            "{} nodes, {} pods ({}), {} thread(s): session open {:.1} ms, cycle {:.1} ms, {} bound, {:.0} pods/s, peak RSS {} MiB",
            report.nodes,
            report.pods,
            report.variant,
            report.threads,
            report.session_open_ms,
            report.cycle_ms,
            report.pods_bound,
            report.pods_per_s,
            report.peak_rss_bytes >> 20
        ),
    }
    super::EXIT_OK
}
