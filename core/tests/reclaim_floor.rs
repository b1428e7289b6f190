//! Property tests of reclaim's floor on random clusters (issue 11): with `capacity`, reclaim never
//! takes a queue below its guarantee; with `proportion`, each reclaim eviction comes from a queue
//! that, before it, holds more than its deserved share (volcano-behaviour.md §2 "reclaim", §3).
//!
//! Clusters: full nodes of Running, preemptable pods spread over victim queues (each with a
//! random guarantee, deserved and weight), and pending jobs only in one reclaimer queue, so a
//! victim queue's allocated is its Running pods minus the evictions before.

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_core::framework::Session;
use basalt_core::model::{NodeSpec, PodGroupPhase, PodGroupSpec, PodPhase, PodSpec, QueueSpec};
use basalt_core::plugins::proportion::Proportion;
use basalt_core::session::tables::QueueIdx;
use basalt_core::{run_cycle, CycleOptions, Delta};
use proptest::prelude::*;
use std::collections::BTreeMap;

const GI: i64 = 1 << 30;

/// One random cluster: victim queues' (guarantee cpu, deserved cpu, weight), the nodes' cpu,
/// the running pods' (queue, cpu) and the reclaimer's pending pods' cpu.
#[derive(Clone, Debug)]
struct Shape {
    victims: Vec<(i64, i64, i32)>,
    nodes: Vec<i64>,
    running: Vec<(usize, i64)>,
    pending: Vec<i64>,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        prop::collection::vec((0i64..5, 0i64..9, 1i32..4), 1..4),
        prop::collection::vec(2i64..9, 1..5),
        prop::collection::vec((0usize..3, 1i64..4), 1..24),
        prop::collection::vec(1i64..4, 1..6),
    )
        .prop_map(|(victims, nodes, running, pending)| Shape { victims, nodes, running, pending })
}

fn list(cpu_milli: i64, mem: i64) -> basalt_core::resource::ResourceList {
    [("cpu".to_string(), cpu_milli), ("memory".to_string(), mem)].into()
}

/// Builds the cluster; returns it and, per running pod placed, its (victim queue, cpu milli).
fn build(sh: &Shape) -> (Cluster, BTreeMap<String, (usize, i64)>) {
    let mut c = Cluster::new();
    let mut placed = BTreeMap::new();
    let q = |name: String, g: i64, d: i64, w: i32| QueueSpec {
        name,
        weight: w,
        reclaimable: true,
        guarantee: if g > 0 { list(g * 1000, 0) } else { Default::default() },
        deserved: if d > 0 { list(d * 1000, 0) } else { Default::default() },
        ..Default::default()
    };
    c.apply(Delta::Queue(q("reclaimer".into(), 0, 16, 2))).unwrap();
    for (i, &(g, d, w)) in sh.victims.iter().enumerate() {
        c.apply(Delta::Queue(q(format!("v{i}"), g, d, w))).unwrap();
    }
    let mut free: Vec<i64> = sh.nodes.iter().map(|&n| n * 1000).collect();
    for (i, &cpu) in sh.nodes.iter().enumerate() {
        let mut alloc = list(cpu * 1000, 64 * GI);
        alloc.insert("pods".into(), 110);
        c.apply(Delta::Node(NodeSpec {
            name: format!("n{i}"),
            allocatable: alloc.clone(),
            capacity: alloc,
            ready: true,
            ..Default::default()
        }))
        .unwrap();
    }
    let pod = |name: String, group: &str, cpu: i64, node: Option<usize>| PodSpec {
        namespace: "ns".into(),
        uid: format!("ns-{name}"),
        name,
        group: Some(group.into()),
        scheduler_name: "volcano".into(),
        node_name: node.map(|n| format!("n{n}")).unwrap_or_default(),
        phase: if node.is_some() { PodPhase::Running } else { PodPhase::Pending },
        resreq: list(cpu * 1000, GI),
        nonzero_cpu_milli: cpu * 1000,
        nonzero_memory_bytes: GI,
        preemptable: true,
        ..Default::default()
    };
    for (i, &(vq, cpu)) in sh.running.iter().enumerate() {
        let vq = vq % sh.victims.len();
        let Some(n) = free.iter().position(|&f| f >= cpu * 1000) else { continue };
        free[n] -= cpu * 1000;
        let g = format!("r{i}");
        c.apply(Delta::PodGroup(PodGroupSpec {
            namespace: "ns".into(),
            name: g.clone(),
            uid: format!("ns/{g}"),
            min_member: 1,
            queue: format!("v{vq}"),
            phase: PodGroupPhase::Running,
            ..Default::default()
        }))
        .unwrap();
        c.apply(Delta::Pod(pod(format!("run-{i}"), &g, cpu, Some(n)))).unwrap();
        placed.insert(format!("ns/run-{i}"), (vq, cpu * 1000));
    }
    for (i, &cpu) in sh.pending.iter().enumerate() {
        let g = format!("p{i}");
        c.apply(Delta::PodGroup(PodGroupSpec {
            namespace: "ns".into(),
            name: g.clone(),
            uid: format!("ns/{g}"),
            min_member: 1,
            queue: "reclaimer".into(),
            phase: PodGroupPhase::Inqueue,
            ..Default::default()
        }))
        .unwrap();
        c.apply(Delta::Pod(pod(format!("pend-{i}"), &g, cpu, None))).unwrap();
    }
    (c, placed)
}

fn conf(plugin: &str) -> SchedulerConf {
    let text = format!(
        "actions: \"reclaim\"\ntiers:\n- plugins:\n  - name: gang\n    enablePreemptable: false\n    enableReclaimable: false\n  - name: {plugin}\n  - name: predicates\n"
    );
    SchedulerConf::parse(&text).unwrap().0
}

/// Running cpu per victim queue before the cycle.
fn allocated(sh: &Shape, placed: &BTreeMap<String, (usize, i64)>) -> Vec<i64> {
    let mut a = vec![0i64; sh.victims.len()];
    for &(q, cpu) in placed.values() {
        a[q] += cpu;
    }
    a
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// capacity: after reclaim, every victim queue keeps at least min(guarantee, what it held).
    #[test]
    fn capacity_reclaim_keeps_guarantee(sh in shape()) {
        let (c, placed) = build(&sh);
        let d = run_cycle(&c, &conf("capacity"), &CycleOptions::default());
        let mut left = allocated(&sh, &placed);
        let before = left.clone();
        for e in &d.evictions {
            let p = &c.pod(e.pod).unwrap().spec;
            let (q, cpu) = placed[&format!("{}/{}", p.namespace, p.name)];
            left[q] -= cpu;
        }
        for (q, &(g, _, _)) in sh.victims.iter().enumerate() {
            let floor = (g * 1000).min(before[q]);
            prop_assert!(left[q] >= floor, "queue v{q}: {} cpu left < guarantee floor {floor} ({} evictions)", left[q], d.evictions.len());
        }
    }

    /// proportion: each eviction is taken from a queue whose allocated, just before it, is not
    /// within its deserved share (Volcano proportion's Reclaimable: victims only from a queue
    /// over its deserved).
    #[test]
    fn proportion_reclaims_only_above_deserved(sh in shape()) {
        let (c, placed) = build(&sh);
        let cf = conf("proportion");
        let arena = bumpalo::Bump::new();
        let ssn = Session::open(&arena, &c, &cf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
        let prop = Proportion::open(&ssn.state);
        let row = |name: &str| (0..ssn.state.queues.len).find(|&q| ssn.state.queues.rec[q].spec.name == name).unwrap();
        let deserved: Vec<Vec<f64>> = (0..sh.victims.len()).map(|q| prop.deserved(QueueIdx(row(&format!("v{q}")) as u32)).to_vec()).collect();
        let d = run_cycle(&c, &cf, &CycleOptions::default());
        let mut cpu_left = allocated(&sh, &placed);
        let mut mem_left: Vec<i64> = vec![0; sh.victims.len()];
        for &(q, _) in placed.values() {
            mem_left[q] += GI;
        }
        for e in &d.evictions {
            let p = &c.pod(e.pod).unwrap().spec;
            let (q, cpu) = placed[&format!("{}/{}", p.namespace, p.name)];
            let within = (cpu_left[q] as f64) <= deserved[q][0] + 0.1 && (mem_left[q] as f64) <= deserved[q][1] + 0.1;
            prop_assert!(!within, "queue v{q} gave a victim while within deserved: cpu {} ≤ {}, memory {} ≤ {}", cpu_left[q], deserved[q][0], mem_left[q], deserved[q][1]);
            cpu_left[q] -= cpu;
            mem_left[q] -= GI;
        }
    }
}

/// The clusters above do reclaim: a fixed shape where the victim queue is over its deserved and
/// guarantee evicts under both plugins (so the properties are not vacuous).
#[test]
fn the_shapes_reclaim() {
    let sh = Shape { victims: vec![(1, 1, 1)], nodes: vec![4], running: vec![(0, 1); 4], pending: vec![1] };
    for plugin in ["capacity", "proportion"] {
        let (c, _) = build(&sh);
        let d = run_cycle(&c, &conf(plugin), &CycleOptions::default());
        assert_eq!(d.evictions.len(), 1, "{plugin}: {:?}", d.evictions);
    }
}
