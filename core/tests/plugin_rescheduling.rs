//! The `rescheduling` plugin's `interval` (volcano-behaviour.md §3; Volcano
//! `util.IsToBeExecuted("reschedulingFns", interval)`): the strategies run when they never ran
//! or when the last run plus the interval is strictly before the cycle's "now"; a session in
//! which they ran reports its "now" in `Decisions::rescheduled_ms`, and the cluster remembers
//! it once the driver applies `Delta::Rescheduled`. A cycle without a clock runs them every
//! time and records nothing.

mod support;

use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Decisions, Delta, SchedulerConf};

const T: i64 = 1_700_000_000_000;
const MIN: i64 = 60_000;

fn res(cpu: i64, mem: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), mem), ("pods".to_string(), 110)].into_iter().collect()
}

/// n1 (4 cpu) runs four 1-cpu pods, n2 (4 cpu) none: with thresholds 20 % and targets 50 %,
/// n1 is high and n2 low, so every run of the strategy evicts from n1.
fn cluster() -> Cluster {
    let mut c = Cluster::new();
    c.apply(support::default_queue()).unwrap();
    for n in ["n1", "n2"] {
        c.apply(support::ready_node(n, res(4000, 8 << 30))).unwrap();
    }
    c.apply(support::running_group("ns", "pg")).unwrap();
    for i in 1..=4 {
        c.apply(Delta::Pod(PodSpec {
            namespace: "ns".into(),
            name: format!("p{i}"),
            group: Some("pg".into()),
            scheduler_name: "volcano".into(),
            node_name: "n1".into(),
            phase: PodPhase::Running,
            priority: Some(i),
            resreq: [("cpu".to_string(), 1000), ("memory".to_string(), 1 << 30), ("pods".to_string(), 1)].into_iter().collect(),
            ..Default::default()
        }))
        .unwrap();
    }
    c
}

fn conf(interval: Option<&str>) -> SchedulerConf {
    let interval = interval.map(|i| format!("\n      interval: {i:?}")).unwrap_or_default();
    let text = format!(
        "actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: priority\n  - name: rescheduling\n    arguments:{interval}\n      strategies:\n      - name: lowNodeUtilization\n        params:\n          thresholds: {{cpu: 20, memory: 20}}\n          targetThresholds: {{cpu: 50, memory: 50}}\n"
    );
    SchedulerConf::parse(&text).unwrap().0
}

fn cycle(c: &Cluster, conf: &SchedulerConf, now_ms: i64) -> Decisions {
    run_cycle(c, conf, &CycleOptions { seed: 1, cycle: 1, now_ms })
}

/// Runs a cycle at `now_ms`; applies its `rescheduled_ms` as the drivers do; returns how many
/// pods it evicted.
fn step(c: &mut Cluster, conf: &SchedulerConf, now_ms: i64) -> usize {
    let d = cycle(c, conf, now_ms);
    if let Some(at_ms) = d.rescheduled_ms {
        c.apply(Delta::Rescheduled { at_ms }).unwrap();
    }
    d.evictions.len()
}

#[test]
fn the_first_due_cycle_evicts_and_reports_its_time() {
    let c = cluster();
    let d = cycle(&c, &conf(None), T);
    let evicted: Vec<&str> = d.evictions.iter().map(|e| c.pod(e.pod).unwrap().spec.name.as_str()).collect();
    assert_eq!(evicted, ["p1", "p2"], "lowest priority first, until n1 is at its target");
    assert!(d.evictions.iter().all(|e| e.reason == "shuffle"));
    assert_eq!(d.rescheduled_ms, Some(T));
}

#[test]
fn default_interval_is_five_minutes_strictly() {
    let mut c = cluster();
    let conf = conf(None);
    assert_eq!(step(&mut c, &conf, T), 2);
    assert_eq!(c.rescheduled_ms(), Some(T));
    let d = cycle(&c, &conf, T + MIN);
    assert!(d.evictions.is_empty(), "one minute later is not due: {:?}", d.evictions);
    assert_eq!(d.rescheduled_ms, None, "a session that did not run records nothing");
    assert_eq!(cycle(&c, &conf, T + 5 * MIN).evictions.len(), 0, "last + 5m is not strictly before now");
    let d = cycle(&c, &conf, T + 5 * MIN + 1);
    assert_eq!(d.evictions.len(), 2, "5m + 1 ms later the strategies run again");
    assert_eq!(d.rescheduled_ms, Some(T + 5 * MIN + 1));
}

#[test]
fn the_memory_moves_with_each_run() {
    let mut c = cluster();
    let conf = conf(None);
    assert_eq!(step(&mut c, &conf, T), 2);
    assert_eq!(step(&mut c, &conf, T + 6 * MIN), 2);
    assert_eq!(c.rescheduled_ms(), Some(T + 6 * MIN));
    // 10 minutes after the first run but only 4 after the second.
    assert_eq!(step(&mut c, &conf, T + 10 * MIN), 0);
    assert_eq!(c.rescheduled_ms(), Some(T + 6 * MIN));
}

#[test]
fn interval_argument_is_read_as_a_go_duration() {
    let mut c = cluster();
    let conf = conf(Some("1s"));
    assert_eq!(step(&mut c, &conf, T), 2);
    assert_eq!(step(&mut c, &conf, T + 1000), 0, "exactly 1s later is not due");
    assert_eq!(step(&mut c, &conf, T + 1001), 2);
    let mut c = cluster();
    let conf = self::conf(Some("1h30m"));
    assert_eq!(step(&mut c, &conf, T), 2);
    assert_eq!(step(&mut c, &conf, T + 60 * MIN), 0, "an hour is within 1h30m");
    assert_eq!(step(&mut c, &conf, T + 91 * MIN), 2);
}

#[test]
fn an_interval_that_is_not_a_positive_duration_is_five_minutes() {
    for bad in ["0s", "-1m", "soon"] {
        let mut c = cluster();
        let conf = conf(Some(bad));
        assert_eq!(step(&mut c, &conf, T), 2, "{bad}");
        assert_eq!(step(&mut c, &conf, T + 4 * MIN), 0, "{bad}: read as 5m");
        assert_eq!(step(&mut c, &conf, T + 5 * MIN + 1), 2, "{bad}: read as 5m");
    }
}

#[test]
fn without_a_clock_every_cycle_runs_and_nothing_is_recorded() {
    let mut c = cluster();
    let conf = conf(None);
    for _ in 0..3 {
        let d = cycle(&c, &conf, 0);
        assert_eq!(d.evictions.len(), 2);
        assert_eq!(d.rescheduled_ms, None);
    }
    // A memory from an earlier clocked cycle does not stop a cycle without a clock either.
    c.apply(Delta::Rescheduled { at_ms: T }).unwrap();
    assert_eq!(step(&mut c, &conf, 0), 2);
    assert_eq!(c.rescheduled_ms(), Some(T));
}

#[test]
fn the_memory_is_not_a_layout_change() {
    let mut c = cluster();
    c.prepare("default");
    let generation = c.generation();
    c.apply(Delta::Rescheduled { at_ms: T }).unwrap();
    assert_eq!(c.generation(), generation);
    assert!(c.prepared("default").is_some(), "the kept layout stays current");
    assert_eq!(c.rescheduled_ms(), Some(T));
}
