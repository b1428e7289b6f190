//! `basalt controller` against the real test apiserver, with `basalt scheduler` beside it and a
//! test kubelet (`support::Kubelet`: runs bound pods, ends them after
//! `basalt.dev/duration-seconds` with `basalt.dev/exit-code`). The controller runs with the
//! ServiceAccount and ClusterRole of `deploy/controller.yaml`; at the end the audit log must show
//! no request of it refused.
//!
//! Scenarios, each in its own namespace, run concurrently: a two-task job Pending → Running →
//! Completed; `PodFailed → RestartJob` until `maxRetry`, then Failed with no pod left running; an
//! exit-code policy doing `RestartTask` (only that task's pod is re-created); `AbortJob` then
//! `ResumeJob` by Command; `ttlSecondsAfterFinished` deletion; `dependsOn`; then a controller
//! killed mid-job and restarted (no pod duplicated or lost).

use crate::{e2e, support};

use basalt_runtime::crd::{Command, Job};
use e2e::pods;
use e2e::process::SchedulerProcess;
use e2e::stack::{ControllerStack, StackSpec, CONTROLLER_USER, QPS};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, PostParams};
use kube::{Api, Client, ResourceExt};
use std::collections::BTreeMap;
use std::time::Duration;
use support::{fresh_namespace, wait_for, TestApiserver};

const WAIT: Duration = Duration::from_secs(90);

/// A task of `replicas` pods that run `seconds` (0: forever) and exit with `exit`.
fn task(name: &str, replicas: i32, seconds: u64, exit: i32, extra: &str) -> String {
    let mut ann = String::new();
    if seconds > 0 {
        ann = format!("basalt.dev/duration-seconds: \"{seconds}\", basalt.dev/exit-code: \"{exit}\"");
    }
    format!(
        "  - name: {name}\n    replicas: {replicas}\n{extra}    template:\n      metadata: {{annotations: {{{ann}}}}}\n      spec:\n        restartPolicy: Never\n        containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]\n"
    )
}

fn job_yaml(name: &str, spec_head: &str, tasks: &[String]) -> String {
    format!("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n  schedulerName: volcano\n{spec_head}  tasks:\n{}", tasks.concat())
}

async fn create_job(client: &Client, ns: &str, yaml: &str) -> support::Result<Job> {
    let job: Job = serde_yaml::from_str(yaml).map_err(|e| format!("job YAML: {e}\n{yaml}"))?;
    Ok(Api::<Job>::namespaced(client.clone(), ns).create(&PostParams::default(), &job).await?)
}

async fn job(client: &Client, ns: &str, name: &str) -> support::Result<Option<Job>> {
    Ok(Api::<Job>::namespaced(client.clone(), ns).get_opt(name).await?)
}

fn phase(j: &Job) -> String {
    j.status.as_ref().and_then(|s| s.state.phase.clone()).unwrap_or_default()
}

async fn wait_phase(client: &Client, ns: &str, name: &str, want: &str) -> support::Result<Job> {
    wait_for(&format!("Job {ns}/{name} {want}"), WAIT, || async {
        let j = job(client, ns, name).await?;
        Ok(j.filter(|j| phase(j) == want))
    })
    .await
}

fn pod_phase(p: &Pod) -> &str {
    p.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending")
}

/// Issues Command `action` for `job` as `vcctl job suspend/resume` does.
async fn command(client: &Client, ns: &str, job: &Job, action: &str) -> support::Result<()> {
    let mut c = Command::for_object(ns, job, action);
    c.spec.reason = Some("test".into());
    Api::<Command>::namespaced(client.clone(), ns).create(&PostParams::default(), &c).await?;
    Ok(())
}

/// Two tasks (ps ×1, worker ×2) run to Completed; pods carry Volcano's names, labels and group.
async fn two_task_job(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "ctl-two").await?;
    let yaml = job_yaml("tf", "", &[task("ps", 1, 3, 0, ""), task("worker", 2, 3, 0, "")]);
    let created = create_job(&client, &ns, &yaml).await?;
    let running = wait_phase(&client, &ns, "tf", "Running").await?;
    assert_eq!(running.status.as_ref().map(|s| s.min_available), Some(3));
    let ps = pods(&client, &ns).await?;
    let names: Vec<&String> = ps.keys().collect();
    assert_eq!(names, ["tf-ps-0", "tf-worker-0", "tf-worker-1"]);
    let group = format!("tf-{}", created.uid().unwrap_or_default());
    for p in ps.values() {
        assert_eq!(p.annotations().get("scheduling.k8s.io/group-name"), Some(&group), "{}", p.name_any());
        assert_eq!(p.labels().get("volcano.sh/job-name").map(String::as_str), Some("tf"));
        assert_eq!(p.owner_references()[0].kind, "Job");
    }
    let done = wait_phase(&client, &ns, "tf", "Completed").await?;
    let st = done.status.unwrap_or_default();
    assert_eq!(st.succeeded, 3);
    let seen: Vec<String> = st.conditions.iter().filter_map(|c| c.status.clone()).collect();
    assert_eq!(seen, ["Pending", "Running", "Completed"], "conditions");
    assert_eq!(st.task_status_count["worker"].phase["Succeeded"], 2);
    assert!(st.running_duration.is_some());
    // Completing the job is a whole-job kill: the PodGroup goes.
    wait_for("PodGroup deleted after completion", WAIT, || async {
        let pg = Api::<basalt_runtime::crd::PodGroup>::namespaced(client.clone(), &ns).get_opt(&group).await?;
        Ok(pg.is_none().then_some(()))
    })
    .await?;
    Ok(())
}

/// `PodFailed → RestartJob` with `maxRetry: 2`: restarted, then Failed, nothing left running.
async fn restart_until_max_retry(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "ctl-retry").await?;
    let yaml =
        job_yaml("flaky", "  maxRetry: 2\n  policies: [{event: PodFailed, action: RestartJob}]\n", &[task("w", 2, 2, 1, "")]);
    create_job(&client, &ns, &yaml).await?;
    let failed = wait_phase(&client, &ns, "flaky", "Failed").await?;
    let st = failed.status.unwrap_or_default();
    assert_eq!(st.retry_count, 2);
    let seen: Vec<String> = st.conditions.iter().filter_map(|c| c.status.clone()).collect();
    assert!(seen.iter().filter(|p| *p == "Restarting").count() == 2, "two restarts: {seen:?}");
    wait_for("no pod of the failed job left pending or running", WAIT, || async {
        let left: Vec<String> = pods(&client, &ns)
            .await?
            .values()
            .filter(|p| matches!(pod_phase(p), "Pending" | "Running"))
            .map(|p| p.name_any())
            .collect();
        Ok(left.is_empty().then_some(()))
    })
    .await?;
    Ok(())
}

/// A task-level `exitCode: 3 → RestartTask` wins over the job-level `PodFailed → RestartJob`:
/// the failing task's pod is re-created, the other task's pod is untouched.
async fn exit_code_restarts_one_task(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "ctl-task").await?;
    let yaml = job_yaml(
        "mixed",
        "  maxRetry: 10\n  policies: [{event: PodFailed, action: RestartJob}]\n",
        &[task("steady", 1, 0, 0, ""), task("crash", 1, 2, 3, "    policies: [{exitCode: 3, action: RestartTask}]\n")],
    )
    .to_string();
    create_job(&client, &ns, &yaml).await?;
    wait_phase(&client, &ns, "mixed", "Running").await?;
    let before = pods(&client, &ns).await?;
    let steady_uid = before["mixed-steady-0"].uid();
    let crash_uid = before["mixed-crash-0"].uid();
    wait_for("the crash task's pod re-created", WAIT, || async {
        let now = pods(&client, &ns).await?;
        Ok(now.get("mixed-crash-0").filter(|p| p.uid() != crash_uid && p.metadata.deletion_timestamp.is_none()).map(|_| ()))
    })
    .await?;
    let after = pods(&client, &ns).await?;
    assert_eq!(after["mixed-steady-0"].uid(), steady_uid, "RestartTask left the other task's pod alone");
    let j = job(&client, &ns, "mixed").await?.unwrap_or_default();
    assert!(
        j.status.as_ref().is_some_and(|s| s.retry_count >= 1 && s.version == 0),
        "task restart, not a whole-job kill: {:?}",
        j.status
    );
    Ok(())
}

/// `AbortJob` by Command: pods deleted, Aborted; `ResumeJob`: running again, one retry.
async fn abort_and_resume(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "ctl-abort").await?;
    let yaml = job_yaml("pausable", "", &[task("w", 2, 0, 0, "")]);
    create_job(&client, &ns, &yaml).await?;
    let j = wait_phase(&client, &ns, "pausable", "Running").await?;
    command(&client, &ns, &j, "AbortJob").await?;
    wait_phase(&client, &ns, "pausable", "Aborted").await?;
    wait_for("pods deleted by AbortJob", WAIT, || async { Ok(pods(&client, &ns).await?.is_empty().then_some(())) }).await?;
    let cmds = Api::<Command>::namespaced(client.clone(), &ns).list(&ListParams::default()).await?;
    assert!(cmds.items.is_empty(), "the controller deletes the Commands it acts on");
    let j = job(&client, &ns, "pausable").await?.unwrap_or_default();
    command(&client, &ns, &j, "ResumeJob").await?;
    let resumed = wait_phase(&client, &ns, "pausable", "Running").await?;
    assert_eq!(resumed.status.as_ref().map(|s| s.retry_count), Some(1));
    let running = pods(&client, &ns).await?.values().filter(|p| p.metadata.deletion_timestamp.is_none()).count();
    assert_eq!(running, 2);
    Ok(())
}

/// `ttlSecondsAfterFinished: 2`: the Completed job is deleted.
async fn ttl_deletes_finished_jobs(client: Client) -> support::Result<()> {
    let ns = fresh_namespace(&client, "ctl-ttl").await?;
    let yaml = job_yaml("short", "  ttlSecondsAfterFinished: 2\n", &[task("w", 1, 1, 0, "")]);
    create_job(&client, &ns, &yaml).await?;
    let mut saw_completed = false;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match job(&client, &ns, "short").await? {
            Some(j) if phase(&j) == "Completed" => saw_completed = true,
            Some(_) => {}
            None => break,
        }
        assert!(tokio::time::Instant::now() < deadline, "job not deleted within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(saw_completed, "the job was Completed before it was deleted");
    Ok(())
}

/// `dependsOn`: runs to Completed; returns the namespace, whose audit log the caller checks
/// for the order (the worker's pod created only after the ps pod was marked Running).
async fn depends_on_waits(client: Client) -> support::Result<String> {
    let ns = fresh_namespace(&client, "ctl-dep").await?;
    let yaml = job_yaml(
        "dag",
        "  minAvailable: 1\n",
        &[task("ps", 1, 4, 0, ""), task("worker", 1, 1, 0, "    minAvailable: 0\n    dependsOn: {name: [ps]}\n")],
    );
    create_job(&client, &ns, &yaml).await?;
    wait_phase(&client, &ns, "dag", "Completed").await?;
    Ok(ns)
}

/// In `ns`'s audit trail, the controller's second pod create (the worker's) comes after the
/// kubelet's first status write of the ps pod (its `Running`).
fn check_depends_on_order(server: &TestApiserver, ns: &str) -> support::Result<()> {
    let audit = server.audit()?;
    let events: Vec<_> = audit.events().iter().filter(|e| e.namespace == ns && e.resource == "pods" && e.succeeded()).collect();
    let creates: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.verb == "create" && e.user == CONTROLLER_USER && e.subresource.is_empty())
        .map(|(i, _)| i)
        .collect();
    let ps_running = events
        .iter()
        .position(|e| e.verb == "patch" && e.subresource == "status" && e.name == "dag-ps-0")
        .ok_or("no status write of dag-ps-0 in the audit log")?;
    assert_eq!(creates.len(), 2, "two pods created (ps, then worker)");
    assert!(
        creates[0] < ps_running && ps_running < creates[1],
        "ps created, ps Running, then worker created: {creates:?} vs {ps_running}"
    );
    Ok(())
}

fn pod_uids(all: &BTreeMap<String, Pod>) -> BTreeMap<String, String> {
    all.iter().map(|(n, p)| (n.clone(), p.uid().unwrap_or_default())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_runs_volcano_jobs_through_their_lifecycle() -> support::Result<()> {
    let ctl_args = ["--max-requeue-num=-1".to_string()];
    let mut stack = ControllerStack::start(StackSpec {
        nodes: 4,
        cpu: "32",
        memory: "128Gi",
        schedule_period: "500ms",
        kubelet: true,
        qps: QPS,
        controller_args: &ctl_args,
    })
    .await?;
    let admin = stack.admin.clone();

    let results = tokio::join!(
        two_task_job(admin.clone()),
        restart_until_max_retry(admin.clone()),
        exit_code_restarts_one_task(admin.clone()),
        abort_and_resume(admin.clone()),
        ttl_deletes_finished_jobs(admin.clone()),
        depends_on_waits(admin.clone()),
    );
    let log = |p: &SchedulerProcess| p.log_text();
    let dep_ns = results.5.as_ref().map(String::clone).map_err(|e| e.to_string());
    for (name, r) in [
        ("two-task job", results.0),
        ("restart until maxRetry", results.1),
        ("exit code → RestartTask", results.2),
        ("AbortJob / ResumeJob", results.3),
        ("ttlSecondsAfterFinished", results.4),
        ("dependsOn", results.5.map(|_| ())),
    ] {
        if let Err(e) = r {
            panic!("{name}: {e}\ncontroller log:\n{}", log(&stack.controller));
        }
    }

    check_depends_on_order(&stack.server, &dep_ns?)?;

    // Killed mid-job and restarted: the new process neither duplicates nor loses a pod.
    let ns = fresh_namespace(&admin, "ctl-restart").await?;
    let yaml = job_yaml("long", "", &[task("a", 3, 8, 0, ""), task("b", 3, 8, 0, "")]);
    create_job(&admin, &ns, &yaml).await?;
    wait_phase(&admin, &ns, "long", "Running").await?;
    let before = pod_uids(&pods(&admin, &ns).await?);
    assert_eq!(before.len(), 6);
    stack.restart_controller("controller-2", &ctl_args)?;
    let done = wait_phase(&admin, &ns, "long", "Completed").await;
    if let Err(e) = done {
        panic!("after restart: {e}\ncontroller log:\n{}", log(&stack.controller));
    }
    assert_eq!(pod_uids(&pods(&admin, &ns).await?), before, "same six pods before and after the restart");
    stack.assert_within_role()?;
    stack.stop(60).await
}
