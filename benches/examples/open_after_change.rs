//! Times session open on a seeded shape three ways and prints them: cold (no kept layout),
//! unchanged (the kept layout is current) and after a live change (a [`Churn`] round of 1 % of
//! the pods applied, then `Cluster::prepare` patches the kept layout and the session opens),
//! with the patch alone beside it. A profiling target:
//! `cargo run --release -p basalt-benches --example open_after_change -- NODES [PODS] [ROUNDS]`.

use basalt_core::conf::SchedulerConf;
use basalt_core::framework::Session;
use basalt_core::workload::{Churn, Variant, WorkloadSpec};
use basalt_core::CycleOptions;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let pods: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(nodes * 10);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let spec = WorkloadSpec { nodes, pods, gang: 10, queues: 4, variant: Variant::Identical, seed: 1 };
    let mut c = basalt_benches::cluster(&spec);
    let conf = SchedulerConf::default();
    let dq = conf.options.default_queue.clone();
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let mut arena = bumpalo::Bump::new();
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let cold = median(
        (0..5)
            .map(|_| {
                arena.reset();
                let t = Instant::now();
                let s = Session::open(&arena, &c, &conf, &opts, &basalt_core::plugins::REGISTRY);
                std::hint::black_box(s.state.tasks.len);
                ms(t)
            })
            .collect(),
    );
    c.prepare(&dq);
    let unchanged = median(
        (0..5)
            .map(|_| {
                arena.reset();
                let t = Instant::now();
                let s = Session::open(&arena, &c, &conf, &opts, &basalt_core::plugins::REGISTRY);
                std::hint::black_box(s.state.tasks.len);
                ms(t)
            })
            .collect(),
    );
    let mut churn = Churn::new(&c, &spec);
    let (mut patch, mut changed, mut deltas) = (Vec::new(), Vec::new(), 0);
    for _ in 0..rounds {
        let batch = churn.round(&c, pods / 100);
        deltas += batch.len();
        for d in batch {
            c.apply(d).expect("churn deltas are valid");
        }
        arena.reset();
        let t = Instant::now();
        c.prepare(&dq);
        patch.push(ms(t));
        let s = Session::open(&arena, &c, &conf, &opts, &basalt_core::plugins::REGISTRY);
        std::hint::black_box(s.state.tasks.len);
        changed.push(ms(t));
    }
    println!(
        "{nodes} nodes, {pods} pods: open cold {cold:.2} ms, unchanged {unchanged:.2} ms, after a 1 % change {:.2} ms (patch {:.2} ms; {} deltas per round)",
        median(changed),
        median(patch),
        deltas / rounds.max(1)
    );
}
