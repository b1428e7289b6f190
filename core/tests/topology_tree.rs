//! HyperNode trees resolved into session tables (`basalt_core::session::topology`): members by
//! exact name, regex and labels, the virtual cluster top, leaves, LCA; and invalid trees
//! reported naming the HyperNode and field, never a panic.

use basalt_core::model::{HyperNodeMember, HyperNodeSpec, MemberSelector, MemberType, NodeSpec};
use basalt_core::session::tables::NodeIdx;
use basalt_core::session::topology::{Topology, CLUSTER_TOP};

fn node(name: &str, rack: &str) -> NodeSpec {
    NodeSpec { name: name.into(), labels: [("rack".to_string(), rack.to_string())].into(), ready: true, ..Default::default() }
}

fn hn(name: &str, tier: i32, members: Vec<(MemberType, MemberSelector)>) -> HyperNodeSpec {
    HyperNodeSpec {
        name: name.into(),
        tier,
        tier_name: String::new(),
        members: members.into_iter().map(|(kind, selector)| HyperNodeMember { kind, selector }).collect(),
    }
}

fn exact(k: MemberType, n: &str) -> (MemberType, MemberSelector) {
    (k, MemberSelector::Exact(n.into()))
}

fn resolve(specs: &[HyperNodeSpec], nodes: &[NodeSpec]) -> Topology {
    let refs: Vec<&HyperNodeSpec> = specs.iter().collect();
    Topology::resolve(&refs, nodes.len(), |i| &nodes[i])
}

#[test]
fn members_by_exact_regex_and_labels_roll_up_to_the_cluster_top() {
    let nodes = vec![node("a-0", "a"), node("a-1", "a"), node("b-0", "b"), node("b-1", "b"), node("loose", "z")];
    let specs = vec![
        hn("leaf-a", 1, vec![(MemberType::Node, MemberSelector::Regex("^a-[0-9]$".into()))]),
        hn("leaf-b", 1, vec![(MemberType::Node, MemberSelector::Labels([("rack".into(), "b".into())].into()))]),
        hn("spine", 2, vec![exact(MemberType::HyperNode, "leaf-a"), exact(MemberType::HyperNode, "leaf-b")]),
    ];
    let t = resolve(&specs, &nodes);
    assert!(t.ready, "{:?}", t.issues);
    let idx = |n: &str| t.index(n).unwrap();
    assert_eq!(t.nodes[idx("leaf-a") as usize], vec![NodeIdx(0), NodeIdx(1)]);
    assert_eq!(t.nodes[idx("leaf-b") as usize], vec![NodeIdx(2), NodeIdx(3)]);
    assert_eq!(t.nodes[idx("spine") as usize].len(), 4);
    assert_eq!(t.names[t.top() as usize], CLUSTER_TOP);
    assert_eq!(t.tier[t.top() as usize], 3, "the cluster top is one tier above the highest");
    assert_eq!(t.nodes[t.top() as usize].len(), 5, "the cluster top holds every node, the loose one too");
    assert_eq!(t.leaf_of_node, vec![idx("leaf-a"), idx("leaf-a"), idx("leaf-b"), idx("leaf-b"), u32::MAX]);
    assert_eq!(t.lca(Some(idx("leaf-a")), Some(idx("leaf-b"))), Some(idx("spine")));
    assert_eq!(t.lca(None, Some(idx("leaf-b"))), Some(idx("leaf-b")));
    assert_eq!(t.tiers, vec![1, 2, 3]);
}

#[test]
fn invalid_trees_are_reported_naming_object_and_field() {
    let nodes = vec![node("n0", "a"), node("n1", "a")];
    let cases: Vec<(Vec<HyperNodeSpec>, &str)> = vec![
        (
            vec![
                hn("a", 1, vec![exact(MemberType::Node, "n0"), exact(MemberType::HyperNode, "b")]),
                hn("b", 1, vec![exact(MemberType::Node, "n1"), exact(MemberType::HyperNode, "a")]),
            ],
            "HyperNode a: field spec.members: its members form a cycle back to it",
        ),
        (
            vec![
                hn("leaf", 1, vec![exact(MemberType::Node, "n0")]),
                hn("s1", 2, vec![exact(MemberType::HyperNode, "leaf")]),
                hn("s2", 2, vec![exact(MemberType::HyperNode, "leaf")]),
            ],
            "HyperNode s2: field spec.members[0].selector.exactMatch.name: HyperNode \"leaf\" already has parent \"s1\"",
        ),
        (
            vec![hn("s", 2, vec![exact(MemberType::HyperNode, "ghost")])],
            "HyperNode s: field spec.members[0].selector.exactMatch.name: no HyperNode named \"ghost\"",
        ),
        (
            vec![hn("r", 1, vec![(MemberType::Node, MemberSelector::Regex("n[".into()))])],
            "HyperNode r: field spec.members[0].selector.regexMatch.pattern: \"n[\" does not compile",
        ),
    ];
    for (specs, want) in cases {
        let t = resolve(&specs, &nodes);
        assert!(!t.ready, "{want}");
        let got: Vec<String> = t.issues.iter().map(ToString::to_string).collect();
        assert!(got.iter().any(|g| g.starts_with(want)), "want {want:?} in {got:?}");
        assert_eq!(t.nodes[t.top() as usize].len(), 2, "the cluster top still holds the nodes");
    }
}

#[test]
fn an_unknown_node_member_is_reported_but_not_fatal() {
    let nodes = vec![node("n0", "a")];
    let t = resolve(&[hn("leaf", 1, vec![exact(MemberType::Node, "n0"), exact(MemberType::Node, "gone")])], &nodes);
    assert!(t.ready);
    assert_eq!(t.issues.len(), 1);
    assert_eq!(
        t.issues[0].to_string(),
        "HyperNode leaf: field spec.members[1].selector.exactMatch.name: no Ready node named \"gone\""
    );
}
