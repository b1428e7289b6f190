//! Volcano `NodeShard` → [`NodeShardSpec`]: `spec.nodesDesired` and `status.nodesInUse`
//! (`nodesToAdd` / `nodesToRemove` are recomputed by every reader, as Volcano's
//! `NewNodeShardInfo` does). Errors name the object and field: an empty or duplicated node
//! name. A node name the cluster does not have is not an error here (the node may appear
//! later): the scheduler reports it with [`basalt_core::Cluster::shard_problems`].

use super::{required_name, ConvertError, ObjRef};
use crate::crd;
use basalt_core::model::NodeShardSpec;

/// Converts a NodeShard.
pub fn convert_node_shard(ns: &crd::NodeShard) -> Result<NodeShardSpec, ConvertError> {
    let name = required_name("NodeShard", &ns.metadata)?;
    let obj = ObjRef { kind: "NodeShard", name: &name };
    let nodes_desired = names(obj, "spec.nodesDesired", &ns.spec.nodes_desired)?;
    let in_use = ns.status.as_ref().and_then(|s| s.nodes_in_use.as_deref()).unwrap_or_default();
    let nodes_in_use = names(obj, "status.nodesInUse", in_use)?;
    Ok(NodeShardSpec { name, nodes_desired, nodes_in_use })
}

fn names(obj: ObjRef<'_>, field: &str, list: &[String]) -> Result<Vec<String>, ConvertError> {
    let mut seen = std::collections::HashSet::new();
    for (i, n) in list.iter().enumerate() {
        if n.is_empty() {
            return Err(obj.error(format!("{field}[{i}]"), "empty node name"));
        }
        if !seen.insert(n.as_str()) {
            return Err(obj.error(format!("{field}[{i}]"), format!("node {n:?} is listed twice")));
        }
    }
    Ok(list.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(yaml: &str) -> Result<NodeShardSpec, ConvertError> {
        convert_node_shard(&serde_yaml::from_str(yaml).unwrap())
    }

    #[test]
    fn reads_desired_and_in_use() {
        let got =
            ns("metadata: {name: s1}\nspec: {nodesDesired: [n1, n2]}\nstatus: {nodesInUse: [n1], nodesToAdd: [n2]}\n").unwrap();
        assert_eq!(got.name, "s1");
        assert_eq!(got.nodes_desired, ["n1", "n2"]);
        assert_eq!(got.nodes_in_use, ["n1"]);
        assert!(ns("metadata: {name: s2}\nspec: {nodesDesired: []}\n").unwrap().nodes_in_use.is_empty());
    }

    #[test]
    fn refuses_empty_and_repeated_names_naming_the_field() {
        let e = ns("metadata: {name: s1}\nspec: {nodesDesired: [n1, '']}\n").unwrap_err();
        assert_eq!(e.to_string(), "NodeShard s1: field spec.nodesDesired[1]: empty node name");
        let e = ns("metadata: {name: s1}\nspec: {nodesDesired: [n1]}\nstatus: {nodesInUse: [n2, n2]}\n").unwrap_err();
        assert_eq!(e.to_string(), "NodeShard s1: field status.nodesInUse[1]: node \"n2\" is listed twice");
    }
}
