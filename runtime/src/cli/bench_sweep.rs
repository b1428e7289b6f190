//! `basalt bench --sweep --repeat R`: one point per cluster size from R runs (each in a fresh
//! process), reported as the median with the spread (smallest and largest) of the runs, so a
//! single noisy run cannot bend the fitted growth.

use super::bench::BenchReport;
use serde::{Deserialize, Serialize};

/// Runs per size when `--repeat` is not given.
pub const DEFAULT_REPEAT: usize = 3;

/// One size of a sweep: the median run, how many runs it summarises and their spread.
///
/// JSON: the [`BenchReport`] keys (the median run's, with `cycle_ms` and `session_open_ms` the
/// medians) plus `repeats`, `cycle_ms_min`, `cycle_ms_max`, `session_open_ms_min` and
/// `session_open_ms_max`. A sweep saved before repetitions existed (plain reports) reads as one
/// run per size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The median run (see [`SweepPoint::from_runs`]).
    #[serde(flatten)]
    pub report: BenchReport,
    /// Runs summarised (1 for a saved single-run sweep).
    #[serde(default = "one")]
    pub repeats: usize,
    /// Fastest cycle of the runs, ms.
    #[serde(default)]
    pub cycle_ms_min: Option<f64>,
    /// Slowest cycle of the runs, ms.
    #[serde(default)]
    pub cycle_ms_max: Option<f64>,
    /// Fastest session open of the runs, ms.
    #[serde(default)]
    pub session_open_ms_min: Option<f64>,
    /// Slowest session open of the runs, ms.
    #[serde(default)]
    pub session_open_ms_max: Option<f64>,
}

fn one() -> usize {
    1
}

/// The median of `v` (the mean of the middle two for an even count); `None` for none.
pub fn median(v: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) { (v[mid - 1] + v[mid]) / 2.0 } else { v[mid] })
}

fn min_max(v: impl Iterator<Item = f64>) -> (Option<f64>, Option<f64>) {
    v.filter(|x| x.is_finite())
        .fold((None, None), |(lo, hi), x| (Some(lo.map_or(x, |l: f64| l.min(x))), Some(hi.map_or(x, |h: f64| h.max(x)))))
}

impl SweepPoint {
    /// Summarises the runs of one size: the run with the median cycle time is the base (its
    /// counts are a real run's), `cycle_ms` and `session_open_ms` are the medians of all runs,
    /// `pods_per_s` follows the median cycle, `peak_rss_bytes` is the largest. `None` for no
    /// runs.
    pub fn from_runs(runs: &[BenchReport]) -> Option<SweepPoint> {
        let cycle = median(&runs.iter().map(|r| r.cycle_ms).collect::<Vec<_>>())?;
        let open = median(&runs.iter().map(|r| r.session_open_ms).collect::<Vec<_>>()).unwrap_or(0.0);
        let base = runs.iter().min_by(|a, b| (a.cycle_ms - cycle).abs().total_cmp(&(b.cycle_ms - cycle).abs()))?;
        let mut report = base.clone();
        report.cycle_ms = cycle;
        report.session_open_ms = open;
        // The steady cycle's median over the runs that measured one, with the phases of the
        // run nearest to it.
        let steady: Vec<&BenchReport> = runs.iter().filter(|r| r.steady_cycle_ms.is_some()).collect();
        if let Some(m) = median(&steady.iter().filter_map(|r| r.steady_cycle_ms).collect::<Vec<_>>()) {
            let near = steady.iter().min_by(|a, b| {
                let d = |r: &&&BenchReport| (r.steady_cycle_ms.unwrap_or(m) - m).abs();
                d(a).total_cmp(&d(b))
            });
            report.steady_cycle_ms = Some(m);
            report.steady_cycle_phases_ms = near.and_then(|r| r.steady_cycle_phases_ms);
            report.steady_cycles = near.and_then(|r| r.steady_cycles);
        }
        report.pods_per_s = if cycle > 0.0 { report.pods_bound as f64 / (cycle / 1e3) } else { 0.0 };
        report.peak_rss_bytes = runs.iter().map(|r| r.peak_rss_bytes).max().unwrap_or(0);
        let (cycle_ms_min, cycle_ms_max) = min_max(runs.iter().map(|r| r.cycle_ms));
        let (session_open_ms_min, session_open_ms_max) = min_max(runs.iter().map(|r| r.session_open_ms));
        Some(SweepPoint { report, repeats: runs.len(), cycle_ms_min, cycle_ms_max, session_open_ms_min, session_open_ms_max })
    }

    /// The point as one readable line: the median run's line, then for several runs the spread,
    /// e.g. `…; median of 3 runs: cycle 1.1–1.4 ms, session open 0.1–0.1 ms`.
    pub fn text_line(&self) -> String {
        let mut line = self.report.text_line();
        if self.repeats > 1 {
            let range = |lo: Option<f64>, hi: Option<f64>| match (lo, hi) {
                (Some(l), Some(h)) => format!("{l:.1}–{h:.1} ms"),
                _ => "–".to_string(),
            };
            line.push_str(&format!(
                "; median of {} runs: cycle {}, session open {}",
                self.repeats,
                range(self.cycle_ms_min, self.cycle_ms_max),
                range(self.session_open_ms_min, self.session_open_ms_max)
            ));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::bench::CyclePhasesMs;

    fn run(cycle_ms: f64, session_open_ms: f64, rss: u64) -> BenchReport {
        BenchReport {
            nodes: 100,
            pods: 1000,
            variant: "identical".into(),
            threads: 1,
            session_open_ms,
            session_open_cold_ms: session_open_ms,
            session_open_after_change_ms: session_open_ms,
            layout_patch_ms: 0.0,
            change_deltas: 0,
            cycle_ms,
            pods_bound: 1000,
            pods_per_s: 0.0,
            cycle_cpu_ms: None,
            cycle_phases_ms: None,
            steady_cycle_ms: None,
            steady_cycle_phases_ms: None,
            steady_cycles: None,
            sampled_cycle_ms: None,
            sampled_cycle_cpu_ms: None,
            sampled_pods_bound: None,
            sampled_nodes_to_find: None,
            plain_cycle_ms: None,
            plain_cycle_cpu_ms: None,
            plain_pods_bound: None,
            peak_rss_bytes: rss,
        }
    }

    #[test]
    fn medians_and_spread() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        let p = SweepPoint::from_runs(&[run(10.0, 1.0, 5), run(90.0, 3.0, 7), run(12.0, 2.0, 6)]).unwrap();
        assert_eq!((p.report.cycle_ms, p.report.session_open_ms), (12.0, 2.0), "one slow run does not move the median");
        assert_eq!((p.cycle_ms_min, p.cycle_ms_max), (Some(10.0), Some(90.0)));
        assert_eq!((p.session_open_ms_min, p.session_open_ms_max), (Some(1.0), Some(3.0)));
        assert_eq!((p.repeats, p.report.peak_rss_bytes), (3, 7));
        assert!((p.report.pods_per_s - 1000.0 / 0.012).abs() < 1e-6);
        assert!(p.text_line().ends_with("; median of 3 runs: cycle 10.0–90.0 ms, session open 1.0–3.0 ms"), "{}", p.text_line());
        assert_eq!(SweepPoint::from_runs(&[]), None);
    }

    /// The steady cycle's median is over the runs that measured one, its phases and count are
    /// the nearest run's, and the line names it; runs without it leave it absent.
    #[test]
    fn the_steady_cycle_is_the_median_of_the_runs_that_measured_it() {
        let steady = |cycle_ms: f64, steady_ms: f64| {
            let mut r = run(cycle_ms, 1.0, 1);
            r.steady_cycle_ms = Some(steady_ms);
            r.steady_cycle_phases_ms = Some(CyclePhasesMs { open: 1.0, actions: steady_ms - 2.0, close: 1.0 });
            r.steady_cycles = Some(2);
            r
        };
        let p = SweepPoint::from_runs(&[steady(20.0, 9.0), run(30.0, 1.0, 1), steady(25.0, 40.0), steady(21.0, 11.0)]).unwrap();
        assert_eq!(p.report.steady_cycle_ms, Some(11.0), "median of 9, 11 and 40; the run without one is not counted");
        assert_eq!(p.report.steady_cycle_phases_ms.map(|x| x.actions), Some(9.0), "the phases of the run at the median");
        assert!(
            p.text_line().contains("; steady cycle 11.0 ms (open 1.0, actions 9.0, close 1.0 ms; median of cycles 2–3)"),
            "{}",
            p.text_line()
        );
        let mut one = steady(20.0, 9.0);
        one.steady_cycles = Some(1);
        assert!(
            one.text_line().contains("close 1.0 ms; cycle 2)"),
            "one later cycle is named, not a median: {}",
            one.text_line()
        );
        let p = SweepPoint::from_runs(&[run(10.0, 1.0, 1), run(12.0, 1.0, 1)]).unwrap();
        assert_eq!(p.report.steady_cycle_ms, None);
        assert!(!p.text_line().contains("steady"), "{}", p.text_line());
    }

    #[test]
    fn a_saved_single_run_sweep_still_reads() {
        let old = r#"[{"nodes": 100, "pods": 1000, "variant": "identical", "threads": 1, "session_open_ms": 1.5,
            "cycle_ms": 12.0, "pods_bound": 1000, "pods_per_s": 83333.3, "peak_rss_bytes": 1}]"#;
        let pts: Vec<SweepPoint> = serde_json::from_str(old).unwrap();
        assert_eq!((pts[0].repeats, pts[0].report.cycle_ms, pts[0].cycle_ms_min), (1, 12.0, None));
        let again: Vec<SweepPoint> = serde_json::from_str(&serde_json::to_string(&pts).unwrap()).unwrap();
        assert_eq!(again, pts);
    }
}
