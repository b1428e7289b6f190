//! The session layout: which nodes, queues, jobs and tasks a session has, in which order, with
//! every per-row value that depends only on the cluster copy (requests as rows, statuses,
//! priorities, task ranges of jobs). Computing it is most of a session open; the cluster copy can
//! keep it ([`crate::cluster::Cluster::prepare`]) so that opening a session on an unchanged
//! cluster only copies columns into the arena.

use super::tables::*;
use crate::cluster::{Cluster, NodeId, PodGroupId, PodId, PodRec};
use crate::intern::Sym;
use crate::model::PodPhase;
use hashbrown::HashMap;

/// A pod's task status (Volcano `getTaskStatus`).
pub fn pod_status(p: &PodRec) -> TaskStatus {
    let s = &p.spec;
    match s.phase {
        PodPhase::Running if s.deleting => TaskStatus::Releasing,
        PodPhase::Running => TaskStatus::Running,
        PodPhase::Pending if s.deleting => TaskStatus::Releasing,
        PodPhase::Pending if s.node_name.is_empty() => TaskStatus::Pending,
        PodPhase::Pending => TaskStatus::Bound,
        PodPhase::Succeeded => TaskStatus::Succeeded,
        PodPhase::Failed => TaskStatus::Failed,
        PodPhase::Unknown => TaskStatus::Unknown,
    }
}

fn pod_priority(c: &Cluster, p: &PodRec) -> i32 {
    if let Some(v) = p.spec.priority {
        return v;
    }
    // What the Priority admission plugin would have written, else Volcano's nil default of 1.
    if !p.spec.priority_class_name.is_empty() {
        if let Some(pc) = c.priority_class(&p.spec.priority_class_name) {
            return pc.value;
        }
    }
    1
}

/// Everything about a session's rows that the cluster copy alone decides.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Cluster generation it was computed at.
    pub generation: u64,
    /// The default queue it was computed for.
    pub default_queue: String,
    /// Resource dimensions.
    pub dims: usize,
    /// Ready nodes, name order.
    pub node_ids: Vec<NodeId>,
    /// Allocatable, column-major.
    pub allocatable: Vec<i64>,
    /// Σ allocatable per dimension.
    pub total: Vec<i64>,
    /// Queue names, name order.
    pub queues: Vec<String>,
    /// Jobs: PodGroup and queue row.
    pub jobs: Vec<(PodGroupId, u32)>,
    /// PodGroups left out, with the reason.
    pub skipped: Vec<(PodGroupId, String)>,
    /// Job priority.
    pub job_priority: Vec<i32>,
    /// Σ minTaskMember per job.
    pub job_min_task_total: Vec<i32>,
    /// Interned `ns/name` per job.
    pub job_uid: Vec<Sym>,
    /// First task row per job.
    pub task_start: Vec<u32>,
    /// One past the last task row per job.
    pub task_end: Vec<u32>,
    /// Tasks: job row (or NONE) and pod.
    pub tasks: Vec<(u32, PodId)>,
    /// (task index, pod id) ordered by pod id: resolving records in this order reads the
    /// cluster's slab front to back instead of jumping around it.
    pub tasks_by_pod: Vec<(u32, PodId)>,
    /// Resreq rows.
    pub resreq: Vec<i64>,
    /// Status per task.
    pub status: Vec<TaskStatus>,
    /// Priority per task.
    pub priority: Vec<i32>,
    /// BestEffort per task.
    pub best_effort: Vec<bool>,
    /// Name index per task.
    pub name_index: Vec<u64>,
    /// Node row each task sits on (NONE: pending, completed or on an unknown node).
    pub task_node: Vec<u32>,
    /// Tasks whose pods have inter-pod affinity terms.
    pub affinity_tasks: Vec<TaskIdx>,
    /// Dimensions in report order.
    pub report_order: Vec<usize>,
}

impl Layout {
    /// Computes the layout of `cluster` with `default_queue` for PodGroups that name none.
    pub fn new(cluster: &Cluster, default_queue: &str) -> Layout {
        let dims = cluster.resources.len();
        let node_list: Vec<_> = cluster.nodes().filter(|(_, n)| n.spec.ready).collect();
        let nn = node_list.len();
        let node_row: HashMap<&str, u32> =
            node_list.iter().enumerate().map(|(i, (_, n))| (n.spec.name.as_str(), i as u32)).collect();
        let mut allocatable = vec![0i64; dims * nn];
        for (i, (_, n)) in node_list.iter().enumerate() {
            for d in 0..dims {
                allocatable[d * nn + i] = n.allocatable.get(d);
            }
        }
        // Saturating: a few nodes with exabytes of memory must not wrap the cluster total.
        let total = (0..dims).map(|d| allocatable[d * nn..(d + 1) * nn].iter().fold(0i64, |a, &x| a.saturating_add(x))).collect();

        let queues: Vec<String> = cluster.queues().map(|q| q.spec.name.clone()).collect();
        let queue_row: HashMap<&str, u32> = cluster.queues().enumerate().map(|(i, q)| (q.spec.name.as_str(), i as u32)).collect();

        let mut skipped = Vec::new();
        let mut job_list = Vec::new();
        for (gid, g) in cluster.pod_groups() {
            let q = if g.spec.queue.is_empty() { default_queue } else { g.spec.queue.as_str() };
            match queue_row.get(q) {
                Some(&qi) => job_list.push((gid, g, qi)),
                None => {
                    skipped.push((gid, format!("queue {q:?} of PodGroup {}/{} does not exist", g.spec.namespace, g.spec.name)))
                }
            }
        }
        let nj = job_list.len();
        let job_row: HashMap<(&str, &str), u32> = job_list
            .iter()
            .enumerate()
            .map(|(i, (_, g, _))| ((g.spec.namespace.as_str(), g.spec.name.as_str()), i as u32))
            .collect();

        let mut pods = Vec::new();
        for (pid, p) in cluster.pods() {
            let job = p.spec.group.as_deref().and_then(|g| job_row.get(&(p.spec.namespace.as_str(), g)).copied());
            match job {
                Some(j) => pods.push((j, pid, p)),
                None => {
                    let st = pod_status(p);
                    if !p.spec.node_name.is_empty() && !st.completed() && node_row.contains_key(p.spec.node_name.as_str()) {
                        pods.push((NONE, pid, p));
                    }
                }
            }
        }
        pods.sort_by_key(|(j, _, _)| *j);
        let nt = pods.len();
        let mut task_start = vec![0u32; nj];
        let mut task_end = vec![0u32; nj];
        for (i, (j, _, _)) in pods.iter().enumerate() {
            if *j == NONE {
                continue;
            }
            let j = *j as usize;
            if task_end[j] == 0 {
                task_start[j] = i as u32;
            }
            task_end[j] = i as u32 + 1;
        }
        let mut resreq = vec![0i64; nt * dims];
        for (i, (_, _, p)) in pods.iter().enumerate() {
            p.resreq.write_row(&mut resreq[i * dims..(i + 1) * dims]);
        }
        let status: Vec<TaskStatus> = pods.iter().map(|(_, _, p)| pod_status(p)).collect();
        let task_node = pods
            .iter()
            .zip(&status)
            .map(|((_, _, p), st)| {
                if st.completed() || *st == TaskStatus::Pending {
                    NONE
                } else {
                    node_row.get(p.spec.node_name.as_str()).copied().unwrap_or(NONE)
                }
            })
            .collect();
        let global_default = cluster.global_default_priority().unwrap_or(0);
        Layout {
            generation: cluster.generation(),
            default_queue: default_queue.to_string(),
            dims,
            node_ids: node_list.iter().map(|(id, _)| *id).collect(),
            allocatable,
            total,
            queues,
            jobs: job_list.iter().map(|(id, _, q)| (*id, *q)).collect(),
            skipped,
            job_priority: job_list
                .iter()
                .map(|(_, g, _)| {
                    let pc = &g.spec.priority_class_name;
                    match cluster.priority_class(pc) {
                        Some(p) if !pc.is_empty() => p.value,
                        _ => global_default,
                    }
                })
                .collect(),
            job_min_task_total: job_list
                .iter()
                .map(|(_, g, _)| g.min_task_member.iter().fold(0i32, |a, (_, v)| a.saturating_add(*v)))
                .collect(),
            job_uid: job_list
                .iter()
                .map(|(_, g, _)| cluster.names.get(&format!("{}/{}", g.spec.namespace, g.spec.name)).unwrap_or_default())
                .collect(),
            task_start,
            task_end,
            tasks_by_pod: {
                let mut v: Vec<(u32, PodId)> = pods.iter().enumerate().map(|(i, p)| (i as u32, p.1)).collect();
                v.sort_unstable_by_key(|&(_, id)| id.0);
                v
            },
            tasks: pods.iter().map(|(j, id, _)| (*j, *id)).collect(),
            resreq,
            status,
            priority: pods.iter().map(|(_, _, p)| pod_priority(cluster, p)).collect(),
            best_effort: pods.iter().map(|(_, _, p)| p.resreq.is_empty()).collect(),
            name_index: pods.iter().map(|(_, _, p)| name_index(&p.spec.name)).collect(),
            task_node,
            affinity_tasks: pods
                .iter()
                .enumerate()
                .filter(|(_, (_, _, p))| p.c.has_pod_affinity())
                .map(|(i, _)| TaskIdx(i as u32))
                .collect(),
            report_order: cluster.resources.report_order(),
        }
    }
}
