//! Loading clusters from files: issues name file, document, object and field; the rest loads;
//! lists, unknown kinds, garbage and empty files; and `basalt simulate` exit codes.

use basalt_core::cluster::Cluster;
use basalt_runtime::load::{self, LoadOptions, LoadReport};
use basalt_runtime::sim::{self, SimError, SimOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory under the system temp dir, unique per test, removed when dropped.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(test: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("basalt-load-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    Scratch(d)
}

fn write(dir: &Path, name: &str, body: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("create parent");
    }
    std::fs::write(&p, body).expect("write file");
    p
}

fn load_str(text: &str) -> (Cluster, LoadReport) {
    let mut c = Cluster::new();
    let mut r = LoadReport::default();
    load::load_text("mem.yaml", text, false, &mut c, &LoadOptions::default(), &mut r);
    (c, r)
}

const NODE: &str =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n";

fn pod(name: &str, cpu: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ns\n  annotations: {{scheduling.k8s.io/group-name: pg}}\nspec:\n  schedulerName: volcano\n  containers:\n  - name: c\n    resources: {{requests: {{cpu: '{cpu}'}}}}\n"
    )
}

#[test]
fn malformed_quantity_in_one_pod_is_reported_and_the_rest_loads() {
    let dir = scratch("malformed");
    let text = [NODE.to_string(), pod("good-0", "1"), pod("bad-1", "abc"), pod("good-2", "500m")].join("---\n");
    let file = write(&dir, "cluster.yaml", text);
    let mut c = Cluster::new();
    let r = load::load_paths(std::slice::from_ref(&file), &mut c, &LoadOptions::default());
    assert_eq!(r.loaded, 3, "{r:?}");
    assert_eq!(r.issues.len(), 1, "{r:?}");
    let i = &r.issues[0];
    assert_eq!(i.file, file.display().to_string());
    assert_eq!(i.doc, 3);
    assert_eq!(i.kind.as_deref(), Some("Pod"));
    assert_eq!(i.name.as_deref(), Some("ns/bad-1"));
    assert!(i.message.contains("field spec.containers[0].resources.requests.cpu: invalid quantity \"abc\""), "{}", i.message);
    assert_eq!(i.to_string(), format!("{} doc 3 Pod ns/bad-1: {}", file.display(), i.message));
    assert!(c.pod_id("ns", "good-0").is_some() && c.pod_id("ns", "good-2").is_some());
    assert!(c.pod_id("ns", "bad-1").is_none());
}

#[test]
fn kind_list_and_typed_lists_load() {
    // What `kubectl get nodes,pods -o yaml` prints, and a PodList whose items carry no kind.
    let text = format!(
        "apiVersion: v1\nkind: List\nmetadata: {{resourceVersion: ''}}\nitems:\n- {}\n- {}\n---\napiVersion: v1\nkind: PodList\nitems:\n- metadata: {{name: p2, namespace: ns}}\n  spec: {{schedulerName: volcano, containers: [{{name: c}}]}}\n",
        serde_json::to_string(&serde_yaml::from_str::<serde_json::Value>(NODE).unwrap()).unwrap(),
        serde_json::to_string(&serde_yaml::from_str::<serde_json::Value>(&pod("p1", "1")).unwrap()).unwrap(),
    );
    let (c, r) = load_str(&text);
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    assert_eq!(r.loaded, 3);
    assert!(c.node_id("n1").is_some() && c.pod_id("ns", "p1").is_some() && c.pod_id("ns", "p2").is_some());

    // A bad item is reported with its index; the others load.
    let (_, r) = load_str("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n- 42\n- {apiVersion: v1, kind: Node, metadata: {name: b}}\n");
    assert_eq!(r.loaded, 2);
    assert_eq!(r.issues.len(), 1);
    assert_eq!((r.issues[0].doc, r.issues[0].item), (1, Some(1)));
}

#[test]
fn json_files_load() {
    let dir = scratch("json");
    let list = serde_json::json!({
        "apiVersion": "v1", "kind": "NodeList",
        "items": [{"metadata": {"name": "j1"}, "status": {"allocatable": {"cpu": 2, "memory": "1Gi"}}}]
    });
    write(&dir, "nodes.json", serde_json::to_string_pretty(&list).unwrap());
    let mut c = Cluster::new();
    let r = load::load_paths(&[dir.to_path_buf()], &mut c, &LoadOptions::default());
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    assert_eq!(c.node_id("j1").and_then(|id| c.node(id)).map(|n| n.spec.allocatable.get("cpu").copied()), Some(Some(2000)));
}

#[test]
fn unknown_kinds_and_versions_are_warnings() {
    let text = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: prod}}\n---\napiVersion: scheduling.volcano.sh/v1alpha1\nkind: PodGroup\nmetadata: {{name: old}}\n---\n{NODE}"
    );
    let (c, r) = load_str(&text);
    assert_eq!(r.loaded, 1);
    assert_eq!(r.issues.len(), 2, "{:?}", r.issues);
    assert_eq!(r.issues[0].to_string(), "mem.yaml doc 1 Deployment prod/web: unsupported kind apps/v1 Deployment; skipped");
    assert!(r.issues[1].message.contains("scheduling.volcano.sh/v1alpha1"));
    assert!(c.node_id("n1").is_some());
}

#[test]
fn cronjobs_load_with_their_namespace_and_bad_ones_are_reported() {
    let cron = |name: &str, schedule: &str| {
        format!("apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {{name: {name}}}\nspec: {{schedule: '{schedule}'}}\n")
    };
    let text = [cron("a", "*/5 * * * *"), cron("nosched", ""), cron("a", "@hourly")].join("---\n");
    let (_, r) = load_str(&text);
    assert_eq!(r.cron_jobs.len(), 1, "{:?}", r.cron_jobs);
    let a = &r.cron_jobs[0].cron_job;
    assert_eq!(a.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(a.spec.schedule, "@hourly", "the later definition wins");
    let issues: Vec<String> = r.issues.iter().map(ToString::to_string).collect();
    assert_eq!(
        issues,
        [
            "mem.yaml doc 2 CronJob default/nosched: field spec.schedule: required; skipped",
            "mem.yaml doc 3 CronJob default/a: defined more than once; this definition replaces the earlier one",
        ]
    );
}

#[test]
fn namespaces_default_and_duplicates_are_reported() {
    let text = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg, namespace: ''}\nspec: {minMember: 2}\n";
    let (c, r) = load_str(text);
    assert_eq!(r.loaded, 2);
    let id = c.pod_group_id("default", "pg").expect("PodGroup in the default namespace");
    assert_eq!(c.pod_group(id).map(|g| g.spec.min_member), Some(2), "the later definition wins");
    assert_eq!(r.issues.len(), 1);
    assert!(r.issues[0].message.contains("defined more than once"));
}

#[test]
fn scheduler_name_filter_keeps_bound_pods_of_other_schedulers() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: mine}\nspec: {schedulerName: volcano, containers: [{name: c}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: theirs}\nspec: {containers: [{name: c}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: bound}\nspec: {schedulerName: default-scheduler, nodeName: n1, containers: [{name: c}]}\nstatus: {phase: Running}\n";
    let (c, r) = load_str(text);
    assert_eq!((r.loaded, r.skipped_other_scheduler), (2, 1));
    assert!(c.pod_id("default", "mine").is_some() && c.pod_id("default", "bound").is_some());
    assert!(c.pod_id("default", "theirs").is_none());
    let mut c2 = Cluster::new();
    let mut r2 = LoadReport::default();
    load::load_text("mem.yaml", text, false, &mut c2, &LoadOptions { scheduler_name: "default-scheduler".into() }, &mut r2);
    assert_eq!((r2.loaded, r2.skipped_other_scheduler), (2, 1), "pod `mine` is now the other scheduler's");
}

#[test]
fn directories_are_walked_recursively_in_sorted_order() {
    let dir = scratch("walk");
    write(&dir, "b/2-node.yml", "apiVersion: v1\nkind: Node\nmetadata: {name: second}\n");
    write(&dir, "a/1-node.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: first}\nspec: {unschedulable: true}\n");
    write(&dir, "a/notes.txt", "not yaml: [");
    write(&dir, "c.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: first}\n");
    let (files, issues) = load::discover(std::slice::from_ref(&*dir));
    assert!(issues.is_empty());
    let names: Vec<String> = files.iter().map(|f| f.strip_prefix(&*dir).unwrap().display().to_string()).collect();
    assert_eq!(names, vec!["a/1-node.yaml", "b/2-node.yml", "c.yaml"]);
    let mut c = Cluster::new();
    let r = load::load_paths(&[dir.to_path_buf(), dir.join("missing.yaml")], &mut c, &LoadOptions::default());
    assert_eq!((r.files, r.loaded), (3, 3));
    let id = c.node_id("first").unwrap();
    assert!(!c.node(id).unwrap().spec.unschedulable, "c.yaml is read last and replaces a/1-node.yaml");
    assert!(r.issues.iter().any(|i| i.file.ends_with("missing.yaml") && i.doc == 0 && i.message.starts_with("cannot read")));
}

#[test]
fn garbage_and_empty_inputs_do_not_panic() {
    let table: &[&str] = &[
        "",
        "---",
        "---\n---\n...\n",
        "# just a comment\n",
        "~",
        "42",
        "- a\n- b\n",
        "a: [\n",
        "\t\tkind: Pod",
        "apiVersion: v1\nkind: Pod\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: [1, 2]}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: 3}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: 1e400}}}]}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: .nan}}}]}\n",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {memory: 99999999999999999999Ei}}}]}\n",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {conditions: [{}]}\n",
        "apiVersion: v1\nkind: List\nitems: 7\n",
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: []}\n",
        "apiVersion: v1\nkind: PodList\nitems: [null, [], {}, {metadata: 5}]\n",
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: []\n",
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 99999999999}\n",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\nvalue: high\n",
        "a: &x [*x]\n",
        "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: spec.x, operator: In, values: [a]}]}]}}}}\n",
        "\u{feff}apiVersion: v1\nkind: Node\nmetadata: {name: bom}\n",
    ];
    for text in table {
        let (_, r) = load_str(text);
        assert!(r.loaded <= 1, "{text:?}");
        let mut c = Cluster::new();
        let mut r = LoadReport::default();
        load::load_text("mem.json", text, true, &mut c, &LoadOptions::default(), &mut r);
    }
    let (c, _) = load_str("\u{feff}apiVersion: v1\nkind: Node\nmetadata: {name: bom}\n");
    assert!(c.node_id("bom").is_some(), "a byte-order mark is ignored");

    // Files that are not text, or are empty, are issues, not crashes.
    let dir = scratch("garbage");
    write(&dir, "bytes.yaml", [0xff, 0xfe, 0x00, 0x9f, 0x92, 0x96, 0x0a, 0x2d, 0x2d, 0x2d]);
    write(&dir, "empty.yaml", "");
    write(&dir, "nul.json", "\0\0\0");
    let mut c = Cluster::new();
    let r = load::load_paths(std::slice::from_ref(&*dir), &mut c, &LoadOptions::default());
    assert_eq!(r.loaded, 0);
    assert!(r.issues.iter().any(|i| i.file.ends_with("bytes.yaml") && i.message.contains("UTF-8")), "{:?}", r.issues);
    assert!(r.issues.iter().any(|i| i.file.ends_with("nul.json")), "{:?}", r.issues);

    // A cheap deterministic fuzz: byte-level mutations of a valid multi-document file.
    let seed_text = [
        NODE.to_string(),
        pod("p-0", "250m"),
        "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Node, metadata: {name: n2}}]\n".to_string(),
    ]
    .join("---\n");
    let base = seed_text.as_bytes();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = b"-:{}[]#&*!|>'\"\n \t0123456789.eEKMGi,%@`";
    for _ in 0..400 {
        let mut bytes = base.to_vec();
        for _ in 0..(1 + next() % 6) {
            let at = (next() as usize) % bytes.len();
            match next() % 3 {
                0 => bytes[at] = alphabet[(next() as usize) % alphabet.len()],
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, alphabet[(next() as usize) % alphabet.len()]),
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let _ = load_str(&text);
    }
}

#[test]
fn sim_run_is_deterministic_and_reports_nothing_loaded() {
    let dir = scratch("sim");
    let file = write(&dir, "c.yaml", [NODE.to_string(), pod("p-0", "1")].join("---\n"));
    let conf = basalt_core::SchedulerConf::default();
    let opts = SimOptions { cycles: 3, ..Default::default() };
    let a = sim::run(std::slice::from_ref(&file), &conf, &opts).expect("loads");
    let b = sim::run(std::slice::from_ref(&file), &conf, &opts).expect("loads");
    assert_eq!(a, b);
    assert_eq!(a.cycles.len(), 3);
    assert_eq!(a.pod_group_of_pod.get("ns/p-0").map(String::as_str), Some("ns/pg"));
    assert_eq!(sim::render_json(&a), sim::render_json(&b));

    let empty = write(&dir, "empty.yaml", "");
    match sim::run(&[empty], &conf, &opts) {
        Err(SimError::NothingLoaded { load, .. }) => assert_eq!(load.loaded, 0),
        other => panic!("expected NothingLoaded, got {other:?}"),
    }
}

// ---- `basalt simulate` exit codes and output ----

fn basalt(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_basalt")).args(args).output().expect("run basalt")
}

fn examples() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cluster").display().to_string()
}

#[test]
fn cli_json_output_has_the_contract_keys() {
    let out = basalt(&["simulate", "--cluster", &examples(), "--cycles", "2", "--output", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let mut top: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    top.sort_unstable();
    assert_eq!(top, vec!["cycles", "issues", "notHonoured", "podGroupOfPod", "timings"]);
    assert_eq!(v["notHonoured"].as_array().map(Vec::len), Some(0), "Volcano's default conf is fully honoured");
    // Wall-clock timings sit in their own key: load, then per cycle session open and actions.
    let t = &v["timings"];
    assert!(t["loadMs"].as_f64().is_some_and(|ms| ms > 0.0), "{t}");
    assert!(t["startupMs"].as_f64().is_some(), "{t}");
    let timed = t["cycles"].as_array().unwrap();
    assert_eq!(timed.len(), 2);
    for (k, c) in timed.iter().enumerate() {
        assert_eq!(c["cycle"], k as u64 + 1);
        let actions: Vec<&str> = c["actions"].as_array().unwrap().iter().map(|a| a["action"].as_str().unwrap()).collect();
        assert_eq!(actions, ["enqueue", "allocate", "backfill"], "Volcano's default actions, in order");
        assert!(c["actions"].as_array().unwrap().iter().all(|a| a["ms"].as_f64().is_some_and(|ms| ms >= 0.0)));
        let total = c["totalMs"].as_f64().unwrap();
        assert!(c["sessionOpenMs"].as_f64().unwrap() <= total && c["sessionCloseMs"].as_f64().unwrap() <= total, "{c}");
    }
    let cycles = v["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 2);
    let mut keys: Vec<&str> = cycles[0].as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, vec!["binds", "events", "evictions", "pipelined", "podGroups", "queues", "skipped", "unschedulable"]);
    assert_eq!(v["podGroupOfPod"]["research/resnet-train-worker-0"], "research/resnet-train");
    assert_eq!(v["issues"].as_array().map(Vec::len), Some(0), "the example cluster loads cleanly");
}

#[test]
fn cli_prints_each_issue_once_text_in_the_report_json_on_stderr() {
    let dir = scratch("cli-text");
    let file = write(&dir, "c.yaml", [NODE.to_string(), pod("bad", "x1")].join("---\n"));
    let issue = "doc 2 Pod ns/bad: field spec.containers[0].resources.requests.cpu";
    let count = |s: &str| s.lines().filter(|l| l.contains(issue)).count();
    let out = basalt(&["simulate", "--cluster", &file.display().to_string()]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("Cycle 1"), "{stdout}");
    assert_eq!((count(&stdout), count(&stderr)), (1, 0), "text: once, in the report\n{stdout}\n{stderr}");
    assert!(stdout.contains("\nWall clock, ms (varies run to run)\n  load "), "{stdout}");
    assert!(stdout.contains("  cycle 1: ") && stdout.contains("session open ") && stdout.contains(", allocate "), "{stdout}");

    let out = basalt(&["simulate", "--cluster", &file.display().to_string(), "--output", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().any(|l| l.starts_with("warning: ") && l.contains(issue)), "{stderr}");
    assert_eq!(count(&stderr), 1, "json: once on stderr (and in the JSON issues)\n{stderr}");
}

#[test]
fn many_unsupported_objects_are_one_line_per_kind_with_a_count() {
    let dir = scratch("grouped");
    let mut docs = vec![NODE.to_string()];
    for i in 0..31 {
        docs.push(format!("apiVersion: v1\nkind: Service\nmetadata: {{name: svc-{i}, namespace: web}}\n"));
        docs.push(format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: dep-{i}, namespace: web}}\n"));
    }
    docs.push("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: only-one}\n".to_string());
    let file = write(&dir, "mixed.yaml", docs.join("---\n"));
    let f = file.display().to_string();
    let mut c = Cluster::new();
    let report = load::load_paths(std::slice::from_ref(&file), &mut c, &LoadOptions::default());
    assert_eq!(report.issues.len(), 63, "every object is an issue of its own");
    let lines = load::grouped_issue_lines(&report.issues);
    assert_eq!(
        lines,
        vec![
            format!("Service ×31: unsupported kind v1 Service; skipped ({f} doc 2 web/svc-0, {f} doc 4 web/svc-1, {f} doc 6 web/svc-2 and 28 more)"),
            format!("Deployment ×31: unsupported kind apps/v1 Deployment; skipped ({f} doc 3 web/dep-0, {f} doc 5 web/dep-1, {f} doc 7 web/dep-2 and 28 more)"),
            format!("{f} doc 64 ConfigMap default/only-one: unsupported kind v1 ConfigMap; skipped"),
        ]
    );
    // Below the grouping threshold each object keeps its own line.
    let few: Vec<load::LoadIssue> = report
        .issues
        .iter()
        .filter(|i| i.kind.as_deref() == Some("Service"))
        .take(load::GROUP_ISSUES_FROM - 1)
        .cloned()
        .collect();
    assert_eq!(load::grouped_issue_lines(&few), few.iter().map(ToString::to_string).collect::<Vec<_>>());

    // The text report prints the three lines once, and nothing on stderr.
    let out = basalt(&["simulate", "--cluster", &f]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.lines().filter(|l| l.contains("unsupported kind")).count(), 3, "{stdout}");
    assert!(stdout.contains("Issues (64):"), "the count is of every issue (and the default-queue note)\n{stdout}");
}

#[test]
fn a_deeply_nested_document_is_refused_unparsed_and_names_file_and_document() {
    // 100,000 levels in 200 KB: without the bound the YAML parser takes over a minute.
    let deep = format!("apiVersion: v1\nkind: ConfigMap\ndata: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let dashes = format!("kind: X\nitems:\n{}x\n", "- ".repeat(100_000));
    let just_right = format!("a: {}1{}\n", "[".repeat(load::MAX_NESTING_DEPTH - 1), "]".repeat(load::MAX_NESTING_DEPTH - 1));
    let too_deep = format!("a: {}1{}\n", "[".repeat(load::MAX_NESTING_DEPTH), "]".repeat(load::MAX_NESTING_DEPTH));
    let text = [NODE.to_string(), deep, dashes, just_right, too_deep, pod("p", "1")].join("---\n");
    let (c, r) = load_str(&text);
    assert_eq!(c.counts().0, 1, "the node loads");
    assert_eq!(c.counts().1, 1, "the pod after the deep documents loads");
    let lines: Vec<String> = r.issues.iter().map(ToString::to_string).collect();
    let limit = load::MAX_NESTING_DEPTH;
    assert_eq!(
        lines[0],
        format!("mem.yaml doc 2: nested more than {limit} levels deep at line 8 (MAX_NESTING_DEPTH); document skipped unparsed")
    );
    assert_eq!(
        lines[1],
        format!("mem.yaml doc 3: nested more than {limit} levels deep at line 12 (MAX_NESTING_DEPTH); document skipped unparsed")
    );
    assert!(!lines[2].contains("nested more than"), "{limit} levels are allowed: {}", lines[2]);
    assert!(lines[3].starts_with("mem.yaml doc 5: nested more than"), "{}", lines[3]);
    assert_eq!(lines.len(), 4, "{lines:#?}");

    // JSON: serde_json's own recursion limit (128) refuses it as quickly, naming the file.
    let mut c = Cluster::new();
    let mut r = LoadReport::default();
    let json = format!("{{\"kind\": \"ConfigMap\", \"data\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    load::load_text("deep.json", &json, true, &mut c, &LoadOptions::default(), &mut r);
    assert!(r.issues[0].to_string().starts_with("deep.json doc 1: invalid JSON: recursion limit exceeded"), "{:?}", r.issues);
}

#[test]
fn cli_exit_codes() {
    let dir = scratch("cli-exit");
    let cluster = write(&dir, "c.yaml", NODE).display().to_string();
    let good_conf =
        write(&dir, "good.conf", "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: nosuchplugin\n")
            .display()
            .to_string();
    let bad_conf = write(&dir, "bad.conf", "actions: \"enqueue, allocat\"\n").display().to_string();
    let not_yaml = write(&dir, "broken.conf", "actions: [\n").display().to_string();
    let deep =
        write(&dir, "deep.conf", format!("actions: {}{}\n", "[".repeat(100_000), "]".repeat(100_000))).display().to_string();
    let empty = write(&dir, "empty.yaml", "").display().to_string();
    let missing = dir.join("missing.conf").display().to_string();

    let ok = basalt(&["simulate", "--cluster", &cluster, "--conf", &good_conf, "--output", "json"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(String::from_utf8_lossy(&ok.stderr).contains("nosuchplugin"), "conf warnings go to stderr");

    for conf in [&bad_conf, &not_yaml, &missing, &deep] {
        let out = basalt(&["simulate", "--cluster", &cluster, "--conf", conf]);
        assert_eq!(out.status.code(), Some(2), "conf {conf}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(conf.as_str()), "the error names the conf file");
        assert!(out.stdout.is_empty());
    }
    for c in [&empty, &dir.join("nope").display().to_string()] {
        let out = basalt(&["simulate", "--cluster", c]);
        assert_eq!(out.status.code(), Some(1), "cluster {c}");
    }
    let usage = basalt(&["simulate"]);
    assert_eq!(usage.status.code(), Some(2), "clap usage error");
    let opts = basalt(&[
        "simulate",
        "--cluster",
        &cluster,
        "--seed",
        "7",
        "--scheduler-name",
        "other",
        "--percentage-nodes-to-find",
        "0",
        "--minimum-feasible-nodes",
        "10",
        "--minimum-percentage-nodes-to-find",
        "5",
        "--default-queue",
        "q",
    ]);
    assert_eq!(opts.status.code(), Some(0), "{}", String::from_utf8_lossy(&opts.stderr));
    let out_of_range = basalt(&["simulate", "--cluster", &cluster, "--percentage-nodes-to-find", "101"]);
    assert_eq!(out_of_range.status.code(), Some(2));
}

#[test]
fn cli_strict_refuses_what_is_not_implemented_and_lists_it_otherwise() {
    let dir = scratch("cli-strict");
    let cluster = write(&dir, "c.yaml", NODE).display().to_string();
    let conf = write(
        &dir,
        "partial.conf",
        "actions: \"enqueue, allocate, shuffle\"\ntiers:\n- plugins:\n  - name: gang\n  - name: tdm\n  - name: rescheduling\n    arguments: {interval: 5m, metricsPeriod: 5m}\n- plugins:\n  - name: nodeorder\n    arguments: {leastrequsted.weight: 2, mostrequested.weight: \"two\"}\n",
    )
    .display()
    .to_string();
    // Without --strict: runs, and the JSON lists what is skipped before the cycles.
    let out = basalt(&["simulate", "--cluster", &cluster, "--conf", &conf, "--output", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.trim_start().starts_with("{\n  \"notHonoured\""), "listed at the top: {text}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<(&str, &str)> =
        v["notHonoured"].as_array().unwrap().iter().map(|n| (n["kind"].as_str().unwrap(), n["name"].as_str().unwrap())).collect();
    assert_eq!(
        names,
        vec![
            ("plugin", "tdm"),
            ("argument", "rescheduling.metricsPeriod"),
            ("argument", "nodeorder.leastrequsted.weight"),
            ("argument", "nodeorder.mostrequested.weight")
        ]
    );
    // The text output lists them first too.
    let out = basalt(&["simulate", "--cluster", &cluster, "--conf", &conf]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Not honoured by this Basalt version"), "{text}");
    assert!(text.contains("plugin \"tdm\" is not implemented"), "{text}");
    // With --strict: exit 2 naming each unimplemented item; the mistyped value (Volcano's
    // default is used, as Volcano does) is not among them.
    let out = basalt(&["simulate", "--cluster", &cluster, "--conf", &conf, "--strict"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for want in ["argument \"metricsPeriod\"", "tdm", "leastrequsted.weight"] {
        assert!(err.contains(want), "{want} in {err}");
    }
    assert!(!err.contains("\"two\""), "{err}");
    assert!(out.stdout.is_empty());
    // The default conf passes --strict.
    let out = basalt(&["simulate", "--cluster", &cluster, "--strict"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn queue_parent_is_warned_about() {
    let dir = scratch("cli-parent");
    let queue =
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: child}\nspec: {weight: 1, parent: team}\n";
    let cluster = write(&dir, "c.yaml", [NODE, queue].join("---\n")).display().to_string();
    let out = basalt(&["simulate", "--cluster", &cluster]);
    assert_eq!(out.status.code(), Some(0));
    // Text mode prints issues once, in the report on stdout.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Queue \"child\": spec.parent \"team\" is accepted but ignored"), "{text}");
    // Beside JSON they go to stderr.
    let out = basalt(&["simulate", "--cluster", &cluster, "--output", "json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Queue \"child\": spec.parent \"team\" is accepted but ignored"), "{err}");
}
