//! Building a session's tables in the arena from a [`Layout`] (Volcano cache `Snapshot` +
//! `openSession`): columns are copied, records resolved by id, and every task that sits on a
//! node is added to it.

use super::cycle::CycleOptions;
use super::layout::Layout;
use super::tables::*;
use super::State;
use crate::cluster::{Cluster, PodRec};
use crate::conf::SchedulerConf;
use crate::rng::SeededRng;
use bumpalo::Bump;

/// The task records in task order, resolved in pod-id order (see `Layout::tasks_by_pod`).
fn task_records<'a>(arena: &'a Bump, cluster: &'a Cluster, l: &Layout) -> &'a [&'a PodRec] {
    let Some(&(_, first)) = l.tasks.first() else { return &[] };
    let first = cluster.pod(first).expect("layout pod exists");
    let recs = arena.alloc_slice_fill_copy(l.tasks.len(), first);
    for &(i, id) in &l.tasks_by_pod {
        recs[i as usize] = cluster.pod(id).expect("layout pod exists");
    }
    recs
}

/// The session's shard column ([`NodeTable::in_shard`]): empty without sharding, else the
/// cluster's resolved membership copied by node row.
fn shard_column<'a>(arena: &'a Bump, cluster: &Cluster, conf: &SchedulerConf, ids: &[crate::cluster::NodeId]) -> &'a [bool] {
    if conf.options.sharding_mode == crate::model::ShardingMode::None {
        return &[];
    }
    let bits = cluster.shard_bits(&conf.options.sharding_name);
    arena.alloc_slice_fill_iter(ids.iter().map(|id| bits.by_slot.get(id.0 as usize).copied().unwrap_or(false)))
}

/// Builds the session state from layout `l`; `kept` is the same layout when the cluster copy
/// keeps it (then the columns a session never changes are borrowed from it, not copied).
pub(super) fn build<'a>(
    arena: &'a Bump,
    cluster: &'a Cluster,
    l: &Layout,
    kept: Option<&'a Layout>,
    conf: &'a SchedulerConf,
    opts: &CycleOptions,
    devices: super::devices::DeviceConf,
) -> State<'a> {
    // A read-only column: borrowed from the kept layout, else copied into the arena.
    fn col<'a, T: Copy>(arena: &'a Bump, kept: Option<&'a [T]>, v: &[T]) -> &'a [T] {
        match kept {
            Some(k) => k,
            None => arena.alloc_slice_copy(v),
        }
    }
    let dims = l.dims;
    let nn = l.node_ids.len();
    let allocatable = col(arena, kept.map(|k| &k.allocatable[..]), &l.allocatable);
    let nodes = NodeTable {
        len: nn,
        id: col(arena, kept.map(|k| &k.node_ids[..]), &l.node_ids),
        rec: arena.alloc_slice_fill_iter(l.node_ids.iter().map(|&id| cluster.node(id).expect("layout node exists"))),
        acct: super::acct_rows(arena, allocatable, dims),
        allocatable,
        head: arena.alloc_slice_fill_copy(nn, NONE),
        in_shard: shard_column(arena, cluster, conf, &l.node_ids),
    };
    let queue_recs: Vec<_> = l.queues.iter().map(|q| cluster.queue(q).expect("layout queue exists")).collect();
    let queues = QueueTable {
        len: queue_recs.len(),
        name: arena.alloc_slice_fill_iter(queue_recs.iter().map(|q| cluster.names.get(&q.spec.name).unwrap_or_default())),
        rec: arena.alloc_slice_copy(&queue_recs),
        acct: Default::default(),
    };
    let nt = l.tasks.len();
    let nj = l.jobs.len();
    let tasks = TaskTable {
        len: nt,
        pod: arena.alloc_slice_fill_iter(l.tasks.iter().map(|(_, id)| *id)),
        rec: task_records(arena, cluster, l),
        job: arena.alloc_slice_fill_iter(l.tasks.iter().map(|(j, _)| *j)),
        status: arena.alloc_slice_copy(&l.status),
        node: arena.alloc_slice_fill_copy(nt, NONE),
        resreq: col(arena, kept.map(|k| &k.resreq[..]), &l.resreq),
        priority: col(arena, kept.map(|k| &k.priority[..]), &l.priority),
        best_effort: col(arena, kept.map(|k| &k.best_effort[..]), &l.best_effort),
        name_index: col(arena, kept.map(|k| &k.name_index[..]), &l.name_index),
        next_on_node: arena.alloc_slice_fill_copy(nt, NONE),
        prev_on_node: arena.alloc_slice_fill_copy(nt, NONE),
        last_status: arena.alloc_slice_copy(&l.status),
        last_node: arena.alloc_slice_fill_copy(nt, NONE),
        eviction_occurred: arena.alloc_slice_fill_copy(nt, false),
    };
    let group_recs =
        arena.alloc_slice_fill_iter(l.jobs.iter().map(|(g, _)| cluster.pod_group(*g).expect("layout PodGroup exists")));
    let jobs = JobTable {
        len: nj,
        group: arena.alloc_slice_fill_iter(l.jobs.iter().map(|(g, _)| *g)),
        queue: arena.alloc_slice_fill_iter(l.jobs.iter().map(|(_, q)| *q)),
        min_available: arena.alloc_slice_fill_iter(group_recs.iter().map(|g| g.spec.min_member)),
        min_task_total: col(arena, kept.map(|k| &k.job_min_task_total[..]), &l.job_min_task_total),
        priority: col(arena, kept.map(|k| &k.job_priority[..]), &l.job_priority),
        creation: arena.alloc_slice_fill_iter(group_recs.iter().map(|g| g.spec.creation_ms)),
        uid: col(arena, kept.map(|k| &k.job_uid[..]), &l.job_uid),
        phase: arena.alloc_slice_fill_iter(group_recs.iter().map(|g| g.spec.phase)),
        rec: group_recs,
        task_start: col(arena, kept.map(|k| &k.task_start[..]), &l.task_start),
        task_end: col(arena, kept.map(|k| &k.task_end[..]), &l.task_end),
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
        total: col(arena, kept.map(|k| &k.total[..]), &l.total),
        fit_errors: vec![Vec::new(); nj],
        uid: format!("basalt-session-{}", opts.cycle),
        now_ms: opts.now_ms,
        rng: SeededRng::new(opts.seed),
        skipped: l.skipped.clone(),
        binds: Vec::new(),
        evictions: Vec::new(),
        events: Vec::new(),
        preemption: Default::default(),
        topology_searches: Vec::new(),
        affinity_tasks: col(arena, kept.map(|k| &k.affinity_tasks[..]), &l.affinity_tasks),
        affinity_index: None,
        report_order: col(arena, kept.map(|k| &k.report_order[..]), &l.report_order),
        node_changes: Vec::new(),
        view: Default::default(),
        devices: Default::default(),
        notes: super::notes::CloseNotes::new(nj),
        gate_removals: Vec::new(),
        gate_reserve: Default::default(),
    };
    if !l.affinity_tasks.is_empty() && conf.options.class_cache {
        state.affinity_index =
            Some(super::affinity_index::AffinityIndex::build(arena, &state.nodes, &state.tasks, &l.affinity_tasks));
    }
    // Put every non-terminated task with a node on it (Volcano cache `addTask`).
    for (i, &n) in l.task_node.iter().enumerate() {
        if n != NONE {
            state.node_add_task(TaskIdx(i as u32), NodeIdx(n));
        }
    }
    state.node_changes.clear();
    state.devices = super::devices::DeviceTable::build(arena, &state, devices);
    state.queues.acct = super::queues::build(arena, &state);
    state.gate_reserve = super::gate_reserve::GateReserve::build(&state, conf.options.scheduling_gates_queue_admission);
    state
}
