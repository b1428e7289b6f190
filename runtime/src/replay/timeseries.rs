//! `--timeseries FILE`: one CSV row per cycle per conf — time, binds, pending and running pods,
//! utilization per resource, then each queue's dominant share and deserved share, and Jain's
//! index. Fractions are 0–1; time is seconds of virtual time.

use super::fairness;
use super::record::{RunRecord, DIM_NAMES, NDIMS};
use std::io::Write;

/// Writes the time series of `runs` (conf label, record) as CSV to `out`.
///
/// Errors: the writer's I/O error.
pub fn write_csv<W: Write>(out: W, runs: &[(&str, &RunRecord)]) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let queues: Vec<String> = runs.first().map(|(_, r)| r.queues.iter().map(|q| q.name.clone()).collect()).unwrap_or_default();
    let mut header: Vec<String> =
        ["conf", "time_s", "cycle", "binds", "pending", "running"].iter().map(|s| s.to_string()).collect();
    header.extend(DIM_NAMES.iter().map(|d| format!("{d}_util")));
    for q in &queues {
        header.push(format!("share:{q}"));
        header.push(format!("deserved:{q}"));
    }
    header.push("jain".into());
    w.write_record(&header)?;
    for (label, rec) in runs {
        let weights: Vec<i32> = rec.queues.iter().map(|q| q.weight).collect();
        for (i, s) in rec.samples.iter().enumerate() {
            let mut row = vec![
                label.to_string(),
                format!("{}", s.t_ms as f64 / 1000.0),
                (i + 1).to_string(),
                s.binds.to_string(),
                s.pending.to_string(),
                s.running.to_string(),
            ];
            for d in 0..NDIMS {
                let total = rec.total[d];
                row.push(if total > 0 { format!("{:.6}", s.used[d] as f64 / total as f64) } else { "0".into() });
            }
            let f = fairness::instant(&rec.total, &weights, &s.queue_used, &s.queue_demand);
            for (share, deserved) in &f.shares {
                row.push(format!("{share:.6}"));
                row.push(format!("{deserved:.6}"));
            }
            row.push(f.jain.map(|j| format!("{j:.6}")).unwrap_or_default());
            w.write_record(&row)?;
        }
    }
    w.flush()
}
