//! The `network-topology-aware` plugin's HyperNode order (volcano-behaviour.md §3; Volcano
//! `plugins/network-topology-aware`): a weighted binpack score of a sub-job's request over a
//! HyperNode's used / allocatable, an overflowing HyperNode scoring 0; when several share the
//! best score, the fraction of the sub-job's tasks already under each is added; the result is
//! scaled by 100 × `weight`. Arguments and defaults are Volcano's: `weight` 1,
//! `hypernode.binpack.cpu` 1, `hypernode.binpack.memory` 1, `hypernode.binpack.resources`
//! (comma-separated names, each weighted by `hypernode.binpack.resources.<name>`, default 1),
//! `hypernode.binpack.normal-pod.enable` true, `hypernode.binpack.normal-pod.fading` 0.8,
//! `hypernode.gradient.evict.max-hypernodes` 8. Read by allocate's gradient path
//! ([`crate::actions::allocate_topology`]) and gangpreempt / gangreclaim's domains.
//!
//! Its node order (Volcano `batchNodeOrderFn`, scaled by 100 × `weight`, gated by
//! `enableNodeOrder`), when the cluster has a valid HyperNode tree:
//! - a task of a sub-job with a network topology: 1 on a node whose leaf HyperNode (lowest
//!   tier) is the sub-job's allocated HyperNode, else `(maxTier − tier) / (maxTier − minTier)` of
//!   the least common ancestor of the two (1 when there is one tier), 0 when the sub-job has no
//!   allocated HyperNode yet or the node no leaf; when several nodes share the best score, each
//!   of those gets the fraction of the sub-job's tasks already in its leaf added. The allocated
//!   HyperNode is the least common ancestor of the leaves of the nodes the sub-job's tasks are
//!   on (running, bound, allocated or pipelined), which is what Volcano's recovered
//!   `AllocatedHyperNode` and its per-task `JobAllocatedHyperNode` come to for one placement.
//! - any other task, with `hypernode.binpack.normal-pod.enable`: per tier from the lowest to
//!   the cluster top's, the binpack score of the task over the node's HyperNode of that tier
//!   (weighted (used + request) / allocatable over the binpack resources it requests, 0 if one
//!   would overflow; 1 when the node has no HyperNode of that tier), averaged with weights
//!   `fading^(tier − 1)`. A HyperNode's used resources start as Σ of its nodes' at session
//!   open and follow the session's allocate / pipeline (+) and evict / undo (−) events, as
//!   Volcano's `hyperNodeResourceCache`.
//!
//! These scores change with placements on other nodes of the same HyperNode, so a scored task
//! takes the plain node scan, never the class path.

use super::k8s::PodCtx;
use crate::conf::{Arguments, Flag, PluginOption};
use crate::limits::MAX_NODE_SCORE;
use crate::resource::{ResourceNames, CPU, MEMORY};
use crate::session::node_view::NodeView;
use crate::session::tables::{NodeIdx, TaskIdx, TaskStatus, NONE};
use crate::session::topology::{HnIdx, Topology};
use crate::session::State;
use hashbrown::HashMap;

/// Volcano's plugin name.
pub const NAME: &str = "network-topology-aware";

/// The plugin's arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct NtaArgs {
    /// `weight` (negative ⇒ 1).
    pub weight: i64,
    /// Binpack weight per resource dimension (cpu, memory, and the listed resources).
    pub binpack: Vec<(usize, i64)>,
    /// `hypernode.binpack.normal-pod.enable`.
    pub normal_pod_enable: bool,
    /// `hypernode.binpack.normal-pod.fading` (negative ⇒ 0.8).
    pub normal_pod_fading: f64,
    /// `hypernode.gradient.evict.max-hypernodes` (≤ 0 ⇒ 8).
    pub evict_max_hyper_nodes: i64,
    /// `enabledHyperNodeOrder` (and the plugin is in the conf).
    pub hyper_node_order: bool,
}

impl Default for NtaArgs {
    fn default() -> Self {
        NtaArgs {
            weight: 1,
            binpack: vec![(CPU, 1), (MEMORY, 1)],
            normal_pod_enable: true,
            normal_pod_fading: 0.8,
            evict_max_hyper_nodes: 8,
            hyper_node_order: true,
        }
    }
}

impl NtaArgs {
    /// Reads the arguments (Volcano `getPriorityWeight`, `getNormalPodConfig`,
    /// `getMaxHyperNodesForEviction`); a resource the cluster has no dimension for is skipped.
    pub fn parse(a: &Arguments, names: &ResourceNames, hyper_node_order: bool) -> NtaArgs {
        let nonneg = |key: &str| a.int(key).filter(|&w| w >= 0).unwrap_or(1);
        let mut binpack = vec![(CPU, nonneg("hypernode.binpack.cpu")), (MEMORY, nonneg("hypernode.binpack.memory"))];
        if let Some(list) = a.string("hypernode.binpack.resources") {
            for r in list.split(',').map(str::trim).filter(|r| !r.is_empty()) {
                if let Some(d) = names.find(r) {
                    if d != CPU && d != MEMORY {
                        binpack.push((d, nonneg(&format!("hypernode.binpack.resources.{r}"))));
                    }
                }
            }
        }
        NtaArgs {
            weight: nonneg("weight"),
            binpack,
            normal_pod_enable: a.bool("hypernode.binpack.normal-pod.enable").unwrap_or(true),
            normal_pod_fading: a.float("hypernode.binpack.normal-pod.fading").filter(|f| *f >= 0.0).unwrap_or(0.8),
            evict_max_hyper_nodes: a.int("hypernode.gradient.evict.max-hypernodes").filter(|&m| m > 0).unwrap_or(8),
            hyper_node_order,
        }
    }
}

/// HyperNode order scores of `candidates` for a sub-job with tasks `tasks` (Volcano
/// `HyperNodeOrderFn`), in candidate order; all 0 when the order is off.
pub fn hyper_node_scores(s: &State<'_>, topo: &Topology, args: &NtaArgs, tasks: &[TaskIdx], candidates: &[HnIdx]) -> Vec<f64> {
    if !args.hyper_node_order {
        return vec![0.0; candidates.len()];
    }
    let dims = s.dims;
    let mut request = vec![0i64; dims];
    for &t in tasks {
        for (d, r) in request.iter_mut().enumerate() {
            *r += s.tasks.req(t, dims)[d];
        }
    }
    let mut scores: Vec<f64> = candidates
        .iter()
        .map(|&h| {
            let (mut total, mut weights) = (0.0, 0i64);
            for &(d, w) in &args.binpack {
                if d >= dims || request[d] == 0 {
                    continue;
                }
                let (mut alloc, mut used) = (0i64, 0i64);
                for &n in &topo.nodes[h as usize] {
                    alloc += s.at(s.nodes.allocatable, n, d);
                    used += s.used(n, d);
                }
                if used + request[d] > alloc {
                    return 0.0;
                }
                total += w as f64 * (used + request[d]) as f64 / alloc as f64;
                weights += w;
            }
            if weights <= 0 {
                0.0
            } else {
                total / weights as f64
            }
        })
        .collect();
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if scores.iter().filter(|&&x| x == max).count() > 1 && !tasks.is_empty() {
        for (i, &h) in candidates.iter().enumerate() {
            if scores[i] == max {
                let here = tasks.iter().filter(|&&t| s.tasks.node_of(t).is_some_and(|n| topo.contains(h, n))).count();
                scores[i] += here as f64 / tasks.len() as f64;
            }
        }
    }
    scores.iter().map(|x| 100.0 * args.weight as f64 * x).collect()
}

/// The arguments Volcano's plugin reads.
pub const ARGS: &[crate::conf::ArgSpec] = {
    use crate::conf::{ArgKind, ArgSpec};
    &[
        ArgSpec::new("weight", ArgKind::Int, "1").min(0.0, "1 is used, as Volcano does"),
        ArgSpec::new("hypernode.binpack.cpu", ArgKind::Int, "1").min(0.0, "1 is used, as Volcano does"),
        ArgSpec::new("hypernode.binpack.memory", ArgKind::Int, "1").min(0.0, "1 is used, as Volcano does"),
        ArgSpec::new("hypernode.binpack.resources", ArgKind::Str, "\"\""),
        ArgSpec::new("hypernode.binpack.resources.", ArgKind::Int, "1").prefix().min(0.0, "1 is used, as Volcano does"),
        ArgSpec::new("hypernode.binpack.normal-pod.enable", ArgKind::Bool, "true"),
        ArgSpec::new("hypernode.binpack.normal-pod.fading", ArgKind::Float, "0.8").min(0.0, "0.8 is used, as Volcano does"),
        ArgSpec::new("hypernode.gradient.evict.max-hypernodes", ArgKind::Int, "8").min(1.0, "8 is used, as Volcano does"),
    ]
};

/// The HyperNode tree as the node order reads it.
struct Tree {
    topo: Topology,
    /// Per node row: the HyperNode of the lowest tier holding it (the cluster top when none).
    deepest: Vec<HnIdx>,
    /// Per HyperNode × binpack entry: Σ allocatable.
    alloc: Vec<i64>,
    /// Per HyperNode × binpack entry: Σ used, following the session's events.
    used: Vec<i64>,
    /// Lowest and highest tier (the cluster top's).
    min_tier: i32,
    max_tier: i32,
    /// Where the events put each task this session (a task's node is gone when it is undone).
    placed: HashMap<u32, NodeIdx>,
}

/// The plugin for one session: its arguments and, when the cluster has a valid HyperNode tree,
/// the tree with per-HyperNode resources.
pub struct NetworkTopologyAware {
    args: NtaArgs,
    tree: Option<Tree>,
}

impl NetworkTopologyAware {
    /// The functions this plugin registers in the session: its node order and the event
    /// handler that keeps the HyperNodes' used resources (Volcano `AddBatchNodeOrderFn`,
    /// `AddEventHandler`). Its HyperNode order and gradients are called by allocate's gradient
    /// path and gangpreempt / gangreclaim directly (`actions/allocate_topology.rs`);
    /// `core/tests/plugin_fns.rs` checks this against its `plugin_impl!` block.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::BatchNodeOrder.bit() | F::EventHandler.bit()
    };

    /// Builds the plugin (Volcano `New` + `OnSessionOpen`): the arguments, and the tree when the
    /// cluster has HyperNodes that resolve without a fatal problem.
    pub fn open(s: &State<'_>, o: &PluginOption) -> Self {
        let args = NtaArgs::parse(&o.arguments, &s.cluster.resources, o.flags.on(Flag::HyperNodeOrder));
        let tree = if s.cluster.hyper_nodes().next().is_some() { Some(Topology::build(s)) } else { None };
        let tree = tree.filter(|t| t.ready).map(|topo| {
            let nb = args.binpack.len();
            let nh = topo.names.len();
            let mut deepest = vec![topo.top(); s.nodes.len];
            let mut by_tier: Vec<HnIdx> = (0..nh as HnIdx).collect();
            by_tier.sort_by_key(|&h| std::cmp::Reverse(topo.tier[h as usize]));
            for &h in &by_tier {
                for &n in &topo.nodes[h as usize] {
                    deepest[n.ix()] = h;
                }
            }
            let (mut alloc, mut used) = (vec![0i64; nh * nb], vec![0i64; nh * nb]);
            for h in 0..nh {
                for &n in &topo.nodes[h] {
                    for (k, &(d, _)) in args.binpack.iter().enumerate().filter(|(_, (d, _))| *d < s.dims) {
                        alloc[h * nb + k] += s.at(s.nodes.allocatable, n, d);
                        used[h * nb + k] += s.used(n, d);
                    }
                }
            }
            let min_tier = topo.tiers[0];
            let max_tier = *topo.tiers.last().unwrap_or(&min_tier);
            Tree { topo, deepest, alloc, used, min_tier, max_tier, placed: HashMap::new() }
        });
        NetworkTopologyAware { args, tree }
    }

    /// Whether `t` belongs to a sub-job with a network topology, and the sub-job's tasks.
    fn topology_sub_job(s: &State<'_>, t: TaskIdx) -> Option<Vec<TaskIdx>> {
        let j = s.tasks.job_of(t)?;
        let spec = &s.jobs.rec[j.ix()].spec;
        if spec.network_topology.is_none() && spec.sub_group_policy.iter().all(|p| p.network_topology.is_none()) {
            return None;
        }
        let key = |x: TaskIdx| {
            let labels = &s.tasks.rec[x.ix()].spec.labels;
            spec.sub_group_policy.iter().enumerate().find_map(|(p, pol)| pol.match_values(labels).map(|v| (p, v)))
        };
        let mine = key(t);
        let with_topology = match &mine {
            Some((p, _)) => spec.sub_group_policy[*p].network_topology.is_some(),
            None => spec.network_topology.is_some(),
        };
        with_topology.then(|| s.jobs.tasks(j).filter(|&x| key(x) == mine).collect())
    }

    /// Volcano `getPodHyperNodeBinPackingScore` of `t` over HyperNode `h`.
    fn binpack(&self, tree: &Tree, s: &State<'_>, t: TaskIdx, h: HnIdx) -> f64 {
        let req = s.tasks.req(t, s.dims);
        let nb = self.args.binpack.len();
        let (mut total, mut weights) = (0.0, 0i64);
        for (k, &(d, w)) in self.args.binpack.iter().enumerate() {
            let r = req.get(d).copied().unwrap_or(0);
            if r <= 0 {
                continue;
            }
            let (alloc, used) = (tree.alloc[h as usize * nb + k], tree.used[h as usize * nb + k]);
            if used + r > alloc {
                return 0.0;
            }
            total += w as f64 * (used + r) as f64 / alloc as f64;
            weights += w;
        }
        if weights > 0 {
            total / weights as f64
        } else {
            0.0
        }
    }

    /// Volcano `scoreHyperNodeWithTier`.
    fn tier_score(tree: &Tree, tier: i32) -> f64 {
        if tree.min_tier == tree.max_tier {
            1.0
        } else if (tree.min_tier..=tree.max_tier).contains(&tier) {
            (tree.max_tier - tier) as f64 / (tree.max_tier - tree.min_tier) as f64
        } else {
            0.0
        }
    }

    /// Volcano `batchNodeOrderFnForNetworkAwarePods` (unscaled).
    fn topology_scores(tree: &Tree, s: &State<'_>, members: &[TaskIdx], nodes: &[NodeIdx], raw: &mut [f64]) {
        let topo = &tree.topo;
        let leaf = |n: NodeIdx| Some(topo.leaf_of_node[n.ix()]).filter(|&h| h != NONE);
        let mut allocated: Option<HnIdx> = None;
        let mut any = false;
        for &x in members {
            let st = s.tasks.status()[x.ix()];
            if !(st.allocated() || st == TaskStatus::Pipelined) {
                continue;
            }
            if let Some(h) = s.tasks.node_of(x).and_then(leaf) {
                allocated = if any { topo.lca(allocated, Some(h)) } else { Some(h) };
                any = true;
            }
        }
        let Some(a) = allocated else { return };
        let mut max = f64::NEG_INFINITY;
        for (r, &n) in raw.iter_mut().zip(nodes) {
            *r = match leaf(n) {
                None => 0.0,
                Some(h) if h == a => 1.0,
                Some(h) => topo.lca(Some(h), Some(a)).map_or(0.0, |l| Self::tier_score(tree, topo.tier[l as usize])),
            };
            max = max.max(*r);
        }
        if raw.iter().filter(|&&x| x == max).count() > 1 && !members.is_empty() {
            for (r, &n) in raw.iter_mut().zip(nodes) {
                if *r == max {
                    if let Some(h) = leaf(n) {
                        let here = members.iter().filter(|&&x| s.tasks.node_of(x).is_some_and(|m| topo.contains(h, m))).count();
                        *r += here as f64 / members.len() as f64;
                    }
                }
            }
        }
    }

    /// Volcano `batchNodeOrderFnForNormalPods` (unscaled).
    fn normal_scores(&self, tree: &Tree, s: &State<'_>, t: TaskIdx, nodes: &[NodeIdx], raw: &mut [f64]) {
        let topo = &tree.topo;
        let fading = self.args.normal_pod_fading;
        let weights: Vec<f64> = (tree.min_tier..=tree.max_tier).map(|tier| fading.powi(tier - 1)).collect();
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return;
        }
        // Per HyperNode binpack score, computed once per call.
        let mut cache: HashMap<HnIdx, f64> = HashMap::new();
        let mut chain: Vec<(i32, HnIdx)> = Vec::new();
        for (r, &n) in raw.iter_mut().zip(nodes) {
            chain.clear();
            chain.extend(topo.ancestors(tree.deepest[n.ix()]).map(|h| (topo.tier[h as usize], h)));
            let mut sum = 0.0;
            for (i, tier) in (tree.min_tier..=tree.max_tier).enumerate() {
                let score = match chain.iter().find(|(x, _)| *x == tier) {
                    Some(&(_, h)) => *cache.entry(h).or_insert_with(|| self.binpack(tree, s, t, h)),
                    None => 1.0,
                };
                sum += weights[i] * score;
            }
            *r = sum / total;
        }
    }

    /// Adds `sign` × `t`'s request to the used resources of every HyperNode holding node `n`.
    fn account(&mut self, s: &State<'_>, t: TaskIdx, n: NodeIdx, sign: i64) {
        let Some(tree) = &mut self.tree else { return };
        let req = s.tasks.req(t, s.dims);
        let nb = self.args.binpack.len();
        let mut cur = tree.deepest[n.ix()];
        while cur != NONE {
            for (k, &(d, _)) in self.args.binpack.iter().enumerate() {
                tree.used[cur as usize * nb + k] += sign * req.get(d).copied().unwrap_or(0);
            }
            cur = tree.topo.parent[cur as usize];
        }
    }
}

plugin_impl! {
    impl<'a> for NetworkTopologyAware {
        fn name(&self) -> &'static str {
            NAME
        }
        fn batch_node_order(&self, s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, nodes: &[NodeIdx], out: &mut [f64]) {
            let Some(tree) = &self.tree else { return };
            let mut raw = vec![0.0; nodes.len()];
            match Self::topology_sub_job(s, t) {
                Some(members) => Self::topology_scores(tree, s, &members, nodes, &mut raw),
                None if self.args.normal_pod_enable => self.normal_scores(tree, s, t, nodes, &mut raw),
                None => return,
            }
            let scale = MAX_NODE_SCORE as f64 * self.args.weight as f64;
            for (o, r) in out.iter_mut().zip(&raw) {
                *o += scale * r;
            }
        }
        fn on_allocate(&mut self, s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            let Some(n) = s.tasks.node_of(t) else { return };
            if let Some(tree) = &mut self.tree {
                tree.placed.insert(t.0, n);
            }
            self.account(s, t, n, 1);
        }
        fn on_deallocate(&mut self, s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            let placed = self.tree.as_mut().and_then(|tree| tree.placed.remove(&t.0));
            if let Some(n) = s.tasks.node_of(t).or(placed) {
                self.account(s, t, n, -1);
            }
        }
        /// A task this plugin scores depends on placements on other nodes of its HyperNodes:
        /// it takes the plain scan.
        fn class_key(&self, s: &State<'a>, t: TaskIdx) -> Option<u64> {
            match &self.tree {
                Some(_) if self.args.normal_pod_enable || Self::topology_sub_job(s, t).is_some() => None,
                _ => Some(0),
            }
        }
    }
}
