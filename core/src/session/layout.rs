//! The session layout: which nodes, queues, jobs and tasks a session has, in which order, with
//! every per-row value that depends only on the cluster copy (requests as rows, statuses,
//! priorities, task ranges of jobs). Computing it is most of a session open; the cluster copy
//! keeps it ([`crate::cluster::Cluster::prepare`]) and patches it with the changes of each
//! cycle ([`Layout::patch`]), so opening a session only copies columns into the arena.
//!
//! Row order decides ties and therefore decisions, so a patched layout must equal a fresh one
//! field by field: nodes by name (ready ones only), jobs by PodGroup `namespace/name` (PodGroups
//! whose queue exists), tasks grouped by job in pod `namespace/name` order, then the pods of no
//! job that still sit on a session node, in `namespace/name` order.

use super::tables::*;
use crate::cluster::{Cluster, NodeId, PodGroupId, PodGroupRec, PodId, PodRec};
use crate::intern::Sym;
use crate::model::PodPhase;
use hashbrown::HashMap;
use std::ops::Range;

mod patch;

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

/// A PodGroup's priority: its PriorityClass's value, else the global default (0 without one).
fn group_priority(c: &Cluster, g: &PodGroupRec, global_default: i32) -> i32 {
    let pc = &g.spec.priority_class_name;
    match c.priority_class(pc) {
        Some(p) if !pc.is_empty() => p.value,
        _ => global_default,
    }
}

/// Node row of a task (NONE: pending, completed, or on a node the session does not have).
fn task_node(st: TaskStatus, p: &PodRec, node_row: &dyn Fn(&str) -> Option<u32>) -> u32 {
    if st.completed() || st == TaskStatus::Pending {
        NONE
    } else {
        node_row(p.spec.node_name.as_str()).unwrap_or(NONE)
    }
}

/// Whether a pod of no job is a task: it sits on a session node and has not completed (Volcano
/// keeps such pods in the snapshot only for the node accounting).
fn ungrouped_task(p: &PodRec, node_row: &dyn Fn(&str) -> Option<u32>) -> bool {
    !p.spec.node_name.is_empty() && !pod_status(p).completed() && node_row(p.spec.node_name.as_str()).is_some()
}

/// `(namespace, name)` of a PodGroup record, the job order key.
fn group_key(g: &PodGroupRec) -> (&str, &str) {
    (g.spec.namespace.as_str(), g.spec.name.as_str())
}

/// Everything about a session's rows that the cluster copy alone decides.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Cluster generation it was computed at.
    pub generation: u64,
    /// The default queue it was computed for.
    pub default_queue: String,
    /// Resource dimensions.
    pub dims: usize,
    /// Ready nodes, name order.
    pub node_ids: Vec<NodeId>,
    /// Allocatable, row-major (`node * dims + d`).
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
    /// First task row per job (0 for a job without tasks).
    pub task_start: Vec<u32>,
    /// One past the last task row per job (0 for a job without tasks).
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
    /// Per pod slot ([`Cluster::pod_slots`]): its task row, NONE when it is no task.
    pub pod_row: Vec<u32>,
    /// Per PodGroup slot ([`Cluster::pod_group_slots`]): its job row, NONE when it is no job.
    pub group_row: Vec<u32>,
    /// Per node slot ([`Cluster::node_slots`]): its node row, NONE when not in the session.
    pub node_row: Vec<u32>,
}

impl Layout {
    /// Computes the layout of `cluster` with `default_queue` for PodGroups that name none.
    pub fn new(cluster: &Cluster, default_queue: &str) -> Layout {
        let dims = cluster.resources.len();
        let node_list: Vec<_> = cluster.nodes().filter(|(_, n)| n.spec.ready).collect();
        let nn = node_list.len();
        let node_rows: HashMap<&str, u32> =
            node_list.iter().enumerate().map(|(i, (_, n))| (n.spec.name.as_str(), i as u32)).collect();
        let node_row = |name: &str| node_rows.get(name).copied();
        let mut allocatable = vec![0i64; dims * nn];
        for (i, (_, n)) in node_list.iter().enumerate() {
            for d in 0..dims {
                allocatable[i * dims + d] = n.allocatable.get(d);
            }
        }
        let queues: Vec<String> = cluster.queues().map(|q| q.spec.name.clone()).collect();
        let queue_row: HashMap<&str, u32> = cluster.queues().enumerate().map(|(i, q)| (q.spec.name.as_str(), i as u32)).collect();

        let mut l = Layout {
            generation: cluster.generation(),
            default_queue: default_queue.to_string(),
            dims,
            node_ids: node_list.iter().map(|(id, _)| *id).collect(),
            total: total(&allocatable, dims, nn),
            allocatable,
            queues,
            report_order: cluster.resources.report_order(),
            ..Layout::default()
        };
        let mut job_list = Vec::new();
        for (gid, g) in cluster.pod_groups() {
            let q = if g.spec.queue.is_empty() { default_queue } else { g.spec.queue.as_str() };
            match queue_row.get(q) {
                Some(&qi) => job_list.push((gid, g, qi)),
                None => l.skipped.push((gid, skip_reason(g, q))),
            }
        }
        let job_row: HashMap<(&str, &str), u32> =
            job_list.iter().enumerate().map(|(i, (_, g, _))| (group_key(g), i as u32)).collect();

        let mut pods = Vec::new();
        for (pid, p) in cluster.pods() {
            let job = p.spec.group.as_deref().and_then(|g| job_row.get(&(p.spec.namespace.as_str(), g)).copied());
            match job {
                Some(j) => pods.push((j, pid, p)),
                None if ungrouped_task(p, &node_row) => pods.push((NONE, pid, p)),
                None => {}
            }
        }
        // Stable: tasks of a job stay in pod namespace/name order.
        pods.sort_by_key(|(j, _, _)| *j);
        l.reserve_tasks(pods.len());
        for &(j, pid, p) in &pods {
            l.push_task(cluster, j, pid, p, &node_row);
        }
        let global_default = cluster.global_default_priority().unwrap_or(0);
        let (mut at, nt) = (0, pods.len());
        for (j, &(gid, g, qi)) in job_list.iter().enumerate() {
            let start = at;
            while at < nt && pods[at].0 == j as u32 {
                at += 1;
            }
            l.push_job(cluster, gid, qi, g, global_default, start..at);
        }
        l.index_rows(cluster);
        l.node_row = vec![NONE; cluster.node_slots()];
        for (i, id) in l.node_ids.iter().enumerate() {
            l.node_row[id.0 as usize] = i as u32;
        }
        l
    }

    /// Empties every column, keeping the buffers.
    fn clear(&mut self) {
        let Layout {
            generation,
            default_queue,
            dims,
            node_ids,
            allocatable,
            total,
            queues,
            jobs,
            skipped,
            job_priority,
            job_min_task_total,
            job_uid,
            task_start,
            task_end,
            tasks,
            tasks_by_pod,
            resreq,
            status,
            priority,
            best_effort,
            name_index,
            task_node,
            affinity_tasks,
            report_order,
            pod_row,
            group_row,
            node_row,
        } = self;
        (*generation, *dims) = (0, 0);
        default_queue.clear();
        node_ids.clear();
        allocatable.clear();
        total.clear();
        queues.clear();
        jobs.clear();
        skipped.clear();
        job_priority.clear();
        job_min_task_total.clear();
        job_uid.clear();
        task_start.clear();
        task_end.clear();
        tasks.clear();
        tasks_by_pod.clear();
        resreq.clear();
        status.clear();
        priority.clear();
        best_effort.clear();
        name_index.clear();
        task_node.clear();
        affinity_tasks.clear();
        report_order.clear();
        pod_row.clear();
        group_row.clear();
        node_row.clear();
    }

    fn reserve_tasks(&mut self, n: usize) {
        self.tasks.reserve(n);
        self.resreq.reserve(n * self.dims);
        self.status.reserve(n);
        self.priority.reserve(n);
        self.best_effort.reserve(n);
        self.name_index.reserve(n);
        self.task_node.reserve(n);
    }

    /// Appends the task row of pod `id` in job row `job` (NONE: no job).
    fn push_task(&mut self, cluster: &Cluster, job: u32, id: PodId, p: &PodRec, node_row: &dyn Fn(&str) -> Option<u32>) {
        let (i, dims) = (self.tasks.len(), self.dims);
        self.tasks.push((job, id));
        self.resreq.resize((i + 1) * dims, 0);
        self.status.push(TaskStatus::Pending);
        self.priority.push(0);
        self.best_effort.push(false);
        self.name_index.push(0);
        self.task_node.push(NONE);
        if p.c.has_pod_affinity() {
            self.affinity_tasks.push(TaskIdx(i as u32));
        }
        self.write_task(cluster, i, p, node_row);
    }

    /// Writes the values of task row `i` from its pod (job and pod id stay; the affinity list
    /// is left to the caller).
    fn write_task(&mut self, cluster: &Cluster, i: usize, p: &PodRec, node_row: &dyn Fn(&str) -> Option<u32>) {
        let dims = self.dims;
        p.resreq.write_row(&mut self.resreq[i * dims..(i + 1) * dims]);
        let st = pod_status(p);
        self.status[i] = st;
        self.priority[i] = pod_priority(cluster, p);
        self.best_effort[i] = p.resreq.is_empty();
        self.name_index[i] = name_index(&p.spec.name);
        self.task_node[i] = task_node(st, p, node_row);
    }

    /// Rewrites task row `i` in place after its pod changed.
    fn rewrite_task(&mut self, cluster: &Cluster, i: usize, p: &PodRec, node_row: &dyn Fn(&str) -> Option<u32>) {
        self.write_task(cluster, i, p, node_row);
        let t = TaskIdx(i as u32);
        match (self.affinity_tasks.binary_search(&t), p.c.has_pod_affinity()) {
            (Err(at), true) => self.affinity_tasks.insert(at, t),
            (Ok(at), false) => {
                self.affinity_tasks.remove(at);
            }
            _ => {}
        }
    }

    /// Appends old task rows `from` of `old` with job row `job`.
    fn copy_tasks(&mut self, old: &Layout, from: Range<usize>, job: u32) {
        self.copy_task_rows(old, from, |_| job);
    }

    /// Appends old task rows `from` of `old`, old job row `j` becoming `job(j)`.
    fn copy_task_rows(&mut self, old: &Layout, from: Range<usize>, job: impl Fn(u32) -> u32) {
        let (base, dims) = (self.tasks.len(), self.dims);
        self.tasks.extend(old.tasks[from.clone()].iter().map(|&(j, id)| (job(j), id)));
        self.resreq.extend_from_slice(&old.resreq[from.start * dims..from.end * dims]);
        self.status.extend_from_slice(&old.status[from.clone()]);
        self.priority.extend_from_slice(&old.priority[from.clone()]);
        self.best_effort.extend_from_slice(&old.best_effort[from.clone()]);
        self.name_index.extend_from_slice(&old.name_index[from.clone()]);
        self.task_node.extend_from_slice(&old.task_node[from.clone()]);
        let a = &old.affinity_tasks;
        let (lo, hi) = (a.partition_point(|t| (t.0 as usize) < from.start), a.partition_point(|t| (t.0 as usize) < from.end));
        self.affinity_tasks.extend(a[lo..hi].iter().map(|t| TaskIdx((t.0 as usize - from.start + base) as u32)));
    }

    /// Appends `run`, consecutive old job rows (entries: PodGroup, queue row, old row) whose
    /// tasks did not change, as new rows from `first`: their task rows are copied as one
    /// block and every range shifted by the same amount.
    fn copy_jobs(&mut self, old: &Layout, run: &[(PodGroupId, u32, u32)], first: u32) {
        let Some(&(_, _, or0)) = run.first() else { return };
        let olds = or0 as usize..or0 as usize + run.len();
        let with_tasks = || olds.clone().filter(|&o| old.task_end[o] > 0);
        let (from, to) = match (with_tasks().next(), with_tasks().next_back()) {
            (Some(a), Some(b)) => (old.task_start[a] as usize, old.task_end[b] as usize),
            _ => (0, 0),
        };
        let base = self.tasks.len();
        self.copy_task_rows(old, from..to, |j| j - or0 + first);
        for &(g, q, o) in run {
            self.jobs.push((g, q));
            let (s, e) = (old.task_start[o as usize] as usize, old.task_end[o as usize] as usize);
            self.push_range(if e == 0 { 0..0 } else { s - from + base..e - from + base });
        }
        self.job_priority.extend_from_slice(&old.job_priority[olds.clone()]);
        self.job_min_task_total.extend_from_slice(&old.job_min_task_total[olds.clone()]);
        self.job_uid.extend_from_slice(&old.job_uid[olds]);
    }

    /// Appends job row values computed from PodGroup `g`, with task rows `range`.
    fn push_job(
        &mut self,
        cluster: &Cluster,
        gid: PodGroupId,
        q: u32,
        g: &PodGroupRec,
        global_default: i32,
        range: Range<usize>,
    ) {
        self.jobs.push((gid, q));
        self.job_priority.push(group_priority(cluster, g, global_default));
        self.job_min_task_total.push(min_task_total(g));
        self.job_uid.push(g.uid);
        self.push_range(range);
    }

    /// Appends a job's task range ((0, 0) when empty).
    fn push_range(&mut self, range: Range<usize>) {
        let (s, e) = if range.is_empty() { (0, 0) } else { (range.start as u32, range.end as u32) };
        self.task_start.push(s);
        self.task_end.push(e);
    }

    /// Recomputes the pod and PodGroup slot → row indexes and `tasks_by_pod` from the rows.
    fn index_rows(&mut self, cluster: &Cluster) {
        self.pod_row.clear();
        self.pod_row.resize(cluster.pod_slots(), NONE);
        for (i, (_, id)) in self.tasks.iter().enumerate() {
            self.pod_row[id.0 as usize] = i as u32;
        }
        self.tasks_by_pod.clear();
        self.tasks_by_pod.extend(self.pod_row.iter().enumerate().filter(|(_, &r)| r != NONE).map(|(s, &r)| (r, PodId(s as u32))));
        self.group_row.clear();
        self.group_row.resize(cluster.pod_group_slots(), NONE);
        for (i, (g, _)) in self.jobs.iter().enumerate() {
            self.group_row[g.0 as usize] = i as u32;
        }
    }
}

/// Σ minTaskMember of a PodGroup (saturating).
fn min_task_total(g: &PodGroupRec) -> i32 {
    g.min_task_member.iter().fold(0i32, |a, (_, v)| a.saturating_add(*v))
}

/// Σ allocatable per dimension of row-major `allocatable` (`nn` rows of `dims`). Saturating: a
/// few nodes with exabytes of memory must not wrap the cluster total.
fn total(allocatable: &[i64], dims: usize, nn: usize) -> Vec<i64> {
    let mut t = vec![0i64; dims];
    for row in allocatable.chunks_exact(dims.max(1)).take(nn) {
        for (a, &x) in t.iter_mut().zip(row) {
            *a = a.saturating_add(x);
        }
    }
    t
}

/// Why a PodGroup is left out of the session: its queue does not exist.
fn skip_reason(g: &PodGroupRec, q: &str) -> String {
    format!("queue {q:?} of PodGroup {}/{} does not exist", g.spec.namespace, g.spec.name)
}
