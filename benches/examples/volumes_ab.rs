//! Issue 22's speed check: one default-conf cycle on a seeded shape with zone-labelled nodes,
//! without claims and with a tenth of the pending pods carrying bound zonal claims; prints
//! the best of `RUNS` (3) for each and their ratio
//! (`cargo run --release -p basalt-benches --example volumes_ab -- NODES PODS`). `ONLY=plain`
//! or `ONLY=claims` runs one side (to profile it alone).

use basalt_core::conf::SchedulerConf;
use basalt_core::workload::{Variant, WorkloadSpec};
use basalt_core::CycleOptions;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn best(c: &basalt_core::cluster::Cluster, conf: &SchedulerConf, runs: usize) -> (Duration, usize) {
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let mut best = Duration::MAX;
    let mut binds = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let d = basalt_core::scheduler::run_cycle(c, conf, &opts);
        best = best.min(t.elapsed());
        binds = d.binds.len();
    }
    (best, binds)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let pods: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(nodes * 10);
    let runs: usize = std::env::var("RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let spec = WorkloadSpec { nodes, pods, gang: 10, queues: 4, variant: Variant::Identical, seed: 1 };
    let conf = SchedulerConf::default();
    let build = |every: usize| {
        let mut c = basalt_benches::cluster(&spec);
        basalt_benches::volumes::zonal(&mut c, every);
        c.prepare(&conf.options.default_queue);
        c
    };
    let only = std::env::var("ONLY").unwrap_or_default();
    if only == "plain" || only == "claims" {
        let c = build(if only == "plain" { 0 } else { 10 });
        let (t, binds) = best(&c, &conf, runs);
        println!("{}: {only} {:.1} ms ({binds} binds)", basalt_benches::shape_name(&spec), t.as_secs_f64() * 1e3);
        return;
    }
    let (plain, claims) = (build(0), build(10));
    let (a, ba) = best(&plain, &conf, runs);
    let (b, bb) = best(&claims, &conf, runs);
    println!(
        "{}: without claims {:.1} ms ({ba} binds), a tenth with bound zonal claims {:.1} ms ({bb} binds): {:.2}x",
        basalt_benches::shape_name(&spec),
        a.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        b.as_secs_f64() / a.as_secs_f64()
    );
}
