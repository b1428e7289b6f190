//! Smoke tests of the real-apiserver harness (`tests/support`): a kube-apiserver v1.20.2 with
//! etcd, Volcano's CRDs and the scheduler's RBAC from `deploy/`, a binding posted with the
//! scheduler's identity and counted in the audit log, the test kubelet, and RBAC denials.
//! The first run on a machine builds the server (minutes); it is never skipped.

use crate::support;

use k8s_openapi::api::core::v1::{Node, Pod, Secret};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, ResourceExt};
use std::time::Duration;
use support::{
    api_status, apply_scheduler_rbac, bind_pod, create_node, create_nodes, create_pod, create_pod_group, create_priority_class,
    create_queue, fresh_namespace, install_volcano_crds, pod_group, queue, wait_for, wait_for_pod, Kubelet, TestApiserver,
    TestNode, TestPod, NOT_READY_TAINT,
};

const SCHEDULER_USER: &str = "system:serviceaccount:volcano-system:volcano-scheduler";
const WAIT: Duration = Duration::from_secs(30);

fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_binding_is_audited_once_and_the_kubelet_runs_the_pod() -> support::Result<()> {
    let server = TestApiserver::shared()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "smoke-bind").await?;

    let nodes =
        create_nodes(&admin, &TestNode::new("smoke-bind-node").allocatable("nvidia.com/gpu", "2").label("zone", "a"), 2).await?;
    assert_eq!(nodes.iter().map(|n| n.name_any()).collect::<Vec<_>>(), ["smoke-bind-node-0", "smoke-bind-node-1"]);
    for node in &nodes {
        let taints = node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
        assert!(taints.iter().all(|t| t.key != NOT_READY_TAINT), "{}: not-ready taint left: {taints:?}", node.name_any());
        let status = node.status.as_ref().expect("node status");
        assert_eq!(status.allocatable.as_ref().unwrap()["nvidia.com/gpu"].0, "2");
        let ready = status.conditions.as_ref().unwrap().iter().find(|c| c.type_ == "Ready").expect("Ready condition");
        assert_eq!(ready.status, "True");
        assert_eq!(node.labels()["zone"], "a");
    }

    let q = create_queue(&admin, &queue(&format!("{ns}-q"), 2)).await?;
    assert_eq!(q.status.as_ref().and_then(|s| s.state.as_deref()), Some("Open"), "Queue status written through /status");
    let pg = create_pod_group(&admin, &pod_group(&ns, "pg", 1, Some(&q.name_any()))).await?;
    assert_eq!(pg.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Pending"), "PodGroup status kept on create");
    create_priority_class(&admin, &format!("{ns}-high"), 1000).await?;
    let pod = TestPod::new(&ns, "p")
        .group("pg")
        .requests(&[("cpu", "1"), ("memory", "1Gi")])
        .priority_class(&format!("{ns}-high"))
        .duration_seconds(1)
        .build();
    let stored = create_pod(&admin, &pod).await?;
    assert_eq!(stored.spec.as_ref().and_then(|s| s.priority), Some(1000), "Priority admission resolved the class");

    let kubelet = Kubelet::start(admin.clone(), Some(&ns));
    let scheduler = server.scheduler_client().await?;
    bind_pod(&scheduler, &ns, "p", "smoke-bind-node-0").await?;
    // Binding is not idempotent: a second one is a 409 and counts as failed.
    let again = bind_pod(&scheduler, &ns, "p", "smoke-bind-node-1").await.expect_err("second binding must fail");
    match &again {
        kube::Error::Api(s) => assert_eq!(s.code, 409, "{s:?}"),
        other => panic!("expected a 409, got {other}"),
    }

    let running = wait_for_pod(&admin, &ns, "p", WAIT, |p| phase(p) != "Pending").await?;
    assert_eq!(running.spec.as_ref().unwrap().node_name.as_deref(), Some("smoke-bind-node-0"));
    assert!(matches!(phase(&running), "Running" | "Succeeded"), "phase {}", phase(&running));
    let conditions = running.status.as_ref().unwrap().conditions.clone().unwrap_or_default();
    assert!(
        conditions.iter().any(|c| c.type_ == "PodScheduled" && c.status == "True"),
        "binding's PodScheduled kept: {conditions:?}"
    );
    let done = wait_for_pod(&admin, &ns, "p", WAIT, |p| phase(p) == "Succeeded").await?;
    assert_eq!(done.spec.as_ref().unwrap().node_name.as_deref(), Some("smoke-bind-node-0"));

    let counts = wait_for("two binding lines in the audit log", WAIT, || async {
        let counts = server.audit()?.bindings_of(&ns, "p");
        Ok((counts.succeeded + counts.failed >= 2).then_some(counts))
    })
    .await?;
    assert_eq!((counts.succeeded, counts.failed), (1, 1));
    let by_scheduler = server.audit()?.by_user(SCHEDULER_USER).bindings_of(&ns, "p");
    assert_eq!((by_scheduler.succeeded, by_scheduler.failed), (1, 1));
    assert_eq!(server.audit()?.by_user("admin").bindings_of(&ns, "p").succeeded, 0);

    let errors = kubelet.stop().await;
    assert!(errors.is_empty(), "kubelet errors: {errors:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduler_identity_gets_403_outside_its_role() -> support::Result<()> {
    let server = TestApiserver::shared()?;
    let admin = server.admin_client().await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "smoke-rbac").await?;
    let scheduler = server.scheduler_client().await?;

    // Inside the role: pods and nodes can be read.
    Api::<Pod>::namespaced(scheduler.clone(), &ns).list(&ListParams::default()).await?;
    Api::<Node>::all(scheduler.clone()).list(&ListParams::default()).await?;

    // Outside: secrets, and writing nodes.
    let denied: support::Error =
        Api::<Secret>::namespaced(scheduler.clone(), &ns).list(&ListParams::default()).await.expect_err("secrets").into();
    let status = api_status(&denied).expect("an API error");
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"), "{status:?}");
    assert!(status.message.contains(SCHEDULER_USER), "{}", status.message);

    let node = Node {
        metadata: kube::api::ObjectMeta { name: Some("smoke-rbac-node".into()), ..Default::default() },
        ..Default::default()
    };
    let denied: support::Error =
        Api::<Node>::all(scheduler.clone()).create(&PostParams::default(), &node).await.expect_err("create node").into();
    assert_eq!(api_status(&denied).map(|s| s.code), Some(403));

    let denied = server.audit()?.by_user(SCHEDULER_USER).filter(|e| e.code == 403 && e.namespace == ns);
    assert_eq!(denied.events().len(), 1, "the denied secrets list is audited: {:?}", denied.events());
    assert_eq!(denied.events()[0].resource, "secrets");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubelet_finishes_deleting_bound_pods() -> support::Result<()> {
    let server = TestApiserver::shared()?;
    let admin = server.admin_client().await?;
    let ns = fresh_namespace(&admin, "smoke-delete").await?;
    create_node(&admin, &TestNode::new("smoke-delete-node")).await?;
    let mut pod = TestPod::new(&ns, "victim").build();
    pod.spec.as_mut().unwrap().termination_grace_period_seconds = Some(30);
    create_pod(&admin, &pod).await?;
    bind_pod(&admin, &ns, "victim", "smoke-delete-node").await.map_err(|e| format!("binding: {e}"))?;

    let pods: Api<Pod> = Api::namespaced(admin.clone(), &ns);
    // Delete only once the watch cache has the binding. Once (of ~10 runs, on a loaded machine
    // right after start) this pod was deleted at once instead of gracefully; the likely cause is
    // the graceful-deletion update being tried first on the watch cache's copy (still unbound),
    // which sets the request's grace period to 0. 300 create/bind/delete rounds over one
    // connection did not reproduce it, so this is a suspicion, not a finding.
    wait_for("the watch cache to see the binding", WAIT, || async {
        let cached = pods.get_with("victim", &kube::api::GetParams::any()).await?;
        Ok(cached.spec.and_then(|s| s.node_name).map(|_| ()))
    })
    .await?;
    let deleted = pods.delete("victim", &DeleteParams::default()).await.map_err(|e| format!("deleting: {e}"))?;
    // Without a kubelet a bound pod only gets a deletionTimestamp.
    let terminating = deleted.left().ok_or("the bound pod was deleted at once, not gracefully")?;
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert!(pods.get_opt("victim").await?.is_some(), "the bound pod is still there until a kubelet confirms");

    let kubelet = Kubelet::start(admin.clone(), Some(&ns));
    wait_for("the kubelet to delete the pod", WAIT, || async { Ok(pods.get_opt("victim").await?.is_none().then_some(())) })
        .await?;
    let errors = kubelet.stop().await;
    assert!(errors.is_empty(), "kubelet errors: {errors:?}");
    Ok(())
}

#[test]
fn dropping_a_test_apiserver_stops_it_and_removes_its_folder() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let dir = server.dir().to_path_buf();
    let pids: Vec<u32> = ["etcd.pid", "kube-apiserver.pid"]
        .iter()
        .map(|f| std::fs::read_to_string(dir.join(f)).map_err(support::Error::from).and_then(|s| Ok(s.trim().parse()?)))
        .collect::<support::Result<_>>()?;
    for pid in &pids {
        assert!(alive(*pid), "process {pid} runs while the server is up");
    }
    drop(server);
    for pid in &pids {
        assert!(!alive(*pid), "process {pid} still runs after drop");
    }
    if std::env::var("BASALT_TEST_KEEP").as_deref() != Ok("1") {
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
    Ok(())
}

/// A process that exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}
