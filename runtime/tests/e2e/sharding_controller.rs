//! The sharding controller live (issue 29): `basalt controller --controllers=sharding-controller`
//! with the ServiceAccount and ClusterRole of `deploy/controller.yaml` and its configuration in
//! the sharding ConfigMap `volcano-system/volcano-sharding-configmap`, on a server of its own
//! (the controller assigns every node of the cluster and deletes NodeShards of schedulers it is
//! not configured for, so it cannot share a server with `e2e/sharding.rs`):
//! * it creates one NodeShard per configured scheduler, their `spec.nodesDesired` disjoint;
//! * `basalt scheduler --scheduler-sharding-mode=hard` on one of them binds only there;
//! * a node added to the cluster is assigned at once (the node event, not the 60 s period);
//! * an invalid ConfigMap is refused with the field named and the shards kept; a valid change is
//!   written, and the hard scheduler binds its waiting pods on the node its shard gained;
//! * every request of the controller was within its ClusterRole, and it exits 0 on SIGTERM.

use crate::e2e::process::SchedulerProcess;
use crate::e2e::rig::{Rig, Server, POOL_LABEL};
use crate::e2e::stack::{log_tail, CONTROLLER_USER};
use crate::e2e::{node_of, pods};
use crate::support::{self, apply_manifest, create_node, deploy_dir, wait_for, TestApiserver, TestNode};
use basalt_runtime::crd::NodeShard;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const RIG: &str = "shardctl";
const CONFIGMAP: &str = "volcano-sharding-configmap";

/// The configuration: scheduler `{RIG}-a` takes at most `a_max` nodes (any utilisation),
/// `{RIG}-b` the rest.
fn config(a_max: u32) -> String {
    format!(
        "schedulerConfigs:
  - name: {RIG}-a
    type: volcano
    policies:
      - name: allocation-rate
        arguments: {{minCPUUtil: 0.0, maxCPUUtil: 1.0}}
      - name: node-limit
        arguments: {{minNodes: 1, maxNodes: {a_max}}}
  - name: {RIG}-b
    type: volcano
    policies:
      - name: allocation-rate
        arguments: {{minCPUUtil: 0.0, maxCPUUtil: 1.0}}
shardSyncPeriod: 60s
enableNodeEventTrigger: true
"
    )
}

/// Creates or rewrites the sharding ConfigMap's `sharding.yaml`.
async fn set_config(admin: &Client, yaml: &str) -> support::Result<()> {
    let api: Api<ConfigMap> = Api::namespaced(admin.clone(), "volcano-system");
    let data: BTreeMap<String, String> = [("sharding.yaml".to_string(), yaml.to_string())].into();
    if api.get_opt(CONFIGMAP).await?.is_some() {
        api.patch(CONFIGMAP, &PatchParams::default(), &Patch::Merge(&serde_json::json!({ "data": data }))).await?;
    } else {
        let mut cm = ConfigMap { data: Some(data), ..Default::default() };
        cm.metadata.name = Some(CONFIGMAP.into());
        api.create(&PostParams::default(), &cm).await?;
    }
    Ok(())
}

/// `spec.nodesDesired` of every NodeShard, as sets.
async fn shards(admin: &Client) -> support::Result<BTreeMap<String, BTreeSet<String>>> {
    let list = Api::<NodeShard>::all(admin.clone()).list(&Default::default()).await?;
    Ok(list
        .items
        .into_iter()
        .map(|s| (s.metadata.name.clone().unwrap_or_default(), s.spec.nodes_desired.into_iter().collect()))
        .collect())
}

fn set(idx: &[usize]) -> BTreeSet<String> {
    idx.iter().map(|i| format!("{RIG}-{i}")).collect()
}

/// Waits until the NodeShards are exactly `want`.
async fn wait_shards(
    admin: &Client,
    want: &BTreeMap<String, BTreeSet<String>>,
    within: Duration,
    log: &SchedulerProcess,
) -> support::Result<()> {
    let what = format!("NodeShards {want:?}");
    if let Err(e) = wait_for(&what, within, || async { Ok((shards(admin).await? == *want).then_some(())) }).await {
        let have = shards(admin).await.ok();
        return Err(format!("{e}; have {have:?}\ncontroller log:\n{}", log_tail(&log.log_text(), 30)).into());
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharding_controller_writes_disjoint_shards_that_a_hard_scheduler_keeps_to() -> support::Result<()> {
    // Four nodes `shardctl-0..3` of 2 CPUs in the rig's pool, on a server of the test's own.
    let mut rig = Rig::new(Server::Own(TestApiserver::start()?), RIG, 4, "2").await?;
    apply_manifest(&rig.admin, &deploy_dir().join("controller.yaml"), &["ServiceAccount", "ClusterRole", "ClusterRoleBinding"])
        .await?;
    set_config(&rig.admin, &config(2)).await?;
    let (a, b) = (format!("{RIG}-a"), format!("{RIG}-b"));
    let args = ["--leader-elect=false", "--controllers=sharding-controller", "--shard-sync-period=60s"];
    let mut controller = SchedulerProcess::start_command(
        "controller",
        rig.server.dir(),
        "controller",
        &rig.server.controllers_kubeconfig(),
        &args,
    )?;

    // Two NodeShards, disjoint: a takes two idle nodes (name order among equal scores), b the rest.
    let mut want: BTreeMap<String, BTreeSet<String>> = [(a.clone(), set(&[0, 1])), (b.clone(), set(&[2, 3]))].into();
    wait_shards(&rig.admin, &want, Duration::from_secs(30), &controller).await?;

    // A hard-mode scheduler on shard a: of six one-CPU pods, four fit a's four CPUs, two wait.
    let shard_a = format!("--scheduler-sharding-name={a}");
    rig.start_single(&["--scheduler-sharding-mode=hard", shard_a.as_str()])?;
    let names = rig.gangs("p", 6, 1, "1").await?;
    let (admin, ns) = (rig.admin.clone(), rig.ns.clone());
    wait_for("4 pods bound", Duration::from_secs(30), || async { Ok((rig.bound(&names).await? == 4).then_some(())) }).await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let placed = |all: &BTreeMap<String, k8s_openapi::api::core::v1::Pod>| -> Vec<String> {
        names.iter().filter_map(|n| all.get(n)).map(|p| node_of(p).to_string()).filter(|n| !n.is_empty()).collect()
    };
    let on = placed(&pods(&admin, &ns).await?);
    assert_eq!(on.len(), 4, "two pods must wait outside the full shard: {on:?}");
    assert!(on.iter().all(|n| want[&a].contains(n)), "a bind left shard {a}: {on:?}");

    // A node joins the cluster: assigned (to b, a being at its maxNodes) well before the 60 s period.
    let t0 = Instant::now();
    let node = TestNode::new(format!("{RIG}-4")).allocatable("cpu", "2").allocatable("memory", "64Gi").allocatable("pods", "110");
    create_node(&rig.admin, &node.label(POOL_LABEL, RIG)).await?;
    want.insert(b.clone(), set(&[2, 3, 4]));
    wait_shards(&rig.admin, &want, Duration::from_secs(15), &controller).await?;
    eprintln!("sharding controller: the added node was assigned after {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(rig.bound(&names).await?, 4, "the hard scheduler must not use b's new node");

    // An invalid configuration: refused with the field named, the shards kept.
    // (b's chain gains a second policy, which no scheduler registers.)
    let bad = config(2).replace("shardSyncPeriod: 60s\nenableNodeEventTrigger: true\n", "      - name: binpack\n");
    set_config(&rig.admin, &bad).await?;
    wait_for("the controller refused the bad ConfigMap", Duration::from_secs(15), || async {
        Ok(controller.log_text().contains("policies[1] (binpack): unknown policy").then_some(()))
    })
    .await
    .map_err(|e| format!("{e}\n{}", log_tail(&controller.log_text(), 30)))?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(shards(&rig.admin).await?, want, "a refused configuration changed the shards");

    // A valid change: a may have three nodes. The busy ones stay first (a packs), the first idle
    // node by name joins it, and the hard scheduler binds the two waiting pods there.
    set_config(&rig.admin, &config(3)).await?;
    want = [(a.clone(), set(&[0, 1, 2])), (b.clone(), set(&[3, 4]))].into();
    wait_shards(&rig.admin, &want, Duration::from_secs(15), &controller).await?;
    rig.wait_bound(&names, Duration::from_secs(20)).await?;
    let on = placed(&pods(&admin, &ns).await?);
    assert!(on.iter().all(|n| want[&a].contains(n)), "a bind left shard {a}: {on:?}");
    assert_eq!(on.iter().filter(|n| **n == format!("{RIG}-2")).count(), 2, "{on:?}");
    rig.assert_bound_once(&names).await?;
    rig.assert_running();

    let refused = rig.server.audit()?.by_user(CONTROLLER_USER).refused();
    assert!(refused.is_empty(), "requests outside deploy/controller.yaml's ClusterRole: {refused:?}");
    let log = log_tail(&controller.log_text(), 30);
    assert_eq!(controller.terminate(), Some(0), "controller log:\n{log}");
    Ok(())
}
