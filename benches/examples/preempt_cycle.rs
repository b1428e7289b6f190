//! One preempt cycle on a full cluster with a high-priority gang arriving (issue 11), split by
//! phase: session open, each action, close; CPU time of the one worker thread
//! (`/proc/thread-self/schedstat`, so a busy machine's other cores do not count) and wall time,
//! five rounds on the same cluster copy.
//! `cargo run --release -p basalt-benches --example preempt_cycle -- [NODES] [PODS_PER_NODE] [GANG]`
//! (defaults 10000, 10, 10: 100,000 running pods).

use basalt_benches::{preempt_cluster, PREEMPT_CONF};
use basalt_core::conf::SchedulerConf;
use basalt_core::scheduler::{run_cycle_observed, CyclePhase};
use basalt_core::CycleOptions;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CPU time of the calling thread so far, nanoseconds (0 where `/proc` does not say).
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().ok());
    let nodes = args.next().flatten().unwrap_or(10_000);
    let per_node = args.next().flatten().unwrap_or(10);
    let gang = args.next().flatten().unwrap_or(10);
    let conf = SchedulerConf::parse(PREEMPT_CONF).expect("the bench conf parses").0;
    let t = Instant::now();
    let (mut c, name) = preempt_cluster(nodes, per_node, gang);
    c.prepare(&conf.options.default_queue);
    println!("{name}: cluster built in {:.1} s", t.elapsed().as_secs_f64());
    let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(1).build() else {
        eprintln!("error: cannot start a worker thread");
        std::process::exit(1);
    };
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    pool.install(|| {
        for round in 0..5 {
            let arena = bumpalo::Bump::new();
            let mut phases: Vec<(String, f64)> = Vec::new();
            let (mut mark, start, wall) = (cpu_ns(), cpu_ns(), Instant::now());
            let d = run_cycle_observed(&arena, &c, &conf, &opts, |p| {
                let label = match p {
                    CyclePhase::Opened => "open".to_string(),
                    CyclePhase::ActionDone(a) => a.name().to_string(),
                    CyclePhase::Closed => "close".to_string(),
                    _ => return,
                };
                let now = cpu_ns();
                phases.push((label, (now - mark) as f64 / 1e6));
                mark = now;
            });
            let total = (cpu_ns() - start) as f64 / 1e6;
            let split: Vec<String> = phases.iter().map(|(l, ms)| format!("{l} {ms:.1}")).collect();
            println!(
                "round {round}: {total:.1} ms CPU ({:.1} ms wall): {}; {} evicted, {} pipelined, {} bound",
                wall.elapsed().as_secs_f64() * 1e3,
                split.join(", "),
                d.evictions.len(),
                d.pipelined.len(),
                d.binds.len()
            );
        }
    });
}
