//! `basalt replay` on small inputs: nodes never over-allocated, pods that fit are bound, a
//! hand-computed case, determinism, malformed input reported with file and line, annotated
//! YAML, and the command line (side-by-side confs, JSON, time series, plots).

use basalt_core::cluster::{Cluster, Delta};
use basalt_core::conf::SchedulerConf;
use basalt_core::model::{PodGroupPhase, PodGroupSpec, PodPhase, QueueSpec};
use basalt_core::resource::ResourceList;
use basalt_runtime::replay::alibaba::{self, AlibabaOptions};
use basalt_runtime::replay::generate::{self, DefaultSpec};
use basalt_runtime::replay::shapes::{node_spec, pod_spec, PodShape, Qos};
use basalt_runtime::replay::workload::{JobArrival, TaskArrival, Workload};
use basalt_runtime::replay::{self, kube_yaml, CyclePolicy, Engine, EngineOptions, NamedConf, ReplayOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const PERIOD_10S: CyclePolicy = CyclePolicy::Period(10_000);

fn opts(policy: CyclePolicy, seed: u64) -> ReplayOptions {
    ReplayOptions { engine: EngineOptions { policy, seed }, progress: false }
}

fn default_conf() -> Vec<NamedConf> {
    vec![NamedConf { label: "default".into(), conf: SchedulerConf::default() }]
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fresh directory under the system temp dir, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(test: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("basalt-replay-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    Scratch(d)
}

/// Σ requests of the Running pods on each node ≤ its allocatable, in every dimension.
fn assert_within_allocatable(c: &Cluster, when: &str) {
    let mut used: BTreeMap<&str, ResourceList> = BTreeMap::new();
    for (_, p) in c.pods() {
        if p.spec.phase == PodPhase::Running && !p.spec.node_name.is_empty() {
            let u = used.entry(p.spec.node_name.as_str()).or_default();
            for (k, v) in &p.spec.resreq {
                *u.entry(k.clone()).or_insert(0) += v;
            }
        }
    }
    for (_, n) in c.nodes() {
        for (k, v) in used.get(n.spec.name.as_str()).into_iter().flatten() {
            let cap = n.spec.allocatable.get(k).copied().unwrap_or(0);
            assert!(*v <= cap, "{when}: node {} over allocatable {k}: {v} > {cap}", n.spec.name);
        }
    }
}

#[test]
fn no_node_is_ever_over_its_allocatable() {
    for (seed, policy) in [(3, PERIOD_10S), (4, CyclePolicy::OnEvents)] {
        let w = generate::generate(&DefaultSpec { seed, pods: 250, nodes: 12, ..Default::default() });
        let mut e = Engine::new(&w, SchedulerConf::default(), EngineOptions { policy, seed });
        let mut cycles = 0;
        while e.step() {
            cycles += 1;
            assert_within_allocatable(e.cluster(), &format!("seed {seed} cycle {cycles} t={} ms", e.now()));
        }
        let rec = e.finish();
        assert!(rec.samples.iter().all(|s| (0..3).all(|d| s.used[d] <= rec.total[d])), "recorded use over the total");
        assert!(cycles > 10, "the small replay ran {cycles} cycles");
    }
}

/// A workload on explicit nodes: queue `default`, one single-pod job per (name, cpu cores,
/// arrival s, duration s).
fn small(nodes: &[(&str, i64)], pods: &[(&str, i64, i64, i64)]) -> Workload {
    let mut setup = vec![Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() })];
    for (name, cores) in nodes {
        setup.push(Delta::Node(node_spec(name, cores * 1000, 8192, 0, "")));
    }
    let jobs = pods
        .iter()
        .map(|&(name, cores, arrival, duration)| {
            let shape = PodShape { cpu_milli: cores * 1000, memory_mib: 0, num_gpu: 0, gpu_milli: 0 };
            let group = format!("pg-{name}");
            JobArrival {
                group: PodGroupSpec {
                    namespace: "t".into(),
                    name: group.clone(),
                    min_member: 1,
                    queue: "default".into(),
                    phase: PodGroupPhase::Pending,
                    ..Default::default()
                },
                arrival_ms: arrival * 1000,
                tasks: vec![TaskArrival {
                    pod: pod_spec("t", name, &group, 0, &shape, Qos::Ls, &[]),
                    arrival_ms: arrival * 1000,
                    duration_ms: Some(duration * 1000),
                }],
            }
        })
        .collect();
    Workload { name: "hand-made".into(), setup, jobs, ..Default::default() }
}

#[test]
fn a_pod_that_fits_an_empty_node_is_eventually_bound() {
    // One 4-core node held for 95 s by `big`; `small` (2 cores) and `later` (4 cores) must wait.
    let w = small(&[("n1", 4)], &[("big", 4, 0, 95), ("small", 2, 1, 10), ("later", 4, 2, 10)]);
    for policy in [PERIOD_10S, CyclePolicy::OnEvents] {
        let out = replay::replay(&w, &default_conf(), &opts(policy, 1));
        let r = &out.report.runs[0].results;
        assert_eq!((r.pods.scheduled, r.pods.never_scheduled, r.pods.completed), (3, 0, 3), "{policy:?}");
    }
    // On a generated cluster every pod whose request fits some empty node gets bound.
    let w = generate::generate(&DefaultSpec { seed: 9, pods: 200, nodes: 10, ..Default::default() });
    let out = replay::replay(&w, &default_conf(), &opts(PERIOD_10S, 9));
    let rec = &out.records[0];
    let mut c = Cluster::new();
    for d in &w.setup {
        c.apply(d.clone()).expect("setup applies");
    }
    let fits_empty = |req: &ResourceList| {
        c.nodes().any(|(_, n)| req.iter().all(|(k, v)| *v <= n.spec.allocatable.get(k).copied().unwrap_or(0)))
    };
    let mut checked = 0;
    for (j, job) in w.jobs.iter().enumerate() {
        for (k, t) in job.tasks.iter().enumerate() {
            if job.tasks.len() == 1 && fits_empty(&t.pod.resreq) {
                let tr = &rec.tasks[rec.jobs[j].tasks.start + k];
                assert!(tr.bind_ms.is_some(), "pod {} fits an empty node but was never bound: {:?}", t.pod.name, tr.last_reason);
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "only {checked} pods checked");
}

#[test]
fn report_matches_a_hand_computed_case() {
    // Two 4-core nodes. p1 (4 cores, 0 s, runs 100 s), p2 (4 cores, 0 s, runs 50 s) take both;
    // p3 (4 cores) arrives at 5 s and is bound at the tick after p2 finishes (50 s), runs to 80.
    let w = small(&[("n1", 4), ("n2", 4)], &[("p1", 4, 0, 100), ("p2", 4, 0, 50), ("p3", 4, 5, 30)]);
    for policy in [PERIOD_10S, CyclePolicy::OnEvents] {
        let out = replay::replay(&w, &default_conf(), &opts(policy, 1));
        let r = &out.report.runs[0].results;
        let rec = &out.records[0];
        let binds: Vec<Option<i64>> = rec.tasks.iter().map(|t| t.bind_ms).collect();
        assert_eq!(binds, vec![Some(0), Some(0), Some(50_000)], "{policy:?}");
        assert_eq!(r.pods.completed, 3);
        // Waits 0, 0, 45 s.
        assert_eq!(
            (r.wait_s.count, r.wait_s.mean, r.wait_s.p50, r.wait_s.p90, r.wait_s.max),
            (3, Some(15.0), Some(0.0), Some(45.0), Some(45.0))
        );
        // Job completion: 100, 50, 80 − 5 = 75.
        assert_eq!(
            (r.job_completion_s.mean, r.job_completion_s.p50, r.job_completion_s.max),
            (Some(75.0), Some(75.0), Some(100.0))
        );
        assert_eq!(r.makespan_s, Some(100.0));
        // CPU: 8/8 on [0, 80), 4/8 on [80, 100): (80 × 1 + 20 × 0.5) / 100 = 0.9.
        let cpu = &r.utilization[0];
        assert_eq!(cpu.resource, "cpu");
        assert!((cpu.mean.unwrap() - 0.9).abs() < 1e-12 && cpu.peak == Some(1.0), "{cpu:?}");
        assert_eq!(r.utilization[1].mean, Some(0.0), "no memory requested: a measured 0");
        assert_eq!((r.utilization[2].mean, r.utilization[2].peak), (None, None), "no GPU on any node: nothing to measure");
        // One queue: its share is the CPU share, deserved the same (demand ≥ what it holds).
        let q = &r.queues[0];
        assert!((q.share_mean.unwrap() - 0.9).abs() < 1e-12, "{q:?}");
        assert!((q.deserved_mean.unwrap() - 0.9).abs() < 1e-12, "{q:?}");
        assert_eq!(r.jain_index, Some(1.0));
        assert_eq!((r.preemptions, r.evictions), (0, 0));
        assert!(r.apply_issues.is_empty(), "{:?}", r.apply_issues);
    }
}

#[test]
fn same_seed_same_report() {
    let spec = DefaultSpec { seed: 5, pods: 300, nodes: 15, ..Default::default() };
    let run = |seed: u64| {
        let w = generate::generate(&DefaultSpec { seed, ..spec.clone() });
        let out = replay::replay(&w, &default_conf(), &opts(PERIOD_10S, seed));
        let mut v: serde_json::Value = serde_json::from_str(&out.report.to_json()).expect("report JSON parses");
        for r in v["runs"].as_array_mut().expect("runs") {
            r.as_object_mut().expect("run").remove("timings");
        }
        (out.report.runs[0].results.clone(), v)
    };
    let (a, ja) = run(5);
    let (b, jb) = run(5);
    assert_eq!(a, b);
    assert_eq!(ja, jb);
    let (c, _) = run(6);
    assert_ne!(a, c, "another seed should give another report");
}

#[test]
fn malformed_csv_rows_are_reported_with_file_and_line_and_the_rest_loads() {
    let dir = fixtures().join("alibaba-mini");
    let w = alibaba::import(&dir, &AlibabaOptions::default()).expect("the fixture loads");
    let lines: Vec<String> = w.issues.iter().map(ToString::to_string).collect();
    let pods_file = dir.join("openb_pod_list_default.csv").display().to_string();
    let want = [
        (4, "field cpu_milli: not an integer: \"abc\""),
        (5, "expected 11 fields as in the header, found 10"),
        (8, "field qos: unknown QoS class \"XL\""),
    ];
    assert_eq!(lines.len(), want.len(), "{lines:#?}");
    for (line, text) in want {
        let prefix = format!("{pods_file}:{line}: ");
        assert!(lines.iter().any(|l| l.starts_with(&prefix) && l.contains(text)), "no issue {prefix}{text} in {lines:#?}");
    }
    assert_eq!(w.skipped, 3);
    assert_eq!((w.pod_count(), w.setup_counts().0), (4, 3));
    let out = replay::replay(&w, &default_conf(), &opts(PERIOD_10S, 1));
    let r = &out.report.runs[0].results;
    assert_eq!(out.report.input.skipped, 3);
    assert_eq!(out.report.input.issues.len(), 3);
    assert_eq!((r.pods.submitted, r.pods.scheduled), (4, 4));
    // mini-pod-5 asks for 8 whole GPUs of model G2: only mini-node-c qualifies.
    let node_of = |name: &str| {
        let j = w.jobs.iter().position(|j| j.tasks[0].pod.name == name).expect("pod loaded");
        out.records[0].tasks[out.records[0].jobs[j].tasks.start].node.clone()
    };
    assert_eq!(node_of("mini-pod-5").as_deref(), Some("mini-node-c"));
    // The text report counts them too.
    let text = replay::text::render(&out.report);
    assert!(text.contains("Input issues: 3 (3 rows/objects skipped)"), "{text}");
}

const YAML: &str = r#"apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: a
  namespace: ns
  annotations: {basalt.dev/arrival-seconds: "0", basalt.dev/duration-seconds: "60"}
spec:
  schedulerName: volcano
  containers: [{name: c, resources: {requests: {cpu: "3"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: b
  namespace: ns
  annotations: {basalt.dev/arrival-seconds: "12.5", basalt.dev/duration-seconds: "30"}
spec:
  schedulerName: volcano
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: broken
  namespace: ns
  annotations: {basalt.dev/arrival-seconds: soon}
spec:
  schedulerName: volcano
  containers: [{name: c}]
"#;

#[test]
fn annotated_yaml_replays_and_bad_annotations_are_reported() {
    let dir = scratch("yaml");
    let file = dir.0.join("cluster.yaml");
    std::fs::write(&file, YAML).expect("write yaml");
    let w = kube_yaml::import(std::slice::from_ref(&file), "volcano");
    let issues: Vec<String> = w.issues.iter().map(ToString::to_string).collect();
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert!(
        issues[0].starts_with(&format!(
            "{}:26: Pod ns/broken: field metadata.annotations[basalt.dev/arrival-seconds]",
            file.display()
        )),
        "{issues:#?}"
    );
    assert_eq!((w.skipped, w.pod_count()), (1, 2));
    assert!(w.notes.iter().any(|n| n.contains("queue \"default\" created")), "{:?}", w.notes);
    let out = replay::replay(&w, &default_conf(), &opts(PERIOD_10S, 1));
    let rec = &out.records[0];
    // a: bound at 0, done at 60; b arrives at 12.5 s, fits only after a: bound at the 60 s tick.
    let binds: Vec<Option<i64>> = rec.tasks.iter().map(|t| t.bind_ms).collect();
    assert_eq!(binds, vec![Some(0), Some(60_000)]);
    let r = &out.report.runs[0].results;
    assert_eq!((r.wait_s.max, r.makespan_s), (Some(47.5), Some(90.0)));
}

/// Node `n1` with a Numatopology of two NUMA nodes of 4 CPUs (single-numa-node), and three
/// Guaranteed 4-CPU single-numa-node pods: `a` (0 s, runs 60 s), `b` (5 s), `c` (12.5 s).
fn numa_yaml() -> String {
    let detail: Vec<String> = (0..8).map(|i| format!("'{i}': {{numa: {}, socket: {}, core: {}}}", i / 4, i / 4, i % 4)).collect();
    let mut y = format!(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {{cpu: '32', memory: 64Gi, pods: '110'}}}}\n---\napiVersion: nodeinfo.volcano.sh/v1alpha1\nkind: Numatopology\nmetadata: {{name: n1}}\nspec:\n  policies: {{CPUManagerPolicy: static, TopologyManagerPolicy: single-numa-node}}\n  numares: {{cpu: {{allocatable: '0-7', capacity: 8}}}}\n  cpuDetail: {{{}}}\n",
        detail.join(", ")
    );
    for (name, at, run) in [("a", "0", "60"), ("b", "5", "600"), ("c", "12.5", "600")] {
        y += &format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ns\n  annotations: {{basalt.dev/arrival-seconds: '{at}', basalt.dev/duration-seconds: '{run}', volcano.sh/numa-topology-policy: single-numa-node}}\nspec:\n  schedulerName: volcano\n  containers: [{{name: c, resources: {{limits: {{cpu: '4', memory: 1Gi}}, requests: {{cpu: '4', memory: 1Gi}}}}}}]\n"
        );
    }
    y
}

/// numa-aware in replay: the CPUs given to a pod bound in one cycle stay taken in later cycles
/// (no resource exporter updates the Numatopology), until the pod ends: `c` waits for `a`.
#[test]
fn replayed_numa_pods_do_not_share_cpus_across_cycles() {
    let dir = scratch("numa");
    let file = dir.0.join("numa.yaml");
    std::fs::write(&file, numa_yaml()).expect("write yaml");
    let w = kube_yaml::import(std::slice::from_ref(&file), "volcano");
    assert!(w.issues.is_empty(), "{:?}", w.issues);
    let text = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: numa-aware\n  - name: proportion\n";
    let conf = vec![NamedConf { label: "numa".into(), conf: SchedulerConf::parse(text).unwrap().0 }];
    let out = replay::replay(&w, &conf, &opts(PERIOD_10S, 1));
    let binds: Vec<Option<i64>> = out.records[0].tasks.iter().map(|t| t.bind_ms).collect();
    // a at 0 takes one NUMA node, b at the 10 s tick the other; c (12.5 s) finds no NUMA node
    // with 4 free CPUs until a ends at 60 s, although n1 has 24 CPUs left.
    assert_eq!(binds, vec![Some(0), Some(10_000), Some(60_000)]);
}

fn basalt(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_basalt")).args(args).output().expect("run basalt")
}

#[test]
fn command_line_compares_confs_and_writes_series_and_plots() {
    let dir = scratch("cli");
    let conf = dir.0.join("binpack.conf");
    std::fs::write(
        &conf,
        "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: proportion\n  - name: binpack\n",
    )
    .expect("write conf");
    let series = dir.0.join("series.csv");
    let plots = dir.0.join("plots");
    let default_conf = dir.0.join("default.conf");
    std::fs::write(&default_conf, basalt_core::conf::DEFAULT_CONF).expect("write conf");
    let out = basalt(&[
        "replay",
        "--pods",
        "120",
        "--nodes",
        "8",
        "-q",
        "--output",
        "json",
        "--conf",
        default_conf.to_str().expect("utf-8 path"),
        "--conf",
        conf.to_str().expect("utf-8 path"),
        "--timeseries",
        series.to_str().expect("utf-8 path"),
        "--plot",
        plots.to_str().expect("utf-8 path"),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let labels: Vec<&str> = v["runs"].as_array().expect("runs").iter().map(|r| r["conf"].as_str().unwrap_or("")).collect();
    assert_eq!(labels, vec!["default", "binpack"]);
    assert_eq!(v["runs"][0]["results"]["pods"]["submitted"], 120);
    let csv = std::fs::read_to_string(&series).expect("time series written");
    assert!(csv.starts_with("conf,time_s,cycle,binds,pending,running,cpu_util,memory_util,gpu_util,"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("binpack,")));
    for f in ["utilization-default.svg", "utilization-binpack.svg", "queue-shares-default.svg", "wait-times.svg"] {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap_or_default();
        assert!(svg.starts_with("<svg"), "{f} is not an SVG");
    }
    // The text report puts the confs side by side; a bad conf is exit code 2.
    let out = basalt(&["replay", "--pods", "60", "--nodes", "5", "-q", "--conf", conf.to_str().expect("utf-8 path")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("binpack") && text.contains("Wait, creation to bind"), "{text}");
    let out = basalt(&["replay", "--conf", "/nonexistent/x.conf"]);
    assert_eq!(out.status.code(), Some(2));
}

const BARE_PODS: &str = r#"apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team}
spec: {weight: 1}
status: {state: Open}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: frozen}
spec: {weight: 1}
status: {state: Closed}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: to-team
  namespace: ns
  annotations: {scheduling.volcano.sh/queue-name: team}
spec:
  schedulerName: volcano
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: to-frozen
  namespace: ns
  annotations: {scheduling.volcano.sh/queue-name: frozen}
spec:
  schedulerName: volcano
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: plain
  namespace: ns
spec:
  schedulerName: volcano
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
"#;

/// Issue 10 rule 5 in `replay`, as `simulate` does it
/// (`runtime/tests/scenarios/allocate/bare-pod-keeps-queue-annotation.yaml`): a pod without a
/// PodGroup annotation but with `scheduling.volcano.sh/queue-name` gets its generated PodGroup
/// in that queue; one naming a Closed queue is never scheduled; one without the annotation goes
/// to the default queue.
#[test]
fn bare_pods_keep_their_queue_and_a_closed_queue_schedules_nothing() {
    let dir = scratch("bare-queue");
    let file = dir.0.join("cluster.yaml");
    std::fs::write(&file, BARE_PODS).expect("write yaml");
    let w = kube_yaml::import(std::slice::from_ref(&file), "volcano");
    assert!(w.issues.is_empty(), "{:?}", w.issues);
    let queue_of_group = |pod: &str| {
        let j = w.jobs.iter().find(|j| j.tasks[0].pod.name == pod).expect("pod loaded");
        j.group.queue.clone()
    };
    assert_eq!(queue_of_group("to-team"), "team");
    assert_eq!(queue_of_group("to-frozen"), "frozen");
    assert!(matches!(queue_of_group("plain").as_str(), "" | "default"), "{:?}", queue_of_group("plain"));
    let out = replay::replay(&w, &default_conf(), &opts(PERIOD_10S, 1));
    let rec = &out.records[0];
    let task = |pod: &str| {
        let j = w.jobs.iter().position(|j| j.tasks[0].pod.name == pod).expect("pod loaded");
        &rec.tasks[rec.jobs[j].tasks.start]
    };
    let queue_name = |pod: &str| task(pod).queue.map(|q| rec.queues[q].name.clone());
    assert_eq!(queue_name("to-team").as_deref(), Some("team"));
    assert_eq!(queue_name("plain").as_deref(), Some("default"));
    assert_eq!(queue_name("to-frozen").as_deref(), Some("frozen"));
    assert_eq!(task("to-team").bind_ms, Some(0), "bound in its own queue at once");
    assert_eq!(task("plain").bind_ms, Some(0));
    assert_eq!(task("to-frozen").bind_ms, None, "a Closed queue schedules nothing");
    let r = &out.report.runs[0].results;
    assert_eq!((r.pods.submitted, r.pods.scheduled), (3, 2));
}

/// The rescheduling plugin's `interval` (volcano-behaviour.md §3) on the replay's virtual
/// clock: the strategies run in the first cycle with a clock, then only in cycles more than 5
/// minutes after their last run, and the engine keeps that time on its cluster.
#[test]
fn rescheduling_runs_once_per_interval_on_the_virtual_clock() {
    let conf = SchedulerConf::parse(
        "actions: \"enqueue, allocate, shuffle\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: rescheduling\n- plugins:\n  - name: predicates\n  - name: proportion\n",
    )
    .unwrap()
    .0;
    let w = small(&[("n1", 8)], &[("a", 1, 0, 2000), ("b", 1, 10, 2000), ("c", 1, 100, 2000), ("d", 1, 400, 2000)]);
    let mut e = Engine::new(&w, conf, EngineOptions { policy: PERIOD_10S, seed: 1 });
    let (mut last, mut runs, mut skipped) = (None::<i64>, 0, 0);
    while e.step() && e.now() <= 500_000 {
        let (now, got) = (e.now(), e.cluster().rescheduled_ms());
        let due = now > 0 && last.is_none_or(|l| l + 300_000 < now);
        if due {
            assert_eq!(got, Some(now), "t={now} ms: due, so the strategies ran and their time is kept");
            runs += 1;
        } else {
            assert_eq!(got, last, "t={now} ms: not due, the last run stays");
            skipped += usize::from(now > 0);
        }
        last = got;
    }
    assert_eq!(runs, 2, "at the first cycle with a clock and again after 400 s");
    assert!(skipped > 0, "some cycle fell within the interval");
}
