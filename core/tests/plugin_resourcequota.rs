//! The `resourcequota` plugin (volcano-behaviour.md §3 resourcequota): enqueue admits a PodGroup
//! only while `used + already enqueued this session + minResources ≤ hard` for every quota of
//! its namespace on the resources both name, and records Volcano's event when it refuses.

use basalt_core::conf::SchedulerConf;
use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta};

fn res(pairs: &[(&str, i64)]) -> ResourceList {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn cluster() -> Cluster {
    let mut c = Cluster::new();
    c.apply(Delta::Node(NodeSpec {
        name: "n1".into(),
        allocatable: res(&[("cpu", 64000), ("memory", 64 << 30), ("pods", 110)]),
        ready: true,
        ..Default::default()
    }))
    .unwrap();
    c.apply(Delta::Queue(QueueSpec { name: "q1".into(), weight: 1, reclaimable: true, ..Default::default() })).unwrap();
    c
}

fn group(c: &mut Cluster, ns: &str, name: &str, created: i64, min: Option<ResourceList>) {
    c.apply(Delta::PodGroup(PodGroupSpec {
        namespace: ns.into(),
        name: name.into(),
        creation_ms: created,
        min_member: 1,
        queue: "q1".into(),
        min_resources: min,
        phase: PodGroupPhase::Pending,
        ..Default::default()
    }))
    .unwrap();
}

fn quota(c: &mut Cluster, ns: &str, hard: ResourceList, used: ResourceList) {
    c.apply(Delta::ResourceQuota(ResourceQuotaSpec { namespace: ns.into(), name: "q".into(), hard, used })).unwrap();
}

/// Phase of every PodGroup (`ns/name`) and the enqueue events (the session close's Warning
/// events about unready gangs left out), after one enqueue.
fn run(c: &Cluster) -> (Vec<(String, PodGroupPhase)>, Vec<String>) {
    let conf = SchedulerConf::parse("actions: enqueue\ntiers:\n- plugins:\n  - name: resourcequota\n").unwrap().0;
    let d = run_cycle(c, &conf, &CycleOptions::default());
    let phases = d
        .pod_groups
        .iter()
        .map(|g| {
            let spec = &c.pod_group(g.group).unwrap().spec;
            (format!("{}/{}", spec.namespace, spec.name), g.phase)
        })
        .collect();
    (phases, d.events.iter().filter(|e| e.kind == "Normal").map(|e| format!("{} {} {}", e.kind, e.reason, e.message)).collect())
}

#[test]
fn admits_while_used_plus_enqueued_fits_hard_then_refuses_with_volcanos_event() {
    let mut c = cluster();
    quota(&mut c, "ns", res(&[("cpu", 4000), ("memory", 8 << 30)]), res(&[("cpu", 1000), ("memory", 1 << 30)]));
    group(&mut c, "ns", "first", 1, Some(res(&[("cpu", 2000), ("memory", 1 << 30)])));
    group(&mut c, "ns", "second", 2, Some(res(&[("cpu", 1500), ("memory", 1 << 30)])));
    group(&mut c, "ns", "third", 3, Some(res(&[("cpu", 1000), ("memory", 1 << 30)])));
    let (phases, events) = run(&c);
    assert_eq!(
        phases,
        [
            ("ns/first".to_string(), PodGroupPhase::Inqueue),
            // 1 used + 2 enqueued + 1.5 > 4.
            ("ns/second".to_string(), PodGroupPhase::Pending),
            // 1 used + 2 enqueued + 1 = 4: fits exactly.
            ("ns/third".to_string(), PodGroupPhase::Inqueue),
        ]
    );
    assert_eq!(
        events,
        ["Normal Unschedulable resource quota insufficient, requested: map[cpu:1500m], used: map[cpu:1], limited: map[cpu:4]"]
    );
}

#[test]
fn only_names_in_both_minresources_and_hard_are_limited() {
    let mut c = cluster();
    // `requests.cpu` is not the name `cpu`, as Volcano's quota.Mask compares names literally.
    quota(&mut c, "ns", res(&[("requests.cpu", 1000), ("memory", 1 << 30)]), ResourceList::new());
    group(&mut c, "ns", "big-cpu", 1, Some(res(&[("cpu", 8000)])));
    group(&mut c, "ns", "big-mem", 2, Some(res(&[("memory", 2 << 30)])));
    let (phases, events) = run(&c);
    assert_eq!(phases[0].1, PodGroupPhase::Inqueue);
    assert_eq!(phases[1].1, PodGroupPhase::Pending);
    assert_eq!(
        events,
        ["Normal Unschedulable resource quota insufficient, requested: map[memory:2Gi], used: map[], limited: map[memory:1Gi]"]
    );
}

#[test]
fn other_namespaces_and_groups_without_minresources_are_not_limited() {
    let mut c = cluster();
    quota(&mut c, "ns", res(&[("cpu", 0)]), ResourceList::new());
    group(&mut c, "ns", "no-min", 1, None);
    group(&mut c, "other", "big", 2, Some(res(&[("cpu", 8000)])));
    let (phases, events) = run(&c);
    assert!(phases.iter().all(|(_, p)| *p == PodGroupPhase::Inqueue), "{phases:?}");
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn every_quota_of_the_namespace_must_fit() {
    let mut c = cluster();
    quota(&mut c, "ns", res(&[("cpu", 8000)]), ResourceList::new());
    c.apply(Delta::ResourceQuota(ResourceQuotaSpec {
        namespace: "ns".into(),
        name: "gpus".into(),
        hard: res(&[("nvidia.com/gpu", 2000)]),
        used: res(&[("nvidia.com/gpu", 2000)]),
    }))
    .unwrap();
    group(&mut c, "ns", "gpu", 1, Some(res(&[("cpu", 1000), ("nvidia.com/gpu", 1000)])));
    let (phases, events) = run(&c);
    assert_eq!(phases[0].1, PodGroupPhase::Pending);
    assert_eq!(
        events,
        ["Normal Unschedulable resource quota insufficient, requested: map[nvidia.com/gpu:1], used: map[nvidia.com/gpu:2], limited: map[nvidia.com/gpu:2]"]
    );
    // Deleting the full quota admits it.
    c.apply(Delta::ResourceQuotaDeleted { namespace: "ns".into(), name: "gpus".into() }).unwrap();
    assert_eq!(run(&c).0[0].1, PodGroupPhase::Inqueue);
}
