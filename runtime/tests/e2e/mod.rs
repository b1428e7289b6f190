//! Shared pieces of the end-to-end tests of `basalt scheduler` against the real test apiserver
//! (`tests/support`): the scheduler as a child process, a cluster-building helper, the controller
//! tests' server with scheduler and controller ([`stack::ControllerStack`]), and checks that read
//! back what the scheduler wrote.

#![allow(dead_code)]

pub mod process;
pub mod rig;
pub mod scale;
pub mod stack;

use crate::support::{self, create_nodes, create_pod_group, create_pods, create_queue, pod_group, queue, TestNode, TestPod};
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use std::collections::BTreeMap;

/// The scheduler's ServiceAccount user in the test apiserver.
pub const SCHEDULER_USER: &str = "system:serviceaccount:volcano-system:volcano-scheduler";

/// A gang workload: `groups` PodGroups of `gang` pods each (minMember = gang), spread round
/// robin over `queues`, each pod asking `cpu` and `memory`.
pub struct Gangs<'a> {
    /// Namespace.
    pub namespace: &'a str,
    /// Name prefix of PodGroups and pods.
    pub prefix: &'a str,
    /// Number of PodGroups.
    pub groups: usize,
    /// Pods per PodGroup (and its minMember).
    pub gang: usize,
    /// Queues, round robin.
    pub queues: &'a [String],
    /// Per-pod cpu request.
    pub cpu: &'a str,
    /// Per-pod memory request.
    pub memory: &'a str,
}

impl Gangs<'_> {
    /// Creates the PodGroups, then the pods. Returns the pod names.
    pub async fn create(&self, client: &Client) -> support::Result<Vec<String>> {
        let mut pods = Vec::new();
        for g in 0..self.groups {
            let name = format!("{}-{g}", self.prefix);
            let q = (!self.queues.is_empty()).then(|| self.queues[g % self.queues.len()].as_str());
            create_pod_group(client, &pod_group(self.namespace, &name, self.gang as i32, q)).await?;
            for i in 0..self.gang {
                pods.push(
                    TestPod::new(self.namespace, &format!("{name}-{i}"))
                        .group(&name)
                        .requests(&[("cpu", self.cpu), ("memory", self.memory)])
                        .build(),
                );
            }
        }
        create_pods(client, &pods).await?;
        Ok(pods.iter().map(|p| p.name_any()).collect())
    }
}

/// Creates queues `names` with weights 1, 2, … in order.
pub async fn create_queues(client: &Client, names: &[String]) -> support::Result<()> {
    for (i, n) in names.iter().enumerate() {
        create_queue(client, &queue(n, i as i32 + 1)).await?;
    }
    Ok(())
}

/// `count` nodes `{prefix}-{i}` with `cpu`, `memory` and 110 pods allocatable.
pub async fn nodes(client: &Client, prefix: &str, count: usize, cpu: &str, memory: &str) -> support::Result<()> {
    create_nodes(
        client,
        &TestNode::new(prefix).allocatable("cpu", cpu).allocatable("memory", memory).allocatable("pods", "110"),
        count,
    )
    .await?;
    Ok(())
}

/// Pods of `namespace`, by name.
pub async fn pods(client: &Client, namespace: &str) -> support::Result<BTreeMap<String, Pod>> {
    let list = Api::<Pod>::namespaced(client.clone(), namespace).list(&ListParams::default()).await?;
    Ok(list.items.into_iter().map(|p| (p.name_any(), p)).collect())
}

/// The node a pod is bound to (empty when none).
pub fn node_of(p: &Pod) -> &str {
    p.spec.as_ref().and_then(|s| s.node_name.as_deref()).unwrap_or("")
}

/// How many of `namespace`'s pods are bound.
pub async fn bound_count(client: &Client, namespace: &str) -> support::Result<usize> {
    Ok(pods(client, namespace).await?.values().filter(|p| !node_of(p).is_empty()).count())
}

/// Events of `namespace`.
pub async fn events(client: &Client, namespace: &str) -> support::Result<Vec<Event>> {
    Ok(Api::<Event>::namespaced(client.clone(), namespace).list(&ListParams::default()).await?.items)
}

/// The `PodScheduled` condition of a pod: (status, reason, message).
pub fn pod_scheduled(p: &Pod) -> Option<(String, String, String)> {
    let c = p.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "PodScheduled")?;
    Some((c.status.clone(), c.reason.clone().unwrap_or_default(), c.message.clone().unwrap_or_default()))
}

/// A loopback port free right now (for `--listen-address` / `--healthz-address`).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET url` with curl: (HTTP status, body); status 0 when nothing answered.
pub async fn http_get(url: &str) -> support::Result<(u16, String)> {
    let out = tokio::process::Command::new("curl").args(["-s", "-o", "-", "-w", "\n%{http_code}", url]).output().await?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    Ok((code.trim().parse().unwrap_or(0), body.to_string()))
}

/// The value of the sample `series` (name with its labels exactly as exposed, e.g.
/// `volcano_queue_share{queue_name="q0"}`) in an OpenMetrics text, if present.
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|r| r.strip_prefix(' ')).and_then(|v| v.split(' ').next()?.parse().ok()))
}
