//! The flight recorder without an API server: a live `Scheduler` fed watch events (binds
//! confirmed, pods finishing, new jobs arriving) records a dozen cycles over several rotated
//! segments; the recording re-runs offline with identical decisions, also from a checkpoint
//! once the older segments are gone and from a segment cut mid-record; another conf shows its
//! differences; `explain` tells a pending pod's and a bound pod's story; the size budget
//! deletes the oldest segments.

use basalt_core::conf::SchedulerConf;
use basalt_runtime::live::cycle::{Outputs, Scheduler};
use basalt_runtime::live::mirror::{BindRequest, Kind, Mirror, Object, WatchEvent};
use basalt_runtime::live::status::Write;
use basalt_runtime::recorder::explain::explain;
use basalt_runtime::recorder::rerun::{rerun, RerunOptions};
use basalt_runtime::recorder::writer::{segment_files, Recorder, RecorderConfig};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{DynamicObject, ObjectMeta};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

#[derive(Default)]
struct Captured {
    binds: RefCell<Vec<BindRequest>>,
}

impl Outputs for Captured {
    fn bind(&self, r: BindRequest) {
        self.binds.borrow_mut().push(r);
    }
    fn write(&self, _: Write) {}
}

fn node(name: &str, cpu: &str) -> Object {
    Object::Node(Box::new(k8s::Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some([("zone".to_string(), name[..2].to_string())].into()),
            ..Default::default()
        },
        status: Some(k8s::NodeStatus {
            allocatable: Some(
                [("cpu", cpu), ("memory", "16Gi"), ("pods", "20")]
                    .iter()
                    .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
                    .collect(),
            ),
            ..Default::default()
        }),
        ..Default::default()
    }))
}

fn pod(name: &str, group: &str, cpu: &str, node: &str, created: i64) -> k8s::Pod {
    k8s::Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            uid: Some(format!("uid-{name}")),
            creation_timestamp: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::from_second(1_700_000_000 + created).unwrap(),
            )),
            annotations: Some([("scheduling.k8s.io/group-name".to_string(), group.to_string())].into()),
            ..Default::default()
        },
        spec: Some(k8s::PodSpec {
            scheduler_name: Some("volcano".into()),
            node_name: (!node.is_empty()).then(|| node.to_string()),
            containers: vec![k8s::Container {
                name: "c".into(),
                resources: Some(k8s::ResourceRequirements {
                    requests: Some([("cpu".to_string(), Quantity(cpu.into()))].into()),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: Some(k8s::PodStatus {
            phase: Some(if node.is_empty() { "Pending" } else { "Running" }.into()),
            ..Default::default()
        }),
    }
}

fn pod_group(name: &str, min: i32, queue: &str) -> Object {
    let v = serde_json::json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "uid": format!("pg-{name}")},
        "spec": {"minMember": min, "queue": queue},
        "status": {"phase": "Pending"},
    });
    Object::PodGroup(Box::new(serde_json::from_value::<DynamicObject>(v).unwrap()))
}

fn queue(name: &str, weight: i32) -> Object {
    let v = serde_json::json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": weight, "reclaimable": true},
        "status": {"state": "Open"},
    });
    Object::Queue(Box::new(serde_json::from_value::<DynamicObject>(v).unwrap()))
}

/// A job of `n` pods of `cpu` each, created at `t`.
fn job(s: &mut Scheduler, name: &str, n: usize, cpu: &str, queue: &str, t: i64) {
    s.mirror.handle(WatchEvent::Apply(pod_group(name, n as i32, queue)));
    for i in 0..n {
        s.mirror.handle(WatchEvent::Apply(Object::Pod(Box::new(pod(&format!("{name}-{i}"), name, cpu, "", t)))));
    }
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("basalt-recorder-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs 12 recorded cycles into `dir`; returns the binds decided per cycle.
fn record(dir: &Path, segment_bytes: u64, max_bytes: u64) -> Vec<Vec<BindRequest>> {
    let mut s = Scheduler::new(Mirror::new(vec!["volcano".into()], vec![]), 5, 1000);
    let cfg =
        RecorderConfig { dir: dir.to_path_buf(), segment_bytes, max_bytes, args: vec!["--record".into()], wait_written: true };
    s.set_recorder(Box::new(Recorder::start(cfg).unwrap()));
    for k in Kind::ALL {
        s.mirror.handle(WatchEvent::Init(k));
    }
    for i in 0..8 {
        s.mirror.handle(WatchEvent::InitApply(node(&format!("{}-{i}", ["za", "zb"][i % 2]), ["4", "8"][i % 2])));
    }
    s.mirror.handle(WatchEvent::InitApply(queue("default", 1)));
    s.mirror.handle(WatchEvent::InitApply(queue("gold", 3)));
    for k in Kind::ALL {
        s.mirror.handle(WatchEvent::InitDone(k));
    }
    job(&mut s, "big", 1, "32", "gold", 0);
    let conf = SchedulerConf::default();
    let out = Captured::default();
    let mut per_cycle = Vec::new();
    let mut running: Vec<BindRequest> = Vec::new();
    for c in 0..12i64 {
        for j in 0..3 {
            let q = if j % 2 == 0 { "default" } else { "gold" };
            job(&mut s, &format!("j{c}-{j}"), 1 + (c as usize + j) % 4, ["1", "2", "3"][j % 3], q, c * 10 + j as i64);
        }
        s.run_cycle(&conf, &out);
        let binds: Vec<BindRequest> = out.binds.borrow_mut().drain(..).collect();
        // The API confirms every bind; the oldest running pods finish.
        for b in &binds {
            let mut p = pod(&b.name, b.name.rsplit_once('-').unwrap().0, "1", &b.node, 0);
            p.metadata.uid = Some(b.uid.clone());
            let decided = s.mirror.cluster.pod(s.mirror.cluster.pod_id(&b.namespace, &b.name).unwrap()).unwrap().spec.clone();
            p.spec.as_mut().unwrap().containers[0]
                .resources
                .as_mut()
                .unwrap()
                .requests
                .as_mut()
                .unwrap()
                .insert("cpu".into(), Quantity(format!("{}m", decided.resreq["cpu"])));
            p.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::from_millisecond(decided.creation_ms).unwrap(),
            ));
            s.mirror.handle(WatchEvent::Apply(Object::Pod(Box::new(p))));
        }
        running.extend(binds.iter().cloned());
        for done in running.drain(..running.len().saturating_sub(10)) {
            let p = pod(&done.name, "x", "1", &done.node, 0);
            s.mirror.handle(WatchEvent::Delete(Object::Pod(Box::new(p))));
        }
        per_cycle.push(binds);
    }
    drop(s.take_recorder());
    per_cycle
}

#[test]
fn recorded_cycles_replay_with_identical_decisions() {
    let d = dir("replay");
    let binds = record(&d, 1500, u64::MAX);
    assert!(binds.iter().map(Vec::len).sum::<usize>() > 20, "the workload binds pods: {binds:?}");
    let segs = segment_files(&d).unwrap();
    assert!(segs.len() >= 3, "small segments rotate: {segs:?}");

    let all = rerun(&d, &RerunOptions::default()).unwrap();
    assert_eq!(all.cycles.len(), 12);
    for (c, b) in all.cycles.iter().zip(&binds) {
        assert!(c.differences.is_empty(), "cycle {}: {:?}", c.cycle, c.differences);
        assert_eq!(c.binds, b.len(), "the recording holds the binds the scheduler sent");
        assert_eq!(c.rerun_binds, b.len());
    }
    assert_eq!(all.cycles[0].cycle, 1001, "cycles are numbered by session");

    let one = rerun(&d, &RerunOptions { cycle: Some(1007), conf: None }).unwrap();
    assert_eq!(one.cycles.len(), 1);
    assert!(one.cycles[0].differences.is_empty(), "{:?}", one.cycles[0].differences);
    assert!(rerun(&d, &RerunOptions { cycle: Some(99), conf: None }).unwrap_err().contains("--cycle 99"));

    // A conf without gang binds partial jobs: the replay says what would have changed.
    let nogang = SchedulerConf::parse(
        "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: conformance\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n",
    )
    .unwrap()
    .0;
    let other = rerun(&d, &RerunOptions { cycle: None, conf: Some(nogang) }).unwrap();
    assert!(other.differing() > 0, "another conf decides differently somewhere");
    assert!(other.cycles.iter().flat_map(|c| &c.differences).any(|l| l.contains("recorded") && l.contains("other conf")));
}

#[test]
fn a_segment_replays_alone_from_its_checkpoint_and_a_cut_segment_keeps_its_cycles() {
    let d = dir("checkpoint");
    record(&d, 1500, u64::MAX);
    let segs = segment_files(&d).unwrap();
    let before = rerun(&d, &RerunOptions::default()).unwrap();
    // Rotation deleted the first two segments: the rest starts from a checkpoint.
    std::fs::remove_file(&segs[0].0).unwrap();
    std::fs::remove_file(&segs[1].0).unwrap();
    let after = rerun(&d, &RerunOptions::default()).unwrap();
    assert!(!after.cycles.is_empty() && after.cycles.len() < before.cycles.len());
    for c in &after.cycles {
        assert!(c.differences.is_empty(), "from a checkpoint, cycle {}: {:?}", c.cycle, c.differences);
    }
    // The scheduler was killed while writing the last segment.
    let (last, len) = segs.last().unwrap().clone();
    let bytes = std::fs::read(&last).unwrap();
    std::fs::write(&last, &bytes[..(len as usize * 2 / 3)]).unwrap();
    let cut = rerun(&d, &RerunOptions::default()).unwrap();
    assert_eq!(cut.walk.truncated, vec![last.clone()]);
    assert!(cut.cycles.len() < after.cycles.len());
    assert!(cut.cycles.iter().all(|c| c.differences.is_empty()));
}

#[test]
fn explain_tells_why_a_pod_is_pending_and_where_one_was_bound() {
    let d = dir("explain");
    record(&d, 1 << 20, u64::MAX);
    let (spans, walk) = explain(&d, &("ns".into(), "big-0".into())).unwrap();
    assert_eq!(walk.cycles, 12);
    assert!(spans.iter().all(|s| s.state == "pending"), "{spans:?}");
    let why = spans[0].why.join("\n");
    assert!(why.contains("nodes are unavailable") && why.contains("Insufficient cpu"), "fit errors aggregated: {why}");
    assert!(why.contains("PodGroup ns/big") && why.contains("queue gold"), "{why}");

    let (spans, _) = explain(&d, &("ns".into(), "j0-0-0".into())).unwrap();
    assert_eq!(spans[0].state, "bound", "{spans:?}");
    assert!(spans[0].why[0].starts_with("this cycle bound it to node "), "{spans:?}");
    assert_eq!(spans[0].first, 1001);
    // Then: still on its node the next cycle, and absent from cycle 1003 on (the recording's
    // oldest running pods finish, and this is one of them).
    let states: Vec<&str> = spans.iter().map(|s| s.state).collect();
    assert_eq!(states, ["bound", "bound earlier", "absent"], "{spans:?}");
    assert!(spans[1].why.iter().any(|w| w.contains("by cycle 1001")), "{spans:?}");
    assert_eq!(spans[2].first, spans[1].last + 1, "{spans:?}");
}

#[test]
fn the_size_budget_deletes_the_oldest_segments() {
    let d = dir("budget");
    record(&d, 1500, 5000);
    let segs = segment_files(&d).unwrap();
    let total: u64 = segs.iter().map(|(_, n)| n).sum();
    let newest = segs.last().unwrap().1;
    assert!(total <= 5000 + newest, "budget kept: {total} bytes in {segs:?}");
    assert!(!segs.iter().any(|(p, _)| p.to_string_lossy().ends_with("-000001.brec")), "the first segment is gone");
    let r = rerun(&d, &RerunOptions::default()).unwrap();
    assert!(!r.cycles.is_empty() && r.cycles.iter().all(|c| c.differences.is_empty()));
}

/// Counts the evictions a cycle sends.
#[derive(Default)]
struct Evictions(RefCell<usize>);

impl Outputs for Evictions {
    fn bind(&self, _: BindRequest) {}
    fn write(&self, w: Write) {
        if matches!(w, Write::Evict { .. }) {
            *self.0.borrow_mut() += 1;
        }
    }
}

/// The rescheduling plugin's `interval` (volcano-behaviour.md §3) across a recording: the live
/// scheduler's first cycle runs the strategies and evicts, the next ones (well within the
/// default 5m) do not; a re-run decides the same from the recorded last run, also from a
/// segment that starts with a checkpoint.
#[test]
fn a_rerun_keeps_the_rescheduling_interval() {
    let d = dir("rescheduling");
    let mut s = Scheduler::new(Mirror::new(vec!["volcano".into()], vec![]), 5, 2000);
    // A new segment for every cycle: each after the first starts from a checkpoint.
    let cfg = RecorderConfig { dir: d.clone(), segment_bytes: 1, max_bytes: u64::MAX, args: vec![], wait_written: true };
    s.set_recorder(Box::new(Recorder::start(cfg).unwrap()));
    s.mirror.handle(WatchEvent::Apply(node("za-0", "4")));
    s.mirror.handle(WatchEvent::Apply(node("zb-1", "2")));
    s.mirror.handle(WatchEvent::Apply(queue("default", 1)));
    s.mirror.handle(WatchEvent::Apply(pod_group("busy", 1, "default")));
    for i in 0..4 {
        s.mirror.handle(WatchEvent::Apply(Object::Pod(Box::new(pod(&format!("busy-{i}"), "busy", "1", "za-0", 0)))));
    }
    let conf = SchedulerConf::parse(
        "actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: priority\n  - name: rescheduling\n    arguments:\n      strategies:\n      - name: lowNodeUtilization\n        params:\n          thresholds: {cpu: 20, memory: 20}\n          targetThresholds: {cpu: 50, memory: 50}\n",
    )
    .unwrap()
    .0;
    let mut evicted = Vec::new();
    for _ in 0..3 {
        let out = Evictions::default();
        s.run_cycle(&conf, &out);
        evicted.push(out.0.into_inner());
    }
    drop(s.take_recorder());
    assert_eq!(evicted, [1, 0, 0], "za-0 gives up one pod (zb-1 has room for one), then the interval holds");

    let all = rerun(&d, &RerunOptions::default()).unwrap();
    assert_eq!(all.cycles.len(), 3);
    for c in &all.cycles {
        assert!(c.differences.is_empty(), "cycle {}: {:?}", c.cycle, c.differences);
    }
    let segs = segment_files(&d).unwrap();
    assert_eq!(segs.len(), 3, "{segs:?}");
    std::fs::remove_file(&segs[0].0).unwrap();
    let from_checkpoint = rerun(&d, &RerunOptions::default()).unwrap();
    assert_eq!(from_checkpoint.cycles.len(), 2);
    for c in &from_checkpoint.cycles {
        assert!(c.differences.is_empty(), "from a checkpoint, cycle {}: {:?}", c.cycle, c.differences);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn explain_of_a_podgroup_and_of_a_job_without_pods() {
    use basalt_runtime::recorder::explain_group::{explain_group, Target};
    let d = dir("explain-group");
    record(&d, 1 << 20, u64::MAX);
    let (spans, walk) = explain_group(&d, &Target::PodGroup(("ns".into(), "big".into()))).unwrap();
    assert_eq!(walk.cycles, 12);
    assert_eq!(spans[0].first_seq, 1, "short positions from #1");
    assert!(spans.iter().all(|s| s.state != "absent" && s.state != "Running"), "{spans:?}");
    let why = spans.last().unwrap().why.join("\n");
    assert!(why.contains("pods: 1 (0 bound, 1 pending, 0 finished)"), "{why}");
    assert!(why.contains("1 pending: Unschedulable:") && why.contains("tasks in gang unschedulable"), "{why}");
    assert!(why.contains("queue gold"), "{why}");

    // A Job the controller never gave a PodGroup (so never any pods): said so, not an error.
    let (spans, _) = explain_group(&d, &Target::Job(("ns".into(), "never".into()))).unwrap();
    assert_eq!(spans.len(), 1, "one explanation for every cycle: {spans:?}");
    assert_eq!((spans[0].state, spans[0].first_seq, spans[0].last_seq), ("absent", 1, 12));
    assert!(spans[0].why[0].contains("no PodGroup ns/never-<uid> of Job ns/never"), "{spans:?}");
    // A Job found by its PodGroup's name (here the legacy `<job>`).
    let (spans, _) = explain_group(&d, &Target::Job(("ns".into(), "big".into()))).unwrap();
    assert!(spans[0].why[0].starts_with("Job ns/big: PodGroup ns/big"), "{spans:?}");
}

#[test]
fn a_recording_read_while_it_is_written_is_live() {
    let d = dir("live");
    let mut s = Scheduler::new(Mirror::new(vec!["volcano".into()], vec![]), 5, 1000);
    let cfg = RecorderConfig {
        dir: d.clone(),
        segment_bytes: 1 << 20,
        max_bytes: u64::MAX,
        args: vec!["--record".into()],
        wait_written: true,
    };
    s.set_recorder(Box::new(Recorder::start(cfg).unwrap()));
    for k in Kind::ALL {
        s.mirror.handle(WatchEvent::Init(k));
    }
    s.mirror.handle(WatchEvent::InitApply(node("za-0", "8")));
    s.mirror.handle(WatchEvent::InitApply(queue("default", 1)));
    for k in Kind::ALL {
        s.mirror.handle(WatchEvent::InitDone(k));
    }
    let conf = SchedulerConf::default();
    let out = Captured::default();
    for c in 0..3 {
        job(&mut s, &format!("l{c}"), 1, "1", "default", c);
        s.run_cycle(&conf, &out);
    }
    // The scheduler is still recording: its segment is open and locked.
    let live = rerun(&d, &RerunOptions::default()).unwrap();
    assert_eq!(live.walk.live.len(), 1, "{:?}", live.walk);
    assert!(live.walk.truncated.is_empty(), "live, not cut: {:?}", live.walk);
    assert_eq!(live.cycles.len(), 3, "read up to the last complete record");
    assert!(live.cycles.iter().all(|c| c.differences.is_empty()));
    assert_eq!(live.cycles.iter().map(|c| c.seq).collect::<Vec<_>>(), [1, 2, 3]);
    drop(s.take_recorder());
    let done = rerun(&d, &RerunOptions::default()).unwrap();
    assert!(done.walk.live.is_empty() && done.walk.truncated.is_empty(), "{:?}", done.walk);
    assert_eq!(done.cycles.len(), 3);
}

fn hyper_node(name: &str, tier: i32, kind: &str, members: &[String]) -> Object {
    let members: Vec<_> =
        members.iter().map(|n| serde_json::json!({"type": kind, "selector": {"exactMatch": {"name": n}}})).collect();
    let v = serde_json::json!({
        "apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
        "metadata": {"name": name}, "spec": {"tier": tier, "members": members},
    });
    Object::HyperNode(Box::new(serde_json::from_value(v).unwrap()))
}

/// A gang of `n` pods of `cpu` each that must fit one tier-1 HyperNode.
fn hard_job(s: &mut Scheduler, name: &str, n: usize, cpu: &str, t: i64) {
    let v = serde_json::json!({
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns", "uid": format!("pg-{name}")},
        "spec": {"minMember": n, "queue": "default", "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
        "status": {"phase": "Pending"},
    });
    s.mirror.handle(WatchEvent::Apply(Object::PodGroup(Box::new(serde_json::from_value::<DynamicObject>(v).unwrap()))));
    for i in 0..n {
        s.mirror.handle(WatchEvent::Apply(Object::Pod(Box::new(pod(&format!("{name}-{i}"), name, cpu, "", t)))));
    }
}

/// HyperNodes are part of the recording (issue 23): added and changed ones as the cycles'
/// deltas, the whole tree in every segment's checkpoint, so a segment re-runs alone with the
/// tree its cycles saw; and `explain` names a pending gang's network topology.
#[test]
fn hypernodes_are_recorded_and_each_segment_replays_with_its_tree() {
    let d = dir("topology");
    let mut s = Scheduler::new(Mirror::new(vec!["volcano".into()], vec![]), 5, 3000);
    // A new segment for every cycle: each after the first starts from a checkpoint.
    let cfg = RecorderConfig { dir: d.clone(), segment_bytes: 1, max_bytes: u64::MAX, args: vec![], wait_written: true };
    s.set_recorder(Box::new(Recorder::start(cfg).unwrap()));
    s.mirror.handle(WatchEvent::Apply(queue("default", 1)));
    // Four leaves of two 4-cpu nodes under one spine.
    let mut leaves = Vec::new();
    for l in 0..4 {
        let nodes: Vec<String> = (0..2).map(|i| format!("za-{}", l * 2 + i)).collect();
        for n in &nodes {
            s.mirror.handle(WatchEvent::Apply(node(n, "4")));
        }
        s.mirror.handle(WatchEvent::Apply(hyper_node(&format!("leaf{l}"), 1, "Node", &nodes)));
        leaves.push(format!("leaf{l}"));
    }
    s.mirror.handle(WatchEvent::Apply(hyper_node("spine", 2, "HyperNode", &leaves)));
    let conf = SchedulerConf::default();
    let out = Captured::default();
    let mut bound = Vec::new();
    for c in 0..4i64 {
        // A 3 × 3-cpu gang fits no 2-node leaf (it would fit 3 nodes of the cluster); a 2 × 1-cpu
        // gang fits one.
        hard_job(&mut s, &format!("wide{c}"), 3, "3", c);
        hard_job(&mut s, &format!("small{c}"), 2, "1", c);
        if c == 2 {
            // A third node joins leaf3 while the scheduler runs: the wide gangs fit there now.
            s.mirror.handle(WatchEvent::Apply(node("zb-8", "4")));
            let members = ["za-6", "za-7", "zb-8"].map(String::from);
            s.mirror.handle(WatchEvent::Apply(hyper_node("leaf3", 1, "Node", &members)));
        }
        s.run_cycle(&conf, &out);
        bound.push(out.binds.borrow_mut().drain(..).map(|b| b.name).collect::<Vec<_>>());
    }
    drop(s.take_recorder());
    assert!(bound[0].iter().all(|p| p.starts_with("small")) && bound[0].len() == 2, "{bound:?}");
    assert!(bound[2].iter().any(|p| p.starts_with("wide")), "leaf3 grown to 3 nodes holds a wide gang: {bound:?}");

    let all = rerun(&d, &RerunOptions::default()).unwrap();
    assert_eq!(all.cycles.len(), 4);
    for c in &all.cycles {
        assert!(c.differences.is_empty(), "cycle {}: {:?}", c.cycle, c.differences);
    }
    let segs = segment_files(&d).unwrap();
    assert_eq!(segs.len(), 4, "{segs:?}");
    // Each segment alone, from its checkpoint: the tree (leaf3 grown from the fourth on) is in it.
    for (k, seg) in segs.iter().enumerate().skip(1) {
        let alone = dir(&format!("topology-alone-{k}"));
        std::fs::create_dir_all(&alone).unwrap();
        std::fs::copy(&seg.0, alone.join(seg.0.file_name().unwrap())).unwrap();
        let r = rerun(&alone, &RerunOptions::default()).unwrap();
        assert_eq!(r.cycles.len(), 1);
        assert!(r.cycles[0].differences.is_empty(), "segment {} alone: {:?}", k + 1, r.cycles[0].differences);
        let _ = std::fs::remove_dir_all(&alone);
    }

    let (spans, _) = explain(&d, &("ns".into(), "wide0-0".into())).unwrap();
    let why = spans[0].why.join("\n");
    assert_eq!(spans[0].state, "pending", "{spans:?}");
    assert!(why.contains("network topology: hard, highestTierAllowed 1"), "{why}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Old recordings stay readable: `fixtures/recording-before-hypernodes` is twelve cycles of
/// [`record`] (1,500-byte segments) written at 13:05 on the day HyperNodes joined the
/// checkpoints, by the code before that change. It re-runs with identical decisions. A change
/// to the stored types (the core's `Delta` objects, the recorder's records) that cannot read
/// it breaks old recordings and must bump the format ([`basalt_runtime::recorder::format::MAGIC`]).
#[test]
fn a_recording_from_before_hypernodes_still_replays() {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recording-before-hypernodes");
    assert_eq!(segment_files(&d).unwrap().len(), 10);
    let r = rerun(&d, &RerunOptions::default()).unwrap();
    assert_eq!(r.cycles.len(), 12);
    assert_eq!(r.cycles[0].cycle, 1001);
    for c in &r.cycles {
        assert!(c.differences.is_empty(), "cycle {}: {:?}", c.cycle, c.differences);
    }
    assert!(r.cycles.iter().map(|c| c.binds).sum::<usize>() > 20);
    assert!(r.walk.truncated.is_empty() && r.walk.live.is_empty(), "{:?}", r.walk);
}

/// `basalt explain` on a recording shows where allocate's HyperNode gradient path searched for
/// a hard gang it could not place ([`basalt_runtime::recorder::format::Record::Topology`]): the
/// tier, each HyperNode tried and why it did not hold the gang; the recording still re-runs.
#[test]
fn explain_names_the_tier_and_the_hyper_nodes_a_pending_gang_was_searched_in() {
    use basalt_runtime::recorder::explain_group::{explain_group, Target};
    let d = dir("topology-search");
    let mut s = Scheduler::new(Mirror::new(vec!["volcano".into()], vec![]), 5, 3000);
    let cfg = RecorderConfig { dir: d.clone(), segment_bytes: u64::MAX, max_bytes: u64::MAX, args: vec![], wait_written: true };
    s.set_recorder(Box::new(Recorder::start(cfg).unwrap()));
    s.mirror.handle(WatchEvent::Apply(queue("default", 1)));
    let mut leaves = Vec::new();
    for l in 0..2 {
        let nodes: Vec<String> = (0..2).map(|i| format!("za-{}", l * 2 + i)).collect();
        for n in &nodes {
            s.mirror.handle(WatchEvent::Apply(node(n, "4")));
        }
        s.mirror.handle(WatchEvent::Apply(hyper_node(&format!("leaf{l}"), 1, "Node", &nodes)));
        leaves.push(format!("leaf{l}"));
    }
    s.mirror.handle(WatchEvent::Apply(hyper_node("spine", 2, "HyperNode", &leaves)));
    // Three 3-cpu pods need three nodes: each leaf has two.
    hard_job(&mut s, "wide", 3, "3", 0);
    hard_job(&mut s, "small", 2, "1", 0);
    let out = Captured::default();
    s.run_cycle(&SchedulerConf::default(), &out);
    drop(s.take_recorder());
    assert_eq!(out.binds.borrow().len(), 2, "the small gang is placed, the wide one is not");

    let (spans, _) = explain(&d, &("ns".into(), "wide-0".into())).unwrap();
    let why = spans[0].why.join("\n");
    assert_eq!(spans[0].state, "pending", "{spans:?}");
    assert!(
        why.contains(
            "topology search (highest allowed tier 1): searched tier 1 (2 HyperNodes); no HyperNode of tier 1 holds the gang"
        ),
        "{why}"
    );
    for leaf in ["leaf0", "leaf1"] {
        // leaf0 or leaf1 also holds the small gang: room for 1 or 2 of the 3.
        let line = why.lines().find(|l| l.contains(&format!("tier 1 HyperNode {leaf} rejected: "))).unwrap_or_default();
        assert!(
            line.contains("its nodes' idle and future idle resources have room for")
                && line.ends_with("of the 3 tasks the gang still needs"),
            "{leaf} in\n{why}"
        );
    }
    assert!(!why.contains("spine"), "tier 2 is above the limit and never searched: {why}");
    let (spans, _) = explain_group(&d, &Target::PodGroup(("ns".into(), "wide".into()))).unwrap();
    assert!(spans[0].why.iter().any(|l| l.contains("HyperNode leaf0 rejected")), "{spans:?}");
    let (spans, _) = explain(&d, &("ns".into(), "small-0".into())).unwrap();
    assert!(!spans[0].why.iter().any(|l| l.contains("topology search")), "a placed gang has no search note: {spans:?}");
    let r = rerun(&d, &RerunOptions::default()).unwrap();
    assert!(r.cycles.iter().all(|c| c.differences.is_empty()), "{:?}", r.cycles);
    let _ = std::fs::remove_dir_all(&d);
}
