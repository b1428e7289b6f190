//! Shared helpers of Basalt's benches: build a cluster copy from a seeded workload shape and
//! name the shape (`n10000_p100000_gang10`).

pub mod volumes;

use basalt_core::cluster::Cluster;
use basalt_core::workload::{generate, WorkloadSpec};

/// The cluster copy of `spec`.
pub fn cluster(spec: &WorkloadSpec) -> Cluster {
    let mut c = Cluster::new();
    for d in generate(spec) {
        c.apply(d).expect("generated objects are valid");
    }
    c
}

/// The bench name of a shape: `n<nodes>_p<pods>_gang<gang>[_<variant>]`.
pub fn shape_name(spec: &WorkloadSpec) -> String {
    let base = format!("n{}_p{}_gang{}", spec.nodes, spec.pods, spec.gang);
    match spec.variant {
        basalt_core::workload::Variant::Identical => base,
        v => format!("{base}_{}", v.name()),
    }
}

/// The conf of the preempt benches: Volcano's default tiers with `preempt` after allocate.
pub const PREEMPT_CONF: &str = "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n";

/// A full cluster with a high-priority gang arriving (issue 11's preempt bench): `nodes` nodes
/// of 8 CPUs, 32 GiB and 110 pods, each running `per_node` low-priority pods (PriorityClass
/// `low`, 10) that fill its CPUs exactly, one Running PodGroup per node with `minMember` half
/// its pods (so gang lets the other half go) in queue `default`; and one PodGroup of `gang` pending pods (PriorityClass `high`, 1000,
/// `minMember: gang`, Inqueue) in the same queue, each asking for a quarter of a node's CPUs and
/// 1 GiB, so every one of them needs victims evicted. Returns the cluster and the shape's name
/// (`n<nodes>_p<running>_gang<gang>`).
pub fn preempt_cluster(nodes: usize, per_node: usize, gang: usize) -> (Cluster, String) {
    use basalt_core::model::{NodeSpec, PodGroupPhase, PodGroupSpec, PodPhase, PodSpec, PriorityClassSpec, QueueSpec};
    use basalt_core::Delta;
    const GIB: i64 = 1 << 30;
    let node_cpu = 8000i64;
    let per_node = per_node.max(1);
    let pod_cpu = node_cpu / per_node as i64;
    let list = |cpu: i64, mem: i64| -> basalt_core::resource::ResourceList {
        [("cpu".to_string(), cpu), ("memory".to_string(), mem), ("pods".to_string(), 1)].into()
    };
    let mut c = Cluster::new();
    let mut apply = |d: Delta| c.apply(d).expect("bench objects are valid");
    apply(Delta::PriorityClass(PriorityClassSpec { name: "low".into(), value: 10, global_default: false }));
    apply(Delta::PriorityClass(PriorityClassSpec { name: "high".into(), value: 1000, global_default: false }));
    apply(Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() }));
    for n in 0..nodes {
        let mut alloc = list(node_cpu, 32 * GIB);
        alloc.insert("pods".into(), 110);
        let name = format!("node-{n:05}");
        let labels = [("kubernetes.io/hostname".to_string(), name.clone())].into();
        apply(Delta::Node(NodeSpec {
            name,
            labels,
            allocatable: alloc.clone(),
            capacity: alloc,
            ready: true,
            ..Default::default()
        }));
    }
    let pod = |name: String, group: &str, class: &str, cpu: i64, node: Option<usize>| PodSpec {
        namespace: "bench".into(),
        uid: format!("bench-{name}"),
        name,
        group: Some(group.into()),
        scheduler_name: "volcano".into(),
        node_name: node.map(|n| format!("node-{n:05}")).unwrap_or_default(),
        phase: if node.is_some() { PodPhase::Running } else { PodPhase::Pending },
        priority_class_name: class.into(),
        resreq: list(cpu, GIB),
        nonzero_cpu_milli: cpu,
        nonzero_memory_bytes: GIB,
        preemptable: true,
        ..Default::default()
    };
    let group = |name: &str, min_member: i32, class: &str, phase: PodGroupPhase| PodGroupSpec {
        namespace: "bench".into(),
        name: name.into(),
        uid: format!("bench/{name}"),
        min_member,
        queue: "default".into(),
        priority_class_name: class.into(),
        phase,
        ..Default::default()
    };
    for n in 0..nodes {
        let g = format!("run-{n}");
        apply(Delta::PodGroup(group(&g, (per_node / 2) as i32, "low", PodGroupPhase::Running)));
        for i in 0..per_node {
            apply(Delta::Pod(pod(format!("{g}-{i}"), &g, "low", pod_cpu, Some(n))));
        }
    }
    apply(Delta::PodGroup(group("urgent", gang as i32, "high", PodGroupPhase::Inqueue)));
    for i in 0..gang {
        apply(Delta::Pod(pod(format!("urgent-{i}"), "urgent", "high", node_cpu / 4, None)));
    }
    (c, format!("n{nodes}_p{}_gang{gang}", nodes * per_node))
}
