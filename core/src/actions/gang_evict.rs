//! What gangpreempt and gangreclaim share (volcano-behaviour.md §2; Volcano
//! `actions/gangpreempt`, `actions/gangreclaim`, `actions/gangevict/{bundle,simulate,util}.go`):
//! job-granular eviction for starving gangs.
//!
//! Queues in QueueOrder (gangreclaim drops an `Overused` queue); every starving job of a queue
//! (valid, not pending), in JobOrder, gets one statement. Its need is the Σ request of its
//! Pending, non-gated, non-BestEffort tasks (for a ready job with a topology or sub-groups,
//! those of its first sub-job in eviction-worksheet order). In each domain the candidate victims are grouped
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
//! `allowWholeBundle` (true). **Domains** (Volcano `GetCandidateDomains`): a job with a hard
//! network topology (a soft one is hard at the cluster-top tier) tries the HyperNodes of its
//! eviction gradient ([`super::allocate_topology::eviction_domains`]: those under its limit whose
//! allocatable resources hold its `minResources`, widest tier first, at most the
//! network-topology-aware plugin's `hypernode.gradient.evict.max-hypernodes`), then at most
//! `maxDomains` of them in that order; any other job has one domain, the whole cluster. Victims
//! are taken only from the domain's nodes, its idle + releasing resources count, and the
//! preemptor's tasks are pipelined only there: a job without sub-groups as one sub-job, a job
//! with sub-groups sub-job by sub-job (Volcano `BuildNominationPlanInDomain`), each hard
//! sub-job in the first HyperNode of its own eviction gradient inside the domain where all its
//! tasks fit, until the job is pipelined (a job that was already ready stops after one
//! sub-job). A job with a topology is skipped while the HyperNode tree is invalid, as allocate
//! skips it. Difference: Volcano also hands the chosen sub-job HyperNodes to a later allocate
//! of the same session (`NominatedHyperNode`, kept in memory only); Basalt's preemptor tasks
//! carry their `nominatedNodeName` into the next cycle, where allocate's gradient path tries
//! those nodes first.
//!
//! A victim job's gang preemptability is its PodGroup's `volcano.sh/preemptable` (annotation,
//! else label; unset allows it), and each victim pod must be preemptable itself, as for preempt
//! and reclaim. Difference kept on purpose: gangreclaim's
//! `Preemptive(queue, pending)` asks the plugins about each pending task and needs every answer
//! true (Basalt's Preemptive takes one task).

use super::allocate_topology::{self as topology, TopoAlloc};
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
use crate::session::topology::HnIdx;
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
    // The HyperNode tree and the topology jobs; `None` when no job has a topology (every job
    // then has the one domain, the cluster).
    let ta = TopoAlloc::prepare(ssn);
    let all: Vec<NodeIdx> = (0..ssn.state.nodes.len).map(|i| NodeIdx(i as u32)).collect();
    let mut cx = Run { kind, settings, ta: ta.as_ref(), all: &all, scan: &mut scan, offset: &mut offset };
    while let Some(q) = queues.pop_by(ssn) {
        if kind == EvictionKind::GangReclaim && ssn.plugins.overused(&ssn.state, q) {
            continue;
        }
        while let Some(j) = pre.jobs[q.ix()].pop_by(ssn) {
            let mut stmt = ssn.statement();
            evict_for_job(ssn, &mut stmt, &mut cx, q, j);
            let pipelined = match cx.topo_job(j) {
                Some(ta) => topology::job_pipelined(ssn, ta, j),
                None => ssn.plugins.job_pipelined(&ssn.state, j),
            };
            if pipelined {
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
        if s.tasks.status()[t.ix()] == TaskStatus::Pending && !rec.scheduling_gated && !s.tasks.best_effort[t.ix()] {
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
    let st = s.tasks.status()[v.ix()];
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

/// Volcano `selectDomainBundles` over the nodes of one domain (`nodes`, ascending rows): the
/// bundles of the candidate victims there, sorted, filtered by `UnifiedEvictable`, sorted
/// again, whole bundles dropped unless allowed.
#[allow(clippy::too_many_arguments)]
pub fn select_bundles(
    ssn: &Session<'_>,
    kind: EvictionKind,
    settings: Settings,
    q: QueueIdx,
    j: JobIdx,
    need: &[i64],
    nodes: &[NodeIdx],
) -> Vec<Bundle> {
    let (s, p) = (&ssn.state, &ssn.plugins);
    // Candidates grouped by victim job, jobs in first-seen (node, then task list) order.
    let mut by_job: Vec<(JobIdx, Vec<TaskIdx>)> = Vec::new();
    for &n in nodes {
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

/// Σ idle + releasing of the domain's nodes (Volcano `SumIdleAndReleasing`).
fn domain_free(s: &State<'_>, nodes: &[NodeIdx]) -> Vec<i64> {
    (0..s.dims).map(|d| nodes.iter().map(|&n| s.idle(n, d) + s.releasing(n, d)).sum()).collect()
}

/// Volcano `Resource.LessEqual(…, Zero)` on the dimensions a request names, `pods` aside.
fn covers(need: &[i64], avail: &[i64]) -> bool {
    need.iter().zip(avail).enumerate().all(|(d, (&n, &a))| d == PODS || n <= 0 || n <= a)
}

/// One run of the action: its settings and the state its jobs share.
struct Run<'r> {
    kind: EvictionKind,
    settings: Settings,
    /// The HyperNode tree and topology jobs, when the session has any.
    ta: Option<&'r TopoAlloc>,
    /// Every node row, ascending (the cluster domain).
    all: &'r [NodeIdx],
    scan: &'r mut NodeScan,
    /// Round-robin start of the feasible-node search (Volcano `lastProcessedNodeIndex`).
    offset: &'r mut usize,
}

impl<'r> Run<'r> {
    /// The tree, when job `j` is one of its topology or sub-group jobs.
    fn topo_job(&self, j: JobIdx) -> Option<&'r TopoAlloc> {
        self.ta.filter(|ta| ta.jobs.contains_key(&j.0))
    }

    /// The nodes of domain `d` (`None`: the cluster).
    fn nodes(&self, d: Option<HnIdx>) -> &'r [NodeIdx] {
        match (self.ta, d) {
            (Some(ta), Some(h)) => &ta.topo.nodes[h as usize],
            _ => self.all,
        }
    }
}

/// Volcano `preemptJobInDomains`/`reclaimJobInDomains` for job `j` of queue `q`: domain by
/// domain, the first plan that pipelines the job is merged into `stmt`.
fn evict_for_job<'a>(ssn: &mut Session<'a>, stmt: &mut Statement<'a>, cx: &mut Run<'_>, q: QueueIdx, j: JobIdx) {
    let kind = cx.kind;
    let topo_job = cx.topo_job(j);
    if topo_job.is_some_and(|ta| ta.blocked(j)) {
        return;
    }
    let pending = match topo_job {
        Some(ta) => pending_by_sub_jobs(ssn, ta, j),
        None => pending_for_eviction(ssn, j),
    };
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
    if !ssn.plugins.job_starving(&ssn.state, j) || ssn.state.nodes.len == 0 {
        return;
    }
    let max_domains = cx.settings.max_domains.max(1) as usize;
    let domains: Vec<Option<HnIdx>> = match cx.ta {
        Some(ta) => topology::eviction_domains(ssn, ta, j, max_domains).into_iter().map(Some).collect(),
        None => vec![None],
    };
    for d in domains {
        let nodes = cx.nodes(d);
        if nodes.is_empty() {
            continue;
        }
        let bundles = select_bundles(ssn, kind, cx.settings, q, j, &need, nodes);
        if bundles.is_empty() {
            continue;
        }
        let mut avail = domain_free(&ssn.state, nodes);
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
            let ok = match (topo_job, d) {
                (Some(ta), Some(h)) => try_plan_sub_jobs(ssn, &mut plan, cx, ta, q, j, h, &victims),
                _ => try_plan(ssn, &mut plan, cx, q, j, &pending, &victims, nodes),
            };
            if ok {
                stmt.merge(plan);
                return;
            }
            ssn.discard(plan);
        }
    }
}

/// Volcano `CollectPendingTasksForGangEviction` for a job on the gradient path's list: the
/// first sub-job's Pending tasks of the eviction worksheet when the job is ready, else every
/// sub-job's, in worksheet order.
fn pending_by_sub_jobs(ssn: &Session<'_>, ta: &TopoAlloc, j: JobIdx) -> Vec<TaskIdx> {
    let ws = topology::eviction_worksheet(ssn, ta, j);
    if topology::job_ready(ssn, ta, j) {
        return ws.into_iter().next().map(|(_, t)| t).unwrap_or_default();
    }
    ws.into_iter().flat_map(|(_, t)| t).collect()
}

/// Volcano `BuildNominationPlanInDomain` for a job without sub-groups and without a topology:
/// evicts `victims`, then pipelines every task of `pending` in order on the domain's `nodes`;
/// true when the job is then ready or pipelined. On false the caller discards `plan`.
#[allow(clippy::too_many_arguments)]
fn try_plan<'a>(
    ssn: &mut Session<'a>,
    plan: &mut Statement<'a>,
    cx: &mut Run<'_>,
    q: QueueIdx,
    j: JobIdx,
    pending: &[TaskIdx],
    victims: &[TaskIdx],
    nodes: &[NodeIdx],
) -> bool {
    for &v in victims {
        ssn.evict(plan, v, reason(cx.kind));
    }
    let evicted = !victims.is_empty();
    pipeline_all(ssn, plan, cx, q, pending, nodes, evicted)
        && !plan.is_empty()
        && (ssn.plugins.job_ready(&ssn.state, j) || ssn.plugins.job_pipelined(&ssn.state, j))
}

/// Volcano `BuildNominationPlanInDomain` for a job with a topology or sub-groups in domain
/// `domain`: evicts `victims`, then sub-job by sub-job (eviction worksheet order) a trial in
/// each HyperNode of the sub-job's eviction gradient inside the domain (the domain itself when
/// the sub-job has no hard limit); the first where every Pending task of the sub-job is
/// pipelined and the sub-job is then ready or pipelined is kept. A sub-job without such a
/// HyperNode fails the plan. Stops once the job is pipelined, or after one sub-job when the
/// job was already ready; true when the job is pipelined. On false the caller discards `plan`.
#[allow(clippy::too_many_arguments)]
fn try_plan_sub_jobs<'a>(
    ssn: &mut Session<'a>,
    plan: &mut Statement<'a>,
    cx: &mut Run<'_>,
    ta: &TopoAlloc,
    q: QueueIdx,
    j: JobIdx,
    domain: HnIdx,
    victims: &[TaskIdx],
) -> bool {
    let ws = topology::eviction_worksheet(ssn, ta, j);
    if ws.is_empty() {
        return false;
    }
    let was_ready = topology::job_ready(ssn, ta, j);
    for &v in victims {
        ssn.evict(plan, v, reason(cx.kind));
    }
    let evicted = !victims.is_empty();
    let mut pipelined = false;
    for (sub, tasks) in ws {
        let mut won = false;
        'search: for row in topology::sub_eviction_gradient(ssn, ta, j, sub, domain) {
            for h in row {
                let nodes = &ta.topo.nodes[h as usize];
                if nodes.is_empty() {
                    continue;
                }
                let mut trial = ssn.statement();
                if pipeline_all(ssn, &mut trial, cx, q, &tasks, nodes, evicted)
                    && !trial.is_empty()
                    && topology::sub_placed(ssn, ta, j, sub)
                {
                    plan.merge(trial);
                    won = true;
                    break 'search;
                }
                ssn.discard(trial);
            }
        }
        if !won {
            return false;
        }
        pipelined = topology::job_pipelined(ssn, ta, j);
        if was_ready || pipelined {
            break;
        }
    }
    pipelined
}

/// Pipelines every task of `tasks` in order on the best of `nodes` (Volcano
/// `runSimulateTrialAtHyperNode`'s loop); false at the first task the queue does not allow,
/// whose pre-predicate fails, or that fits no node.
fn pipeline_all<'a>(
    ssn: &mut Session<'a>,
    st: &mut Statement<'a>,
    cx: &mut Run<'_>,
    q: QueueIdx,
    tasks: &[TaskIdx],
    nodes: &[NodeIdx],
    evicted: bool,
) -> bool {
    for &t in tasks {
        if !ssn.plugins.allocatable(&ssn.state, q, t) || ssn.plugins.pre_predicate(&ssn.state, t).is_err() {
            return false;
        }
        let ctx = PodCtx::build(&ssn.state, t, ssn.plugins.scores_nodes());
        let Some(n) = simulate_node(ssn, cx.scan, cx.offset, &ctx, t, nodes) else { return false };
        ssn.pipeline_evicted(st, t, n, evicted);
    }
    true
}

/// Volcano `simulatePredicate` + `prioritizeNodesForSimulate`: over `nodes` from the
/// round-robin `offset` (stopping at `--percentage-nodes-to-find` worth of feasible ones), those
/// whose FutureIdle fits `t` and that pass `PredicateForPreemptAction`; among them the nodes
/// that fit the idle resources, else the rest; the best scored, ties broken by the seeded
/// random source.
fn simulate_node(
    ssn: &mut Session<'_>,
    scan: &mut NodeScan,
    offset: &mut usize,
    ctx: &PodCtx,
    t: TaskIdx,
    nodes: &[NodeIdx],
) -> Option<NodeIdx> {
    let nn = nodes.len();
    let want = ssn.state.options().nodes_to_find(nn);
    let mut feasible = std::mem::take(&mut scan.feasible);
    feasible.clear();
    let mut examined = 0;
    {
        let (s, p) = (&ssn.state, &ssn.plugins);
        let req = s.tasks.req(t, s.dims);
        for i in 0..nn {
            let n = nodes[(*offset + i) % nn];
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
