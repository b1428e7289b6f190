//! The bench's cluster: Ready nodes, Queues, gang PodGroups and their pods, created many at a
//! time through the test-support helpers (`runtime/tests/support`), which make the objects the
//! way the apiserver tests do (nodes without the `not-ready` taint, Queue status via `/status`).

use crate::support::{self, TestNode, TestPod};
use futures::{StreamExt, TryStreamExt};
use kube::Client;

/// Allocatable of every bench node: 8 CPUs, 32Gi, 110 pods (a common kubelet default).
pub const NODE_CPU: &str = "8";
/// Requests of every bench pod: 100m CPU, 128Mi memory, so 80 fit a node by CPU.
pub const POD_CPU: &str = "100m";
/// Memory request of every bench pod.
pub const POD_MEMORY: &str = "128Mi";
/// Pods that fit one node by the CPU request.
pub const PODS_PER_NODE_BY_CPU: usize = 80;

/// Name of node `i`.
pub fn node_name(i: usize) -> String {
    format!("node-{i}")
}

/// Name of queue `i`.
pub fn queue_name(i: usize) -> String {
    format!("bench-q{i}")
}

/// Creates nodes `node-0 .. node-{n-1}`, `concurrency` at a time. Errors: the first failure.
pub async fn create_nodes(client: &Client, n: usize, concurrency: usize) -> support::Result<()> {
    futures::stream::iter(0..n)
        .map(|i| async move {
            let node = TestNode::new(node_name(i)).allocatable("cpu", NODE_CPU);
            support::create_node(client, &node).await.map(|_| ())
        })
        .buffer_unordered(concurrency)
        .try_collect::<()>()
        .await
}

/// Creates Queues `bench-q0 .. bench-q{n-1}`, weight 1, state Open.
pub async fn create_queues(client: &Client, n: usize) -> support::Result<()> {
    for i in 0..n {
        support::create_queue(client, &support::queue(&queue_name(i), 1)).await?;
    }
    Ok(())
}

/// Name of pod `i` of a batch.
pub fn pod_name(i: usize) -> String {
    format!("pod-{i}")
}

/// Creates `pods` pods in `namespace`, `concurrency` at a time. With `gang = Some(g)`: PodGroups
/// `pg-{j}` of `g` pods each (`minMember = g`, queues round-robin), created first, and pods
/// `schedulerName: volcano` with annotation `scheduling.k8s.io/group-name`; with `None`: plain
/// pods of scheduler `scheduler` and no PodGroup. With `bound_to = Some(n)` every pod is
/// created already bound (`spec.nodeName`, nodes `node-0 .. node-{n-1}` round-robin), as a
/// running cluster's pods are. Returns the pod names. Errors: the first failed create.
#[allow(clippy::too_many_arguments)]
pub async fn create_batch(
    client: &Client,
    namespace: &str,
    pods: usize,
    gang: Option<usize>,
    queues: usize,
    scheduler: &str,
    concurrency: usize,
    bound_to: Option<usize>,
) -> support::Result<Vec<String>> {
    if let Some(g) = gang {
        let groups = pods / g;
        futures::stream::iter(0..groups)
            .map(|j| async move {
                let pg = support::pod_group(namespace, &format!("pg-{j}"), g as i32, Some(&queue_name(j % queues)));
                support::create_pod_group(client, &pg).await.map(|_| ())
            })
            .buffer_unordered(concurrency)
            .try_collect::<()>()
            .await?;
    }
    futures::stream::iter(0..pods)
        .map(|i| async move {
            let mut pod =
                TestPod::new(namespace, &pod_name(i)).scheduler(scheduler).requests(&[("cpu", POD_CPU), ("memory", POD_MEMORY)]);
            if let Some(g) = gang {
                pod = pod.group(&format!("pg-{}", i / g));
            }
            let mut pod = pod.build();
            if let (Some(n), Some(spec)) = (bound_to, pod.spec.as_mut()) {
                spec.node_name = Some(node_name(i % n.max(1)));
            }
            support::create_pod(client, &pod).await.map(|_| ())
        })
        .buffer_unordered(concurrency)
        .try_collect::<()>()
        .await?;
    Ok((0..pods).map(pod_name).collect())
}
