//! The `network-topology-aware` plugin's HyperNode order (volcano-behaviour.md §3; Volcano
//! `plugins/network-topology-aware`): a weighted binpack score of a sub-job's request over a
//! HyperNode's used / allocatable, an overflowing HyperNode scoring 0; when several share the
//! best score, the fraction of the sub-job's tasks already under each is added; the result is
//! scaled by 100 × `weight`. Arguments and defaults are Volcano's: `weight` 1,
//! `hypernode.binpack.cpu` 1, `hypernode.binpack.memory` 1, `hypernode.binpack.resources`
//! (comma-separated names, each weighted by `hypernode.binpack.resources.<name>`, default 1),
//! `hypernode.binpack.normal-pod.enable` true, `hypernode.binpack.normal-pod.fading` 0.8,
//! `hypernode.gradient.evict.max-hypernodes` 8. Read by allocate's gradient path
//! ([`crate::actions::allocate_topology`]).

use crate::conf::Arguments;
use crate::resource::{ResourceNames, CPU, MEMORY};
use crate::session::tables::TaskIdx;
use crate::session::topology::{HnIdx, Topology};
use crate::session::State;

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
                    used += s.at(s.nodes.used, n, d);
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

/// The arguments Volcano's plugin reads; the node-order ones are accepted without effect.
pub const ARGS: &[crate::conf::ArgSpec] = {
    use crate::conf::{ArgKind, ArgSpec};
    &[
        ArgSpec::new("weight", ArgKind::Int, "1").min(0.0, "1 is used, as Volcano does"),
        ArgSpec::new("hypernode.binpack.cpu", ArgKind::Int, "1").min(0.0, "1 is used, as Volcano does"),
        ArgSpec::new("hypernode.binpack.memory", ArgKind::Int, "1").min(0.0, "1 is used, as Volcano does"),
        ArgSpec::new("hypernode.binpack.resources", ArgKind::Str, "\"\""),
        ArgSpec::new("hypernode.binpack.resources.", ArgKind::Int, "1").prefix().min(0.0, "1 is used, as Volcano does"),
        ArgSpec::new("hypernode.binpack.normal-pod.enable", ArgKind::Bool, "true")
            .ignored("the hypernode binpack node score of pods without topology is not implemented yet"),
        ArgSpec::new("hypernode.binpack.normal-pod.fading", ArgKind::Float, "0.8")
            .ignored("the hypernode binpack node score of pods without topology is not implemented yet"),
        ArgSpec::new("hypernode.gradient.evict.max-hypernodes", ArgKind::Int, "8")
            .ignored("gangpreempt/gangreclaim eviction domains are not implemented yet"),
    ]
};

/// The plugin as the session sees it: its HyperNode order and gradient are used by allocate's
/// gradient path directly ([`crate::actions::allocate_topology`]), so it registers no session
/// function.
pub struct NetworkTopologyAware;

impl NetworkTopologyAware {
    /// The functions this plugin registers in the session: none yet. Its HyperNode order is
    /// called by allocate's gradient path directly (`actions/allocate_topology.rs`);
    /// `core/tests/plugin_fns.rs` checks this against its `plugin_impl!` block.
    pub const FNS: u32 = 0;
}

plugin_impl! {
    impl<'a> for NetworkTopologyAware {
        fn name(&self) -> &'static str {
            NAME
        }
    }
}
