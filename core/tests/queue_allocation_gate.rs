//! Volcano's queue admission by scheduling gate (feature gate `SchedulingGatesQueueAdmission`):
//! pods gated only by `scheduling.volcano.sh/queue-allocation-gate` and annotated to opt in get
//! a gate removal decided only when their queue admits them (capacity's real capability, less
//! what admitted pods already reserve), are never bound in the cycle that releases them, and are
//! bound in a later cycle once the gate is gone. A queue over its capability keeps them gated.

use basalt_core::decision::Decisions;
use basalt_core::model::{NodeSpec, PodGroupPhase, PodGroupSpec, PodPhase, PodSpec, QueueSpec};
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta, SchedulerConf};

fn res(cpu: i64, pods: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), pods << 30), ("pods".to_string(), pods)].into_iter().collect()
}

/// How a test pod is gated.
#[derive(Clone, Copy)]
enum Gate {
    /// Volcano's gate only, opted in by the annotation.
    OptedIn,
    /// Volcano's gate only, without the annotation.
    NotOptedIn,
    /// Volcano's gate and another one, opted in.
    AndAnother,
}

fn pod(i: usize, gate: Gate) -> PodSpec {
    let name = format!("job{i:02}");
    PodSpec {
        namespace: "ns".into(),
        name: format!("{name}-0"),
        uid: format!("ns/{name}-0"),
        group: Some(name),
        scheduler_name: "volcano".into(),
        phase: PodPhase::Pending,
        resreq: res(1000, 1),
        nonzero_cpu_milli: 1000,
        nonzero_memory_bytes: 1 << 30,
        scheduling_gated: true,
        volcano_gate_only: !matches!(gate, Gate::AndAnother),
        queue_allocation_gate: !matches!(gate, Gate::NotOptedIn),
        ..Default::default()
    }
}

/// Two nodes of 4 CPUs, queue `q` with a capability of 3 CPUs, and one single-pod job per gate.
fn cluster(gates: &[Gate]) -> Cluster {
    let mut c = Cluster::new();
    let cap: ResourceList = [("cpu".to_string(), 3000)].into_iter().collect();
    c.apply(Delta::Queue(QueueSpec { name: "q".into(), weight: 1, capability: cap, reclaimable: true, ..Default::default() }))
        .unwrap();
    for i in 1..=2 {
        let alloc = res(4000, 110);
        c.apply(Delta::Node(NodeSpec {
            name: format!("n{i}"),
            capacity: alloc.clone(),
            allocatable: alloc,
            ready: true,
            ..Default::default()
        }))
        .unwrap();
    }
    for (i, g) in gates.iter().enumerate() {
        let name = format!("job{i:02}");
        c.apply(Delta::PodGroup(PodGroupSpec {
            namespace: "ns".into(),
            name: name.clone(),
            uid: format!("ns/{name}"),
            min_member: 1,
            queue: "q".into(),
            phase: PodGroupPhase::Inqueue,
            ..Default::default()
        }))
        .unwrap();
        c.apply(Delta::Pod(pod(i, *g))).unwrap();
    }
    c
}

fn conf(gate_on: bool) -> SchedulerConf {
    let text = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: capacity\n  - name: nodeorder\n";
    let (mut c, _) = SchedulerConf::parse(text).unwrap();
    c.options.scheduling_gates_queue_admission = gate_on;
    c
}

fn cycle(c: &Cluster, conf: &SchedulerConf, n: u64) -> Decisions {
    run_cycle(c, conf, &CycleOptions { seed: 7, cycle: n, now_ms: 0 })
}

fn names(c: &Cluster, pods: impl Iterator<Item = basalt_core::cluster::PodId>) -> Vec<String> {
    let mut v: Vec<String> = pods.map(|p| c.pod(p).unwrap().spec.name.clone()).collect();
    v.sort();
    v
}

/// Applies what the runtime does: the gate removals (the pod loses its gates) and the binds (the
/// pod runs on its node).
fn apply(c: &mut Cluster, d: &Decisions) {
    for g in &d.gate_removals {
        let mut spec = c.pod(g.pod).unwrap().spec.clone();
        spec.scheduling_gated = false;
        spec.volcano_gate_only = false;
        c.apply(Delta::Pod(spec)).unwrap();
    }
    for b in &d.binds {
        let mut spec = c.pod(b.pod).unwrap().spec.clone();
        spec.node_name = c.node(b.node).unwrap().spec.name.clone();
        spec.phase = PodPhase::Running;
        c.apply(Delta::Pod(spec)).unwrap();
    }
}

#[test]
fn gated_pods_are_released_only_as_far_as_their_queue_admits_them() {
    let mut c = cluster(&[Gate::OptedIn; 5]);
    let conf = conf(true);
    let d1 = cycle(&c, &conf, 1);
    assert!(d1.binds.is_empty(), "a gated pod is never bound in the cycle that releases it");
    let released = names(&c, d1.gate_removals.iter().map(|g| g.pod));
    assert_eq!(released.len(), 3, "capability 3 CPUs admits three 1-CPU pods: {released:?}");
    assert!(d1.unschedulable.is_empty(), "gated pods get no Unschedulable condition: {:?}", d1.unschedulable);
    apply(&mut c, &d1);

    let d2 = cycle(&c, &conf, 2);
    assert_eq!(names(&c, d2.binds.iter().map(|b| b.pod)), released, "the released pods are bound in the next cycle");
    assert!(d2.gate_removals.is_empty(), "the reservation of the released pods keeps the others gated");
    apply(&mut c, &d2);

    let d3 = cycle(&c, &conf, 3);
    assert!(d3.gate_removals.is_empty() && d3.binds.is_empty(), "the queue is full: the other two stay gated");

    // One running pod ends: the queue admits exactly one more.
    let gone = c.pod(d2.binds[0].pod).unwrap().spec.clone();
    c.apply(Delta::PodDeleted { namespace: gone.namespace, name: gone.name }).unwrap();
    let d4 = cycle(&c, &conf, 4);
    assert_eq!(d4.gate_removals.len(), 1, "{:?}", d4.gate_removals);
    assert!(d4.binds.is_empty());
}

#[test]
fn a_removal_is_decided_again_while_the_gate_is_still_there() {
    // The runtime's patch may fail or be slow: the next cycle decides the same removals again,
    // and the queue still admits no more than its capability.
    let c = cluster(&[Gate::OptedIn; 4]);
    let conf = conf(true);
    let a = cycle(&c, &conf, 1);
    let b = cycle(&c, &conf, 2);
    assert_eq!(a.gate_removals, b.gate_removals);
    assert_eq!(a.gate_removals.len(), 3);
}

#[test]
fn feature_gate_off_releases_nothing() {
    let c = cluster(&[Gate::OptedIn; 3]);
    let d = cycle(&c, &conf(false), 1);
    assert!(d.gate_removals.is_empty() && d.binds.is_empty());
}

#[test]
fn only_opted_in_pods_gated_by_volcano_alone_are_released() {
    let c = cluster(&[Gate::NotOptedIn, Gate::AndAnother, Gate::OptedIn]);
    let d = cycle(&c, &conf(true), 1);
    assert_eq!(names(&c, d.gate_removals.iter().map(|g| g.pod)), vec!["job02-0".to_string()]);
    assert!(d.binds.is_empty());
}

#[test]
fn volcano_gated_pods_count_in_inqueue_others_are_deducted() {
    // minResources 2 CPUs each; queue capability 3 CPUs. A job whose pod carries another gate
    // has its gated request deducted from inqueue (Volcano `DeductSchGatedResources`), one gated
    // only by Volcano's gate does not, so it holds its share of the queue at enqueue.
    for (gate, second_enqueued) in [(Gate::AndAnother, true), (Gate::OptedIn, false)] {
        let mut c = cluster(&[gate]);
        let min: ResourceList = [("cpu".to_string(), 2000)].into_iter().collect();
        let mut g = c.pod_groups().next().unwrap().1.spec.clone();
        g.min_resources = Some(min.clone());
        c.apply(Delta::PodGroup(g)).unwrap();
        c.apply(Delta::PodGroup(PodGroupSpec {
            namespace: "ns".into(),
            name: "late".into(),
            uid: "ns/late".into(),
            min_member: 1,
            queue: "q".into(),
            phase: PodGroupPhase::Pending,
            min_resources: Some(min),
            ..Default::default()
        }))
        .unwrap();
        let d = cycle(&c, &conf(true), 1);
        let late = d.pod_groups.iter().find(|s| c.pod_group(s.group).unwrap().spec.name == "late").unwrap();
        assert_eq!(late.phase == PodGroupPhase::Inqueue, second_enqueued, "{:?}", late.phase);
    }
}

#[test]
fn capacity_without_the_feature_gate_keeps_its_plain_check() {
    // Four ungated pods that opted in (as if their gates had been removed) in a queue of 3 CPUs.
    // Gate off: no reservation, capacity's plain check binds three. Gate on: each of them holds a
    // reservation from session open (Volcano `buildQueueReservedTasksCache`), so for each the
    // other three already fill the queue and none is allocatable (Volcano
    // `queueAllocatableWithReserved`; the gate removal itself never releases more than fits).
    let mut c = cluster(&[]);
    for i in 0..4 {
        let name = format!("free{i}");
        c.apply(Delta::PodGroup(PodGroupSpec {
            namespace: "ns".into(),
            name: name.clone(),
            uid: format!("ns/{name}"),
            min_member: 1,
            queue: "q".into(),
            phase: PodGroupPhase::Inqueue,
            ..Default::default()
        }))
        .unwrap();
        let mut p = pod(i, Gate::OptedIn);
        p.name = format!("{name}-0");
        p.uid = format!("ns/{name}-0");
        p.group = Some(name);
        p.scheduling_gated = false;
        p.volcano_gate_only = false;
        c.apply(Delta::Pod(p)).unwrap();
    }
    let off = cycle(&c, &conf(false), 1);
    assert_eq!(off.binds.len(), 3, "capability 3 CPUs, plain check");
    let on = cycle(&c, &conf(true), 1);
    assert!(on.binds.is_empty() && on.gate_removals.is_empty(), "{:?}", on.binds);
}
