//! `basalt controller`'s PodGroup and Queue controllers against the real test apiserver, with
//! `basalt scheduler` beside them; the controller runs with the ServiceAccount and ClusterRole of
//! `deploy/controller.yaml`, and at the end the audit log must show no request of it refused.
//!
//! * A plain pod (no owner, no group annotation) gets PodGroup `podgroup-<pod UID>` (minMember
//!   1, queue `default`, `minResources` its quota usage, the pod as controller owner), is
//!   annotated with it and bound by the scheduler.
//! * Two pods owned (by hand) by a ReplicaSet annotated `scheduling.volcano.sh/group-min-member:
//!   "2"` share PodGroup `podgroup-<ReplicaSet UID>` with minMember 2, in the queue their
//!   `scheduling.volcano.sh/queue-name` names, and are both bound; after a controller restart a
//!   third pod of the ReplicaSet joins the same PodGroup and no PodGroup is created twice.
//! * Queues: a queue without `spec.parent` gets `root`; the controller counts a queue's
//!   PodGroups in `/metrics` (`volcano_queue_pod_group_*_count{queue_name}`), not in the Queue's
//!   `status` (Volcano ≥ 1.11 writes `status.state` alone); `CloseQueue` by typed Command closes a
//!   queue with a PodGroup to Closing and its child to Closed (marked
//!   `volcano.sh/closed-by-parent`); the queue becomes Closed once the PodGroup is deleted and
//!   counts none; `OpenQueue` reopens both; every Command is deleted once handled.

use crate::{e2e, support};

use basalt_runtime::crd::{Command, PodGroup, Queue};
use e2e::process::SchedulerProcess;
use e2e::stack::{ControllerStack, StackSpec, CONTROLLER_USER, QPS};
use e2e::{free_port, http_get, metric, node_of, pods};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client, ResourceExt};
use std::time::Duration;
use support::{create_pod, create_pod_group, create_queue, fresh_namespace, pod_group, queue, wait_for, TestPod};

const WAIT: Duration = Duration::from_secs(60);
const GROUP: &str = "scheduling.k8s.io/group-name";

fn group_of(p: &Pod) -> Option<String> {
    p.annotations().get(GROUP).cloned()
}

async fn pod_group_named(client: &Client, ns: &str, name: &str) -> support::Result<Option<PodGroup>> {
    Ok(Api::<PodGroup>::namespaced(client.clone(), ns).get_opt(name).await?)
}

/// Waits until every pod of `names` in `ns` is annotated and bound; returns the pods.
async fn wait_grouped_and_bound(client: &Client, ns: &str, names: &[&str]) -> support::Result<Vec<Pod>> {
    wait_for(&format!("pods {names:?} grouped and bound"), WAIT, || async {
        let all = pods(client, ns).await?;
        let got: Vec<Pod> = names.iter().filter_map(|n| all.get(*n).cloned()).collect();
        let done = got.len() == names.len() && got.iter().all(|p| group_of(p).is_some() && !node_of(p).is_empty());
        Ok(done.then_some(got))
    })
    .await
}

/// A plain pod gets `podgroup-<pod UID>` and is scheduled.
async fn plain_pod(client: &Client) -> support::Result<()> {
    let ns = fresh_namespace(client, "pgc-plain").await?;
    let created =
        create_pod(client, &TestPod::new(&ns, "solo").requests(&[("cpu", "500m"), ("memory", "256Mi")]).build()).await?;
    let uid = created.uid().unwrap_or_default();
    let got = wait_grouped_and_bound(client, &ns, &["solo"]).await?;
    let want = format!("podgroup-{uid}");
    assert_eq!(group_of(&got[0]).as_deref(), Some(want.as_str()));
    let pg = pod_group_named(client, &ns, &want).await?.ok_or("the plain pod's PodGroup is missing")?;
    assert_eq!(pg.spec.min_member, Some(1));
    assert_eq!(pg.spec.queue.as_deref(), Some("default"));
    let own = &pg.owner_references()[0];
    assert_eq!(
        (own.kind.as_str(), own.name.as_str(), own.uid.as_str(), own.controller),
        ("Pod", "solo", uid.as_str(), Some(true))
    );
    let min = pg.spec.min_resources.clone().unwrap_or_default();
    for (k, v) in [("cpu", "500m"), ("requests.cpu", "500m"), ("memory", "256Mi"), ("pods", "1"), ("count/pods", "1")] {
        assert_eq!(min.get(k).map(|q| q.0.as_str()), Some(v), "minResources.{k} in {min:?}");
    }
    Ok(())
}

/// Creates ReplicaSet `name` (nothing runs it here: no controller-manager) annotated with
/// `group-min-member`.
async fn replica_set(client: &Client, ns: &str, name: &str, min_member: &str) -> support::Result<ReplicaSet> {
    let rs: ReplicaSet = serde_yaml::from_str(&format!(
        r#"
metadata:
  name: {name}
  annotations: {{scheduling.volcano.sh/group-min-member: "{min_member}", volcano.sh/preemptable: "true"}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      schedulerName: volcano
      containers: [{{name: main, image: registry.k8s.io/pause:3.2}}]
"#
    ))?;
    Ok(Api::<ReplicaSet>::namespaced(client.clone(), ns).create(&PostParams::default(), &rs).await?)
}

fn owned_pod(ns: &str, name: &str, rs: &ReplicaSet, queue: &str) -> Pod {
    let mut p = TestPod::new(ns, name)
        .label("app", &rs.name_any())
        .annotation("scheduling.volcano.sh/queue-name", queue)
        .requests(&[("cpu", "1"), ("memory", "512Mi")])
        .build();
    p.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: rs.name_any(),
        uid: rs.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    p
}

/// Two ReplicaSet-owned pods share one PodGroup with the owner's minMember and the pods' queue.
async fn replica_set_pods(client: &Client) -> support::Result<(String, ReplicaSet)> {
    let ns = fresh_namespace(client, "pgc-rs").await?;
    create_queue(client, &queue("pgc-web", 1)).await?;
    let rs = replica_set(client, &ns, "web", "2").await?;
    for n in ["web-a", "web-b"] {
        create_pod(client, &owned_pod(&ns, n, &rs, "pgc-web")).await?;
    }
    let got = wait_grouped_and_bound(client, &ns, &["web-a", "web-b"]).await?;
    let want = format!("podgroup-{}", rs.uid().unwrap_or_default());
    for p in &got {
        assert_eq!(group_of(p).as_deref(), Some(want.as_str()), "{}", p.name_any());
    }
    let pg = pod_group_named(client, &ns, &want).await?.ok_or("the ReplicaSet's PodGroup is missing")?;
    assert_eq!(pg.spec.min_member, Some(2));
    assert_eq!(pg.spec.queue.as_deref(), Some("pgc-web"));
    assert_eq!(pg.annotations().get("volcano.sh/preemptable").map(String::as_str), Some("true"), "owner annotation inherited");
    assert_eq!(pg.owner_references()[0].kind, "ReplicaSet");
    let min = pg.spec.min_resources.clone().unwrap_or_default();
    assert_eq!(min.get("cpu").map(|q| q.0.as_str()), Some("2"), "one pod's 1 CPU × minMember 2: {min:?}");
    let all = Api::<PodGroup>::namespaced(client.clone(), &ns).list(&ListParams::default()).await?;
    assert_eq!(all.items.len(), 1, "one PodGroup for the ReplicaSet");
    Ok((ns, rs))
}

async fn queue_named(client: &Client, name: &str) -> support::Result<Option<Queue>> {
    Ok(Api::<Queue>::all(client.clone()).get_opt(name).await?)
}

fn state(q: &Queue) -> &str {
    q.status.as_ref().and_then(|s| s.state.as_deref()).unwrap_or("")
}

fn closed_by_parent(q: &Queue) -> bool {
    q.annotations().get("volcano.sh/closed-by-parent").is_some_and(|v| v == "true")
}

/// Waits until Queue `name` satisfies `ok`.
async fn wait_queue(client: &Client, name: &str, what: &str, ok: impl Fn(&Queue) -> bool) -> support::Result<Queue> {
    wait_for(&format!("Queue {name} {what}"), WAIT, || async { Ok(queue_named(client, name).await?.filter(|q| ok(q))) }).await
}

/// Issues Command `action` (OpenQueue, CloseQueue) for Queue `q` in `ns`, as `vcctl queue
/// operate` does.
async fn queue_command(client: &Client, ns: &str, q: &str, action: &str) -> support::Result<()> {
    let queue = queue_named(client, q).await?.ok_or_else(|| format!("Queue {q} is missing"))?;
    let mut c = Command::for_object(ns, &queue, action);
    c.spec.reason = Some("test".into());
    Api::<Command>::namespaced(client.clone(), ns).create(&PostParams::default(), &c).await?;
    Ok(())
}

/// PodGroups of Queue `q` by phase as the controller's `/metrics` at `url` count them (the sum of
/// Volcano's five `volcano_queue_pod_group_*_count` gauges); `None` while the queue has no series.
async fn counted_pod_groups(url: &str, q: &str) -> support::Result<Option<f64>> {
    let (code, text) = http_get(url).await?;
    if code != 200 {
        return Ok(None);
    }
    let phases = ["inqueue", "pending", "running", "unknown", "completed"];
    let values: Vec<Option<f64>> =
        phases.iter().map(|p| metric(&text, &format!("volcano_queue_pod_group_{p}_count{{queue_name=\"{q}\"}}"))).collect();
    Ok(values.iter().all(Option::is_some).then(|| values.iter().flatten().sum()))
}

/// Waits until the controller's `/metrics` counts `want` PodGroups in Queue `q`.
async fn wait_counted(url: &str, q: &str, want: f64) -> support::Result<()> {
    wait_for(&format!("the controller counting {want} PodGroups in Queue {q}"), WAIT, || async {
        Ok((counted_pod_groups(url, q).await? == Some(want)).then_some(()))
    })
    .await
}

/// No PodGroup counts in a Queue's `status` (Volcano's `syncQueue` applies `state` alone since
/// its podgroup-statistics change; the counts are metrics).
fn assert_no_counts(q: &Queue) {
    let s = q.status.clone().unwrap_or_default();
    assert_eq!(
        (s.pending, s.running, s.inqueue, s.unknown, s.completed),
        (None, None, None, None, None),
        "Queue {} status carries PodGroup counts: {s:?}",
        q.name_any()
    );
}

/// Parent defaulting, the PodGroup counted in `/metrics` at `metrics_url`, CloseQueue (Closing
/// while a PodGroup remains, the child Closed and marked), Closed once drained, OpenQueue
/// reopening both, Commands deleted.
async fn queue_states(client: &Client, metrics_url: &str) -> support::Result<()> {
    let ns = fresh_namespace(client, "qc").await?;
    let mut parent = queue("qc-team", 1);
    parent.status = None;
    create_queue(client, &parent).await?;
    let mut child = queue("qc-dev", 1);
    child.spec.parent = Some("qc-team".into());
    create_queue(client, &child).await?;
    wait_queue(client, "qc-team", "parent root, Open", |q| q.spec.parent.as_deref() == Some("root") && state(q) == "Open")
        .await?;
    create_pod_group(client, &pod_group(&ns, "held", 1, Some("qc-team"))).await?;
    // Pending or Inqueue (the scheduler may enqueue it): counted once either way.
    wait_counted(metrics_url, "qc-team", 1.0).await?;

    queue_command(client, &ns, "qc-team", "CloseQueue").await?;
    let closing = wait_queue(client, "qc-team", "Closing", |q| state(q) == "Closing").await?;
    assert_no_counts(&closing);
    let dev = wait_queue(client, "qc-dev", "Closed by its parent", |q| state(q) == "Closed").await?;
    assert!(closed_by_parent(&dev), "the child carries the closed-by-parent mark");
    Api::<PodGroup>::namespaced(client.clone(), &ns).delete("held", &DeleteParams::default()).await?;
    let closed = wait_queue(client, "qc-team", "Closed once its PodGroup is gone", |q| state(q) == "Closed").await?;
    assert_no_counts(&closed);
    wait_counted(metrics_url, "qc-team", 0.0).await?;

    queue_command(client, &ns, "qc-team", "OpenQueue").await?;
    wait_queue(client, "qc-team", "Open again", |q| state(q) == "Open").await?;
    let dev = wait_queue(client, "qc-dev", "reopened with its parent", |q| state(q) == "Open").await?;
    assert!(!closed_by_parent(&dev), "the mark is cleared on reopening");
    wait_for("Commands deleted", WAIT, || async {
        let left = Api::<Command>::namespaced(client.clone(), &ns).list(&ListParams::default()).await?;
        Ok(left.items.is_empty().then_some(()))
    })
    .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn podgroup_and_queue_controllers_against_the_apiserver() -> support::Result<()> {
    let port = free_port();
    let metrics_url = format!("http://127.0.0.1:{port}/metrics");
    // Metrics on a free port (the Queue controller's PodGroup counts are read there).
    let ctl_args = |port: u16| -> Vec<String> { vec!["--enable-metrics".into(), format!("--listen-address=127.0.0.1:{port}")] };
    let mut stack = ControllerStack::start(StackSpec {
        nodes: 2,
        cpu: "8",
        memory: "32Gi",
        schedule_period: "500ms",
        kubelet: false,
        qps: QPS,
        controller_args: &ctl_args(port),
    })
    .await?;
    let admin = stack.admin.clone();
    let log = |p: &SchedulerProcess| p.log_text();

    let (a, b, c) = tokio::join!(plain_pod(&admin), replica_set_pods(&admin), queue_states(&admin, &metrics_url));
    for (name, r) in [("plain pod", a), ("queue states", c)] {
        if let Err(e) = r {
            panic!("{name}: {e}\ncontroller log:\n{}\nscheduler log:\n{}", log(&stack.controller), log(&stack.scheduler));
        }
    }
    let (rs_ns, rs) = match b {
        Ok(v) => v,
        Err(e) => {
            panic!("ReplicaSet pods: {e}\ncontroller log:\n{}\nscheduler log:\n{}", log(&stack.controller), log(&stack.scheduler))
        }
    };

    // Restarted: a new pod of the ReplicaSet joins the existing PodGroup; nothing is re-created.
    stack.restart_controller("controller-2", &ctl_args(free_port()))?;
    create_pod(&admin, &owned_pod(&rs_ns, "web-c", &rs, "pgc-web")).await?;
    let got = match wait_grouped_and_bound(&admin, &rs_ns, &["web-c"]).await {
        Ok(g) => g,
        Err(e) => panic!("after restart: {e}\ncontroller log:\n{}", log(&stack.controller)),
    };
    assert_eq!(group_of(&got[0]), Some(format!("podgroup-{}", rs.uid().unwrap_or_default())));

    let audit = stack.server.audit()?.by_user(CONTROLLER_USER);
    let creates: Vec<String> = audit
        .events()
        .iter()
        .filter(|e| e.resource == "podgroups" && e.verb == "create" && e.succeeded())
        .map(|e| format!("{}/{}", e.namespace, e.name))
        .collect();
    assert_eq!(creates.len(), 2, "one PodGroup for the plain pod, one for the ReplicaSet: {creates:?}");
    stack.assert_within_role()?;
    stack.stop(60).await
}
