//! The sla, nodegroup and task-topology plugins (volcano-behaviour.md §3), rule by rule, through
//! the functions they register in a real session.

use basalt_core::framework::Session;
use basalt_core::model::{NodeGroupAffinity, NodeSpec, PodGroupPhase, PodGroupSpec, PodSpec, QueueSpec, TaskTopology};
use basalt_core::plugins::{k8s::PodCtx, Plugin, Vote, REGISTRY};
use basalt_core::resource::ResourceList;
use basalt_core::session::fit::Reason;
use basalt_core::session::tables::{JobIdx, NodeIdx, TaskIdx};
use basalt_core::session::State;
use basalt_core::{Cluster, CycleOptions, Delta, SchedulerConf};
use std::cmp::Ordering;

const MIN: i64 = 60_000;
const NS: i64 = 1_000_000;

fn res(cpu_milli: i64) -> ResourceList {
    [("cpu".to_string(), cpu_milli), ("memory".to_string(), 1 << 30), ("pods".to_string(), 1)].into_iter().collect()
}

fn node(c: &mut Cluster, name: &str, cpu: i64, group: Option<&str>) {
    let alloc: ResourceList =
        [("cpu".to_string(), cpu * 1000), ("memory".to_string(), 64 << 30), ("pods".to_string(), 110)].into_iter().collect();
    let mut labels = basalt_core::model::Labels::new();
    if let Some(g) = group {
        labels.insert("volcano.sh/nodegroup-name".to_string(), g.to_string());
    }
    c.apply(Delta::Node(NodeSpec {
        name: name.into(),
        labels,
        capacity: alloc.clone(),
        allocatable: alloc,
        ready: true,
        ..Default::default()
    }))
    .unwrap();
}

fn queue(c: &mut Cluster, name: &str, parent: &str, affinity: Option<NodeGroupAffinity>) {
    c.apply(Delta::Queue(QueueSpec {
        name: name.into(),
        weight: 1,
        reclaimable: true,
        parent: parent.into(),
        node_group_affinity: affinity,
        ..Default::default()
    }))
    .unwrap();
}

fn group(c: &mut Cluster, name: &str, queue: &str, created_ms: i64, f: impl FnOnce(&mut PodGroupSpec)) {
    let mut g = PodGroupSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("ns/{name}"),
        creation_ms: created_ms,
        min_member: 1,
        queue: queue.into(),
        phase: PodGroupPhase::Inqueue,
        ..Default::default()
    };
    f(&mut g);
    c.apply(Delta::PodGroup(g)).unwrap();
}

fn pod(c: &mut Cluster, name: &str, group: &str, role: &str, cpu_milli: i64, node: &str) {
    c.apply(Delta::Pod(PodSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("ns/{name}"),
        group: Some(group.into()),
        role: role.into(),
        scheduler_name: "volcano".into(),
        node_name: node.into(),
        phase: if node.is_empty() { basalt_core::model::PodPhase::Pending } else { basalt_core::model::PodPhase::Running },
        resreq: res(cpu_milli),
        nonzero_cpu_milli: cpu_milli,
        nonzero_memory_bytes: 1 << 30,
        preemptable: true,
        ..Default::default()
    }))
    .unwrap();
}

/// A conf with one tier holding `plugin` (its YAML entry body indented under `- name:`).
fn conf(plugin: &str) -> SchedulerConf {
    SchedulerConf::parse(&format!("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: {plugin}\n")).unwrap().0
}

fn open<'a>(arena: &'a bumpalo::Bump, c: &'a Cluster, conf: &'a SchedulerConf, now_ms: i64) -> Session<'a> {
    Session::open(arena, c, conf, &CycleOptions { seed: 1, cycle: 1, now_ms }, &REGISTRY)
}

fn the_plugin<'s, 'a>(ssn: &'s Session<'a>) -> &'s dyn Plugin<'a> {
    ssn.plugins.tiers()[0][0].plugin.as_ref()
}

fn job(s: &State<'_>, name: &str) -> JobIdx {
    (0..s.jobs.len).map(|i| JobIdx(i as u32)).find(|&j| s.jobs.rec[j.ix()].spec.name == name).unwrap()
}

fn task(s: &State<'_>, name: &str) -> TaskIdx {
    (0..s.tasks.len).map(|i| TaskIdx(i as u32)).find(|&t| s.tasks.rec[t.ix()].spec.name == name).unwrap()
}

fn node_ix(s: &State<'_>, name: &str) -> NodeIdx {
    (0..s.nodes.len).map(|i| NodeIdx(i as u32)).find(|&n| s.nodes.rec[n.ix()].spec.name == name).unwrap()
}

mod sla {
    use super::*;

    /// Jobs `a` (created 00:00, `a_wait`) and `b` (created 00:10, `b_wait`), waits in minutes.
    fn cluster(a_wait: Option<i64>, b_wait: Option<i64>) -> Cluster {
        let mut c = Cluster::new();
        node(&mut c, "n1", 8, None);
        queue(&mut c, "default", "", None);
        group(&mut c, "a", "default", 0, |g| g.sla_waiting_ns = a_wait.map(|m| m * MIN * NS));
        group(&mut c, "b", "default", 10 * MIN, |g| g.sla_waiting_ns = b_wait.map(|m| m * MIN * NS));
        pod(&mut c, "a-0", "a", "", 1000, "");
        pod(&mut c, "b-0", "b", "", 1000, "");
        c
    }

    fn order(c: &Cluster, conf: &SchedulerConf) -> Ordering {
        let arena = bumpalo::Bump::new();
        let ssn = open(&arena, c, conf, 0);
        let s = &ssn.state;
        the_plugin(&ssn).job_order(s, job(s, "a"), job(s, "b"))
    }

    #[test]
    fn job_order_puts_jobs_with_an_sla_first_then_the_earlier_deadline() {
        let cf = conf("sla");
        assert_eq!(order(&cluster(None, Some(60)), &cf), Ordering::Greater, "b has an SLA, a none: b first");
        assert_eq!(order(&cluster(Some(60), None), &cf), Ordering::Less);
        assert_eq!(order(&cluster(None, None), &cf), Ordering::Equal, "no SLA on either: the next plugin decides");
        // a: 00:00 + 30m = 00:30; b: 00:10 + 5m = 00:15.
        assert_eq!(order(&cluster(Some(30), Some(5)), &cf), Ordering::Greater);
        assert_eq!(order(&cluster(Some(5), Some(30)), &cf), Ordering::Less);
        // a: 00:00 + 20m = b: 00:10 + 10m.
        assert_eq!(order(&cluster(Some(20), Some(10)), &cf), Ordering::Equal);
    }

    #[test]
    fn the_argument_gives_jobs_without_the_annotation_an_sla() {
        let cf = SchedulerConf::parse(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: sla\n    arguments:\n      sla-waiting-time: 1h\n",
        )
        .unwrap()
        .0;
        // a: 00:00 + 1h (argument) = 01:00; b: 00:10 + 5m (annotation) = 00:15.
        assert_eq!(order(&cluster(None, Some(5)), &cf), Ordering::Greater);
        // a: 00:00 + 1h; b: 00:10 + 1h.
        assert_eq!(order(&cluster(None, None), &cf), Ordering::Less);
        // A value Volcano cannot read leaves only the annotations.
        let bad = SchedulerConf::parse(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: sla\n    arguments:\n      sla-waiting-time: 3600\n",
        )
        .unwrap()
        .0;
        assert_eq!(order(&cluster(None, None), &bad), Ordering::Equal);
    }

    #[test]
    fn enqueueable_and_pipelined_permit_only_once_the_waiting_time_has_passed() {
        let c = cluster(Some(15), None);
        let cf = conf("sla");
        let votes = |now_ms: i64| {
            let arena = bumpalo::Bump::new();
            let ssn = open(&arena, &c, &cf, now_ms);
            let (s, p) = (&ssn.state, the_plugin(&ssn));
            let (a, b) = (job(s, "a"), job(s, "b"));
            (p.job_enqueueable(s, a), p.job_pipelined(s, a), p.job_enqueueable(s, b))
        };
        assert_eq!(votes(0), (Vote::Abstain, Vote::Abstain, Vote::Abstain), "now unknown: no time-based permit");
        assert_eq!(votes(14 * MIN), (Vote::Abstain, Vote::Abstain, Vote::Abstain), "a has waited 14 of 15 minutes");
        assert_eq!(votes(15 * MIN), (Vote::Permit, Vote::Permit, Vote::Abstain), "waited exactly its SLA: permitted");
        assert_eq!(votes(90 * MIN).2, Vote::Abstain, "b has no SLA: abstains however long it waits");
    }

    #[test]
    fn the_sla_permit_enqueues_over_a_later_tier_reject() {
        let mut c = cluster(Some(15), Some(15));
        // a and b ask for more than the 8-cpu cluster; overcommit (tier 2) rejects both.
        for name in ["a", "b"] {
            let mut g = c.pod_group(c.pod_group_id("ns", name).unwrap()).unwrap().spec.clone();
            g.min_resources = Some(res(100_000));
            g.phase = PodGroupPhase::Pending;
            c.apply(Delta::PodGroup(g)).unwrap();
        }
        let cf =
            SchedulerConf::parse("actions: \"enqueue\"\ntiers:\n- plugins:\n  - name: sla\n- plugins:\n  - name: overcommit\n")
                .unwrap()
                .0;
        // now 00:20: a (00:00) has waited 20m ≥ 15m, b (00:10) 10m.
        let d = basalt_core::run_cycle(&c, &cf, &CycleOptions { seed: 1, cycle: 1, now_ms: 20 * MIN });
        let phase = |name: &str| {
            let id = c.pod_group_id("ns", name).unwrap();
            d.pod_groups.iter().find(|g| g.group == id).map(|g| g.phase)
        };
        assert_eq!(phase("a"), Some(PodGroupPhase::Inqueue));
        assert_eq!(phase("b"), Some(PodGroupPhase::Pending));
    }

    #[test]
    fn the_conf_check_knows_sla_and_its_argument() {
        let check = |args: &str| {
            REGISTRY.check(
                &SchedulerConf::parse(&format!(
                    "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: sla\n    arguments: {{{args}}}\n  - name: nodegroup\n  - name: task-topology\n"
                ))
                .unwrap()
                .0,
            )
        };
        assert!(check("sla-waiting-time: 10m").is_empty(), "{:?}", check("sla-waiting-time: 10m"));
        for bad in ["sla-waiting-time: 600", "sla-waiting-time: soon", "sla-waiting-time: -1m"] {
            let w = check(bad);
            assert_eq!(w.len(), 1, "{bad}: {w:?}");
            assert_eq!(w[0].name, "sla.sla-waiting-time");
            assert!(w[0].message.contains("is not a positive duration"), "{}", w[0].message);
        }
        let w = check("sla-wait: 10m");
        assert!(w[0].message.contains("unknown argument \"sla-wait\""), "{}", w[0].message);
    }
}

mod nodegroup {
    use super::*;

    fn aff(req: &[&str], pref: &[&str], anti_req: &[&str], anti_pref: &[&str]) -> Option<NodeGroupAffinity> {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        Some(NodeGroupAffinity { required: v(req), preferred: v(pref), anti_required: v(anti_req), anti_preferred: v(anti_pref) })
    }

    /// Nodes a, b, c (groups of the same name) and `none` (no label); one job per queue of
    /// `queues`, each with one pending pod `<queue>-0`.
    fn cluster(queues: &[(&str, &str, Option<NodeGroupAffinity>)]) -> Cluster {
        let mut c = Cluster::new();
        for g in ["a", "b", "c"] {
            node(&mut c, g, 8, Some(g));
        }
        node(&mut c, "none", 8, None);
        for (name, parent, a) in queues {
            queue(&mut c, name, parent, a.clone());
            group(&mut c, &format!("{name}-job"), name, 0, |_| {});
            pod(&mut c, &format!("{name}-0"), &format!("{name}-job"), "", 1000, "");
        }
        c
    }

    /// The predicate result and score of queue `q`'s task on each of the nodes a, b, c, none.
    fn results(c: &Cluster, conf: &SchedulerConf, q: &str) -> Vec<(Result<(), Reason>, f64)> {
        let arena = bumpalo::Bump::new();
        let ssn = open(&arena, c, conf, 0);
        let (s, p) = (&ssn.state, the_plugin(&ssn));
        let t = task(s, &format!("{q}-0"));
        let ctx = PodCtx::default();
        ["a", "b", "c", "none"]
            .iter()
            .map(|n| {
                let n = node_ix(s, n);
                let r = p.predicate(s, &ctx, t, n);
                assert_eq!(r, p.predicate_static(s, t, n), "the whole check is static for the session");
                (r, p.node_order(s, &ctx, t, n))
            })
            .collect()
    }

    use Reason::{NodeGroupAffinityNotFound as NoRules, NodeGroupLabelNotFound as NoLabel, NodeGroupUnsatisfied as No};

    #[test]
    fn predicate_and_score_follow_volcanos_rule_order() {
        let c = cluster(&[
            ("req", "", aff(&["a"], &["b"], &[], &[])),
            ("anti", "", aff(&["a", "b"], &[], &["b"], &[])),
            ("antipref", "", aff(&[], &[], &["a"], &["a", "c"])),
            ("empty", "", aff(&[], &[], &[], &[])),
            ("unset", "", None),
        ]);
        let cf = conf("nodegroup");
        // Required a (+100), preferred b (+50): both allowed, c not.
        assert_eq!(results(&c, &cf, "req"), vec![(Ok(()), 100.0), (Ok(()), 50.0), (Err(No), 0.0), (Err(NoLabel), 0.0)]);
        // Required anti-affinity overrides affinity.
        assert_eq!(results(&c, &cf, "anti"), vec![(Ok(()), 100.0), (Err(No), 100.0), (Err(No), 0.0), (Err(NoLabel), 0.0)]);
        // Preferred anti-affinity allows again (checked last), and scores exactly -1.
        assert_eq!(results(&c, &cf, "antipref"), vec![(Ok(()), -1.0), (Err(No), 0.0), (Ok(()), -1.0), (Err(NoLabel), 0.0)]);
        // No rules at all: a labelled node is refused, an unlabelled one too in strict mode.
        for q in ["empty", "unset"] {
            assert_eq!(
                results(&c, &cf, q),
                vec![(Err(NoRules), 0.0), (Err(NoRules), 0.0), (Err(NoRules), 0.0), (Err(NoLabel), 0.0)]
            );
        }
        assert!(No.unresolvable() && NoRules.unresolvable() && NoLabel.unresolvable(), "preemption cannot cure them");
    }

    #[test]
    fn not_strict_opens_unlabelled_nodes_to_queues_without_rules_only() {
        let c = cluster(&[("req", "", aff(&["a"], &[], &[], &[])), ("unset", "", None)]);
        let cf = SchedulerConf::parse(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodegroup\n    arguments:\n      strict: false\n",
        )
        .unwrap()
        .0;
        assert_eq!(results(&c, &cf, "unset")[3], (Ok(()), 0.0));
        assert_eq!(results(&c, &cf, "unset")[0].0, Err(NoRules));
        assert_eq!(results(&c, &cf, "req")[3].0, Err(NoLabel), "a queue with rules still needs the label");
    }

    #[test]
    fn enable_preferred_order_scores_earlier_preferred_groups_higher() {
        let c = cluster(&[("pref", "", aff(&[], &["c", "a", "b"], &[], &[]))]);
        let cf = SchedulerConf::parse(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodegroup\n    arguments:\n      enablePreferredOrder: true\n",
        )
        .unwrap()
        .0;
        let got: Vec<f64> = results(&c, &cf, "pref").into_iter().map(|x| x.1).collect();
        // 50 × (3 − i) / 3 for the i-th preferred group: c 50, a 33.3, b 16.7.
        assert_eq!(got, vec![50.0 * 2.0 / 3.0, 50.0 / 3.0, 50.0, 0.0]);
        let plain: Vec<f64> = results(&c, &conf("nodegroup"), "pref").into_iter().map(|x| x.1).collect();
        assert_eq!(plain, vec![50.0, 50.0, 50.0, 0.0], "without the argument every preferred group scores 50");
    }

    #[test]
    fn with_enable_hierarchy_a_queue_inherits_its_nearest_ancestors_rules() {
        let c = cluster(&[
            ("root", "", aff(&["c"], &[], &[], &[])),
            ("eng", "root", aff(&["b"], &[], &[], &[])),
            ("team", "eng", None),
            ("ops", "", None),
        ]);
        let flat = conf("nodegroup");
        assert_eq!(results(&c, &flat, "team")[1].0, Err(NoRules), "without the flag nothing is inherited");
        let h =
            SchedulerConf::parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodegroup\n    enableHierarchy: true\n")
                .unwrap()
                .0;
        let team: Vec<_> = results(&c, &h, "team").into_iter().map(|x| x.0).collect();
        assert_eq!(team, vec![Err(No), Ok(()), Err(No), Err(NoLabel)], "team takes eng's group b, not root's c");
        assert_eq!(results(&c, &h, "ops")[2].0, Ok(()), "a queue without a parent is under root");
    }

    #[test]
    fn tasks_of_queues_with_different_rules_are_different_classes() {
        let c = cluster(&[("qa", "", aff(&["a"], &[], &[], &[])), ("qb", "", aff(&["b"], &[], &[], &[])), ("qa2", "", None)]);
        let cf = conf("nodegroup");
        let arena = bumpalo::Bump::new();
        let ssn = open(&arena, &c, &cf, 0);
        let s = &ssn.state;
        let key = |q: &str| ssn.plugins.class_key(s, task(s, &format!("{q}-0")));
        assert!(key("qa").is_some() && key("qb").is_some());
        assert_ne!(key("qa"), key("qb"));
        assert_ne!(key("qa"), key("qa2"));
    }
}

mod task_topology {
    use super::*;

    /// Job `j` with the given topology and tasks (name, role, cpu milli, node).
    fn cluster(topo: TaskTopology, tasks: &[(&str, &str, i64, &str)], nodes: &[(&str, i64)]) -> Cluster {
        let mut c = Cluster::new();
        for (n, cpu) in nodes {
            node(&mut c, n, *cpu, None);
        }
        queue(&mut c, "default", "", None);
        group(&mut c, "j", "default", 0, |g| {
            g.task_topology = Some(topo);
            g.min_member = 1;
        });
        for (name, role, cpu, node) in tasks {
            pod(&mut c, name, "j", role, *cpu, node);
        }
        c
    }

    fn groups(s: &str) -> Option<Vec<Vec<String>>> {
        Some(s.split(';').map(|g| g.split(',').map(str::to_string).collect()).collect())
    }

    fn tt_conf() -> SchedulerConf {
        SchedulerConf::parse(
            "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: task-topology\n    arguments:\n      task-topology.weight: 2\n",
        )
        .unwrap()
        .0
    }

    #[test]
    fn affine_tasks_score_towards_the_node_their_bucket_uses() {
        let topo = TaskTopology { affinity: groups("ps,worker"), ..Default::default() };
        let c = cluster(
            topo,
            &[
                ("j-ps-0", "ps", 1000, ""),
                ("j-worker-0", "worker", 1000, ""),
                ("j-worker-1", "worker", 1000, ""),
                ("j-x-0", "x", 1000, ""),
            ],
            &[("n1", 8), ("n2", 8), ("small", 2)],
        );
        let cf = tt_conf();
        let arena = bumpalo::Bump::new();
        let mut ssn = open(&arena, &c, &cf, 0);
        let ctx = PodCtx::default();
        let (ps, w0, w1, x) = {
            let s = &ssn.state;
            (task(s, "j-ps-0"), task(s, "j-worker-0"), task(s, "j-worker-1"), task(s, "j-x-0"))
        };
        let (n1, n2, small) = (node_ix(&ssn.state, "n1"), node_ix(&ssn.state, "n2"), node_ix(&ssn.state, "small"));
        {
            let (s, p) = (&ssn.state, the_plugin(&ssn));
            // One bucket of 3 (bucket max 3): 3 unplaced × weight 2 × 100 / 3 on a node that fits it.
            assert_eq!(p.node_order(s, &ctx, w0, n1), 200.0);
            // `small` (2 cpu) holds the task but not the bucket's 3 cpu: one other task left out.
            assert_eq!(p.node_order(s, &ctx, w0, small), 2.0 * 2.0 * 100.0 / 3.0);
            assert_eq!(p.node_order(s, &ctx, x, n1), 0.0, "a role in no rule is out of bucket");
            assert_eq!(ssn.plugins.class_key(s, w0), None, "bucketed tasks take the plain scan");
            assert_eq!(ssn.plugins.class_key(s, x), Some(0));
            // In-bucket tasks first; x has no rule.
            assert_eq!(p.task_order(s, w0, x), Ordering::Less);
            assert_eq!(p.task_order(s, x, ps), Ordering::Greater);
        }
        let mut st = ssn.statement();
        assert!(ssn.allocate(&mut st, ps, n2));
        let (s, p) = (&ssn.state, the_plugin(&ssn));
        // n2 holds one placed task of the bucket, and 2 remain unplaced.
        assert_eq!(p.node_order(s, &ctx, w0, n2), (1.0 + 2.0) * 200.0 / 3.0);
        assert_eq!(p.node_order(s, &ctx, w0, n1), 2.0 * 200.0 / 3.0);
        assert!(p.node_order(s, &ctx, w1, n2) > p.node_order(s, &ctx, w1, n1));
    }

    #[test]
    fn self_anti_affinity_gives_each_task_its_own_bucket_and_repels_from_placed_ones() {
        let topo = TaskTopology { anti_affinity: groups("worker"), ..Default::default() };
        let c = cluster(topo, &[("j-worker-0", "worker", 1000, ""), ("j-worker-1", "worker", 1000, "")], &[("n1", 8), ("n2", 8)]);
        let cf = tt_conf();
        let arena = bumpalo::Bump::new();
        let mut ssn = open(&arena, &c, &cf, 0);
        let ctx = PodCtx::default();
        let (w0, w1) = (task(&ssn.state, "j-worker-0"), task(&ssn.state, "j-worker-1"));
        let (n1, n2) = (node_ix(&ssn.state, "n1"), node_ix(&ssn.state, "n2"));
        // Buckets of one (max size 1): 1 × 2 × 100.
        assert_eq!(the_plugin(&ssn).node_order(&ssn.state, &ctx, w1, n1), 200.0);
        assert_eq!(the_plugin(&ssn).task_order(&ssn.state, w0, w1), Ordering::Less, "the older bucket first");
        let mut st = ssn.statement();
        assert!(ssn.allocate(&mut st, w0, n1));
        let (s, p) = (&ssn.state, the_plugin(&ssn));
        assert_eq!(p.node_order(s, &ctx, w1, n1), 0.0, "−1 for the anti-affine worker on n1, +1 for itself");
        assert_eq!(p.node_order(s, &ctx, w1, n2), 200.0);
    }

    #[test]
    fn bound_tasks_seed_buckets_by_node_and_the_task_order_annotation_orders_roles() {
        let topo = TaskTopology {
            affinity: groups("ps,worker"),
            task_order: Some(vec!["worker".into(), "ps".into()]),
            ..Default::default()
        };
        let c = cluster(
            topo,
            &[("j-ps-0", "ps", 1000, "n2"), ("j-ps-1", "ps", 1000, ""), ("j-worker-0", "worker", 1000, "")],
            &[("n1", 8), ("n2", 8)],
        );
        let cf = tt_conf();
        let arena = bumpalo::Bump::new();
        let ssn = open(&arena, &c, &cf, 0);
        let (s, p) = (&ssn.state, the_plugin(&ssn));
        let ctx = PodCtx::default();
        let (ps1, w0) = (task(s, "j-ps-1"), task(s, "j-worker-0"));
        // The running ps-0 made a bucket on n2 that the pending tasks joined (affinity > 0):
        // bucket size 3 (1 placed + 2 unplaced).
        assert_eq!(p.node_order(s, &ctx, w0, node_ix(s, "n2")), (1.0 + 2.0) * 200.0 / 3.0);
        assert_eq!(p.node_order(s, &ctx, w0, node_ix(s, "n1")), 2.0 * 200.0 / 3.0);
        assert_eq!(p.task_order(s, w0, ps1), Ordering::Less, "worker is first in the task order annotation");
        assert_eq!(p.task_order(s, ps1, w0), Ordering::Greater);
    }

    #[test]
    fn a_name_that_is_not_a_task_of_the_job_disables_the_topology_with_an_event() {
        let topo = TaskTopology { affinity: groups("ps,chief"), ..Default::default() };
        let c = cluster(topo, &[("j-ps-0", "ps", 1000, ""), ("j-worker-0", "worker", 1000, "")], &[("n1", 8)]);
        let cf = tt_conf();
        let d = basalt_core::run_cycle(&c, &cf, &CycleOptions { seed: 1, cycle: 1, now_ms: 0 });
        let ev: Vec<_> = d.events.iter().filter(|e| e.reason == "InvalidTaskTopology").collect();
        assert_eq!(ev.len(), 1, "{:?}", d.events);
        assert_eq!(ev[0].kind, "Warning");
        assert_eq!(
            ev[0].message,
            "PodGroup ns/j: annotation volcano.sh/task-topology-affinity: task chief does not exist in the job; task-topology ignores the job"
        );
        let arena = bumpalo::Bump::new();
        let ssn = open(&arena, &c, &cf, 0);
        let (s, p) = (&ssn.state, the_plugin(&ssn));
        assert_eq!(p.node_order(s, &PodCtx::default(), task(s, "j-ps-0"), NodeIdx(0)), 0.0);
        let dup = TaskTopology { anti_affinity: groups("ps,ps"), ..Default::default() };
        let c = cluster(dup, &[("j-ps-0", "ps", 1000, "")], &[("n1", 8)]);
        let d = basalt_core::run_cycle(&c, &cf, &CycleOptions { seed: 1, cycle: 1, now_ms: 0 });
        assert!(d.events.iter().any(|e| e.message.contains("task ps is duplicated")), "{:?}", d.events);
    }

    #[test]
    fn weight_argument_is_known_and_read_as_an_integer() {
        let w = REGISTRY.check(
            &SchedulerConf::parse(
                "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: task-topology\n    arguments:\n      task-topology.weight: heavy\n",
            )
            .unwrap()
            .0,
        );
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].name, "task-topology.task-topology.weight");
        assert!(w[0].message.contains("is not an integer; the default 1 is used"), "{}", w[0].message);
    }
}
