//! The cycle with Basalt's default full scan against the same cycle with Volcano's adaptive node
//! sampling (`--percentage-nodes-to-find 0`), alternating, six rounds (`ROUNDS=N` for more; the
//! order flips every round), each timed as CPU time of the one worker thread
//! (`/proc/thread-self/schedstat`), so the comparison holds on a machine whose other cores are
//! busy; the last line gives each side's median
//! (`cargo run --release -p basalt-benches --example sampling_ab -- NODES [VARIANT] [PODS]`;
//! `ONLY=full` or `ONLY=sampled` runs one side, for profilers).

use basalt_core::conf::SchedulerConf;
use basalt_core::workload::{Variant, WorkloadSpec};
use basalt_core::{run_cycle, CycleOptions};

// The allocator the `basalt` binary uses, so the numbers match it.
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
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10000);
    let variant = args.next().and_then(|v| Variant::parse(&v)).unwrap_or(Variant::Identical);
    let pods: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(nodes * 10);
    let spec = WorkloadSpec { nodes, pods, gang: 10, queues: 4, variant, seed: 1 };
    let mut c = basalt_benches::cluster(&spec);
    let full = SchedulerConf::default();
    c.prepare(&full.options.default_queue);
    let mut sampled = full.clone();
    sampled.options.percentage_nodes_to_find = 0;
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let only = std::env::var("ONLY").ok();
    let Ok(pool) = rayon::ThreadPoolBuilder::new().num_threads(1).build() else {
        eprintln!("error: cannot start a worker thread");
        std::process::exit(1);
    };
    let rounds: usize = std::env::var("ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(6);
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    pool.install(|| {
        for round in 0..rounds {
            let mut sides = [("full", &full), ("sampled", &sampled)];
            if round % 2 == 1 {
                sides.reverse();
            }
            for (name, conf) in sides.into_iter().filter(|(n, _)| only.as_deref().is_none_or(|o| o == *n)) {
                let t = cpu_ns();
                let d = run_cycle(&c, conf, &opts);
                let ms = (cpu_ns() - t) as f64 / 1e6;
                times[usize::from(name == "sampled")].push(ms);
                println!("{name}: {ms:.0} ms CPU, {} bound", d.binds.len());
            }
        }
    });
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let (f, s) = (median(&mut times[0]), median(&mut times[1]));
    println!("median over {rounds} rounds: full {f:.0} ms CPU, sampled {s:.0} ms CPU");
}
