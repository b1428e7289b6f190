//! `rescheduling` (volcano-behaviour.md §3, Volcano `plugins/rescheduling`): registers
//! `VictimTasks` for the shuffle action ([`crate::actions::shuffle`]) from its strategies.
//!
//! Arguments: `strategies`, a list of `{name, params}`; the only strategy Volcano has is
//! `lowNodeUtilization` (also the default when `strategies` is absent), with `params`
//! `thresholds` and `targetThresholds`, maps of `cpu`/`memory` to percentages (both default
//! 100 for each). Nodes whose utilization is at or below `thresholds` in every dimension (and
//! are schedulable) are *low*; the others that exceed `targetThresholds` in some dimension are
//! *high*. When some nodes are low, not all are, and some are high, the high nodes (highest
//! cpu % + memory % first) give up their Running pods, lowest priority first (BestEffort pods
//! first among equals), while the node still exceeds a target and the
//! low nodes still have room below their targets in both cpu and memory; each victim's request
//! comes off both. The priority is the task's (its PriorityClass value, as Volcano's admission
//! writes into `spec.priority`).
//!
//! Where Basalt differs, deliberately:
//! - **Utilization** is the pods' requests on the node over its allocatable (the session's
//!   `used`), not measured usage: Basalt reads no metrics source, so `metricsPeriod` has no
//!   effect.
//! - **`interval`** (Volcano: 5m, the strategies run at most once per interval of wall-clock
//!   time) has no effect: the core has no clock, so the strategies run in **every** session that
//!   has the shuffle action. Run shuffle in a separate conf, or accept per-cycle evictions.
//! - Volcano reads `thresholds` keys `cpu`, `memory` and `pod` but measures only cpu and memory;
//!   Basalt reads `cpu` and `memory`. `thresholdPriorityClassName` and `nodeFit` are accepted;
//!   Volcano's strategy reads neither. Pod QoS is BestEffort or not (Burstable and Guaranteed
//!   are not told apart). A strategy name other than `lowNodeUtilization` selects nothing
//!   (Volcano has no victim function for it).

use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::resource::{CPU, MEMORY};
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;

/// The arguments rescheduling reads.
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("strategies", ArgKind::Yaml, "[lowNodeUtilization]"),
    ArgSpec::new("interval", ArgKind::Str, "5m")
        .ignored("the core has no clock: the strategies run in every session that runs shuffle"),
    ArgSpec::new("metricsPeriod", ArgKind::Str, "5m")
        .ignored("Basalt reads no node metrics: utilization is the pods' requests over allocatable"),
];

/// `lowNodeUtilization` parameters: percentages for cpu and memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LowNodeUtilization {
    /// `thresholds` (cpu, memory), percent.
    pub thresholds: [f64; 2],
    /// `targetThresholds` (cpu, memory), percent.
    pub target_thresholds: [f64; 2],
}

impl Default for LowNodeUtilization {
    fn default() -> Self {
        LowNodeUtilization { thresholds: [100.0; 2], target_thresholds: [100.0; 2] }
    }
}

/// The rescheduling plugin: its `lowNodeUtilization` strategies.
pub struct Rescheduling {
    strategies: Vec<LowNodeUtilization>,
}

fn percentages(v: Option<&serde_yaml::Value>, into: &mut [f64; 2]) {
    let Some(m) = v.and_then(|v| v.as_mapping()) else { return };
    for (key, slot) in [("cpu", 0), ("memory", 1)] {
        if let Some(x) = m.get(key).and_then(|x| x.as_f64().or_else(|| x.as_i64().map(|i| i as f64))) {
            into[slot] = x;
        }
    }
}

impl Rescheduling {
    /// Reads `strategies` from `args` (absent or not a list ⇒ one default `lowNodeUtilization`).
    pub fn open(args: &Arguments) -> Self {
        let Some(list) = args.0.get("strategies").and_then(|v| v.as_sequence()) else {
            return Rescheduling { strategies: vec![LowNodeUtilization::default()] };
        };
        let mut strategies = Vec::new();
        for st in list {
            if st.get("name").and_then(|n| n.as_str()) != Some("lowNodeUtilization") {
                continue;
            }
            let mut c = LowNodeUtilization::default();
            let params = st.get("params");
            percentages(params.and_then(|p| p.get("thresholds")), &mut c.thresholds);
            percentages(params.and_then(|p| p.get("targetThresholds")), &mut c.target_thresholds);
            strategies.push(c);
        }
        Rescheduling { strategies }
    }

    /// The strategies read.
    pub fn strategies(&self) -> &[LowNodeUtilization] {
        &self.strategies
    }
}

/// Node `n`'s requested share of its allocatable in cpu and memory, percent (0 where nothing is
/// allocatable).
fn utilization(s: &State<'_>, n: NodeIdx) -> [f64; 2] {
    let pct = |d: usize| {
        let a = s.at(s.nodes.allocatable, n, d);
        if a <= 0 {
            0.0
        } else {
            s.at(s.nodes.used, n, d) as f64 * 100.0 / a as f64
        }
    };
    [pct(CPU), pct(MEMORY)]
}

/// `lowNodeUtilization`'s victims among `candidates` (Running tasks), pushed into `out`.
pub fn low_node_utilization(s: &State<'_>, c: &LowNodeUtilization, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) {
    let nn = s.nodes.len;
    let mut util: Vec<[f64; 2]> = (0..nn).map(|n| utilization(s, NodeIdx(n as u32))).collect();
    let (mut low, mut high) = (Vec::new(), Vec::new());
    for n in 0..nn {
        let u = util[n];
        let is_low = !s.nodes.rec[n].spec.unschedulable && (0..2).all(|d| u[d] <= c.thresholds[d]);
        if is_low {
            low.push(n);
        } else if (0..2).any(|d| u[d] > c.target_thresholds[d]) {
            high.push(n);
        }
    }
    if low.is_empty() || low.len() == nn || high.is_empty() {
        return;
    }
    // Room left below the targets on the low nodes, in cpu millicores and memory bytes.
    let mut room = [0.0f64; 2];
    for &n in &low {
        for (d, dim) in [CPU, MEMORY].into_iter().enumerate() {
            let a = s.at(s.nodes.allocatable, NodeIdx(n as u32), dim) as f64;
            room[d] += (c.target_thresholds[d] - util[n][d]) * a / 100.0;
        }
    }
    high.sort_by(|&a, &b| (util[b][0] + util[b][1]).partial_cmp(&(util[a][0] + util[a][1])).unwrap_or(std::cmp::Ordering::Equal));
    let mut sorted = candidates.to_vec();
    sorted.sort_unstable();
    let mut pods: Vec<TaskIdx> = Vec::new();
    for n in high {
        pods.clear();
        pods.extend(s.tasks_on(NodeIdx(n as u32)).filter(|t| sorted.binary_search(t).is_ok()));
        pods.sort_by_key(|&t| (s.tasks.priority[t.ix()], !s.tasks.best_effort[t.ix()]));
        for &t in &pods {
            let over = (0..2).any(|d| util[n][d] > c.target_thresholds[d]);
            if !over || room.iter().any(|&r| r <= 0.0) {
                break;
            }
            let req = s.tasks.req(t, s.dims);
            for (d, dim) in [CPU, MEMORY].into_iter().enumerate() {
                let a = s.at(s.nodes.allocatable, NodeIdx(n as u32), dim) as f64;
                room[d] -= req[dim] as f64;
                if a > 0.0 {
                    util[n][d] -= req[dim] as f64 * 100.0 / a;
                }
            }
            out.push(t);
        }
    }
}

plugin_impl! {
    impl<'a> for Rescheduling {
        fn name(&self) -> &'static str {
            "rescheduling"
        }
        fn victim_tasks(&self, s: &State<'a>, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) {
            for c in &self.strategies {
                low_node_utilization(s, c, candidates, out);
            }
        }
    }
}
