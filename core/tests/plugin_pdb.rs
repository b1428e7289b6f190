//! The `pdb` plugin (volcano-behaviour.md §3 pdb): victims are refused once a
//! PodDisruptionBudget of their namespace would go below zero, from its status or, without
//! one, from its spec; evictions already taken this session count, and undoing them gives the
//! budget back.

mod support;

use basalt_core::framework::Session;
use basalt_core::model::*;
use basalt_core::plugins::REGISTRY;
use basalt_core::resource::ResourceList;
use basalt_core::session::tables::TaskIdx;
use basalt_core::{Cluster, CycleOptions, Delta, SchedulerConf};

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// One node; pods `web-0..web-3` (label app=web) and `bare` (no labels) running in `ns`, and
/// `other-0` (app=web) in namespace `other`.
fn cluster() -> Cluster {
    let mut c = Cluster::new();
    c.apply(support::default_queue()).unwrap();
    let alloc: ResourceList = [("cpu".to_string(), 64000), ("pods".to_string(), 110)].into_iter().collect();
    c.apply(support::ready_node("n1", alloc)).unwrap();
    let mut pod = |ns: &str, name: &str, l: Labels| {
        c.apply(Delta::Pod(PodSpec {
            namespace: ns.into(),
            name: name.into(),
            uid: format!("{ns}/{name}"),
            group: Some("pg".into()),
            scheduler_name: "volcano".into(),
            node_name: "n1".into(),
            phase: PodPhase::Running,
            labels: l,
            resreq: [("cpu".to_string(), 1000), ("pods".to_string(), 1)].into_iter().collect(),
            ..Default::default()
        }))
        .unwrap();
    };
    for i in 0..4 {
        pod("ns", &format!("web-{i}"), labels(&[("app", "web")]));
    }
    pod("ns", "bare", Labels::new());
    pod("other", "other-0", labels(&[("app", "web")]));
    for ns in ["ns", "other"] {
        c.apply(support::running_group(ns, "pg")).unwrap();
    }
    c
}

fn web_budget(ns: &str) -> PodDisruptionBudgetSpec {
    PodDisruptionBudgetSpec {
        namespace: ns.into(),
        name: "web".into(),
        selector: LabelSelector { match_labels: labels(&[("app", "web")]), ..Default::default() },
        ..Default::default()
    }
}

fn conf() -> SchedulerConf {
    SchedulerConf::parse("actions: \"preempt\"\ntiers:\n- plugins:\n  - name: pdb\n").unwrap().0
}

/// The names `pdb` lets through, asked once over every task in name order.
fn victims(c: &Cluster) -> Vec<String> {
    let arena = bumpalo::Bump::new();
    let conf = conf();
    let ssn = Session::open(&arena, c, &conf, &CycleOptions::default(), &REGISTRY);
    let all = sorted_tasks(&ssn);
    let (mut out, mut scratch) = (Vec::new(), Vec::new());
    ssn.plugins.preemptable(&ssn.state, all[0], &all, &mut out, &mut scratch);
    out.iter().map(|t| ssn.state.tasks.rec[t.ix()].spec.name.clone()).collect()
}

fn sorted_tasks(ssn: &Session<'_>) -> Vec<TaskIdx> {
    let s = &ssn.state;
    let mut all: Vec<TaskIdx> = (0..s.tasks.len as u32).map(TaskIdx).collect();
    all.sort_by_key(|t| (s.tasks.rec[t.ix()].spec.namespace.clone(), s.tasks.rec[t.ix()].spec.name.clone()));
    all
}

#[test]
fn without_budgets_every_candidate_is_a_victim() {
    assert_eq!(victims(&cluster()), ["bare", "web-0", "web-1", "web-2", "web-3", "other-0"]);
}

#[test]
fn status_allowance_lets_through_that_many_matching_pods_in_candidate_order() {
    let mut c = cluster();
    let mut b = web_budget("ns");
    b.status = Some(PodDisruptionBudgetStatus { disruptions_allowed: 1, disrupted_pods: vec![] });
    c.apply(Delta::PodDisruptionBudget(b)).unwrap();
    // Unlabelled pods and pods of another namespace match no budget.
    assert_eq!(victims(&c), ["bare", "web-0", "other-0"]);
}

#[test]
fn zero_allowance_refuses_every_matching_pod_and_disrupted_pods_are_not_counted_again() {
    let mut c = cluster();
    let mut b = web_budget("ns");
    b.status = Some(PodDisruptionBudgetStatus { disruptions_allowed: 0, disrupted_pods: vec!["web-1".into()] });
    c.apply(Delta::PodDisruptionBudget(b)).unwrap();
    assert_eq!(victims(&c), ["bare", "web-1", "other-0"]);
}

#[test]
fn allowance_from_spec_follows_the_disruption_controller() {
    // 4 healthy web pods in ns.
    let cases: [(Option<IntOrPercent>, Option<IntOrPercent>, &[&str]); 6] = [
        (Some(IntOrPercent::Int(3)), None, &["web-0"]),
        (Some(IntOrPercent::Int(4)), None, &[]),
        (Some(IntOrPercent::Percent(50)), None, &["web-0", "web-1"]),
        // 30% of 4 rounds up to 2 desired healthy.
        (Some(IntOrPercent::Percent(30)), None, &["web-0", "web-1"]),
        (None, Some(IntOrPercent::Int(1)), &["web-0"]),
        // Neither set: the API's default minAvailable 1.
        (None, None, &["web-0", "web-1", "web-2"]),
    ];
    for (min, max, want) in cases {
        let mut c = cluster();
        c.apply(Delta::PodDisruptionBudget(PodDisruptionBudgetSpec {
            min_available: min,
            max_unavailable: max,
            ..web_budget("ns")
        }))
        .unwrap();
        let got: Vec<String> = victims(&c).into_iter().filter(|n| n.starts_with("web")).collect();
        assert_eq!(got, want, "minAvailable {min:?} maxUnavailable {max:?}");
    }
}

#[test]
fn unhealthy_pods_count_as_expected_but_not_healthy() {
    let mut c = cluster();
    // web-3 is terminating: 3 healthy of 4 expected; maxUnavailable 2 ⇒ desired 2 ⇒ 1 allowed.
    let mut p = c.pods().find(|(_, p)| p.spec.name == "web-3").unwrap().1.spec.clone();
    p.deleting = true;
    c.apply(Delta::Pod(p)).unwrap();
    c.apply(Delta::PodDisruptionBudget(PodDisruptionBudgetSpec {
        max_unavailable: Some(IntOrPercent::Int(2)),
        ..web_budget("ns")
    }))
    .unwrap();
    let got: Vec<String> = victims(&c).into_iter().filter(|n| n.starts_with("web")).collect();
    assert_eq!(got, ["web-0"]);
}

#[test]
fn empty_selector_matches_nothing() {
    let mut c = cluster();
    c.apply(Delta::PodDisruptionBudget(PodDisruptionBudgetSpec {
        selector: LabelSelector::default(),
        min_available: Some(IntOrPercent::Percent(100)),
        ..web_budget("ns")
    }))
    .unwrap();
    assert_eq!(victims(&c).len(), 6);
}

#[test]
fn match_expressions_select_and_invalid_ones_are_refused_naming_the_field() {
    let mut c = cluster();
    let sel = LabelSelector {
        match_expressions: vec![Requirement { key: "app".into(), op: SelectorOp::In, values: vec!["web".into(), "db".into()] }],
        ..Default::default()
    };
    c.apply(Delta::PodDisruptionBudget(PodDisruptionBudgetSpec {
        selector: sel,
        min_available: Some(IntOrPercent::Int(4)),
        ..web_budget("ns")
    }))
    .unwrap();
    assert_eq!(victims(&c), ["bare", "other-0"]);
    let bad = LabelSelector {
        match_expressions: vec![Requirement { key: "app".into(), op: SelectorOp::Gt, values: vec!["1".into()] }],
        ..Default::default()
    };
    let e = c.apply(Delta::PodDisruptionBudget(PodDisruptionBudgetSpec { selector: bad, ..web_budget("other") })).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("PodDisruptionBudget other/web") && msg.contains("spec.selector.matchExpressions"), "{msg}");
}

#[test]
fn evictions_this_session_spend_the_budget_and_discard_gives_it_back() {
    let mut c = cluster();
    let mut b = web_budget("ns");
    b.status = Some(PodDisruptionBudgetStatus { disruptions_allowed: 1, disrupted_pods: vec![] });
    c.apply(Delta::PodDisruptionBudget(b)).unwrap();
    let arena = bumpalo::Bump::new();
    let conf = conf();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let all = sorted_tasks(&ssn);
    let name = |ssn: &Session<'_>, v: &[TaskIdx]| -> Vec<String> {
        v.iter().map(|t| ssn.state.tasks.rec[t.ix()].spec.name.clone()).collect()
    };
    let web: Vec<TaskIdx> = all.iter().copied().filter(|t| ssn.state.tasks.rec[t.ix()].spec.name.starts_with("web")).collect();
    let (mut out, mut scratch) = (Vec::new(), Vec::new());
    let mut st = ssn.statement();
    ssn.evict(&mut st, web[0], "preempt");
    ssn.plugins.preemptable(&ssn.state, all[0], &web[1..], &mut out, &mut scratch);
    assert!(out.is_empty(), "the one allowed disruption is spent: {:?}", name(&ssn, &out));
    ssn.discard(st);
    ssn.plugins.preemptable(&ssn.state, all[0], &web[1..], &mut out, &mut scratch);
    assert_eq!(name(&ssn, &out), ["web-1"]);
}
