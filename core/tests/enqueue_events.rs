//! Enqueue records the PodGroup event of the plugin that refused a job, as Volcano's plugins do.

use basalt_core::conf::SchedulerConf;
use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta};

fn res(cpu: i64, mem: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), mem)].into_iter().collect()
}

fn cluster(capability: ResourceList, min: ResourceList) -> Cluster {
    let mut c = Cluster::new();
    let mut alloc = res(4000, 8 << 30);
    alloc.insert("pods".into(), 110);
    c.apply(Delta::Node(NodeSpec { name: "n1".into(), allocatable: alloc, ready: true, ..Default::default() })).unwrap();
    c.apply(Delta::Queue(QueueSpec { name: "q1".into(), weight: 1, capability, reclaimable: true, ..Default::default() }))
        .unwrap();
    c.apply(Delta::PodGroup(PodGroupSpec {
        namespace: "ns".into(),
        name: "pg".into(),
        min_member: 1,
        queue: "q1".into(),
        min_resources: Some(min),
        phase: PodGroupPhase::Pending,
        ..Default::default()
    }))
    .unwrap();
    c
}

fn messages(c: &Cluster, conf: &str) -> (Vec<String>, PodGroupPhase) {
    let conf = SchedulerConf::parse(conf).unwrap().0;
    let d = run_cycle(c, &conf, &CycleOptions::default());
    (d.events.iter().map(|e| e.message.to_string()).collect(), d.pod_groups[0].phase)
}

#[test]
fn proportion_refusal_records_queue_quota_event() {
    let c = cluster(res(1000, 1 << 30), res(8000, 8 << 30));
    let (events, phase) = messages(&c, "actions: enqueue\ntiers:\n- plugins:\n  - name: proportion\n");
    assert!(events.iter().any(|m| m == "queue resource quota insufficient"), "{events:?}");
    assert_eq!(phase, PodGroupPhase::Pending);
}

#[test]
fn overcommit_refusal_records_overused_event_and_admits_what_fits() {
    let c = cluster(ResourceList::new(), res(6000, 1 << 30));
    let (events, phase) = messages(&c, "actions: enqueue\ntiers:\n- plugins:\n  - name: overcommit\n");
    assert!(events.iter().any(|m| m == "resource in cluster is overused"), "6 cpu > 4 cpu x 1.2: {events:?}");
    assert_eq!(phase, PodGroupPhase::Pending);
    let c = cluster(ResourceList::new(), res(4500, 1 << 30));
    let (events, phase) = messages(&c, "actions: enqueue\ntiers:\n- plugins:\n  - name: overcommit\n");
    assert!(!events.iter().any(|m| m == "resource in cluster is overused"), "4.5 cpu <= 4.8: {events:?}");
    assert_eq!(phase, PodGroupPhase::Inqueue);
}
