//! A hard-topology gang that fits no HyperNode of its tier stays pending, and says why: its
//! PodGroup condition carries Volcano's `In hyperNode <name>: …` fit errors of the last
//! HyperNode tried (Volcano `FitErrors.SetHyperNode`), and the cycle's decisions carry Basalt's
//! explain note ([`basalt_core::decision::TopologySearch`]): the tiers searched, how many
//! HyperNodes in each, and why nothing fitted.

use basalt_core::decision::TopologySearch;
use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta, SchedulerConf};

/// `cpu` millicores, `gib` GiB of memory, `pods` pods.
fn res(cpu: i64, gib: i64, pods: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), gib << 30), ("pods".to_string(), pods)].into_iter().collect()
}

fn pod(name: &str, group: &str, cpu: i64, node: &str) -> PodSpec {
    PodSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("u-{name}"),
        group: Some(group.into()),
        scheduler_name: "volcano".into(),
        resreq: res(cpu, 1, 1),
        node_name: node.into(),
        phase: if node.is_empty() { PodPhase::Pending } else { PodPhase::Running },
        ..Default::default()
    }
}

fn group(name: &str, phase: PodGroupPhase, tier: Option<i32>) -> PodGroupSpec {
    PodGroupSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        min_member: 1,
        queue: "default".into(),
        phase,
        network_topology: tier.map(|t| NetworkTopologySpec {
            mode: TopologyMode::Hard,
            highest_tier_allowed: Some(t),
            highest_tier_name: String::new(),
        }),
        ..Default::default()
    }
}

fn exact(kind: MemberType, name: &str) -> HyperNodeMember {
    HyperNodeMember { kind, selector: MemberSelector::Exact(name.into()) }
}

/// Two leaves of two 4-cpu nodes under a spine; every node runs a 2-cpu filler pod, so each
/// leaf has 4 idle cpus, but no node 3.
fn cluster(big_cpu: i64) -> Cluster {
    let mut c = Cluster::new();
    c.apply(Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() })).unwrap();
    c.apply(Delta::PodGroup(group("filler", PodGroupPhase::Running, None))).unwrap();
    for l in 0..2 {
        for n in 0..2 {
            let name = format!("l{l}-n{n}");
            c.apply(Delta::Node(NodeSpec {
                name: name.clone(),
                allocatable: res(4000, 8, 10),
                ready: true,
                ..Default::default()
            }))
            .unwrap();
            c.apply(Delta::Pod(pod(&format!("filler-{l}{n}"), "filler", 2000, &name))).unwrap();
        }
        let members = (0..2).map(|n| exact(MemberType::Node, &format!("l{l}-n{n}"))).collect();
        c.apply(Delta::HyperNode(HyperNodeSpec { name: format!("leaf{l}"), tier: 1, tier_name: String::new(), members }))
            .unwrap();
    }
    let members = vec![exact(MemberType::HyperNode, "leaf0"), exact(MemberType::HyperNode, "leaf1")];
    c.apply(Delta::HyperNode(HyperNodeSpec { name: "spine".into(), tier: 2, tier_name: String::new(), members })).unwrap();
    c.apply(Delta::PodGroup(group("big", PodGroupPhase::Inqueue, Some(1)))).unwrap();
    c.apply(Delta::Pod(pod("big-0", "big", big_cpu, ""))).unwrap();
    c
}

fn conf() -> SchedulerConf {
    let text = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  \
                - name: predicates\n  - name: nodeorder\n  - name: network-topology-aware\n";
    SchedulerConf::parse(text).expect("conf parses").0
}

#[test]
fn a_gang_no_node_of_any_leaf_holds_names_the_hyper_node_and_the_tier_searched() {
    let c = cluster(3000);
    let d = run_cycle(&c, &conf(), &CycleOptions::default());
    assert!(d.binds.is_empty(), "a 3-cpu pod fits no node: {:?}", d.binds);
    let big = d.pod_groups.iter().find(|g| c.pod_group(g.group).is_some_and(|r| r.spec.name == "big")).expect("big's status");
    let cond = big.conditions.iter().find(|x| x.kind == "Unschedulable").expect("an Unschedulable condition");
    assert_eq!(
        cond.message,
        "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: 1 Unschedulable. \
         Origin reason is big-0: In hyperNode leaf1: 0/2 nodes are unavailable: 2 Insufficient cpu."
    );
    let notes: &[TopologySearch] = &d.topology_searches;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].group, big.group);
    assert_eq!(notes[0].highest_tier, Some(1));
    assert_eq!(notes[0].tiers, [(1, 2)], "both leaves of tier 1 were tried, the spine (tier 2) never");
    let tried: Vec<(&str, i32, &str)> = notes[0].tried.iter().map(|t| (t.hyper_node.as_str(), t.tier, t.why.as_str())).collect();
    let full = "its nodes' idle and future idle resources have room for 0 of the 1 tasks the gang still needs";
    assert_eq!(tried, [("leaf0", 1, full), ("leaf1", 1, full)], "each leaf tried, with why it did not hold the gang");
    assert_eq!(
        notes[0].reason,
        "no HyperNode of tier 1 holds the gang ready or pipelined; big-0: In hyperNode leaf1: 0/2 nodes are unavailable: \
         2 Insufficient cpu."
    );
}

#[test]
fn a_gang_no_leaf_has_the_resources_for_is_noted_without_a_hyper_node_tried() {
    // 5 cpus: more than a leaf's 4 idle ones, so no leaf is eligible for the sub-job at all.
    let c = cluster(5000);
    let d = run_cycle(&c, &conf(), &CycleOptions::default());
    assert!(d.binds.is_empty());
    assert_eq!(d.topology_searches.len(), 1, "{:?}", d.topology_searches);
    let note = &d.topology_searches[0];
    assert_eq!(note.tiers, [(1, 2)]);
    assert!(note.reason.ends_with("none has the idle or future idle resources its sub-jobs' Pending tasks request"), "{note:?}");
}

#[test]
fn a_placed_gang_leaves_no_note() {
    let c = cluster(2000);
    let d = run_cycle(&c, &conf(), &CycleOptions::default());
    assert_eq!(d.binds.len(), 1);
    assert!(d.topology_searches.is_empty(), "{:?}", d.topology_searches);
}
