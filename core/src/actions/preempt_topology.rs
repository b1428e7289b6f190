//! Topology-aware preemption (volcano-behaviour.md §2 preempt, Volcano
//! `actions/utils/eviction.go` `RunTopologyAwareEviction`), used by preempt when
//! `enableTopologyAwarePreemption` is true.
//!
//! A dry run on candidate nodes, starting at a random offset into the predicate-passing nodes,
//! until `clamp(N × minCandidateNodesPercentage / 100, minCandidateNodesAbsolute,
//! maxCandidateNodesAbsolute)` nodes (at most N) have a plan: on each node the plugins' victims
//! are evicted lowest first until the preemptor fits (queue `Allocatable`, request ≤ FutureIdle,
//! predicates), then the evicted ones are reprieved highest priority first wherever the
//! preemptor still fits without them. The dry run evicts in the session inside a statement that
//! is discarded, so the plugins' own state (the node view of the predicates, queue and job
//! shares) plays Volcano's `Simulate*` functions. The plan kept is the one whose highest victim
//! priority is lowest, then the lowest sum of victim priorities, then the fewest victims, then
//! the latest start of its highest-priority victims; ties keep the first plan found. Its
//! victims are evicted with the reason `preempt by <ns>/<name>` (Volcano's `PrepareCandidate`),
//! the preemptor must pass `PredicateForPreemptAction` there and is pipelined.
//!
//! Differences: Volcano's dry run is parallel and keeps the plans that finish first; Basalt's
//! is sequential over the same nodes in the same order, so the same input gives the same plan.
//! Pods have no start time in the cluster copy: their creation time stands in.

use super::preempt::fits_on_node;
use super::victims::{order_victims, preempt_predicate, validate_victims};
use crate::framework::k8s::PodCtx;
use crate::framework::Session;
use crate::session::statement::Statement;
use crate::session::tables::{NodeIdx, QueueIdx, TaskIdx};
use crate::session::State;

/// Sizes of the dry run (Volcano `CandidateLimits`).
#[derive(Clone, Copy, Debug)]
pub struct CandidateLimits {
    /// `minCandidateNodesPercentage` (default 10).
    pub min_percentage: i64,
    /// `minCandidateNodesAbsolute` (default 1).
    pub min_absolute: i64,
    /// `maxCandidateNodesAbsolute` (default 100).
    pub max_absolute: i64,
}

/// Volcano `CalculateNumCandidates`: how many plans the dry run collects among `n` nodes.
pub fn num_candidates(n: usize, l: CandidateLimits) -> usize {
    let mut k = (n as i64).saturating_mul(l.min_percentage) / 100;
    if k < l.min_absolute {
        k = l.min_absolute;
    }
    if k > l.max_absolute {
        k = l.max_absolute;
    }
    k.clamp(0, n as i64) as usize
}

/// A node and the victims to evict there.
struct Plan {
    node: NodeIdx,
    victims: Vec<TaskIdx>,
}

/// Runs topology-aware preemption of `t` over `nodes` (the predicate-passing nodes). `filter`
/// keeps the tasks that may be victims before the plugins are asked. Returns whether `t` was
/// pipelined (its evictions merged into `stmt`).
#[allow(clippy::too_many_arguments)]
pub fn run<'a>(
    ssn: &mut Session<'a>,
    stmt: &mut Statement<'a>,
    ctx: &PodCtx,
    t: TaskIdx,
    nodes: &[NodeIdx],
    limits: CandidateLimits,
    reason: &str,
    filter: &mut dyn FnMut(&State<'a>, TaskIdx) -> bool,
) -> bool {
    if nodes.is_empty() {
        return false;
    }
    let Some(j) = ssn.state.tasks.job_of(t) else { return false };
    let q = QueueIdx(ssn.state.jobs.queue[j.ix()]);
    let offset = ssn.state.rng.below(nodes.len());
    let want = num_candidates(nodes.len(), limits);
    let mut plans: Vec<Plan> = Vec::new();
    for i in 0..nodes.len() {
        if plans.len() >= want {
            break;
        }
        let n = nodes[(offset + i) % nodes.len()];
        if let Some(victims) = select_on_node(ssn, ctx, q, t, n, filter) {
            plans.push(Plan { node: n, victims });
        }
    }
    let Some(best) = pick(&ssn.state, &plans) else { return false };
    let plan = &plans[best];
    let spec = &ssn.state.tasks.rec[t.ix()].spec;
    let why = format!("{reason} by {}/{}", spec.namespace, spec.name);
    let mut tmp = ssn.statement();
    for &v in &plan.victims {
        ssn.evict(&mut tmp, v, &why);
    }
    if !preempt_predicate(&ssn.state, &ssn.plugins, ctx, t, plan.node) {
        ssn.discard(tmp);
        return false;
    }
    ssn.pipeline_evicted(&mut tmp, t, plan.node, true);
    stmt.merge(tmp);
    true
}

/// Volcano `SelectVictimsOnNode` and `DryRunPreemption`'s acceptance: the minimal victim set of
/// `n` for `t`, highest priority first, or `None` when the node has no potential victim, when
/// evicting cannot make room, or when it needs no victim there. The session is left as it was.
fn select_on_node<'a>(
    ssn: &mut Session<'a>,
    ctx: &PodCtx,
    q: QueueIdx,
    t: TaskIdx,
    n: NodeIdx,
    filter: &mut dyn FnMut(&State<'a>, TaskIdx) -> bool,
) -> Option<Vec<TaskIdx>> {
    let candidates: Vec<TaskIdx> = ssn.state.tasks_on(n).filter(|&v| filter(&ssn.state, v)).collect();
    let (mut all, mut scratch) = (Vec::new(), Vec::new());
    ssn.plugins.preemptable(&ssn.state, t, &candidates, &mut all, &mut scratch);
    if !validate_victims(&ssn.state, t, n, &all) {
        return None;
    }
    order_victims(&ssn.state, &ssn.plugins, &mut all, t);
    // Evict lowest first until the preemptor fits.
    let mut dry = ssn.statement();
    let mut potential = Vec::new();
    for &v in &all {
        potential.push(v);
        ssn.evict(&mut dry, v, "");
        if fits_on_node(ssn, ctx, q, t, n) {
            break;
        }
    }
    // No potential victim: the node cannot change (Volcano "no preemption victims found"; an
    // empty list passes `ValidateVictims`).
    if potential.is_empty() {
        ssn.discard(dry);
        return None;
    }
    let predicate_ok = ssn.plugins.predicate(&ssn.state, ctx, t, n).is_ok();
    ssn.discard(dry);
    if !predicate_ok {
        return None;
    }
    // Reprieve highest priority first: a potential victim stays only if the preemptor does not
    // fit with it back (the victims kept so far and the lower ones not yet judged evicted).
    let mut victims = Vec::new();
    for i in (0..potential.len()).rev() {
        let mut dry = ssn.statement();
        for &v in victims.iter().chain(&potential[..i]) {
            ssn.evict(&mut dry, v, "");
        }
        let ok = fits_on_node(ssn, ctx, q, t, n);
        ssn.discard(dry);
        if !ok {
            victims.push(potential[i]);
        }
    }
    // Volcano's DryRunPreemption takes a plan without victims as no candidate.
    if victims.is_empty() {
        return None;
    }
    Some(victims)
}

/// Volcano `PodPriority`: `spec.priority`, 0 when unset.
fn pod_priority(s: &State<'_>, t: TaskIdx) -> i64 {
    s.tasks.rec[t.ix()].spec.priority.unwrap_or(0) as i64
}

/// Volcano `pickOneNodeForEviction` over the plans: index of the chosen one.
fn pick(s: &State<'_>, plans: &[Plan]) -> Option<usize> {
    if plans.is_empty() {
        return None;
    }
    let scores: [&dyn Fn(&Plan) -> i64; 4] = [
        &|p| p.victims.first().map(|&v| -pod_priority(s, v)).unwrap_or(0),
        &|p| -p.victims.iter().map(|&v| pod_priority(s, v) + (i32::MAX as i64 + 1)).sum::<i64>(),
        &|p| -(p.victims.len() as i64),
        &|p| earliest_start(s, &p.victims),
    ];
    let mut alive: Vec<usize> = (0..plans.len()).collect();
    for f in scores {
        let best = alive.iter().map(|&i| f(&plans[i])).max().unwrap_or(0);
        alive.retain(|&i| f(&plans[i]) == best);
        if alive.len() == 1 {
            break;
        }
    }
    alive.first().copied()
}

/// Volcano `GetEarliestPodStartTime` (creation time standing in for the start time), in ms;
/// `i64::MAX` for no victims.
fn earliest_start(s: &State<'_>, victims: &[TaskIdx]) -> i64 {
    let Some(&first) = victims.first() else { return i64::MAX };
    let mut max_p = pod_priority(s, first);
    let mut earliest = s.tasks.rec[first.ix()].spec.creation_ms;
    for &v in victims {
        let (p, at) = (pod_priority(s, v), s.tasks.rec[v.ix()].spec.creation_ms);
        if p == max_p {
            earliest = earliest.min(at);
        } else if p > max_p {
            max_p = p;
            earliest = at;
        }
    }
    earliest
}
