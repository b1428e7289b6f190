//! `basalt replay --recording DIR`: re-runs recorded cycles offline with the same core, seed
//! and session number on the cluster the cycle read, and compares what it decides with what
//! was recorded. With another conf it reports what that conf would have decided differently
//! on the same inputs (each cycle on the recorded cluster: later cycles still see the binds
//! the recorded conf made, not those the other conf would have made).

use super::named::{NamedDecisions, ObjKey};
use super::reader::{walk, WalkSummary};
use basalt_core::conf::SchedulerConf;
use basalt_core::scheduler::{run_cycle_observed, CycleOptions};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;

/// What to re-run.
#[derive(Clone, Debug, Default)]
pub struct RerunOptions {
    /// Only this cycle (session number); all when `None`.
    pub cycle: Option<u64>,
    /// Run with this conf instead of the recorded one; the recorded conf's `options` (the
    /// scheduler flags in force) are kept.
    pub conf: Option<SchedulerConf>,
}

/// One re-run cycle.
#[derive(Clone, Debug)]
pub struct CycleOutcome {
    /// Session number.
    pub cycle: u64,
    /// Position in the recording, from 1 ([`super::reader::At::seq`]).
    pub seq: u64,
    /// The segment file's name.
    pub segment: String,
    /// Binds recorded.
    pub binds: usize,
    /// Pending pods recorded.
    pub pending: usize,
    /// Binds of the re-run.
    pub rerun_binds: usize,
    /// Pending pods of the re-run.
    pub rerun_pending: usize,
    /// Differences, one line each (empty: the re-run decided exactly what was recorded).
    pub differences: Vec<String>,
    /// The recorded binds (`ns/pod → node`), for a single-cycle report.
    pub bind_lines: Vec<String>,
}

/// The whole re-run.
#[derive(Clone, Debug, Default)]
pub struct RerunReport {
    /// What the walk saw.
    pub walk: WalkSummary,
    /// Re-run cycles in order.
    pub cycles: Vec<CycleOutcome>,
}

impl RerunReport {
    /// Cycles whose decisions differ.
    pub fn differing(&self) -> usize {
        self.cycles.iter().filter(|c| !c.differences.is_empty()).count()
    }
}

/// Re-runs the cycles of `dir`. Errors: the recording cannot be read, or `opts.cycle` is not
/// in it.
pub fn rerun(dir: &Path, opts: &RerunOptions) -> Result<RerunReport, String> {
    let mut cycles = Vec::new();
    let mut arena = bumpalo::Bump::new();
    let walk = walk(dir, |at| {
        let conf = match &opts.conf {
            Some(other) => SchedulerConf { options: at.conf.options.clone(), ..other.clone() },
            None => at.conf.clone(),
        };
        // Every cycle prepares the kept session layout, as the live scheduler did, so the
        // selected cycle sees the same layout history.
        at.cluster.prepare(&conf.options.default_queue);
        // `--cycle N`: the cycle's session number or its position `#N` in the recording.
        if opts.cycle.is_some_and(|c| c != at.record.cycle && c != at.seq) {
            return ControlFlow::Continue(());
        }
        arena.reset();
        let now_ms = i64::try_from(at.record.unix_ms).unwrap_or(0);
        let o = CycleOptions { seed: at.record.seed, cycle: at.record.cycle, now_ms };
        let d = run_cycle_observed(&arena, at.cluster, &conf, &o, |_| {});
        let replayed = NamedDecisions::of(&d, at.cluster, at.record.cycle);
        let label = if opts.conf.is_some() { "other conf" } else { "replayed" };
        cycles.push(CycleOutcome {
            cycle: at.record.cycle,
            seq: at.seq,
            segment: at.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            binds: at.recorded.binds.len(),
            pending: at.recorded.unschedulable.len(),
            rerun_binds: replayed.binds.len(),
            rerun_pending: replayed.unschedulable.len(),
            differences: differences(at.recorded, &replayed, label),
            bind_lines: at.recorded.binds.iter().map(|(p, n)| format!("{} → {n}", show(p))).collect(),
        });
        if opts.cycle.is_some() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    if let Some(c) = opts.cycle {
        if cycles.is_empty() {
            return Err(format!(
                "--cycle {c}: no such cycle in {} (see the cycle numbers `basalt replay --recording` prints)",
                dir.display()
            ));
        }
    }
    Ok(RerunReport { walk, cycles })
}

/// `ns/name`.
pub fn show(k: &ObjKey) -> String {
    format!("{}/{}", k.0, k.1)
}

/// Where each pod went: `Some(node)` bound, `None` pending (with a condition).
fn placement(d: &NamedDecisions) -> BTreeMap<&ObjKey, Option<&str>> {
    let mut m: BTreeMap<&ObjKey, Option<&str>> = d.unschedulable.keys().map(|k| (k, None)).collect();
    for (p, n) in &d.binds {
        m.insert(p, Some(n.as_str()));
    }
    m
}

/// The differences between `recorded` and `other`, one line each, `label` naming `other`.
pub fn differences(recorded: &NamedDecisions, other: &NamedDecisions, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (a, b) = (placement(recorded), placement(other));
    let word = |x: Option<&Option<&str>>| match x {
        Some(Some(n)) => format!("bound to {n}"),
        Some(None) => "pending".to_string(),
        None => "not decided".to_string(),
    };
    for k in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
        let (x, y) = (a.get(k), b.get(k));
        if x != y {
            out.push(format!("pod {}: recorded {}, {label} {}", show(k), word(x), word(y)));
        }
    }
    if out.is_empty() && recorded.binds != other.binds {
        out.push(format!("binds in another order ({label})"));
    }
    for (k, (r, m)) in &recorded.unschedulable {
        if let Some((r2, m2)) = other.unschedulable.get(k) {
            if (r, m) != (r2, m2) {
                out.push(format!("pod {}: recorded reason {r}: {m}; {label} {r2}: {m2}", show(k)));
            }
        }
    }
    if recorded.evictions != other.evictions {
        out.push(format!("evictions: recorded {:?}, {label} {:?}", recorded.evictions, other.evictions));
    }
    if recorded.pipelined != other.pipelined {
        out.push(format!("pipelined: recorded {}, {label} {}", recorded.pipelined.len(), other.pipelined.len()));
    }
    for k in recorded.pod_groups.keys().chain(other.pod_groups.keys().filter(|k| !recorded.pod_groups.contains_key(*k))) {
        match (recorded.pod_groups.get(k), other.pod_groups.get(k)) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) if x.phase != y.phase => {
                out.push(format!("PodGroup {}: recorded phase {}, {label} {}", show(k), x.phase.as_str(), y.phase.as_str()))
            }
            (Some(_), Some(_)) => out.push(format!("PodGroup {}: status differs (conditions or counts)", show(k))),
            (x, _) => out.push(format!(
                "PodGroup {}: in the session {}",
                show(k),
                if x.is_some() { "recorded only" } else { "of the other run only" }
            )),
        }
    }
    for k in recorded.queues.keys().chain(other.queues.keys().filter(|k| !recorded.queues.contains_key(*k))) {
        let (x, y) = (recorded.queues.get(k), other.queues.get(k));
        if x != y {
            out.push(format!("Queue {k}: recorded allocated {x:?}, {label} {y:?}"));
        }
    }
    if recorded.skipped != other.skipped {
        out.push(format!("skipped PodGroups: recorded {}, {label} {}", recorded.skipped.len(), other.skipped.len()));
    }
    if recorded.events != other.events {
        let n = recorded
            .events
            .keys()
            .chain(other.events.keys())
            .filter(|k| recorded.events.get(*k) != other.events.get(*k))
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        out.push(format!("PodGroup events differ on {n} PodGroups"));
    }
    if recorded.bind_annotations != other.bind_annotations {
        let by_pod = |d: &'_ NamedDecisions| -> BTreeMap<ObjKey, basalt_core::model::Labels> {
            d.bind_annotations.iter().cloned().collect()
        };
        let (a, b) = (by_pod(recorded), by_pod(other));
        let pods: std::collections::BTreeSet<&ObjKey> = a.keys().chain(b.keys()).filter(|k| a.get(*k) != b.get(*k)).collect();
        match pods.iter().next() {
            Some(k) => out.push(format!("bind annotations differ on {} pods, first {}", pods.len(), show(k))),
            None => out.push(format!("bind annotations in another order ({label})")),
        }
    }
    if recorded.node_locks != other.node_locks {
        out.push(format!("node locks: recorded {:?}, {label} {:?}", recorded.node_locks, other.node_locks));
    }
    if recorded.gate_removals != other.gate_removals {
        out.push(format!("gate removals: recorded {:?}, {label} {:?}", recorded.gate_removals, other.gate_removals));
    }
    if recorded.numa_assignments != other.numa_assignments {
        out.push(format!("NUMA assignments: recorded {:?}, {label} {:?}", recorded.numa_assignments, other.numa_assignments));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> ObjKey {
        ("ns".into(), name.into())
    }

    #[test]
    fn differences_name_the_format_3_decisions() {
        let annotations = |card: &str| [("volcano.sh/gpu-index".to_string(), card.to_string())].into();
        let recorded = NamedDecisions {
            binds: vec![(key("a"), "n1".into()), (key("b"), "n1".into())],
            bind_annotations: vec![(key("a"), annotations("0")), (key("b"), annotations("1"))],
            gate_removals: vec![key("g")],
            numa_assignments: vec![(key("a"), "n1".into(), vec![0, 1])],
            ..Default::default()
        };
        assert!(differences(&recorded, &recorded.clone(), "replayed").is_empty());
        let mut other = recorded.clone();
        other.bind_annotations[1].1 = annotations("0");
        other.gate_removals.clear();
        other.numa_assignments[0].2 = vec![2, 3];
        let d = differences(&recorded, &other, "replayed");
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].contains("bind annotations differ on 1 pods, first ns/b"), "{d:?}");
        assert!(d[1].starts_with("gate removals") && d[2].starts_with("NUMA assignments"), "{d:?}");
        let mut reordered = recorded.clone();
        reordered.bind_annotations.reverse();
        assert_eq!(differences(&recorded, &reordered, "replayed"), vec!["bind annotations in another order (replayed)"]);
    }
}
