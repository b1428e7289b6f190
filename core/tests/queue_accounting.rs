//! What a cycle hands the runtime for Volcano's queue and gang metrics (volcano-behaviour.md
//! §8.1): the `proportion` plugin's per-queue accounting at close (`volcano_queue_*`) and the
//! jobs the `gang` plugin found not ready with their unready task counts
//! (`volcano_unschedule_task_count`, `volcano_unschedule_job_count`).

use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta, SchedulerConf};

fn res(cpu: i64, pods: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("pods".to_string(), pods)].into_iter().collect()
}

fn gang(c: &mut Cluster, name: &str, queue: &str, pods: usize, cpu: i64) {
    c.apply(Delta::PodGroup(PodGroupSpec {
        namespace: "ns".into(),
        name: name.into(),
        min_member: pods as i32,
        queue: queue.into(),
        phase: PodGroupPhase::Inqueue,
        ..Default::default()
    }))
    .unwrap();
    for i in 0..pods {
        c.apply(Delta::Pod(PodSpec {
            namespace: "ns".into(),
            name: format!("{name}-{i}"),
            group: Some(name.into()),
            resreq: res(cpu, 1),
            ..Default::default()
        }))
        .unwrap();
    }
}

#[test]
fn proportion_accounting_and_unready_gangs_reach_the_decisions() {
    let mut c = Cluster::new();
    let mut alloc = res(4000, 110);
    alloc.insert("memory".into(), 8 << 30);
    c.apply(Delta::Node(NodeSpec { name: "n1".into(), allocatable: alloc, ready: true, ..Default::default() })).unwrap();
    for (q, w) in [("q1", 3), ("q2", 1), ("idle", 1)] {
        c.apply(Delta::Queue(QueueSpec { name: q.into(), weight: w, reclaimable: true, ..Default::default() })).unwrap();
    }
    gang(&mut c, "fits", "q1", 2, 1000);
    gang(&mut c, "big", "q2", 2, 5000);
    let conf =
        SchedulerConf::parse("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: proportion\n").unwrap().0;
    let d = run_cycle(&c, &conf, &CycleOptions::default());
    assert_eq!(d.binds.len(), 2, "the small gang is placed");

    let big = c.pod_group_id("ns", "big").unwrap();
    assert_eq!(d.unready_jobs, vec![(big, 2)], "big: minMember 2, none schedulable");

    let names: Vec<&str> = d.queue_shares.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(names, vec!["q1", "q2"], "only queues with jobs, in queue order");
    let (q1, q2) = (&d.queue_shares[0], &d.queue_shares[1]);
    assert_eq!((q1.weight, q2.weight), (3.0, 1.0));
    assert_eq!(q1.allocated["cpu"], 2000, "allocations of this cycle included");
    assert_eq!(q1.request["cpu"], 2000);
    assert_eq!(q2.allocated["cpu"], 0);
    assert_eq!(q2.request["cpu"], 10_000);
    // Water-filling 4000m by weight 3:1: q1 is capped at its request (2000), q2 gets the rest.
    assert_eq!(q1.deserved["cpu"], 2000);
    assert_eq!(q2.deserved["cpu"], 2000);
    assert_eq!(q1.share, 1.0, "allocated = deserved");
    assert!(q1.overused, "q1 got what it deserves");
    assert_eq!(q2.share, 0.0);
    assert!(!q2.overused);
}
