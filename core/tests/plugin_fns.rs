//! The function set each plugin registers is its declared capability set (`FNS`), held equal to
//! the set derived from the methods it implements (`plugins::plugin_impl!`), so a plugin
//! announces exactly what it has.

use basalt_core::framework::Session;
use basalt_core::plugins::{Fn, REGISTRY};
use basalt_core::{Cluster, CycleOptions, SchedulerConf};

fn mask(fns: &[Fn]) -> u32 {
    fns.iter().fold(0, |m, f| m | f.bit())
}

#[test]
fn each_plugin_registers_what_it_implements() {
    let conf = SchedulerConf::parse(
        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n  - name: capacity\n  - name: rescheduling\n  - name: sla\n  - name: nodegroup\n  - name: task-topology\n  - name: deviceshare\n  - name: numa-aware\n",
    )
    .unwrap()
    .0;
    let c = Cluster::new();
    let arena = bumpalo::Bump::new();
    let ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let got: Vec<(&str, u32)> = ssn.plugins.tiers().iter().flatten().map(|s| (s.plugin.name(), s.plugin.fns())).collect();
    use Fn::*;
    let want = vec![
        ("priority", mask(&[TaskOrder, JobOrder, Preemptable, UnifiedEvictable, JobStarving])),
        ("gang", mask(&[JobValid, JobOrder, JobReady, JobPipelined, JobStarving, Preemptable, Reclaimable, UnifiedEvictable])),
        ("conformance", mask(&[Preemptable, Reclaimable, UnifiedEvictable])),
        ("overcommit", mask(&[JobEnqueueable, JobEnqueued])),
        // QueueOrder and Reclaimable decide only with enableHierarchy (neutral otherwise).
        ("drf", mask(&[JobOrder, QueueOrder, Preemptable, Reclaimable, EventHandler])),
        // PrePredicate: VolumeBinding's PreFilter and the DRA refusal, as Volcano's PrePredicateFn.
        ("predicates", mask(&[PrePredicate, Predicate, EventHandler])),
        // Allocated and inqueue live in the session's queue table, kept by the session itself.
        ("proportion", mask(&[QueueOrder, Overused, Allocatable, Preemptive, Reclaimable, JobEnqueueable])),
        ("nodeorder", mask(&[NodeOrder, BatchNodeOrder])),
        ("binpack", mask(&[NodeOrder])),
        // No Overused, as Volcano's capacity; VictimQueueOrder decides only with enableHierarchy.
        (
            "capacity",
            mask(&[QueueOrder, Allocatable, JobEnqueueable, Preemptive, Reclaimable, UnifiedEvictable, VictimQueueOrder]),
        ),
        ("rescheduling", mask(&[VictimTasks])),
        // Volcano registers the same permit function as JobEnqueueable and JobPipelined.
        ("sla", mask(&[JobOrder, JobEnqueueable, JobPipelined])),
        ("nodegroup", mask(&[Predicate, NodeOrder])),
        // An AllocateFunc only: Volcano's task-topology has no DeallocateFunc.
        ("task-topology", mask(&[TaskOrder, NodeOrder, EventHandler])),
        // Volcano registers its NodeOrderFn always; it scores 0 for GPU share (ScheduleWeight
        // serves vGPU only). Card allocation is the Statement's, not an event handler.
        ("deviceshare", mask(&[Predicate, NodeOrder])),
        // Volcano's predicateFn, batchNodeOrderFn and the event handler keeping nodeResSets.
        ("numa-aware", mask(&[Predicate, BatchNodeOrder, EventHandler])),
    ];
    assert_eq!(got, want);
}

#[test]
fn each_plugin_declares_exactly_the_functions_it_implements() {
    let mut conf_text = String::from("actions: \"allocate\"\ntiers:\n- plugins:\n");
    for e in REGISTRY.entries {
        conf_text.push_str(&format!("  - name: {}\n", e.name));
    }
    let conf = SchedulerConf::parse(&conf_text).unwrap().0;
    let c = Cluster::new();
    let arena = bumpalo::Bump::new();
    let ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let plugins: Vec<_> = ssn.plugins.tiers().iter().flatten().collect();
    assert_eq!(plugins.len(), REGISTRY.entries.len(), "every registered plugin opened");
    for s in plugins {
        assert_eq!(
            s.plugin.fns(),
            s.plugin.implemented_fns(),
            "plugin {}: declared FNS {:#b} differs from the methods it implements {:#b}",
            s.plugin.name(),
            s.plugin.fns(),
            s.plugin.implemented_fns()
        );
    }
}

#[test]
fn a_plugin_missing_from_the_registry_is_skipped() {
    let conf = SchedulerConf::parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: tdm\n  - name: gang\n").unwrap().0;
    assert_eq!(conf.tiers[0].plugins.len(), 2, "the conf keeps Volcano plugins Basalt lacks, for the report");
    let c = Cluster::new();
    let arena = bumpalo::Bump::new();
    let ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let names: Vec<&str> = ssn.plugins.tiers().iter().flatten().map(|s| s.plugin.name()).collect();
    assert_eq!(names, vec!["gang"]);
}

#[test]
fn the_cycle_observer_sees_each_plugin_open_and_close_in_tier_order() {
    use basalt_core::conf::ActionKind;
    use basalt_core::scheduler::{run_cycle_observed, CyclePhase};
    let conf = SchedulerConf::parse(
        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: tdm\n- plugins:\n  - name: proportion\n",
    )
    .unwrap()
    .0;
    let c = Cluster::new();
    let arena = bumpalo::Bump::new();
    let mut seen = Vec::new();
    let d = run_cycle_observed(&arena, &c, &conf, &CycleOptions::default(), |p| seen.push(p));
    use CyclePhase::*;
    assert_eq!(
        seen,
        vec![
            TablesBuilt,
            PluginOpened("gang"),
            PluginOpened("proportion"),
            Opened,
            ActionDone(ActionKind::Enqueue),
            ActionDone(ActionKind::Allocate),
            PluginClosed("gang"),
            PluginClosed("proportion"),
            Closed,
        ],
        "tdm is not in the registry: no phase of its own"
    );
    assert_eq!(d, basalt_core::run_cycle(&c, &conf, &CycleOptions::default()), "observing changes nothing");
}
