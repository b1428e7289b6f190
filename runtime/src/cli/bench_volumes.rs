//! `basalt bench --variant volumes` (issue 22's speed check): the `identical` shape with zone
//! labels on every node, timed without claims and with every `--claims-every`-th pending pod
//! (default a tenth) carrying a claim bound to a zonal disk (a PV labelled
//! `topology.kubernetes.io/zone`, [`basalt_core::workload_volumes`]), in the same process on the
//! same conf and seed. The two clusters are measured alternately, `--volume-rounds` rounds each
//! (the order flips every round), by the CPU time of the process's threads (not the wall clock,
//! which counts waits for a core on a shared machine); the medians and their ratio are printed.

use super::bench::{process_cpu_ms, BenchArgs, BenchOutput};
use basalt_core::conf::SchedulerConf;
use basalt_core::scheduler::run_cycle_in;
use basalt_core::workload::{generate, Variant, WorkloadSpec};
use basalt_core::workload_volumes::{zonal, VolumeMix};
use basalt_core::{Cluster, CycleOptions};
use serde::Serialize;
use std::time::Instant;

/// What `--variant volumes` measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VolumesReport {
    /// Nodes.
    pub nodes: usize,
    /// Pending pods.
    pub pods: usize,
    /// Pending pods with a bound zonal claim.
    pub pods_with_claims: usize,
    /// Rounds per cluster.
    pub rounds: usize,
    /// Median cycle CPU time without claims, ms.
    pub plain_cpu_ms: f64,
    /// Median cycle CPU time with the claims, ms.
    pub claims_cpu_ms: f64,
    /// Median wall time of the cycle without claims, ms.
    pub plain_wall_ms: f64,
    /// Median wall time of the cycle with the claims, ms.
    pub claims_wall_ms: f64,
    /// `claims_cpu_ms / plain_cpu_ms` (issue 22's bound: 1.3).
    pub ratio: f64,
    /// Pods bound without and with claims.
    pub binds: (usize, usize),
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// One cycle on `c`: (CPU ms, wall ms, binds).
fn cycle(arena: &mut bumpalo::Bump, c: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> (f64, f64, usize) {
    arena.reset();
    let (t, cpu) = (Instant::now(), process_cpu_ms());
    let d = run_cycle_in(arena, c, conf, opts);
    let wall = t.elapsed().as_secs_f64() * 1e3;
    let cpu = process_cpu_ms().zip(cpu).map(|(b, a)| b - a).unwrap_or(wall);
    (cpu, wall, d.binds.len())
}

/// Runs the volume comparison with `args`' shape (nodes, pods, gang, queues, seed, threads);
/// returns the exit code.
pub fn run(args: &BenchArgs, conf: &SchedulerConf) -> u8 {
    let spec = WorkloadSpec {
        nodes: args.nodes,
        pods: args.pods.unwrap_or(args.nodes * args.pods_per_node),
        gang: args.gang.max(1),
        queues: args.queues.max(1),
        variant: Variant::Identical,
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
    let build = |every: usize| {
        let mut c = Cluster::new();
        for d in generate(&spec) {
            if let Err(e) = c.apply(d) {
                eprintln!("warning: {e}");
            }
        }
        zonal(&mut c, VolumeMix { every, ..VolumeMix::default() });
        c.prepare(&conf.options.default_queue);
        c
    };
    let every = args.claims_every.max(1);
    let (plain, claims) = (build(0), build(every));
    let with_claims = claims.pods().filter(|(_, p)| !p.spec.volume_claims.is_empty()).count();
    let opts = CycleOptions { seed: args.seed, cycle: 1, now_ms: 0 };
    let rounds = args.volume_rounds.max(1);
    let report = pool.install(|| {
        let mut arena = bumpalo::Bump::new();
        // One untimed cycle each: first touch of the arena and the caches.
        let (_, _, b0) = cycle(&mut arena, &plain, conf, &opts);
        let (_, _, b1) = cycle(&mut arena, &claims, conf, &opts);
        let (mut pc, mut pw, mut cc, mut cw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for r in 0..rounds {
            for side in [r % 2, 1 - r % 2] {
                let (c, cpu, wall) = if side == 0 { (&plain, &mut pc, &mut pw) } else { (&claims, &mut cc, &mut cw) };
                let (x, w, _) = cycle(&mut arena, c, conf, &opts);
                cpu.push(x);
                wall.push(w);
            }
        }
        let (plain_cpu_ms, claims_cpu_ms) = (median(pc), median(cc));
        VolumesReport {
            nodes: spec.nodes,
            pods: spec.pods,
            pods_with_claims: with_claims,
            rounds,
            plain_cpu_ms,
            claims_cpu_ms,
            plain_wall_ms: median(pw),
            claims_wall_ms: median(cw),
            ratio: if plain_cpu_ms > 0.0 { claims_cpu_ms / plain_cpu_ms } else { 0.0 },
            binds: (b0, b1),
        }
    });
    match args.output {
        BenchOutput::Json => match serde_json::to_string(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: {e}");
                return 1;
            }
        },
        BenchOutput::Text => println!(
            "{} nodes, {} pending pods (identical, zone-labelled nodes), {threads} thread(s), median of {} alternating rounds (CPU time): \
             without claims {:.1} ms ({} binds), {} pods with bound zonal claims {:.1} ms ({} binds): {:.2}x (wall {:.1} / {:.1} ms)",
            report.nodes,
            report.pods,
            report.rounds,
            report.plain_cpu_ms,
            report.binds.0,
            report.pods_with_claims,
            report.claims_cpu_ms,
            report.binds.1,
            report.ratio,
            report.plain_wall_ms,
            report.claims_wall_ms
        ),
    }
    0
}
