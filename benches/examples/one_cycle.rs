//! Runs one default-conf cycle on a seeded shape and prints the time of each phase (session
//! open, every action, close): a profiling target
//! (`cargo run --release -p basalt-benches --example one_cycle -- NODES [VARIANT] [PODS]`).

use basalt_core::actions;
use basalt_core::conf::SchedulerConf;
use basalt_core::framework::Session;
use basalt_core::workload::{Variant, WorkloadSpec};
use basalt_core::CycleOptions;
use std::time::Instant;

// The allocator the `basalt` binary uses, so the numbers match it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let variant = args.next().and_then(|v| Variant::parse(&v)).unwrap_or(Variant::Identical);
    let pods: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(nodes * 10);
    let spec = WorkloadSpec { nodes, pods, gang: 10, queues: 4, variant, seed: 1 };
    let c = basalt_benches::cluster(&spec);
    let conf = SchedulerConf::default();
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    // BASALT_REPEAT=k runs the cycle k times (one report each), for profilers.
    let repeat: usize = std::env::var("BASALT_REPEAT").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    for _ in 0..repeat {
        one(&c, &conf, &opts, &spec);
    }
}

fn one(c: &basalt_core::cluster::Cluster, conf: &SchedulerConf, opts: &CycleOptions, spec: &WorkloadSpec) {
    let arena = bumpalo::Bump::new();
    let start = Instant::now();
    let mut ssn = Session::open(&arena, c, conf, opts, &basalt_core::plugins::REGISTRY);
    let mut phases = vec![("open".to_string(), start.elapsed())];
    for a in &conf.actions {
        let t = Instant::now();
        actions::execute(*a, &mut ssn);
        phases.push((format!("{a:?}").to_lowercase(), t.elapsed()));
    }
    let t = Instant::now();
    let d = ssn.close();
    phases.push(("close".to_string(), t.elapsed()));
    let parts: Vec<String> = phases.iter().map(|(n, d)| format!("{n} {:.1} ms", d.as_secs_f64() * 1e3)).collect();
    println!(
        "{}: {} binds in {:.1} ms ({})",
        basalt_benches::shape_name(spec),
        d.binds.len(),
        start.elapsed().as_secs_f64() * 1e3,
        parts.join(", ")
    );
}
