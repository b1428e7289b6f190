//! `reclaim` (volcano-behaviour.md §2, Volcano `actions/reclaim/reclaim.go`): starving jobs of a
//! queue take resources back from other queues that hold more than their share.
//!
//! Queues in QueueOrder; `Overused` is asked when a queue is popped, and an overused queue is
//! dropped for the cycle. A popped queue handles all its starving jobs in that one visit
//! (JobOrder), `Overused` not being asked again between them (Volcano pushes the queue back
//! while jobs remain, but its inner loop has emptied them by the time it is popped again, so
//! those later pops change nothing). Each job is tried task by task (TaskOrder) while it starves,
//! skipping tasks with `preemptionPolicy: Never` and tasks the queue may not reclaim for
//! (`Preemptive`), over the nodes that pass `PredicateForPreemptAction` in predicate order (no
//! scoring). On a node the reclaimees are the Running, preemptable tasks of jobs in other queues
//! whose `spec.reclaimable` is true; a node without reclaimees is skipped. The plugins'
//! `Reclaimable` picks the victims, which must be able to make room (`ValidateVictims`; an empty
//! list is valid when the node's FutureIdle already holds the request); before each eviction
//! the task's fit is checked (request ≤ FutureIdle plus what was evicted: idle and releasing
//! resources count), so a node that already fits evicts nothing; victims go in victim order
//! until the task fits; the task is pipelined there (nominated only if something was evicted)
//! and the node's evictions join the job's statement, or they are discarded and the next node is
//! tried. The job's statement is committed when the job is pipelined (`JobPipelined`), else
//! discarded.
//!
//! Argument `predicateErrorCacheEnable` (true) is accepted and changes no decision.

use super::heap::GoHeap;
use super::victims::{evict_until_fits, order_victims, preempt_nodes, validate_victims, Attempt, Preemptors};
use crate::framework::k8s::PodCtx;
use crate::framework::Session;
use crate::session::statement::Statement;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use crate::session::State;

/// Volcano's eviction reason for this action.
pub const REASON: &str = "reclaim";

/// Runs reclaim.
pub fn execute(ssn: &mut Session<'_>) {
    let mut pre = Preemptors::gather(ssn);
    let mut queues: GoHeap<QueueIdx> = GoHeap::default();
    for &q in &pre.queues {
        queues.push_by(q, ssn);
    }
    let mut buf = Buffers::default();
    while let Some(q) = queues.pop_by(ssn) {
        if ssn.plugins.overused(&ssn.state, q) {
            continue;
        }
        // Every starving job of the queue in this one visit.
        while let Some(j) = pre.jobs[q.ix()].pop_by(ssn) {
            reclaim_for_job(ssn, &mut pre, &mut buf, q, j);
        }
    }
}

/// Reclaims for the starving job `j` of queue `q`, task by task while it starves; commits the
/// job's statement if the job is pipelined, else discards it.
fn reclaim_for_job<'a>(ssn: &mut Session<'a>, pre: &mut Preemptors, buf: &mut Buffers, q: QueueIdx, j: JobIdx) {
    let mut stmt = ssn.statement();
    while ssn.plugins.job_starving(&ssn.state, j) {
        let Some(t) = pre.tasks[j.ix()].pop_by(ssn) else { break };
        if ssn.state.tasks.rec[t.ix()].spec.preemption_never {
            continue;
        }
        if !ssn.plugins.preemptive(&ssn.state, q, t) {
            continue;
        }
        if ssn.plugins.pre_predicate(&ssn.state, t).is_err() {
            continue;
        }
        reclaim_for_task(ssn, &mut stmt, buf, j, t);
    }
    if ssn.plugins.job_pipelined(&ssn.state, j) {
        if stmt.has_evictions() {
            ssn.state.preemption.count_transaction(REASON);
        }
        ssn.commit(stmt);
    } else {
        ssn.discard(stmt);
    }
}

/// Scratch buffers reused across reclaimers.
#[derive(Default)]
struct Buffers {
    nodes: Vec<NodeIdx>,
    reclaimees: Vec<TaskIdx>,
    victims: Vec<TaskIdx>,
    spare: Vec<TaskIdx>,
    offset: usize,
}

/// Whether `v` may be reclaimed for a task of job `j`: Running, preemptable, of a job in another
/// queue that is reclaimable.
fn reclaimee(s: &State<'_>, j: JobIdx, v: TaskIdx) -> bool {
    if s.tasks.status()[v.ix()] != TaskStatus::Running || !s.tasks.rec[v.ix()].spec.preemptable {
        return false;
    }
    let Some(vj) = s.tasks.job_of(v) else { return false };
    let vq = s.jobs.queue[vj.ix()];
    vq != s.jobs.queue[j.ix()] && s.queues.rec[vq as usize].spec.reclaimable
}

/// Reclaims for task `t` of job `j` on the first node where it works.
fn reclaim_for_task<'a>(ssn: &mut Session<'a>, stmt: &mut Statement<'a>, buf: &mut Buffers, j: JobIdx, t: TaskIdx) {
    let ctx = PodCtx::build(&ssn.state, t, false);
    let mut nodes = std::mem::take(&mut buf.nodes);
    preempt_nodes(&ssn.state, &ssn.plugins, &ctx, t, &mut buf.offset, &mut nodes);
    for &n in &nodes {
        buf.reclaimees.clear();
        buf.reclaimees.extend(ssn.state.tasks_on(n).filter(|&v| reclaimee(&ssn.state, j, v)));
        if buf.reclaimees.is_empty() {
            continue;
        }
        ssn.plugins.reclaimable(&ssn.state, t, &buf.reclaimees, &mut buf.victims, &mut buf.spare);
        if !validate_victims(&ssn.state, t, n, &buf.victims) {
            continue;
        }
        let mut victims = std::mem::take(&mut buf.victims);
        order_victims(&ssn.state, &ssn.plugins, &mut victims, t);
        let ok = evict_until_fits(ssn, stmt, t, n, &victims, REASON, Attempt::Reclaim, |s| {
            s.state.fits_future_idle(s.state.tasks.req(t, s.state.dims), n)
        });
        buf.victims = victims;
        if ok {
            break;
        }
    }
    buf.nodes = nodes;
}
