//! What gangpreempt and gangreclaim share (volcano-behaviour.md §2; Volcano
//! `actions/gangpreempt`, `actions/gangreclaim`, `actions/gangevict/{bundle,simulate,util}.go`):
//! job-granular eviction for starving gangs.
//!
//! Queues in QueueOrder (gangreclaim drops an `Overused` queue); every starving job of a queue
//! (valid, not pending), in JobOrder, gets one statement. Its need is the Σ request of its
//! Pending, non-gated, non-BestEffort tasks. In each domain the candidate victims are grouped
//! per victim job into [`super::gang_bundles`] bundles, sorted, filtered by the plugins'
//! `UnifiedEvictable` (whole bundles only when every task is allowed), whole bundles dropped
//! unless `allowWholeBundle`; then bundles are added one by one to the victim set, and once the
//! domain's idle + releasing resources plus the victims' requests cover the need, a plan is
//! tried: every victim evicted, then every pending task (TaskOrder) pipelined on the best node
//! of the domain whose FutureIdle fits it and that passes `PredicateForPreemptAction` (nodes that
//! fit idle resources first, then the ones that fit FutureIdle; best score, seeded tie-break),
//! each allowed by the queue (`Allocatable`). A plan stands when the job is then pipelined
//! (`JobPipelined`); else it is undone and the next bundle joins the victim set. The job's
//! statement is committed when the job is pipelined, else discarded; the victims' eviction
//! reason is the action's name. The preemptor's tasks are pipelined with the eviction noted, so
//! they get `status.nominatedNodeName`, and bind in a later cycle once the victims are gone.
//!
//! Arguments (Volcano's keys and defaults): `maxDomains` (8; ≤ 0 ⇒ 8) caps the domains tried,
//! `allowWholeBundle` (true). **Domains**: Volcano's domains are HyperNodes from the job's
//! eviction gradient, with the whole cluster as the fallback for jobs without a hard network
//! topology. Basalt has no HyperNodes (network-topology-aware is not implemented), so every job
//! has one domain, the whole cluster, and `maxDomains` (always ≥ 1) changes no decision; the
//! sub-job nominations Volcano hands to allocate for HyperNode placement do not arise.
//! A victim job's gang preemptability is its PodGroup's `volcano.sh/preemptable` (annotation,
//! else label; unset allows it), and each victim pod must be preemptable itself, as for preempt
//! and reclaim. Difference kept on purpose: gangreclaim's
//! `Preemptive(queue, pending)` asks the plugins about each pending task and needs every answer
//! true (Basalt's Preemptive takes one task).

use super::gang_bundles::{self, Bundle};
use super::heap::GoHeap;
use super::victims::{preempt_predicate, Preemptors};
use crate::framework::k8s::PodCtx;
use crate::framework::EvictionKind;
use crate::framework::Session;
use crate::resource::PODS;
use crate::select::nodes::{best_node, NodeScan};
use crate::session::statement::Statement;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use crate::session::State;
use std::cmp::Ordering;

/// Default of `maxDomains`.
pub const DEFAULT_MAX_DOMAINS: i64 = 8;

/// The action's settings, read from its `arguments`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `maxDomains` (≤ 0 ⇒ [`DEFAULT_MAX_DOMAINS`]).
    pub max_domains: i64,
    /// `allowWholeBundle`.
    pub allow_whole_bundle: bool,
}

impl Settings {
    /// Reads the arguments of action `name` (`gangpreempt` or `gangreclaim`).
    pub fn read(ssn: &Session<'_>, name: &str) -> Self {
        let args = ssn.state.conf.action_arguments(name);
        let max_domains = args.int("maxDomains").filter(|&m| m > 0).unwrap_or(DEFAULT_MAX_DOMAINS);
        Settings { max_domains, allow_whole_bundle: args.bool("allowWholeBundle").unwrap_or(true) }
    }
}

/// The eviction reason Volcano writes for `kind`.
pub fn reason(kind: EvictionKind) -> &'static str {
    match kind {
        EvictionKind::GangPreempt => "gangpreempt",
        EvictionKind::GangReclaim => "gangreclaim",
    }
}

/// Runs gangpreempt or gangreclaim.
pub fn execute(ssn: &mut Session<'_>, kind: EvictionKind) {
    let settings = Settings::read(ssn, reason(kind));
    let mut pre = Preemptors::gather(ssn);
    let mut queues: GoHeap<QueueIdx> = GoHeap::default();
    for &q in &pre.queues {
        queues.push_by(q, ssn);
    }
    let mut scan = NodeScan::new(ssn.state.nodes.len, false);
    let mut offset = 0usize;
    while let Some(q) = queues.pop_by(ssn) {
        if kind == EvictionKind::GangReclaim && ssn.plugins.overused(&ssn.state, q) {
            continue;
        }
        while let Some(j) = pre.jobs[q.ix()].pop_by(ssn) {
            let mut stmt = ssn.statement();
            evict_for_job(ssn, &mut stmt, kind, settings, &mut scan, &mut offset, q, j);
            if ssn.plugins.job_pipelined(&ssn.state, j) {
                if stmt.has_evictions() {
                    ssn.state.preemption.count_transaction(reason(kind));
                }
                ssn.commit(stmt);
            } else {
                ssn.discard(stmt);
            }
        }
    }
}

/// Volcano `CollectPendingTasksForGangEviction` for a job without sub-groups: its Pending tasks
/// without scheduling gates and with a request (BestEffort tasks left out), in TaskOrder.
pub fn pending_for_eviction(ssn: &Session<'_>, j: JobIdx) -> Vec<TaskIdx> {
    let (s, p) = (&ssn.state, &ssn.plugins);
    let mut h = GoHeap::default();
    for t in s.jobs.tasks(j) {
        let rec = &s.tasks.rec[t.ix()].spec;
        if s.tasks.status[t.ix()] == TaskStatus::Pending && !rec.scheduling_gated && !s.tasks.best_effort[t.ix()] {
            h.push_ordered(t, p, s);
        }
    }
    let mut out = Vec::with_capacity(h.len());
    while let Some(t) = h.pop_ordered(p, s) {
        out.push(t);
    }
    out
}

/// Whether running task `v` is a candidate victim for job `j` of queue `q` (Volcano's
/// `selectDomainBundles` filters): a preemptable pod of a job whose PodGroup does not say
/// `volcano.sh/preemptable: false`; gangpreempt: Bound or Running, of another job of the same
/// queue whose priority is strictly lower; gangreclaim: Running, of a job in another queue that
/// is reclaimable.
pub fn candidate(s: &State<'_>, kind: EvictionKind, q: QueueIdx, j: JobIdx, v: TaskIdx) -> bool {
    if !s.tasks.rec[v.ix()].spec.preemptable {
        return false;
    }
    let Some(vj) = s.tasks.job_of(v) else { return false };
    if s.jobs.rec[vj.ix()].spec.preemptable == Some(false) {
        return false;
    }
    let vq = s.jobs.queue[vj.ix()];
    let st = s.tasks.status[v.ix()];
    match kind {
        EvictionKind::GangPreempt => {
            matches!(st, TaskStatus::Bound | TaskStatus::Running)
                && vq == q.0
                && vj != j
                && s.jobs.priority[vj.ix()] < s.jobs.priority[j.ix()]
        }
        EvictionKind::GangReclaim => st == TaskStatus::Running && vq != q.0 && s.queues.rec[vq as usize].spec.reclaimable,
    }
}

/// Volcano `selectDomainBundles` over the whole cluster (Basalt's one domain): the bundles of
/// the candidate victims, sorted, filtered by `UnifiedEvictable`, sorted again, whole bundles
/// dropped unless allowed.
pub fn select_bundles(
    ssn: &Session<'_>,
    kind: EvictionKind,
    settings: Settings,
    q: QueueIdx,
    j: JobIdx,
    need: &[i64],
) -> Vec<Bundle> {
    let (s, p) = (&ssn.state, &ssn.plugins);
    // Candidates grouped by victim job, jobs in first-seen (node, then task list) order.
    let mut by_job: Vec<(JobIdx, Vec<TaskIdx>)> = Vec::new();
    for n in (0..s.nodes.len).map(|i| NodeIdx(i as u32)) {
        for v in s.tasks_on(n) {
            if !candidate(s, kind, q, j, v) {
                continue;
            }
            let vj = JobIdx(s.tasks.job[v.ix()]);
            match by_job.iter_mut().find(|(x, _)| *x == vj) {
                Some((_, list)) => list.push(v),
                None => by_job.push((vj, vec![v])),
            }
        }
    }
    let mut bundles: Vec<Bundle> = by_job.into_iter().flat_map(|(vj, tasks)| gang_bundles::job_bundles(s, vj, tasks)).collect();
    if bundles.is_empty() {
        return bundles;
    }
    let pq = q;
    let order = |b: &mut [Bundle]| match kind {
        EvictionKind::GangPreempt => gang_bundles::sort_bundles(s, b, need, |l, r| p.job_order(s, l, r) != Ordering::Less),
        EvictionKind::GangReclaim => gang_bundles::sort_bundles(s, b, need, |l, r| {
            let (lq, rq) = (QueueIdx(s.jobs.queue[l.ix()]), QueueIdx(s.jobs.queue[r.ix()]));
            // Volcano compares queues only when they differ; jobs of one queue tie here.
            lq != rq && p.victim_queue_order(s, lq, rq, pq) == Ordering::Less
        }),
    };
    order(&mut bundles);
    let flat: Vec<TaskIdx> = bundles.iter().flat_map(|b| b.tasks.iter().copied()).collect();
    let (mut allowed, mut scratch) = (Vec::new(), Vec::new());
    p.unified_evictable(s, kind, j, &flat, &mut allowed, &mut scratch);
    if allowed.is_empty() {
        return Vec::new();
    }
    let mut valid = gang_bundles::keep_allowed(s, bundles, &allowed);
    order(&mut valid);
    valid.retain(|b| !b.whole || settings.allow_whole_bundle);
    valid
}

/// Σ idle + releasing of every node (Volcano `SumIdleAndReleasing` over the domain).
fn domain_free(s: &State<'_>) -> Vec<i64> {
    let nn = s.nodes.len;
    (0..s.dims).map(|d| (0..nn).map(|n| s.nodes.idle[d * nn + n] + s.nodes.releasing[d * nn + n]).sum()).collect()
}

/// Volcano `Resource.LessEqual(…, Zero)` on the dimensions a request names, `pods` aside.
fn covers(need: &[i64], avail: &[i64]) -> bool {
    need.iter().zip(avail).enumerate().all(|(d, (&n, &a))| d == PODS || n <= 0 || n <= a)
}

/// Volcano `preemptJobInDomains`/`reclaimJobInDomains` for job `j` of queue `q`: the first plan
/// that pipelines the job is merged into `stmt`.
#[allow(clippy::too_many_arguments)]
fn evict_for_job<'a>(
    ssn: &mut Session<'a>,
    stmt: &mut Statement<'a>,
    kind: EvictionKind,
    settings: Settings,
    scan: &mut NodeScan,
    offset: &mut usize,
    q: QueueIdx,
    j: JobIdx,
) {
    let pending = pending_for_eviction(ssn, j);
    if pending.is_empty() {
        return;
    }
    if kind == EvictionKind::GangReclaim && !pending.iter().all(|&t| ssn.plugins.preemptive(&ssn.state, q, t)) {
        return;
    }
    let dims = ssn.state.dims;
    let mut need = vec![0i64; dims];
    for &t in &pending {
        for (n, r) in need.iter_mut().zip(ssn.state.tasks.req(t, dims)) {
            *n += r;
        }
    }
    // One domain: the cluster.
    if !ssn.plugins.job_starving(&ssn.state, j) || ssn.state.nodes.len == 0 {
        return;
    }
    let bundles = select_bundles(ssn, kind, settings, q, j, &need);
    if bundles.is_empty() {
        return;
    }
    let mut avail = domain_free(&ssn.state);
    let mut victims: Vec<TaskIdx> = Vec::new();
    for b in &bundles {
        victims.extend_from_slice(&b.tasks);
        for (a, l) in avail.iter_mut().zip(&b.local) {
            *a += l;
        }
        if !covers(&need, &avail) {
            continue;
        }
        let mut plan = ssn.statement();
        if try_plan(ssn, &mut plan, kind, scan, offset, q, j, &pending, &victims) {
            stmt.merge(plan);
            return;
        }
        ssn.discard(plan);
    }
}

/// Volcano `BuildNominationPlanInDomain` for a job without sub-groups: evicts `victims`, then
/// pipelines every task of `pending` in order; true when the job is then pipelined. On false
/// the caller discards `plan`.
#[allow(clippy::too_many_arguments)]
fn try_plan<'a>(
    ssn: &mut Session<'a>,
    plan: &mut Statement<'a>,
    kind: EvictionKind,
    scan: &mut NodeScan,
    offset: &mut usize,
    q: QueueIdx,
    j: JobIdx,
    pending: &[TaskIdx],
    victims: &[TaskIdx],
) -> bool {
    for &v in victims {
        ssn.evict(plan, v, reason(kind));
    }
    let evicted = !victims.is_empty();
    for &t in pending {
        if !ssn.plugins.allocatable(&ssn.state, q, t) || ssn.plugins.pre_predicate(&ssn.state, t).is_err() {
            return false;
        }
        let ctx = PodCtx::build(&ssn.state, t, ssn.plugins.scores_nodes());
        let Some(n) = simulate_node(ssn, scan, offset, &ctx, t) else { return false };
        ssn.pipeline_evicted(plan, t, n, evicted);
    }
    !plan.is_empty() && (ssn.plugins.job_ready(&ssn.state, j) || ssn.plugins.job_pipelined(&ssn.state, j))
}

/// Volcano `simulatePredicate` + `prioritizeNodesForSimulate`: over the nodes from the
/// round-robin `offset` (stopping at `--percentage-nodes-to-find` worth of feasible ones), those
/// whose FutureIdle fits `t` and that pass `PredicateForPreemptAction`; among them the nodes
/// that fit the idle resources, else the rest; the best scored, ties broken by the seeded
/// random source.
fn simulate_node(ssn: &mut Session<'_>, scan: &mut NodeScan, offset: &mut usize, ctx: &PodCtx, t: TaskIdx) -> Option<NodeIdx> {
    let nn = ssn.state.nodes.len;
    let want = ssn.state.options().nodes_to_find(nn);
    let mut feasible = std::mem::take(&mut scan.feasible);
    feasible.clear();
    let mut examined = 0;
    {
        let (s, p) = (&ssn.state, &ssn.plugins);
        let req = s.tasks.req(t, s.dims);
        for i in 0..nn {
            let n = NodeIdx(((*offset + i) % nn) as u32);
            examined += 1;
            if s.fits_future_idle(req, n) && preempt_predicate(s, p, ctx, t, n) {
                feasible.push(n);
                if feasible.len() >= want {
                    break;
                }
            }
        }
    }
    *offset = (*offset + examined) % nn.max(1);
    let mut group = std::mem::take(&mut scan.group);
    group.clear();
    {
        let s = &ssn.state;
        let req = s.tasks.req(t, s.dims);
        group.extend(feasible.iter().copied().filter(|&n| s.fits_idle(req, n)));
        if group.is_empty() {
            group.extend_from_slice(&feasible);
        }
    }
    let pick = if group.is_empty() { None } else { Some(best_node(ssn, scan, ctx, t, &group)) };
    scan.feasible = feasible;
    scan.group = group;
    pick
}
