//! The PodGroup condition gang writes at session close, as Volcano master's gang
//! `OnSessionClose` (volcano-behaviour.md §1.6):
//! * a job without tasks (a PodGroup whose pods the controller has not created yet) gets none;
//! * a ready job, including one whose tasks were dispatched this cycle (`Binding` counts in
//!   `ReadyTaskNum`), gets `Scheduled` "tasks in gang are ready to be scheduled";
//! * a job that is not ready gets `Unschedulable`/`NotEnoughResources`, except one that waits for
//!   no Pending or Pipelined task and whose scheduled tasks (Running, Bound, Failed, Succeeded)
//!   with its Releasing tasks still on a node cover minAvailable (`shouldSkipUnschedulableForReleasing`
//!   of d725ce4db; the cases of Volcano's `TestShouldSkipUnschedulableForReleasing`, plus a Failed
//!   task, which `ScheduledTaskNum` counts).
//!
//! The same Releasing tasks count as scheduled for the phase (`getPodGroupPhase`).

use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Decisions, Delta, SchedulerConf};

fn res(cpu: i64, pods: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), cpu << 20), ("pods".to_string(), pods)].into_iter().collect()
}

/// A task of PodGroup `g` as Volcano's `getTaskStatus` sees its pod.
#[derive(Clone, Copy)]
enum T {
    /// Running on n1.
    Running,
    /// Terminating (deletionTimestamp set) while running on n1.
    ReleasingOnNode,
    /// Deleted while still pending: never had a node.
    ReleasingNeverScheduled,
    /// Pending, requesting 1 CPU.
    Pending,
    /// Pending, requesting more than any node has.
    PendingTooBig,
    /// Failed on n1.
    Failed,
}

fn pod(i: usize, t: T) -> PodSpec {
    let (phase, node, deleting, cpu) = match t {
        T::Running => (PodPhase::Running, "n1", false, 1000),
        T::ReleasingOnNode => (PodPhase::Running, "n1", true, 1000),
        T::ReleasingNeverScheduled => (PodPhase::Pending, "", true, 1000),
        T::Pending => (PodPhase::Pending, "", false, 1000),
        T::PendingTooBig => (PodPhase::Pending, "", false, 100_000),
        T::Failed => (PodPhase::Failed, "n1", false, 1000),
    };
    PodSpec {
        namespace: "ns".into(),
        name: format!("g-{i}"),
        uid: format!("u{i}"),
        group: Some("g".into()),
        resreq: res(cpu, 1),
        node_name: node.into(),
        phase,
        deleting,
        ..Default::default()
    }
}

/// One cycle of the default conf over node n1 of `node_cpu` millicores and PodGroup `g`
/// (`min_member`, `phase`) with `tasks`.
fn cycle(node_cpu: i64, min_member: i32, phase: PodGroupPhase, tasks: &[T]) -> Decisions {
    let mut c = Cluster::new();
    c.apply(Delta::Node(NodeSpec { name: "n1".into(), allocatable: res(node_cpu, 110), ready: true, ..Default::default() }))
        .unwrap();
    c.apply(Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() })).unwrap();
    c.apply(Delta::PodGroup(PodGroupSpec {
        namespace: "ns".into(),
        name: "g".into(),
        uid: "g-uid".into(),
        min_member,
        queue: "default".into(),
        phase,
        ..Default::default()
    }))
    .unwrap();
    for (i, t) in tasks.iter().enumerate() {
        c.apply(Delta::Pod(pod(i, *t))).unwrap();
    }
    run_cycle(&c, &SchedulerConf::default(), &CycleOptions { cycle: 1, ..Default::default() })
}

/// `(type, status, reason, message)` of the conditions written.
fn conditions(d: &Decisions) -> Vec<(String, String, String, String)> {
    d.pod_groups[0].conditions.iter().map(|c| (c.kind.clone(), c.status.clone(), c.reason.clone(), c.message.clone())).collect()
}

fn unschedulable(d: &Decisions) -> String {
    let c = conditions(d);
    assert_eq!(c.len(), 1, "one condition: {c:?}");
    assert_eq!((c[0].0.as_str(), c[0].1.as_str(), c[0].2.as_str()), ("Unschedulable", "True", "NotEnoughResources"), "{c:?}");
    c[0].3.clone()
}

#[test]
fn a_job_without_tasks_gets_no_condition() {
    let d = cycle(8000, 3, PodGroupPhase::Inqueue, &[]);
    assert_eq!(conditions(&d), [], "Volcano's gang skips a job without tasks (no '3/0 tasks in gang unschedulable')");
    assert_eq!(d.pod_groups[0].phase, PodGroupPhase::Inqueue);
    assert!(!d.pod_groups[0].changed, "nothing to write");
}

#[test]
fn a_gang_dispatched_this_cycle_gets_scheduled() {
    let d = cycle(8000, 3, PodGroupPhase::Inqueue, &[T::Pending, T::Pending, T::Pending]);
    assert_eq!(d.binds.len(), 3, "the gang fits");
    assert_eq!(
        conditions(&d),
        [("Scheduled".into(), "True".into(), "tasks in gang are ready to be scheduled".into(), String::new())],
        "Binding tasks count in ReadyTaskNum: the gang is ready"
    );
    assert_eq!(d.pod_groups[0].phase, PodGroupPhase::Inqueue, "Binding is not a scheduled status: the phase waits for the binds");
}

#[test]
fn partial_termination_covering_min_available_gets_no_condition() {
    let d = cycle(8000, 2, PodGroupPhase::Running, &[T::Running, T::ReleasingOnNode]);
    assert_eq!(conditions(&d), [], "winding down, not unschedulable");
    assert_eq!(d.pod_groups[0].phase, PodGroupPhase::Running, "the Releasing pod on its node still counts as scheduled");
    assert!(!d.pod_groups[0].changed, "nothing to write");
}

#[test]
fn a_failed_task_and_a_releasing_one_cover_min_available() {
    // ScheduledTaskNum counts Failed (ReadyTaskNum does not): 1 Failed + 1 Releasing on a node ≥ 2.
    let d = cycle(8000, 2, PodGroupPhase::Running, &[T::Failed, T::ReleasingOnNode]);
    assert_eq!(conditions(&d), []);
    assert_eq!(d.pod_groups[0].phase, PodGroupPhase::Running);
}

#[test]
fn a_pending_replacement_still_needs_the_condition() {
    let d = cycle(8000, 2, PodGroupPhase::Running, &[T::Running, T::ReleasingOnNode, T::PendingTooBig]);
    assert!(d.binds.is_empty());
    let msg = unschedulable(&d);
    assert!(msg.starts_with("1/3 tasks in gang unschedulable: pod group is not ready, "), "{msg}");
}

#[test]
fn a_pipelined_replacement_still_needs_the_condition() {
    // n1 is full; the replacement fits only on what the Releasing pod frees: pipelined.
    let d = cycle(2000, 2, PodGroupPhase::Running, &[T::Running, T::ReleasingOnNode, T::Pending]);
    assert_eq!(d.pipelined.len(), 1, "the replacement is pipelined onto n1");
    let msg = unschedulable(&d);
    assert!(msg.starts_with("1/3 tasks in gang unschedulable: pod group is not ready, "), "{msg}");
}

#[test]
fn a_never_scheduled_releasing_task_is_not_counted() {
    let d = cycle(8000, 1, PodGroupPhase::Running, &[T::ReleasingNeverScheduled]);
    let msg = unschedulable(&d);
    assert!(msg.starts_with("1/1 tasks in gang unschedulable: pod group is not ready, 1 Releasing, 1 minAvailable"), "{msg}");
    assert_eq!(d.pod_groups[0].phase, PodGroupPhase::Pending, "deleting a pending pod does not make the PodGroup Running");
}

#[test]
fn scheduled_tasks_below_min_available_get_the_condition() {
    let d = cycle(8000, 3, PodGroupPhase::Running, &[T::Running, T::ReleasingOnNode]);
    let msg = unschedulable(&d);
    assert!(msg.starts_with("2/2 tasks in gang unschedulable: pod group is not ready, "), "{msg}");
}
