//! The `cdp` plugin (volcano-behaviour.md §3 cdp): a Running pod with `volcano.sh/cooldown-time`
//! is not a victim until that long after it was scheduled, measured against the cycle's
//! `now_ms`; with no "now" the rule is off.

mod support;

use basalt_core::framework::Session;
use basalt_core::model::*;
use basalt_core::plugins::REGISTRY;
use basalt_core::resource::ResourceList;
use basalt_core::session::tables::TaskIdx;
use basalt_core::{Cluster, CycleOptions, Delta, SchedulerConf};

const NOW: i64 = 1_700_000_000_000;

/// Pods `(name, phase, start_ms, cooldown_ms)` on one node.
fn cluster(pods: &[(&str, PodPhase, i64, Option<i64>)]) -> Cluster {
    let mut c = Cluster::new();
    c.apply(support::default_queue()).unwrap();
    let alloc: ResourceList = [("cpu".to_string(), 64000), ("pods".to_string(), 110)].into_iter().collect();
    c.apply(support::ready_node("n1", alloc)).unwrap();
    c.apply(support::running_group("ns", "pg")).unwrap();
    for &(name, phase, start_ms, cooldown_ms) in pods {
        c.apply(Delta::Pod(PodSpec {
            namespace: "ns".into(),
            name: name.into(),
            group: Some("pg".into()),
            scheduler_name: "volcano".into(),
            node_name: "n1".into(),
            phase,
            start_ms,
            cooldown_ms,
            resreq: [("cpu".to_string(), 1000), ("pods".to_string(), 1)].into_iter().collect(),
            ..Default::default()
        }))
        .unwrap();
    }
    c
}

fn victims(c: &Cluster, now_ms: i64) -> Vec<String> {
    let arena = bumpalo::Bump::new();
    let conf = SchedulerConf::parse("actions: \"preempt\"\ntiers:\n- plugins:\n  - name: cdp\n").unwrap().0;
    let ssn = Session::open(&arena, c, &conf, &CycleOptions { now_ms, ..Default::default() }, &REGISTRY);
    let s = &ssn.state;
    let mut all: Vec<TaskIdx> = (0..s.tasks.len as u32).map(TaskIdx).collect();
    all.sort_by_key(|t| s.tasks.rec[t.ix()].spec.name.clone());
    let (mut out, mut scratch) = (Vec::new(), Vec::new());
    ssn.plugins.reclaimable(s, all[0], &all, &mut out, &mut scratch);
    let by_reclaim: Vec<String> = out.iter().map(|t| s.tasks.rec[t.ix()].spec.name.clone()).collect();
    ssn.plugins.preemptable(s, all[0], &all, &mut out, &mut scratch);
    let by_preempt: Vec<String> = out.iter().map(|t| s.tasks.rec[t.ix()].spec.name.clone()).collect();
    assert_eq!(by_reclaim, by_preempt, "Preemptable and Reclaimable are the same rule");
    by_preempt
}

const MIN10: i64 = 600_000;

fn pods() -> Vec<(&'static str, PodPhase, i64, Option<i64>)> {
    vec![
        ("a-cooling", PodPhase::Running, NOW - 100_000, Some(MIN10)),
        ("b-cooled", PodPhase::Running, NOW - MIN10, Some(MIN10)),
        ("c-no-cooldown", PodPhase::Running, NOW - 1, None),
        ("d-bound-not-running", PodPhase::Pending, NOW - 1, Some(MIN10)),
        ("e-start-unknown", PodPhase::Running, 0, Some(MIN10)),
    ]
}

#[test]
fn a_running_pod_inside_its_cooldown_is_spared() {
    // b-cooled started exactly one cooldown ago: start + cooldown is not after now.
    assert_eq!(victims(&cluster(&pods()), NOW), ["b-cooled", "c-no-cooldown", "d-bound-not-running", "e-start-unknown"]);
}

#[test]
fn the_cooldown_ends_as_time_passes() {
    assert_eq!(victims(&cluster(&pods()), NOW + MIN10).len(), 5);
}

#[test]
fn without_a_now_the_rule_is_off() {
    assert_eq!(victims(&cluster(&pods()), 0).len(), 5);
}
