//! The live scheduler's status writer against a real kube-apiserver v1.20.2 (tests/support), with
//! the scheduler's identity and `deploy/`'s ClusterRole, on the paths a normal run does not
//! reach:
//! * an eviction decision (the core has no preempt/reclaim yet) fed into the cycle's apply step
//!   ([`Scheduler::apply_decisions`]) and written by [`status::run`]: Warning `Evict` on the
//!   pod, Normal `Evict` on its PodGroup, `Ready=False/Evict` and
//!   `DisruptionTarget=True/PreemptionByScheduler` through `pods/status`, then a DELETE
//!   (volcano-behaviour.md §1.6);
//! * a PodGroup update that conflicts (409, the object changed since it was read) is read again
//!   and retried within the same write, keeping the other writer's change (§1.7);
//! * with binds outstanding, an event waits for them while a PodGroup write queued after it
//!   goes through; it is written once the binds are done.

use crate::{e2e, support};

use basalt_core::decision::{Decisions, Eviction};
use basalt_runtime::live::cycle::{CycleSummary, Outputs, Scheduler};
use basalt_runtime::live::mirror::{BindRequest, Mirror, Object, WatchEvent};
use basalt_runtime::live::outstanding::BindsOutstanding;
use basalt_runtime::live::status::{self, Involved, Write, WriteResult, WriterConfig};
use basalt_runtime::plumbing::limiter::RateLimiter;
use e2e::SCHEDULER_USER;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{
    apply_scheduler_rbac, bind_pod, create_node, create_pod, create_pod_group, fresh_namespace, install_volcano_crds, pod_group,
    TestApiserver, TestNode, TestPod,
};
use tokio::sync::mpsc;

/// The loop's outputs as the runner wires them: writes into the writer's channel; binds are
/// kept to check that an eviction decision makes none.
struct Outs {
    writes: mpsc::UnboundedSender<Write>,
    binds: Mutex<Vec<BindRequest>>,
}

impl Outputs for Outs {
    fn bind(&self, r: BindRequest) {
        self.binds.lock().unwrap().push(r);
    }
    fn write(&self, w: Write) {
        self.writes.send(w).unwrap();
    }
}

/// Runs `status::run` as the scheduler over the writes `feed` queues, until they are all done.
async fn write_all(client: Client, feed: impl FnOnce(&Outs)) -> Vec<WriteResult> {
    let (tx, rx) = mpsc::unbounded_channel();
    let results = Arc::new(Mutex::new(Vec::new()));
    let sink = results.clone();
    let writer =
        tokio::spawn(status::run(client, Arc::new(RateLimiter::new(50.0, 100)), WriterConfig::default(), rx, move |r| {
            sink.lock().unwrap().push(r)
        }));
    let outs = Outs { writes: tx, binds: Mutex::new(Vec::new()) };
    feed(&outs);
    assert!(outs.binds.lock().unwrap().is_empty(), "no binds were decided");
    drop(outs);
    writer.await.unwrap();
    let r = results.lock().unwrap().clone();
    r
}

fn dynamic(obj: &impl serde::Serialize) -> DynamicObject {
    serde_json::from_value(serde_json::to_value(obj).unwrap()).unwrap()
}

fn condition<'a>(p: &'a Pod, type_: &str) -> Option<&'a k8s_openapi::api::core::v1::PodCondition> {
    p.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eviction_and_pod_group_conflict_are_written_as_volcano_does() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let sched = server.scheduler_client().await?;
    let ns = fresh_namespace(&admin, "status").await?;

    // --- Eviction: a bound pod of a PodGroup, in the mirror as the watches would deliver it.
    let node = create_node(&admin, &TestNode::new("evict-node")).await?;
    let pg = create_pod_group(&admin, &pod_group(&ns, "victims", 1, None)).await?;
    create_pod(&admin, &TestPod::new(&ns, "victim").group("victims").requests(&[("cpu", "1")]).build()).await?;
    bind_pod(&admin, &ns, "victim", "evict-node").await?;
    let pod = Api::<Pod>::namespaced(admin.clone(), &ns).get("victim").await?;
    let mut mirror = Mirror::new(vec!["volcano".into()], vec![]);
    mirror.handle(WatchEvent::Apply(Object::Node(Box::new(node))));
    mirror.handle(WatchEvent::Apply(Object::PodGroup(Box::new(dynamic(&pg)))));
    mirror.handle(WatchEvent::Apply(Object::Pod(Box::new(pod.clone()))));
    let id = mirror.cluster.pod_id(&ns, "victim").ok_or("the mirror holds the bound pod")?;
    let mut sch = Scheduler::new(mirror, 0, 0);
    let decisions = Decisions { evictions: vec![Eviction { pod: id, reason: "preempt".into() }], ..Decisions::default() };
    let mut summary = CycleSummary::default();
    let results = write_all(sched.clone(), |out| sch.apply_decisions(&decisions, out, &mut summary)).await;
    assert_eq!(summary.writes, 3, "pod event, PodGroup event, eviction");
    let kinds: Vec<(&str, &str)> = results.iter().map(|r| (r.kind, r.object.as_str())).collect();
    assert_eq!(results.len(), 3, "{kinds:?}");
    for r in &results {
        assert!(r.outcome.is_ok(), "{} {}: {:?}", r.kind, r.object, r.outcome);
    }
    let evict = results.iter().find(|r| r.kind == "evict").ok_or("an evict write")?;
    assert_eq!(evict.calls, 3, "GET, PUT pods/status, DELETE");

    let after = Api::<Pod>::namespaced(admin.clone(), &ns).get_opt("victim").await?;
    if let Some(p) = &after {
        assert!(p.metadata.deletion_timestamp.is_some(), "the pod is being deleted: {:?}", p.metadata);
        let ready = condition(p, "Ready").ok_or("Ready condition")?;
        assert_eq!((ready.status.as_str(), ready.reason.as_deref()), ("False", Some("Evict")));
        assert_eq!(ready.message.as_deref(), Some("Pod is evicted, because of preempt"));
        let dt = condition(p, "DisruptionTarget").ok_or("DisruptionTarget condition")?;
        assert_eq!((dt.status.as_str(), dt.reason.as_deref()), ("True", Some("PreemptionByScheduler")));
        assert_eq!(dt.message.as_deref(), Some("volcano: preempting to accommodate a higher priority pod"));
    }
    let audit = server.audit()?.by_user(SCHEDULER_USER);
    let on_victim = audit.filter(|e| e.resource == "pods" && e.name == "victim" && e.namespace == ns);
    let status_put = on_victim.filter(|e| e.verb == "update" && e.subresource == "status" && e.succeeded());
    assert_eq!(status_put.events().len(), 1, "conditions written through pods/status: {:?}", on_victim.events());
    let deletes = on_victim.filter(|e| e.verb == "delete" && e.subresource.is_empty() && e.succeeded());
    assert_eq!(deletes.events().len(), 1, "one DELETE by the scheduler: {:?}", on_victim.events());
    let evs = e2e::events(&admin, &ns).await?;
    let on = |kind: &str, name: &str| {
        evs.iter()
            .filter(|e| e.reason.as_deref() == Some("Evict"))
            .filter(|e| e.involved_object.kind.as_deref() == Some(kind) && e.involved_object.name.as_deref() == Some(name))
            .map(|e| (e.type_.clone().unwrap_or_default(), e.message.clone().unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    assert_eq!(on("Pod", "victim"), vec![("Warning".to_string(), "Pod is evicted, because of preempt".to_string())]);
    assert_eq!(on("PodGroup", "victims"), vec![("Normal".to_string(), "preempt".to_string())]);

    // --- PodGroup conflict: the scheduler's copy is one version behind when it writes.
    let res = ApiResource::erase::<basalt_runtime::crd::PodGroup>(&());
    let groups: Api<DynamicObject> = Api::namespaced_with(admin.clone(), &ns, &res);
    let created = create_pod_group(&admin, &pod_group(&ns, "contended", 2, None)).await?;
    let mut stale = dynamic(&created);
    let label = serde_json::json!({"metadata": {"labels": {"changed-by": "controller"}}});
    groups.patch("contended", &PatchParams::default(), &Patch::Merge(&label)).await?;
    stale.data["status"] = serde_json::json!({"phase": "Running", "running": 2, "succeeded": 0, "failed": 0});
    let results =
        write_all(sched.clone(), |out| out.write(Write::PodGroup { object: Box::new(stale), waits_for_binds: false })).await;
    assert_eq!(results.len(), 1);
    let r = &results[0];
    let written = r.outcome.clone()?.ok_or("the written PodGroup comes back")?;
    assert_eq!(r.calls, 3, "PUT (409), GET, PUT");
    assert_eq!(written.data["status"]["phase"], "Running");
    let now = groups.get("contended").await?;
    assert_eq!(now.data["status"]["phase"], "Running", "the decided status landed within the write");
    assert_eq!(now.labels().get("changed-by").map(String::as_str), Some("controller"), "the other writer's change is kept");
    let puts = server.audit()?.by_user(SCHEDULER_USER).filter(|e| e.resource == "podgroups" && e.name == "contended");
    let codes: Vec<(String, u16)> = puts.events().iter().map(|e| (e.verb.clone(), e.code)).collect();
    assert_eq!(codes, vec![("update".into(), 409), ("get".into(), 200), ("update".into(), 200)]);

    // --- Events and reporting PodGroup updates wait for outstanding binds; an urgent update does not.
    let binds = Arc::new(BindsOutstanding::new());
    binds.add();
    let cfg = WriterConfig { binds_outstanding: Some(binds.clone()), ..WriterConfig::default() };
    let (tx, rx) = mpsc::unbounded_channel();
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<WriteResult>();
    let writer = tokio::spawn(status::run(sched.clone(), Arc::new(RateLimiter::new(50.0, 100)), cfg, rx, move |r| {
        let _ = done_tx.send(r);
    }));
    let involved = Involved {
        kind: "PodGroup",
        api_version: "scheduling.volcano.sh/v1beta1",
        namespace: ns.clone(),
        name: "contended".into(),
        uid: now.uid().unwrap_or_default(),
    };
    tx.send(Write::Event { involved, type_: "Normal", reason: "Scheduled".into(), message: "pod group is ready".into() })?;
    let mut inqueue = groups.get("contended").await?;
    inqueue.data["status"]["phase"] = "Inqueue".into();
    tx.send(Write::PodGroup { object: Box::new(inqueue), waits_for_binds: false })?;
    let first = done_rx.recv().await.ok_or("a result")?;
    assert_eq!(first.kind, "podgroup", "the Inqueue write queued after the event is not held up by it");
    assert!(first.outcome.is_ok(), "{:?}", first.outcome);
    assert_eq!(groups.get("contended").await?.data["status"]["phase"], "Inqueue");
    let mut running = groups.get("contended").await?;
    running.data["status"]["phase"] = "Running".into();
    tx.send(Write::PodGroup { object: Box::new(running), waits_for_binds: true })?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(done_rx.try_recv().is_err(), "the event and the Running update still wait for the outstanding bind");
    assert_eq!(groups.get("contended").await?.data["status"]["phase"], "Inqueue", "the Running update is not written yet");
    binds.done();
    let mut rest = Vec::new();
    for _ in 0..2 {
        let r = done_rx.recv().await.ok_or("a deferred write's result")?;
        assert!(r.outcome.is_ok(), "{}: {:?}", r.kind, r.outcome);
        rest.push(r.kind);
    }
    rest.sort_unstable();
    assert_eq!(rest, vec!["event", "podgroup"], "both deferred writes landed once the binds were done");
    assert_eq!(groups.get("contended").await?.data["status"]["phase"], "Running");
    drop(tx);
    writer.await?;
    let evs = e2e::events(&admin, &ns).await?;
    assert!(
        evs.iter().any(|e| e.involved_object.name.as_deref() == Some("contended") && e.reason.as_deref() == Some("Scheduled")),
        "the deferred event was written"
    );
    Ok(())
}
