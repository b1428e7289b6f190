//! Importer for Alibaba's `cluster-trace-gpu-v2023` ("openb") CSV lists: one node list and one
//! pod list → a [`Workload`].
//!
//! Mapping (see `docs/replay.md` and [`super::shapes`]): each node row is a Node; each pod row
//! a Pod in namespace `openb` with its requests, GPU share, allowed GPU models and QoS
//! PriorityClass; pods are grouped into PodGroups ([`GangGrouping`]) placed in queues
//! ([`QueueAssignment`]). Time: `creation_time` is the arrival, counted from the window start
//! ([`WindowStart`]); the run time is `deletion_time − scheduled_time` (or `− creation_time` for
//! pods never scheduled in production; pods created before the window start arrive at 0 with
//! what was left of their run). Malformed rows are skipped and reported with file and
//! line; the rest loads.

pub mod jobs;
pub mod nodes;
pub mod pods;

pub use jobs::{parse_queue_weight, GangGrouping, QueueAssignment};

use super::shapes::{min_resources, pod_spec, Qos};
use super::workload::{InputIssue, JobArrival, TaskArrival, Workload, MS_PER_S};
use basalt_core::cluster::Delta;
use basalt_core::model::{PodGroupPhase, PodGroupSpec, QueueSpec};
use pods::PodRow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Namespace of the trace's pods and PodGroups.
pub const NAMESPACE: &str = "openb";
/// Default pod list in the trace directory.
pub const DEFAULT_POD_LIST: &str = "openb_pod_list_default.csv";
/// Node list of every node (1,523), the default.
pub const ALL_NODE_LIST: &str = "openb_node_list_all_node.csv";
/// Node list of the GPU nodes only (1,213).
pub const GPU_NODE_LIST: &str = "openb_node_list_gpu_node.csv";

/// Where virtual time 0 is on the trace's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WindowStart {
    /// The 1st percentile of creation times: the trace lists the pods alive in its last ~34
    /// days plus a few long-lived older ones; those arrive at 0 instead of months earlier.
    #[default]
    Auto,
    /// This many seconds since trace start (0 replays the trace's whole clock).
    Seconds(i64),
}

impl WindowStart {
    /// Parses `auto` or a whole number of seconds ≥ 0.
    pub fn parse(s: &str) -> Result<Self, String> {
        if s == "auto" {
            return Ok(WindowStart::Auto);
        }
        match s.parse::<i64>() {
            Ok(v) if v >= 0 => Ok(WindowStart::Seconds(v)),
            _ => Err(format!("invalid window start {s:?}: expected auto or seconds >= 0")),
        }
    }
}

/// How to import.
#[derive(Clone, Debug)]
pub struct AlibabaOptions {
    /// Pod list: a path, or a file name inside the trace directory.
    pub pod_list: PathBuf,
    /// Node list: a path, or a file name inside the trace directory.
    pub node_list: PathBuf,
    /// Queue of each job.
    pub queues: QueueAssignment,
    /// Weights of queues by name (others get 1).
    pub queue_weights: BTreeMap<String, i32>,
    /// Gang grouping.
    pub gangs: GangGrouping,
    /// Virtual time 0 on the trace clock.
    pub start: WindowStart,
    /// Factor applied to arrival times after the window start (0.1 = ten times the arrival
    /// rate; run times are kept). Must be > 0.
    pub arrival_scale: f64,
}

impl Default for AlibabaOptions {
    fn default() -> Self {
        AlibabaOptions {
            pod_list: DEFAULT_POD_LIST.into(),
            node_list: ALL_NODE_LIST.into(),
            queues: QueueAssignment::default(),
            queue_weights: BTreeMap::new(),
            gangs: GangGrouping::default(),
            start: WindowStart::default(),
            arrival_scale: 1.0,
        }
    }
}

fn resolve(dir: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() || p.components().count() > 1 {
        p.to_path_buf()
    } else {
        dir.join(p)
    }
}

/// Virtual time 0 in trace seconds for `rows`.
fn window_start(rows: &[PodRow], start: WindowStart) -> i64 {
    match start {
        WindowStart::Seconds(s) => s,
        WindowStart::Auto => {
            let mut c: Vec<i64> = rows.iter().map(|r| r.creation_s).collect();
            c.sort_unstable();
            c.get(c.len() / 100).copied().unwrap_or(0)
        }
    }
}

/// Imports the trace in `dir`.
///
/// Errors: a list cannot be read at all or lacks a column (an issue naming the file). Malformed
/// rows are not errors: they are in [`Workload::issues`] and counted in [`Workload::skipped`].
pub fn import(dir: &Path, opts: &AlibabaOptions) -> Result<Workload, InputIssue> {
    let node_path = resolve(dir, &opts.node_list);
    let pod_path = resolve(dir, &opts.pod_list);
    let (nodes, mut issues) = nodes::read_nodes(&node_path)?;
    let (rows, pod_issues) = pods::read_pods(&pod_path)?;
    issues.extend(pod_issues);
    let skipped = issues.len();
    let scale = if opts.arrival_scale.is_finite() && opts.arrival_scale > 0.0 { opts.arrival_scale } else { 1.0 };
    let start = window_start(&rows, opts.start);
    let arrival_ms = |r: &PodRow| (((r.creation_s.max(start) - start) as f64) * scale * MS_PER_S as f64).round() as i64;

    let mut jobs = Vec::new();
    let mut queues_used = BTreeSet::new();
    let mut gangs = 0;
    for (index, range) in opts.gangs.group(&rows).into_iter().enumerate() {
        let members = &rows[range];
        let first = &members[0];
        let queue = opts.queues.queue_of(index, first);
        queues_used.insert(queue.clone());
        let arrival = members.iter().map(arrival_ms).max().unwrap_or(0);
        let group = format!("pg-{}", first.name);
        let tasks: Vec<TaskArrival> = members
            .iter()
            .map(|r| TaskArrival {
                pod: pod_spec(NAMESPACE, &r.name, &group, arrival, &r.shape, r.qos, &r.gpu_models),
                arrival_ms: arrival,
                duration_ms: Some(r.run_time_s(start).saturating_mul(MS_PER_S)),
            })
            .collect();
        if tasks.len() > 1 {
            gangs += 1;
        }
        jobs.push(JobArrival {
            group: PodGroupSpec {
                namespace: NAMESPACE.into(),
                name: group.clone(),
                uid: format!("{NAMESPACE}/{group}"),
                creation_ms: arrival,
                min_member: tasks.len() as i32,
                queue,
                priority_class_name: first.qos.priority_class().into(),
                min_resources: Some(min_resources(tasks.iter().map(|t| &t.pod))),
                phase: PodGroupPhase::Pending,
                ..Default::default()
            },
            arrival_ms: arrival,
            tasks,
        });
    }

    let mut setup: Vec<Delta> = Qos::ALL.iter().map(|q| Delta::PriorityClass(q.priority_class_spec())).collect();
    let mut notes = Vec::new();
    for q in &queues_used {
        let weight = opts.queue_weights.get(q).copied().unwrap_or(1);
        setup.push(Delta::Queue(QueueSpec { name: q.clone(), weight, reclaimable: true, ..Default::default() }));
    }
    for q in opts.queue_weights.keys().filter(|q| !queues_used.contains(*q)) {
        notes.push(format!("queue weight for {q:?} ignored: no job is in that queue"));
    }
    let node_count = nodes.len();
    setup.extend(nodes.into_iter().map(Delta::Node));
    let early = rows.iter().filter(|r| r.creation_s < start).count();
    notes.insert(
        0,
        format!(
            "trace window starts at {start} s (--start {}); {early} pod(s) created earlier arrive at 0 with the rest of their run; arrival scale {scale}",
            match opts.start {
                WindowStart::Auto => "auto".to_string(),
                WindowStart::Seconds(s) => s.to_string(),
            }
        ),
    );
    notes.insert(
        1,
        format!(
            "{} pods from {}, {node_count} nodes from {}; queues by {} ({}); gangs {} ({gangs} of more than one pod)",
            rows.len(),
            pod_path.display(),
            node_path.display(),
            opts.queues,
            queues_used.iter().cloned().collect::<Vec<_>>().join(", "),
            opts.gangs,
        ),
    );
    let mut w = Workload { name: format!("alibaba-v2023 {}", dir.display()), setup, jobs, issues, skipped, notes };
    w.normalize();
    Ok(w)
}
