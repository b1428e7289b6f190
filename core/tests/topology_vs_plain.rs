//! Generated topology clusters (a three-tier HyperNode tree over generated nodes, members by
//! exact name, regex and labels; gangs with hard tier-1 and tier-2 limits, soft gangs, gangs
//! with sub-groups and plain gangs): the optimised allocate path (the class path for the pods it
//! may take) against the plain reference scan must decide exactly the same, with the
//! network-topology-aware plugin scoring plain pods (they all take the plain scan) and without
//! (they take the class path between the gradient path's placements); a second run decides the
//! same again; every hard gang bound lies inside one HyperNode of its allowed tier.

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_core::model::{
    HyperNodeMember, HyperNodeSpec, MemberSelector, MemberType, NetworkTopologySpec, SubGroupPolicySpec, TopologyMode,
};
use basalt_core::session::topology::Topology;
use basalt_core::workload::{generate, Variant, WorkloadSpec};
use basalt_core::{run_cycle, CycleOptions, Decisions, Delta};
use std::collections::BTreeMap;

const CONF: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"#;

/// Nodes per leaf and leaves per spine; spines hang under one core HyperNode (tier 3).
const LEAF: usize = 8;
const SPINE: usize = 4;

fn member(kind: MemberType, selector: MemberSelector) -> HyperNodeMember {
    HyperNodeMember { kind, selector }
}

/// The tree over `nodes` generated nodes: leaf `l` holds nodes `l*LEAF..(l+1)*LEAF`, by exact
/// names (l % 3 == 0), one regex (l % 3 == 1) or the `leaf` label the caller puts on the nodes
/// (l % 3 == 2).
fn tree(nodes: usize) -> Vec<HyperNodeSpec> {
    let leaves = nodes / LEAF;
    let mut out = Vec::new();
    for l in 0..leaves {
        let names: Vec<String> = (l * LEAF..(l + 1) * LEAF).map(|n| format!("node-{n:05}")).collect();
        let members = match l % 3 {
            0 => names.into_iter().map(|n| member(MemberType::Node, MemberSelector::Exact(n))).collect(),
            1 => vec![member(MemberType::Node, MemberSelector::Regex(format!("^({})$", names.join("|"))))],
            _ => vec![member(MemberType::Node, MemberSelector::Labels([("leaf".to_string(), format!("leaf-{l}"))].into()))],
        };
        out.push(HyperNodeSpec { name: format!("leaf-{l:03}"), tier: 1, tier_name: "leaf".into(), members });
    }
    for s in 0..leaves.div_ceil(SPINE) {
        let members = (s * SPINE..((s + 1) * SPINE).min(leaves))
            .map(|l| member(MemberType::HyperNode, MemberSelector::Exact(format!("leaf-{l:03}"))))
            .collect();
        out.push(HyperNodeSpec { name: format!("spine-{s:02}"), tier: 2, tier_name: "spine".into(), members });
    }
    let spines = leaves.div_ceil(SPINE);
    let members = (0..spines).map(|s| member(MemberType::HyperNode, MemberSelector::Exact(format!("spine-{s:02}")))).collect();
    out.push(HyperNodeSpec { name: "core".into(), tier: 3, tier_name: "core".into(), members });
    out
}

fn hard(tier: i32) -> Option<NetworkTopologySpec> {
    Some(NetworkTopologySpec { mode: TopologyMode::Hard, highest_tier_allowed: Some(tier), highest_tier_name: String::new() })
}

/// A generated cluster with the tree; job `j` gets (by `j % 5`) a hard tier-1 limit, a hard
/// tier-2 limit (by `highestTierName: spine`), a soft topology, two sub-groups of half the gang
/// each with a hard tier-1 limit inside a hard tier-2 job, or nothing.
fn cluster(nodes: usize, pods: usize, seed: u64) -> (Cluster, BTreeMap<String, i32>) {
    let spec = WorkloadSpec { nodes, pods, gang: 8, queues: 2, variant: Variant::Identical, seed };
    let mut c = Cluster::new();
    let mut limits = BTreeMap::new();
    for d in generate(&spec) {
        let d = match d {
            Delta::Node(mut n) => {
                let i: usize = n.name[5..].parse().expect("node-NNNNN");
                n.labels.insert("leaf".into(), format!("leaf-{}", i / LEAF));
                Delta::Node(n)
            }
            Delta::PodGroup(mut g) => {
                let j: usize = g.name[4..].parse().expect("job-NNNNNN");
                let key = format!("{}/{}", g.namespace, g.name);
                match j % 5 {
                    0 => {
                        g.network_topology = hard(1);
                        limits.insert(key, 1);
                    }
                    1 => {
                        g.network_topology = Some(NetworkTopologySpec {
                            mode: TopologyMode::Hard,
                            highest_tier_allowed: None,
                            highest_tier_name: "spine".into(),
                        });
                        limits.insert(key, 2);
                    }
                    2 => {
                        g.network_topology =
                            Some(NetworkTopologySpec { mode: TopologyMode::Soft, ..NetworkTopologySpec::default() })
                    }
                    3 => {
                        g.network_topology = hard(2);
                        g.sub_group_policy = vec![SubGroupPolicySpec {
                            name: "part".into(),
                            network_topology: hard(1),
                            sub_group_size: Some(g.min_member / 2),
                            min_sub_groups: Some(2),
                            match_label_keys: vec!["part".into()],
                            ..Default::default()
                        }];
                        limits.insert(key, 2);
                    }
                    _ => {}
                }
                Delta::PodGroup(g)
            }
            Delta::Pod(mut p) => {
                let i: usize = p.name.rsplit('-').next().and_then(|x| x.parse().ok()).expect("job-NNNNNN-i");
                p.labels.insert("part".into(), (i % 2).to_string());
                Delta::Pod(p)
            }
            d => d,
        };
        c.apply(d).expect("generated objects are valid");
    }
    for h in tree(nodes) {
        c.apply(Delta::HyperNode(h)).expect("HyperNode is valid");
    }
    (c, limits)
}

/// Every bound pod of each PodGroup in `limits` lies under one HyperNode of tier ≤ its limit.
fn assert_within(c: &Cluster, d: &Decisions, limits: &BTreeMap<String, i32>) {
    let specs: Vec<&HyperNodeSpec> = c.hyper_nodes().collect();
    let nodes: Vec<_> = c.nodes().map(|(_, n)| &n.spec).collect();
    let row: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let t = Topology::resolve(&specs, nodes.len(), |i| nodes[i]);
    assert!(t.ready, "{:?}", t.issues);
    let mut by_group: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for b in &d.binds {
        let pod = &c.pod(b.pod).expect("bound pod").spec;
        let node = &c.node(b.node).expect("bind node").spec.name;
        let key = format!("{}/{}", pod.namespace, pod.group.clone().unwrap_or_default());
        by_group.entry(key).or_default().push(row[node.as_str()]);
    }
    let mut checked = 0;
    for (g, &tier) in limits {
        let Some(rows) = by_group.get(g) else { continue };
        let inside = (0..t.names.len() as u32).any(|h| {
            t.tier[h as usize] <= tier && rows.iter().all(|&n| t.contains(h, basalt_core::session::tables::NodeIdx(n as u32)))
        });
        assert!(inside, "{g}: bound on rows {rows:?}, not inside one HyperNode of tier ≤ {tier}");
        checked += 1;
    }
    assert!(checked > 0, "no hard gang was bound: the check would be empty");
}

fn compare(conf: &SchedulerConf, nodes: usize, pods: usize, seed: u64) {
    let (c, limits) = cluster(nodes, pods, seed);
    let mut fast = conf.clone();
    fast.options.class_cache = true;
    let mut plain = conf.clone();
    plain.options.class_cache = false;
    let opts = CycleOptions { seed, cycle: 1, now_ms: 0 };
    let a = run_cycle(&c, &fast, &opts);
    assert!(a.binds.len() > pods / 4, "{nodes}/{pods}: only {} binds", a.binds.len());
    let b = run_cycle(&c, &plain, &opts);
    assert_eq!(a, b, "{nodes} nodes {pods} pods seed {seed}: class path and plain scan differ");
    assert_eq!(a, run_cycle(&c, &fast, &opts), "{nodes} nodes {pods} pods seed {seed}: a second run differs");
    assert_within(&c, &a, &limits);
}

#[test]
fn topology_clusters_decide_the_same_on_the_fast_path_and_the_plain_scan() {
    let conf = SchedulerConf::parse(CONF).expect("conf parses").0;
    compare(&conf, 96, 400, 21);
    // Scarce: hard gangs that fit no leaf any more stay pending, the rest fill the spines.
    compare(&conf, 64, 1400, 22);
}

#[test]
fn plain_pods_on_the_class_path_between_topology_gangs_decide_as_the_plain_scan() {
    let text = CONF.replace(
        "  - name: network-topology-aware\n",
        "  - name: network-topology-aware\n    arguments:\n      hypernode.binpack.normal-pod.enable: false\n",
    );
    let conf = SchedulerConf::parse(&text).expect("conf parses").0;
    compare(&conf, 96, 400, 23);
    compare(&conf, 64, 1400, 24);
}

#[test]
fn without_hyper_node_order_the_first_solution_is_the_one_the_full_search_takes() {
    // Volcano's built-in conf has no network-topology-aware: every HyperNode scores 0, the
    // fast path stops at the first HyperNode that holds the gang and skips those that cannot,
    // the plain path dry-runs every one.
    let text = CONF.replace("  - name: network-topology-aware\n", "");
    let conf = SchedulerConf::parse(&text).expect("conf parses").0;
    compare(&conf, 96, 400, 25);
    compare(&conf, 64, 1400, 26);
    compare(&conf, 128, 900, 27);
}
