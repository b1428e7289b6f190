//! `basalt_core::session::topology::cluster_issues`: every problem of a cluster's network
//! topology (the HyperNode tree and the PodGroups' `networkTopology`) as one message naming the
//! object and the field, which the live scheduler logs once per change.

use basalt_core::cluster::{Cluster, Delta};
use basalt_core::model::{
    HyperNodeMember, HyperNodeSpec, MemberSelector, MemberType, NetworkTopologySpec, NodeSpec, PodGroupSpec, SubGroupPolicySpec,
    TopologyMode,
};
use basalt_core::session::topology::cluster_issues;

fn node(name: &str) -> NodeSpec {
    NodeSpec { name: name.into(), ready: true, ..Default::default() }
}

fn hn(name: &str, tier: i32, tier_name: &str, members: &[(MemberType, MemberSelector)]) -> HyperNodeSpec {
    HyperNodeSpec {
        name: name.into(),
        tier,
        tier_name: tier_name.into(),
        members: members.iter().cloned().map(|(kind, selector)| HyperNodeMember { kind, selector }).collect(),
    }
}

fn exact(kind: MemberType, name: &str) -> (MemberType, MemberSelector) {
    (kind, MemberSelector::Exact(name.into()))
}

fn group(name: &str, nt: NetworkTopologySpec) -> PodGroupSpec {
    PodGroupSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        min_member: 1,
        queue: "default".into(),
        network_topology: Some(nt),
        ..Default::default()
    }
}

fn hard(tier: Option<i32>, tier_name: &str) -> NetworkTopologySpec {
    NetworkTopologySpec { mode: TopologyMode::Hard, highest_tier_allowed: tier, highest_tier_name: tier_name.into() }
}

/// Nodes n0..n3; leaf-a (tier 1, "leaf") holds n0, n1; leaf-b holds n2, n3; spine (tier 2,
/// "spine") holds both leaves.
fn valid() -> Cluster {
    let mut c = Cluster::new();
    for n in ["n0", "n1", "n2", "n3"] {
        c.apply(Delta::Node(node(n))).unwrap();
    }
    let m = MemberType::Node;
    c.apply(Delta::HyperNode(hn("leaf-a", 1, "leaf", &[exact(m, "n0"), exact(m, "n1")]))).unwrap();
    c.apply(Delta::HyperNode(hn("leaf-b", 1, "leaf", &[exact(m, "n2"), exact(m, "n3")]))).unwrap();
    let h = MemberType::HyperNode;
    c.apply(Delta::HyperNode(hn("spine", 2, "spine", &[exact(h, "leaf-a"), exact(h, "leaf-b")]))).unwrap();
    c
}

/// The one issue of `c`, asserting there is exactly one.
fn only_issue(c: &Cluster) -> String {
    let issues = cluster_issues(c);
    assert_eq!(issues.len(), 1, "{issues:?}");
    issues.into_iter().next().unwrap()
}

#[test]
fn a_valid_tree_and_valid_topology_groups_have_no_issue() {
    let mut c = valid();
    c.apply(Delta::PodGroup(group("by-tier", hard(Some(2), "")))).unwrap();
    c.apply(Delta::PodGroup(group("by-name", hard(None, "leaf")))).unwrap();
    assert_eq!(cluster_issues(&c), Vec::<String>::new());
    assert_eq!(cluster_issues(&Cluster::new()), Vec::<String>::new(), "no HyperNode, no topology group: nothing to say");
}

#[test]
fn an_unknown_member_names_the_hyper_node_and_the_member_field() {
    let mut c = valid();
    let members = [exact(MemberType::Node, "n0"), exact(MemberType::Node, "n1"), exact(MemberType::Node, "gone")];
    c.apply(Delta::HyperNode(hn("leaf-a", 1, "leaf", &members))).unwrap();
    assert_eq!(only_issue(&c), "HyperNode leaf-a: field spec.members[2].selector.exactMatch.name: no Ready node named \"gone\"");
    let mut c = valid();
    let members = [exact(MemberType::HyperNode, "leaf-a"), exact(MemberType::HyperNode, "leaf-x")];
    c.apply(Delta::HyperNode(hn("spine", 2, "spine", &members))).unwrap();
    assert_eq!(only_issue(&c), "HyperNode spine: field spec.members[1].selector.exactMatch.name: no HyperNode named \"leaf-x\"");
}

#[test]
fn a_regex_that_does_not_compile_names_the_pattern_field() {
    let mut c = valid();
    c.apply(Delta::HyperNode(hn("leaf-a", 1, "leaf", &[(MemberType::Node, MemberSelector::Regex("n[0-".into()))]))).unwrap();
    let i = only_issue(&c);
    assert!(
        i.starts_with("HyperNode leaf-a: field spec.members[0].selector.regexMatch.pattern: \"n[0-\" does not compile"),
        "{i}"
    );
}

#[test]
fn a_second_parent_names_the_hyper_node_that_claims_it() {
    let mut c = valid();
    c.apply(Delta::HyperNode(hn("spine-z", 2, "spine", &[exact(MemberType::HyperNode, "leaf-b")]))).unwrap();
    // HyperNodes are resolved in name order: spine takes leaf-b first, spine-z is the second parent.
    assert_eq!(
        only_issue(&c),
        "HyperNode spine-z: field spec.members[0].selector.exactMatch.name: HyperNode \"leaf-b\" already has parent \"spine\""
    );
}

#[test]
fn a_cycle_names_every_hyper_node_on_it_and_the_members_field() {
    let mut c = valid();
    let h = MemberType::HyperNode;
    c.apply(Delta::HyperNode(hn("leaf-a", 1, "leaf", &[exact(MemberType::Node, "n0"), exact(h, "spine")]))).unwrap();
    let issues = cluster_issues(&c);
    for name in ["leaf-a", "spine"] {
        let want = format!("HyperNode {name}: field spec.members: its members form a cycle back to it");
        assert!(issues.contains(&want), "{want:?} not in {issues:?}");
    }
}

#[test]
fn a_tier_name_no_hyper_node_has_names_the_pod_group_and_field() {
    let mut c = valid();
    c.apply(Delta::PodGroup(group("train", hard(None, "nvlink")))).unwrap();
    assert_eq!(
        only_issue(&c),
        "PodGroup ns/train: field spec.networkTopology.highestTierName: no HyperNode has tierName \"nvlink\""
    );
    // The same check on a sub-group policy's networkTopology.
    let mut g = group("sub", hard(Some(1), ""));
    g.sub_group_policy =
        vec![SubGroupPolicySpec { name: "w".into(), network_topology: Some(hard(None, "rail")), ..Default::default() }];
    let mut c = valid();
    c.apply(Delta::PodGroup(g)).unwrap();
    assert_eq!(
        only_issue(&c),
        "PodGroup ns/sub: field spec.subGroupPolicy[0].networkTopology.highestTierName: no HyperNode has tierName \"rail\""
    );
}

#[test]
fn a_hard_tier_above_the_top_tier_names_the_pod_group_and_field() {
    let mut c = valid();
    c.apply(Delta::PodGroup(group("wide", hard(Some(3), "")))).unwrap();
    assert_eq!(
        only_issue(&c),
        "PodGroup ns/wide: field spec.networkTopology.highestTierAllowed: 3 is above the highest HyperNode tier 2"
    );
    // Soft mode places anyway (turned into hard at the top tier): no issue.
    let mut c = valid();
    c.apply(Delta::PodGroup(group("soft", NetworkTopologySpec { mode: TopologyMode::Soft, ..hard(Some(3), "") }))).unwrap();
    assert_eq!(cluster_issues(&c), Vec::<String>::new());
    // No HyperNode at all.
    let mut c = Cluster::new();
    c.apply(Delta::PodGroup(group("lonely", hard(Some(1), "")))).unwrap();
    assert_eq!(
        only_issue(&c),
        "PodGroup ns/lonely: field spec.networkTopology.highestTierAllowed: 1, but the cluster has no HyperNode"
    );
}
