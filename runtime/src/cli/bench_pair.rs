//! A paired comparison for `basalt bench` (`--variant volumes`, `--variant devices`): two
//! cluster/conf pairs of the same shape timed alternately in this process, `rounds` cycles each
//! (the order flips every round), by the CPU time of the process's threads (not the wall clock,
//! which counts waits for a core on a shared machine). Medians and their ratio are returned.

use super::bench::{process_cpu_ms, BenchArgs, BenchOutput};
use basalt_core::conf::SchedulerConf;
use basalt_core::scheduler::run_cycle_in;
use basalt_core::{Cluster, CycleOptions};
use std::time::Instant;

/// What one paired comparison measured: side `a` is the baseline, `b` the variant.
#[derive(Clone, Debug, PartialEq)]
pub struct PairTimes {
    /// Timed cycles per side.
    pub rounds: usize,
    /// Median cycle CPU time of side a, ms.
    pub a_cpu_ms: f64,
    /// Median cycle CPU time of side b, ms.
    pub b_cpu_ms: f64,
    /// Median wall time of side a, ms.
    pub a_wall_ms: f64,
    /// Median wall time of side b, ms.
    pub b_wall_ms: f64,
    /// `b_cpu_ms / a_cpu_ms` (0 when a took no time).
    pub ratio: f64,
    /// Pods bound by one cycle of a and of b.
    pub binds: (usize, usize),
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// One cycle on `c`: (CPU ms, wall ms, binds).
fn cycle(arena: &mut bumpalo::Bump, c: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> (f64, f64, usize) {
    arena.reset();
    let (t, cpu) = (Instant::now(), process_cpu_ms());
    let d = run_cycle_in(arena, c, conf, opts);
    let wall = t.elapsed().as_secs_f64() * 1e3;
    let cpu = process_cpu_ms().zip(cpu).map(|(b, a)| b - a).unwrap_or(wall);
    (cpu, wall, d.binds.len())
}

/// The worker threads `args` asks for (default: all cores).
pub fn threads(args: &BenchArgs) -> usize {
    args.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1)
}

/// Times `a` and `b` alternately on `threads` rayon workers, after one untimed cycle each
/// (first touch of the arena and the caches). Errors: the thread pool cannot be built.
pub fn measure(
    threads: usize,
    a: (&Cluster, &SchedulerConf),
    b: (&Cluster, &SchedulerConf),
    opts: &CycleOptions,
    rounds: usize,
) -> Result<PairTimes, String> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| format!("--threads {threads}: {e}"))?;
    let rounds = rounds.max(1);
    Ok(pool.install(|| {
        let mut arena = bumpalo::Bump::new();
        let (_, _, b0) = cycle(&mut arena, a.0, a.1, opts);
        let (_, _, b1) = cycle(&mut arena, b.0, b.1, opts);
        let (mut ac, mut aw, mut bc, mut bw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for r in 0..rounds {
            for side in [r % 2, 1 - r % 2] {
                let ((c, conf), cpu, wall) = if side == 0 { (a, &mut ac, &mut aw) } else { (b, &mut bc, &mut bw) };
                let (x, w, _) = cycle(&mut arena, c, conf, opts);
                cpu.push(x);
                wall.push(w);
            }
        }
        let (a_cpu_ms, b_cpu_ms) = (median(ac), median(bc));
        PairTimes {
            rounds,
            a_cpu_ms,
            b_cpu_ms,
            a_wall_ms: median(aw),
            b_wall_ms: median(bw),
            ratio: if a_cpu_ms > 0.0 { b_cpu_ms / a_cpu_ms } else { 0.0 },
            binds: (b0, b1),
        }
    }))
}

/// Prints a paired comparison's `report` as one JSON object, or as the line `text` writes;
/// returns the exit code (1 when the report cannot be serialized).
pub fn print<R: serde::Serialize>(output: BenchOutput, report: &R, text: impl FnOnce(&R) -> String) -> u8 {
    match output {
        BenchOutput::Json => match serde_json::to_string(report) {
            Ok(s) => {
                println!("{s}");
                0
            }
            Err(e) => {
                eprintln!("error: {e}");
                1
            }
        },
        BenchOutput::Text => {
            println!("{}", text(report));
            0
        }
    }
}
