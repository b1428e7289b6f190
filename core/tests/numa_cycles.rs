//! numa-aware across cycles (Volcano `AddUnassignedNumaPods` / `RefreshNumaSchedulerInfoByCrd`):
//! the CPUs the plugin gave a pod it bound stay out of the free CPUs of later cycles until the
//! node's Numatopology lists the pod (then the Numatopology's allocatable is the truth again),
//! and go with the pod when it is deleted or ends.

mod support;

use basalt_core::cluster::Delta;
use basalt_core::decision::Decisions;
use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, SchedulerConf};

fn conf() -> SchedulerConf {
    let text = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: numa-aware\n  - name: proportion\n";
    SchedulerConf::parse(text).unwrap().0
}

/// Numatopology of `n1`: NUMA node 0 = CPUs 0-3, NUMA node 1 = CPUs 4-7, single-numa-node,
/// static CPU manager; `allocatable` free, `listed` pods reported by the exporter.
fn topology(allocatable: &[u32], listed: &[&str]) -> Delta {
    Delta::Numatopology(NumatopologySpec {
        name: "n1".into(),
        topology_manager_policy: "single-numa-node".into(),
        cpu_manager_policy: "static".into(),
        cpu_allocatable: Some(allocatable.to_vec()),
        cpu_capacity: 8,
        cpus: (0..8).map(|id| NumaCpu { id, numa: id / 4, socket: id / 4, core: id % 4 }).collect(),
        pod_allocations: listed
            .iter()
            .map(|n| NumaPodAllocation { uid: format!("uid-{n}"), namespace: "ns".into(), name: n.to_string() })
            .collect(),
        ..Default::default()
    })
}

/// A pending Guaranteed pod asking 4 whole CPUs under `single-numa-node`, with its NUMA request.
fn pod(c: &mut Cluster, name: &str) {
    let resreq: ResourceList = [("cpu".to_string(), 4000), ("memory".to_string(), 1 << 30), ("pods".to_string(), 1)].into();
    c.apply(Delta::Pod(PodSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        group: Some("pg".into()),
        scheduler_name: "volcano".into(),
        resreq,
        ..Default::default()
    }))
    .unwrap();
    let numa = PodNuma {
        policy: "single-numa-node".into(),
        guaranteed: true,
        containers: vec![NumaContainer { name: "c".into(), cpus: 4 }],
    };
    c.apply(Delta::PodNuma { namespace: "ns".into(), name: name.into(), numa }).unwrap();
}

fn cluster() -> Cluster {
    let mut c = Cluster::new();
    c.apply(support::default_queue()).unwrap();
    let alloc: ResourceList = [("cpu".to_string(), 32_000), ("memory".to_string(), 64 << 30), ("pods".to_string(), 110)].into();
    c.apply(support::ready_node("n1", alloc)).unwrap();
    c.apply(topology(&(0..8).collect::<Vec<_>>(), &[])).unwrap();
    c.apply(support::running_group("ns", "pg")).unwrap();
    c
}

fn cycle(c: &Cluster, n: u64) -> Decisions {
    run_cycle(c, &conf(), &CycleOptions { seed: 1, cycle: n, now_ms: 0 })
}

/// What the driver does after a cycle: the bound pods run on their node, then the CPUs the
/// plugin assigned them are kept (the decisions' `PodNumaAssumed` deltas).
fn apply(c: &mut Cluster, d: &Decisions) {
    let mut deltas = Vec::new();
    for b in &d.binds {
        let mut spec = c.pod(b.pod).unwrap().spec.clone();
        spec.node_name = c.node(b.node).unwrap().spec.name.clone();
        spec.phase = PodPhase::Running;
        deltas.push(Delta::Pod(spec));
    }
    deltas.extend(d.numa_deltas(c));
    for x in deltas {
        c.apply(x).unwrap();
    }
}

/// `(pod name, CPUs)` of the cycle's NUMA assignments.
fn assigned(c: &Cluster, d: &Decisions) -> Vec<(String, Vec<u32>)> {
    d.numa_assignments.iter().map(|a| (c.pod(a.pod).unwrap().spec.name.clone(), a.cpus.clone())).collect()
}

#[test]
fn a_later_cycle_does_not_reuse_cpus_until_the_numatopology_lists_the_pod() {
    let mut c = cluster();
    pod(&mut c, "a");
    let d1 = cycle(&c, 1);
    let first = assigned(&c, &d1);
    assert_eq!(first.len(), 1, "{first:?}");
    let a_cpus = first[0].1.clone();
    assert_eq!(a_cpus.len(), 4);
    apply(&mut c, &d1);
    assert_eq!(c.numa_pre_occupied("n1"), a_cpus, "kept on the node after the cycle");

    // Cycle 2, the exporter has not caught up (allocatable still all 8 CPUs): b gets the other
    // NUMA node, c finds no NUMA node with 4 free CPUs although the node has 28 CPUs left.
    pod(&mut c, "b");
    pod(&mut c, "c");
    let d2 = cycle(&c, 2);
    let second = assigned(&c, &d2);
    assert_eq!(second.len(), 1, "{second:?}");
    assert!(second[0].1.iter().all(|x| !a_cpus.contains(x)), "a's CPUs {a_cpus:?} offered again: {second:?}");
    assert_eq!(d2.binds.len(), 1);
    assert_eq!(d2.unschedulable.len(), 1, "the third 4-CPU pod fits no NUMA node");

    // The exporter lists a, and reports that the kubelet gave it the other NUMA node's CPUs:
    // the Numatopology is the truth again and a's Volcano CPUs may be given out.
    let kubelet_gave: Vec<u32> = (0..8).filter(|x| !a_cpus.contains(x)).collect();
    c.apply(topology(&a_cpus, &["a"])).unwrap();
    assert!(c.numa_pre_occupied("n1").is_empty(), "a is listed: nothing kept");
    assert_eq!(c.numa_assumed().count(), 0, "dropped once every kept pod of the node is listed");
    let d3 = cycle(&c, 3);
    let third = assigned(&c, &d3);
    assert_eq!(third.len(), 1, "{third:?}");
    assert_eq!(third[0].1, a_cpus, "the CPUs the exporter says are free (kubelet gave a {kubelet_gave:?})");
}

#[test]
fn kept_cpus_go_with_a_deleted_or_finished_pod_and_all_stay_while_one_is_unlisted() {
    let mut c = cluster();
    pod(&mut c, "a");
    let d = cycle(&c, 1);
    apply(&mut c, &d);
    pod(&mut c, "b");
    let d = cycle(&c, 2);
    apply(&mut c, &d);
    assert_eq!(c.numa_pre_occupied("n1"), (0..8).collect::<Vec<_>>(), "a and b hold both NUMA nodes");

    // Only a is listed: Volcano keeps every pod of the node while one is unlisted.
    c.apply(topology(&(0..8).collect::<Vec<_>>(), &["a"])).unwrap();
    assert_eq!(c.numa_pre_occupied("n1").len(), 8);
    assert_eq!(c.numa_assumed().count(), 2);

    // b finishes: its CPUs go back, and a (listed) is dropped with it.
    let mut b = c.pod(c.pod_id("ns", "b").unwrap()).unwrap().spec.clone();
    b.phase = PodPhase::Succeeded;
    c.apply(Delta::Pod(b)).unwrap();
    assert_eq!(c.numa_assumed().count(), 0);

    // A new pod bound, then deleted before the exporter lists it.
    pod(&mut c, "d");
    let d = cycle(&c, 3);
    apply(&mut c, &d);
    assert_eq!(c.numa_assumed().count(), 1);
    c.apply(Delta::PodDeleted { namespace: "ns".into(), name: "d".into() }).unwrap();
    assert!(c.numa_pre_occupied("n1").is_empty());

    // A pod the cluster does not hold is not kept; one recreated under the same name is dropped.
    c.apply(Delta::PodNumaAssumed(NumaAssumed { namespace: "ns".into(), name: "gone".into(), node: "n1".into(), cpus: vec![0] }))
        .unwrap();
    assert_eq!(c.numa_assumed().count(), 0);
    pod(&mut c, "e");
    let d = cycle(&c, 4);
    apply(&mut c, &d);
    let mut e = c.pod(c.pod_id("ns", "e").unwrap()).unwrap().spec.clone();
    e.uid = "uid-e-2".into();
    e.node_name.clear();
    e.phase = PodPhase::Pending;
    c.apply(Delta::Pod(e)).unwrap();
    assert_eq!(c.numa_assumed().count(), 0, "another pod of the same name holds nothing");
}
