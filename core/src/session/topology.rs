//! The HyperNode tree resolved into session tables (Volcano `HyperNodesInfo` +
//! `Session.HyperNodes`, `RealNodesSet`, `HyperNodesSetByTier`; volcano-behaviour.md §1.3, §1.5,
//! §9): per HyperNode its tier, parent, children and the session nodes under it (a bitset over
//! node rows plus the rows in order), per node its leaf HyperNode (lowest tier), and the virtual
//! `<cluster-top-hypernode>` (tier = highest real tier + 1, parent of every parentless
//! HyperNode, holding every node). Built once per session that has topology jobs, never per pod.
//!
//! An invalid tree (a member with a second parent, a cycle, an unknown HyperNode member, a
//! regex that does not compile, a Node selector on a HyperNode member) is reported as
//! [`TopologyIssue`]s naming the HyperNode and field; then [`Topology::ready`] is false and, as
//! in Volcano (`HyperNodesReadyToSchedule`), jobs with a network topology are not scheduled.

use super::tables::{NodeIdx, NONE};
use super::State;
use crate::model::{HyperNodeSpec, MemberSelector, MemberType};
use hashbrown::HashMap;

/// Volcano's name of the virtual top HyperNode.
pub const CLUSTER_TOP: &str = "<cluster-top-hypernode>";

/// Index of a HyperNode in [`Topology`]; the cluster top is the last one.
pub type HnIdx = u32;

/// A problem with one HyperNode, naming it and the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyIssue {
    /// The HyperNode's name.
    pub hyper_node: String,
    /// The field (`spec.members[2].selector.regexMatch.pattern`, …).
    pub field: String,
    /// What is wrong.
    pub message: String,
    /// Whether it makes the tree invalid (topology jobs are then not scheduled); a Node
    /// `exactMatch` naming no session node is only reported.
    pub fatal: bool,
}

impl std::fmt::Display for TopologyIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HyperNode {}: field {}: {}", self.hyper_node, self.field, self.message)
    }
}

/// The resolved tree.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// Names, by index (the last is [`CLUSTER_TOP`]).
    pub names: Vec<String>,
    /// `spec.tier`, by index.
    pub tier: Vec<i32>,
    /// Parent index, [`NONE`] for the cluster top.
    pub parent: Vec<u32>,
    /// Children indexes, in name order.
    pub children: Vec<Vec<HnIdx>>,
    /// Session node rows under each HyperNode (directly or through children), ascending.
    pub nodes: Vec<Vec<NodeIdx>>,
    /// Bitset over node rows of each HyperNode (`words` u64 per HyperNode).
    bits: Vec<u64>,
    words: usize,
    /// Per node row: the HyperNode of the lowest tier that holds it (Volcano
    /// `FindHyperNodeForNode`), [`NONE`] when none.
    pub leaf_of_node: Vec<u32>,
    /// Distinct tiers, ascending, the cluster top's included (Volcano `HyperNodesTiers`).
    pub tiers: Vec<i32>,
    /// `spec.tierName` → tier.
    pub tier_names: HashMap<String, i32>,
    /// Problems found while resolving.
    pub issues: Vec<TopologyIssue>,
    /// Whether the tree is valid (no fatal issue).
    pub ready: bool,
}

impl Topology {
    /// Index of the cluster top.
    pub fn top(&self) -> HnIdx {
        (self.names.len() - 1) as HnIdx
    }

    /// Index of the HyperNode named `name`.
    pub fn index(&self, name: &str) -> Option<HnIdx> {
        self.names.iter().position(|n| n == name).map(|i| i as HnIdx)
    }

    /// Whether HyperNode `h` holds node row `n`.
    #[inline]
    pub fn contains(&self, h: HnIdx, n: NodeIdx) -> bool {
        let w = self.bits[h as usize * self.words + n.ix() / 64];
        w >> (n.ix() % 64) & 1 == 1
    }

    /// `h` and its ancestors, nearest first (Volcano `GetAncestors`).
    pub fn ancestors(&self, h: HnIdx) -> impl Iterator<Item = HnIdx> + '_ {
        let mut cur = h;
        std::iter::from_fn(move || {
            if cur == NONE {
                return None;
            }
            let out = cur;
            cur = self.parent[cur as usize];
            Some(out)
        })
    }

    /// Least common ancestor (Volcano `GetLCAHyperNode`); `None` stands for the empty name:
    /// LCA(None, b) = b.
    pub fn lca(&self, a: Option<HnIdx>, b: Option<HnIdx>) -> Option<HnIdx> {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(a), Some(b)) => {
                let up: Vec<HnIdx> = self.ancestors(a).collect();
                self.ancestors(b).find(|x| up.contains(x))
            }
        }
    }

    /// Resolves the cluster's HyperNodes against the session's nodes.
    pub fn build(s: &State<'_>) -> Topology {
        let specs: Vec<&HyperNodeSpec> = s.cluster.hyper_nodes().collect();
        Self::resolve(&specs, s.nodes.len, |i| &s.nodes.rec[i].spec)
    }

    /// [`Topology::build`] over explicit HyperNodes and `n_nodes` nodes given by row.
    pub fn resolve<'n>(specs: &[&HyperNodeSpec], n_nodes: usize, node: impl Fn(usize) -> &'n crate::model::NodeSpec) -> Topology {
        let nh = specs.len();
        let mut t = Topology {
            names: specs.iter().map(|h| h.name.clone()).chain([CLUSTER_TOP.to_string()]).collect(),
            tier: specs.iter().map(|h| h.tier).collect(),
            parent: vec![NONE; nh + 1],
            children: vec![Vec::new(); nh + 1],
            ready: true,
            ..Topology::default()
        };
        let by_name: HashMap<&str, u32> = specs.iter().enumerate().map(|(i, h)| (h.name.as_str(), i as u32)).collect();
        let node_by_name: HashMap<&str, usize> = (0..n_nodes).map(|i| (node(i).name.as_str(), i)).collect();
        t.words = n_nodes.div_ceil(64).max(1);
        t.bits = vec![0; (nh + 1) * t.words];
        let issue = |t: &mut Topology, h: &HyperNodeSpec, field: String, message: String, fatal: bool| {
            t.issues.push(TopologyIssue { hyper_node: h.name.clone(), field, message, fatal });
            if fatal {
                t.ready = false;
            }
        };
        // Direct node members and parent links.
        let mut direct: Vec<Vec<usize>> = vec![Vec::new(); nh];
        for (i, h) in specs.iter().enumerate() {
            for (m, member) in h.members.iter().enumerate() {
                let field = |sel: &str| format!("spec.members[{m}].selector.{sel}");
                match (member.kind, &member.selector) {
                    (MemberType::Node, MemberSelector::Exact(name)) => match node_by_name.get(name.as_str()) {
                        Some(&n) => direct[i].push(n),
                        None => issue(&mut t, h, field("exactMatch.name"), format!("no Ready node named {name:?}"), false),
                    },
                    (MemberType::Node, MemberSelector::Regex(p)) => match regex::Regex::new(p) {
                        Ok(re) => direct[i].extend((0..n_nodes).filter(|&n| re.is_match(&node(n).name))),
                        Err(e) => issue(&mut t, h, field("regexMatch.pattern"), format!("{p:?} does not compile: {e}"), true),
                    },
                    (MemberType::Node, MemberSelector::Labels(want)) => {
                        direct[i].extend((0..n_nodes).filter(|&n| want.iter().all(|(k, v)| node(n).labels.get(k) == Some(v))))
                    }
                    (MemberType::HyperNode, MemberSelector::Exact(name)) => match by_name.get(name.as_str()) {
                        None => issue(&mut t, h, field("exactMatch.name"), format!("no HyperNode named {name:?}"), true),
                        Some(&c) if c as usize == i => {
                            issue(&mut t, h, field("exactMatch.name"), "a HyperNode cannot be its own member".into(), true)
                        }
                        Some(&c) => {
                            let old = t.parent[c as usize];
                            if old != NONE && old != i as u32 {
                                let msg = format!("HyperNode {name:?} already has parent {:?}", specs[old as usize].name);
                                issue(&mut t, h, field("exactMatch.name"), msg, true);
                            } else if old == NONE {
                                t.parent[c as usize] = i as u32;
                                t.children[i].push(c);
                            }
                        }
                    },
                    (MemberType::HyperNode, _) => issue(
                        &mut t,
                        h,
                        format!("spec.members[{m}].selector"),
                        "a HyperNode member is selected by exactMatch only".into(),
                        true,
                    ),
                }
            }
        }
        // Cycles: walking up from any HyperNode must end at a parentless one.
        for (i, h) in specs.iter().enumerate() {
            let mut cur = t.parent[i];
            let mut steps = 0;
            while cur != NONE && steps <= nh {
                if cur as usize == i {
                    issue(&mut t, h, "spec.members".into(), "its members form a cycle back to it".into(), true);
                    break;
                }
                cur = t.parent[cur as usize];
                steps += 1;
            }
        }
        if !t.ready {
            // Cut every link so the tables below stay finite; topology jobs are not scheduled.
            t.parent.iter_mut().for_each(|p| *p = NONE);
            t.children.iter_mut().for_each(Vec::clear);
        }
        // The cluster top adopts every parentless HyperNode.
        let top = nh as u32;
        let top_tier = t.tier.iter().copied().max().map_or(1, |m| m + 1).max(1);
        t.tier.push(top_tier);
        for i in 0..nh {
            if t.parent[i] == NONE {
                t.parent[i] = top;
                t.children[nh].push(i as u32);
            }
        }
        t.parent[nh] = NONE;
        // Node bits: each HyperNode's direct nodes go to it and all its ancestors.
        for (i, d) in direct.iter().enumerate() {
            for &n in d {
                let mut cur = i as u32;
                while cur != NONE {
                    t.bits[cur as usize * t.words + n / 64] |= 1 << (n % 64);
                    cur = t.parent[cur as usize];
                }
            }
        }
        for n in 0..n_nodes {
            t.bits[nh * t.words + n / 64] |= 1 << (n % 64);
        }
        t.nodes = (0..=nh)
            .map(|h| (0..n_nodes).filter(|&n| t.contains(h as u32, NodeIdx(n as u32))).map(|n| NodeIdx(n as u32)).collect())
            .collect();
        let mut tiers: Vec<i32> = t.tier.clone();
        tiers.sort_unstable();
        tiers.dedup();
        t.tiers = tiers;
        let lowest = t.tiers[0];
        t.leaf_of_node = vec![NONE; n_nodes];
        for h in (0..=nh).filter(|&h| t.tier[h] == lowest) {
            for &n in &t.nodes[h] {
                if t.leaf_of_node[n.ix()] == NONE {
                    t.leaf_of_node[n.ix()] = h as u32;
                }
            }
        }
        for h in specs {
            if !h.tier_name.is_empty() {
                t.tier_names.entry(h.tier_name.clone()).or_insert(h.tier);
            }
        }
        t
    }
}

/// Every problem of the cluster's network topology, each naming object and field, in a fixed
/// order: the HyperNode tree's [`TopologyIssue`]s (resolved over all the cluster's nodes), then
/// per PodGroup (by namespace/name) a `networkTopology` (the PodGroup's or a sub-group
/// policy's) whose `highestTierName` no HyperNode has, or whose hard `highestTierAllowed` is
/// above the highest real tier. Empty when the cluster has no HyperNode and no PodGroup with a
/// topology. For the live scheduler and the offline tools to report once per change; sessions
/// find the same problems themselves (allocate's gradient path).
pub fn cluster_issues(cluster: &crate::cluster::Cluster) -> Vec<String> {
    use crate::model::{NetworkTopologySpec, TopologyMode};
    let topology_groups: Vec<_> = cluster
        .pod_groups()
        .map(|(_, g)| &g.spec)
        .filter(|g| g.network_topology.is_some() || g.sub_group_policy.iter().any(|p| p.network_topology.is_some()))
        .collect();
    if cluster.hyper_nodes().next().is_none() && topology_groups.is_empty() {
        return Vec::new();
    }
    let specs: Vec<&HyperNodeSpec> = cluster.hyper_nodes().collect();
    let nodes: Vec<&crate::model::NodeSpec> = cluster.nodes().map(|(_, n)| &n.spec).collect();
    let t = Topology::resolve(&specs, nodes.len(), |i| nodes[i]);
    let mut out: Vec<String> = t.issues.iter().map(|i| i.to_string()).collect();
    let highest = specs.iter().map(|h| h.tier).max();
    let check = |out: &mut Vec<String>, obj: &str, field: &str, nt: &NetworkTopologySpec| {
        if !nt.highest_tier_name.is_empty() && !t.tier_names.contains_key(&nt.highest_tier_name) {
            out.push(format!(
                "PodGroup {obj}: field {field}.highestTierName: no HyperNode has tierName {:?}",
                nt.highest_tier_name
            ));
        }
        if let (Some(tier), TopologyMode::Hard) = (nt.highest_tier_allowed, nt.mode) {
            match highest {
                Some(h) if tier > h => out.push(format!(
                    "PodGroup {obj}: field {field}.highestTierAllowed: {tier} is above the highest HyperNode tier {h}"
                )),
                None => out
                    .push(format!("PodGroup {obj}: field {field}.highestTierAllowed: {tier}, but the cluster has no HyperNode")),
                _ => {}
            }
        }
    };
    for g in topology_groups {
        let obj = format!("{}/{}", g.namespace, g.name);
        if let Some(nt) = &g.network_topology {
            check(&mut out, &obj, "spec.networkTopology", nt);
        }
        for (i, p) in g.sub_group_policy.iter().enumerate() {
            if let Some(nt) = &p.network_topology {
                check(&mut out, &obj, &format!("spec.subGroupPolicy[{i}].networkTopology"), nt);
            }
        }
    }
    out
}
