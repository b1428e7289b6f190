//! Network-topology-aware scheduling on the real apiserver (issue 23, the live half): HyperNodes
//! (`deploy/crds/topology.volcano.sh_hypernodes.yaml`), nodes and gangs with
//! `networkTopology: {mode: hard, highestTierAllowed: 1}` created through the API; `basalt
//! scheduler` with `deploy/`'s RBAC watches the HyperNodes and binds every gang inside one leaf
//! HyperNode; a HyperNode added while it runs is used at the next cycle; an invalid tree is
//! logged naming object and field while the scheduler keeps running and binding plain pods.
//!
//! The test has a server of its own: HyperNodes are cluster-scoped, and an invalid tree would be
//! seen (and logged) by every scheduler on a shared server.

use crate::{e2e, support};

use basalt_runtime::crd::HyperNode;
use e2e::rig::{Rig, Server, POOL_LABEL};
use e2e::{node_of, pod_scheduled, pods};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use support::{create_node, create_pod_group, create_pods, pod_group, wait_for, TestApiserver, TestNode, TestPod};

/// Nodes per leaf HyperNode and per-node cpu: a gang of [`GANG`] pods of [`POD_CPU`] fills one
/// leaf exactly.
const LEAF_NODES: usize = 4;
const NODE_CPU: &str = "4";
const GANG: usize = 8;
const POD_CPU: &str = "2";

fn node_member(name: &str) -> serde_json::Value {
    serde_json::json!({"type": "Node", "selector": {"exactMatch": {"name": name}}})
}

fn hyper_node(name: &str, tier: i32, tier_name: &str, members: Vec<serde_json::Value>) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {"tier": tier, "tierName": tier_name, "members": members},
    })
}

fn hyper_members(names: &[&str]) -> Vec<serde_json::Value> {
    names.iter().map(|n| serde_json::json!({"type": "HyperNode", "selector": {"exactMatch": {"name": n}}})).collect()
}

async fn create_hyper_node(api: &Api<HyperNode>, v: serde_json::Value) -> support::Result<()> {
    let h: HyperNode = serde_json::from_value(v)?;
    api.create(&PostParams::default(), &h).await.map_err(|e| format!("creating HyperNode {}: {e}", h.name_any()))?;
    Ok(())
}

async fn set_members(api: &Api<HyperNode>, name: &str, members: Vec<serde_json::Value>) -> support::Result<()> {
    let body = serde_json::json!({"spec": {"members": members}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .map_err(|e| format!("setting the members of HyperNode {name}: {e}"))?;
    Ok(())
}

/// A gang `name` of `size` pods asking `cpu` each (minMember = size), with a hard network
/// topology limited to tier `tier` when given. Returns the pod names.
async fn gang(rig: &Rig, name: &str, size: usize, cpu: &str, tier: Option<i32>) -> support::Result<Vec<String>> {
    let mut pg = pod_group(&rig.ns, name, size as i32, None);
    pg.spec.network_topology = tier.map(|t| serde_json::json!({"mode": "hard", "highestTierAllowed": t}));
    create_pod_group(&rig.admin, &pg).await?;
    let pods: Vec<_> = (0..size)
        .map(|i| {
            TestPod::new(&rig.ns, &format!("{name}-{i}"))
                .scheduler(&rig.scheduler_name())
                .group(name)
                .requests(&[("cpu", cpu), ("memory", "64Mi")])
                .build()
        })
        .collect();
    create_pods(&rig.admin, &pods).await?;
    Ok(pods.iter().map(|p| p.name_any()).collect())
}

/// The nodes `names` are bound to (unbound pods left out).
async fn nodes_of(rig: &Rig, names: &[String]) -> support::Result<BTreeSet<String>> {
    let all = pods(&rig.admin, &rig.ns).await?;
    Ok(names.iter().filter_map(|n| all.get(n)).map(|p| node_of(p).to_string()).filter(|n| !n.is_empty()).collect())
}

/// A node of `rig`'s pool like the rig's own (cpu [`NODE_CPU`], 64Gi, 110 pods).
fn pool_node(rig: &Rig, name: &str) -> TestNode {
    TestNode::new(name)
        .allocatable("cpu", NODE_CPU)
        .allocatable("memory", "64Gi")
        .allocatable("pods", "110")
        .label(POOL_LABEL, &rig.name)
}

/// Waits until every pod of `names` has `PodScheduled=False` (a cycle looked at it and left it
/// pending). Errors: not within 30 s (with the log tails).
async fn wait_unschedulable(rig: &Rig, names: &[String]) -> support::Result<()> {
    let r = wait_for(&format!("{names:?} PodScheduled=False"), Duration::from_secs(30), || async {
        let all = pods(&rig.admin, &rig.ns).await?;
        let done = names.iter().all(|n| all.get(n).and_then(pod_scheduled).is_some_and(|(status, _, _)| status == "False"));
        Ok(done.then_some(()))
    })
    .await;
    r.map_err(|e| format!("{e}\n{}", rig.log_tails(30)).into())
}

/// Waits until a scheduler log holds `needle`. Errors: not within `timeout` (with the log tails).
async fn wait_logged(rig: &Rig, needle: &str, timeout: Duration) -> support::Result<()> {
    let found = wait_for(&format!("{needle:?} in the scheduler log"), timeout, || async {
        Ok(rig.schedulers.iter().any(|p| p.log_text().contains(needle)).then_some(()))
    })
    .await;
    found.map_err(|e| format!("{e}\n{}", rig.log_tails(30)).into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_topology_gangs_stay_in_one_leaf_and_follow_the_live_tree() -> support::Result<()> {
    // 16 nodes topology-0..15, four leaves of 4 (tier 1, members by exact name and by regex),
    // one spine over them (tier 2).
    let mut rig = Rig::new(Server::Own(TestApiserver::start()?), "topology", 4 * LEAF_NODES, NODE_CPU).await?;
    let api: Api<HyperNode> = Api::all(rig.admin.clone());
    let node = |i: usize| format!("topology-{i}");
    let mut leaf_of: BTreeMap<String, String> = BTreeMap::new();
    for l in 0..4 {
        let names: Vec<String> = (l * LEAF_NODES..(l + 1) * LEAF_NODES).map(node).collect();
        let members = if l == 2 {
            let pattern = format!(
                "^topology-({})$",
                (l * LEAF_NODES..(l + 1) * LEAF_NODES).map(|i| i.to_string()).collect::<Vec<_>>().join("|")
            );
            vec![serde_json::json!({"type": "Node", "selector": {"regexMatch": {"pattern": pattern}}})]
        } else {
            names.iter().map(|n| node_member(n)).collect()
        };
        create_hyper_node(&api, hyper_node(&format!("leaf-{l}"), 1, "leaf", members)).await?;
        leaf_of.extend(names.into_iter().map(|n| (n, format!("leaf-{l}"))));
    }
    create_hyper_node(&api, hyper_node("spine", 2, "spine", hyper_members(&["leaf-0", "leaf-1", "leaf-2", "leaf-3"]))).await?;
    rig.start_single(&[])?;

    // Four gangs, each fitting exactly one leaf: each is bound inside one leaf, all four leaves used.
    let mut gangs = Vec::new();
    for g in 0..4 {
        gangs.push(gang(&rig, &format!("train-{g}"), GANG, POD_CPU, Some(1)).await?);
    }
    let all: Vec<String> = gangs.iter().flatten().cloned().collect();
    rig.wait_bound(&all, Duration::from_secs(90)).await?;
    let mut used = BTreeSet::new();
    for (g, names) in gangs.iter().enumerate() {
        let leaves: BTreeSet<String> = nodes_of(&rig, names).await?.iter().map(|n| leaf_of[n].clone()).collect();
        assert_eq!(leaves.len(), 1, "gang train-{g} spread over {leaves:?}\n{}", rig.log_tails(20));
        used.extend(leaves);
    }
    assert_eq!(used.len(), 4, "the four gangs fill the four leaves: {used:?}");
    rig.assert_bound_once(&all).await?;
    rig.assert_fit().await?;

    // Four more nodes under no HyperNode: a hard tier-1 gang that fits only there stays pending
    // (a topology-blind scheduler would bind it at once)...
    for i in 16..20 {
        create_node(&rig.admin, &pool_node(&rig, &node(i))).await?;
    }
    let late = gang(&rig, "late", GANG, POD_CPU, Some(1)).await?;
    wait_unschedulable(&rig, &late).await?;
    assert_eq!(rig.bound(&late).await?, 0, "no leaf holds the free nodes yet: the hard gang waits\n{}", rig.log_tails(20));
    // ...until a leaf HyperNode over them is added while the scheduler runs: the next cycle
    // binds the gang inside it.
    let leaf4 = |last: usize| (16..=last).map(|i| node_member(&node(i))).collect::<Vec<_>>();
    create_hyper_node(&api, hyper_node("leaf-4", 1, "leaf", leaf4(19))).await?;
    set_members(&api, "spine", hyper_members(&["leaf-0", "leaf-1", "leaf-2", "leaf-3", "leaf-4"])).await?;
    rig.wait_bound(&late, Duration::from_secs(60)).await?;
    let in_leaf4: BTreeSet<String> = (16..20).map(node).collect();
    let late_nodes = nodes_of(&rig, &late).await?;
    assert!(late_nodes.is_subset(&in_leaf4), "gang late outside leaf-4: {late_nodes:?}");

    // A leaf's members changed while it runs: node topology-20 joins leaf-4, and the next hard
    // gang, which fits only there, binds on it.
    create_node(&rig.admin, &pool_node(&rig, &node(20))).await?;
    let grown = gang(&rig, "grown", 1, "1", Some(1)).await?;
    wait_unschedulable(&rig, &grown).await?;
    assert_eq!(rig.bound(&grown).await?, 0, "topology-20 is under no leaf yet");
    set_members(&api, "leaf-4", leaf4(20)).await?;
    rig.wait_bound(&grown, Duration::from_secs(60)).await?;
    assert_eq!(nodes_of(&rig, &grown).await?, BTreeSet::from([node(20)]));

    // An invalid tree: a cycle (leaf-0 claims the spine, its own parent), then a second parent
    // (spine-b claims leaf-1, which the spine holds). Each problem is logged naming the object
    // and the field; the scheduler keeps running; plain pods still bind while a hard gang that
    // would fit in leaf-4 waits, as in Volcano.
    let leaf0: Vec<_> = (0..LEAF_NODES).map(|i| node_member(&node(i))).collect();
    let mut cyclic = hyper_members(&["spine"]);
    cyclic.extend(leaf0.iter().cloned());
    set_members(&api, "leaf-0", cyclic).await?;
    let cycle =
        |name: &str| format!("network topology: HyperNode {name}: field spec.members: its members form a cycle back to it");
    wait_logged(&rig, &cycle("leaf-0"), Duration::from_secs(30)).await?;
    wait_logged(&rig, &cycle("spine"), Duration::from_secs(5)).await?;
    create_hyper_node(&api, hyper_node("spine-b", 2, "spine", hyper_members(&["leaf-1"]))).await?;
    let second = "network topology: HyperNode spine-b: field spec.members[0].selector.exactMatch.name: HyperNode \"leaf-1\" already has parent \"spine\"";
    wait_logged(&rig, second, Duration::from_secs(30)).await?;
    let waiting = gang(&rig, "waiting", 1, "1", Some(1)).await?;
    let plain = gang(&rig, "plain", 2, "1", None).await?;
    rig.wait_bound(&plain, Duration::from_secs(60)).await?;
    wait_unschedulable(&rig, &waiting).await?;
    rig.assert_running();
    assert_eq!(rig.bound(&waiting).await?, 0, "a hard topology gang waits while the tree is invalid");
    // Logged once per problem, not once per cycle (nodes and PodGroups changed since).
    let log = rig.schedulers[0].log_text();
    for needle in [cycle("leaf-0"), cycle("spine"), second.to_string()] {
        assert_eq!(log.matches(needle.as_str()).count(), 1, "{needle:?}\n{}", rig.log_tails(30));
    }
    // Repaired: the waiting gang binds inside leaf-4, the one leaf with room.
    set_members(&api, "leaf-0", leaf0).await?;
    api.delete("spine-b", &Default::default()).await?;
    wait_logged(&rig, "network topology: the HyperNode tree and topology PodGroups are valid again", Duration::from_secs(30))
        .await?;
    rig.wait_bound(&waiting, Duration::from_secs(60)).await?;
    assert_eq!(nodes_of(&rig, &waiting).await?, BTreeSet::from([node(20)]));
    rig.assert_running();
    for names in [&late, &grown, &plain, &waiting] {
        rig.assert_bound_once(names).await?;
    }
    rig.assert_fit().await?;
    Ok(())
}
