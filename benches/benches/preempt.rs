//! Criterion bench of the preempt cycle (issue 11): a full cluster — every node's CPUs taken by
//! low-priority Running pods — and a high-priority gang arriving in the same queue, so allocate
//! places nothing and preempt evicts victims and pipelines every member of the gang. One
//! iteration is a whole cycle of [`basalt_benches::PREEMPT_CONF`] (`enqueue, allocate,
//! preempt`; session open and close included). Name: `preempt/n<nodes>_p<running>_gang<gang>`.
//!
//! Sizes: `BASALT_BENCH_NODES` (comma list, default `1000,10000`; 10 running pods per node), gang
//! `BASALT_BENCH_GANG` (default 10). The per-phase split of one cycle is printed by
//! `cargo run --release -p basalt-benches --example preempt_cycle`.

use basalt_benches::{preempt_cluster, PREEMPT_CONF};
use basalt_core::conf::SchedulerConf;
use basalt_core::scheduler::run_cycle_in;
use basalt_core::CycleOptions;
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn bench(c: &mut Criterion) {
    let conf = SchedulerConf::parse(PREEMPT_CONF).expect("the bench conf parses").0;
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let nodes: Vec<usize> = std::env::var("BASALT_BENCH_NODES")
        .unwrap_or_else(|_| "1000,10000".into())
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    let gang: usize = std::env::var("BASALT_BENCH_GANG").ok().and_then(|g| g.parse().ok()).unwrap_or(10);
    let mut g = c.benchmark_group("preempt");
    g.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_millis(500));
    for n in nodes {
        let (mut cl, name) = preempt_cluster(n, 10, gang);
        cl.prepare(&conf.options.default_queue);
        let mut arena = bumpalo::Bump::new();
        let d = run_cycle_in(&arena, &cl, &conf, &opts);
        assert_eq!(d.pipelined.len(), gang, "{name}: the whole gang is pipelined");
        g.bench_function(name, |b| {
            b.iter(|| {
                arena.reset();
                run_cycle_in(&arena, &cl, &conf, &opts).evictions.len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
