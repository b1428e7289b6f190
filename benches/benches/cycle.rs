//! Criterion benches of one scheduling cycle of Volcano's default conf (enqueue, allocate,
//! backfill; session open and close included) and of the session open alone, on seeded
//! clusters with 10 pending pods per node in gang jobs of 10 (plus the 50,000 nodes /
//! 100,000 pods shape). Names: `allocate/n<nodes>_p<pods>_gang<gang>[_<variant>]`,
//! `session_open/{cold,unchanged,after_change}/<shape>`: session open with no kept layout
//! (computed from the records), with a kept layout on an unchanged cluster copy (columns
//! copied), and after a live cycle's changes (the kept layout patched, then the open; see
//! `basalt_core::workload::Churn` for the change: 1 % of the pods created, deleted or bound,
//! plus the previous cycle's binds and PodGroup status updates).
//!
//! Sizes: `BASALT_BENCH_NODES` (comma list, default `1000,5000,10000,50000`). Variants:
//! `BASALT_BENCH_VARIANTS` (default `identical,selectors,taints,anti-affinity,distinct`). Shapes
//! whose one cycle takes minutes are capped by default — distinct pods above 1,000 nodes (every
//! pod scans and scores every node) and anti-affinity above 10,000 nodes; `BASALT_BENCH_ALL=1`
//! lifts the caps. `basalt bench` times any single shape without criterion.

use basalt_benches::{cluster, shape_name};
use basalt_core::conf::SchedulerConf;
use basalt_core::framework::Session;
use basalt_core::scheduler::run_cycle_in;
use basalt_core::workload::{Churn, Variant, WorkloadSpec};
use basalt_core::CycleOptions;
use criterion::{criterion_group, criterion_main, Criterion};
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn list(var: &str, default: &str) -> Vec<String> {
    std::env::var(var).unwrap_or_else(|_| default.to_string()).split(',').map(|x| x.trim().to_string()).collect()
}

fn sizes() -> Vec<usize> {
    list("BASALT_BENCH_NODES", "1000,5000,10000,50000").iter().filter_map(|x| x.parse().ok()).collect()
}

fn spec(nodes: usize, pods: usize, variant: Variant) -> WorkloadSpec {
    WorkloadSpec { nodes, pods, gang: 10, queues: 4, variant, seed: 1 }
}

/// The cycle shapes to run, in order.
fn shapes() -> Vec<WorkloadSpec> {
    let all = std::env::var("BASALT_BENCH_ALL").is_ok_and(|v| v == "1");
    let variants: Vec<Variant> = list("BASALT_BENCH_VARIANTS", "identical,selectors,taints,anti-affinity,distinct")
        .iter()
        .filter_map(|v| Variant::parse(v))
        .collect();
    let mut out = Vec::new();
    for &v in &variants {
        for &n in &sizes() {
            let cap = match v {
                Variant::Distinct => 1_000,
                Variant::AntiAffinity => 10_000,
                _ => usize::MAX,
            };
            if all || n <= cap {
                out.push(spec(n, n * 10, v));
            }
        }
        if v == Variant::Identical && sizes().contains(&50_000) {
            out.push(spec(50_000, 100_000, v));
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let conf = SchedulerConf::default();
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let mut g = c.benchmark_group("allocate");
    g.sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_millis(500));
    for s in shapes() {
        let mut cl = cluster(&s);
        cl.prepare(&conf.options.default_queue);
        let mut arena = bumpalo::Bump::new();
        g.bench_function(shape_name(&s), |b| {
            b.iter(|| {
                arena.reset();
                run_cycle_in(&arena, &cl, &conf, &opts).binds.len()
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("session_open");
    g.sample_size(10).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_millis(500));
    for n in sizes() {
        let s = spec(n, n * 10, Variant::Identical);
        let mut cl = cluster(&s);
        let mut arena = bumpalo::Bump::new();
        g.bench_function(format!("cold/{}", shape_name(&s)), |b| {
            b.iter(|| {
                arena.reset();
                let ssn = Session::open(&arena, &cl, &conf, &opts, &basalt_core::plugins::REGISTRY);
                ssn.state.tasks.len
            })
        });
        // An unchanged cluster copy keeps its layout: the open only copies columns.
        cl.prepare(&conf.options.default_queue);
        g.bench_function(format!("unchanged/{}", shape_name(&s)), |b| {
            b.iter(|| {
                arena.reset();
                let ssn = Session::open(&arena, &cl, &conf, &opts, &basalt_core::plugins::REGISTRY);
                ssn.state.tasks.len
            })
        });
        // A live cycle: a churn round (1 % of the pods created, deleted or bound, plus the
        // previous cycle's binds and PodGroup status updates) is applied untimed, then the
        // timed part patches the kept layout (`prepare`) and opens the session.
        let mut churn = Churn::new(&cl, &s);
        let changed = s.pods / 100;
        for _ in 0..3 {
            // Warm-up rounds: the first has no previous binds to confirm.
            for d in churn.round(&cl, changed) {
                cl.apply(d).expect("churn deltas are valid");
            }
            cl.prepare(&conf.options.default_queue);
        }
        g.bench_function(format!("after_change/{}", shape_name(&s)), |b| {
            b.iter_custom(|iters| {
                let mut spent = Duration::ZERO;
                for _ in 0..iters {
                    for d in churn.round(&cl, changed) {
                        cl.apply(d).expect("churn deltas are valid");
                    }
                    arena.reset();
                    let t = Instant::now();
                    cl.prepare(&conf.options.default_queue);
                    let ssn = Session::open(&arena, &cl, &conf, &opts, &basalt_core::plugins::REGISTRY);
                    std::hint::black_box(ssn.state.tasks.len);
                    spent += t.elapsed();
                }
                spent
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
