//! Node sharding (Volcano `shard.volcano.sh/v1alpha1` NodeShard and the scheduler's
//! `--scheduler-sharding-mode` / `--scheduler-sharding-name`, volcano-behaviour.md §9): a
//! NodeShard names the nodes one scheduler should use; several schedulers, each with its own
//! shard, share a cluster.

/// A `NodeShard` as the scheduler reads it (cluster-scoped, by name).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeShardSpec {
    /// `metadata.name`: the shard name a scheduler's `--scheduler-sharding-name` refers to.
    pub name: String,
    /// `spec.nodesDesired`: the nodes the sharding controller gives this shard.
    pub nodes_desired: Vec<String>,
    /// `status.nodesInUse`: the nodes the shard's scheduler uses now (written by that
    /// scheduler). Another shard's scheduler leaves these alone even when they are in its own
    /// `nodesDesired`, until this scheduler gives them up (Volcano
    /// `getAvailableNodesFromShard`).
    pub nodes_in_use: Vec<String>,
}

/// `--scheduler-sharding-mode` (Volcano `pkg/util`: `none`, `hard`, `soft`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ShardingMode {
    /// `none` (the default): every node is a candidate, NodeShards are not read.
    #[default]
    None,
    /// `hard`: only the nodes of the scheduler's shard are candidates; every other node fails
    /// the predicates with `node isn't in scheduler node shard` (Volcano
    /// `PredicateHelper.PredicateNodes`).
    Hard,
    /// `soft`: every node is a candidate, but nodes of the shard come first: allocate tries
    /// idle in-shard nodes, then idle nodes of other shards, then in-shard nodes with future
    /// idle resources, then other nodes with future idle resources (Volcano allocate
    /// `prioritizeNodes`); backfill, preempt and reclaim try in-shard nodes first
    /// (`GetPredicatedNodeByShard`).
    Soft,
}

impl ShardingMode {
    /// Parses Volcano's spelling. Errors: the message names the flag and the values allowed.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "none" | "" => Ok(ShardingMode::None),
            "hard" => Ok(ShardingMode::Hard),
            "soft" => Ok(ShardingMode::Soft),
            other => Err(format!("--scheduler-sharding-mode: must be none, hard or soft, got {other:?}")),
        }
    }

    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ShardingMode::None => "none",
            ShardingMode::Hard => "hard",
            ShardingMode::Soft => "soft",
        }
    }
}

/// The nodes the scheduler of shard `name` may use now: its `nodesDesired` minus every node
/// another shard has in use (Volcano `SchedulerCache.getAvailableNodesFromShard`). `None` when
/// no shard is named `name` (Volcano logs "Sharding is enabled but no shard is defined for this
/// scheduler" and schedules onto no node in hard mode).
pub fn nodes_in_shard<'s>(
    shards: impl Iterator<Item = &'s NodeShardSpec> + Clone,
    name: &str,
) -> Option<std::collections::BTreeSet<&'s str>> {
    let own = shards.clone().find(|s| s.name == name)?;
    let mut nodes: std::collections::BTreeSet<&str> = own.nodes_desired.iter().map(String::as_str).collect();
    for other in shards.filter(|s| s.name != name) {
        for n in &other.nodes_in_use {
            nodes.remove(n.as_str());
        }
    }
    Some(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(name: &str, desired: &[&str], in_use: &[&str]) -> NodeShardSpec {
        NodeShardSpec {
            name: name.into(),
            nodes_desired: desired.iter().map(|s| s.to_string()).collect(),
            nodes_in_use: in_use.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_node_another_shard_still_uses_is_not_available() {
        let shards = [shard("a", &["n1", "n2", "n3"], &["n1"]), shard("b", &["n4"], &["n3", "n4"])];
        let got: Vec<&str> = nodes_in_shard(shards.iter(), "a").unwrap().into_iter().collect();
        assert_eq!(got, ["n1", "n2"], "n3 is still in use by shard b");
        let got: Vec<&str> = nodes_in_shard(shards.iter(), "b").unwrap().into_iter().collect();
        assert_eq!(got, ["n4"], "shard a's nodesInUse n1 is not in b's nodesDesired anyway");
        assert!(nodes_in_shard(shards.iter(), "c").is_none());
    }

    #[test]
    fn mode_parses_volcano_spelling_and_names_the_flag() {
        assert_eq!(ShardingMode::parse("hard"), Ok(ShardingMode::Hard));
        assert_eq!(ShardingMode::parse("soft").unwrap().as_str(), "soft");
        assert_eq!(ShardingMode::parse("none"), Ok(ShardingMode::None));
        let e = ShardingMode::parse("strict").unwrap_err();
        assert!(e.contains("--scheduler-sharding-mode") && e.contains("\"strict\""), "{e}");
    }
}
