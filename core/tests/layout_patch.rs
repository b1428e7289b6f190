//! The kept session layout patched by deltas equals a fresh one, field by field, and decides
//! the same; the interner stays bounded under pod churn and names resolve after compaction.

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::session::layout::Layout;
use basalt_core::workload::{generate, Churn, Variant, WorkloadSpec};
use basalt_core::{run_cycle, CycleOptions, Delta};
use proptest::prelude::*;

fn res(cpu: i64, mem: i64) -> ResourceList {
    let mut r = ResourceList::new();
    r.insert("cpu".into(), cpu);
    r.insert("memory".into(), mem);
    r.insert("pods".into(), 1);
    r
}

/// One random change, drawn by index into what the cluster holds when it is applied.
#[derive(Clone, Debug)]
enum Op {
    /// A new pod: in group `group` (index into groups, or a missing group name), ungrouped on a
    /// node, or ungrouped pending.
    CreatePod {
        group: u16,
        kind: u8,
        affinity: bool,
    },
    DeletePod(u16),
    /// Pending → Bound (assumed bind), Bound → Running, Running → Succeeded, deleting, or back
    /// to Pending; or a new group name.
    PodStatus(u16, u8),
    GroupStatus(u16, u8),
    GroupQueue(u16, u8),
    DeleteGroup(u16),
    CreateGroup(u16),
    NodeAllocatable(u16, u16),
    NodeReady(u16),
    AddNode(u16),
    DeleteNode(u16),
    AddQueue(u16),
    PriorityClass(u8),
}

/// Changes that force a full rebuild (node set, queue set, PriorityClass) are rare, so most
/// batches go through the patch.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        18 => (any::<u16>(), 0u8..4, any::<bool>()).prop_map(|(group, kind, affinity)| Op::CreatePod { group, kind, affinity }),
        15 => any::<u16>().prop_map(Op::DeletePod),
        36 => (any::<u16>(), 0u8..6).prop_map(|(p, s)| Op::PodStatus(p, s)),
        15 => (any::<u16>(), 0u8..3).prop_map(|(g, s)| Op::GroupStatus(g, s)),
        6 => (any::<u16>(), 0u8..5).prop_map(|(g, q)| Op::GroupQueue(g, q)),
        6 => any::<u16>().prop_map(Op::DeleteGroup),
        6 => any::<u16>().prop_map(Op::CreateGroup),
        6 => (any::<u16>(), any::<u16>()).prop_map(|(n, a)| Op::NodeAllocatable(n, a)),
        1 => any::<u16>().prop_map(Op::NodeReady),
        1 => any::<u16>().prop_map(Op::AddNode),
        1 => any::<u16>().prop_map(Op::DeleteNode),
        1 => any::<u16>().prop_map(Op::AddQueue),
        1 => (0u8..3).prop_map(Op::PriorityClass),
    ]
}

fn pick<T: Clone>(v: &[T], i: u16) -> Option<T> {
    (!v.is_empty()).then(|| v[i as usize % v.len()].clone())
}

/// The delta of `op` on the current cluster (None when there is nothing to change).
fn delta(c: &Cluster, op: &Op, serial: usize) -> Option<Delta> {
    let pods: Vec<PodSpec> = c.pods().map(|(_, p)| p.spec.clone()).collect();
    let groups: Vec<PodGroupSpec> = c.pod_groups().map(|(_, g)| g.spec.clone()).collect();
    let nodes: Vec<NodeSpec> = c.nodes().map(|(_, n)| n.spec.clone()).collect();
    Some(match op {
        Op::CreatePod { group, kind, affinity } => {
            let (ns, g) = match (kind, pick(&groups, *group)) {
                (0 | 1, Some(g)) => (g.namespace.clone(), Some(g.name.clone())),
                (1, None) | (2, _) => ("ns1".to_string(), Some(format!("late-{}", group % 4))),
                _ => ("ns0".to_string(), None),
            };
            let node_name = match kind {
                3 if *group % 2 == 0 => pick(&nodes, *group).map(|n| n.name).unwrap_or_default(),
                _ => String::new(),
            };
            let mut p = PodSpec {
                namespace: ns,
                name: format!("p-{serial}-{}", group % 7),
                group: g,
                node_name,
                // Every fifth group is best-effort (no request at all).
                resreq: if group % 5 == 0 { ResourceList::new() } else { res(100 + (*group as i64 % 5) * 100, 1 << 28) },
                priority: (group % 3 == 0).then_some(*group as i32 % 4),
                priority_class_name: if group % 4 == 1 { "high".into() } else { String::new() },
                ..Default::default()
            };
            if *affinity {
                let mut sel = LabelSelector::default();
                sel.match_labels.insert("app".into(), "x".into());
                p.labels.insert("app".into(), "x".into());
                p.affinity.anti_required.push(PodAffinityTerm {
                    label_selector: Some(sel),
                    topology_key: "kubernetes.io/hostname".into(),
                    ..Default::default()
                });
            }
            Delta::Pod(p)
        }
        Op::DeletePod(i) => {
            let p = pick(&pods, *i)?;
            Delta::PodDeleted { namespace: p.namespace, name: p.name }
        }
        Op::PodStatus(i, s) => {
            let mut p = pick(&pods, *i)?;
            match s {
                0 => p.node_name = pick(&nodes, *i).map(|n| n.name).unwrap_or_default(),
                1 => p.phase = PodPhase::Running,
                2 => p.phase = PodPhase::Succeeded,
                3 => p.deleting = true,
                4 => {
                    p.phase = PodPhase::Pending;
                    p.node_name.clear();
                }
                _ => p.group = Some(format!("late-{}", i % 4)),
            }
            Delta::Pod(p)
        }
        Op::GroupStatus(i, s) => {
            let mut g = pick(&groups, *i)?;
            match s {
                0 => g.phase = PodGroupPhase::Running,
                1 => {
                    g.min_task_member.insert("worker".into(), *i as i32 % 3);
                    g.min_member = *i as i32 % 4;
                }
                _ => g.priority_class_name = if g.priority_class_name.is_empty() { "high".into() } else { String::new() },
            }
            Delta::PodGroup(g)
        }
        Op::GroupQueue(i, q) => {
            let mut g = pick(&groups, *i)?;
            g.queue = if *q == 4 {
                "missing".into()
            } else if *q == 3 {
                String::new()
            } else {
                format!("q{q}")
            };
            Delta::PodGroup(g)
        }
        Op::DeleteGroup(i) => {
            let g = pick(&groups, *i)?;
            Delta::PodGroupDeleted { namespace: g.namespace, name: g.name }
        }
        Op::CreateGroup(i) => Delta::PodGroup(PodGroupSpec {
            namespace: "ns1".into(),
            name: format!("late-{}", i % 4),
            min_member: 1,
            queue: format!("q{}", i % 3),
            creation_ms: *i as i64,
            ..Default::default()
        }),
        Op::NodeAllocatable(i, a) => {
            let mut n = pick(&nodes, *i)?;
            n.allocatable.insert("cpu".into(), 1000 + *a as i64);
            Delta::Node(n)
        }
        Op::NodeReady(i) => {
            let mut n = pick(&nodes, *i)?;
            n.ready = !n.ready;
            Delta::Node(n)
        }
        Op::AddNode(i) => Delta::Node(NodeSpec {
            name: format!("extra-{}", i % 5),
            allocatable: res(8000, 32 << 30),
            ready: true,
            ..Default::default()
        }),
        Op::DeleteNode(i) => Delta::NodeDeleted(pick(&nodes, *i)?.name),
        Op::AddQueue(i) => {
            if i % 2 == 0 {
                Delta::Queue(QueueSpec { name: format!("q{}", i % 4), weight: 1 + (*i as i32 % 3), ..Default::default() })
            } else {
                Delta::QueueDeleted(format!("q{}", i % 4))
            }
        }
        Op::PriorityClass(v) => {
            Delta::PriorityClass(PriorityClassSpec { name: "high".into(), value: 100 * *v as i32, global_default: *v == 2 })
        }
    })
}

fn spec() -> impl Strategy<Value = WorkloadSpec> {
    (1usize..8, 1usize..60, 1usize..5, 1usize..4, any::<u64>(), any::<bool>()).prop_map(
        |(nodes, pods, gang, queues, seed, aa)| WorkloadSpec {
            nodes,
            pods,
            gang,
            queues,
            variant: if aa { Variant::AntiAffinity } else { Variant::Identical },
            seed,
        },
    )
}

fn cluster(spec: &WorkloadSpec) -> Cluster {
    let mut c = Cluster::new();
    for d in generate(spec) {
        c.apply(d).expect("generated objects are valid");
    }
    c
}

/// The kept layout equals a fresh one, and a cycle on it decides like one on a fresh layout.
fn check(c: &Cluster, conf: &SchedulerConf, seed: u64) -> Result<(), TestCaseError> {
    let dq = &conf.options.default_queue;
    let kept = c.prepared(dq).expect("prepared");
    let fresh = Layout::new(c, dq);
    // Field by field first, so a failure names the field.
    prop_assert_eq!(&kept.node_ids, &fresh.node_ids);
    prop_assert_eq!(&kept.allocatable, &fresh.allocatable);
    prop_assert_eq!(&kept.total, &fresh.total);
    prop_assert_eq!(&kept.jobs, &fresh.jobs);
    prop_assert_eq!(&kept.skipped, &fresh.skipped);
    prop_assert_eq!(&kept.job_priority, &fresh.job_priority);
    prop_assert_eq!(&kept.job_min_task_total, &fresh.job_min_task_total);
    prop_assert_eq!(&kept.job_uid, &fresh.job_uid);
    prop_assert_eq!(&kept.tasks, &fresh.tasks);
    prop_assert_eq!(&kept.task_start, &fresh.task_start);
    prop_assert_eq!(&kept.task_end, &fresh.task_end);
    prop_assert_eq!(&kept.tasks_by_pod, &fresh.tasks_by_pod);
    prop_assert_eq!(&kept.resreq, &fresh.resreq);
    prop_assert_eq!(&kept.status, &fresh.status);
    prop_assert_eq!(&kept.priority, &fresh.priority);
    prop_assert_eq!(&kept.best_effort, &fresh.best_effort);
    prop_assert_eq!(&kept.name_index, &fresh.name_index);
    prop_assert_eq!(&kept.task_node, &fresh.task_node);
    prop_assert_eq!(&kept.affinity_tasks, &fresh.affinity_tasks);
    prop_assert_eq!(&kept.pod_row, &fresh.pod_row);
    prop_assert_eq!(&kept.group_row, &fresh.group_row);
    prop_assert_eq!(&kept.node_row, &fresh.node_row);
    prop_assert_eq!(kept, &fresh, "every other field");
    let opts = CycleOptions { seed, cycle: 1, now_ms: 0 };
    let mut unkept = c.clone();
    unkept.forget_prepared();
    prop_assert!(unkept.prepared(dq).is_none());
    prop_assert_eq!(run_cycle(c, conf, &opts), run_cycle(&unkept, conf, &opts));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, .. ProptestConfig::default() })]

    #[test]
    fn patched_layout_equals_a_fresh_one_and_decides_the_same(
        spec in spec(),
        batches in proptest::collection::vec(proptest::collection::vec(op(), 0..25), 1..6),
        seed in any::<u64>(),
    ) {
        let mut c = cluster(&spec);
        let conf = SchedulerConf::default();
        let dq = conf.options.default_queue.clone();
        c.prepare(&dq);
        let mut serial = 0;
        for batch in &batches {
            let mut applied = false;
            for op in batch {
                serial += 1;
                if let Some(d) = delta(&c, op, serial) {
                    // Rejected objects leave the cluster as it was; both layouts see the same.
                    let _ = c.apply(d);
                    applied = true;
                }
            }
            // Until the next prepare, sessions do not use a kept layout that is behind.
            prop_assert_eq!(c.prepared(&dq).is_none(), applied);
            c.prepare(&dq);
            check(&c, &conf, seed)?;
        }
    }

    #[test]
    fn churn_rounds_patch_like_a_fresh_layout(nodes in 1usize..30, pods in 10usize..300, gang in 1usize..6, rounds in 1usize..8, seed in any::<u64>()) {
        let spec = WorkloadSpec { nodes, pods, gang, queues: 3, variant: Variant::Identical, seed };
        let mut c = cluster(&spec);
        let conf = SchedulerConf::default();
        c.prepare(&conf.options.default_queue);
        let mut churn = Churn::new(&c, &spec);
        for _ in 0..rounds {
            for d in churn.round(&c, pods.div_ceil(10)) {
                c.apply(d).unwrap();
            }
            c.prepare(&conf.options.default_queue);
            check(&c, &conf, seed)?;
        }
    }
}

/// Every interned id a record holds resolves to the string it was made from.
fn assert_names_resolve(c: &Cluster) {
    let n = &c.names;
    for (_, p) in c.pods() {
        assert_eq!(n.resolve(p.c.name), p.spec.name);
        assert_eq!(n.resolve(p.c.namespace), p.spec.namespace);
        for (k, v) in p.c.labels.iter() {
            assert_eq!(p.spec.labels.get(n.resolve(*k)).map(String::as_str), Some(n.resolve(*v)), "label of {}", p.spec.name);
        }
        assert_eq!(p.c.labels.len(), p.spec.labels.len());
        for t in p.c.anti_required.iter() {
            assert_eq!(n.resolve(t.topology_key), "kubernetes.io/hostname");
        }
        assert!(p.c.labels.windows(2).all(|w| w[0].0 < w[1].0), "labels stay sorted by key id");
    }
    for (_, nd) in c.nodes() {
        assert_eq!(n.resolve(nd.name), nd.spec.name);
        for (k, v) in nd.labels.iter() {
            assert_eq!(nd.spec.labels.get(n.resolve(*k)).map(String::as_str), Some(n.resolve(*v)));
        }
    }
    for (_, g) in c.pod_groups() {
        assert_eq!(n.resolve(g.uid), format!("{}/{}", g.spec.namespace, g.spec.name));
    }
}

#[test]
fn interner_stays_bounded_under_pod_churn() {
    let spec = WorkloadSpec { nodes: 20, pods: 200, gang: 10, queues: 2, variant: Variant::AntiAffinity, seed: 5 };
    let mut c = cluster(&spec);
    let conf = SchedulerConf::default();
    let dq = conf.options.default_queue.clone();
    c.prepare(&dq);
    let live_before = c.names.len();
    let mut peak = 0;
    for round in 0..200 {
        // 1,000 distinct pods, each with its own name and label value, then all deleted.
        for i in 0..1000 {
            let mut labels = Labels::new();
            labels.insert("run".into(), format!("r{round}-{i}"));
            c.apply(Delta::Pod(PodSpec {
                namespace: "churn".into(),
                name: format!("pod-{round}-{i}"),
                labels,
                group: Some(format!("job-{round}")),
                resreq: res(100, 1 << 20),
                ..Default::default()
            }))
            .unwrap();
        }
        peak = peak.max(c.names.len());
        if round == 10 {
            // A job whose id is interned after many dead names: compaction renumbers it while
            // the kept layout holds it.
            c.apply(Delta::PodGroup(PodGroupSpec {
                namespace: "keep".into(),
                name: "late".into(),
                min_member: 1,
                queue: "q0".into(),
                ..Default::default()
            }))
            .unwrap();
            c.apply(Delta::Pod(PodSpec {
                namespace: "keep".into(),
                name: "late-0".into(),
                group: Some("late".into()),
                resreq: res(100, 1 << 20),
                ..Default::default()
            }))
            .unwrap();
        }
        c.prepare(&dq);
        assert_eq!(c.prepared(&dq).unwrap(), &Layout::new(&c, &dq), "round {round}");
        if round % 50 == 0 {
            assert_names_resolve(&c);
        }
        for i in 0..1000 {
            c.apply(Delta::PodDeleted { namespace: "churn".into(), name: format!("pod-{round}-{i}") }).unwrap();
        }
    }
    // Live at most: the generated cluster's names plus one round's 2,000 names (and its group
    // name); compaction runs when the table doubles past the live count, so it never holds
    // more than twice the live peak (or the compaction floor).
    let live_peak = live_before + 2 * 1000 + 8;
    let bound = (2 * live_peak).max(basalt_core::limits::MIN_INTERNER_COMPACT) + 1;
    assert!(peak <= bound, "interner reached {peak} names, bound {bound} (200,000 pod names went through it)");
    // Without the churn pods the table shrinks back to the cluster's own names.
    for d in [
        Delta::PodDeleted { namespace: "keep".into(), name: "late-0".into() },
        Delta::PodGroupDeleted { namespace: "keep".into(), name: "late".into() },
    ] {
        c.apply(d).unwrap();
    }
    // (The kept layout holds the ids of its jobs until it is brought up to date.)
    c.prepare(&dq);
    c.compact_names();
    assert_eq!(c.names.len(), live_before, "exactly the names the cluster holds survive");
    assert_names_resolve(&c);
    assert_eq!(c.names.get("pod-3-7"), None);
    c.prepare(&dq);
    assert_eq!(c.prepared(&dq).unwrap(), &Layout::new(&c, &dq));
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let mut fresh = cluster(&spec);
    fresh.prepare(&dq);
    // Same content, and after compaction the same ids in the same order: the same decisions.
    assert_eq!(c.names.len(), fresh.names.len());
    assert_eq!(run_cycle(&c, &conf, &opts), run_cycle(&fresh, &conf, &opts));
}
