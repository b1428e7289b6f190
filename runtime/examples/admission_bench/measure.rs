//! Per-request latencies of one bench step, its wall time, and a process's CPU seconds.

use futures::stream::{self, StreamExt};
use std::future::Future;
use std::time::{Duration, Instant};

/// The latencies of one step's requests and the step's wall time.
pub struct Stats {
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Stats {
    /// Requests measured.
    pub fn count(&self) -> usize {
        self.latencies.len()
    }

    /// Requests per second of wall time.
    pub fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// The `q` quantile (0-1) of the latencies, in milliseconds (nearest rank).
    pub fn percentile_ms(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let mut v = self.latencies.clone();
        v.sort();
        let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
        v[rank - 1].as_secs_f64() * 1e3
    }
}

/// Runs `call(i)` for `i` in `0..n`, `concurrency` at a time, timing each.
///
/// Errors: the first call that failed, naming its index.
pub async fn timed<F, Fut>(n: usize, concurrency: usize, call: F) -> Result<Stats, String>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let start = Instant::now();
    let results: Vec<Result<Duration, String>> = stream::iter(0..n)
        .map(|i| {
            let fut = call(i);
            async move {
                let t = Instant::now();
                fut.await.map_err(|e| format!("request {i}: {e}"))?;
                Ok(t.elapsed())
            }
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let wall = start.elapsed();
    let latencies = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(Stats { latencies, wall })
}

/// User + system CPU seconds of a running process (`/proc/PID/stat`), `None` when unreadable.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}
