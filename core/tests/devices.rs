//! GPU share cards in the session (`session/devices.rs`, Volcano `api/devices/nvidia/gpushare`):
//! the Statement's allocate, pipeline and evict change card usage and discard restores it
//! exactly (per card memory in use and pods holding it, per task the cards held), and the same
//! input gives the same card choice.

mod support;

use basalt_core::framework::Session;
use basalt_core::model::*;
use basalt_core::plugins::REGISTRY;
use basalt_core::resource::ResourceList;
use basalt_core::session::tables::{NodeIdx, TaskIdx};
use basalt_core::{run_cycle, Cluster, CycleOptions, Delta, SchedulerConf};

fn conf(flag: &str) -> SchedulerConf {
    let text = format!(
        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: deviceshare\n    arguments:\n      {flag}: true\n  - name: proportion\n  - name: nodeorder\n"
    );
    SchedulerConf::parse(&text).unwrap().0
}

fn res(pairs: &[(&str, i64)]) -> ResourceList {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// A pod of group `pg` in `ns`: on `node` (Running) when it is not empty, else Pending.
fn pod(name: &str, node: &str, gpu: PodGpu) -> Delta {
    let mut req = res(&[("cpu", 1000), ("pods", 1)]);
    if gpu.memory > 0 {
        req.insert(GPU_MEMORY.into(), gpu.memory as i64);
    }
    if gpu.number > 0 {
        req.insert(GPU_NUMBER.into(), i64::from(gpu.number));
    }
    Delta::Pod(PodSpec {
        namespace: "ns".into(),
        name: name.into(),
        uid: format!("ns/{name}"),
        group: Some("pg".into()),
        scheduler_name: "volcano".into(),
        node_name: node.into(),
        phase: if node.is_empty() { PodPhase::Pending } else { PodPhase::Running },
        resreq: req,
        gpu: gpu.into(),
        ..Default::default()
    })
}

fn mem(memory: u64) -> PodGpu {
    PodGpu { memory, ..Default::default() }
}

/// Node `n1`: 4 cards of 8000 (card 2 unhealthy), 64 CPUs; `r0` runs on it holding 3000 of
/// card 0 and `r1` holds card 3 as a whole card; `pending` pods are added in that order.
fn cluster(pending: &[Delta]) -> Cluster {
    let mut c = Cluster::new();
    c.apply(support::default_queue()).unwrap();
    let alloc = res(&[("cpu", 64000), ("pods", 110), (GPU_MEMORY, 32000), (GPU_NUMBER, 4)]);
    let Delta::Node(mut n) = support::ready_node("n1", alloc) else { unreachable!() };
    n.gpu_share = Some(GpuShareNode { number: 4, memory_per_card: 8000, unhealthy: vec![2] });
    c.apply(Delta::Node(n)).unwrap();
    c.apply(support::running_group("ns", "pg")).unwrap();
    c.apply(pod("r0", "n1", PodGpu { memory: 3000, index: vec![0], ..Default::default() })).unwrap();
    c.apply(pod("r1", "n1", PodGpu { number: 1, index: vec![3], ..Default::default() })).unwrap();
    for p in pending {
        c.apply(p.clone()).unwrap();
    }
    c
}

/// Per card row: (memory in use, pods holding it); per task: the cards it holds.
type Usage = (Vec<(u64, u32)>, Vec<u64>);

fn usage(ssn: &Session<'_>) -> Usage {
    let d = &ssn.state.devices;
    let cards = d.used_memory().iter().copied().zip(d.pods().iter().copied()).collect();
    let held = (0..ssn.state.tasks.len).map(|i| ssn.state.device_held(TaskIdx(i as u32))).collect();
    (cards, held)
}

fn task(ssn: &Session<'_>, name: &str) -> TaskIdx {
    let i = ssn.state.tasks.rec.iter().position(|r| r.spec.name == name).unwrap_or_else(|| panic!("task {name}"));
    TaskIdx(i as u32)
}

#[test]
fn pods_already_holding_cards_count_on_them() {
    let c = cluster(&[]);
    let conf = conf("deviceshare.GPUSharingEnable");
    let arena = bumpalo::Bump::new();
    let ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let (cards, _) = usage(&ssn);
    // r0's 3000 on card 0; r1 holds card 3 with no memory; card 2 is unhealthy.
    assert_eq!(cards, vec![(3000, 1), (0, 0), (0, 0), (0, 1)]);
    assert_eq!(ssn.state.devices.healthy, &[true, true, false, true]);
    assert_eq!(ssn.state.device_held(task(&ssn, "r0")), 0b0001);
    assert_eq!(ssn.state.device_held(task(&ssn, "r1")), 0b1000);
}

#[test]
fn allocate_pipeline_and_evict_then_discard_restores_card_usage_exactly() {
    let c = cluster(&[pod("a", "", mem(5000)), pod("b", "", mem(6000)), pod("p", "", mem(7000))]);
    let conf = conf("deviceshare.GPUSharingEnable");
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let before = usage(&ssn);
    let (a, b, p, r0) = (task(&ssn, "a"), task(&ssn, "b"), task(&ssn, "p"), task(&ssn, "r0"));
    let n = NodeIdx(0);
    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, a, n), "a (5000) fits card 0's 5000 free");
    assert_eq!(ssn.state.device_held(a), 0b0001);
    assert!(ssn.allocate(&mut st, b, n), "b (6000) takes card 1");
    assert_eq!(ssn.state.device_held(b), 0b0010);
    ssn.evict(&mut st, r0, "preempt");
    assert_eq!(ssn.state.device_held(r0), 0, "the victim frees its card");
    assert_eq!(usage(&ssn).0[0], (5000, 1), "card 0 keeps a's 5000 only");
    ssn.pipeline(&mut st, p, n);
    assert_eq!(
        ssn.state.device_held(p),
        0b1000,
        "p (7000) waits on card 3 (r1 holds it as a whole card with no memory, which share mode does not count)"
    );
    assert_eq!(usage(&ssn).0, vec![(5000, 1), (6000, 1), (0, 0), (7000, 2)]);
    ssn.discard(st);
    assert_eq!(usage(&ssn), before, "discard restores every card and every task's cards");
}

#[test]
fn whole_cards_taken_and_given_back_by_discard() {
    let c = cluster(&[pod("w", "", PodGpu { number: 2, ..Default::default() })]);
    let conf = conf("deviceshare.GPUNumberEnable");
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &REGISTRY);
    let before = usage(&ssn);
    let (w, n) = (task(&ssn, "w"), NodeIdx(0));
    let mut st = ssn.statement();
    assert!(ssn.state.device_fit(w, n).is_err(), "only card 1 is idle (0 shared, 2 unhealthy, 3 held)");
    assert!(!ssn.allocate(&mut st, w, n), "allocate refuses when the cards cannot take the pod");
    assert_eq!(usage(&ssn), before, "a refused allocate changes nothing");
    let r1 = task(&ssn, "r1");
    ssn.evict(&mut st, r1, "preempt");
    assert!(ssn.allocate(&mut st, w, n), "cards 1 and 3 are idle once r1 is evicted");
    assert_eq!(ssn.state.device_held(w), 0b1010);
    ssn.discard(st);
    assert_eq!(usage(&ssn), before);
}

#[test]
fn the_same_input_gives_the_same_cards() {
    let pending = [pod("a", "", mem(5000)), pod("b", "", mem(6000)), pod("c", "", mem(2000)), pod("d", "", mem(8000))];
    let reversed: Vec<Delta> = pending.iter().rev().cloned().collect();
    let conf = conf("deviceshare.GPUSharingEnable");
    let opts = CycleOptions { seed: 7, cycle: 1, now_ms: 1_000 };
    let first = run_cycle(&cluster(&pending), &conf, &opts);
    assert!(!first.binds.is_empty());
    let cards = |d: &basalt_core::Decisions, c: &Cluster| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = d
            .binds
            .iter()
            .map(|b| (c.pod(b.pod).unwrap().spec.name.clone(), b.annotations.get(GPU_INDEX).cloned().unwrap_or_default()))
            .collect();
        v.sort();
        v
    };
    let c = cluster(&pending);
    assert_eq!(first, run_cycle(&c, &conf, &opts), "a second run decides the same");
    let want = cards(&first, &c);
    assert_eq!(want, [("a", "0"), ("b", "1"), ("c", "1"), ("d", "3")].map(|(p, i)| (p.to_string(), i.to_string())));
    for seed in [1, 2, 3] {
        let c = cluster(&reversed);
        let d = run_cycle(&c, &conf, &CycleOptions { seed, ..opts });
        assert_eq!(cards(&d, &c), want, "pods added in reverse order, seed {seed}: the same cards");
    }
}
