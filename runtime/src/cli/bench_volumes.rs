//! `basalt bench --variant volumes` (issue 22's speed check): the `identical` shape with zone
//! labels on every node, timed without claims and with every `--claims-every`-th pending pod
//! (default a tenth) carrying a claim bound to a zonal disk (a PV labelled
//! `topology.kubernetes.io/zone`, [`basalt_core::workload_volumes`]), in the same process on the
//! same conf and seed, `--volume-rounds` alternating rounds each ([`super::bench_pair`]); the
//! CPU-time medians and their ratio are printed.

use super::bench::BenchArgs;
use basalt_core::conf::SchedulerConf;
use basalt_core::workload::{generate, Variant, WorkloadSpec};
use basalt_core::workload_volumes::{zonal, VolumeMix};
use basalt_core::{Cluster, CycleOptions};
use serde::Serialize;

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
    let threads = super::bench_pair::threads(args);
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
    let t = match super::bench_pair::measure(threads, (&plain, conf), (&claims, conf), &opts, args.volume_rounds) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let report = VolumesReport {
        nodes: spec.nodes,
        pods: spec.pods,
        pods_with_claims: with_claims,
        rounds: t.rounds,
        plain_cpu_ms: t.a_cpu_ms,
        claims_cpu_ms: t.b_cpu_ms,
        plain_wall_ms: t.a_wall_ms,
        claims_wall_ms: t.b_wall_ms,
        ratio: t.ratio,
        binds: t.binds,
    };
    super::bench_pair::print(args.output, &report, |report| {
        format!(
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
        )
    })
}
