//! What preempt and reclaim share (volcano-behaviour.md §1.5, §2): the starving jobs and their
//! preemptor tasks, the nodes a preemptor may take by eviction (Volcano
//! `PredicateForPreemptAction` over `PredicateHelper.PredicateNodes`), `ValidateVictims`, the
//! order victims are taken in (`BuildVictimsPriorityQueue`), and the node-level attempt: evict
//! on one node inside its own statement until the preemptor fits, then pipeline it there and
//! merge, or discard every eviction of that node.

use super::heap::GoHeap;
use crate::framework::k8s::PodCtx;
use crate::framework::{Plugins, Session};
use crate::session::statement::Statement;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use crate::session::State;
use std::cmp::Ordering;

/// Starving jobs by queue and their preemptor tasks, gathered once at the start of preempt or
/// reclaim (Volcano's `preemptorsMap`, `preemptorTasks`): jobs that are not pending, are valid,
/// and starve (`JobStarving`); their Pending tasks without scheduling gates.
pub struct Preemptors {
    /// Queues with at least one job that is not pending and valid, in row order (Volcano pushes
    /// them into a QueueOrder heap).
    pub queues: Vec<QueueIdx>,
    /// Per queue row: its starving jobs, in a JobOrder heap.
    pub jobs: Vec<GoHeap<JobIdx>>,
    /// Per queue row: its starving jobs in row order (Volcano `underRequest`).
    pub under_request: Vec<Vec<JobIdx>>,
    /// Per job row: its preemptor tasks, in a TaskOrder heap.
    pub tasks: Vec<GoHeap<TaskIdx>>,
}

impl Preemptors {
    /// Gathers the starving jobs of the session.
    pub fn gather(ssn: &Session<'_>) -> Self {
        let (st, pl) = (&ssn.state, &ssn.plugins);
        let nq = st.queues.len;
        let mut p = Preemptors {
            queues: Vec::new(),
            jobs: vec![GoHeap::default(); nq],
            under_request: vec![Vec::new(); nq],
            tasks: vec![GoHeap::default(); st.jobs.len],
        };
        let mut seen = vec![false; nq];
        for j in (0..st.jobs.len).map(|i| JobIdx(i as u32)) {
            if st.jobs.is_pending(j) || pl.job_valid(st, j).is_some() {
                continue;
            }
            let q = st.jobs.queue[j.ix()] as usize;
            if !seen[q] {
                seen[q] = true;
                p.queues.push(QueueIdx(q as u32));
            }
            if !pl.job_starving(st, j) {
                continue;
            }
            p.jobs[q].push_ordered(j, pl, st);
            p.under_request[q].push(j);
            p.tasks[j.ix()] = pending_tasks(st, pl, j);
        }
        p
    }
}

/// The Pending, non-gated tasks of `j` in a TaskOrder heap.
pub fn pending_tasks<'a>(st: &State<'a>, pl: &Plugins<'a>, j: JobIdx) -> GoHeap<TaskIdx> {
    let mut h = GoHeap::default();
    for t in st.jobs.tasks(j) {
        if st.tasks.status()[t.ix()] == TaskStatus::Pending && !st.tasks.rec[t.ix()].spec.scheduling_gated {
            h.push_ordered(t, pl, st);
        }
    }
    h
}

/// Volcano `PredicateForPreemptAction`: the node fails only when a predicate's reason is
/// kube-scheduler's `UnschedulableAndUnresolvable` (node affinity, taints, unschedulable,
/// required pod affinity, missing spread label), which no eviction can cure; a full node, a
/// node at its pod-count limit, a port conflict or an anti-affinity with a running pod stay
/// candidates. Basalt's predicates stop at the first failing filter, so when that one is
/// resolvable the node's static filters are checked as well.
pub fn preempt_predicate<'a>(s: &State<'a>, p: &Plugins<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> bool {
    match p.predicate(s, ctx, t, n) {
        Ok(()) => true,
        Err(r) if r.unresolvable() => false,
        Err(_) => p.predicate_static(s, t, n).is_ok(),
    }
}

/// Volcano `PredicateHelper.PredicateNodes` with [`preempt_predicate`]: nodes in session order
/// from the round-robin `offset`, stopping once `--percentage-nodes-to-find` worth of nodes
/// passed (all nodes on small clusters); `offset` moves past the nodes examined. Fills `out`;
/// under soft node sharding the in-shard nodes come first.
pub fn preempt_nodes<'a>(s: &State<'a>, p: &Plugins<'a>, ctx: &PodCtx, t: TaskIdx, offset: &mut usize, out: &mut Vec<NodeIdx>) {
    out.clear();
    let nn = s.nodes.len;
    if nn == 0 {
        return;
    }
    let want = s.options().nodes_to_find(nn);
    let mut examined = 0;
    for i in 0..nn {
        let n = NodeIdx(((*offset + i) % nn) as u32);
        examined += 1;
        if preempt_predicate(s, p, ctx, t, n) {
            out.push(n);
            if out.len() >= want {
                break;
            }
        }
    }
    *offset = (*offset + examined) % nn;
    // Soft node sharding: in-shard nodes first, each part in predicate order (Volcano
    // `GetPredicatedNodeByShard`, which preempt tries group by group and reclaim flattens).
    if s.options().sharding_mode == crate::model::ShardingMode::Soft {
        out.sort_by_key(|&n| !s.in_shard(n));
    }
}

/// Volcano `util.ValidateVictims` (since volcano-sh/volcano#2775): the preemptor's request fits
/// the node's FutureIdle plus all the victims' requests. An empty list is valid: a node whose
/// FutureIdle already holds the request (room freed by an earlier eviction of the same job,
/// releasing pods) takes the preemptor without another eviction.
pub fn validate_victims(s: &State<'_>, t: TaskIdx, n: NodeIdx, victims: &[TaskIdx]) -> bool {
    let dims = s.dims;
    let req = s.tasks.req(t, dims);
    (0..dims).all(|d| {
        let r = req[d];
        r <= 0 || r <= s.future_idle(n, d) + victims.iter().map(|&v| s.tasks.req(v, dims)[d]).sum::<i64>()
    })
}

/// Volcano `BuildVictimsPriorityQueue` order ("take `l` before `r`"): tasks of one job in
/// reverse task order; tasks without a job first; tasks of different queues by
/// `VictimQueueOrder` (relative to the preemptor's queue); else `jobThenTaskOrder`: reverse
/// job order of the plugins alone (`JobOrderCompareFn`), and on a tie reverse task order —
/// the job order's creation-time/UID fallback is not used here.
pub fn victim_before<'a>(s: &State<'a>, p: &Plugins<'a>, l: TaskIdx, r: TaskIdx, preemptor: TaskIdx) -> bool {
    let (lj, rj) = (s.tasks.job_of(l), s.tasks.job_of(r));
    let job_then_task = |a: JobIdx, b: JobIdx| match p.job_order_plugins(s, a, b) {
        Ordering::Equal => p.task_order(s, l, r) != Ordering::Less,
        o => o == Ordering::Greater,
    };
    match (lj, rj) {
        (Some(a), Some(b)) if a == b => p.task_order(s, l, r) != Ordering::Less,
        (None, None) => p.task_order(s, l, r) != Ordering::Less,
        (None, Some(_)) => true,
        (Some(_), None) => false,
        (Some(a), Some(b)) => {
            let Some(pj) = s.tasks.job_of(preemptor) else { return job_then_task(a, b) };
            let (qa, qb) = (QueueIdx(s.jobs.queue[a.ix()]), QueueIdx(s.jobs.queue[b.ix()]));
            if qa != qb {
                let pq = QueueIdx(s.jobs.queue[pj.ix()]);
                return p.victim_queue_order(s, qa, qb, pq) == Ordering::Less;
            }
            job_then_task(a, b)
        }
    }
}

/// `victims` reordered as Volcano pops them from its victims priority queue.
pub fn order_victims<'a>(s: &State<'a>, p: &Plugins<'a>, victims: &mut Vec<TaskIdx>, preemptor: TaskIdx) {
    let mut h = GoHeap::default();
    let mut less = |a: TaskIdx, b: TaskIdx| victim_before(s, p, a, b, preemptor);
    for &v in victims.iter() {
        h.push(v, &mut less);
    }
    victims.clear();
    while let Some(v) = h.pop(&mut less) {
        victims.push(v);
    }
}

/// Whether a victim's request frees something: Volcano sets `evictionOccurred` only when the
/// evicted requests are not empty (`pods` aside).
pub fn frees_resources(s: &State<'_>, t: TaskIdx) -> bool {
    s.tasks.req(t, s.dims).iter().enumerate().any(|(d, &r)| d != crate::resource::PODS && r > 0)
}

/// What a node-level attempt reports.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// Volcano preempt: the preemptor is nominated only when a victim freed resources.
    Preempt,
    /// Volcano reclaim: the reclaimer is nominated whenever something was evicted.
    Reclaim,
}

/// One node-level eviction attempt (Volcano normal preempt and reclaim): `fits` is asked
/// before every eviction, the first one included (a node that already fits evicts nothing:
/// preempt's `preemptorFitsOnNode` before its loop, reclaim's check at the top of its loop since
/// master 2026-03); victims are evicted (in order) inside a statement of its own until `fits`
/// holds, then `t` is pipelined on `n` and the node's operations are merged into `stmt`; if `t`
/// never fits, the node's evictions are discarded. Returns whether `t` was pipelined.
#[allow(clippy::too_many_arguments)]
pub fn evict_until_fits<'a>(
    ssn: &mut Session<'a>,
    stmt: &mut Statement<'a>,
    t: TaskIdx,
    n: NodeIdx,
    victims: &[TaskIdx],
    reason: &str,
    attempt: Attempt,
    mut fits: impl FnMut(&Session<'a>) -> bool,
) -> bool {
    let mut node_stmt = ssn.statement();
    let mut freed = false;
    let mut ok = fits(ssn);
    for &v in victims {
        if ok {
            break;
        }
        freed |= attempt == Attempt::Reclaim || frees_resources(&ssn.state, v);
        ssn.evict(&mut node_stmt, v, reason);
        ok = fits(ssn);
    }
    if ok {
        ssn.pipeline_evicted(&mut node_stmt, t, n, freed);
        stmt.merge(node_stmt);
        true
    } else {
        ssn.discard(node_stmt);
        false
    }
}
