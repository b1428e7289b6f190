//! What a simulation reports, as serde structs, and its two renderings: the JSON object of the
//! conformance contract (`shared/conformance/README.md`) and a readable text summary.
//! Rendering is a pure function of [`SimOutput`].

use super::timing::{median_max, SimTimings};
use super::SimOutput;
pub use crate::conf_check::{strict_check, NotHonouredReport};
use crate::convert::resources::{scale_of, Scale};
use basalt_core::cluster::{Cluster, NodeId, PodGroupId, PodId};
use basalt_core::decision::Decisions;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A pod and a node, by name (`{"pod": "ns/name", "node": "n"}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodNode {
    /// `namespace/name` of the pod.
    pub pod: String,
    /// Node name.
    pub node: String,
    /// For a bind: the annotations it carries (`volcano.sh/gpu-index`, …), printed only when
    /// there are some; empty for pipelined tasks.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An eviction (`{"pod", "reason"}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EvictionReport {
    /// `namespace/name` of the victim.
    pub pod: String,
    /// `preempt`, `reclaim`, `shuffle`, `gangpreempt` or `gangreclaim`.
    pub reason: String,
}

/// A PodGroup status condition, with Volcano's field names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConditionReport {
    /// `type`: `Unschedulable` or `Scheduled`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `status`.
    pub status: String,
    /// `reason`.
    pub reason: String,
    /// `message`.
    pub message: String,
    /// `transitionID`: the cycle that wrote it.
    #[serde(rename = "transitionID")]
    pub transition_id: String,
}

/// A PodGroup's status after a cycle (`{"podGroup", "phase", "conditions"}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodGroupReport {
    /// `namespace/name`.
    #[serde(rename = "podGroup")]
    pub pod_group: String,
    /// Phase spelling (`""` when unset).
    pub phase: String,
    /// Conditions.
    pub conditions: Vec<ConditionReport>,
    /// `status.running`: tasks running after the cycle (Volcano's count, written with the
    /// phase; volcano-behaviour.md §1.7).
    pub running: i32,
    /// `status.succeeded`.
    pub succeeded: i32,
    /// `status.failed`.
    pub failed: i32,
}

/// A pod still pending after a cycle (`{"pod", "reason", "message"}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnschedulableReport {
    /// `namespace/name`.
    pub pod: String,
    /// `Unschedulable` or `Schedulable`.
    pub reason: String,
    /// Volcano's message.
    pub message: String,
}

/// A queue's allocation after a cycle (`{"queue", "allocated": {resource: amount}}`), amounts
/// in core units (cpu millicores, memory bytes, other scalars milli-units, pods count).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct QueueReport {
    /// Queue name.
    pub queue: String,
    /// Allocated resources.
    pub allocated: BTreeMap<String, i64>,
}

/// One cycle's decisions, with every id resolved to a name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CycleReport {
    /// Binds, in commit order.
    pub binds: Vec<PodNode>,
    /// Evictions, in order.
    pub evictions: Vec<EvictionReport>,
    /// Tasks left Pipelined at the end of the cycle.
    pub pipelined: Vec<PodNode>,
    /// Every PodGroup's status after the cycle.
    pub pod_groups: Vec<PodGroupReport>,
    /// Pods still pending, with their condition.
    pub unschedulable: Vec<UnschedulableReport>,
    /// Queue allocations (an extension of the contract).
    pub queues: Vec<QueueReport>,
    /// PodGroup events of the cycle (an extension of the contract).
    pub events: Vec<EventReport>,
    /// PodGroups left out of the session, with the reason (an extension of the contract).
    pub skipped: Vec<SkippedReport>,
    /// Volcano Job phase changes made by the job controller before the cycle (absent without
    /// Jobs; an extension of the contract).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<super::jobs::JobTransition>,
    /// What the volume binder does before some binds (absent when nothing; an extension of
    /// the contract).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub volume_bindings: Vec<VolumeBindingReport>,
    /// `ns/pod` of the pods whose Volcano scheduling gate the cycle removed because their queue
    /// admitted them (feature gate `SchedulingGatesQueueAdmission`; absent when none; an
    /// extension of the contract). They are placed in a later cycle, once ungated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gates_removed: Vec<String>,
}

/// One bind's volume bindings: static PVs bound to claims, claims given to their provisioner.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeBindingReport {
    /// `ns/name` of the pod.
    pub pod: String,
    /// The node it is bound to.
    pub node: String,
    /// Claim name → PV name (the PV's `claimRef` is set).
    pub bind: BTreeMap<String, String>,
    /// Claims annotated `volume.kubernetes.io/selected-node` for their provisioner.
    pub provision: Vec<String>,
}

/// A PodGroup event (`kubectl describe pg` would show it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EventReport {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// `Normal` or `Warning`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Reason, e.g. `Unschedulable`.
    pub reason: String,
    /// Message.
    pub message: String,
}

/// A PodGroup the session left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedReport {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Why.
    pub reason: String,
}

fn pod_name(c: &Cluster, id: PodId) -> String {
    c.pod(id).map(|p| format!("{}/{}", p.spec.namespace, p.spec.name)).unwrap_or_else(|| format!("<pod #{}>", id.0))
}

fn node_name(c: &Cluster, id: NodeId) -> String {
    c.node(id).map(|n| n.spec.name.clone()).unwrap_or_else(|| format!("<node #{}>", id.0))
}

fn group_name(c: &Cluster, id: PodGroupId) -> String {
    c.pod_group(id).map(|g| format!("{}/{}", g.spec.namespace, g.spec.name)).unwrap_or_else(|| format!("<podgroup #{}>", id.0))
}

impl CycleReport {
    /// Resolves `d` against `cluster`, which must be the cluster the cycle ran on (before the
    /// decisions are applied: an evicted pod's id is still valid then).
    pub fn from_decisions(cluster: &Cluster, d: &Decisions) -> Self {
        let c = cluster;
        CycleReport {
            binds: d
                .binds
                .iter()
                .map(|b| PodNode {
                    pod: pod_name(c, b.pod),
                    node: node_name(c, b.node),
                    annotations: (*b.annotations).clone().into_iter().collect(),
                })
                .collect(),
            evictions: d.evictions.iter().map(|e| EvictionReport { pod: pod_name(c, e.pod), reason: e.reason.clone() }).collect(),
            pipelined: d
                .pipelined
                .iter()
                .map(|p| PodNode { pod: pod_name(c, p.pod), node: node_name(c, p.node), annotations: BTreeMap::new() })
                .collect(),
            pod_groups: d
                .pod_groups
                .iter()
                .map(|g| PodGroupReport {
                    pod_group: group_name(c, g.group),
                    phase: g.phase.as_str().to_string(),
                    conditions: g
                        .conditions
                        .iter()
                        .map(|k| ConditionReport {
                            kind: k.kind.clone(),
                            status: k.status.clone(),
                            reason: k.reason.clone(),
                            message: k.message.clone(),
                            transition_id: k.transition_id.clone(),
                        })
                        .collect(),
                    running: g.running,
                    succeeded: g.succeeded,
                    failed: g.failed,
                })
                .collect(),
            unschedulable: d
                .unschedulable
                .iter()
                .map(|u| UnschedulableReport { pod: pod_name(c, u.pod), reason: u.reason.clone(), message: u.message.clone() })
                .collect(),
            queues: d
                .queues
                .iter()
                .map(|q| QueueReport { queue: q.name.clone(), allocated: q.allocated.clone().into_iter().collect() })
                .collect(),
            events: d
                .events
                .iter()
                .map(|e| EventReport {
                    pod_group: group_name(c, e.group),
                    kind: e.kind.to_string(),
                    reason: e.reason.to_string(),
                    message: e.message.to_string(),
                })
                .collect(),
            skipped: d.skipped.iter().map(|(g, r)| SkippedReport { pod_group: group_name(c, *g), reason: r.clone() }).collect(),
            jobs: Vec::new(),
            volume_bindings: d
                .volume_bindings
                .iter()
                .map(|b| VolumeBindingReport {
                    pod: format!("{}/{}", b.namespace, b.pod),
                    node: b.node.clone(),
                    bind: b.bind.iter().cloned().collect(),
                    provision: b.provision.clone(),
                })
                .collect(),
            gates_removed: d.gate_removals.iter().map(|g| pod_name(c, g.pod)).collect(),
        }
    }
}

/// The JSON document `basalt simulate --output json` prints.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonReport<'a> {
    not_honoured: &'a [NotHonouredReport],
    cycles: &'a [CycleReport],
    pod_group_of_pod: &'a BTreeMap<String, String>,
    issues: Vec<String>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    jobs: &'a [super::jobs::JobReport],
    #[serde(skip_serializing_if = "Option::is_none")]
    jobs_run: Option<&'a super::JobsRun>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    cron_jobs: &'a [super::cronjobs::CronJobReport],
    #[serde(skip_serializing_if = "Option::is_none")]
    timings: Option<&'a SimTimings>,
}

/// The conformance JSON object: `{"notHonoured": [...], "cycles": [...], "podGroupOfPod": {...},
/// "issues": [...]}`, pretty-printed, without a trailing newline.
pub fn render_json(out: &SimOutput) -> String {
    json(out, None)
}

/// [`render_json`] plus a `"timings"` key (`{"loadMs", "startupMs", "cycles": [{"cycle",
/// "sessionOpenMs", "actions": [{"action", "ms"}], "sessionCloseMs", "totalMs"}]}`, wall-clock
/// milliseconds): every other key is exactly [`render_json`]'s, so the decisions still compare
/// equal across runs once `timings` is dropped.
pub fn render_json_with_timings(out: &SimOutput, timings: &SimTimings) -> String {
    json(out, Some(timings))
}

fn json(out: &SimOutput, timings: Option<&SimTimings>) -> String {
    let doc = JsonReport {
        not_honoured: &out.not_honoured,
        cycles: &out.cycles,
        pod_group_of_pod: &out.pod_group_of_pod,
        issues: out.issue_lines(),
        jobs: &out.jobs,
        jobs_run: out.jobs_run.as_ref(),
        cron_jobs: &out.cron_jobs,
        timings,
    };
    // Serializing plain structs of strings, integers and string-keyed maps cannot fail.
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
}

/// A resource amount in core units (see [`scale_of`]), written as a Kubernetes quantity:
/// `1500m` and `2` for cpu and other milli-unit counts (`nvidia.com/gpu`), whole counts for
/// `pods`, and for byte amounts (`memory`, `ephemeral-storage`, `hugepages-*`) the largest
/// binary suffix that divides them (`16Gi`, `512Mi`), else the largest decimal one (`1500M`),
/// else plain bytes. As `kubectl` would print the same quantity, never a bare internal integer.
pub fn format_amount(resource: &str, v: i64) -> String {
    let bytes = matches!(resource, "memory" | "ephemeral-storage") || resource.starts_with("hugepages-");
    let whole = match scale_of(resource) {
        Scale::Milli if v % 1000 != 0 => return format!("{v}m"),
        Scale::Milli => v / 1000,
        Scale::Units => v,
    };
    if bytes && whole != 0 {
        for (suffix, shift) in [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)] {
            let unit = 1i64 << shift;
            if whole % unit == 0 {
                return format!("{}{suffix}", whole / unit);
            }
        }
        for (suffix, unit) in [
            ("E", 1_000_000_000_000_000_000i64),
            ("P", 1_000_000_000_000_000),
            ("T", 1_000_000_000_000),
            ("G", 1_000_000_000),
            ("M", 1_000_000),
            ("k", 1000),
        ] {
            if whole % unit == 0 {
                return format!("{}{suffix}", whole / unit);
            }
        }
    }
    whole.to_string()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A readable summary: per cycle the binds grouped by node, evictions, pipelined tasks,
/// pending pods with their reason, PodGroup phases and queue allocations; then what was
/// loaded and every issue.
pub fn render_text(out: &SimOutput) -> String {
    let mut s = String::new();
    if !out.not_honoured.is_empty() {
        let _ = writeln!(s, "Not honoured by this Basalt version (skipped or replaced; --strict refuses the conf):");
        for n in &out.not_honoured {
            let _ = writeln!(s, "  - {}", n.message);
        }
        s.push('\n');
    }
    let mut jobs = if out.counts.jobs > 0 { format!(", {}", plural(out.counts.jobs, "Job", "Jobs")) } else { String::new() };
    if !out.load.cron_jobs.is_empty() {
        jobs.push_str(&format!(", {}", plural(out.load.cron_jobs.len(), "CronJob", "CronJobs")));
    }
    let _ = writeln!(
        s,
        "Loaded {} from {} ({}, {}, {}, {}{jobs}).",
        plural(out.load.loaded, "object", "objects"),
        plural(out.load.files, "file", "files"),
        plural(out.counts.nodes, "node", "nodes"),
        plural(out.counts.pods, "pod", "pods"),
        plural(out.counts.pod_groups, "PodGroup", "PodGroups"),
        plural(out.counts.queues, "queue", "queues"),
    );
    if out.load.skipped_other_scheduler > 0 {
        let _ = writeln!(
            s,
            "Skipped {} of other schedulers (spec.schedulerName is not {:?}).",
            plural(out.load.skipped_other_scheduler, "pending pod", "pending pods"),
            out.scheduler_name
        );
    }
    let mut quiet = super::job_report::QuietCycles::default();
    for (i, c) in out.cycles.iter().enumerate() {
        if out.jobs_run.is_some() && super::job_report::is_quiet(c) {
            quiet.add(i + 1);
            continue;
        }
        quiet.flush(&mut s);
        let _ = writeln!(
            s,
            "\nCycle {}: {}, {}, {}, {}",
            i + 1,
            plural(c.binds.len(), "bind", "binds"),
            plural(c.evictions.len(), "eviction", "evictions"),
            plural(c.pipelined.len(), "pipelined", "pipelined"),
            plural(c.unschedulable.len(), "pending", "pending"),
        );
        let mut by_node: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for b in &c.binds {
            by_node.entry(&b.node).or_default().push(&b.pod);
        }
        if !by_node.is_empty() {
            let _ = writeln!(s, "  Binds:");
            for (node, pods) in by_node {
                let _ = writeln!(s, "    {node}: {}", pods.join(", "));
            }
        }
        if !c.evictions.is_empty() {
            let _ = writeln!(s, "  Evictions:");
            for e in &c.evictions {
                let _ = writeln!(s, "    {} ({})", e.pod, e.reason);
            }
        }
        if !c.gates_removed.is_empty() {
            let _ = writeln!(
                s,
                "  Scheduling gate removed (queue admitted them; scheduled from the next cycle): {}",
                c.gates_removed.join(", ")
            );
        }
        if !c.pipelined.is_empty() {
            let _ = writeln!(s, "  Pipelined:");
            for p in &c.pipelined {
                let _ = writeln!(s, "    {} on {}", p.pod, p.node);
            }
        }
        if !c.unschedulable.is_empty() {
            let _ = writeln!(s, "  Pending:");
            for u in &c.unschedulable {
                let _ = writeln!(s, "    {}: {}: {}", u.pod, u.reason, u.message);
            }
        }
        if !c.pod_groups.is_empty() {
            let _ = writeln!(s, "  PodGroups:");
            for g in &c.pod_groups {
                let phase = if g.phase.is_empty() { "(no phase)" } else { &g.phase };
                let _ = write!(s, "    {}: {phase}", g.pod_group);
                for k in &g.conditions {
                    let _ = write!(s, "; {}={} {}", k.kind, k.status, k.reason);
                    if !k.message.is_empty() {
                        let _ = write!(s, ": {}", k.message);
                    }
                }
                s.push('\n');
            }
        }
        // The gang's per-cycle Warning repeats the PodGroup condition above; show the others.
        let events: Vec<&EventReport> =
            c.events.iter().filter(|e| !(e.kind == "Warning" && e.reason == "Unschedulable")).collect();
        if !events.is_empty() {
            let _ = writeln!(s, "  Events:");
            for e in events {
                let _ = writeln!(s, "    {}: {} {}: {}", e.pod_group, e.kind, e.reason, e.message);
            }
        }
        if !c.skipped.is_empty() {
            let _ = writeln!(s, "  Left out of the session:");
            for k in &c.skipped {
                let _ = writeln!(s, "    {}: {}", k.pod_group, k.reason);
            }
        }
        super::job_report::transitions_text(&mut s, c);
        if !c.queues.is_empty() {
            let _ = writeln!(s, "  Queues (allocated):");
            for q in &c.queues {
                let res: Vec<String> = q.allocated.iter().map(|(k, &v)| format!("{k} {}", format_amount(k, v))).collect();
                let res = if res.is_empty() { "nothing".to_string() } else { res.join(", ") };
                let _ = writeln!(s, "    {}: {res}", q.queue);
            }
        }
    }
    quiet.flush(&mut s);
    if !out.topology_placements.is_empty() {
        let _ = writeln!(s, "\nNetwork topology (the HyperNode holding each topology job's binds):");
        for p in &out.topology_placements {
            match &p.hyper_node {
                Some((h, tier)) => {
                    let _ = writeln!(s, "  {}: {} in HyperNode {h} (tier {tier})", p.pod_group, plural(p.bound, "pod", "pods"));
                }
                None => {
                    let _ = writeln!(s, "  {}: nothing bound", p.pod_group);
                }
            }
        }
    }
    super::job_report::jobs_text(&mut s, out);
    super::job_report::cron_jobs_text(&mut s, out);
    let issues = out.grouped_issue_lines();
    if !issues.is_empty() {
        let _ = writeln!(s, "\nIssues ({}):", out.issue_lines().len());
        for i in issues {
            let _ = writeln!(s, "  {i}");
        }
    }
    s
}

/// Cycles listed one per line in the text timings; more are summarised (median / max).
pub const TIMED_CYCLES_LISTED: usize = 10;

/// [`render_text`] followed by the wall-clock section:
///
/// ```text
/// Wall clock, ms (varies run to run)
///   load 2.10, startup 0.03
///   cycle 1: 0.412 (session open 0.051, enqueue 0.010, allocate 0.300, backfill 0.020, session close 0.031)
/// ```
///
/// one line per cycle up to [`TIMED_CYCLES_LISTED`] cycles, else one line of medians and
/// maxima per phase.
pub fn render_text_with_timings(out: &SimOutput, t: &SimTimings) -> String {
    let mut s = render_text(out);
    let _ = writeln!(s, "\nWall clock, ms (varies run to run)");
    let _ = writeln!(s, "  load {:.2}, startup {:.2}", t.load_ms, t.startup_ms);
    if t.cycles.len() <= TIMED_CYCLES_LISTED {
        for c in &t.cycles {
            let mut parts = vec![format!("session open {:.3}", c.session_open_ms)];
            parts.extend(c.actions.iter().map(|a| format!("{} {:.3}", a.action, a.ms)));
            parts.push(format!("session close {:.3}", c.session_close_ms));
            let _ = writeln!(s, "  cycle {}: {:.3} ({})", c.cycle, c.total_ms, parts.join(", "));
        }
        return s;
    }
    let summary = |v: Vec<f64>| median_max(v).map_or_else(|| "–".to_string(), |(m, x)| format!("{m:.3} / {x:.3}"));
    let mut parts = vec![
        format!("total {}", summary(t.cycles.iter().map(|c| c.total_ms).collect())),
        format!("session open {}", summary(t.cycles.iter().map(|c| c.session_open_ms).collect())),
    ];
    let names: Vec<&str> = t.cycles[0].actions.iter().map(|a| a.action.as_str()).collect();
    for (k, name) in names.iter().enumerate() {
        let v = t.cycles.iter().filter_map(|c| c.actions.get(k).map(|a| a.ms)).collect();
        parts.push(format!("{name} {}", summary(v)));
    }
    parts.push(format!("session close {}", summary(t.cycles.iter().map(|c| c.session_close_ms).collect())));
    let _ = writeln!(s, "  {} cycles, median / max: {}", t.cycles.len(), parts.join(", "));
    let _ = writeln!(s, "  (every cycle's phases: --output json, key \"timings\")");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(n: u64, open: f64, allocate: f64) -> super::super::timing::CycleTimings {
        use super::super::timing::{ActionTiming, CycleTimings};
        CycleTimings {
            cycle: n,
            session_open_ms: open,
            actions: vec![ActionTiming { action: "allocate".into(), ms: allocate }],
            session_close_ms: 0.5,
            total_ms: open + allocate + 0.5,
        }
    }

    #[test]
    fn timings_per_cycle_then_summarised() {
        let out = SimOutput::default();
        let few = SimTimings { load_ms: 2.5, startup_ms: 0.25, cycles: vec![cycle(1, 1.0, 2.0), cycle(2, 0.5, 0.25)] };
        let text = render_text_with_timings(&out, &few);
        assert!(
            text.ends_with(
                "\nWall clock, ms (varies run to run)\n  load 2.50, startup 0.25\n  \
                 cycle 1: 3.500 (session open 1.000, allocate 2.000, session close 0.500)\n  \
                 cycle 2: 1.250 (session open 0.500, allocate 0.250, session close 0.500)\n"
            ),
            "{text}"
        );
        // Past TIMED_CYCLES_LISTED cycles: one line of medians and maxima per phase.
        let many = SimTimings { cycles: (1..=12).map(|n| cycle(n, n as f64, 1.0)).collect(), ..few };
        let text = render_text_with_timings(&out, &many);
        assert!(
            text.contains("  12 cycles, median / max: total 8.000 / 13.500, session open 6.500 / 12.000, allocate 1.000 / 1.000, session close 0.500 / 0.500\n"),
            "{text}"
        );
        assert!(!text.contains("cycle 1:"), "{text}");
        // JSON: the decisions' keys untouched, the timings in their own key.
        let with: serde_json::Value = serde_json::from_str(&render_json_with_timings(&out, &few)).unwrap();
        let mut without: serde_json::Value = serde_json::from_str(&render_json(&out)).unwrap();
        assert_eq!(with["timings"]["cycles"][1]["actions"][0], serde_json::json!({"action": "allocate", "ms": 0.25}));
        assert_eq!(with["timings"]["loadMs"], 2.5);
        without["timings"] = with["timings"].clone();
        assert_eq!(with, without);
    }

    #[test]
    fn amounts_read_like_quantities() {
        let table = [
            ("cpu", 1500, "1500m"),
            ("cpu", 2000, "2"),
            ("cpu", 0, "0"),
            ("memory", 16 << 30, "16Gi"),
            ("memory", 1_500_000_000, "1500M"),
            ("memory", 1000, "1k"),
            ("memory", 1001, "1001"),
            ("memory", 0, "0"),
            ("ephemeral-storage", 10 << 30, "10Gi"),
            // hugepages are kept in milli-units like other scalars, but they are bytes.
            ("hugepages-2Mi", (512i64 << 20) * 1000, "512Mi"),
            ("hugepages-1Gi", (2i64 << 30) * 1000, "2Gi"),
            ("nvidia.com/gpu", 4000, "4"),
            ("nvidia.com/gpu", 1024 * 1000, "1024"),
            ("alibabacloud.com/gpu-milli", 810 * 1000, "810"),
            ("example.com/share", 500, "500m"),
            ("pods", 3, "3"),
            ("pods", 1024, "1024"),
        ];
        for (r, v, want) in table {
            assert_eq!(format_amount(r, v), want, "{r} {v}");
        }
    }
}
