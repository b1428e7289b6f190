//! `rescheduling` (volcano-behaviour.md §3, Volcano `plugins/rescheduling`): registers
//! `VictimTasks` for the shuffle action ([`crate::actions::shuffle`]) from its strategies, at
//! most once per `interval`.
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
//! **`interval`** (a Go duration, default `5m`): the strategies run in a session only when they
//! never ran before or when their last run plus `interval` is strictly before the session's
//! "now" (Volcano `util.IsToBeExecuted("reschedulingFns", interval)` at session open); in
//! another session the plugin offers no victims, so shuffle evicts nothing. The core keeps no
//! clock and no memory between cycles: "now" is [`State::now_ms`], the last run is
//! [`crate::cluster::Cluster::rescheduled_ms`], and a session in which the strategies ran
//! reports its "now" in [`crate::decision::Decisions::rescheduled_ms`], which the driver
//! (`basalt simulate`, `basalt replay`, `basalt scheduler`) applies as
//! [`crate::cluster::Delta::Rescheduled`] after the cycle. A cycle without a clock
//! ([`crate::CycleOptions::now_ms`] = 0) cannot tell whether the interval has passed: there the
//! strategies run in every session, as they did before `interval` was honoured, and nothing is
//! recorded.
//!
//! Where Basalt differs, deliberately:
//! - **Utilization** is the pods' requests on the node over its allocatable (the session's
//!   `used`), not measured usage: Basalt reads no metrics source, so `metricsPeriod` has no
//!   effect.
//! - **`interval`** must be a positive duration: a value that is not one (unparsable, not a
//!   string, `"0s"` or negative) is warned about and read as `5m`. Volcano takes an unparsable
//!   string as `5m` too (a value that is not a string fails its type assertion), but `"0s"` (or
//!   a negative value) as "every session"; in Basalt a small positive value such as `"1s"` does
//!   that (sessions run at least a schedule period apart).
//!   The last run is remembered per cluster copy (Volcano: per process), so a restarted
//!   `basalt scheduler` may run the strategies at once, as a restarted Volcano does.
//! - Volcano reads `thresholds` keys `cpu`, `memory` and `pod` but measures only cpu and memory;
//!   Basalt reads `cpu` and `memory`. `thresholdPriorityClassName` and `nodeFit` are accepted;
//!   Volcano's strategy reads neither. Pod QoS is BestEffort or not (Burstable and Guaranteed
//!   are not told apart). A strategy name other than `lowNodeUtilization` selects nothing
//!   (Volcano has no victim function for it).

use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::resource::{CPU, MEMORY};
use crate::session::notes::CloseNotes;
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;

/// The arguments rescheduling reads.
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("strategies", ArgKind::Yaml, "[lowNodeUtilization]"),
    ArgSpec::new("interval", ArgKind::Duration, "5m"),
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

/// Volcano's default `interval`: 5 minutes, in nanoseconds.
pub const DEFAULT_INTERVAL_NS: i64 = 5 * 60 * 1_000_000_000;

const NS_PER_MS: i128 = 1_000_000;

/// Whether the strategies run in a session at `now_ms` (ms since the Unix epoch, 0 = no clock)
/// when they last ran at `last_ms` (`None`: never), `interval_ns` apart (Volcano
/// `util.IsToBeExecuted`: never ran, or last + interval strictly before now). Without a clock
/// (`now_ms` ≤ 0) they run every session.
pub fn due(last_ms: Option<i64>, interval_ns: i64, now_ms: i64) -> bool {
    match last_ms {
        _ if now_ms <= 0 => true,
        None => true,
        Some(last) => i128::from(last) * NS_PER_MS + i128::from(interval_ns) < i128::from(now_ms) * NS_PER_MS,
    }
}

/// The rescheduling plugin: its `lowNodeUtilization` strategies and whether they run in this
/// session.
pub struct Rescheduling {
    strategies: Vec<LowNodeUtilization>,
    interval_ns: i64,
    due: bool,
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
    /// Opens the plugin for session `s`: reads `interval` from `args` (not a positive Go
    /// duration ⇒ [`DEFAULT_INTERVAL_NS`]) and decides with [`due`] from the cluster's last run
    /// ([`crate::cluster::Cluster::rescheduled_ms`]) and [`State::now_ms`] whether the
    /// strategies run this session; then reads the strategies ([`Rescheduling::strategies_of`]).
    pub fn open(s: &State<'_>, args: &Arguments) -> Self {
        let interval_ns = args.duration_ns("interval").unwrap_or(DEFAULT_INTERVAL_NS);
        let due = due(s.cluster.rescheduled_ms(), interval_ns, s.now_ms);
        Rescheduling { strategies: Self::strategies_of(args), interval_ns, due }
    }

    /// Reads `strategies` from `args` (absent or not a list ⇒ one default `lowNodeUtilization`;
    /// entries of another name are left out).
    pub fn strategies_of(args: &Arguments) -> Vec<LowNodeUtilization> {
        let Some(list) = args.0.get("strategies").and_then(|v| v.as_sequence()) else {
            return vec![LowNodeUtilization::default()];
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
        strategies
    }

    /// The strategies read.
    pub fn strategies(&self) -> &[LowNodeUtilization] {
        &self.strategies
    }

    /// The `interval` in force, nanoseconds.
    pub fn interval_ns(&self) -> i64 {
        self.interval_ns
    }

    /// Whether the strategies run in this session.
    pub fn is_due(&self) -> bool {
        self.due
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
            s.used(n, d) as f64 * 100.0 / a as f64
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
            // Not due: Volcano registers no VictimTasks function this session; an empty list
            // is the same under the union rule (volcano-behaviour.md §1.5).
            if !self.due {
                return;
            }
            for c in &self.strategies {
                low_node_utilization(s, c, candidates, out);
            }
        }
        fn on_close(&mut self, s: &State<'a>, notes: &mut CloseNotes) {
            // Volcano records the run at open; the session's one "now" makes close the same.
            if self.due && s.now_ms > 0 {
                notes.rescheduled_ms = Some(s.now_ms);
            }
        }
    }
}

impl Rescheduling {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::VictimTasks.bit()
    };
}
