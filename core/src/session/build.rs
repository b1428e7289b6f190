//! Building a session's tables from the cluster copy (Volcano cache `Snapshot` + `openSession`).

use super::tables::*;
use super::State;
use crate::cluster::{Cluster, PodRec};
use crate::conf::SchedulerConf;
use crate::model::{PodPhase, QueueState};
use crate::rng::SeededRng;
use crate::scheduler::CycleOptions;
use bumpalo::collections::Vec as BVec;
use bumpalo::Bump;
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

pub(super) fn build<'a>(arena: &'a Bump, cluster: &'a Cluster, conf: &'a SchedulerConf, opts: &CycleOptions) -> State<'a> {
    let dims = cluster.resources.len();

    // Nodes: Ready nodes in name order.
    let node_list: BVec<'a, _> = BVec::from_iter_in(cluster.nodes().filter(|(_, n)| n.spec.ready), arena);
    let nn = node_list.len();
    let node_row: HashMap<&str, u32> = node_list.iter().enumerate().map(|(i, (_, n))| (n.spec.name.as_str(), i as u32)).collect();
    let allocatable = arena.alloc_slice_fill_copy(dims * nn, 0i64);
    for (i, (_, n)) in node_list.iter().enumerate() {
        for d in 0..dims {
            allocatable[d * nn + i] = n.allocatable.get(d);
        }
    }
    let total = arena.alloc_slice_fill_copy(dims, 0i64);
    for d in 0..dims {
        total[d] = allocatable[d * nn..(d + 1) * nn].iter().sum();
    }
    let nodes = NodeTable {
        len: nn,
        id: arena.alloc_slice_fill_iter(node_list.iter().map(|(id, _)| *id)),
        rec: arena.alloc_slice_fill_iter(node_list.iter().map(|(_, r)| *r)),
        idle: arena.alloc_slice_copy(allocatable),
        allocatable,
        used: arena.alloc_slice_fill_copy(dims * nn, 0),
        releasing: arena.alloc_slice_fill_copy(dims * nn, 0),
        pipelined: arena.alloc_slice_fill_copy(dims * nn, 0),
        nonzero_cpu: arena.alloc_slice_fill_copy(nn, 0),
        nonzero_mem: arena.alloc_slice_fill_copy(nn, 0),
        pod_count: arena.alloc_slice_fill_copy(nn, 0),
        head: arena.alloc_slice_fill_copy(nn, NONE),
    };

    // Queues: every Queue, in name order.
    let queue_list: BVec<'a, _> = BVec::from_iter_in(cluster.queues(), arena);
    let queue_row: HashMap<&str, u32> = queue_list.iter().enumerate().map(|(i, q)| (q.spec.name.as_str(), i as u32)).collect();
    let queues = QueueTable {
        len: queue_list.len(),
        name: arena.alloc_slice_fill_iter(queue_list.iter().map(|q| cluster.names.get(&q.spec.name).unwrap_or_default())),
        rec: arena.alloc_slice_fill_iter(queue_list.iter().copied()),
    };
    let _ = QueueState::Open;

    // Jobs: PodGroups whose queue exists.
    let mut skipped = Vec::new();
    let default_queue = conf.options.default_queue.as_str();
    let mut job_list = BVec::new_in(arena);
    for (gid, g) in cluster.pod_groups() {
        let q = if g.spec.queue.is_empty() { default_queue } else { g.spec.queue.as_str() };
        match queue_row.get(q) {
            Some(&qi) => job_list.push((gid, g, qi)),
            None => skipped.push((gid, format!("queue {q:?} of PodGroup {}/{} does not exist", g.spec.namespace, g.spec.name))),
        }
    }
    let nj = job_list.len();
    let job_row: HashMap<(&str, &str), u32> =
        job_list.iter().enumerate().map(|(i, (_, g, _))| ((g.spec.namespace.as_str(), g.spec.name.as_str()), i as u32)).collect();

    // Tasks: pods of jobs (grouped by job, pod-name order inside), then other pods on nodes.
    let mut pods = BVec::new_in(arena);
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
    let task_start = arena.alloc_slice_fill_copy(nj, 0u32);
    let task_end = arena.alloc_slice_fill_copy(nj, 0u32);
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
    let resreq = arena.alloc_slice_fill_copy(nt * dims, 0i64);
    let init_resreq = arena.alloc_slice_fill_copy(nt * dims, 0i64);
    for (i, (_, _, p)) in pods.iter().enumerate() {
        p.resreq.write_row(&mut resreq[i * dims..(i + 1) * dims]);
        p.init_resreq.write_row(&mut init_resreq[i * dims..(i + 1) * dims]);
    }
    let tasks = TaskTable {
        len: nt,
        pod: arena.alloc_slice_fill_iter(pods.iter().map(|(_, id, _)| *id)),
        rec: arena.alloc_slice_fill_iter(pods.iter().map(|(_, _, p)| *p)),
        job: arena.alloc_slice_fill_iter(pods.iter().map(|(j, _, _)| *j)),
        status: arena.alloc_slice_fill_iter(pods.iter().map(|(_, _, p)| pod_status(p))),
        node: arena.alloc_slice_fill_copy(nt, NONE),
        resreq,
        init_resreq,
        priority: arena.alloc_slice_fill_iter(pods.iter().map(|(_, _, p)| pod_priority(cluster, p))),
        best_effort: arena.alloc_slice_fill_iter(pods.iter().map(|(_, _, p)| p.init_resreq.is_empty())),
        name_index: arena.alloc_slice_fill_iter(pods.iter().map(|(_, _, p)| name_index(&p.spec.name))),
        next_on_node: arena.alloc_slice_fill_copy(nt, NONE),
        prev_on_node: arena.alloc_slice_fill_copy(nt, NONE),
        last_status: arena.alloc_slice_fill_copy(nt, TaskStatus::Pending),
        last_node: arena.alloc_slice_fill_copy(nt, NONE),
    };
    for i in 0..nt {
        tasks.last_status[i] = tasks.status[i];
    }

    let global_default = cluster.global_default_priority().unwrap_or(0);
    let jobs = JobTable {
        len: nj,
        group: arena.alloc_slice_fill_iter(job_list.iter().map(|(id, _, _)| *id)),
        rec: arena.alloc_slice_fill_iter(job_list.iter().map(|(_, g, _)| *g)),
        queue: arena.alloc_slice_fill_iter(job_list.iter().map(|(_, _, q)| *q)),
        min_available: arena.alloc_slice_fill_iter(job_list.iter().map(|(_, g, _)| g.spec.min_member)),
        min_task_total: arena
            .alloc_slice_fill_iter(job_list.iter().map(|(_, g, _)| g.min_task_member.iter().map(|(_, v)| *v).sum())),
        priority: arena.alloc_slice_fill_iter(job_list.iter().map(|(_, g, _)| {
            let pc = &g.spec.priority_class_name;
            match cluster.priority_class(pc) {
                Some(p) if !pc.is_empty() => p.value,
                _ => global_default,
            }
        })),
        creation: arena.alloc_slice_fill_iter(job_list.iter().map(|(_, g, _)| g.spec.creation_ms)),
        uid: arena.alloc_slice_fill_iter(
            job_list
                .iter()
                .map(|(_, g, _)| cluster.names.get(&format!("{}/{}", g.spec.namespace, g.spec.name)).unwrap_or_default()),
        ),
        phase: arena.alloc_slice_fill_iter(job_list.iter().map(|(_, g, _)| g.spec.phase)),
        task_start,
        task_end,
        counts: arena.alloc_slice_fill_copy(nj, [0u32; N_STATUS]),
        pending_best_effort: arena.alloc_slice_fill_copy(nj, 0),
    };
    for i in 0..nt {
        if let Some(j) = tasks.job_of(TaskIdx(i as u32)) {
            jobs.counts[j.ix()][tasks.status[i] as usize] += 1;
            if tasks.best_effort[i] && tasks.status[i] == TaskStatus::Pending {
                jobs.pending_best_effort[j.ix()] += 1;
            }
        }
    }

    let mut state = State {
        cluster,
        conf,
        dims,
        nodes,
        tasks,
        jobs,
        queues,
        total,
        fit_errors: vec![Vec::new(); nj],
        job_fit_error: vec![String::new(); nj],
        job_condition: vec![None; nj],
        uid: format!("basalt-session-{}", opts.cycle),
        rng: SeededRng::new(opts.seed),
        skipped,
        binds: Vec::new(),
        evictions: Vec::new(),
        events: Vec::new(),
        affinity_tasks: &[],
        report_order: arena.alloc_slice_copy(&cluster.resources.report_order()),
        node_changes: Vec::new(),
    };
    let aff = BVec::from_iter_in((0..nt).filter(|&i| state.tasks.rec[i].c.has_pod_affinity()).map(|i| TaskIdx(i as u32)), arena);
    state.affinity_tasks = aff.into_bump_slice();
    // Put every non-terminated task with a node on it (Volcano cache `addTask`).
    for i in 0..nt {
        let t = TaskIdx(i as u32);
        let st = state.tasks.status[i];
        if st.completed() || st == TaskStatus::Pending {
            continue;
        }
        if let Some(&n) = node_row.get(state.tasks.rec[i].spec.node_name.as_str()) {
            state.node_add_task(t, NodeIdx(n));
        }
    }
    state
}
