//! A burst of Volcano Jobs (1,000 at full size) against the real test apiserver (issue 13 "Must show"): each a
//! single task of one pod that runs 1 s (`support::Kubelet` ends it), all created at once, with
//! `basalt scheduler` and `basalt controller` running as child processes, the controller under
//! the ServiceAccount and ClusterRole of `deploy/controller.yaml`.
//!
//! Asserts: every Job reaches `Completed`; the controller created exactly one pod per Job (none
//! duplicated, none lost); and the audit log shows no request of the controller refused (403),
//! i.e. none outside its RBAC role. The wait bounds a failing run; it is not what is measured.
//! It prints the burst's time and the API requests per Job by user (docs/controller.md records
//! measured runs).
//!
//! CI runs it at a tenth, 100 Jobs; `BASALT_E2E_FULL=1` ([`e2e::scale`]) runs the full 1,000
//! Jobs: about 110 s on the shared 2-core machine at load 6-9 (~23 API writes per Job;
//! kube-apiserver is the bottleneck, at one core). `BASALT_BURST_JOBS` and
//! `BASALT_BURST_WAIT_SECS` (default 600) override the size and the bound:
//! `BASALT_BURST_JOBS=1000 cargo test --release -p basalt-runtime --test e2e controller_burst`.

use crate::{e2e, support};

use basalt_runtime::crd::Job;
use e2e::stack::{log_tail, ControllerStack, StackSpec, CONTROLLER_USER};
use futures::StreamExt;
use kube::api::{ListParams, PostParams};
use kube::{Api, Client};
use std::collections::BTreeMap;
use std::time::Duration;
use support::fresh_namespace;

/// `name` from the environment as a number, else `default`. Errors: set but not a number.
fn env_number(name: &str, default: u64) -> support::Result<u64> {
    match std::env::var(name) {
        Ok(v) => Ok(v.trim().parse().map_err(|e| format!("{name}={v:?}: not a whole number: {e}"))?),
        Err(_) => Ok(default),
    }
}

/// Job `name`: one task `w` of one pod (100m CPU, 64Mi) that runs 1 s and exits 0.
fn small_job(name: &str) -> support::Result<Job> {
    let yaml = format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n  schedulerName: volcano\n  tasks:\n  - name: w\n    replicas: 1\n    template:\n      metadata: {{annotations: {{basalt.dev/duration-seconds: \"1\", basalt.dev/exit-code: \"0\"}}}}\n      spec:\n        restartPolicy: Never\n        containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]\n"
    );
    Ok(serde_yaml::from_str(&yaml).map_err(|e| format!("job YAML: {e}\n{yaml}"))?)
}

/// Jobs of `ns` by phase (`""` for none yet).
async fn phases(client: &Client, ns: &str) -> support::Result<BTreeMap<String, usize>> {
    let mut by = BTreeMap::new();
    for j in Api::<Job>::namespaced(client.clone(), ns).list(&ListParams::default()).await?.items {
        *by.entry(j.status.and_then(|s| s.state.phase).unwrap_or_default()).or_insert(0) += 1;
    }
    Ok(by)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_jobs_completes_within_the_controllers_role() -> support::Result<()> {
    let jobs_n = env_number("BASALT_BURST_JOBS", e2e::scale::pick(100, 1_000)?)? as usize;
    let wait = Duration::from_secs(env_number("BASALT_BURST_WAIT_SECS", 600)?);
    let ctl_args: Vec<String> = ["--worker-threads=10", "--max-requeue-num=-1"].map(String::from).into();
    // 12 nodes × 110 pods: every Job's pod fits at once, so the burst measures the controller.
    let stack = ControllerStack::start(StackSpec {
        nodes: 12,
        cpu: "32",
        memory: "128Gi",
        schedule_period: "500ms",
        kubelet: true,
        qps: 500,
        controller_args: &ctl_args,
    })
    .await?;
    let (server, admin, controller) = (&stack.server, &stack.admin, &stack.controller);
    let ns = fresh_namespace(admin, "burst").await?;
    let api: Api<Job> = Api::namespaced(admin.clone(), &ns);
    let started = std::time::Instant::now();
    let jobs: Vec<Job> = (0..jobs_n).map(|i| small_job(&format!("j{i:04}"))).collect::<support::Result<_>>()?;
    let created: Vec<Result<Job, kube::Error>> = futures::stream::iter(jobs)
        .map(|j| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &j).await }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    for r in created {
        r?;
    }

    // Listed every 2 s, not every 50 ms: a list of 1,000 Jobs is itself load on the server.
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let by = phases(admin, &ns).await?;
        if by.get("Completed").copied() == Some(jobs_n) {
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            panic!(
                "{jobs_n} Jobs not Completed within {wait:?}: phases {by:?}\ncontroller log tail:\n{}",
                log_tail(&controller.log_text(), 60)
            );
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }

    let took = started.elapsed();

    let all = server.audit()?;
    let mut per_user: BTreeMap<&str, usize> = BTreeMap::new();
    for e in all.events().iter().filter(|e| e.namespace == ns || e.resource == "queues") {
        if !matches!(e.verb.as_str(), "get" | "list" | "watch") {
            *per_user.entry(e.user.rsplit(':').next().unwrap_or_default()).or_insert(0) += 1;
        }
    }
    let per_job: Vec<String> = per_user.iter().map(|(u, n)| format!("{u} {:.1}", *n as f64 / jobs_n as f64)).collect();
    eprintln!(
        "burst: {jobs_n} Jobs Completed {:.1} s after the first create; writes per Job: {}",
        took.as_secs_f64(),
        per_job.join(", ")
    );
    stack.assert_within_role()?;
    let audit = all.by_user(CONTROLLER_USER);
    let mut creates: BTreeMap<String, usize> = BTreeMap::new();
    for e in audit
        .events()
        .iter()
        .filter(|e| e.verb == "create" && e.resource == "pods" && e.subresource.is_empty() && e.namespace == ns && e.succeeded())
    {
        *creates.entry(e.name.clone()).or_insert(0) += 1;
    }
    assert_eq!(creates.len(), jobs_n, "one pod created per Job");
    let twice: Vec<&String> = creates.iter().filter(|(_, n)| **n > 1).map(|(p, _)| p).collect();
    assert!(twice.is_empty(), "pods created more than once: {twice:?}");

    stack.stop(60).await
}
