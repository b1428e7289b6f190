//! Property tests of gangpreempt, gangreclaim and shuffle on production-like random clusters
//! (`workload_mixed`, with PriorityClasses given to its jobs and running pods, and some running
//! PodGroups kept at `minMember: 1` so victims have whole bundles as well as safe ones):
//!
//! - gangpreempt: every victim was Bound or Running and preemptable, evicted once, with reason
//!   `gangpreempt`; its queue holds a job of strictly higher priority that the action left
//!   pipelined with tasks pipelined on evictions (no eviction without such a preemptor).
//! - gangreclaim: every victim was Running and preemptable, of a reclaimable queue, evicted once
//!   with reason `gangreclaim`, for a pipelined job of another queue.
//! - The same cluster and seed decide the same evictions and pipelines.
//! - Discarding a plan's statement (every selected bundle evicted, the preemptor's tasks
//!   pipelined) restores the session exactly, the plugins' state included.
//! - shuffle with rescheduling evicts only Running tasks, each once, with reason `shuffle`.

use basalt_core::actions::gang_evict::{self, Settings};
use basalt_core::cluster::Cluster;
use basalt_core::conf::{ActionKind, SchedulerConf};
use basalt_core::framework::fingerprint::NodeTasks;
use basalt_core::framework::EvictionKind;
use basalt_core::framework::Session;
use basalt_core::model::PriorityClassSpec;
use basalt_core::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use basalt_core::workload_mixed::{generate, MixedSpec};
use basalt_core::{CycleOptions, Delta};
use proptest::prelude::*;
use std::collections::HashSet;

const CLASSES: [(&str, i32); 4] = [("p0", 0), ("p1", 100), ("p2", 1000), ("p3", 10000)];

fn spec() -> impl Strategy<Value = MixedSpec> {
    (2usize..16, 2usize..30, 2usize..7, any::<u64>()).prop_map(|(nodes, jobs, running_per_node, seed)| MixedSpec {
        nodes,
        jobs,
        running_per_node,
        seed,
    })
}

fn hash(seed: u64, s: &str) -> u64 {
    s.bytes().fold(seed, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
}

/// The mixed cluster of `spec`: PriorityClasses by a hash of the PodGroup name, half of the
/// running pods' PodGroups at `minMember: 0` (the rest keep theirs), nodes cut to 8 CPUs and
/// 32 GiB so the running pods fill them.
fn cluster(spec: &MixedSpec) -> Cluster {
    cluster_with_spares(spec, 0)
}

/// [`cluster`] plus `spares` empty nodes shaped like the first one (low nodes for shuffle).
fn cluster_with_spares(spec: &MixedSpec, spares: usize) -> Cluster {
    let mut c = Cluster::new();
    for (name, value) in CLASSES {
        c.apply(Delta::PriorityClass(PriorityClassSpec { name: name.into(), value, global_default: false })).unwrap();
    }
    let class = |group: &str| CLASSES[(hash(spec.seed, group) >> 7) as usize % CLASSES.len()].0.to_string();
    for mut d in generate(spec) {
        match &mut d {
            Delta::PodGroup(g) => {
                g.priority_class_name = class(&g.name);
                if g.name.starts_with("run-") && hash(spec.seed, &g.name).is_multiple_of(2) {
                    g.min_member = 0;
                }
            }
            Delta::Node(n) => {
                for r in [&mut n.allocatable, &mut n.capacity] {
                    r.insert("cpu".into(), 8000);
                    r.insert("memory".into(), 32 << 30);
                }
                if n.name == "node-00000" && spares > 0 {
                    for i in 0..spares {
                        let mut spare = n.clone();
                        spare.name = format!("spare-{i}");
                        c.apply(Delta::Node(spare)).unwrap();
                    }
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

fn conf(actions: &str) -> SchedulerConf {
    let text = format!(
        "actions: \"{actions}\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n  - name: rescheduling\n    arguments:\n      strategies:\n      - name: lowNodeUtilization\n        params:\n          thresholds: {{cpu: 30, memory: 30}}\n          targetThresholds: {{cpu: 60, memory: 60}}\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n"
    );
    SchedulerConf::parse(&text).unwrap().0
}

/// Runs `conf`'s actions; returns the statuses before the last action and the session.
fn run<'a>(
    arena: &'a bumpalo::Bump,
    c: &'a Cluster,
    conf: &'a SchedulerConf,
    seed: u64,
) -> (Vec<TaskStatus>, usize, Session<'a>) {
    let mut ssn = Session::open(arena, c, conf, &CycleOptions { seed, cycle: 1, now_ms: 0 }, &basalt_core::plugins::REGISTRY);
    let (last, rest) = conf.actions.split_last().unwrap();
    for a in rest {
        basalt_core::actions::execute(*a, &mut ssn);
    }
    let before = ssn.state.tasks.status().to_vec();
    let already = ssn.state.evictions.len();
    basalt_core::actions::execute(*last, &mut ssn);
    (before, already, ssn)
}

/// Jobs with a task pipelined on an eviction, that the plugins find pipelined.
fn preemptor_jobs(ssn: &Session<'_>) -> Vec<JobIdx> {
    let s = &ssn.state;
    let mut out: Vec<JobIdx> = (0..s.tasks.len)
        .map(|i| TaskIdx(i as u32))
        .filter(|&t| s.tasks.status()[t.ix()] == TaskStatus::Pipelined && s.tasks.eviction_occurred()[t.ix()])
        .filter_map(|t| s.tasks.job_of(t))
        .filter(|&j| ssn.plugins.job_pipelined(s, j))
        .collect();
    out.sort();
    out.dedup();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    #[test]
    fn gangpreempt_evicts_only_lower_priority_jobs_of_the_queue_for_a_pipelined_gang(spec in spec()) {
        let c = cluster(&spec);
        let conf = conf("enqueue, allocate, gangpreempt");
        let arena = bumpalo::Bump::new();
        let (before, already, ssn) = run(&arena, &c, &conf, spec.seed);
        let s = &ssn.state;
        let preemptors = preemptor_jobs(&ssn);
        let mut seen = HashSet::new();
        for (v, reason) in &s.evictions[already..] {
            prop_assert_eq!(reason.as_str(), "gangpreempt");
            prop_assert!(seen.insert(*v), "{} evicted twice", s.task_key(*v));
            prop_assert!(matches!(before[v.ix()], TaskStatus::Running | TaskStatus::Bound), "victim was {:?}", before[v.ix()]);
            prop_assert!(s.tasks.rec[v.ix()].spec.preemptable);
            let vj = s.tasks.job_of(*v).expect("victims have a job");
            let found = preemptors.iter().any(|&pj| {
                pj != vj && s.jobs.queue[pj.ix()] == s.jobs.queue[vj.ix()] && s.jobs.priority[pj.ix()] > s.jobs.priority[vj.ix()]
            });
            prop_assert!(found, "no pipelined higher-priority job of the queue of {}", s.task_key(*v));
        }
        let d = ssn.close();
        let pods: HashSet<_> = d.evictions.iter().map(|e| e.pod).collect();
        prop_assert_eq!(pods.len(), d.evictions.len());
        // volcano_eviction_transactions_total: one per committed plan with evictions.
        let tx = d.preemption.eviction_transactions.iter().find(|(a, _)| *a == "gangpreempt").map_or(0, |x| x.1);
        prop_assert_eq!(tx > 0, !d.evictions.is_empty(), "{:?}", d.preemption);
        prop_assert!(tx as usize <= d.evictions.len(), "{:?}", d.preemption);
    }

    #[test]
    fn gangreclaim_evicts_running_tasks_of_reclaimable_queues_for_a_pipelined_gang_of_another(spec in spec()) {
        let c = cluster(&spec);
        let conf = conf("enqueue, allocate, gangreclaim");
        let arena = bumpalo::Bump::new();
        let (before, already, ssn) = run(&arena, &c, &conf, spec.seed);
        let s = &ssn.state;
        let reclaimers = preemptor_jobs(&ssn);
        let mut seen = HashSet::new();
        for (v, reason) in &s.evictions[already..] {
            prop_assert_eq!(reason.as_str(), "gangreclaim");
            prop_assert!(seen.insert(*v), "{} evicted twice", s.task_key(*v));
            prop_assert_eq!(before[v.ix()], TaskStatus::Running);
            prop_assert!(s.tasks.rec[v.ix()].spec.preemptable);
            let vq = s.jobs.queue[s.tasks.job_of(*v).unwrap().ix()];
            prop_assert!(s.queues.rec[vq as usize].spec.reclaimable);
            prop_assert!(reclaimers.iter().any(|&j| s.jobs.queue[j.ix()] != vq), "no pipelined reclaimer of another queue for {}", s.task_key(*v));
        }
        let d = ssn.close();
        let tx = d.preemption.eviction_transactions.iter().find(|(a, _)| *a == "gangreclaim").map_or(0, |x| x.1);
        prop_assert_eq!(tx > 0, !d.evictions.is_empty(), "{:?}", d.preemption);
        prop_assert!(tx as usize <= d.evictions.len(), "{:?}", d.preemption);
    }

    #[test]
    fn gang_actions_decide_the_same_twice(spec in spec()) {
        let c = cluster(&spec);
        for actions in ["enqueue, allocate, gangpreempt", "enqueue, allocate, gangreclaim", "allocate, shuffle"] {
            let conf = conf(actions);
            let once = |_: ()| {
                let arena = bumpalo::Bump::new();
                let (_, _, ssn) = run(&arena, &c, &conf, spec.seed);
                let s = &ssn.state;
                let pipelined: Vec<(u32, u32)> = (0..s.tasks.len)
                    .filter(|&i| s.tasks.status()[i] == TaskStatus::Pipelined)
                    .map(|i| (i as u32, s.tasks.node()[i]))
                    .collect();
                (format!("{:?}", s.evictions), pipelined)
            };
            prop_assert_eq!(once(()), once(()));
        }
    }

    #[test]
    fn discarding_a_gang_plan_restores_the_session(spec in spec()) {
        let c = cluster(&spec);
        let conf = conf("enqueue, allocate, gangpreempt");
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions { seed: spec.seed, cycle: 1, now_ms: 0 }, &basalt_core::plugins::REGISTRY);
        basalt_core::actions::execute(ActionKind::Enqueue, &mut ssn);
        basalt_core::actions::execute(ActionKind::Allocate, &mut ssn);
        let settings = Settings { max_domains: 8, allow_whole_bundle: true };
        for kind in [EvictionKind::GangPreempt, EvictionKind::GangReclaim] {
            for j in (0..ssn.state.jobs.len).map(|i| JobIdx(i as u32)) {
                let pending = gang_evict::pending_for_eviction(&ssn, j);
                if pending.is_empty() || ssn.state.jobs.is_pending(j) {
                    continue;
                }
                let q = QueueIdx(ssn.state.jobs.queue[j.ix()]);
                let all: Vec<NodeIdx> = (0..ssn.state.nodes.len).map(|i| NodeIdx(i as u32)).collect();
                let bundles = gang_evict::select_bundles(&ssn, kind, settings, q, j, &vec![0; ssn.state.dims], &all);
                if bundles.is_empty() {
                    continue;
                }
                let before = ssn.fingerprint(NodeTasks::InOrder);
                let evictions = ssn.state.evictions.len();
                let mut plan = ssn.statement();
                let mut victims = 0;
                for b in &bundles {
                    for &v in &b.tasks {
                        prop_assert!(gang_evict::candidate(&ssn.state, kind, q, j, v));
                        ssn.evict(&mut plan, v, gang_evict::reason(kind));
                        victims += 1;
                    }
                }
                for (i, &t) in pending.iter().enumerate() {
                    let n = NodeIdx((i % ssn.state.nodes.len) as u32);
                    ssn.pipeline_evicted(&mut plan, t, n, true);
                }
                prop_assert_eq!(plan.ops().len(), victims + pending.len());
                ssn.discard(plan);
                prop_assert_eq!(&before, &ssn.fingerprint(NodeTasks::InOrder));
                prop_assert_eq!(ssn.state.evictions.len(), evictions);
            }
        }
    }

    #[test]
    fn shuffle_evicts_running_tasks_once(spec in spec()) {
        let c = cluster_with_spares(&spec, 2);
        let conf = conf("allocate, shuffle");
        let arena = bumpalo::Bump::new();
        let (before, already, ssn) = run(&arena, &c, &conf, spec.seed);
        let s = &ssn.state;
        let mut seen = HashSet::new();
        for (v, reason) in &s.evictions[already..] {
            prop_assert_eq!(reason.as_str(), "shuffle");
            prop_assert!(seen.insert(*v), "{} evicted twice", s.task_key(*v));
            prop_assert_eq!(before[v.ix()], TaskStatus::Running);
            prop_assert_eq!(s.tasks.status()[v.ix()], TaskStatus::Releasing);
        }
    }
}

/// The properties above are not vacuous: over a few fixed clusters each action evicts.
#[test]
fn the_random_clusters_do_make_each_action_evict() {
    for (actions, reason) in [
        ("enqueue, allocate, gangpreempt", "gangpreempt"),
        ("enqueue, allocate, gangreclaim", "gangreclaim"),
        ("allocate, shuffle", "shuffle"),
    ] {
        let conf = conf(actions);
        let mut total = 0;
        for seed in 0..20u64 {
            let spec = MixedSpec { nodes: 8, jobs: 20, running_per_node: 4, seed };
            let c = cluster_with_spares(&spec, if reason == "shuffle" { 2 } else { 0 });
            let arena = bumpalo::Bump::new();
            let (_, already, ssn) = run(&arena, &c, &conf, seed);
            total += ssn.state.evictions[already..].iter().filter(|(_, r)| r == reason).count();
        }
        assert!(total > 0, "{actions}: no eviction over 20 clusters");
        eprintln!("{actions}: {total} evictions over 20 clusters");
    }
}
