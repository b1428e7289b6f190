//! The conformance format's HyperNode keys for the scenario runner (`withinOneHyperNode`,
//! `podsWithinOneHyperNode`, `bindsWithin`; ../shared/conformance/README.md): HyperNode
//! members of the case's cluster (exactMatch, regexMatch, labelMatch) resolved to node names,
//! independently of the scheduler's own resolution.

use serde_yaml::Value as Yaml;
use std::collections::{BTreeMap, BTreeSet};

/// HyperNodes of a case: name → (tier, node names under it).
pub struct Tree(BTreeMap<String, (i64, BTreeSet<String>)>);

impl Tree {
    /// Reads the Nodes and HyperNodes of the case's `cluster` text.
    pub fn from_cluster(text: &str) -> Tree {
        let mut nodes: Vec<(String, BTreeMap<String, String>)> = Vec::new();
        let mut hns: BTreeMap<String, (i64, Vec<Yaml>)> = BTreeMap::new();
        for doc in text.split("\n---").filter_map(|d| serde_yaml::from_str::<Yaml>(d).ok()) {
            let name = doc["metadata"]["name"].as_str().unwrap_or_default().to_string();
            match doc["kind"].as_str() {
                Some("Node") => {
                    let labels = doc["metadata"]["labels"]
                        .as_mapping()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| (k.as_str().unwrap_or_default().to_string(), v.as_str().unwrap_or_default().to_string()))
                        .collect();
                    nodes.push((name, labels));
                }
                Some("HyperNode") => {
                    let members = doc["spec"]["members"].as_sequence().cloned().unwrap_or_default();
                    hns.insert(name, (doc["spec"]["tier"].as_i64().unwrap_or(0), members));
                }
                _ => {}
            }
        }
        fn leaves(
            name: &str,
            hns: &BTreeMap<String, (i64, Vec<Yaml>)>,
            nodes: &[(String, BTreeMap<String, String>)],
            depth: usize,
        ) -> BTreeSet<String> {
            let mut out = BTreeSet::new();
            let Some((_, members)) = hns.get(name) else { return out };
            if depth > hns.len() {
                return out;
            }
            for m in members {
                let sel = &m["selector"];
                if m["type"].as_str() == Some("HyperNode") {
                    if let Some(child) = sel["exactMatch"]["name"].as_str() {
                        out.extend(leaves(child, hns, nodes, depth + 1));
                    }
                } else if let Some(n) = sel["exactMatch"]["name"].as_str() {
                    out.insert(n.to_string());
                } else if let Some(p) = sel["regexMatch"]["pattern"].as_str() {
                    if let Ok(re) = regex::Regex::new(p) {
                        out.extend(nodes.iter().filter(|(n, _)| re.is_match(n)).map(|(n, _)| n.clone()));
                    }
                } else if let Some(want) = sel["labelMatch"]["matchLabels"].as_mapping() {
                    out.extend(
                        nodes
                            .iter()
                            .filter(|(_, l)| {
                                want.iter().all(|(k, v)| l.get(k.as_str().unwrap_or_default()).map(String::as_str) == v.as_str())
                            })
                            .map(|(n, _)| n.clone()),
                    );
                }
            }
            out
        }
        Tree(hns.keys().map(|h| (h.clone(), (hns[h].0, leaves(h, &hns, &nodes, 0)))).collect())
    }

    /// Whether one HyperNode of tier ≤ `tier` holds all of `nodes`.
    pub fn within(&self, tier: i64, nodes: &BTreeSet<String>) -> bool {
        self.0.values().any(|(t, under)| *t <= tier && nodes.is_subset(under))
    }
}

/// Checks the three keys of `expect` against the run's binds (`pod → node`) and PodGroup of
/// each pod; returns what failed.
pub fn check(cluster: &str, expect: &Yaml, binds: &BTreeMap<String, String>, group_of: &BTreeMap<String, String>) -> Vec<String> {
    let mut bad = Vec::new();
    let has = ["withinOneHyperNode", "podsWithinOneHyperNode", "bindsWithin"].iter().any(|k| expect.get(*k).is_some());
    if !has {
        return bad;
    }
    let tree = Tree::from_cluster(cluster);
    for (pg, tier) in expect.get("withinOneHyperNode").and_then(|v| v.as_mapping()).into_iter().flatten() {
        let pg = pg.as_str().unwrap_or_default();
        let tier = tier.as_i64().unwrap_or(0);
        let nodes: BTreeSet<String> =
            binds.iter().filter(|(p, _)| group_of.get(*p).map(String::as_str) == Some(pg)).map(|(_, n)| n.clone()).collect();
        if nodes.is_empty() || !tree.within(tier, &nodes) {
            bad.push(format!("withinOneHyperNode {pg}: bound on {nodes:?}, not all under one HyperNode of tier <= {tier}"));
        }
    }
    for item in expect.get("podsWithinOneHyperNode").and_then(|v| v.as_sequence()).into_iter().flatten() {
        let tier = item["tier"].as_i64().unwrap_or(0);
        let pods: Vec<&str> = item["pods"].as_sequence().into_iter().flatten().filter_map(|p| p.as_str()).collect();
        let nodes: BTreeSet<String> = pods.iter().filter_map(|p| binds.get(*p).cloned()).collect();
        if pods.iter().any(|p| !binds.contains_key(*p)) || !tree.within(tier, &nodes) {
            bad.push(format!(
                "podsWithinOneHyperNode {pods:?}: bound on {nodes:?}, want all bound under one HyperNode of tier <= {tier}"
            ));
        }
    }
    for (pod, allowed) in expect.get("bindsWithin").and_then(|v| v.as_mapping()).into_iter().flatten() {
        let pod = pod.as_str().unwrap_or_default();
        let allowed: Vec<&str> = allowed.as_sequence().into_iter().flatten().filter_map(|n| n.as_str()).collect();
        match binds.get(pod) {
            Some(n) if allowed.contains(&n.as_str()) => {}
            got => bad.push(format!("bindsWithin {pod}: want one of {allowed:?}, got {got:?}")),
        }
    }
    bad
}
