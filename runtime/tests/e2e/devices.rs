//! GPU share on the real apiserver (issue 26): nodes register `volcano.sh/gpu-memory` /
//! `volcano.sh/gpu-number` capacity as the volcano-device-plugin does, pods ask card memory in
//! their limits, and `basalt scheduler` with `deviceshare.GPUSharingEnable` sends the chosen
//! card in the Binding's annotations: every bound pod carries `volcano.sh/gpu-index` and
//! `volcano.sh/predicate-time` on the API object (the server copies them from the Binding), no
//! card holds more than its memory, and a restarted scheduler rebuilds card usage from those
//! annotations and does not book a card twice.

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
