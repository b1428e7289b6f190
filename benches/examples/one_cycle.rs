//! Runs one default-conf cycle on a seeded shape and prints its time: a profiling target
//! (`cargo run --release -p basalt-benches --example one_cycle -- NODES [VARIANT]`).

use basalt_core::conf::SchedulerConf;
use basalt_core::workload::{Variant, WorkloadSpec};
use basalt_core::{run_cycle, CycleOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let variant = args.next().and_then(|v| Variant::parse(&v)).unwrap_or(Variant::Identical);
    let spec = WorkloadSpec { nodes, pods: nodes * 10, gang: 10, queues: 4, variant, seed: 1 };
    let c = basalt_benches::cluster(&spec);
    let t = std::time::Instant::now();
    let d = run_cycle(&c, &SchedulerConf::default(), &CycleOptions { seed: 1, cycle: 1 });
    println!("{}: {} binds in {:?}", basalt_benches::shape_name(&spec), d.binds.len(), t.elapsed());
}
