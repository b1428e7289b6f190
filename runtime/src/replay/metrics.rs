//! A [`RunRecord`] → the numbers of the report ([`RunResults`], [`Timings`]): counts, wait and
//! completion-time statistics, makespan, time-weighted utilization and queue shares, Jain's
//! index. Pure functions; all times in the output are seconds.
//!
//! Time weighting: a usage point holds until the next one; a cycle sample (deserved shares,
//! Jain's index) holds until the next cycle. Means are taken over the makespan window (first
//! arrival → last completion; the end of the replay when nothing completed).

use super::fairness;
use super::record::{RunRecord, DIM_NAMES, NDIMS};
use super::report::{PodCounts, QueueResult, ReasonCount, RunResults, Stats, Timings, Utilization};
use super::workload::VirtualMs;
use std::collections::BTreeMap;

/// Never-scheduled reasons listed at most.
pub const TOP_REASONS: usize = 5;

/// Nearest-rank percentile `p` (0–100) of sorted `v`.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Statistics of `v` (any order); of an empty `v` only the count (0).
pub fn stats(mut v: Vec<f64>) -> Stats {
    if v.is_empty() {
        return Stats::default();
    }
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    Stats {
        count: v.len(),
        mean: Some(mean),
        p50: Some(percentile(&v, 50.0)),
        p90: Some(percentile(&v, 90.0)),
        p99: Some(percentile(&v, 99.0)),
        max: Some(v[v.len() - 1]),
    }
}

fn secs(ms: VirtualMs) -> f64 {
    ms as f64 / 1000.0
}

/// Integrates a step function given as (time, value) points over `[from, to]`; a point holds
/// until the next. Returns the mean (`None` for an empty window).
fn step_mean<'a>(points: impl Iterator<Item = (VirtualMs, f64)> + 'a, from: VirtualMs, to: VirtualMs) -> Option<f64> {
    if to <= from {
        return None;
    }
    let mut area = 0.0;
    let mut prev: Option<(VirtualMs, f64)> = None;
    for (t, v) in points {
        if let Some((pt, pv)) = prev {
            let (a, b) = (pt.max(from), t.min(to));
            if b > a {
                area += pv * (b - a) as f64;
            }
        }
        prev = Some((t, v));
    }
    if let Some((pt, pv)) = prev {
        let a = pt.max(from);
        if to > a {
            area += pv * (to - a) as f64;
        }
    }
    Some(area / (to - from) as f64)
}

/// The makespan window: (first arrival, last completion or the end).
pub fn window(rec: &RunRecord) -> (VirtualMs, VirtualMs) {
    let first = rec.tasks.iter().filter_map(|t| t.arrival_ms).min().unwrap_or(0);
    let last = rec.tasks.iter().filter_map(|t| t.done_ms).max();
    (first, last.unwrap_or(rec.end_ms).max(first))
}

/// The deterministic results of `rec`.
pub fn results(rec: &RunRecord) -> RunResults {
    let mut pods = PodCounts::default();
    let mut waits = Vec::new();
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    let nq = rec.queues.len();
    let mut q_pods = vec![0usize; nq];
    let mut q_sched = vec![0usize; nq];
    let mut q_wait = vec![0.0f64; nq];
    for t in &rec.tasks {
        let Some(arrival) = t.arrival_ms else { continue };
        pods.submitted += 1;
        if let Some(q) = t.queue {
            q_pods[q] += 1;
        }
        if t.evicted_ms.is_some() {
            pods.evicted += 1;
        }
        match (t.bind_ms, t.pre_placed) {
            (Some(_), true) => pods.pre_placed += 1,
            (Some(b), false) => {
                pods.scheduled += 1;
                let w = secs(b - arrival);
                waits.push(w);
                if let Some(q) = t.queue {
                    q_sched[q] += 1;
                    q_wait[q] += w;
                }
            }
            (None, _) if t.evicted_ms.is_none() => {
                pods.never_scheduled += 1;
                *reasons.entry(t.last_reason.as_deref().unwrap_or("no reason recorded (never considered)")).or_default() += 1;
            }
            (None, _) => {}
        }
        if t.done_ms.is_some() {
            pods.completed += 1;
        } else if t.bind_ms.is_some() && t.evicted_ms.is_none() {
            pods.running_at_end += 1;
        }
    }
    let mut top: Vec<ReasonCount> = reasons.into_iter().map(|(m, n)| ReasonCount { pods: n, message: m.to_string() }).collect();
    top.sort_by(|a, b| b.pods.cmp(&a.pods).then_with(|| a.message.cmp(&b.message)));
    top.truncate(TOP_REASONS);

    let jct: Vec<f64> = rec.jobs.iter().filter_map(|j| j.done_ms.map(|d| secs(d - j.arrival_ms))).collect();
    let (from, to) = window(rec);
    let any_done = rec.tasks.iter().any(|t| t.done_ms.is_some());

    let utilization = (0..NDIMS)
        .map(|d| {
            let total = rec.total[d] as f64;
            let frac = |v: i64| v as f64 / total;
            let measured = total > 0.0;
            Utilization {
                resource: DIM_NAMES[d].to_string(),
                mean: step_mean(rec.usage.iter().map(|p| (p.t_ms, frac(p.used[d]))), from, to).filter(|_| measured),
                peak: measured.then(|| rec.usage.iter().map(|p| frac(p.used[d])).fold(0.0, f64::max)),
            }
        })
        .collect();

    let weights: Vec<i32> = rec.queues.iter().map(|q| q.weight).collect();
    let per_sample: Vec<fairness::Fairness> =
        rec.samples.iter().map(|s| fairness::instant(&rec.total, &weights, &s.queue_used, &s.queue_demand)).collect();
    let queues = rec
        .queues
        .iter()
        .enumerate()
        .map(|(q, info)| QueueResult {
            name: info.name.clone(),
            weight: info.weight,
            pods: q_pods[q],
            scheduled: q_sched[q],
            wait_mean_s: (q_sched[q] > 0).then(|| q_wait[q] / q_sched[q] as f64),
            share_mean: step_mean(
                rec.usage.iter().map(|p| (p.t_ms, fairness::dominant_share(&fairness::as_f64(&p.queue_used[q]), &rec.total))),
                from,
                to,
            ),
            deserved_mean: step_mean(rec.samples.iter().zip(&per_sample).map(|(s, f)| (s.t_ms, f.shares[q].1)), from, to),
        })
        .collect();
    let jain_index = jain_mean(rec, &per_sample, from, to);

    RunResults {
        pods,
        jobs_submitted: rec.jobs.len(),
        jobs_completed: rec.jobs.iter().filter(|j| j.done_ms.is_some()).count(),
        never_scheduled_reasons: top,
        wait_s: stats(waits),
        job_completion_s: stats(jct),
        makespan_s: any_done.then(|| secs(to - from)),
        utilization,
        gpu_resource: rec.gpu_resource.clone(),
        queues,
        jain_index,
        preemptions: rec
            .evictions
            .iter()
            .filter(|r| r.as_str() == "preempt" || r.starts_with("preempt by ") || r.as_str() == "gangpreempt")
            .count(),
        evictions: rec.evictions.len(),
        cycles: rec.samples.len(),
        cycles_with_binds: rec.samples.iter().filter(|s| s.binds > 0).count(),
        end_s: secs(rec.end_ms),
        apply_issues: rec.apply_issues.clone(),
        topology: None,
    }
}

/// Time-weighted mean of Jain's index over the time it is defined within `[from, to]`.
fn jain_mean(rec: &RunRecord, per_sample: &[fairness::Fairness], from: VirtualMs, to: VirtualMs) -> Option<f64> {
    let (mut area, mut time) = (0.0, 0.0);
    for (i, s) in rec.samples.iter().enumerate() {
        let Some(j) = per_sample[i].jain else { continue };
        let end = rec.samples.get(i + 1).map(|n| n.t_ms).unwrap_or(to).min(to);
        let start = s.t_ms.max(from);
        if end > start {
            area += j * (end - start) as f64;
            time += (end - start) as f64;
        }
    }
    if time > 0.0 {
        Some(area / time)
    } else {
        // Defined only at instants (e.g. a single cycle): the plain mean of those.
        let v: Vec<f64> = per_sample.iter().filter_map(|p| p.jain).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// Wall-clock timings of `rec`, with the replay's total wall time `total_s`.
pub fn timings(rec: &RunRecord, total_s: f64) -> Timings {
    let ms: Vec<f64> = rec.cycle_wall_ns.iter().map(|&n| n as f64 / 1e6).collect();
    let s = stats(ms);
    Timings {
        cycle_mean_ms: s.mean,
        cycle_p50_ms: s.p50,
        cycle_p99_ms: s.p99,
        cycle_max_ms: s.max,
        scheduler_total_s: rec.cycle_wall_ns.iter().map(|&n| n as f64 / 1e9).sum(),
        replay_total_s: total_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_and_step_means() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 5.0);
        assert_eq!(percentile(&v, 90.0), 9.0);
        assert_eq!(percentile(&v, 99.0), 10.0);
        let s = stats(vec![3.0, 1.0, 2.0]);
        assert_eq!((s.count, s.mean, s.p50, s.max), (3, Some(2.0), Some(2.0), Some(3.0)));
        // 1.0 on [0, 10), 0.0 on [10, 20]: mean 0.5.
        let pts = [(0, 1.0), (10, 0.0)];
        assert_eq!(step_mean(pts.iter().copied(), 0, 20), Some(0.5));
        assert_eq!(step_mean(pts.iter().copied(), 5, 15), Some(0.5));
    }

    #[test]
    fn nothing_to_measure_is_none_not_zero() {
        assert_eq!(stats(Vec::new()), Stats { count: 0, mean: None, p50: None, p90: None, p99: None, max: None });
        assert_eq!(step_mean([(0, 1.0)].into_iter(), 10, 10), None, "an empty window");
        let t = timings(&RunRecord::default(), 0.5);
        assert_eq!((t.cycle_mean_ms, t.cycle_p99_ms, t.cycle_max_ms), (None, None, None), "no cycle ran");
    }
}
