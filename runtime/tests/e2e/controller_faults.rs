//! `basalt controller` under a 429 fault, through the fault-injecting proxy
//! (`tests/support/proxy.rs`) in front of a real test apiserver of its own (the controller
//! watches the whole cluster), with `deploy/controller.yaml`'s identity, `basalt scheduler` and
//! the test kubelet beside it: the controllers' one retry layer, the work queue, waits the
//! server's `Retry-After` before an item that failed with it is handled again
//! (docs/controller.md "Retries").

use crate::e2e::process::SchedulerProcess;
use crate::e2e::rig::{Rig, Server};
use crate::e2e::stack::{log_tail, CONTROLLER_USER};
use crate::support::{
    self, apply_manifest, deploy_dir, fresh_namespace, wait_for, Action, ApiRequest, Kubelet, Rule, TestApiserver,
};
use basalt_runtime::crd::{Job, PodGroup};
use kube::api::{ListParams, PostParams};
use kube::{Api, Client};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long the controller's writes are answered 429.
const FAULT: Duration = Duration::from_secs(5);
/// The `Retry-After` of those answers, seconds.
const RETRY_AFTER: u32 = 2;

fn controller_request(r: &ApiRequest) -> bool {
    r.user_agent.starts_with("basalt-controller/")
}

fn write(r: &ApiRequest) -> bool {
    matches!(r.verb.as_str(), "create" | "update" | "patch" | "delete")
}

/// The stated bound (docs/controller.md "Retries"): while every call of a work item fails for
/// `fault` with `Retry-After: r`, the item is attempted at most `1 + ⌊fault / r⌋` times, each
/// attempt making each of its calls once. (The queue's own 5 ms doubling backoff alone would
/// allow `1 + ⌊log2(1 + 5 s / 5 ms)⌋ = 10` in 5 s.)
fn calls_bound(fault: Duration, r: u32) -> usize {
    1 + (fault.as_secs() / u64::from(r)) as usize
}

/// A Job of one task with `replicas` pods of 100m that run until deleted, for `scheduler`.
fn job(ns: &str, name: &str, scheduler: &str, replicas: i32) -> support::Result<Job> {
    let yaml = format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  schedulerName: {scheduler}\n  tasks:\n  - name: w\n    replicas: {replicas}\n    template:\n      spec:\n        restartPolicy: Never\n        containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]\n"
    );
    Ok(serde_yaml::from_str(&yaml).map_err(|e| format!("job YAML: {e}\n{yaml}"))?)
}

async fn wait_running(admin: &Client, ns: &str, name: &str, within: Duration, log: &SchedulerProcess) -> support::Result<()> {
    let api: Api<Job> = Api::namespaced(admin.clone(), ns);
    let r = wait_for(&format!("Job {ns}/{name} Running"), within, || async {
        let j = api.get_opt(name).await?;
        Ok(j.filter(|j| j.status.as_ref().and_then(|s| s.state.phase.as_deref()) == Some("Running")).map(|_| ()))
    })
    .await;
    r.map_err(|e| format!("{e}\ncontroller log:\n{}", log_tail(&log.log_text(), 30)).into())
}

/// The controller's writes in `ns` in `[from, to)`, by `verb resource[/subresource] [name]`.
fn writes_by_call(rig: &Rig, ns: &str, from: Instant, to: Instant) -> BTreeMap<String, usize> {
    let mut by = BTreeMap::new();
    for r in rig.proxy.requests() {
        if controller_request(&r) && write(&r) && r.namespace == ns && r.at.is_some_and(|t| t >= from && t < to) {
            let res = if r.subresource.is_empty() { r.resource.clone() } else { format!("{}/{}", r.resource, r.subresource) };
            *by.entry(format!("{} {res} {}", r.verb, r.name).trim_end().to_string()).or_default() += 1;
        }
    }
    by
}

/// Every write of the controller is answered `429 Too Many Requests` with `Retry-After: 2` for
/// 5 s, while a new Job arrives: the job controller's first attempt fails at the PodGroup
/// create and the Job status update, and the work queue holds the Job's request for 2 s after
/// each failure (not its own 5 ms doubling), so each of these calls is sent at most
/// `1 + ⌊5 / 2⌋ = 3` times during the fault ([`calls_bound`]), and at least twice (the retries
/// happen). After the fault the Job reaches Running (PodGroup created, pods created, bound and
/// run) within 60 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controller_waits_out_retry_after() -> support::Result<()> {
    let mut rig = Rig::new(Server::Own(TestApiserver::start()?), "ctlfault", 2, "4").await?;
    apply_manifest(&rig.admin, &deploy_dir().join("controller.yaml"), &["ServiceAccount", "ClusterRole", "ClusterRoleBinding"])
        .await?;
    let kubelet = Kubelet::start(rig.admin.clone(), None);
    rig.start_single(&[])?;
    let kubeconfig = rig.server.dir().join("ctlfault-controller.kubeconfig");
    rig.proxy.write_kubeconfig(&rig.server.controllers_kubeconfig(), &kubeconfig)?;
    let args = ["--leader-elect=false", "--controllers=job-controller", "--kube-api-qps=200", "--kube-api-burst=200"];
    let mut controller = SchedulerProcess::start_command("controller", rig.server.dir(), "controller", &kubeconfig, &args)?;
    let scheduler = rig.scheduler_name();

    // Before the fault: a Job runs through the proxy (the controller's watches have listed and
    // the scheduler has created the default Queue).
    let jobs = |ns: &str| Api::<Job>::namespaced(rig.admin.clone(), ns);
    jobs(&rig.ns).create(&PostParams::default(), &job(&rig.ns, "before", &scheduler, 2)?).await?;
    wait_running(&rig.admin, &rig.ns, "before", Duration::from_secs(60), &controller).await?;

    let ns = fresh_namespace(&rig.admin, "ctlfault-during").await?;
    let rule = rig.proxy.add(Rule::new(
        |r: &ApiRequest| controller_request(r) && write(r),
        Action::Respond { code: 429, retry_after: Some(RETRY_AFTER) },
    ));
    let t0 = Instant::now();
    jobs(&ns).create(&PostParams::default(), &job(&ns, "during", &scheduler, 2)?).await?;
    tokio::time::sleep(FAULT).await;
    let t1 = Instant::now();
    rig.proxy.remove(rule);

    let by = writes_by_call(&rig, &ns, t0, t1);
    eprintln!("controller_waits_out_retry_after: the controller's writes during the fault: {by:?}");
    let bound = calls_bound(t1 - t0, RETRY_AFTER);
    let pg_creates = by.get("create podgroups").copied().unwrap_or(0);
    let status_writes = by.get("update jobs/status during").copied().unwrap_or(0);
    assert!(
        (2..=bound).contains(&pg_creates),
        "{pg_creates} PodGroup creates in {:?} with Retry-After {RETRY_AFTER} s (2 to {bound}): {by:?}",
        t1 - t0
    );
    assert!(status_writes <= bound, "{status_writes} Job status updates (at most {bound}): {by:?}");
    // No other call of the Job's request either (Events have their own loop, 3 calls each).
    for (call, n) in by.iter().filter(|(c, _)| !c.contains(" events")) {
        assert!(*n <= bound, "{call}: {n} calls during the fault (at most {bound}): {by:?}");
    }

    let start = Instant::now();
    wait_running(&rig.admin, &ns, "during", Duration::from_secs(60), &controller).await?;
    eprintln!(
        "recovery: controller_waits_out_retry_after: Job Running {:.1} s after the fault ended",
        start.elapsed().as_secs_f64()
    );
    let groups = Api::<PodGroup>::namespaced(rig.admin.clone(), &ns).list(&ListParams::default()).await?;
    assert_eq!(groups.items.len(), 1, "one PodGroup for the Job");
    let log = controller.log_text();
    assert!(!log.contains("retry limit reached") && !log.contains("terminating the job"), "{}", log_tail(&log, 30));

    let refused = rig.server.audit()?.by_user(CONTROLLER_USER).refused();
    assert!(refused.is_empty(), "requests outside deploy/controller.yaml's ClusterRole: {refused:?}");
    let tail = log_tail(&controller.log_text(), 30);
    assert_eq!(controller.terminate(), Some(0), "controller log:\n{tail}");
    rig.assert_running();
    let errors = kubelet.stop().await;
    assert!(errors.is_empty(), "kubelet errors: {errors:?}");
    Ok(())
}
