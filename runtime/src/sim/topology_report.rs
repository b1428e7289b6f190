//! Where `simulate` placed each topology job (issue 23): for every PodGroup with a
//! `networkTopology` or `subGroupPolicy`, the lowest HyperNode holding all the nodes its pods
//! were bound to in the run (the LCA of their leaf HyperNodes, `<cluster-top-hypernode>` when
//! they span the whole cluster), resolved from the loaded HyperNodes as a session does.

use basalt_core::cluster::Cluster;
use basalt_core::model::{HyperNodeSpec, NodeSpec};
use basalt_core::session::tables::{NodeIdx, NONE};
use basalt_core::session::topology::Topology;
use std::collections::BTreeMap;

/// One topology job's placement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// `ns/name` of the PodGroup.
    pub pod_group: String,
    /// Pods bound in the run.
    pub bound: usize,
    /// The HyperNode holding them all and its tier (`None` when nothing was bound).
    pub hyper_node: Option<(String, i32)>,
}

/// What is needed after the run, taken from the cluster before it is consumed.
#[derive(Clone, Debug, Default)]
pub struct TopologyInput {
    nodes: Vec<NodeSpec>,
    hyper_nodes: Vec<HyperNodeSpec>,
    groups: Vec<String>,
}

impl TopologyInput {
    /// Reads the cluster's nodes, HyperNodes and topology PodGroups (empty without the latter).
    pub fn of(cluster: &Cluster) -> TopologyInput {
        let groups: Vec<String> = cluster
            .pod_groups()
            .filter(|(_, g)| g.spec.network_topology.is_some() || !g.spec.sub_group_policy.is_empty())
            .map(|(_, g)| format!("{}/{}", g.spec.namespace, g.spec.name))
            .collect();
        if groups.is_empty() {
            return TopologyInput::default();
        }
        TopologyInput {
            nodes: cluster.nodes().map(|(_, n)| n.spec.clone()).collect(),
            hyper_nodes: cluster.hyper_nodes().cloned().collect(),
            groups,
        }
    }

    /// The placement of each topology PodGroup given the run's binds (`ns/pod` → node) and
    /// each pod's PodGroup.
    pub fn placements(&self, binds: &BTreeMap<String, String>, group_of: &BTreeMap<String, String>) -> Vec<Placement> {
        if self.groups.is_empty() {
            return Vec::new();
        }
        let specs: Vec<&HyperNodeSpec> = self.hyper_nodes.iter().collect();
        let topo = Topology::resolve(&specs, self.nodes.len(), |i| &self.nodes[i]);
        let row: BTreeMap<&str, usize> = self.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
        self.groups
            .iter()
            .map(|pg| {
                let mut lca = None;
                let mut bound = 0;
                for (pod, node) in binds {
                    if group_of.get(pod) != Some(pg) {
                        continue;
                    }
                    bound += 1;
                    let leaf = row.get(node.as_str()).map_or(NONE, |&r| topo.leaf_of_node[NodeIdx(r as u32).ix()]);
                    let leaf = if leaf == NONE { topo.top() } else { leaf };
                    lca = topo.lca(lca, Some(leaf));
                }
                Placement {
                    pod_group: pg.clone(),
                    bound,
                    hyper_node: lca.map(|h| (topo.names[h as usize].clone(), topo.tier[h as usize])),
                }
            })
            .collect()
    }
}
