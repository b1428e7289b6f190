//! Node sharding in the core (Volcano `--scheduler-sharding-mode hard|soft` with a NodeShard):
//! hard keeps every bind in the shard and names the other nodes in the fit errors, soft prefers
//! the shard and spills over when it is full, a NodeShard change applies to the next cycle,
//! another shard's `nodesInUse` is left alone, and the class cache decides as the plain scan.

use basalt_core::model::{NodeShardSpec, NodeSpec, PodGroupPhase, PodGroupSpec, PodPhase, PodSpec, QueueSpec, ShardingMode};
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta, SchedulerConf};
use std::collections::BTreeMap;

fn res(cpu: i64, pods: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), pods << 30), ("pods".to_string(), pods)].into_iter().collect()
}

/// Nodes `n1..=n4` (2 CPUs each), a queue, and `pods` one-CPU single-pod jobs.
fn cluster(pods: usize) -> Cluster {
    let mut c = Cluster::new();
    c.apply(Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() })).unwrap();
    for i in 1..=4 {
        let alloc = res(2000, 110);
        c.apply(Delta::Node(NodeSpec {
            name: format!("n{i}"),
            capacity: alloc.clone(),
            allocatable: alloc,
            ready: true,
            ..Default::default()
        }))
        .unwrap();
    }
    for i in 0..pods {
        let name = format!("job{i:02}");
        c.apply(Delta::PodGroup(PodGroupSpec {
            namespace: "ns".into(),
            name: name.clone(),
            uid: format!("ns/{name}"),
            min_member: 1,
            queue: "default".into(),
            phase: PodGroupPhase::Inqueue,
            ..Default::default()
        }))
        .unwrap();
        c.apply(Delta::Pod(PodSpec {
            namespace: "ns".into(),
            name: format!("{name}-0"),
            uid: format!("ns/{name}-0"),
            group: Some(name),
            scheduler_name: "volcano".into(),
            phase: PodPhase::Pending,
            resreq: res(1000, 1),
            nonzero_cpu_milli: 1000,
            nonzero_memory_bytes: 1 << 30,
            ..Default::default()
        }))
        .unwrap();
    }
    c
}

fn shard(name: &str, desired: &[&str], in_use: &[&str]) -> Delta {
    Delta::NodeShard(NodeShardSpec {
        name: name.into(),
        nodes_desired: desired.iter().map(|s| s.to_string()).collect(),
        nodes_in_use: in_use.iter().map(|s| s.to_string()).collect(),
    })
}

fn conf(mode: ShardingMode, class_cache: bool) -> SchedulerConf {
    let (mut c, _) = SchedulerConf::parse("").unwrap();
    c.options.sharding_mode = mode;
    c.options.sharding_name = "s1".into();
    c.options.class_cache = class_cache;
    c
}

/// Node name → pods bound there this cycle; and the pending pods' messages.
fn run(c: &Cluster, conf: &SchedulerConf) -> (BTreeMap<String, usize>, Vec<String>) {
    let d = run_cycle(c, conf, &CycleOptions { seed: 7, cycle: 1, now_ms: 0 });
    let mut by_node = BTreeMap::new();
    for b in &d.binds {
        *by_node.entry(c.node(b.node).unwrap().spec.name.clone()).or_insert(0) += 1;
    }
    (by_node, d.unschedulable.iter().map(|u| u.message.clone()).collect())
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(n, k)| (n.to_string(), *k)).collect()
}

#[test]
fn hard_sharding_binds_only_in_the_shard_and_names_the_other_nodes() {
    for class_cache in [false, true] {
        let mut c = cluster(6);
        c.apply(shard("s1", &["n1", "n2"], &[])).unwrap();
        let (binds, pending) = run(&c, &conf(ShardingMode::Hard, class_cache));
        assert_eq!(binds, counts(&[("n1", 2), ("n2", 2)]), "class cache {class_cache}");
        assert_eq!(pending.len(), 2);
        assert!(
            pending.iter().all(|m| m == "0/4 nodes are unavailable: 2 Insufficient cpu, 2 node isn't in scheduler node shard."),
            "{pending:?}"
        );
    }
}

#[test]
fn without_sharding_the_same_cluster_uses_every_node() {
    let mut c = cluster(6);
    c.apply(shard("s1", &["n1", "n2"], &[])).unwrap();
    let (binds, pending) = run(&c, &conf(ShardingMode::None, true));
    assert_eq!(binds.values().sum::<usize>(), 6);
    assert!(binds.keys().any(|n| n == "n3" || n == "n4"), "{binds:?}");
    assert!(pending.is_empty());
}

#[test]
fn soft_sharding_fills_the_shard_first_then_spills_over() {
    for class_cache in [false, true] {
        // Four pods fit the shard (2 CPUs on each of n1, n2): all go there although the
        // empty n3 and n4 score higher under least-requested.
        let mut c = cluster(4);
        c.apply(shard("s1", &["n1", "n2"], &[])).unwrap();
        let (binds, _) = run(&c, &conf(ShardingMode::Soft, class_cache));
        assert_eq!(binds, counts(&[("n1", 2), ("n2", 2)]), "class cache {class_cache}");
        // Seven pods: the shard is full after four, three spill over to n3 and n4.
        let mut c = cluster(7);
        c.apply(shard("s1", &["n1", "n2"], &[])).unwrap();
        let (binds, pending) = run(&c, &conf(ShardingMode::Soft, class_cache));
        assert_eq!((binds["n1"], binds["n2"]), (2, 2), "class cache {class_cache}: {binds:?}");
        assert_eq!(binds.get("n3").unwrap_or(&0) + binds.get("n4").unwrap_or(&0), 3);
        assert!(pending.is_empty());
    }
}

#[test]
fn a_node_shard_change_applies_to_the_next_cycle() {
    let mut c = cluster(2);
    c.apply(shard("s1", &["n1"], &[])).unwrap();
    let hard = conf(ShardingMode::Hard, true);
    assert_eq!(run(&c, &hard).0, counts(&[("n1", 2)]));
    c.apply(shard("s1", &["n4"], &[])).unwrap();
    assert_eq!(run(&c, &hard).0, counts(&[("n4", 2)]));
    // Deleted: no node is in the shard.
    c.apply(Delta::NodeShardDeleted("s1".into())).unwrap();
    let (binds, pending) = run(&c, &hard);
    assert!(binds.is_empty() && pending.len() == 2, "{binds:?}");
    assert_eq!(
        c.shard_problems("s1"),
        ["NodeShard s1: not found (--scheduler-sharding-name s1): no node is in this scheduler's shard"]
    );
}

#[test]
fn nodes_another_shard_still_uses_are_left_alone() {
    let mut c = cluster(4);
    // n2 is desired by s1 but still in use by s2 (its scheduler has not given it up yet).
    c.apply(shard("s1", &["n1", "n2"], &[])).unwrap();
    c.apply(shard("s2", &["n3"], &["n2", "n3"])).unwrap();
    let (binds, pending) = run(&c, &conf(ShardingMode::Hard, true));
    assert_eq!(binds, counts(&[("n1", 2)]));
    assert_eq!(pending.len(), 2);
    // s2 releases n2: the next cycle uses it.
    c.apply(shard("s2", &["n3"], &["n3"])).unwrap();
    assert_eq!(run(&c, &conf(ShardingMode::Hard, true)).0, counts(&[("n1", 2), ("n2", 2)]));
}

#[test]
fn an_unknown_node_in_a_shard_is_named_and_ignored() {
    let mut c = cluster(2);
    c.apply(shard("s1", &["n1", "n9"], &[])).unwrap();
    assert_eq!(c.shard_problems("s1"), ["NodeShard s1: field spec.nodesDesired: unknown node(s) n9, ignored"]);
    assert_eq!(run(&c, &conf(ShardingMode::Hard, true)).0, counts(&[("n1", 2)]));
    // The node appears: it joins the shard in the next cycle.
    let alloc = res(2000, 110);
    c.apply(Delta::Node(NodeSpec {
        name: "n9".into(),
        capacity: alloc.clone(),
        allocatable: alloc,
        ready: true,
        ..Default::default()
    }))
    .unwrap();
    assert!(c.shard_problems("s1").is_empty());
    let bits = c.shard_bits("s1");
    assert!(bits.found && bits.by_slot[c.node_id("n9").unwrap().0 as usize]);
    let e = c.apply(shard("bad", &["n1", ""], &[])).unwrap_err();
    assert_eq!(e.to_string(), "NodeShard bad: field spec.nodesDesired: entry 1 is an empty node name");
}
