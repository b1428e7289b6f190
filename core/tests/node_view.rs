//! The node view that `predicates` and `nodeorder` share (issue 10 rule 4,
//! `session::node_view`): what it holds at session open and how the predicates plugin's event
//! handler changes it on allocate, pipeline, evict and discard.

use basalt_core::framework::Session;
use basalt_core::model::{NodeSpec, PodGroupPhase, PodGroupSpec, PodPhase, PodSpec, QueueSpec};
use basalt_core::resource::{ResourceList, CPU};
use basalt_core::session::tables::{NodeIdx, TaskIdx};
use basalt_core::{Cluster, CycleOptions, Delta, SchedulerConf};

fn res(cpu: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), 1 << 30), ("pods".to_string(), 1)].into_iter().collect()
}

fn cluster() -> Cluster {
    let mut c = Cluster::new();
    let alloc = res(8000).into_iter().map(|(k, v)| (k, if v == 1 { 110 } else { v * 4 })).collect::<ResourceList>();
    c.apply(Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() })).unwrap();
    c.apply(Delta::Node(NodeSpec {
        name: "n1".into(),
        capacity: alloc.clone(),
        allocatable: alloc,
        ready: true,
        ..Default::default()
    }))
    .unwrap();
    c.apply(Delta::PodGroup(PodGroupSpec {
        namespace: "ns".into(),
        name: "pg".into(),
        uid: "ns/pg".into(),
        min_member: 1,
        queue: "default".into(),
        phase: PodGroupPhase::Inqueue,
        ..Default::default()
    }))
    .unwrap();
    let pod = |name: &str, node: &str, phase: PodPhase, deleting: bool| PodSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("ns/{name}"),
        group: Some("pg".into()),
        scheduler_name: "volcano".into(),
        node_name: node.into(),
        phase,
        deleting,
        resreq: res(1000),
        nonzero_cpu_milli: 1000,
        nonzero_memory_bytes: 1 << 30,
        ..Default::default()
    };
    // Task rows follow the job's pods in name order: a-running, b-releasing, c-pending.
    c.apply(Delta::Pod(pod("a-running", "n1", PodPhase::Running, false))).unwrap();
    c.apply(Delta::Pod(pod("b-releasing", "n1", PodPhase::Running, true))).unwrap();
    c.apply(Delta::Pod(pod("c-pending", "", PodPhase::Pending, false))).unwrap();
    c
}

fn task(ssn: &Session<'_>, name: &str) -> TaskIdx {
    (0..ssn.state.tasks.len).map(|i| TaskIdx(i as u32)).find(|&t| ssn.state.tasks.rec[t.ix()].spec.name == name).unwrap()
}

#[test]
fn view_starts_with_releasing_pods_and_follows_the_predicates_event_handler() {
    let c = cluster();
    let conf = SchedulerConf::default(); // has predicates
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let (running, releasing, pending) = (task(&ssn, "a-running"), task(&ssn, "b-releasing"), task(&ssn, "c-pending"));
    assert!(ssn.state.in_view(running) && ssn.state.in_view(releasing) && !ssn.state.in_view(pending));
    assert_eq!(ssn.state.view.pods(NodeIdx(0)), 2, "Releasing pods count at session open");
    assert_eq!(ssn.state.view.requested(NodeIdx(0))[CPU], 2000);

    // Pipeline: the pod joins the view once, with its request.
    let mut st = ssn.statement();
    ssn.pipeline(&mut st, pending, NodeIdx(0));
    assert!(ssn.state.in_view(pending));
    assert_eq!((ssn.state.view.pods(NodeIdx(0)), ssn.state.view.nonzero_cpu(NodeIdx(0))), (3, 3000));
    // Evict: the evicted pod stops counting at once.
    ssn.evict(&mut st, running, "test");
    assert!(!ssn.state.in_view(running));
    assert_eq!(ssn.state.view.requested(NodeIdx(0))[CPU], 2000);
    // Discard restores the view exactly.
    ssn.discard(st);
    assert!(ssn.state.in_view(running) && !ssn.state.in_view(pending));
    assert_eq!((ssn.state.view.pods(NodeIdx(0)), ssn.state.view.nonzero_cpu(NodeIdx(0))), (2, 2000));
}

#[test]
fn without_predicates_the_view_does_not_change_in_the_session() {
    let c = cluster();
    let conf =
        SchedulerConf::parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: nodeorder\n").unwrap().0;
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let pending = task(&ssn, "c-pending");
    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, pending, NodeIdx(0)));
    assert!(!ssn.state.in_view(pending), "only the predicates plugin adds pods to the view");
    assert_eq!(ssn.state.view.pods(NodeIdx(0)), 2);
    assert_eq!(ssn.state.used(NodeIdx(0), CPU), 3000, "the session's own accounting still sees it");
}
