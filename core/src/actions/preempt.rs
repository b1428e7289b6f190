//! `preempt` (volcano-behaviour.md §2, Volcano `actions/preempt/preempt.go`): starving jobs take
//! resources from lower-priority work of their own queue, first between jobs, then between the
//! tasks of one job.
//!
//! Queue by queue (QueueOrder), job by job (JobOrder): each preemptor task (TaskOrder) looks for
//! a node where evicting victims makes it fit, and is pipelined there; the job's statement is
//! committed when the job is pipelined (`JobPipelined`), else discarded. Then each starving job of
//! the queue preempts its own lower-priority tasks, one task per statement. Victims are Bound or
//! Running, preemptable (`volcano.sh/preemptable`), never a non-BestEffort pod for a BestEffort
//! preemptor, and pass `Preemptable` of the plugins. On a node the victims must be able to make
//! room (`ValidateVictims`: request ≤ FutureIdle + Σ victims; an empty list is valid), and the
//! preemptor's fit is checked before each eviction: a node that already fits (for example with
//! the room the job's first eviction freed) takes the preemptor without evicting anything, not
//! nominated (`evictionOccurred` false). A node's evictions are committed only
//! together with the preemptor pipelined on that node; the preemptor binds in a later cycle,
//! once the victims are gone (allocate finds the node's idle resources then).
//!
//! Arguments (Volcano's keys and defaults): `enableTopologyAwarePreemption` (false) switches to
//! [`super::preempt_topology`]; `minCandidateNodesPercentage` (10), `minCandidateNodesAbsolute`
//! (1), `maxCandidateNodesAbsolute` (100) size its dry run; `topologyAwarePreemptWorkerNum` (16)
//! and `predicateErrorCacheEnable` (true) are accepted and change no decision (Basalt's dry run
//! is sequential; it keeps no predicate error cache here).

use super::preempt_topology::{self, CandidateLimits};
use super::victims::{evict_until_fits, order_victims, pending_tasks, preempt_nodes, validate_victims, Attempt, Preemptors};
use crate::framework::k8s::PodCtx;
use crate::framework::Session;
use crate::session::statement::Statement;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use crate::session::State;
use std::cmp::Ordering;

/// Volcano's eviction reason for this action.
pub const REASON: &str = "preempt";

/// Which running tasks a preemptor may consider (Volcano's filter closures).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Tasks of other jobs in the preemptor's queue.
    BetweenJobs,
    /// Tasks of the preemptor's own job.
    WithinJob,
}

/// The action's settings, read from its `arguments`.
struct Settings {
    topology_aware: bool,
    limits: CandidateLimits,
}

/// Scratch buffers reused across preemptors.
#[derive(Default)]
struct Scratch {
    nodes: Vec<NodeIdx>,
    scores: Vec<f64>,
    candidates: Vec<TaskIdx>,
    victims: Vec<TaskIdx>,
    spare: Vec<TaskIdx>,
    offset: usize,
}

/// Runs preempt.
pub fn execute(ssn: &mut Session<'_>) {
    let args = ssn.state.conf.action_arguments("preempt");
    let int = |k: &str, d: i64| args.int(k).unwrap_or(d);
    let settings = Settings {
        topology_aware: args.bool("enableTopologyAwarePreemption").unwrap_or(false),
        limits: CandidateLimits {
            min_percentage: int("minCandidateNodesPercentage", 10),
            min_absolute: int("minCandidateNodesAbsolute", 1),
            max_absolute: int("maxCandidateNodesAbsolute", 100),
        },
    };
    let mut pre = Preemptors::gather(ssn);
    let mut queues: super::heap::GoHeap<QueueIdx> = super::heap::GoHeap::default();
    for &q in &pre.queues {
        if !pre.under_request[q.ix()].is_empty() {
            queues.push_by(q, ssn);
        }
    }
    let mut scratch = Scratch::default();
    while let Some(q) = queues.pop_by(ssn) {
        // Between jobs of the queue.
        while let Some(j) = pre.jobs[q.ix()].pop_by(ssn) {
            let mut stmt = ssn.statement();
            while ssn.plugins.job_starving(&ssn.state, j) {
                let Some(t) = pre.tasks[j.ix()].pop_by(ssn) else { break };
                preempt(ssn, &mut stmt, &settings, &mut scratch, t, Scope::BetweenJobs);
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
        // Within each starving job of the queue.
        for i in 0..pre.under_request[q.ix()].len() {
            let j = pre.under_request[q.ix()][i];
            let mut tasks = pending_tasks(&ssn.state, &ssn.plugins, j);
            while let Some(t) = tasks.pop_by(ssn) {
                let mut stmt = ssn.statement();
                if preempt(ssn, &mut stmt, &settings, &mut scratch, t, Scope::WithinJob) {
                    if stmt.has_evictions() {
                        ssn.state.preemption.count_transaction(REASON);
                    }
                    ssn.commit(stmt);
                } else {
                    ssn.discard(stmt);
                    break;
                }
            }
        }
    }
}

/// Volcano `taskEligibleToPreempt`: not `preemptionPolicy: Never`; with a
/// `status.nominatedNodeName`, that node must be in the session and still fail the
/// predicates, and no lower-priority pod there may be terminating because of a preemption —
/// unless the nominated node fails with an unresolvable reason, which makes the pod eligible
/// again.
fn eligible(ssn: &Session<'_>, ctx: &PodCtx, t: TaskIdx) -> bool {
    let s = &ssn.state;
    let spec = &s.tasks.rec[t.ix()].spec;
    if spec.preemption_never {
        return false;
    }
    if spec.nominated_node_name.is_empty() {
        return true;
    }
    let Some(n) = (0..s.nodes.len).find(|&i| s.nodes.rec[i].spec.name == spec.nominated_node_name) else {
        return false;
    };
    let n = NodeIdx(n as u32);
    match ssn.plugins.predicate(s, ctx, t, n) {
        Ok(()) => false,
        Err(r) if r.unresolvable() => true,
        Err(_) => {
            let mine = pod_priority(s, t);
            !s.tasks_on(n).any(|v| {
                let p = &s.tasks.rec[v.ix()].spec;
                pod_priority(s, v) < mine && p.deleting && p.disruption_target
            })
        }
    }
}

/// Volcano `PodPriority`: `spec.priority`, 0 when unset.
fn pod_priority(s: &State<'_>, t: TaskIdx) -> i64 {
    s.tasks.rec[t.ix()].spec.priority.unwrap_or(0) as i64
}

/// Whether `v` may be a victim of `t` in `scope` before the plugins are asked (Volcano's filter
/// closures).
fn candidate(s: &State<'_>, t: TaskIdx, v: TaskIdx, scope: Scope) -> bool {
    if !matches!(s.tasks.status()[v.ix()], TaskStatus::Bound | TaskStatus::Running) {
        return false;
    }
    if s.tasks.best_effort[t.ix()] && !s.tasks.best_effort[v.ix()] {
        return false;
    }
    if !s.tasks.rec[v.ix()].spec.preemptable {
        return false;
    }
    let (Some(vj), Some(tj)) = (s.tasks.job_of(v), s.tasks.job_of(t)) else {
        return false;
    };
    match scope {
        Scope::BetweenJobs => s.jobs.queue[vj.ix()] == s.jobs.queue[tj.ix()] && vj != tj,
        Scope::WithinJob => vj == tj,
    }
}

/// Volcano `preemptorFitsOnNode` (and the topology-aware preempt's dry-run `fits`): the queue
/// may take the task (`Allocatable`), its request fits the node's FutureIdle, and the
/// predicates pass.
pub(super) fn fits_on_node(ssn: &Session<'_>, ctx: &PodCtx, q: QueueIdx, t: TaskIdx, n: NodeIdx) -> bool {
    let s = &ssn.state;
    ssn.plugins.allocatable(s, q, t)
        && s.fits_future_idle(s.tasks.req(t, s.dims), n)
        && ssn.plugins.predicate(s, ctx, t, n).is_ok()
}

/// Volcano `preempt` for one preemptor task: returns whether it was pipelined (its node's
/// evictions merged into `stmt`).
fn preempt<'a>(
    ssn: &mut Session<'a>,
    stmt: &mut Statement<'a>,
    settings: &Settings,
    scratch: &mut Scratch,
    t: TaskIdx,
    scope: Scope,
) -> bool {
    let Some(j) = ssn.state.tasks.job_of(t) else { return false };
    let ctx = PodCtx::build(&ssn.state, t, ssn.plugins.scores_nodes());
    if !eligible(ssn, &ctx, t) {
        return false;
    }
    if ssn.plugins.pre_predicate(&ssn.state, t).is_err() {
        return false;
    }
    let mut nodes = std::mem::take(&mut scratch.nodes);
    preempt_nodes(&ssn.state, &ssn.plugins, &ctx, t, &mut scratch.offset, &mut nodes);
    let done = if settings.topology_aware {
        let done =
            preempt_topology::run(ssn, stmt, &ctx, t, &nodes, settings.limits, REASON, &mut |s, v| candidate(s, t, v, scope));
        // Volcano's topology-aware mode registers an attempt only for an assigned preemptor.
        if done {
            ssn.state.preemption.attempts += 1;
        }
        done
    } else {
        normal(ssn, stmt, scratch, &ctx, j, t, &mut nodes, scope)
    };
    scratch.nodes = nodes;
    done
}

/// Volcano `normalPreempt`: nodes by score (highest first, ties in predicate order); on each,
/// the plugins' victims among the node's candidates, validated, then evicted lowest first
/// until the preemptor fits; the first node where it fits takes it.
#[allow(clippy::too_many_arguments)]
fn normal<'a>(
    ssn: &mut Session<'a>,
    stmt: &mut Statement<'a>,
    scratch: &mut Scratch,
    ctx: &PodCtx,
    j: JobIdx,
    t: TaskIdx,
    nodes: &mut [NodeIdx],
    scope: Scope,
) -> bool {
    if nodes.is_empty() {
        return false;
    }
    let q = QueueIdx(ssn.state.jobs.queue[j.ix()]);
    scratch.scores.resize(nodes.len(), 0.0);
    ssn.plugins.score_nodes(&ssn.state, ctx, t, nodes, &mut scratch.scores);
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    // Under soft node sharding the in-shard nodes (first in `nodes`) are tried before the
    // others, each group by score (Volcano tries `GetPredicatedNodeByShard`'s groups in turn).
    let soft = ssn.state.options().sharding_mode == crate::model::ShardingMode::Soft;
    let group = |i: usize| soft && !ssn.state.in_shard(nodes[i]);
    order.sort_by(|&a, &b| {
        group(a).cmp(&group(b)).then(scratch.scores[b].partial_cmp(&scratch.scores[a]).unwrap_or(Ordering::Equal))
    });
    for i in order {
        let n = nodes[i];
        scratch.candidates.clear();
        scratch.candidates.extend(ssn.state.tasks_on(n).filter(|&v| candidate(&ssn.state, t, v, scope)));
        ssn.plugins.preemptable(&ssn.state, t, &scratch.candidates, &mut scratch.victims, &mut scratch.spare);
        ssn.state.preemption.last_victims = Some(scratch.victims.len() as u32);
        if !validate_victims(&ssn.state, t, n, &scratch.victims) {
            continue;
        }
        ssn.state.preemption.attempts += 1;
        let mut victims = std::mem::take(&mut scratch.victims);
        order_victims(&ssn.state, &ssn.plugins, &mut victims, t);
        let ok = evict_until_fits(ssn, stmt, t, n, &victims, REASON, Attempt::Preempt, |s| fits_on_node(s, ctx, q, t, n));
        scratch.victims = victims;
        if ok {
            return true;
        }
    }
    false
}
