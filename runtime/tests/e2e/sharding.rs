//! Node sharding live (issue 29): `basalt scheduler --scheduler-sharding-mode hard|soft
//! --scheduler-sharding-name <NodeShard>` against the real apiserver, on the shared server
//! (each test has its own node pool, namespace, scheduler names and NodeShard names):
//! * hard: every bind stays in the shard, the others wait with Volcano's predicate message, the
//!   scheduler writes the shard's status, and a NodeShard change takes effect in the next cycle;
//! * soft: the shard is preferred while it has room (the empty nodes outside it would score
//!   higher), and pods spill over once it is full;
//! * two schedulers with disjoint shards and different scheduler names run side by side, each
//!   binding only its own pods, only onto its own shard.

use crate::e2e::rig::{Rig, Server};
use crate::e2e::{node_of, pod_scheduled, pods};
use crate::support::{self, create_pod_group, create_pods, pod_group, wait_for, TestApiserver, TestPod};
use basalt_runtime::crd::{NodeShard, NodeShardSpec};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

async fn rig(name: &str) -> support::Result<Rig> {
    // Four nodes `{name}-0..3` of 2 CPUs.
    Rig::new(Server::Shared(TestApiserver::shared()?), name, 4, "2").await
}

/// Creates (or replaces the spec of) NodeShard `name` with `nodes` desired.
async fn set_shard(admin: &Client, name: &str, nodes: &[String]) -> support::Result<()> {
    let api: Api<NodeShard> = Api::all(admin.clone());
    if api.get_opt(name).await?.is_some() {
        let patch = serde_json::json!({"spec": {"nodesDesired": nodes}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await?;
    } else {
        let mut s = NodeShard::new(name, NodeShardSpec { nodes_desired: nodes.to_vec() });
        s.metadata.name = Some(name.to_string());
        api.create(&PostParams::default(), &s).await?;
    }
    Ok(())
}

/// `count` single-pod PodGroups `{prefix}-{i}` in `ns` for scheduler `scheduler`, each pod
/// asking one CPU. Returns the pod names.
async fn one_cpu_pods(admin: &Client, ns: &str, scheduler: &str, prefix: &str, count: usize) -> support::Result<Vec<String>> {
    let mut list = Vec::new();
    for i in 0..count {
        let group = format!("{prefix}-{i}");
        create_pod_group(admin, &pod_group(ns, &group, 1, None)).await?;
        list.push(
            TestPod::new(ns, &format!("{group}-0"))
                .scheduler(scheduler)
                .group(&group)
                .requests(&[("cpu", "1"), ("memory", "64Mi")])
                .build(),
        );
    }
    create_pods(admin, &list).await?;
    Ok(list.iter().map(|p| p.name_any()).collect())
}

/// Node of each bound pod of `names` in `ns`.
async fn placement(admin: &Client, ns: &str, names: &[String]) -> support::Result<BTreeMap<String, String>> {
    let all = pods(admin, ns).await?;
    Ok(names
        .iter()
        .filter_map(|n| all.get(n).map(|p| (n.clone(), node_of(p).to_string())).filter(|(_, node)| !node.is_empty()))
        .collect())
}

fn nodes(rig: &Rig, idx: &[usize]) -> Vec<String> {
    idx.iter().map(|i| format!("{}-{i}", rig.name)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_sharding_keeps_binds_in_the_shard_and_follows_a_change() -> support::Result<()> {
    let mut rig = rig("shard-hard").await?;
    let shard = format!("{}-s", rig.name);
    set_shard(&rig.admin, &shard, &nodes(&rig, &[0, 1])).await?;
    let mode = "--scheduler-sharding-mode=hard".to_string();
    let name = format!("--scheduler-sharding-name={shard}");
    rig.start_single(&[mode.as_str(), name.as_str()])?;
    // Six one-CPU pods, four CPUs in the shard: four bind there, two wait.
    let names = one_cpu_pods(&rig.admin, &rig.ns, &rig.scheduler_name(), "a", 6).await?;
    let in_shard = nodes(&rig, &[0, 1]);
    let (admin, ns) = (rig.admin.clone(), rig.ns.clone());
    wait_for("4 pods bound and 2 with Volcano's shard message", Duration::from_secs(30), || async {
        let all = pods(&admin, &ns).await?;
        let bound = names.iter().filter(|n| all.get(*n).is_some_and(|p| !node_of(p).is_empty())).count();
        let told = names
            .iter()
            .filter_map(|n| all.get(n).and_then(pod_scheduled))
            .filter(|(_, _, m)| m.contains("2 node isn't in scheduler node shard"))
            .count();
        Ok((bound == 4 && told == 2).then_some(()))
    })
    .await
    .map_err(|e| format!("{e}\n{}", rig.log_tails(20)))?;
    // A few more cycles change nothing: the two stay pending, every bind is in the shard.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let placed = placement(&rig.admin, &rig.ns, &names).await?;
    assert_eq!(placed.len(), 4, "{placed:?}");
    assert!(placed.values().all(|n| in_shard.contains(n)), "a bind left the shard: {placed:?}");
    // The scheduler wrote its NodeShard's status (Volcano UpdateNodeShardStatus).
    let api: Api<NodeShard> = Api::all(rig.admin.clone());
    let status = api.get(&shard).await?.status.unwrap_or_default();
    assert_eq!(status.nodes_in_use.unwrap_or_default(), in_shard);
    // The shard grows by one node: the next cycle (1 s period) binds the two pending pods there.
    let t0 = Instant::now();
    set_shard(&rig.admin, &shard, &nodes(&rig, &[0, 1, 2])).await?;
    rig.wait_bound(&names, Duration::from_secs(10)).await?;
    let took = t0.elapsed();
    eprintln!("shard-hard: the NodeShard change took effect after {:.1} s", took.as_secs_f64());
    assert!(took < Duration::from_secs(5), "the change took {took:?}, more than a cycle and the watch");
    let placed = placement(&rig.admin, &rig.ns, &names).await?;
    let third = format!("{}-2", rig.name);
    assert_eq!(placed.values().filter(|n| **n == third).count(), 2, "{placed:?}");
    assert!(!placed.values().any(|n| *n == format!("{}-3", rig.name)), "{placed:?}");
    rig.assert_bound_once(&names).await?;
    rig.assert_running();
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soft_sharding_prefers_the_shard_and_spills_over_when_full() -> support::Result<()> {
    let mut rig = rig("shard-soft").await?;
    let shard = format!("{}-s", rig.name);
    set_shard(&rig.admin, &shard, &nodes(&rig, &[0])).await?;
    let name = format!("--scheduler-sharding-name={shard}");
    rig.start_single(&["--scheduler-sharding-mode=soft", name.as_str()])?;
    // Two pods: both on the shard's node, although the three empty nodes outside it score
    // higher (least requested) and would take them without sharding.
    let first = one_cpu_pods(&rig.admin, &rig.ns, &rig.scheduler_name(), "a", 2).await?;
    rig.wait_bound(&first, Duration::from_secs(30)).await?;
    let placed = placement(&rig.admin, &rig.ns, &first).await?;
    let shard_node = format!("{}-0", rig.name);
    assert!(placed.values().all(|n| *n == shard_node), "soft sharding did not prefer the shard: {placed:?}");
    // The shard is full: three more pods spill over to the other nodes.
    let more = one_cpu_pods(&rig.admin, &rig.ns, &rig.scheduler_name(), "b", 3).await?;
    rig.wait_bound(&more, Duration::from_secs(30)).await?;
    let placed = placement(&rig.admin, &rig.ns, &more).await?;
    assert!(placed.values().all(|n| *n != shard_node), "{placed:?}");
    rig.assert_fit().await?;
    rig.assert_running();
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_schedulers_with_disjoint_shards_run_side_by_side() -> support::Result<()> {
    let mut rig = rig("shard-two").await?;
    let (a, b) = (format!("{}-a", rig.name), format!("{}-b", rig.name));
    set_shard(&rig.admin, &a, &nodes(&rig, &[0, 1])).await?;
    set_shard(&rig.admin, &b, &nodes(&rig, &[2, 3])).await?;
    // Scheduler A is the rig's (scheduler name `fault-shard-two`); B has its own name.
    let name_a = format!("--scheduler-sharding-name={a}");
    rig.start_single(&["--scheduler-sharding-mode=hard", name_a.as_str()])?;
    let b_scheduler = format!("{}-b", rig.scheduler_name());
    let kubeconfig = rig.server.dir().join(format!("{}-b.kubeconfig", rig.name));
    rig.proxy.write_kubeconfig(&rig.server.scheduler_kubeconfig(), &kubeconfig)?;
    let selector = format!("--node-selector={}:{}", crate::e2e::rig::POOL_LABEL, rig.name);
    let (sched_b, name_b) = (format!("--scheduler-name={b_scheduler}"), format!("--scheduler-sharding-name={b}"));
    let args = [
        "--schedule-period=1s",
        "--leader-elect=false",
        selector.as_str(),
        sched_b.as_str(),
        "--scheduler-sharding-mode=hard",
        name_b.as_str(),
    ];
    let p = crate::e2e::process::SchedulerProcess::start(rig.server.dir(), &format!("{}-b", rig.name), &kubeconfig, &args)?;
    rig.schedulers.push(p);
    let pods_a = one_cpu_pods(&rig.admin, &rig.ns, &rig.scheduler_name(), "a", 4).await?;
    let pods_b = one_cpu_pods(&rig.admin, &rig.ns, &b_scheduler, "b", 4).await?;
    let all: Vec<String> = pods_a.iter().chain(&pods_b).cloned().collect();
    rig.wait_bound(&all, Duration::from_secs(30)).await?;
    let (in_a, in_b) = (nodes(&rig, &[0, 1]), nodes(&rig, &[2, 3]));
    let placed = placement(&rig.admin, &rig.ns, &all).await?;
    for p in &pods_a {
        assert!(in_a.contains(&placed[p]), "{p} of scheduler A on {}", placed[p]);
    }
    for p in &pods_b {
        assert!(in_b.contains(&placed[p]), "{p} of scheduler B on {}", placed[p]);
    }
    rig.assert_bound_once(&all).await?;
    rig.assert_fit().await?;
    rig.assert_running();
    Ok(())
}
