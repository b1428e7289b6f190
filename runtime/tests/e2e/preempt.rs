//! `basalt scheduler` preempting through a real kube-apiserver v1.20.2 (tests/support), with the
//! identity and ClusterRole of `deploy/` and a conf running `enqueue, allocate, preempt`:
//! * a full node (two low-priority pods Running) and a high-priority pod of the same queue
//!   arriving: the scheduler evicts one victim (Warning `Evict` event, one DELETE), writes the
//!   preemptor's `status.nominatedNodeName` with its `PodScheduled=False` condition, and binds
//!   the preemptor there once the victim is gone; the nomination stays after the bind (Volcano
//!   never clears it; volcano-behaviour.md §1.6, §2 preempt);
//! * `/metrics` afterwards: `volcano_total_preemption_attempts`,
//!   `volcano_pod_preemption_victims`, `volcano_eviction_transactions_total{action="preempt"}`
//!   and the queue's `volcano_queue_inqueue_*` gauge (§8.1).

use crate::{e2e, support};

use e2e::process::SchedulerProcess;
use e2e::{events, free_port, http_get, metric, node_of, pod_scheduled, pods, SCHEDULER_USER};
use std::time::Duration;
use support::{
    apply_scheduler_rbac, create_pod, create_pod_group, create_priority_class, create_queue, fresh_namespace,
    install_volcano_crds, pod_group, queue, wait_for, wait_for_every, Kubelet, TestApiserver, TestNode, TestPod,
};

const CONF: &str = "actions: \"enqueue, allocate, preempt\"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preemptor_is_nominated_then_bound_and_preemption_is_counted() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "preempt").await?;
    support::create_node(
        &admin,
        &TestNode::new("pre-node").allocatable("cpu", "4").allocatable("memory", "8Gi").allocatable("pods", "110"),
    )
    .await?;
    create_priority_class(&admin, "low-priority", 10).await?;
    create_priority_class(&admin, "high-priority", 1000).await?;
    create_queue(&admin, &queue("pq", 1)).await?;
    let kubelet = Kubelet::start(admin.clone(), Some(&ns));

    let conf = server.dir().join("preempt.conf");
    std::fs::write(&conf, CONF)?;
    let mport = free_port();
    let listen = format!("--listen-address=127.0.0.1:{mport}");
    let conf_flag = format!("--scheduler-conf={}", conf.display());
    let mut sched = SchedulerProcess::start(
        server.dir(),
        "scheduler",
        &server.scheduler_kubeconfig(),
        &["--leader-elect=false", "--schedule-period=1s", "--enable-metrics", &listen, &conf_flag],
    )?;
    let log = |s: &SchedulerProcess| {
        let t = s.log_text();
        let l: Vec<&str> = t.lines().collect();
        l[l.len().saturating_sub(30)..].join("\n")
    };

    // Two low-priority pods fill the node.
    let mut low = pod_group(&ns, "low", 1, Some("pq"));
    low.spec.priority_class_name = Some("low-priority".into());
    create_pod_group(&admin, &low).await?;
    for name in ["low-1", "low-2"] {
        let p = TestPod::new(&ns, name).group("low").priority_class("low-priority").requests(&[("cpu", "2"), ("memory", "1Gi")]);
        create_pod(&admin, &p.build()).await?;
    }
    let running = wait_for("both low pods Running", Duration::from_secs(60), || async {
        let all = pods(&admin, &ns).await?;
        let n = ["low-1", "low-2"]
            .iter()
            .filter(|n| all.get(**n).and_then(|p| p.status.as_ref()?.phase.as_deref()) == Some("Running"))
            .count();
        Ok((n == 2).then_some(()))
    })
    .await;
    if let Err(e) = running {
        return Err(format!("{e}\n{}", log(&sched)).into());
    }

    // A high-priority pod of the same queue arrives: no room without an eviction.
    let mut high = pod_group(&ns, "high", 1, Some("pq"));
    high.spec.priority_class_name = Some("high-priority".into());
    create_pod_group(&admin, &high).await?;
    let p =
        TestPod::new(&ns, "high-1").group("high").priority_class("high-priority").requests(&[("cpu", "2"), ("memory", "1Gi")]);
    create_pod(&admin, &p.build()).await?;
    let bound = wait_for("high-1 bound", Duration::from_secs(90), || async {
        let all = pods(&admin, &ns).await?;
        Ok(all.get("high-1").filter(|p| !node_of(p).is_empty()).cloned())
    })
    .await;
    let high1 = match bound {
        Ok(p) => p,
        Err(e) => return Err(format!("{e}\n{}", log(&sched)).into()),
    };
    assert_eq!(node_of(&high1), "pre-node");
    let nominated = high1.status.as_ref().and_then(|s| s.nominated_node_name.clone());
    assert_eq!(nominated.as_deref(), Some("pre-node"), "the preemptor was nominated on the victims' node and it is kept");
    // (Its PodScheduled condition is True now: the binding sets it.)
    assert_eq!(pod_scheduled(&high1).map(|c| c.0), Some("True".to_string()));

    // One victim: deleted by the scheduler, with its Evict event; the other still runs.
    let audit = server.audit()?.by_user(SCHEDULER_USER);
    let deletes = audit.filter(|e| e.resource == "pods" && e.verb == "delete" && e.namespace == ns && e.succeeded());
    let victims: Vec<String> = deletes.events().iter().map(|e| e.name.clone()).collect();
    assert_eq!(victims.len(), 1, "one eviction: {victims:?}");
    assert!(victims[0].starts_with("low-"), "{victims:?}");
    let all = pods(&admin, &ns).await?;
    let survivor = if victims[0] == "low-1" { "low-2" } else { "low-1" };
    assert_eq!(all.get(survivor).map(node_of), Some("pre-node"), "the other low pod keeps running");
    // Events are written asynchronously: wait for the victim's before counting.
    let evs = wait_for_every("the victim's Evict event", Duration::from_secs(30), Duration::from_millis(500), || async {
        let evs = events(&admin, &ns).await?;
        let has = evs
            .iter()
            .any(|e| e.reason.as_deref() == Some("Evict") && e.involved_object.name.as_deref() == Some(victims[0].as_str()));
        Ok(has.then_some(evs))
    })
    .await?;
    let evict: Vec<_> = evs
        .iter()
        .filter(|e| e.reason.as_deref() == Some("Evict") && e.involved_object.name.as_deref() == Some(victims[0].as_str()))
        .collect();
    assert_eq!(evict.len(), 1, "{evict:?}");
    assert_eq!(evict[0].message.as_deref(), Some("Pod is evicted, because of preempt"));
    let counts = audit.binding_counts();
    assert_eq!(counts.get(&(ns.clone(), "high-1".to_string())).map(|c| c.succeeded), Some(1), "high-1 bound once");
    let status_writes =
        audit.filter(|e| e.resource == "pods" && e.subresource == "status" && e.name == "high-1" && e.verb == "update");
    assert!(!status_writes.events().is_empty(), "the nomination went through pods/status");

    // /metrics: the preemption counters and the queue's inqueue gauge.
    let url = format!("http://127.0.0.1:{mport}/metrics");
    let text = wait_for("preemption metrics", Duration::from_secs(30), || async {
        let (code, body) = http_get(&url).await?;
        // A cycle after the victim is gone: the queue holds the survivor and high-1.
        let done = code == 200
            && metric(&body, "volcano_eviction_transactions_total{action=\"preempt\"}").is_some()
            && metric(&body, "volcano_queue_allocated_milli_cpu{queue_name=\"pq\"}") == Some(4000.0);
        Ok(done.then_some(body))
    })
    .await?;
    let m = |series: &str| metric(&text, series).ok_or_else(|| format!("{series} missing from /metrics:\n{text}"));
    assert_eq!(m("volcano_eviction_transactions_total{action=\"preempt\"}")?, 1.0, "one committed statement with evictions");
    assert!(m("volcano_total_preemption_attempts")? >= 1.0);
    let victims_gauge = m("volcano_pod_preemption_victims")?;
    assert!((1.0..=2.0).contains(&victims_gauge), "the node's preemptable pods: {victims_gauge}");
    assert!(m("volcano_queue_inqueue_milli_cpu{queue_name=\"pq\"}")? >= 0.0);
    assert_eq!(m("volcano_queue_allocated_milli_cpu{queue_name=\"pq\"}")?, 4000.0, "the survivor and high-1");

    assert_eq!(sched.terminate(), Some(0), "graceful stop on SIGTERM");
    let errors = kubelet.stop().await;
    assert!(errors.is_empty(), "kubelet errors: {errors:?}");
    Ok(())
}
