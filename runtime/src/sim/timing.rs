//! Wall-clock timings of a simulation: how long loading took and, per cycle, the session open,
//! each action and the session close, so a user can set Basalt's cycle time beside Volcano's
//! (the metrics `volcano_e2e_scheduling_latency_milliseconds`,
//! `volcano_open_session_duration_milliseconds` and `volcano_action_scheduling_latency_milliseconds`,
//! volcano-behaviour §8.1) on their own cluster dump.
//!
//! Timings vary run to run; they are kept apart from [`super::SimOutput`] (the decisions), which
//! stays identical for the same input and seed. The core reads no clock: the phases are timed
//! from [`basalt_core::scheduler::run_cycle_observed`]'s observer.

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_core::decision::Decisions;
use basalt_core::scheduler::{run_cycle_observed, CycleOptions, CyclePhase};
use serde::Serialize;
use std::time::Instant;

/// One action's wall time within a cycle (`{"action": "allocate", "ms": 0.25}`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ActionTiming {
    /// Action name as in the conf (`enqueue`, `allocate`, …).
    pub action: String,
    /// Milliseconds.
    pub ms: f64,
}

/// One cycle's phases, milliseconds of wall time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CycleTimings {
    /// 1-based cycle number.
    pub cycle: u64,
    /// Opening the session from the cluster copy.
    pub session_open_ms: f64,
    /// Each configured action, in order.
    pub actions: Vec<ActionTiming>,
    /// Closing the session into decisions.
    pub session_close_ms: f64,
    /// The whole cycle, open to close (applying the decisions to the simulated cluster is not
    /// part of it).
    pub total_ms: f64,
}

/// Timings of a whole simulation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimTimings {
    /// Reading, parsing and converting the cluster files, milliseconds.
    pub load_ms: f64,
    /// Volcano's startup steps (default queue, PodGroups for plain pods), milliseconds.
    pub startup_ms: f64,
    /// One entry per cycle, in order.
    pub cycles: Vec<CycleTimings>,
}

/// Milliseconds since `t`.
pub fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Runs one cycle (exactly [`basalt_core::run_cycle`]'s decisions) and times its phases.
pub fn timed_cycle(cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> (Decisions, CycleTimings) {
    let arena = bumpalo::Bump::new();
    let mut t = CycleTimings { cycle: opts.cycle, ..Default::default() };
    let start = Instant::now();
    let mut last = start;
    let decisions = run_cycle_observed(&arena, cluster, conf, opts, |phase| {
        // Open and close span their plugins' phases: their clocks restart only at the phase
        // boundaries that end an open, an action or a close.
        match phase {
            CyclePhase::TablesBuilt | CyclePhase::PluginOpened(_) | CyclePhase::PluginClosed(_) => return,
            CyclePhase::Opened => t.session_open_ms = ms_since(last),
            CyclePhase::ActionDone(a) => t.actions.push(ActionTiming { action: a.name().to_string(), ms: ms_since(last) }),
            CyclePhase::Closed => t.session_close_ms = ms_since(last),
        }
        last = Instant::now();
    });
    t.total_ms = ms_since(start);
    (decisions, t)
}

/// The median and the largest of some milliseconds (`None` for none).
pub fn median_max(mut v: Vec<f64>) -> Option<(f64, f64)> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    let median = if v.len().is_multiple_of(2) { (v[mid - 1] + v[mid]) / 2.0 } else { v[mid] };
    Some((median, v[v.len() - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::workload::{generate, Variant, WorkloadSpec};

    #[test]
    fn timed_cycle_decides_as_run_cycle_and_times_every_phase() {
        let mut c = Cluster::new();
        let spec = WorkloadSpec { nodes: 20, pods: 100, gang: 5, queues: 2, variant: Variant::Selectors, seed: 3 };
        for d in generate(&spec) {
            c.apply(d).unwrap();
        }
        let conf = SchedulerConf::default();
        let opts = CycleOptions { seed: 7, cycle: 2, now_ms: 0 };
        let (d, t) = timed_cycle(&c, &conf, &opts);
        assert_eq!(d, basalt_core::run_cycle(&c, &conf, &opts));
        assert!(!d.binds.is_empty());
        assert_eq!(t.cycle, 2);
        let names: Vec<&str> = t.actions.iter().map(|a| a.action.as_str()).collect();
        assert_eq!(names, conf.actions.iter().map(|a| a.name()).collect::<Vec<_>>());
        let parts = t.session_open_ms + t.actions.iter().map(|a| a.ms).sum::<f64>() + t.session_close_ms;
        assert!(parts > 0.0 && parts <= t.total_ms, "phases {parts} ms within the total {} ms", t.total_ms);
    }

    #[test]
    fn median_and_max() {
        assert_eq!(median_max(vec![]), None);
        assert_eq!(median_max(vec![3.0, 1.0, 2.0]), Some((2.0, 3.0)));
        assert_eq!(median_max(vec![4.0, 1.0, 2.0, 3.0]), Some((2.5, 4.0)));
    }
}
