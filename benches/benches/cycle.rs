//! One scheduling cycle of Volcano's default conf (enqueue, allocate, backfill) on seeded
//! clusters with 10 pending pods per node in gang jobs of 10, and the session open alone.
//! Shapes are named `allocate/n<nodes>_p<pods>_gang<gang>`.

use basalt_benches::{cluster, shape_name};
use basalt_core::conf::SchedulerConf;
use basalt_core::scheduler::run_cycle_in;
use basalt_core::session::Session;
use basalt_core::workload::{Variant, WorkloadSpec};
use basalt_core::CycleOptions;
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

fn shapes() -> Vec<WorkloadSpec> {
    let sizes: Vec<usize> = match std::env::var("BASALT_BENCH_NODES") {
        Ok(v) => v.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) => vec![1_000, 10_000],
    };
    sizes
        .into_iter()
        .map(|n| WorkloadSpec { nodes: n, pods: n * 10, gang: 10, queues: 4, variant: Variant::Identical, seed: 1 })
        .collect()
}

fn bench(c: &mut Criterion) {
    let conf = SchedulerConf::default();
    let opts = CycleOptions { seed: 1, cycle: 1 };
    let mut g = c.benchmark_group("allocate");
    g.sample_size(10).measurement_time(Duration::from_secs(20)).warm_up_time(Duration::from_secs(1));
    for spec in shapes() {
        let cl = cluster(&spec);
        let mut arena = bumpalo::Bump::new();
        g.bench_function(shape_name(&spec), |b| {
            b.iter(|| {
                arena.reset();
                run_cycle_in(&arena, &cl, &conf, &opts)
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("session_open");
    g.sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    for spec in shapes() {
        let mut cl = cluster(&spec);
        let mut arena = bumpalo::Bump::new();
        g.bench_function(format!("cold/{}", shape_name(&spec)), |b| {
            b.iter(|| {
                arena.reset();
                let s = Session::open(&arena, &cl, &conf, &opts);
                s.state.tasks.len
            })
        });
        // An unchanged cluster copy keeps its layout: the open only copies columns.
        cl.prepare(&conf.options.default_queue);
        g.bench_function(format!("unchanged/{}", shape_name(&spec)), |b| {
            b.iter(|| {
                arena.reset();
                let s = Session::open(&arena, &cl, &conf, &opts);
                s.state.tasks.len
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
