//! Property tests of preempt and reclaim on production-like random clusters
//! (`workload_mixed`, with PriorityClasses given to its jobs and running pods):
//!
//! - preempt: every victim is evicted for a preemptor pipelined (and nominated) on the victim's
//!   node, of the victim's queue, whose job has a higher priority (or, within one job, whose task
//!   has a higher priority); no pod is evicted twice in a cycle. The conf turns drf's
//!   Preemptable off: with Volcano's tier rule drf may take a victim of equal priority by share
//!   when the priority tier allows none (the `equal-priority-evicted-by-drf-share` scenario).
//! - reclaim: every victim is Running and preemptable, of a queue that is reclaimable, not the
//!   reclaimer's, and above its deserved share (proportion, in the deciding tier) when reclaim
//!   starts; a reclaimer of another queue is pipelined and nominated on the victim's node; no
//!   pod is evicted twice.
//! - Statement discard restores the session exactly after any mix of allocate, pipeline,
//!   un-pipeline and evict (statuses, node accounting and task-list order, the node view,
//!   eviction flags and the plugins' orders).

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_core::framework::fingerprint::NodeTasks;
use basalt_core::framework::Session;
use basalt_core::model::PriorityClassSpec;
use basalt_core::plugins::proportion::Proportion;
use basalt_core::session::tables::{NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use basalt_core::workload_mixed::{generate, MixedSpec};
use basalt_core::{CycleOptions, Delta};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

const CLASSES: [(&str, i32); 4] = [("p0", 0), ("p1", 100), ("p2", 1000), ("p3", 10000)];

fn spec() -> impl Strategy<Value = MixedSpec> {
    (2usize..16, 2usize..30, 2usize..7, any::<u64>()).prop_map(|(nodes, jobs, running_per_node, seed)| MixedSpec {
        nodes,
        jobs,
        running_per_node,
        seed,
    })
}

/// The mixed cluster of `spec`, every PodGroup and its pods given one of four PriorityClasses
/// (by a hash of the PodGroup name and the seed), the running pods' single-pod PodGroups with
/// `minMember: 0` (so gang lets them go), and every node cut to 8 CPUs and 32 GiB so the
/// running pods fill it and pending jobs must take room.
fn cluster(spec: &MixedSpec) -> Cluster {
    let mut c = Cluster::new();
    for (name, value) in CLASSES {
        c.apply(Delta::PriorityClass(PriorityClassSpec { name: name.into(), value, global_default: false })).unwrap();
    }
    let class = |group: &str| {
        let h = group.bytes().fold(spec.seed, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        CLASSES[(h >> 7) as usize % CLASSES.len()].0.to_string()
    };
    for mut d in generate(spec) {
        match &mut d {
            Delta::PodGroup(g) => {
                g.priority_class_name = class(&g.name);
                if g.name.starts_with("run-") {
                    g.min_member = 0;
                }
            }
            Delta::Node(n) => {
                for r in [&mut n.allocatable, &mut n.capacity] {
                    r.insert("cpu".into(), 8000);
                    r.insert("memory".into(), 32 << 30);
                }
            }
            Delta::Pod(p) => {
                if let Some(g) = &p.group {
                    p.priority_class_name = class(g);
                }
            }
            _ => {}
        }
        c.apply(d).expect("generated objects are valid");
    }
    c
}

const PREEMPT_CONF: &str = "actions: \"enqueue, allocate, preempt\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: overcommit\n  - name: drf\n    enablePreemptable: false\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n";

const RECLAIM_CONF: &str = "actions: \"enqueue, allocate, reclaim\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n  - name: proportion\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: nodeorder\n  - name: binpack\n";

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    #[test]
    fn preempt_takes_only_lower_priority_victims_of_the_queue_for_a_pipelined_preemptor(spec in spec()) {
        let c = cluster(&spec);
        let conf = SchedulerConf::parse(PREEMPT_CONF).unwrap().0;
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions { seed: spec.seed, cycle: 1, now_ms: 0 }, &basalt_core::plugins::REGISTRY);
        let start_status: Vec<TaskStatus> = ssn.state.tasks.status().to_vec();
        for a in &conf.actions {
            basalt_core::actions::execute(*a, &mut ssn);
        }
        let s = &ssn.state;
        let mut seen = HashSet::new();
        for (v, reason) in &s.evictions {
            prop_assert_eq!(reason.as_str(), "preempt");
            prop_assert!(seen.insert(*v), "task {:?} evicted twice", v);
            prop_assert!(matches!(start_status[v.ix()], TaskStatus::Running | TaskStatus::Bound), "victim was {:?}", start_status[v.ix()]);
            prop_assert!(s.tasks.rec[v.ix()].spec.preemptable);
            let n = s.tasks.node_of(*v).expect("a victim stays on its node while Releasing");
            let vj = s.tasks.job_of(*v).expect("victims have a job");
            let found = s.tasks_on(n).any(|p| {
                if s.tasks.status()[p.ix()] != TaskStatus::Pipelined || !s.tasks.eviction_occurred()[p.ix()] {
                    return false;
                }
                let Some(pj) = s.tasks.job_of(p) else { return false };
                s.jobs.queue[pj.ix()] == s.jobs.queue[vj.ix()]
                    && if pj == vj {
                        s.tasks.priority[p.ix()] > s.tasks.priority[v.ix()]
                    } else {
                        s.jobs.priority[pj.ix()] > s.jobs.priority[vj.ix()]
                    }
            });
            prop_assert!(found, "no higher-priority preemptor of the same queue pipelined on the node of {}", s.task_key(*v));
        }
        // The decisions say the same: each pod evicted once, each nominated preemptor pipelined.
        let d = ssn.close();
        // Volcano's preemption metrics: a committed statement with evictions per transaction,
        // each after at least one attempt on a node with valid victims.
        let tx = d.preemption.eviction_transactions.iter().find(|(a, _)| *a == "preempt").map_or(0, |x| x.1);
        prop_assert_eq!(tx > 0, !d.evictions.is_empty(), "{:?}", d.preemption);
        prop_assert!(tx as usize <= d.evictions.len() && tx <= d.preemption.attempts, "{:?}", d.preemption);
        prop_assert!(d.evictions.is_empty() || d.preemption.last_victims.is_some());
        let pods: HashSet<_> = d.evictions.iter().map(|e| e.pod).collect();
        prop_assert_eq!(pods.len(), d.evictions.len());
    }

    #[test]
    fn reclaim_takes_running_victims_of_other_queues_above_their_share(spec in spec()) {
        let c = cluster(&spec);
        let conf = SchedulerConf::parse(RECLAIM_CONF).unwrap().0;
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions { seed: spec.seed, cycle: 1, now_ms: 0 }, &basalt_core::plugins::REGISTRY);
        let shares = Proportion::open(&ssn.state);
        basalt_core::actions::execute(basalt_core::conf::ActionKind::Enqueue, &mut ssn);
        basalt_core::actions::execute(basalt_core::conf::ActionKind::Allocate, &mut ssn);
        // Each queue's allocated when reclaim starts, as proportion counts it.
        let dims = ssn.state.dims;
        let mut allocated: HashMap<u32, Vec<f64>> = HashMap::new();
        for t in (0..ssn.state.tasks.len).map(|i| TaskIdx(i as u32)) {
            if let (Some(j), true) = (ssn.state.tasks.job_of(t), ssn.state.tasks.status()[t.ix()].allocated()) {
                let a = allocated.entry(ssn.state.jobs.queue[j.ix()]).or_insert_with(|| vec![0.0; dims]);
                for (d, &r) in ssn.state.tasks.req(t, dims).iter().enumerate() {
                    a[d] += r as f64;
                }
            }
        }
        let before: Vec<TaskStatus> = ssn.state.tasks.status().to_vec();
        let already = ssn.state.evictions.len();
        basalt_core::actions::execute(basalt_core::conf::ActionKind::Reclaim, &mut ssn);
        let s = &ssn.state;
        let mut seen = HashSet::new();
        for (v, reason) in &s.evictions[already..] {
            prop_assert_eq!(reason.as_str(), "reclaim");
            prop_assert!(seen.insert(*v), "task {:?} evicted twice", v);
            prop_assert_eq!(before[v.ix()], TaskStatus::Running);
            prop_assert!(s.tasks.rec[v.ix()].spec.preemptable);
            let vq = s.jobs.queue[s.tasks.job_of(*v).unwrap().ix()];
            prop_assert!(s.queues.rec[vq as usize].spec.reclaimable);
            let deserved = shares.deserved(QueueIdx(vq));
            let start = &allocated[&vq];
            let over = (0..dims).any(|d| d != basalt_core::resource::PODS && start[d] > deserved[d] + 0.1);
            prop_assert!(over, "queue {} was within its deserved share when reclaim took {}", vq, s.task_key(*v));
            let n = s.tasks.node_of(*v).unwrap();
            let found = s.tasks_on(n).any(|p| {
                s.tasks.status()[p.ix()] == TaskStatus::Pipelined
                    && s.tasks.eviction_occurred()[p.ix()]
                    && s.tasks.job_of(p).is_some_and(|pj| s.jobs.queue[pj.ix()] != vq)
            });
            prop_assert!(found, "no reclaimer of another queue pipelined on the node of {}", s.task_key(*v));
        }
    }

    #[test]
    fn statement_discard_restores_evictions_pipelines_and_unpipelines(
        spec in spec(),
        picks in proptest::collection::vec((any::<u16>(), any::<u16>(), 0u8..4), 1..40),
    ) {
        let c = cluster(&spec);
        let conf = SchedulerConf::default();
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
        let before = ssn.fingerprint(NodeTasks::InOrder);
        let mut st = ssn.statement();
        let (nt, nn) = (ssn.state.tasks.len as u32, ssn.state.nodes.len as u32);
        let mut evicted = 0;
        for (t, n, op) in picks {
            let t = TaskIdx(t as u32 % nt);
            let n = NodeIdx(n as u32 % nn);
            let status = ssn.state.tasks.status()[t.ix()];
            match op {
                0 if status == TaskStatus::Pending => {
                    ssn.allocate(&mut st, t, n);
                }
                1 if status == TaskStatus::Pending => ssn.pipeline_evicted(&mut st, t, n, n.0.is_multiple_of(2)),
                2 if status == TaskStatus::Pipelined => ssn.unpipeline(&mut st, t),
                3 if matches!(status, TaskStatus::Running | TaskStatus::Bound) => {
                    ssn.evict(&mut st, t, "preempt");
                    evicted += 1;
                }
                _ => {}
            }
        }
        prop_assert_eq!(st.ops().iter().filter(|o| o.kind == basalt_core::session::statement::OpKind::Evict).count(), evicted);
        ssn.discard(st);
        prop_assert_eq!(before, ssn.fingerprint(NodeTasks::InOrder));
        prop_assert!(ssn.state.evictions.is_empty());
    }
}

/// The properties above are not vacuous: over fixed clusters of the same generator (the middle
/// of [`spec`]'s ranges, 20 seeds) preempt and reclaim each evict, and every eviction counted
/// has the action's reason.
#[test]
fn the_random_clusters_do_preempt_and_reclaim() {
    for (text, action, reason) in [
        (PREEMPT_CONF, basalt_core::conf::ActionKind::Preempt, "preempt"),
        (RECLAIM_CONF, basalt_core::conf::ActionKind::Reclaim, "reclaim"),
    ] {
        let conf = SchedulerConf::parse(text).unwrap().0;
        let (mut total, mut clusters) = (0, 0);
        for seed in 0..20u64 {
            let c = cluster(&MixedSpec { nodes: 8, jobs: 16, running_per_node: 4, seed });
            let arena = bumpalo::Bump::new();
            let mut ssn =
                Session::open(&arena, &c, &conf, &CycleOptions { seed, cycle: 1, now_ms: 0 }, &basalt_core::plugins::REGISTRY);
            let mut before = 0;
            for a in &conf.actions {
                if *a == action {
                    before = ssn.state.evictions.len();
                }
                basalt_core::actions::execute(*a, &mut ssn);
            }
            let evicted = &ssn.state.evictions[before..];
            assert!(evicted.iter().all(|(_, r)| r == reason), "{reason}: {evicted:?}");
            total += evicted.len();
            clusters += usize::from(!evicted.is_empty());
        }
        assert!(total > 0, "{reason}: no eviction over 20 clusters");
        eprintln!("{reason}: {total} evictions in {clusters} of 20 clusters");
    }
}
