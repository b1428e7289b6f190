//! Volcano Jobs in `basalt simulate` and `basalt replay`: the job controller's logic and the
//! scheduler on the in-memory cluster, pods run by the simulated kubelet for their
//! `basalt.dev/duration-seconds` and ended with their `basalt.dev/exit-code`. Each test runs the
//! binary as a user would and reads its JSON.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("basalt-sim-jobs-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/jobs")
}

fn basalt(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_basalt")).args(args).output().expect("run basalt");
    assert!(out.status.success(), "basalt {args:?}: {:?}\n{}", out.status.code(), String::from_utf8_lossy(&out.stderr));
    let mut v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    if let Some(o) = v.as_object_mut() {
        o.remove("timings");
    }
    v
}

fn simulate(paths: &[&Path], extra: &[&str]) -> Value {
    let mut args: Vec<String> = vec!["simulate".into(), "--output".into(), "json".into(), "--cluster".into()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    args.extend(extra.iter().map(|s| s.to_string()));
    basalt(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn job<'a>(out: &'a Value, key: &str) -> &'a Value {
    out["jobs"].as_array().into_iter().flatten().find(|j| j["job"] == key).unwrap_or_else(|| panic!("no job {key} in {out}"))
}

/// The phases `key` went through, in order, from the cycles' `jobs` transitions.
fn phases(out: &Value, key: &str) -> Vec<String> {
    let mut v = Vec::new();
    for c in out["cycles"].as_array().into_iter().flatten() {
        for t in c["jobs"].as_array().into_iter().flatten().filter(|t| t["job"] == key) {
            v.push(t["to"].as_str().unwrap_or_default().to_string());
        }
    }
    v
}

fn count(j: &Value, task: &str, phase: &str) -> i64 {
    j["taskStatusCount"][task][phase].as_i64().unwrap_or(0)
}

#[test]
fn the_tensorflow_and_mpi_examples_run_to_completed() {
    let out = simulate(&[&examples()], &[]);
    let run = &out["jobsRun"];
    assert_eq!((run["finished"].as_i64(), run["total"].as_i64()), (Some(2), Some(2)), "{run}");
    assert!(run.get("stoppedAtLimit").is_none(), "{run}");

    let tf = job(&out, "ml/tf-dist-mnist");
    assert_eq!(phases(&out, "ml/tf-dist-mnist"), ["Pending", "Running", "Completing", "Completed"]);
    assert_eq!((tf["phase"].as_str(), tf["retryCount"].as_i64()), (Some("Completed"), Some(0)));
    // Both workers succeeded; the ps, which runs until stopped, was killed by CompleteJob.
    assert_eq!(count(tf, "worker", "Succeeded"), 2, "{tf}");
    assert_eq!((tf["succeeded"].as_i64(), tf["failed"].as_i64(), tf["running"].as_i64()), (Some(2), Some(0), Some(0)), "{tf}");
    // Pods exist from cycle 2 (the PodGroup is admitted in cycle 1), bind in cycle 2 at 1 s,
    // the workers end 30 s later (31 s, cycle 32); TaskCompleted → CompleteJob → Completing
    // kills the ps, gone a cycle later: Completed at cycle 33, 32 s.
    assert_eq!((tf["finishedCycle"].as_i64(), tf["finishedAtMs"].as_i64()), (Some(33), Some(32_000)), "{tf}");

    let mpi = job(&out, "ml/mpi-hello");
    assert_eq!(phases(&out, "ml/mpi-hello"), ["Pending", "Running", "Completing", "Completed"]);
    assert_eq!((mpi["phase"].as_str(), mpi["retryCount"].as_i64()), (Some("Completed"), Some(0)));
    assert_eq!(count(mpi, "mpimaster", "Succeeded"), 1, "{mpi}");

    // Every pod the controller made is bound once, and belongs to its job's PodGroup.
    let mut bound = std::collections::BTreeSet::new();
    for c in out["cycles"].as_array().unwrap() {
        for b in c["binds"].as_array().unwrap() {
            assert!(bound.insert(b["pod"].as_str().unwrap().to_string()), "bound twice: {b}");
        }
    }
    let want = [
        ("ml/tf-dist-mnist-ps-0", "tf-dist-mnist"),
        ("ml/tf-dist-mnist-worker-0", "tf-dist-mnist"),
        ("ml/tf-dist-mnist-worker-1", "tf-dist-mnist"),
        ("ml/mpi-hello-mpimaster-0", "mpi-hello"),
        ("ml/mpi-hello-mpiworker-1", "mpi-hello"),
    ];
    for (pod, job) in want {
        assert!(bound.contains(pod), "{pod} never bound: {bound:?}");
        let group = out["podGroupOfPod"][pod].as_str().unwrap_or_default();
        assert!(group.starts_with(&format!("ml/{job}-00000000-0000-4000-8000-")), "{pod} in PodGroup {group:?}");
    }
}

const FAILING: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: flaky, namespace: ci}
spec:
  maxRetry: 3
  policies:
  - event: PodFailed
    action: RestartJob
  tasks:
  - name: test
    replicas: 2
    template:
      metadata:
        annotations:
          basalt.dev/duration-seconds: "5"
          basalt.dev/exit-code: "1"
      spec:
        restartPolicy: Never
        containers:
        - name: t
          image: busybox
          resources: {requests: {cpu: "1", memory: 1Gi}}
"#;

#[test]
fn a_failing_job_restarts_until_max_retry_and_ends_failed() {
    let dir = TempDir::new("flaky");
    let file = dir.path().join("flaky.yaml");
    std::fs::write(&file, FAILING).unwrap();
    let out = simulate(&[&file], &[]);
    let j = job(&out, "ci/flaky");
    assert_eq!((j["phase"].as_str(), j["retryCount"].as_i64()), (Some("Failed"), Some(3)), "{j}");
    // Three failures, each PodFailed → RestartJob (retryCount 1, 2, 3), the third reaching
    // maxRetry.
    let p = phases(&out, "ci/flaky");
    assert_eq!(p.iter().filter(|x| *x == "Restarting").count(), 3, "{p:?}");
    assert_eq!(p.last().map(String::as_str), Some("Failed"), "{p:?}");
    assert_eq!(p[..3], ["Pending", "Running", "Restarting"], "{p:?}");
    // The whole-job kill on the last retry keeps the failed pods (Volcano's soft kill).
    assert!(j["failed"].as_i64().unwrap_or(0) >= 1, "{j}");
    // Three runs of both pods: the first and two restarts; the third failure brings
    // retryCount to maxRetry, so the job fails instead of restarting again.
    let binds: usize = out["cycles"].as_array().unwrap().iter().map(|c| c["binds"].as_array().unwrap().len()).sum();
    assert_eq!(binds, 6, "{out}");
    assert_eq!((j["failed"].as_i64(), j["version"].as_i64()), (Some(2), Some(4)), "{j}");
}

#[test]
fn same_input_same_output_and_the_cycle_limit_is_reported() {
    let a = simulate(&[&examples()], &[]);
    let b = simulate(&[&examples()], &[]);
    assert_eq!(a, b, "two runs of the same input differ");
    let short = simulate(&[&examples()], &["--max-cycles", "5"]);
    assert_eq!(short["jobsRun"]["stoppedAtLimit"].as_i64(), Some(5), "{}", short["jobsRun"]);
    assert_eq!(short["cycles"].as_array().map(Vec::len), Some(5));
    assert_eq!(job(&short, "ml/tf-dist-mnist")["phase"], "Running");
    // --cycles runs exactly that many cycles, Jobs or not.
    let exact = simulate(&[&examples()], &["--cycles", "3"]);
    assert_eq!(exact["cycles"].as_array().map(Vec::len), Some(3));
    assert!(exact["jobsRun"].get("stoppedAtLimit").is_none());
}

#[test]
fn replay_runs_a_workload_of_jobs_and_reports_them() {
    let dir = TempDir::new("replay");
    let mut text = std::fs::read_to_string(examples().join("00-cluster.yaml")).unwrap();
    // Three copies of the TF job arriving at 0, 20 and 40 s of virtual time.
    let tf = std::fs::read_to_string(examples().join("10-tf-dist-mnist.yaml")).unwrap();
    for (i, at) in [0, 20, 40].into_iter().enumerate() {
        let named =
            tf.replace("name: tf-dist-mnist", &format!("name: tf-{i}\n  annotations:\n    basalt.dev/arrival-seconds: \"{at}\""));
        text.push_str("\n---\n");
        text.push_str(&named);
    }
    let file = dir.path().join("workload.yaml");
    std::fs::write(&file, text).unwrap();
    let path = file.display().to_string();
    let out = basalt(&["replay", "--cluster", &path, "--period", "5", "--output", "json", "--quiet"]);
    assert_eq!(out["jobCount"].as_i64(), Some(3), "{out}");
    let run = &out["runs"][0];
    assert_eq!(run["phases"], serde_json::json!({"Completed": 3}), "{run}");
    assert_eq!(run["jobCompletionS"]["count"].as_i64(), Some(3), "{run}");
    let submitted: Vec<i64> = run["jobs"].as_array().unwrap().iter().map(|j| j["submittedAtMs"].as_i64().unwrap()).collect();
    assert_eq!(submitted, [0, 20_000, 40_000]);
    for j in run["jobs"].as_array().unwrap() {
        assert!(j["finishedAtMs"].as_i64().unwrap() >= j["submittedAtMs"].as_i64().unwrap() + 30_000, "{j}");
    }
    assert_eq!(out, basalt(&["replay", "--cluster", &path, "--period", "5", "--output", "json", "--quiet"]), "not deterministic");
}

/// A node with room for one 1-cpu pod, and CronJobs whose Jobs run one such pod.
const CRON_NODE: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}
"#;

/// A CronJob `name` on `schedule` with `extra` spec lines, each Job one pod that runs
/// `seconds` (`None`: until deleted).
fn cron_job(name: &str, schedule: &str, extra: &str, seconds: Option<u32>) -> String {
    let duration = seconds.map_or(String::new(), |s| format!("basalt.dev/duration-seconds: \"{s}\""));
    format!(
        r#"
---
apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata: {{name: {name}, namespace: batch}}
spec:
  schedule: "{schedule}"
{extra}
  jobTemplate:
    spec:
      minAvailable: 1
      tasks:
      - name: run
        replicas: 1
        template:
          metadata:
            annotations: {{{duration}}}
          spec:
            restartPolicy: Never
            containers:
            - name: c
              image: busybox
              resources: {{requests: {{cpu: "1", memory: 1Gi}}}}
"#
    )
}

fn cron<'a>(out: &'a Value, key: &str) -> &'a Value {
    out["cronJobs"].as_array().into_iter().flatten().find(|c| c["cronJob"] == key).unwrap_or_else(|| panic!("no {key} in {out}"))
}

fn runs(c: &Value) -> Vec<(String, i64, i64)> {
    c["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (r["job"].as_str().unwrap().to_string(), r["scheduledAtMs"].as_i64().unwrap(), r["createdAtMs"].as_i64().unwrap())
        })
        .collect()
}

fn reasons(c: &Value) -> Vec<String> {
    c["events"].as_array().unwrap().iter().map(|e| e["reason"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_forbid_cronjob_skips_runs_while_its_job_runs_and_keeps_its_history_limit() {
    let dir = TempDir::new("cron-forbid");
    let file = dir.path().join("cron.yaml");
    let extra = "  concurrencyPolicy: Forbid\n  successfulJobsHistoryLimit: 1";
    std::fs::write(&file, format!("{CRON_NODE}{}", cron_job("every", "*/1 * * * *", extra, Some(90)))).unwrap();
    let out = simulate(&[&file], &["--cycles", "330"]);
    let c = cron(&out, "batch/every");
    let r = runs(c);
    // Due every minute of virtual time; each Job runs 90 s, so the next run waits for it and
    // starts when it completes (late), and a run missed meanwhile is skipped.
    let names: Vec<&str> = r.iter().map(|(j, _, _)| j.as_str()).collect();
    assert_eq!(names, ["batch/every-1", "batch/every-2", "batch/every-4"], "{c}");
    assert_eq!((r[0].1, r[0].2), (60_000, 60_000), "{c}");
    assert_eq!(r[1].1, 120_000, "{c}");
    assert!(r[1].2 > 150_000 && r[1].2 < 180_000, "every-2 made when every-1 completed: {c}");
    assert_eq!(r[2].1, 240_000, "{c}");
    assert!(reasons(c).contains(&"ForbidConcurrent".to_string()), "{c}");
    // Never two Jobs of the CronJob at once: each was made after the one before finished.
    for w in r.windows(2) {
        let before = job(&out, &w[0].0);
        let finished = before["finishedAtMs"].as_i64().unwrap_or_else(|| panic!("{} unfinished: {before}", w[0].0));
        assert!(w[1].2 >= finished, "{} made at {} before {} finished at {finished}", w[1].0, w[1].2, w[0].0);
    }
    // successfulJobsHistoryLimit 1: once every-2 completed, every-1 was deleted.
    let first = job(&out, "batch/every-1");
    assert_eq!(first["phase"], "Completed", "{first}");
    assert!(first["deletedAtMs"].as_i64().is_some(), "{first}");
    let kept = out["jobs"].as_array().unwrap().iter().filter(|j| j["phase"] == "Completed" && j.get("deletedAtMs").is_none());
    assert!(kept.count() <= 1, "{}", out["jobs"]);
    assert!(c["events"].as_array().unwrap().iter().any(|e| e["message"] == "Deleted job \"every-1\""), "{c}");
    assert!(c["lastSuccessfulMs"].as_i64().is_some(), "{c}");
    // Every Job's pod was bound, and on the one node.
    let binds: Vec<String> = out["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["binds"].as_array().unwrap().iter().map(|b| b["pod"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(binds, ["batch/every-1-run-0", "batch/every-2-run-0", "batch/every-4-run-0"]);
    assert_eq!(out, simulate(&[&file], &["--cycles", "330"]), "not deterministic");
}

#[test]
fn a_replace_cronjob_deletes_the_running_job_and_its_pod_frees_the_node() {
    let dir = TempDir::new("cron-replace");
    let file = dir.path().join("cron.yaml");
    std::fs::write(&file, format!("{CRON_NODE}{}", cron_job("svc", "*/1 * * * *", "  concurrencyPolicy: Replace", None)))
        .unwrap();
    let out = simulate(&[&file], &["--cycles", "190"]);
    let c = cron(&out, "batch/svc");
    let names: Vec<String> = runs(c).into_iter().map(|(j, _, _)| j).collect();
    assert_eq!(names, ["batch/svc-1", "batch/svc-2", "batch/svc-3"], "{c}");
    assert_eq!(job(&out, "batch/svc-1")["deletedAtMs"].as_i64(), Some(120_000));
    assert_eq!(job(&out, "batch/svc-2")["deletedAtMs"].as_i64(), Some(180_000));
    assert!(job(&out, "batch/svc-3").get("deletedAtMs").is_none());
    assert_eq!(c["active"], serde_json::json!(["svc-3"]), "{c}");
    assert!(reasons(c).contains(&"ReplaceConcurrent".to_string()), "{c}");
    // The node holds one pod: each replacement binds only once the replaced pod is gone.
    let bound: Vec<String> = out["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["binds"].as_array().unwrap().iter().map(|b| b["pod"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(bound, ["batch/svc-1-run-0", "batch/svc-2-run-0", "batch/svc-3-run-0"]);
}

#[test]
fn cronjob_time_zones_suspend_and_bad_schedules() {
    let dir = TempDir::new("cron-misc");
    let file = dir.path().join("cron.yaml");
    let text = [
        CRON_NODE.to_string(),
        // 05:31 in Kolkata (UTC+05:30) is 00:01 UTC: the first run is at 60 s, not 05:31 UTC.
        cron_job("kolkata", "31 5 * * *", "  timeZone: Asia/Kolkata", Some(5)),
        cron_job("paused", "*/1 * * * *", "  suspend: true", Some(5)),
        cron_job("broken", "61 * * * *", "", Some(5)),
    ]
    .concat();
    std::fs::write(&file, text).unwrap();
    let out = simulate(&[&file], &["--cycles", "100"]);
    let k = runs(cron(&out, "batch/kolkata"));
    assert_eq!(k.len(), 1, "{k:?}");
    assert_eq!(k[0].1, 60_000, "{k:?}");
    assert!(runs(cron(&out, "batch/paused")).is_empty());
    let broken = cron(&out, "batch/broken");
    assert!(runs(broken).is_empty());
    assert_eq!(reasons(broken), ["UnParseableCronJobSchedule"], "{broken}");
    let issues = out["issues"].as_array().unwrap();
    assert!(
        issues.iter().any(|i| i.as_str().unwrap().contains("CronJob batch/broken: spec.schedule:")),
        "the bad schedule is reported naming the object and field: {issues:?}"
    );
    // Without --cycles, a run with a CronJob that keeps scheduling stops at --max-cycles and says so.
    let limited = simulate(&[&file], &["--max-cycles", "70"]);
    assert_eq!(limited["jobsRun"]["stoppedAtLimit"].as_i64(), Some(70), "{}", limited["jobsRun"]);
    assert_eq!(limited["jobsRun"]["cronJobsPending"], true);
}
