//! The PodGroup events of a gang that fits, as Volcano master records them (cache.go
//! `RecordJobStatusEvent` after `jobStatus`, volcano-behaviour.md §1.6–1.7): in the cycle that
//! dispatches it, its tasks are `Binding`, which is not a scheduled status (`ScheduledStatus`:
//! Running, Bound, Succeeded, Failed; the Releasing-with-node rule of d725ce4db adds only pods
//! already on a node), so the phase stays `Inqueue` and Volcano records the Warning
//! `Unschedulable` "0/3 tasks in gang unschedulable: pod group is ready, 3 Binding, 3
//! minAvailable" (and no `Scheduled`); once the pods are bound the phase becomes `Running`, the
//! status changed, and it records Normal `Scheduled` "pod group is ready", once.

use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta, SchedulerConf};

fn res(cpu: i64, pods: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), cpu << 20), ("pods".to_string(), pods)].into_iter().collect()
}

fn pod(i: usize, node: &str) -> PodSpec {
    PodSpec {
        namespace: "ns".into(),
        name: format!("g-{i}"),
        uid: format!("u{i}"),
        group: Some("g".into()),
        resreq: res(1000, 1),
        node_name: node.into(),
        phase: if node.is_empty() { PodPhase::Pending } else { PodPhase::Running },
        ..Default::default()
    }
}

fn events(c: &Cluster, conf: &SchedulerConf, cycle: u64) -> (Vec<(String, String, String)>, PodGroupPhase, usize) {
    let d = run_cycle(c, conf, &CycleOptions { cycle, ..Default::default() });
    let ev = d.events.iter().map(|e| (e.kind.to_string(), e.reason.to_string(), e.message.to_string())).collect();
    (ev, d.pod_groups[0].phase, d.binds.len())
}

#[test]
fn gang_dispatched_this_cycle_gets_volcanos_warning_then_one_scheduled_event() {
    let conf = SchedulerConf::default();
    let mut c = Cluster::new();
    c.apply(Delta::Node(NodeSpec { name: "n1".into(), allocatable: res(8000, 110), ready: true, ..Default::default() })).unwrap();
    c.apply(Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() })).unwrap();
    let group = PodGroupSpec {
        namespace: "ns".into(),
        name: "g".into(),
        uid: "g-uid".into(),
        min_member: 3,
        queue: "default".into(),
        phase: PodGroupPhase::Inqueue,
        ..Default::default()
    };
    c.apply(Delta::PodGroup(group.clone())).unwrap();
    for i in 0..3 {
        c.apply(Delta::Pod(pod(i, ""))).unwrap();
    }

    let (ev, phase, binds) = events(&c, &conf, 1);
    assert_eq!(binds, 3, "the gang fits");
    assert_eq!(phase, PodGroupPhase::Inqueue, "Binding tasks are not scheduled yet: the phase is kept");
    assert_eq!(
        ev,
        [(
            "Warning".to_string(),
            "Unschedulable".to_string(),
            "0/3 tasks in gang unschedulable: pod group is ready, 3 Binding, 3 minAvailable".to_string()
        )],
        "what Volcano master records in the dispatch cycle"
    );

    // The binds land: pods on the node and running; the PodGroup as the first cycle wrote it.
    for i in 0..3 {
        c.apply(Delta::Pod(pod(i, "n1"))).unwrap();
    }
    let (ev, phase, binds) = events(&c, &conf, 2);
    assert_eq!((phase, binds), (PodGroupPhase::Running, 0));
    assert_eq!(ev, [("Normal".to_string(), "Scheduled".to_string(), "pod group is ready".to_string())]);

    // Written Running: nothing changed, no event again.
    let d = run_cycle(&c, &conf, &CycleOptions { cycle: 2, ..Default::default() });
    let mut g = group;
    g.phase = PodGroupPhase::Running;
    g.conditions = d.pod_groups[0].conditions.clone();
    c.apply(Delta::PodGroup(g)).unwrap();
    let (ev, phase, _) = events(&c, &conf, 3);
    assert_eq!(phase, PodGroupPhase::Running);
    assert!(ev.is_empty(), "an unchanged Running PodGroup gets no event: {ev:?}");
}
