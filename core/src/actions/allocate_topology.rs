//! allocate's HyperNode gradient path (volcano-behaviour.md §2 allocate, Volcano
//! `allocateForJob` / `allocateForSubJob` / `allocateResourcesForTasks`), for jobs with a hard
//! network topology (a soft one is turned into hard at the cluster-top tier, as Volcano's
//! session open does) or a `subGroupPolicy`.
//!
//! Per job: its sub-jobs (pods grouped by the policies' `matchLabelKeys` values, the rest in
//! the default sub-job) that are not ready yet, those needed for `minSubGroups` first. For
//! each tier of the job's HyperNode gradient (eligible HyperNodes under the highest allowed
//! one, lowest tier first), a dry run per HyperNode places the sub-jobs one by one, each in the
//! best HyperNode of its own gradient inside the job's (by the `network-topology-aware`
//! HyperNode order); a HyperNode where the job ends ready or pipelined is a solution; the first
//! tier with a solution wins, its best-scored solution is replayed. The caller commits only a
//! ready job. A hard job never gets a node outside its limit: with no solution it stays pending.
//!
//! Differences: Volcano picks among equally scored HyperNodes at random (Go map order); Basalt
//! takes the first in gradient order. Basalt recovers the allocated HyperNode of jobs and
//! sub-jobs from their running pods every session (Volcano also keeps it in its cache).

use super::allocate::need_continue;
use crate::conf::Flag;
use crate::framework::k8s::PodCtx;
use crate::framework::Session;
use crate::model::{NetworkTopologySpec, TopologyMode};
use crate::plugins::network_topology_aware::{self as nta, NtaArgs};
use crate::select::nodes::{best_node, check, NodeScan};
use crate::session::fit::FitErrors;
use crate::session::statement::{OpKind, Statement};
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use crate::session::topology::{HnIdx, Topology};
use crate::session::State;
use hashbrown::HashMap;
use std::cmp::Ordering;

/// A job's network topology after Volcano's session-open rewrites: `highestTierName`
/// translated to a tier, soft turned into hard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The highest tier allowed; `None` when the spec names no tier (or an unknown tier name):
    /// then it is not a hard constraint (Volcano `IsHardTopologyMode` is false).
    pub tier: Option<i32>,
}

/// A sub-job (Volcano `SubJobInfo`).
#[derive(Clone, Debug)]
pub struct SubJob {
    /// The policy index in `subGroupPolicy`, `None` for the default sub-job.
    pub policy: Option<usize>,
    /// Volcano's id: `<job>/<policy>-<values>`, the job UID for the default sub-job.
    pub uid: String,
    /// minAvailable: `subGroupSize` (default 1), the job's minMember for the default sub-job
    /// of a job without policies.
    pub min: i32,
    /// The first match value as an integer (0 when it is not one): the default sub-job order.
    pub match_index: i64,
    /// Whether it has a network topology at all.
    pub with_topology: bool,
    /// Its hard limit, if any.
    pub limit: Limit,
    /// All its tasks.
    pub tasks: Vec<TaskIdx>,
    /// Its allocated HyperNode (recovered from running pods, then updated as it is placed).
    pub allocated: Option<HnIdx>,
}

/// A job on the gradient path.
#[derive(Clone, Debug)]
pub struct TopoJob {
    /// Whether the PodGroup has a `networkTopology`.
    pub with_topology: bool,
    /// The job's limit.
    pub limit: Limit,
    /// Whether the PodGroup has a `subGroupPolicy`.
    pub has_policy: bool,
    /// Sub-jobs.
    pub subs: Vec<SubJob>,
    /// `minSubGroups` per policy.
    pub min_subs: Vec<i32>,
    /// The job's allocated HyperNode.
    pub allocated: Option<HnIdx>,
    /// Tiers the last search looked at, each with the number of HyperNodes tried.
    pub searched: Vec<(i32, u32)>,
}

impl TopoJob {
    /// Volcano `ContainsHardTopology` || `ContainsSubJobPolicy`: whether allocate takes the
    /// gradient path for it.
    pub fn on_gradient_path(&self) -> bool {
        self.has_policy || self.limit.tier.is_some() || self.subs.iter().any(|s| s.limit.tier.is_some())
    }

    /// Volcano `ContainsNetworkTopology`.
    pub fn contains_topology(&self) -> bool {
        self.with_topology || self.subs.iter().any(|s| s.with_topology)
    }
}

/// Which gang checks apply (gang's flags in the conf).
#[derive(Clone, Copy, Debug, Default)]
struct GangFlags {
    job_ready: bool,
    job_pipelined: bool,
    sub_ready: bool,
    sub_pipelined: bool,
    sub_order: bool,
}

/// The gradient path's state for one allocate run.
pub struct TopoAlloc {
    /// The resolved tree.
    pub topo: Topology,
    /// Jobs with a topology or sub-groups, by job row.
    pub jobs: HashMap<u32, TopoJob>,
    /// Problems found in PodGroups' topology fields (object and field named).
    pub issues: Vec<String>,
    args: NtaArgs,
    gang: GangFlags,
    /// Per HyperNode: Σ idle and Σ FutureIdle at session open, row-major by dims.
    open_idle: Vec<i64>,
    open_future: Vec<i64>,
    /// Per HyperNode: Σ allocatable, row-major by dims (the eviction gradient's filter).
    alloc: Vec<i64>,
    /// Basalt's shortcuts of the search ([`crate::conf::SchedulerOptions::class_cache`]): skip
    /// the HyperNodes that cannot hold enough of the job ([`can_hold`]) and, with HyperNode
    /// order off, stop at the first solution. Off: every HyperNode is dry-run (the reference).
    prune: bool,
    /// gang's JobReady is active: a ready job has Ready + pending BestEffort ≥ minAvailable.
    gang_ready: bool,
    /// gang's JobPipelined vote decides (no earlier tier can permit): a pipelined job has
    /// Waiting + Ready + pending BestEffort ≥ minAvailable.
    gang_pipelined: bool,
}

/// What a HyperNode gradient is built for (Volcano `SearchPurpose`): allocation keeps the
/// HyperNodes whose idle or FutureIdle resources hold the minimum; eviction keeps those whose
/// allocatable resources do, visits the widest tiers first and caps the HyperNodes at
/// `hypernode.gradient.evict.max-hypernodes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// allocate's search.
    Allocate,
    /// gangpreempt / gangreclaim's domains.
    Evict,
}

fn resolve_limit(
    spec: &NetworkTopologySpec,
    topo: &Topology,
    mode_tier: i32,
    obj: &str,
    field: &str,
    issues: &mut Vec<String>,
) -> Limit {
    let mut tier = spec.highest_tier_allowed;
    if tier.is_none() && !spec.highest_tier_name.is_empty() {
        tier = topo.tier_names.get(&spec.highest_tier_name).copied();
        if tier.is_none() {
            issues.push(format!(
                "PodGroup {obj}: field {field}.highestTierName: no HyperNode has tierName {:?}; the constraint is ignored",
                spec.highest_tier_name
            ));
        }
    }
    if let Some(t) = tier {
        if t > topo.tier[topo.top() as usize] && spec.mode == TopologyMode::Hard {
            issues.push(format!(
                "PodGroup {obj}: field {field}.highestTierAllowed: {t} is above the top tier {} (every placement is allowed)",
                topo.tier[topo.top() as usize] - 1
            ));
        }
    }
    match spec.mode {
        TopologyMode::Hard => Limit { tier },
        TopologyMode::Soft => Limit { tier: Some(mode_tier) },
    }
}

/// Whether any job of the session has a network topology or sub-group policy.
pub fn any(s: &State<'_>) -> bool {
    s.jobs.rec.iter().any(|r| r.spec.network_topology.is_some() || !r.spec.sub_group_policy.is_empty())
}

impl TopoAlloc {
    /// Builds the tree and the topology jobs; `None` when no job needs it (the plain path
    /// stays as fast as before).
    pub fn prepare(ssn: &Session<'_>) -> Option<TopoAlloc> {
        let s = &ssn.state;
        if !any(s) {
            return None;
        }
        let topo = Topology::build(s);
        let mut gang = GangFlags::default();
        let mut args = NtaArgs::default();
        let mut nta_on = false;
        for opt in s.conf.tiers.iter().flat_map(|t| t.plugins.iter()) {
            match opt.name.as_str() {
                "gang" => {
                    gang = GangFlags {
                        job_ready: opt.flags.on(Flag::JobReady),
                        job_pipelined: opt.flags.on(Flag::JobPipelined),
                        sub_ready: opt.flags.on(Flag::SubJobReady),
                        sub_pipelined: opt.flags.on(Flag::SubJobPipelined),
                        sub_order: opt.flags.on(Flag::SubJobOrder),
                    }
                }
                nta::NAME => {
                    nta_on = true;
                    args = NtaArgs::parse(&opt.arguments, &s.cluster.resources, opt.flags.on(Flag::HyperNodeOrder));
                }
                _ => {}
            }
        }
        if !nta_on {
            args.hyper_node_order = false;
        }
        let mut issues: Vec<String> = topo.issues.iter().map(|i| i.to_string()).collect();
        let top_tier = topo.tier[topo.top() as usize];
        let mut jobs = HashMap::new();
        for j in 0..s.jobs.len {
            let rec = s.jobs.rec[j];
            let spec = &rec.spec;
            if spec.network_topology.is_none() && spec.sub_group_policy.is_empty() {
                continue;
            }
            let key = format!("{}/{}", spec.namespace, spec.name);
            let has_policy = !spec.sub_group_policy.is_empty();
            let limit = spec
                .network_topology
                .as_ref()
                .map(|nt| resolve_limit(nt, &topo, top_tier, &key, "spec.networkTopology", &mut issues))
                .unwrap_or(Limit { tier: None });
            let sub_max = limit.tier.unwrap_or(top_tier);
            let job_uid = s.cluster.names.resolve(s.jobs.uid[j]).to_string();
            let mut subs: Vec<SubJob> = Vec::new();
            let mut index: HashMap<String, usize> = HashMap::new();
            let jx = JobIdx(j as u32);
            for t in s.jobs.tasks(jx) {
                let labels = &s.tasks.rec[t.ix()].spec.labels;
                let found =
                    spec.sub_group_policy.iter().enumerate().find_map(|(p, pol)| pol.match_values(labels).map(|v| (p, v)));
                let (uid, policy, vals) = match found {
                    Some((p, v)) => (format!("{job_uid}/{}-{}", spec.sub_group_policy[p].name, v.join("-")), Some(p), v),
                    None => (job_uid.clone(), None, Vec::new()),
                };
                let i = *index.entry(uid.clone()).or_insert_with(|| {
                    let (min, nt, field) = match policy {
                        Some(p) => {
                            let pol = &spec.sub_group_policy[p];
                            (
                                pol.sub_group_size.unwrap_or(1),
                                pol.network_topology.clone(),
                                format!("spec.subGroupPolicy[{p}].networkTopology"),
                            )
                        }
                        None => (
                            if has_policy { 1 } else { spec.min_member },
                            spec.network_topology.clone(),
                            "spec.networkTopology".into(),
                        ),
                    };
                    // The default sub-job carries the job's own, already resolved, limit.
                    let limit = match &nt {
                        None => Limit { tier: None },
                        Some(_) if policy.is_none() => limit,
                        Some(nt) => resolve_limit(nt, &topo, sub_max, &key, &field, &mut issues),
                    };
                    subs.push(SubJob {
                        policy,
                        uid,
                        min,
                        match_index: vals.first().and_then(|v| v.parse().ok()).unwrap_or(0),
                        with_topology: nt.is_some(),
                        limit,
                        tasks: Vec::new(),
                        allocated: None,
                    });
                    subs.len() - 1
                });
                subs[i].tasks.push(t);
            }
            let mut job = TopoJob {
                with_topology: spec.network_topology.is_some(),
                limit,
                has_policy,
                subs,
                min_subs: spec.sub_group_policy.iter().map(|p| p.min_sub_groups.unwrap_or(0)).collect(),
                allocated: None,
                searched: Vec::new(),
            };
            if topo.ready && job.contains_topology() {
                recover_allocated(s, &topo, &mut job);
            }
            jobs.insert(j as u32, job);
        }
        let dims = s.dims;
        let nh = topo.names.len();
        let mut open_idle = vec![0i64; nh * dims];
        let mut open_future = vec![0i64; nh * dims];
        let mut alloc = vec![0i64; nh * dims];
        for h in 0..nh {
            for &n in &topo.nodes[h] {
                for d in 0..dims {
                    open_idle[h * dims + d] += s.idle(n, d);
                    open_future[h * dims + d] += s.future_idle(n, d);
                    alloc[h * dims + d] += s.at(s.nodes.allocatable, n, d);
                }
            }
        }
        Some(TopoAlloc {
            topo,
            jobs,
            issues,
            args,
            gang,
            open_idle,
            open_future,
            alloc,
            prune: s.options().class_cache,
            gang_ready: ssn.plugins.active(crate::framework::Fn::JobReady, "gang"),
            gang_pipelined: ssn.plugins.votes_first(crate::framework::Fn::JobPipelined, "gang"),
        })
    }

    /// Whether job `j` takes the gradient path.
    pub fn handles(&self, j: JobIdx) -> bool {
        self.jobs.get(&j.0).is_some_and(|t| t.on_gradient_path())
    }

    /// Whether job `j` must be skipped: it has a topology and the tree is invalid.
    pub fn blocked(&self, j: JobIdx) -> bool {
        !self.topo.ready && self.jobs.get(&j.0).is_some_and(|t| t.contains_topology())
    }
}

/// Volcano `recoverAllocatedHyperNode`: each sub-job with a topology gets the lowest-tier
/// HyperNode holding the nodes of all its placed tasks; the job gets their LCA.
fn recover_allocated(s: &State<'_>, topo: &Topology, job: &mut TopoJob) {
    for sub in job.subs.iter_mut().filter(|x| x.with_topology) {
        let mut cands: Option<Vec<HnIdx>> = None;
        for &t in &sub.tasks {
            if !s.tasks.status()[t.ix()].allocated() {
                continue;
            }
            let spec = &s.tasks.rec[t.ix()].spec;
            let node = s.tasks.node_of(t);
            if node.is_none() && spec.node_name.is_empty() {
                continue;
            }
            let here: Vec<HnIdx> = match node {
                None => Vec::new(),
                Some(n) => {
                    let all = 0..topo.names.len() as u32;
                    match &cands {
                        None => all.filter(|&h| topo.contains(h, n)).collect(),
                        Some(c) => c.iter().copied().filter(|&h| topo.contains(h, n)).collect(),
                    }
                }
            };
            let empty = here.is_empty();
            cands = Some(here);
            if empty {
                break;
            }
        }
        sub.allocated = cands.and_then(|c| c.into_iter().min_by_key(|&h| topo.tier[h as usize]));
    }
    let mut lca = None;
    for sub in &job.subs {
        if sub.allocated.is_some() {
            lca = topo.lca(lca, sub.allocated);
        }
    }
    job.allocated = lca;
}

/// Ready tasks of a sub-job (Volcano `SubJobInfo.ReadyTaskNum` + pending BestEffort).
fn sub_counts(s: &State<'_>, sub: &SubJob) -> (i32, i32) {
    let mut ready = 0;
    let mut waiting = 0;
    for &t in &sub.tasks {
        let st = s.tasks.status()[t.ix()];
        if st.allocated() || st == TaskStatus::Succeeded || st == TaskStatus::Pending && s.tasks.best_effort[t.ix()] {
            ready += 1;
        } else if st == TaskStatus::Pipelined {
            waiting += 1;
        }
    }
    (ready, waiting)
}

struct Ctx<'t> {
    ta: &'t TopoAlloc,
    j: JobIdx,
    q: QueueIdx,
}

impl Ctx<'_> {
    /// Volcano `checkSubJobCondition`: every policy with `minSubGroups` > 0 has that many
    /// sub-jobs meeting `cond`.
    fn subs_meet(&self, s: &State<'_>, job: &TopoJob, pipelined: bool) -> bool {
        job.min_subs.iter().enumerate().all(|(p, &min)| {
            min <= 0
                || job
                    .subs
                    .iter()
                    .filter(|x| x.policy == Some(p))
                    .filter(|x| {
                        let (r, w) = sub_counts(s, x);
                        if pipelined {
                            r + w >= x.min
                        } else {
                            r >= x.min
                        }
                    })
                    .count() as i32
                    >= min
        })
    }

    fn job_ready(&self, ssn: &Session<'_>, job: &TopoJob) -> bool {
        ssn.plugins.job_ready(&ssn.state, self.j) && (!self.ta.gang.job_ready || self.subs_meet(&ssn.state, job, false))
    }

    fn job_pipelined(&self, ssn: &Session<'_>, job: &TopoJob) -> bool {
        ssn.plugins.job_pipelined(&ssn.state, self.j) && (!self.ta.gang.job_pipelined || self.subs_meet(&ssn.state, job, true))
    }

    /// Volcano `SubJobReady`: the job's readiness when it has no policy, else gang's
    /// sub-job check (true when that flag is off).
    fn sub_ready(&self, ssn: &Session<'_>, job: &TopoJob, sub: usize) -> bool {
        if !job.has_policy {
            return self.job_ready(ssn, job);
        }
        !self.ta.gang.sub_ready || sub_counts(&ssn.state, &job.subs[sub]).0 >= job.subs[sub].min
    }

    fn sub_pipelined(&self, ssn: &Session<'_>, job: &TopoJob, sub: usize) -> bool {
        if !job.has_policy {
            return self.job_pipelined(ssn, job);
        }
        if !self.ta.gang.sub_pipelined {
            return true;
        }
        let (r, w) = sub_counts(&ssn.state, &job.subs[sub]);
        r + w >= job.subs[sub].min
    }

    /// Volcano `SubJobOrderFn` with gang's order (not ready first) and the fallback
    /// (MatchIndex, then UID).
    fn sub_order(&self, s: &State<'_>, job: &TopoJob, a: usize, b: usize) -> Ordering {
        let (x, y) = (&job.subs[a], &job.subs[b]);
        if self.ta.gang.sub_order {
            let rx = sub_counts(s, x).0 >= x.min;
            let ry = sub_counts(s, y).0 >= y.min;
            if rx != ry {
                return if rx { Ordering::Greater } else { Ordering::Less };
            }
        }
        x.match_index.cmp(&y.match_index).then_with(|| x.uid.cmp(&y.uid))
    }
}

/// Pending tasks per sub-job, and the sub-jobs to place in order.
#[derive(Clone, Debug, Default)]
pub struct Worksheet {
    /// Sub-jobs with pending tasks, in the order they are taken (re-sorted on each pop).
    subs: Vec<usize>,
    /// Sub-jobs needed for `minSubGroups`.
    required: Vec<usize>,
    /// Pending tasks per sub-job, in task order (front first).
    tasks: HashMap<usize, std::collections::VecDeque<TaskIdx>>,
}

impl Worksheet {
    /// Whether nothing is left to place.
    pub fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    fn pop(&mut self, cx: &Ctx<'_>, s: &State<'_>, job: &TopoJob) -> Option<usize> {
        let best = (0..self.subs.len()).min_by(|&a, &b| {
            let (x, y) = (self.subs[a], self.subs[b]);
            let (rx, ry) = (self.required.contains(&x), self.required.contains(&y));
            ry.cmp(&rx).then_with(|| cx.sub_order(s, job, x, y))
        })?;
        Some(self.subs.remove(best))
    }
}

/// Volcano `organizeJobWorksheet`.
fn worksheet(ssn: &Session<'_>, cx: &Ctx<'_>, job: &TopoJob) -> Worksheet {
    let s = &ssn.state;
    let mut open: Vec<usize> = Vec::new();
    let mut count = vec![0i32; job.min_subs.len()];
    for (i, sub) in job.subs.iter().enumerate() {
        if cx.sub_ready(ssn, job, i) {
            if let Some(p) = sub.policy {
                count[p] += 1;
            }
        } else {
            open.push(i);
        }
    }
    open.sort_by(|&a, &b| cx.sub_order(s, job, a, b));
    let mut ws = Worksheet::default();
    for &i in &open {
        if let Some(p) = job.subs[i].policy {
            if count[p] < job.min_subs[p] {
                ws.required.push(i);
                count[p] += 1;
            }
        }
    }
    let (st, pl) = (&ssn.state, &ssn.plugins);
    for (i, sub) in job.subs.iter().enumerate() {
        let mut pending: Vec<TaskIdx> = sub
            .tasks
            .iter()
            .copied()
            .filter(|&t| {
                st.tasks.status()[t.ix()] == TaskStatus::Pending
                    && !st.tasks.best_effort[t.ix()]
                    && super::queue_gate::considered(st, t)
            })
            .collect();
        if pending.is_empty() {
            continue;
        }
        pending.sort_by(|&a, &b| pl.task_order(st, a, b));
        ws.subs.push(i);
        ws.tasks.insert(i, pending.into());
    }
    ws
}

/// Volcano `hyperNodeGradientFn`: from the search root (the intersection of `start` and the
/// ancestor of `allocated` at the highest allowed tier), breadth first, the HyperNodes of tier
/// ≤ `tier` whose resources at session open can hold `min` (idle or FutureIdle for
/// [`Purpose::Allocate`], allocatable for [`Purpose::Evict`]; skipped once something is
/// allocated), grouped by tier ascending. For eviction the tiers are then reversed and capped
/// ([`reverse_and_cap`]). `Err` says why there is no root.
fn gradient(
    ta: &TopoAlloc,
    dims: usize,
    start: HnIdx,
    tier: i32,
    allocated: Option<HnIdx>,
    min: &[i64],
    purpose: Purpose,
) -> Result<Vec<Vec<HnIdx>>, String> {
    let topo = &ta.topo;
    let root = match allocated {
        None => start,
        Some(a) => {
            let mut highest = None;
            for h in topo.ancestors(a) {
                if topo.tier[h as usize] > tier {
                    break;
                }
                highest = Some(h);
            }
            let Some(highest) = highest else {
                return Err(format!("allocated HyperNode {} is above tier {tier}", topo.names[a as usize]));
            };
            match topo.lca(Some(start), Some(highest)) {
                Some(l) if l == highest => start,
                Some(l) if l == start => highest,
                _ => {
                    return Err(format!(
                        "HyperNode {} and the allowed HyperNode {} do not overlap",
                        topo.names[start as usize], topo.names[highest as usize]
                    ))
                }
            }
        }
    };
    let fits = |table: &[i64], h: HnIdx| (0..dims).all(|d| min.get(d).copied().unwrap_or(0) <= table[h as usize * dims + d]);
    let mut by_tier: std::collections::BTreeMap<i32, Vec<HnIdx>> = Default::default();
    let mut queue = std::collections::VecDeque::from([root]);
    while let Some(h) = queue.pop_front() {
        let t = topo.tier[h as usize];
        let eligible = allocated.is_some()
            || match purpose {
                Purpose::Allocate => fits(&ta.open_idle, h) || fits(&ta.open_future, h),
                Purpose::Evict => fits(&ta.alloc, h),
            };
        if t <= tier && eligible {
            by_tier.entry(t).or_default().push(h);
        }
        queue.extend(topo.children[h as usize].iter().copied());
    }
    let rows: Vec<Vec<HnIdx>> = by_tier.into_values().collect();
    Ok(match purpose {
        Purpose::Allocate => rows,
        Purpose::Evict => reverse_and_cap(rows, ta.args.evict_max_hyper_nodes.max(1) as usize),
    })
}

/// Volcano `reverseAndCapEvictionGradients`: the tiers from the widest down, at most `max`
/// HyperNodes in all (of a tier cut short, its last ones in breadth-first order).
pub fn reverse_and_cap(rows: Vec<Vec<HnIdx>>, max: usize) -> Vec<Vec<HnIdx>> {
    let mut left = max;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows.into_iter().rev() {
        if left == 0 {
            break;
        }
        if row.len() <= left {
            left -= row.len();
            out.push(row);
        } else {
            out.push(row[row.len() - left..].to_vec());
            left = 0;
        }
    }
    out
}

/// Operations of a dry run, to replay.
type Plan = Vec<(OpKind, TaskIdx, NodeIdx)>;

/// A job-level dry run that ended ready or pipelined: its score, operations, the worksheet it
/// left, its sub-jobs' allocated HyperNodes and its [`Marks`].
type Solution = (f64, Plan, Worksheet, Vec<Option<HnIdx>>, Marks);

fn plan_of(st: &Statement<'_>) -> Plan {
    st.ops().iter().map(|o| (o.kind, o.task, o.node)).collect()
}

fn replay<'a>(ssn: &mut Session<'a>, plan: &Plan) -> Statement<'a> {
    let mut st = ssn.statement();
    for &(k, t, n) in plan {
        match k {
            OpKind::Allocate => {
                ssn.allocate(&mut st, t, n);
            }
            OpKind::Pipeline => ssn.pipeline(&mut st, t, n),
            OpKind::UnPipeline | OpKind::Evict => {}
        }
    }
    st
}

/// Places job `j` (queue `q`) on the gradient path. Returns the statement (applied, not yet
/// committed) of the best solution, `None` when no HyperNode of any allowed tier holds a
/// ready or pipelined job.
pub fn allocate_job<'a>(
    ssn: &mut Session<'a>,
    ta: &mut TopoAlloc,
    scan: &mut NodeScan,
    j: JobIdx,
    q: QueueIdx,
) -> Option<Statement<'a>> {
    let mut job = ta.jobs.get(&j.0)?.clone();
    let (stmt, job) = {
        let cx = Ctx { ta, j, q };
        let mut ws = worksheet(ssn, &cx, &job);
        if ws.is_empty() {
            return None;
        }
        let dims = ssn.state.dims;
        let top = ta.topo.top();
        let min: Vec<i64> = match &ssn.state.jobs.rec[j.ix()].min_resources {
            Some(r) => (0..dims).map(|d| r.get(d)).collect(),
            None => vec![0; dims],
        };
        let (gradients, no_root) = match job.limit.tier {
            Some(tier) => match gradient(ta, dims, top, tier, job.allocated, &min, Purpose::Allocate) {
                Ok(g) => (g, None),
                Err(e) => (Vec::new(), Some(e)),
            },
            None => (vec![vec![top]], None),
        };
        job.searched.clear();
        let mut result = None;
        let early = ta.prune && !ta.args.hyper_node_order;
        let job_tasks: Vec<TaskIdx> = ssn.state.jobs.tasks(j).collect();
        let start = Marks::take(&ssn.state, j, &job_tasks);
        let need = job_need(ta, &ssn.state, j);
        let least = least_request(&ssn.state, ws.tasks.values().flatten().copied());
        let rows = gradients.len();
        let mut tried: Vec<(HnIdx, Tried)> = Vec::new();
        'tiers: for (row, grad) in gradients.into_iter().enumerate() {
            if let Some(&h) = grad.first() {
                job.searched.push((ta.topo.tier[h as usize], grad.len() as u32));
            }
            let mut best: Option<Solution> = None;
            let mut noted = 0;
            for (i, &h) in grad.iter().enumerate() {
                let last = row + 1 == rows && i + 1 == grad.len();
                let note = noted < crate::decision::TRIED_PER_TIER;
                let room = (ta.prune || note).then(|| room(&ssn.state, &ta.topo.nodes[h as usize], &least, need));
                let fits = room.is_none_or(|r| r >= need);
                if !fits && note {
                    tried.push((h, Tried::Room(room.unwrap_or(0), need)));
                    noted += 1;
                }
                if ta.prune && !last && !fits {
                    continue;
                }
                start.reset(&mut ssn.state, &job_tasks);
                ssn.state.fit_errors[j.ix()].clear();
                let mut wsc = ws.clone();
                let saved: Vec<Option<HnIdx>> = job.subs.iter().map(|s| s.allocated).collect();
                let mut dry = ssn.statement();
                let mut score = 0.0;
                while let Some(sub) = wsc.pop(&cx, &ssn.state, &job) {
                    let mut tasks = wsc.tasks.remove(&sub).unwrap_or_default();
                    let got = allocate_sub(ssn, &cx, scan, &mut job, sub, &mut tasks, h);
                    let left = !tasks.is_empty();
                    wsc.tasks.insert(sub, tasks);
                    if let Some((st, sc)) = got {
                        if !st.is_empty() {
                            dry.merge(st);
                            score += sc;
                            if left {
                                wsc.subs.push(sub);
                            }
                            if cx.job_ready(ssn, &job) {
                                break;
                            }
                        }
                    }
                }
                wsc.tasks.retain(|_, t| !t.is_empty());
                let after: Vec<Option<HnIdx>> = job.subs.iter().map(|s| s.allocated).collect();
                for (s, a) in job.subs.iter_mut().zip(saved) {
                    s.allocated = a;
                }
                let solved = !dry.is_empty() && (cx.job_ready(ssn, &job) || cx.job_pipelined(ssn, &job));
                let better = solved && best.as_ref().is_none_or(|b| score > b.0);
                if !solved && fits && note {
                    tried.push((h, Tried::DryRun(dry.ops().len(), ssn.state.fit_errors[j.ix()].first().cloned())));
                    noted += 1;
                }
                let plan = better.then(|| plan_of(&dry));
                ssn.discard(dry);
                if let Some(plan) = plan {
                    best = Some((score, plan, wsc, after, Marks::take(&ssn.state, j, &job_tasks)));
                    if early {
                        break;
                    }
                }
            }
            if let Some((_, plan, wsc, after, marks)) = best {
                marks.restore(&mut ssn.state, j, &job_tasks);
                let st = replay(ssn, &plan);
                ws = wsc;
                for (s, a) in job.subs.iter_mut().zip(after) {
                    s.allocated = a;
                }
                let placed: Vec<NodeIdx> = plan.iter().map(|p| p.2).collect();
                job.allocated = lca_of_nodes(&ta.topo, job.allocated, &placed);
                result = Some(st);
                break 'tiers;
            }
        }
        let _ = ws;
        if result.is_none() {
            note_search(ssn, ta, j, &job, no_root, tried);
        }
        (result, job)
    };
    ta.jobs.insert(j.0, job);
    stmt
}

/// Records why job `j` found no HyperNode this time ([`crate::decision::TopologySearch`]),
/// replacing an earlier note of the same cycle.
fn note_search(
    ssn: &mut Session<'_>,
    ta: &TopoAlloc,
    j: JobIdx,
    job: &TopoJob,
    no_root: Option<String>,
    tried: Vec<(HnIdx, Tried)>,
) {
    let s = &ssn.state;
    let tried = tried
        .into_iter()
        .map(|(h, t)| crate::decision::HyperNodeTried {
            hyper_node: ta.topo.names[h as usize].clone(),
            tier: ta.topo.tier[h as usize],
            why: match t {
                Tried::Room(k, need) => format!(
                    "its nodes' idle and future idle resources have room for {k} of the {need} tasks the gang still needs"
                ),
                Tried::DryRun(placed, first) => {
                    let mut w = format!("a dry run placed {placed} tasks, the gang is neither ready nor pipelined");
                    if let Some((t, fe)) = first {
                        w.push_str(&format!("; {}: {}", s.tasks.rec[t.ix()].spec.name, fe.message(s.cluster)));
                    }
                    w
                }
            },
        })
        .collect();
    let reason = if let Some(e) = no_root {
        e
    } else if job.searched.is_empty() {
        match job.limit.tier {
            Some(t) => format!(
                "no HyperNode of tier {} to {t} has the idle or future idle resources of the PodGroup's minResources",
                ta.topo.tiers[0]
            ),
            None => "no HyperNode to search".to_string(),
        }
    } else {
        let tiers: Vec<String> = job.searched.iter().map(|(t, _)| t.to_string()).collect();
        let mut r = format!("no HyperNode of tier {} holds the gang ready or pipelined", tiers.join(", "));
        match s.fit_errors[j.ix()].first() {
            Some((t, fe)) => {
                r.push_str(&format!("; {}: {}", s.tasks.rec[t.ix()].spec.name, fe.message(s.cluster)));
            }
            None => r.push_str("; none has the idle or future idle resources its sub-jobs' Pending tasks request"),
        }
        r
    };
    let group = s.jobs.group[j.ix()];
    let note =
        crate::decision::TopologySearch { group, highest_tier: job.limit.tier, tiers: job.searched.clone(), reason, tried };
    let notes = &mut ssn.state.topology_searches;
    match notes.iter_mut().find(|n| n.group == group) {
        Some(n) => *n = note,
        None => notes.push(note),
    }
}

fn lca_of_nodes(topo: &Topology, mut acc: Option<HnIdx>, nodes: &[NodeIdx]) -> Option<HnIdx> {
    for &n in nodes {
        let leaf = topo.leaf_of_node[n.ix()];
        let leaf = if leaf == crate::session::tables::NONE { topo.top() } else { leaf };
        acc = topo.lca(acc, Some(leaf));
    }
    acc
}

/// Volcano `allocateForSubJob`: the sub-job's own gradient inside `h_job`, a dry run per
/// HyperNode, the best by HyperNode order, replayed. Returns the statement and its score.
fn allocate_sub<'a>(
    ssn: &mut Session<'a>,
    cx: &Ctx<'_>,
    scan: &mut NodeScan,
    job: &mut TopoJob,
    sub: usize,
    tasks: &mut std::collections::VecDeque<TaskIdx>,
    h_job: HnIdx,
) -> Option<(Statement<'a>, f64)> {
    if tasks.is_empty() {
        return None;
    }
    let ta = cx.ta;
    let dims = ssn.state.dims;
    let grads = match job.subs[sub].limit.tier {
        Some(tier) => {
            let mut min = vec![0i64; dims];
            for &t in tasks.iter() {
                for (d, m) in min.iter_mut().enumerate() {
                    *m += ssn.state.tasks.req(t, dims)[d];
                }
            }
            gradient(ta, dims, h_job, tier, job.subs[sub].allocated, &min, Purpose::Allocate).unwrap_or_default()
        }
        None => vec![vec![h_job]],
    };
    let early = ta.prune && !ta.args.hyper_node_order;
    let sub_tasks = job.subs[sub].tasks.clone();
    let start = Marks::take(&ssn.state, cx.j, &sub_tasks);
    let need = sub_need(ta, &ssn.state, cx.j, job, sub);
    let least = least_request(&ssn.state, tasks.iter().copied());
    let rows = grads.len();
    for (row, grad) in grads.into_iter().enumerate() {
        let mut cands: Vec<(HnIdx, Plan, std::collections::VecDeque<TaskIdx>, Marks)> = Vec::new();
        for (i, &h) in grad.iter().enumerate() {
            let last = row + 1 == rows && i + 1 == grad.len();
            if ta.prune && !last && !can_hold(&ssn.state, &ta.topo.nodes[h as usize], &least, need) {
                continue;
            }
            start.reset(&mut ssn.state, &sub_tasks);
            ssn.state.fit_errors[cx.j.ix()].retain(|(t, _)| !sub_tasks.contains(t));
            let mut tc = tasks.clone();
            if let Some(st) = allocate_tasks_in(ssn, cx, scan, job, sub, &mut tc, h) {
                let plan = (!st.is_empty()).then(|| plan_of(&st));
                ssn.discard(st);
                if let Some(plan) = plan {
                    cands.push((h, plan, tc, Marks::take(&ssn.state, cx.j, &sub_tasks)));
                    if early {
                        break;
                    }
                }
            }
        }
        if cands.is_empty() {
            continue;
        }
        let hs: Vec<HnIdx> = cands.iter().map(|c| c.0).collect();
        let scores = nta::hyper_node_scores(&ssn.state, &ta.topo, &ta.args, &job.subs[sub].tasks, &hs);
        let mut bi = 0;
        for i in 1..scores.len() {
            if scores[i] > scores[bi] {
                bi = i;
            }
        }
        let (h, plan, tc, marks) = cands.swap_remove(bi);
        marks.restore(&mut ssn.state, cx.j, &sub_tasks);
        let st = replay(ssn, &plan);
        job.subs[sub].allocated = ta.topo.lca(job.subs[sub].allocated, Some(h));
        *tasks = tc;
        return Some((st, scores[bi]));
    }
    None
}

/// What a dry run leaves behind besides the placements its discard undoes: the random source
/// (ties between equally scored nodes), the job's fit errors and its tasks' last transaction
/// (`last_status`, `last_node`, which the pods' conditions read). Every dry run of a search
/// starts from the same marks, and the search keeps those of the dry run it takes (of the last
/// one when none succeeds, which is never skipped): so a dry run that is left out, because it
/// cannot succeed ([`can_hold`]) or because an earlier one already won, changes no decision.
struct Marks {
    rng: crate::rng::SeededRng,
    last: Vec<(TaskStatus, u32)>,
    fit: Vec<(TaskIdx, FitErrors)>,
}

impl Marks {
    fn take(s: &State<'_>, j: JobIdx, tasks: &[TaskIdx]) -> Marks {
        Marks {
            rng: s.rng.clone(),
            last: tasks.iter().map(|t| (s.tasks.last_status()[t.ix()], s.tasks.last_node()[t.ix()])).collect(),
            fit: s.fit_errors[j.ix()].clone(),
        }
    }

    /// Back to these marks before a dry run (the fit errors are the search's to clear).
    fn reset(&self, s: &mut State<'_>, tasks: &[TaskIdx]) {
        s.rng = self.rng.clone();
        for (t, &(st, n)) in tasks.iter().zip(&self.last) {
            s.tasks.restore_last_transaction(*t, st, n);
        }
    }

    /// Back to these marks, fit errors included (the dry run the search takes).
    fn restore(self, s: &mut State<'_>, j: JobIdx, tasks: &[TaskIdx]) {
        self.reset(s, tasks);
        s.fit_errors[j.ix()] = self.fit;
    }
}

/// Σ over `nodes` of how many tasks each could still take, each task requesting at least
/// `least` (componentwise) ≥ `need`: a necessary condition for a dry run in those nodes to
/// place `need` tasks. A node takes allocations up to its idle resources; it takes pipelined
/// tasks (up to its FutureIdle, which allocating and pipelining only lower) only when its
/// FutureIdle exceeds its idle in some dimension: a task that fits FutureIdle ≤ idle fits idle.
fn can_hold(s: &State<'_>, nodes: &[NodeIdx], least: &[i64], need: i64) -> bool {
    room(s, nodes, least, need) >= need
}

/// How many tasks of at least `least` the nodes could take ([`can_hold`]), counted up to `need`.
fn room(s: &State<'_>, nodes: &[NodeIdx], least: &[i64], need: i64) -> i64 {
    if least.iter().all(|&r| r <= 0) {
        return need;
    }
    let mut total = 0i64;
    for &n in nodes {
        let (mut on_idle, mut on_future, mut pipelines) = (i64::MAX, i64::MAX, false);
        for (d, &r) in least.iter().enumerate() {
            let idle = s.idle(n, d);
            let future = s.future_idle(n, d);
            pipelines |= future > idle;
            if r > 0 {
                on_idle = on_idle.min(idle.max(0) / r);
                on_future = on_future.min(future.max(0) / r);
            }
        }
        total = total.saturating_add(if pipelines { on_idle.saturating_add(on_future) } else { on_idle });
        if total >= need {
            return need;
        }
    }
    total
}

/// Why a HyperNode did not hold a gang, for [`crate::decision::TopologySearch::tried`]: room
/// for fewer tasks than needed `(room, need)`, or a dry run that placed this many tasks and
/// ended neither ready nor pipelined, with the first fit error.
enum Tried {
    Room(i64, i64),
    DryRun(usize, Option<(TaskIdx, FitErrors)>),
}

/// Componentwise least request of `tasks` (`i64::MAX` in every dimension when there is none).
fn least_request(s: &State<'_>, tasks: impl Iterator<Item = TaskIdx>) -> Vec<i64> {
    let dims = s.dims;
    let mut least = vec![i64::MAX; dims];
    for t in tasks {
        for (l, &r) in least.iter_mut().zip(s.tasks.req(t, dims)) {
            *l = (*l).min(r);
        }
    }
    least
}

/// How many more tasks job `j` needs placed before a dry run can end ready or pipelined (at
/// least 1: an empty dry run is no solution), from gang's counts when gang decides.
fn job_need(ta: &TopoAlloc, s: &State<'_>, j: JobIdx) -> i64 {
    let min = s.jobs.min_available[j.ix()] as i64;
    let ready = s.jobs.ready_num(j) as i64 + s.jobs.pending_best_effort()[j.ix()] as i64;
    let ready_route = if ta.gang_ready { (min - ready).max(1) } else { 1 };
    let pipelined_route = if ta.gang_pipelined { (min - ready - s.jobs.waiting_num(j) as i64).max(1) } else { 1 };
    ready_route.min(pipelined_route)
}

/// [`job_need`] for sub-job `sub` (Volcano `SubJobReady` / `SubJobPipelined` with gang's
/// sub-job flags).
fn sub_need(ta: &TopoAlloc, s: &State<'_>, j: JobIdx, job: &TopoJob, sub: usize) -> i64 {
    if !job.has_policy {
        return job_need(ta, s, j);
    }
    let (r, w) = sub_counts(s, &job.subs[sub]);
    let min = job.subs[sub].min as i64;
    let ready_route = if ta.gang.sub_ready { (min - r as i64).max(1) } else { 1 };
    let pipelined_route = if ta.gang.sub_pipelined { (min - r as i64 - w as i64).max(1) } else { 1 };
    ready_route.min(pipelined_route)
}

/// Volcano `TaskHasFitErrors` within one sub-job.
fn role_failed(s: &State<'_>, j: JobIdx, sub: &SubJob, t: TaskIdx) -> bool {
    let role = s.role(t);
    role != crate::intern::Sym::EMPTY && s.fit_errors[j.ix()].iter().any(|(x, _)| sub.tasks.contains(x) && s.role(*x) == role)
}

/// Volcano `NeedContinueAllocating(subJob)`.
fn need_continue_sub(s: &State<'_>, j: JobIdx, job: &TopoJob, sub: usize) -> bool {
    if s.jobs.min_available[j.ix()] == s.jobs.task_count(j) as i32 {
        return false;
    }
    if job.subs[sub].min as usize >= job.subs[sub].tasks.len() {
        return false;
    }
    if job.has_policy {
        return true;
    }
    need_continue(s, j)
}

/// Volcano `allocateResourcesForTasks`: places the sub-job's tasks on the nodes of HyperNode
/// `h` until the sub-job is ready; the statement when it ends ready or pipelined, else
/// discarded.
fn allocate_tasks_in<'a>(
    ssn: &mut Session<'a>,
    cx: &Ctx<'_>,
    scan: &mut NodeScan,
    job: &TopoJob,
    sub: usize,
    tasks: &mut std::collections::VecDeque<TaskIdx>,
    h: HnIdx,
) -> Option<Statement<'a>> {
    let nodes = &cx.ta.topo.nodes[h as usize];
    if nodes.is_empty() {
        return None;
    }
    let j = cx.j;
    let mut stmt = ssn.statement();
    let mut feasible: Vec<NodeIdx> = Vec::new();
    while let Some(t) = tasks.pop_front() {
        if !ssn.plugins.allocatable(&ssn.state, cx.q, t) {
            continue;
        }
        if super::queue_gate::admit(&mut ssn.state, t, cx.q) {
            continue;
        }
        if role_failed(&ssn.state, j, &job.subs[sub], t) {
            let spec = &ssn.state.tasks.rec[t.ix()].spec;
            let msg = format!("Task {} with role spec {} has already predicated failed, skip", spec.name, spec.role);
            ssn.state.set_fit_errors(j, t, FitErrors::message_only(msg));
            continue;
        }
        if let Err(e) = ssn.plugins.pre_predicate(&ssn.state, t) {
            let mut fe = FitErrors::message_only(e);
            fe.nodes = nodes.len() as u32;
            ssn.state.set_fit_errors(j, t, fe);
            if need_continue_sub(&ssn.state, j, job, sub) {
                continue;
            }
            break;
        }
        let ctx = PodCtx::build(&ssn.state, t, ssn.plugins.scores_nodes());
        feasible.clear();
        let mut fe = FitErrors::default();
        {
            let (s, p) = (&ssn.state, &ssn.plugins);
            let name = &s.tasks.rec[t.ix()].spec.nominated_node_name;
            if !name.is_empty() {
                if let Some(&n) = nodes.iter().find(|n| s.nodes.rec[n.ix()].spec.name == *name) {
                    if s.fits_future_idle(s.tasks.req(t, s.dims), n) && check(s, p, &ctx, t, n, true, s.report_order).is_none() {
                        feasible.push(n);
                    }
                }
            }
            if feasible.is_empty() {
                for &n in nodes {
                    match check(s, p, &ctx, t, n, true, s.report_order) {
                        None => feasible.push(n),
                        Some(r) => fe.add(r),
                    }
                }
            }
        }
        if feasible.is_empty() {
            if h != cx.ta.topo.top() {
                fe.hyper_node = Some(cx.ta.topo.names[h as usize].clone());
            }
            ssn.state.set_fit_errors(j, t, fe);
            if need_continue_sub(&ssn.state, j, job, sub) {
                continue;
            }
            break;
        }
        let req = ssn.state.tasks.req(t, ssn.state.dims);
        let mut group: Vec<NodeIdx> = Vec::new();
        crate::select::nodes::candidate_group(&ssn.state, req, &feasible, &mut group);
        if group.is_empty() {
            continue;
        }
        let n = best_node(ssn, scan, &ctx, t, &group);
        let req = ssn.state.tasks.req(t, ssn.state.dims);
        if ssn.state.fits_idle(req, n) {
            ssn.allocate(&mut stmt, t, n);
        } else if ssn.state.fits_future_idle(req, n) {
            ssn.pipeline(&mut stmt, t, n);
        }
        if cx.sub_ready(ssn, job, sub) {
            break;
        }
    }
    if cx.sub_ready(ssn, job, sub) || cx.sub_pipelined(ssn, job, sub) {
        return Some(stmt);
    }
    ssn.discard(stmt);
    None
}

/// Whether job `j` is ready: the plugins' JobReady and, with gang's JobReady on, its
/// sub-group checks (Volcano gang `CheckSubJobReady`).
pub fn job_ready(ssn: &Session<'_>, ta: &TopoAlloc, j: JobIdx) -> bool {
    match ta.jobs.get(&j.0) {
        Some(job) => Ctx { ta, j, q: QueueIdx(0) }.job_ready(ssn, job),
        None => ssn.plugins.job_ready(&ssn.state, j),
    }
}

/// Whether job `j` still has tasks allocate would try (Pending, not BestEffort, not gated).
pub fn has_pending(ssn: &Session<'_>, _ta: &TopoAlloc, j: JobIdx) -> bool {
    let s = &ssn.state;
    s.jobs.tasks(j).any(|t| {
        s.tasks.status()[t.ix()] == TaskStatus::Pending
            && !s.tasks.best_effort[t.ix()]
            && !s.tasks.rec[t.ix()].spec.scheduling_gated
    })
}

/// Whether job `j` is pipelined: the plugins' JobPipelined and, with gang's JobPipelined on,
/// its sub-group checks (Volcano gang `CheckSubJobPipelined`).
pub fn job_pipelined(ssn: &Session<'_>, ta: &TopoAlloc, j: JobIdx) -> bool {
    match ta.jobs.get(&j.0) {
        Some(job) => Ctx { ta, j, q: QueueIdx(0) }.job_pipelined(ssn, job),
        None => ssn.plugins.job_pipelined(&ssn.state, j),
    }
}

/// Volcano `SubJobReady(job, sub) || SubJobPipelined(job, sub)` for sub-job `sub` of job `j`.
pub fn sub_placed(ssn: &Session<'_>, ta: &TopoAlloc, j: JobIdx, sub: usize) -> bool {
    let Some(job) = ta.jobs.get(&j.0) else { return false };
    let cx = Ctx { ta, j, q: QueueIdx(0) };
    cx.sub_ready(ssn, job, sub) || cx.sub_pipelined(ssn, job, sub)
}

/// Volcano `organizeEvictionWorksheet` (gangpreempt / gangreclaim): the sub-jobs of job `j`
/// with Pending tasks (not BestEffort, not gated), those needed for `minSubGroups` first, then
/// by sub-job order, each with its Pending tasks in TaskOrder. Empty for a job not on the
/// gradient path's list.
pub fn eviction_worksheet(ssn: &Session<'_>, ta: &TopoAlloc, j: JobIdx) -> Vec<(usize, Vec<TaskIdx>)> {
    let Some(job) = ta.jobs.get(&j.0) else { return Vec::new() };
    let cx = Ctx { ta, j, q: QueueIdx(0) };
    let mut ws = worksheet(ssn, &cx, job);
    let mut out = Vec::new();
    while let Some(sub) = ws.pop(&cx, &ssn.state, job) {
        if let Some(tasks) = ws.tasks.remove(&sub) {
            out.push((sub, tasks.into()));
        }
    }
    out
}

/// Volcano `GetCandidateDomains` + the network-topology-aware plugin's eviction gradient for
/// job `j`: with a hard limit (a soft one is hard at the cluster-top tier), the job's gradient
/// from the cluster top (HyperNodes whose allocatable resources hold the PodGroup's
/// `minResources`), widest tier first, capped at `hypernode.gradient.evict.max-hypernodes`;
/// else the cluster top. Flattened and cut to `max_domains`. Empty when a hard job has no
/// HyperNode to search (then no victim is taken for it).
pub fn eviction_domains(ssn: &Session<'_>, ta: &TopoAlloc, j: JobIdx, max_domains: usize) -> Vec<HnIdx> {
    let top = ta.topo.top();
    let Some(job) = ta.jobs.get(&j.0) else { return vec![top] };
    let dims = ssn.state.dims;
    let hard = job.limit.tier.is_some() || job.subs.iter().any(|s| s.limit.tier.is_some());
    let rows = match job.limit.tier {
        Some(tier) => {
            let min: Vec<i64> = match &ssn.state.jobs.rec[j.ix()].min_resources {
                Some(r) => (0..dims).map(|d| r.get(d)).collect(),
                None => vec![0; dims],
            };
            gradient(ta, dims, top, tier, job.allocated, &min, Purpose::Evict).unwrap_or_default()
        }
        None => vec![vec![top]],
    };
    let mut out: Vec<HnIdx> = Vec::new();
    for h in rows.into_iter().flatten() {
        if out.len() >= max_domains {
            break;
        }
        if !out.contains(&h) {
            out.push(h);
        }
    }
    if out.is_empty() && !hard {
        out.push(top);
    }
    out
}

/// Volcano `HyperNodeGradientForSubJobFn(sub, domain, PurposeEvict)`: where sub-job `sub` of
/// job `j` may be tried inside `domain`: its eviction gradient when it has a hard limit (its
/// minimum the Σ request of its Pending tasks), else the domain itself.
pub fn sub_eviction_gradient(ssn: &Session<'_>, ta: &TopoAlloc, j: JobIdx, sub: usize, domain: HnIdx) -> Vec<Vec<HnIdx>> {
    let Some(job) = ta.jobs.get(&j.0) else { return vec![vec![domain]] };
    let sj = &job.subs[sub];
    let Some(tier) = sj.limit.tier else { return vec![vec![domain]] };
    let s = &ssn.state;
    let dims = s.dims;
    let mut min = vec![0i64; dims];
    for &t in sj.tasks.iter().filter(|&&t| s.tasks.status()[t.ix()] == TaskStatus::Pending) {
        for (m, r) in min.iter_mut().zip(s.tasks.req(t, dims)) {
            *m += r;
        }
    }
    gradient(ta, dims, domain, tier, sj.allocated, &min, Purpose::Evict).unwrap_or_default()
}
