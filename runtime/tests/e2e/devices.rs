//! GPU share on the real apiserver (issue 26): nodes register `volcano.sh/gpu-memory` /
//! `volcano.sh/gpu-number` capacity as the volcano-device-plugin does, pods ask card memory in
//! their limits, and `basalt scheduler` with `deviceshare.GPUSharingEnable` sends the chosen
//! card in the Binding's annotations: every bound pod carries `volcano.sh/gpu-index` and
//! `volcano.sh/predicate-time` on the API object (the server copies them from the Binding), no
//! card holds more than its memory, and a restarted scheduler rebuilds card usage from those
//! annotations and does not book a card twice.
//!
//! vGPU (HAMi) the same way: nodes register their cards in `volcano.sh/node-vgpu-register` as
//! the HAMi device plugin does; with `deviceshare.VGPUEnable` every bound vGPU pod carries
//! `volcano.sh/vgpu-ids-new` (= `volcano.sh/devices-to-allocate`), `volcano.sh/vgpu-node` and
//! `volcano.sh/bind-phase: allocating`, no card holds more than its memory, cores or share
//! count, a restart rebuilds the cards from the annotations; with `deviceshare.NodeLockEnable`
//! the binder takes the node's `hamivgpu` lock before each Binding, one pod per node until the
//! lock is released.

use crate::{e2e, support};

use e2e::node_of;
use e2e::rig::{Rig, Server, POOL_LABEL};
use k8s_openapi::api::core::v1::Pod;
use std::collections::BTreeMap;
use std::time::Duration;
use support::{create_nodes, create_pod_group, create_pods, pod_group, TestApiserver, TestNode, TestPod};

const GPU_MEMORY: &str = "volcano.sh/gpu-memory";
const GPU_INDEX: &str = "volcano.sh/gpu-index";
const PREDICATE_TIME: &str = "volcano.sh/predicate-time";
/// Memory of one card: each node registers 2 cards and 16000 in all.
const CARD: i64 = 8000;

const CONF: &str = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments:\n      deviceshare.GPUSharingEnable: true\n  - name: proportion\n  - name: nodeorder\n";

/// Pods `{prefix}-{i}` of one-member PodGroups, each asking `memory` of one card.
async fn share_pods(rig: &Rig, prefix: &str, count: usize, memory: &str) -> support::Result<Vec<String>> {
    let mut pods = Vec::new();
    for i in 0..count {
        let name = format!("{prefix}-{i}");
        create_pod_group(&rig.admin, &pod_group(&rig.ns, &name, 1, None)).await?;
        pods.push(
            TestPod::new(&rig.ns, &name)
                .scheduler(&rig.scheduler_name())
                .group(&name)
                .requests(&[("cpu", "1"), ("memory", "64Mi"), (GPU_MEMORY, memory)])
                .build(),
        );
    }
    create_pods(&rig.admin, &pods).await?;
    Ok(pods.iter().map(|p| p.metadata.name.clone().unwrap_or_default()).collect())
}

fn memory_of(p: &Pod) -> i64 {
    let c = p.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    // The server writes quantities canonically (5000 comes back as "5k").
    let units = |q: &str| basalt_runtime::convert::resources::amount("memory", q).ok();
    c.iter().filter_map(|c| units(&c.resources.as_ref()?.limits.as_ref()?.get(GPU_MEMORY)?.0)).sum()
}

/// Every bound pod of the namespace carries `gpu-index` (one card id) and `predicate-time`,
/// and no card holds more than [`CARD`]. Returns the memory in use per (node, card).
async fn check_cards(rig: &Rig) -> support::Result<BTreeMap<(String, String), i64>> {
    let mut used: BTreeMap<(String, String), i64> = BTreeMap::new();
    for (name, p) in e2e::pods(&rig.admin, &rig.ns).await? {
        let node = node_of(&p);
        if node.is_empty() {
            continue;
        }
        let ann = p.metadata.annotations.clone().unwrap_or_default();
        let index = ann.get(GPU_INDEX).ok_or_else(|| format!("bound pod {name} on {node} has no {GPU_INDEX}: {ann:?}"))?;
        assert!(index == "0" || index == "1", "{name}: {GPU_INDEX}={index:?} names no card of a 2-card node");
        let t = ann.get(PREDICATE_TIME).ok_or_else(|| format!("bound pod {name} has no {PREDICATE_TIME}"))?;
        assert!(t.parse::<u64>().is_ok_and(|t| t > 0), "{name}: {PREDICATE_TIME}={t:?} is not a time in ns");
        *used.entry((node.to_string(), index.clone())).or_default() += memory_of(&p);
    }
    for ((node, card), m) in &used {
        assert!(*m <= CARD, "card {card} of {node} holds {m} of {CARD}:\n{}", rig.log_tails(20));
    }
    Ok(used)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_pods_carry_their_card_and_a_restart_never_double_books() -> support::Result<()> {
    let mut rig = Rig::new(Server::Shared(TestApiserver::shared()?), "gpushare", 0, "16").await?;
    let node = TestNode::new(&rig.name)
        .allocatable("cpu", "16")
        .allocatable("memory", "64Gi")
        .allocatable("pods", "110")
        .allocatable(GPU_MEMORY, "16000")
        .allocatable("volcano.sh/gpu-number", "2")
        .label(POOL_LABEL, &rig.name);
    create_nodes(&rig.admin, &node, 2).await?;
    let conf = rig.server.dir().join("gpushare.conf");
    std::fs::write(&conf, CONF)?;
    let conf_arg = format!("--scheduler-conf={}", conf.display());
    rig.start_single(&[conf_arg.as_str()])?;

    // Four 5000 pods on four cards of 8000: one per card.
    let first = share_pods(&rig, "a", 4, "5000").await?;
    rig.wait_bound(&first, Duration::from_secs(60)).await?;
    let used = check_cards(&rig).await?;
    assert_eq!(used.len(), 4, "four pods, four distinct cards: {used:?}");

    // A restarted scheduler reads the cards from the pods' annotations: a 5000 pod finds no
    // card with 5000 free (each has 3000) and stays pending; a 3000 pod fits one exactly.
    rig.schedulers[0].kill();
    rig.schedulers.clear();
    rig.start_single(&[conf_arg.as_str()])?;
    let big = share_pods(&rig, "big", 1, "5000").await?;
    let small = share_pods(&rig, "small", 1, "3000").await?;
    rig.wait_bound(&small, Duration::from_secs(60)).await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(rig.bound(&big).await?, 0, "no card has 5000 free:\n{}", rig.log_tails(20));
    let used = check_cards(&rig).await?;
    assert_eq!(used.values().filter(|&&m| m == CARD).count(), 1, "the 3000 pod filled one card: {used:?}");
    rig.assert_bound_once(&[first, small].concat()).await?;
    rig.assert_running();
    Ok(())
}

const VGPU_NUMBER: &str = "volcano.sh/vgpu-number";
const VGPU_MEMORY: &str = "volcano.sh/vgpu-memory";
const VGPU_CORES: &str = "volcano.sh/vgpu-cores";
/// Memory of one vGPU card (MiB); each node registers 2 cards, each shared by at most 4 pods.
const VCARD: u64 = 8000;
const VSPLIT: usize = 4;

fn vgpu_conf(node_lock: bool) -> String {
    let lock = if node_lock { "      deviceshare.NodeLockEnable: true\n" } else { "" };
    format!("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments:\n      deviceshare.VGPUEnable: true\n{lock}  - name: proportion\n  - name: nodeorder\n")
}

/// `count` vGPU nodes of the rig, each registering 2 cards of [`VCARD`] MiB shared by
/// [`VSPLIT`] pods (the HAMi device plugin's annotation and allocatable).
async fn vgpu_nodes(rig: &Rig, count: usize) -> support::Result<Vec<String>> {
    let node = TestNode::new(&rig.name)
        .allocatable("cpu", "16")
        .allocatable("memory", "64Gi")
        .allocatable("pods", "110")
        .allocatable(VGPU_NUMBER, &(2 * VSPLIT).to_string())
        .allocatable(VGPU_MEMORY, &(2 * VCARD).to_string())
        .allocatable(VGPU_CORES, "200")
        .label(POOL_LABEL, &rig.name);
    let nodes = create_nodes(&rig.admin, &node, count).await?;
    let api: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(rig.admin.clone());
    let mut names = Vec::new();
    for n in nodes {
        let name = n.metadata.name.clone().unwrap_or_default();
        let reg: String = (0..2).map(|i| format!("GPU-{name}-{i},{VSPLIT},{VCARD},NVIDIA-Tesla-T4,true,hami-core:")).collect();
        let body = serde_json::json!({"metadata": {"annotations": {"volcano.sh/node-vgpu-register": reg}}});
        api.patch(&name, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&body)).await?;
        names.push(name);
    }
    Ok(names)
}

/// Pods `{prefix}-{i}` of one-member PodGroups, each asking one vGPU card with `memory` MiB and
/// `cores` percent.
async fn vgpu_pods(rig: &Rig, prefix: &str, count: usize, memory: &str, cores: &str) -> support::Result<Vec<String>> {
    let mut pods = Vec::new();
    for i in 0..count {
        let name = format!("{prefix}-{i}");
        create_pod_group(&rig.admin, &pod_group(&rig.ns, &name, 1, None)).await?;
        pods.push(
            TestPod::new(&rig.ns, &name)
                .scheduler(&rig.scheduler_name())
                .group(&name)
                .requests(&[("cpu", "1"), ("memory", "64Mi"), (VGPU_NUMBER, "1"), (VGPU_MEMORY, memory), (VGPU_CORES, cores)])
                .build(),
        );
    }
    create_pods(&rig.admin, &pods).await?;
    Ok(pods.iter().map(|p| p.metadata.name.clone().unwrap_or_default()).collect())
}

/// Every bound pod of the namespace carries the vGPU bind annotations naming cards of its own
/// node, and no card holds more than [`VCARD`] MiB, 100 cores or [`VSPLIT`] pods. Returns the
/// pods per card UUID.
async fn check_vgpu_cards(rig: &Rig) -> support::Result<BTreeMap<String, usize>> {
    let mut used: BTreeMap<String, (u64, u32, usize)> = BTreeMap::new();
    for (name, p) in e2e::pods(&rig.admin, &rig.ns).await? {
        let node = node_of(&p);
        if node.is_empty() {
            continue;
        }
        let ann = p.metadata.annotations.clone().unwrap_or_default();
        let get = |k: &str| ann.get(k).cloned().ok_or_else(|| format!("bound pod {name} on {node} has no {k}: {ann:?}"));
        let ids = get("volcano.sh/vgpu-ids-new")?;
        assert_eq!(get("volcano.sh/devices-to-allocate")?, ids, "{name}");
        assert_eq!(get("volcano.sh/vgpu-node")?, node, "{name}");
        assert_eq!(get("volcano.sh/bind-phase")?, "allocating", "{name}");
        assert!(get("volcano.sh/vgpu-time")?.parse::<u64>().is_ok_and(|t| t > 0), "{name}: vgpu-time");
        let ctrs = basalt_core::model::decode_pod_devices(&ids)?;
        assert_eq!(ctrs.len(), 1, "{name}: one container: {ids}");
        assert_eq!(ctrs[0].len(), 1, "{name}: one card: {ids}");
        for d in &ctrs[0] {
            assert!(d.uuid.starts_with(&format!("GPU-{node}-")), "{name} on {node} holds {}", d.uuid);
            let u = used.entry(d.uuid.clone()).or_default();
            u.0 += d.memory;
            u.1 += d.cores;
            u.2 += 1;
        }
    }
    for (card, (m, c, n)) in &used {
        assert!(
            *m <= VCARD && *c <= 100 && *n <= VSPLIT,
            "card {card} holds {m} MiB, {c} cores, {n} pods:\n{}",
            rig.log_tails(20)
        );
    }
    Ok(used.into_iter().map(|(k, (_, _, n))| (k, n)).collect())
}

/// Waits until `want` of `names` are bound, then a little longer, and returns how many are.
async fn settle_bound(rig: &Rig, names: &[String], want: usize) -> support::Result<usize> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while rig.bound(names).await? < want && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    rig.bound(names).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vgpu_pods_carry_their_cards_and_a_restart_never_double_books() -> support::Result<()> {
    let mut rig = Rig::new(Server::Shared(TestApiserver::shared()?), "vgpu", 0, "16").await?;
    vgpu_nodes(&rig, 2).await?;
    let conf = rig.server.dir().join("vgpu.conf");
    std::fs::write(&conf, vgpu_conf(false))?;
    let conf_arg = format!("--scheduler-conf={}", conf.display());
    rig.start_single(&[conf_arg.as_str()])?;

    // Six pods of 3000 MiB and 40 cores: each card takes at most two (memory and cores), four
    // cards take eight.
    let first = vgpu_pods(&rig, "v", 6, "3000", "40").await?;
    rig.wait_bound(&first, Duration::from_secs(60)).await?;
    let used = check_vgpu_cards(&rig).await?;
    assert_eq!(used.values().sum::<usize>(), 6, "{used:?}");

    // A restarted scheduler reads the cards from the pods' vgpu-ids-new: of three more pods,
    // exactly two find a card (the node-level vgpu resources would admit all three).
    rig.schedulers[0].kill();
    rig.schedulers.clear();
    rig.start_single(&[conf_arg.as_str()])?;
    let more = vgpu_pods(&rig, "w", 3, "3000", "40").await?;
    assert_eq!(settle_bound(&rig, &more, 2).await?, 2, "two card slots were left:\n{}", rig.log_tails(20));
    let used = check_vgpu_cards(&rig).await?;
    assert_eq!(used.values().filter(|&&n| n == 2).count(), 4, "every card holds two pods: {used:?}");
    let bound: Vec<String> = first.iter().chain(&more).cloned().collect();
    let mut once = Vec::new();
    for n in &bound {
        if rig.bound(std::slice::from_ref(n)).await? == 1 {
            once.push(n.clone());
        }
    }
    rig.assert_bound_once(&once).await?;
    rig.assert_running();
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_lock_binds_one_vgpu_pod_per_node_until_released() -> support::Result<()> {
    let mut rig = Rig::new(Server::Shared(TestApiserver::shared()?), "vgpulock", 0, "16").await?;
    let nodes = vgpu_nodes(&rig, 2).await?;
    let conf = rig.server.dir().join("vgpulock.conf");
    std::fs::write(&conf, vgpu_conf(true))?;
    rig.start_single(&[format!("--scheduler-conf={}", conf.display()).as_str()])?;

    let pods = vgpu_pods(&rig, "l", 3, "1000", "10").await?;
    assert_eq!(settle_bound(&rig, &pods, 2).await?, 2, "one pod per locked node:\n{}", rig.log_tails(20));
    let api: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(rig.admin.clone());
    for n in &nodes {
        let node = api.get(n).await?;
        let lock = node.metadata.annotations.unwrap_or_default().get("hamivgpu").cloned();
        let lock = lock.ok_or_else(|| format!("node {n} has no hamivgpu lock after a vGPU bind"))?;
        assert!(lock.parse::<jiff::Timestamp>().is_ok(), "{n}: lock {lock:?} is not RFC 3339");
    }
    let all = e2e::pods(&rig.admin, &rig.ns).await?;
    let on: std::collections::BTreeSet<&str> =
        pods.iter().filter_map(|p| all.get(p)).map(node_of).filter(|n| !n.is_empty()).collect();
    assert_eq!(on.len(), 2, "the two bound pods are on different nodes: {on:?}");

    // The device plugin releases the lock once it has set up the pod: the third pod binds there.
    let body = serde_json::json!({"metadata": {"annotations": {"hamivgpu": null}}});
    api.patch(&nodes[0], &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&body)).await?;
    rig.wait_bound(&pods, Duration::from_secs(60)).await?;
    let all = e2e::pods(&rig.admin, &rig.ns).await?;
    assert_eq!(pods.iter().filter(|p| all.get(*p).is_some_and(|x| node_of(x) == nodes[0])).count(), 2);
    check_vgpu_cards(&rig).await?;
    rig.assert_bound_once(&pods).await?;
    rig.assert_running();
    Ok(())
}
