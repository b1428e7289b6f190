//! Where a replay placed its gangs in the network topology (issue 23): for a workload with
//! HyperNodes, the share of placed gangs (jobs of two or more pods, every pod bound) whose pods
//! all ran inside one HyperNode of each tier, so that confs and PodGroup topology policies can
//! be compared offline. The tree is resolved from the workload's nodes and HyperNodes as a
//! session resolves it (`basalt_core::session::topology`).

use super::record::RunRecord;
use super::workload::Workload;
use basalt_core::cluster::Delta;
use basalt_core::model::{HyperNodeSpec, NodeSpec};
use basalt_core::session::tables::{NodeIdx, NONE};
use basalt_core::session::topology::Topology;
use serde::Serialize;
use std::collections::HashMap;

/// Gangs inside one HyperNode of one tier.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TierShare {
    /// The tier (the highest is the virtual cluster top, which holds every gang).
    pub tier: i32,
    /// The tier's `spec.tierName` (empty when no HyperNode of the tier has one;
    /// `cluster` for the cluster top).
    pub name: String,
    /// Placed gangs whose pods all ran inside one HyperNode of this tier or a lower one.
    pub gangs: usize,
    /// `gangs` / placed gangs (`None` when no gang was placed).
    pub share: Option<f64>,
}

/// The topology part of a run's results.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TopologyShares {
    /// Gangs (jobs of 2+ pods) all of whose pods were bound.
    pub gangs_placed: usize,
    /// Of which with a `networkTopology` or `subGroupPolicy` on their PodGroup.
    pub topology_gangs_placed: usize,
    /// Per tier, lowest first, the cluster top last.
    pub tiers: Vec<TierShare>,
}

/// The topology shares of `rec` (a replay of `w`); `None` when the workload has no HyperNode.
pub fn shares(w: &Workload, rec: &RunRecord) -> Option<TopologyShares> {
    let hyper: Vec<&HyperNodeSpec> = w
        .setup
        .iter()
        .filter_map(|d| match d {
            Delta::HyperNode(h) => Some(h),
            _ => None,
        })
        .collect();
    if hyper.is_empty() {
        return None;
    }
    let nodes: Vec<&NodeSpec> = w
        .setup
        .iter()
        .filter_map(|d| match d {
            Delta::Node(n) => Some(n),
            _ => None,
        })
        .collect();
    let topo = Topology::resolve(&hyper, nodes.len(), |i| nodes[i]);
    let row: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut lowest: Vec<i32> = Vec::new();
    let mut topology_gangs = 0;
    for (j, job) in rec.jobs.iter().enumerate() {
        if job.tasks.len() < 2 {
            continue;
        }
        let mut lca = None;
        let mut all = true;
        for t in job.tasks.clone() {
            let Some(node) = rec.tasks[t].node.as_deref() else {
                all = false;
                break;
            };
            let leaf = row.get(node).map_or(NONE, |&r| topo.leaf_of_node[NodeIdx(r as u32).ix()]);
            lca = topo.lca(lca, Some(if leaf == NONE { topo.top() } else { leaf }));
        }
        let Some(h) = lca.filter(|_| all) else { continue };
        lowest.push(topo.tier[h as usize]);
        let g = &w.jobs[j].group;
        if g.network_topology.is_some() || !g.sub_group_policy.is_empty() {
            topology_gangs += 1;
        }
    }
    let placed = lowest.len();
    let top = topo.tier[topo.top() as usize];
    let tiers = topo
        .tiers
        .iter()
        .map(|&tier| {
            let name = if tier == top {
                "cluster".to_string()
            } else {
                hyper.iter().find(|h| h.tier == tier && !h.tier_name.is_empty()).map(|h| h.tier_name.clone()).unwrap_or_default()
            };
            let gangs = lowest.iter().filter(|&&t| t <= tier).count();
            TierShare { tier, name, gangs, share: (placed > 0).then(|| gangs as f64 / placed as f64) }
        })
        .collect();
    Some(TopologyShares { gangs_placed: placed, topology_gangs_placed: topology_gangs, tiers })
}
