//! Property tests of the scheduling core on random clusters: no node over its allocatable,
//! gangs bound all-or-nothing, Statement discard restores the session exactly, the same input
//! and seed give the same decisions, and the class path decides like the plain scan, with and
//! without node sampling.

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_core::framework::fingerprint::NodeTasks;
use basalt_core::framework::Session;
use basalt_core::session::tables::{NodeIdx, TaskIdx, TaskStatus};
use basalt_core::workload::{generate, Variant, WorkloadSpec};
use basalt_core::{run_cycle, CycleOptions, Decisions};
use proptest::prelude::*;
use std::collections::HashMap;

fn variant() -> impl Strategy<Value = Variant> {
    prop_oneof![
        Just(Variant::Identical),
        Just(Variant::Distinct),
        Just(Variant::Selectors),
        Just(Variant::Taints),
        Just(Variant::AntiAffinity)
    ]
}

fn spec() -> impl Strategy<Value = WorkloadSpec> {
    (1usize..12, 1usize..120, 1usize..6, 1usize..4, variant(), any::<u64>())
        .prop_map(|(nodes, pods, gang, queues, variant, seed)| WorkloadSpec { nodes, pods, gang, queues, variant, seed })
}

fn cluster(spec: &WorkloadSpec, shrink_nodes: bool) -> Cluster {
    let mut c = Cluster::new();
    for mut d in generate(spec) {
        if shrink_nodes {
            // Small nodes make capacity scarce so gangs really compete.
            if let basalt_core::Delta::Node(n) = &mut d {
                n.allocatable.insert("cpu".into(), 4000);
                n.allocatable.insert("memory".into(), 8 << 30);
                n.allocatable.insert("pods".into(), 6);
            }
        }
        c.apply(d).expect("generated objects are valid");
    }
    c
}

const CONF_BINPACK: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n";

fn check_capacity(c: &Cluster, d: &Decisions) -> Result<(), TestCaseError> {
    let mut used: HashMap<basalt_core::cluster::NodeId, (i64, i64, i64)> = HashMap::new();
    for b in &d.binds {
        let p = c.pod(b.pod).unwrap();
        let e = used.entry(b.node).or_default();
        e.0 += p.resreq.get(0);
        e.1 += p.resreq.get(1);
        e.2 += 1;
    }
    for (n, (cpu, mem, pods)) in used {
        let a = &c.node(n).unwrap().allocatable;
        prop_assert!(cpu <= a.get(0), "cpu over allocatable on {}", c.node(n).unwrap().spec.name);
        prop_assert!(mem <= a.get(1), "memory over allocatable");
        prop_assert!(pods <= a.get(2), "pods over allocatable");
    }
    Ok(())
}

fn check_gangs(c: &Cluster, d: &Decisions) -> Result<(), TestCaseError> {
    let mut per: HashMap<(String, String), i32> = HashMap::new();
    for b in &d.binds {
        let p = &c.pod(b.pod).unwrap().spec;
        *per.entry((p.namespace.clone(), p.group.clone().unwrap())).or_default() += 1;
    }
    for ((ns, g), n) in per {
        let pg = c.pod_group(c.pod_group_id(&ns, &g).unwrap()).unwrap();
        prop_assert!(n >= pg.spec.min_member, "{ns}/{g}: {n} bound < minMember {}", pg.spec.min_member);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn no_overcommit_and_gangs_all_or_nothing(spec in spec(), scarce in any::<bool>(), binpack in any::<bool>()) {
        let c = cluster(&spec, scarce);
        let conf = if binpack { SchedulerConf::parse(CONF_BINPACK).unwrap().0 } else { SchedulerConf::default() };
        let d = run_cycle(&c, &conf, &CycleOptions { seed: spec.seed, cycle: 1, now_ms: 0 });
        check_capacity(&c, &d)?;
        check_gangs(&c, &d)?;
        // Every pending pod gets a bind or a reason.
        let bound: std::collections::HashSet<_> = d.binds.iter().map(|b| b.pod).collect();
        let reasoned: std::collections::HashSet<_> = d.unschedulable.iter().map(|u| u.pod).collect();
        for (id, _) in c.pods() {
            prop_assert!(bound.contains(&id) || reasoned.contains(&id), "pod {:?} has neither a bind nor a reason", id);
        }
    }

    #[test]
    fn same_input_and_seed_same_decisions(spec in spec(), scarce in any::<bool>()) {
        let c = cluster(&spec, scarce);
        let conf = SchedulerConf::default();
        let a = run_cycle(&c, &conf, &CycleOptions { seed: 7, cycle: 1, now_ms: 0 });
        let b = run_cycle(&c, &conf, &CycleOptions { seed: 7, cycle: 1, now_ms: 0 });
        prop_assert_eq!(a, b);
    }

    #[test]
    fn class_cache_and_plain_scan_decide_the_same(
        spec in spec(),
        scarce in any::<bool>(),
        binpack in any::<bool>(),
        seed in any::<u64>(),
        sampling in proptest::option::of((0i32..=100, 0i32..12, 0i32..=60)),
    ) {
        let c = cluster(&spec, scarce);
        let mut fast = if binpack { SchedulerConf::parse(CONF_BINPACK).unwrap().0 } else { SchedulerConf::default() };
        // Volcano's sampling flags, any values: percentage (0 = adaptive), minimum feasible
        // nodes (0 included: the scan then stops at the first feasible node), minimum
        // percentage.
        if let Some((pct, min_nodes, min_pct)) = sampling {
            fast.options.percentage_nodes_to_find = pct;
            fast.options.minimum_feasible_nodes = min_nodes;
            fast.options.minimum_percentage_nodes_to_find = min_pct;
        }
        fast.options.class_cache = true;
        let mut plain = fast.clone();
        plain.options.class_cache = false;
        let opts = CycleOptions { seed, cycle: 1, now_ms: 0 };
        prop_assert_eq!(run_cycle(&c, &fast, &opts), run_cycle(&c, &plain, &opts));
    }

    #[test]
    fn a_kept_session_layout_decides_like_a_fresh_one(spec in spec(), scarce in any::<bool>()) {
        let mut c = cluster(&spec, scarce);
        let conf = SchedulerConf::default();
        let opts = CycleOptions { seed: 3, cycle: 1, now_ms: 0 };
        let fresh = run_cycle(&c, &conf, &opts);
        c.prepare(&conf.options.default_queue);
        prop_assert!(c.prepared(&conf.options.default_queue).is_some());
        prop_assert_eq!(&fresh, &run_cycle(&c, &conf, &opts));
        // Any change makes the kept layout stale until the next prepare.
        c.apply(basalt_core::Delta::QueueDeleted("no-such-queue".into())).unwrap();
        prop_assert!(c.prepared(&conf.options.default_queue).is_none());
        // A live cycle's changes (jobs created and deleted, binds, PodGroup status updates):
        // the patched layout decides like a fresh one, round after round.
        let mut churn = basalt_core::workload::Churn::new(&c, &spec);
        for round in 0..3u64 {
            for d in churn.round(&c, spec.pods.div_ceil(10)) {
                c.apply(d).unwrap();
            }
            c.prepare(&conf.options.default_queue);
            let mut fresh = c.clone();
            fresh.forget_prepared();
            let opts = CycleOptions { seed: round, cycle: round + 2, now_ms: 0 };
            prop_assert_eq!(run_cycle(&fresh, &conf, &opts), run_cycle(&c, &conf, &opts));
        }
    }

    #[test]
    fn statement_discard_restores_session(spec in spec(), picks in proptest::collection::vec((any::<u16>(), any::<u16>(), any::<bool>()), 1..20)) {
        let c = cluster(&spec, true);
        let conf = SchedulerConf::default();
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
        let before = ssn.fingerprint(NodeTasks::AsSet);
        let mut st = ssn.statement();
        let (nt, nn) = (ssn.state.tasks.len, ssn.state.nodes.len);
        for (t, n, pipe) in picks {
            let t = TaskIdx(t as u32 % nt as u32);
            let n = NodeIdx(n as u32 % nn as u32);
            if ssn.state.tasks.status()[t.ix()] != TaskStatus::Pending { continue; }
            if pipe { ssn.pipeline(&mut st, t, n); } else { ssn.allocate(&mut st, t, n); }
        }
        ssn.discard(st);
        prop_assert_eq!(before, ssn.fingerprint(NodeTasks::AsSet));
    }
}

#[test]
fn ample_capacity_binds_every_pod() {
    let spec = WorkloadSpec { nodes: 10, pods: 100, gang: 10, queues: 2, variant: Variant::Identical, seed: 3 };
    let c = cluster(&spec, false);
    let d = run_cycle(&c, &SchedulerConf::default(), &CycleOptions { seed: 1, cycle: 1, now_ms: 0 });
    assert_eq!(d.binds.len(), 100, "10 nodes of 32 cores fit 100 pods of at most 2 cores");
}

#[test]
fn decisions_do_not_depend_on_thread_count() {
    // Above PARALLEL_NODE_THRESHOLD nodes the predicate and score scans run on rayon.
    for variant in [Variant::Identical, Variant::Distinct, Variant::Selectors] {
        let spec = WorkloadSpec {
            nodes: basalt_core::limits::PARALLEL_NODE_THRESHOLD + 500,
            pods: 1500,
            gang: 5,
            queues: 3,
            variant,
            seed: 11,
        };
        let c = cluster(&spec, true);
        let conf = SchedulerConf::default();
        let opts = CycleOptions { seed: 5, cycle: 1, now_ms: 0 };
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| run_cycle(&c, &conf, &opts));
        let two = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap().install(|| run_cycle(&c, &conf, &opts));
        assert!(!one.binds.is_empty(), "{variant:?}: the workload must bind something");
        assert_eq!(one, two, "{variant:?}: 1 and 2 threads decided differently");
    }
}
