//! vGPU cards in the session (`session/vgpu.rs`, Volcano `api/devices/nvidia/vgpu`): running
//! pods' `vgpu-ids-new` count on their cards, the Statement's allocate, pipeline and evict change
//! per-card memory, cores and pods and discard restores them exactly, and with
//! `deviceshare.NodeLockEnable` one allocation locks the node for the rest of the session until
//! it is undone.

mod support;

use basalt_core::framework::Session;
use basalt_core::model::*;
use basalt_core::plugins::REGISTRY;
use basalt_core::resource::ResourceList;
use basalt_core::session::tables::{NodeIdx, TaskIdx};
use basalt_core::{Cluster, CycleOptions, Delta, SchedulerConf};

fn conf(extra: &str) -> SchedulerConf {
    let text = format!(
        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments:\n      deviceshare.VGPUEnable: true\n{extra}  - name: proportion\n"
    );
    SchedulerConf::parse(&text).unwrap().0
}

fn res(pairs: &[(&str, i64)]) -> ResourceList {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// A pod of group `pg` asking one card with `memory` and `cores`; on `node` (Running, holding
/// `held`) when `node` is not empty.
fn pod(name: &str, node: &str, memory: u64, cores: u32, held: &str) -> Delta {
    Delta::Pod(PodSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("ns/{name}"),
        group: Some("pg".into()),
        scheduler_name: "volcano".into(),
        node_name: node.into(),
        phase: if node.is_empty() { PodPhase::Pending } else { PodPhase::Running },
        resreq: res(&[("cpu", 1000), ("pods", 1), (VGPU_NUMBER, 1000)]),
        vgpu: PodVgpu {
            requests: vec![VgpuRequest { number: 1, memory, mem_percentage: 101, cores }],
            held: decode_pod_devices(held).unwrap(),
            ..Default::default()
        }
        .into(),
        ..Default::default()
    })
}

/// Node `n1` with two 16000 MiB cards shared by at most 3 pods each; `r0` holds 8000 MiB and 40
/// cores of card 1.
fn cluster(pending: &[Delta]) -> Cluster {
    let mut c = Cluster::new();
    c.apply(support::default_queue()).unwrap();
    let alloc = res(&[("cpu", 64000), ("pods", 110), (VGPU_NUMBER, 6000), (VGPU_MEMORY, 32_000_000), (VGPU_CORES, 200_000)]);
    let Delta::Node(mut n) = support::ready_node("n1", alloc) else { unreachable!() };
    let reg = "GPU-0,3,16000,NVIDIA-T4,true,hami-core:GPU-1,3,16000,NVIDIA-T4,true,hami-core:";
    n.devices.vgpu = VgpuNode::parse(reg).unwrap();
    c.apply(Delta::Node(n)).unwrap();
    c.apply(support::running_group("ns", "pg")).unwrap();
    c.apply(pod("r0", "n1", 8000, 40, "GPU-1,NVIDIA,8000,40:")).unwrap();
    for p in pending {
        c.apply(p.clone()).unwrap();
    }
    c
}

/// Per card: (memory, cores, pods in use); per task: cards held; per node: locks taken.
type Usage = (Vec<(u64, u32, u32)>, Vec<u64>, Vec<u32>);

fn usage(ssn: &Session<'_>) -> Usage {
    let d = &ssn.state.devices;
    let cards = (0..d.memory.len()).map(|c| (d.used_memory()[c], d.used_cores()[c], d.pods()[c])).collect();
    let held = (0..ssn.state.tasks.len).map(|i| ssn.state.device_held(TaskIdx(i as u32))).collect();
    (cards, held, d.locks().to_vec())
}

fn task(ssn: &Session<'_>, name: &str) -> TaskIdx {
    let i = ssn.state.tasks.rec.iter().position(|r| r.spec.name == name).unwrap_or_else(|| panic!("task {name}"));
    TaskIdx(i as u32)
}

#[test]
fn running_pods_hold_what_their_annotation_names() {
    let c = cluster(&[]);
    let conf = conf("");
    let arena = bumpalo::Bump::new();
    let ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    assert_eq!(usage(&ssn).0, vec![(0, 0, 0), (8000, 40, 1)]);
    assert_eq!(ssn.state.device_held(task(&ssn, "r0")), 0b10);
}

#[test]
fn allocate_pipeline_and_evict_then_discard_restores_cards_exactly() {
    let c = cluster(&[pod("a", "", 8000, 60, ""), pod("b", "", 1000, 100, ""), pod("p", "", 4000, 0, "")]);
    let conf = conf("");
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let before = usage(&ssn);
    let (a, b, p, r0) = (task(&ssn, "a"), task(&ssn, "b"), task(&ssn, "p"), task(&ssn, "r0"));
    let n = NodeIdx(0);
    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, a, n), "a fits card 1 (tried first): 8000 free, 40 + 60 cores");
    assert_eq!(ssn.state.device_held(a), 0b10);
    assert!(ssn.allocate(&mut st, b, n), "b (100 cores) wants a card alone: card 0");
    assert_eq!(ssn.state.device_held(b), 0b01);
    assert!(ssn.state.device_fit(p, n).is_err(), "card 1 is full, card 0 is at 100 cores and p asks 0");
    ssn.evict(&mut st, r0, "preempt");
    assert_eq!(usage(&ssn).0[1], (8000, 60, 1), "the victim frees its memory, cores and slot");
    ssn.pipeline(&mut st, p, n);
    assert_eq!(ssn.state.device_held(p), 0b10, "p waits on card 1, freed by r0");
    assert_eq!(usage(&ssn).0, vec![(1000, 100, 1), (12000, 60, 2)]);
    ssn.discard(st);
    assert_eq!(usage(&ssn), before, "discard restores every card and every task's cards");
}

#[test]
fn node_lock_lets_one_allocation_per_node_and_discard_releases_it() {
    let c = cluster(&[pod("a", "", 1000, 0, ""), pod("b", "", 1000, 0, "")]);
    let conf = conf("      deviceshare.NodeLockEnable: true\n");
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let before = usage(&ssn);
    let (a, b, n) = (task(&ssn, "a"), task(&ssn, "b"), NodeIdx(0));
    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, a, n));
    assert_eq!(usage(&ssn).2, vec![1], "a took n1's lock");
    assert!(ssn.state.device_fit(b, n).is_ok(), "the cards have room for b");
    assert!(!ssn.allocate(&mut st, b, n), "but n1 is locked by a");
    ssn.discard(st);
    assert_eq!(usage(&ssn), before, "the lock is given back with the cards");
    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, b, n), "with a undone, b takes the lock");
    ssn.commit(st);
}

#[test]
fn a_fresh_lock_annotation_keeps_vgpu_pods_off_and_an_old_one_does_not() {
    let now = 1_767_225_600_000;
    for (age_ms, fits) in [(120_000, false), (600_000, true)] {
        let mut c = cluster(&[pod("a", "", 1000, 0, "")]);
        let id = c.node_id("n1").unwrap();
        let mut n = c.node(id).unwrap().spec.clone();
        n.devices.locks = vec![NodeLock { name: NODE_LOCK_VGPU.into(), since_ms: Some(now - age_ms) }];
        c.apply(Delta::Node(n)).unwrap();
        let conf = conf("      deviceshare.NodeLockEnable: true\n");
        let arena = bumpalo::Bump::new();
        let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions { now_ms: now, ..Default::default() }, &REGISTRY);
        let a = task(&ssn, "a");
        let mut st = ssn.statement();
        assert_eq!(ssn.allocate(&mut st, a, NodeIdx(0)), fits, "lock {age_ms} ms old");
        ssn.discard(st);
    }
}
