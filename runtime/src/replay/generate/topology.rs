//! `basalt replay --topology GxNxL`: the embedded default's cluster as a network topology tree
//! (issue 23): `nodes` GPU nodes of G GPUs each, N per tier-1 HyperNode (`leaf-NNNN`,
//! tierName `leaf`), L leaves per tier-2 HyperNode (`spine-NNN`, tierName `spine`), and the
//! default's gangs with the PodGroup `networkTopology` of `--gang-topology`.

use basalt_core::cluster::Delta;
use basalt_core::model::{HyperNodeMember, HyperNodeSpec, MemberSelector, MemberType, NetworkTopologySpec, TopologyMode};

/// CPU millicores per GPU of a topology node (the embedded cluster's 8-GPU G2 node: 96 cores).
pub const CPU_MILLI_PER_GPU: i64 = 12_000;
/// Memory MiB per GPU of a topology node (G2: 384 GiB for 8 GPUs).
pub const MEMORY_MIB_PER_GPU: i64 = 48 * 1024;

/// The `networkTopology` the generated gangs get (`--gang-topology`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GangTopology {
    /// `hard:T`: `{mode: hard, highestTierAllowed: T}`.
    Hard(i32),
    /// `soft`: `{mode: soft}`.
    Soft,
    /// `none`: no `networkTopology` (a topology-blind baseline on the same tree).
    None,
}

impl GangTopology {
    /// Parses `hard:T` (T ≥ 1), `soft` or `none`. Errors name the value.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "soft" => Ok(GangTopology::Soft),
            "none" => Ok(GangTopology::None),
            _ => match s.strip_prefix("hard:").map(str::parse::<i32>) {
                Some(Ok(t)) if t >= 1 => Ok(GangTopology::Hard(t)),
                _ => Err(format!("'{s}': expected hard:TIER (TIER ≥ 1, e.g. hard:1), soft or none")),
            },
        }
    }

    /// The PodGroup field, `None` for [`GangTopology::None`].
    pub fn spec(self) -> Option<NetworkTopologySpec> {
        match self {
            GangTopology::Hard(t) => Some(NetworkTopologySpec {
                mode: TopologyMode::Hard,
                highest_tier_allowed: Some(t),
                highest_tier_name: String::new(),
            }),
            GangTopology::Soft => Some(NetworkTopologySpec { mode: TopologyMode::Soft, ..Default::default() }),
            GangTopology::None => None,
        }
    }

    /// In words, for the report's note.
    pub fn describe(self) -> String {
        match self {
            GangTopology::Hard(t) => format!("hard, highestTierAllowed {t}"),
            GangTopology::Soft => "soft".into(),
            GangTopology::None => "no networkTopology".into(),
        }
    }
}

/// The tree of `--topology GPUSxNODESxLEAVES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopologyTree {
    /// GPUs per node.
    pub gpus_per_node: i64,
    /// Nodes per leaf (tier 1).
    pub nodes_per_leaf: usize,
    /// Leaves per spine (tier 2).
    pub leaves_per_spine: usize,
}

impl TopologyTree {
    /// Parses `GxNxL` (three positive integers, e.g. `8x16x8`). Errors name the value.
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad =
            || format!("'{s}': expected GPUS_PER_NODExNODES_PER_LEAFxLEAVES_PER_SPINE, three positive integers, e.g. 8x16x8");
        let parts: Vec<usize> =
            s.split('x').map(|p| p.trim().parse::<usize>().ok().filter(|&v| v > 0)).collect::<Option<_>>().ok_or_else(bad)?;
        let [g, n, l] = parts[..] else { return Err(bad()) };
        if g > 64 {
            return Err(format!("'{s}': at most 64 GPUs per node"));
        }
        Ok(TopologyTree { gpus_per_node: g as i64, nodes_per_leaf: n, leaves_per_spine: l })
    }

    /// Nodes of one spine: the default node count with `--topology`.
    pub fn spine_nodes(&self) -> usize {
        self.nodes_per_leaf * self.leaves_per_spine
    }

    /// Name of node `i`.
    pub fn node_name(i: usize) -> String {
        format!("node-{i:05}")
    }

    /// The HyperNodes over nodes `0..nodes` ([`TopologyTree::node_name`]): leaves of
    /// `nodes_per_leaf` consecutive nodes, spines of `leaves_per_spine` consecutive leaves.
    pub fn hyper_nodes(&self, nodes: usize) -> Vec<Delta> {
        let exact = |kind, name: String| HyperNodeMember { kind, selector: MemberSelector::Exact(name) };
        let leaves = nodes.div_ceil(self.nodes_per_leaf);
        let mut out = Vec::new();
        for k in 0..leaves {
            let members = (k * self.nodes_per_leaf..((k + 1) * self.nodes_per_leaf).min(nodes))
                .map(|i| exact(MemberType::Node, Self::node_name(i)))
                .collect();
            out.push(Delta::HyperNode(HyperNodeSpec {
                name: format!("leaf-{k:04}"),
                tier: 1,
                tier_name: "leaf".into(),
                members,
            }));
        }
        for s in 0..leaves.div_ceil(self.leaves_per_spine) {
            let members = (s * self.leaves_per_spine..((s + 1) * self.leaves_per_spine).min(leaves))
                .map(|k| exact(MemberType::HyperNode, format!("leaf-{k:04}")))
                .collect();
            out.push(Delta::HyperNode(HyperNodeSpec {
                name: format!("spine-{s:03}"),
                tier: 2,
                tier_name: "spine".into(),
                members,
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_syntax_and_its_errors() {
        assert_eq!(TopologyTree::parse("8x16x8"), Ok(TopologyTree { gpus_per_node: 8, nodes_per_leaf: 16, leaves_per_spine: 8 }));
        for bad in ["8x16", "8x0x8", "axbxc", "8x16x8x2", ""] {
            assert!(TopologyTree::parse(bad).unwrap_err().contains("GPUS_PER_NODExNODES_PER_LEAFxLEAVES_PER_SPINE"), "{bad}");
        }
        assert_eq!(GangTopology::parse("hard:2"), Ok(GangTopology::Hard(2)));
        assert_eq!(GangTopology::parse("soft"), Ok(GangTopology::Soft));
        assert!(GangTopology::parse("hard:0").unwrap_err().contains("'hard:0'"));
        let t = TopologyTree::parse("8x4x2").unwrap();
        let h = t.hyper_nodes(10);
        let shape: Vec<(String, i32, usize)> = h
            .iter()
            .map(|d| match d {
                Delta::HyperNode(h) => (h.name.clone(), h.tier, h.members.len()),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("leaf-0000".to_string(), 1, 4),
                ("leaf-0001".to_string(), 1, 4),
                ("leaf-0002".to_string(), 1, 2),
                ("spine-000".to_string(), 2, 2),
                ("spine-001".to_string(), 2, 1)
            ]
        );
    }
}
