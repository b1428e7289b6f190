//! The CronJob controller (`basalt controller --controllers=cronjob-controller`) against the real
//! test apiserver, with the ServiceAccount and ClusterRole of `deploy/controller.yaml`; the audit
//! log must show none of its requests refused. No job controller runs: the test plays it,
//! writing a Job's `status.state` when the case needs the Job finished.
//!
//! Five CronJobs on `* * * * *`, created together, watched over two minute boundaries:
//! * `allow` (successfulJobsHistoryLimit 1): a Job `allow-<Unix minutes>` at each minute with the
//!   template's labels, the scheduled-timestamp annotation and the CronJob as controller owner;
//!   once two have completed, the older is deleted, `active` is empty and `lastSuccessfulTime`
//!   is the later one's completion;
//! * `forbid` (Forbid): one Job only while it runs, and a `ForbidConcurrent` Event;
//! * `replace` (Replace): at the second minute the first Job is deleted and a second made
//!   (`ReplaceConcurrent`);
//! * `paused` (suspend): no Job;
//! * `broken` (schedule `61 * * * *`): an `UnParseableCronJobSchedule` Warning, no Job, and the
//!   controller goes on.

use crate::{e2e, support};

use basalt_runtime::crd::{CronJob, Job};
use e2e::process::SchedulerProcess;
use k8s_openapi::api::core::v1::Event;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use std::collections::BTreeMap;
use std::time::Duration;
use support::{apply_manifest, apply_scheduler_rbac, deploy_dir, fresh_namespace, install_volcano_crds, wait_for, TestApiserver};

const CONTROLLER_USER: &str = "system:serviceaccount:volcano-system:volcano-controllers";
/// Two minute boundaries and the controller's reaction.
const WAIT: Duration = Duration::from_secs(150);

fn cron_yaml(name: &str, extra: &str) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {{name: {name}}}\nspec:\n  schedule: \"* * * * *\"\n{extra}  \
         jobTemplate:\n    metadata: {{labels: {{made-by: {name}}}}}\n    spec:\n      minAvailable: 1\n      schedulerName: volcano\n      \
         tasks:\n      - name: w\n        replicas: 1\n        template: {{spec: {{containers: [{{name: c, image: busybox}}]}}}}\n"
    )
}

async fn jobs_of(client: &Client, ns: &str, cron: &str) -> support::Result<BTreeMap<String, Job>> {
    let lp = ListParams::default().labels(&format!("made-by={cron}"));
    let list = Api::<Job>::namespaced(client.clone(), ns).list(&lp).await?;
    Ok(list.items.into_iter().map(|j| (j.name_any(), j)).collect())
}

async fn events_of(client: &Client, ns: &str, name: &str, reason: &str) -> support::Result<Vec<Event>> {
    let list = Api::<Event>::namespaced(client.clone(), ns).list(&ListParams::default()).await?;
    Ok(list
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name) && e.reason.as_deref() == Some(reason))
        .collect())
}

/// Plays the job controller: Job `name` is `Completed` now.
async fn complete(client: &Client, ns: &str, name: &str) -> support::Result<String> {
    let now = jiff::Timestamp::now().to_string();
    let patch = serde_json::json!({"status": {"state": {"phase": "Completed", "lastTransitionTime": now}}});
    Api::<Job>::namespaced(client.clone(), ns).patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await?;
    Ok(now)
}

async fn cron_status(client: &Client, ns: &str, name: &str) -> support::Result<basalt_runtime::crd::CronJobStatus> {
    Ok(Api::<CronJob>::namespaced(client.clone(), ns).get(name).await?.status.unwrap_or_default())
}

async fn wait_jobs(client: &Client, ns: &str, cron: &str, n: usize) -> support::Result<BTreeMap<String, Job>> {
    wait_for(&format!("{n} Jobs of CronJob {cron}"), WAIT, || async {
        let jobs = jobs_of(client, ns, cron).await?;
        Ok((jobs.len() >= n).then_some(jobs))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cronjobs_make_jobs_each_minute_with_policies_and_history_limits() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    // The volcano-system namespace the controller's ServiceAccount lives in.
    apply_scheduler_rbac(&admin).await?;
    apply_manifest(&admin, &deploy_dir().join("controller.yaml"), &["ServiceAccount", "ClusterRole", "ClusterRoleBinding"])
        .await?;
    let mut controller = SchedulerProcess::start_command(
        "controller",
        server.dir(),
        "controller",
        &server.controllers_kubeconfig(),
        &["--leader-elect=false", "--controllers=cronjob-controller"],
    )?;
    let ns = fresh_namespace(&admin, "cron").await?;
    let crons = Api::<CronJob>::namespaced(admin.clone(), &ns);
    for (name, extra) in [
        ("allow", "  successfulJobsHistoryLimit: 1\n"),
        ("forbid", "  concurrencyPolicy: Forbid\n"),
        ("replace", "  concurrencyPolicy: Replace\n"),
        ("paused", "  suspend: true\n"),
        ("broken", ""),
    ] {
        let mut yaml = cron_yaml(name, extra);
        if name == "broken" {
            yaml = yaml.replace("\"* * * * *\"", "\"61 * * * *\"");
        }
        let c: CronJob = serde_yaml::from_str(&yaml).map_err(|e| format!("{e}\n{yaml}"))?;
        crons.create(&PostParams::default(), &c).await?;
    }

    // The first minute: one Job each for allow, forbid and replace.
    let first = wait_jobs(&admin, &ns, "allow", 1).await?;
    let (a1, job) = first.iter().next().ok_or("no Job")?;
    let cron = crons.get("allow").await?;
    let minutes: i64 = a1.strip_prefix("allow-").and_then(|m| m.parse().ok()).ok_or(format!("Job name {a1}"))?;
    let stamp = &job.annotations()["volcano.sh/cronjob-scheduled-timestamp"];
    assert_eq!(stamp.parse::<jiff::Timestamp>()?.as_second(), minutes * 60, "the name is the scheduled minute: {stamp}");
    assert!(
        job.owner_references()
            .iter()
            .any(|o| o.kind == "CronJob" && o.controller == Some(true) && Some(&o.uid) == cron.uid().as_ref()),
        "owned by the CronJob"
    );
    // The controller writes the status after the Job's create returns: wait for it.
    let status = wait_for("CronJob allow's status naming its first Job", WAIT, || async {
        let status = cron_status(&admin, &ns, "allow").await?;
        Ok((!status.active.is_empty()).then_some(status))
    })
    .await?;
    assert_eq!(status.active.iter().filter_map(|r| r.name.clone()).collect::<Vec<_>>(), std::slice::from_ref(a1));
    assert_eq!(status.last_schedule_time.map(|t| t.0.as_second()), Some(minutes * 60));
    let r1 = wait_jobs(&admin, &ns, "replace", 1).await?.into_keys().next().ok_or("no replace Job")?;
    wait_jobs(&admin, &ns, "forbid", 1).await?;
    let done1 = complete(&admin, &ns, a1).await?;

    // The second minute.
    let second = wait_jobs(&admin, &ns, "allow", 2).await?;
    let a2 = second.keys().find(|k| *k != a1).cloned().ok_or("no second Job")?;
    complete(&admin, &ns, &a2).await?;
    wait_for("the older completed allow Job deleted (successfulJobsHistoryLimit 1)", WAIT, || async {
        let jobs = jobs_of(&admin, &ns, "allow").await?;
        Ok((!jobs.contains_key(a1) && jobs.contains_key(&a2)).then_some(()))
    })
    .await?;
    let status = wait_for("allow's active list empty", WAIT, || async {
        let s = cron_status(&admin, &ns, "allow").await?;
        Ok((s.active.is_empty() && s.last_successful_time.is_some()).then_some(s))
    })
    .await?;
    assert!(status.last_successful_time.map(|t| t.0) > done1.parse().ok(), "the later completion");
    assert!(!events_of(&admin, &ns, "allow", "SuccessfulDelete").await?.is_empty());

    let replaced = wait_for("replace's first Job replaced by a second", WAIT, || async {
        let jobs = jobs_of(&admin, &ns, "replace").await?;
        Ok((!jobs.contains_key(&r1) && jobs.len() == 1).then_some(jobs))
    })
    .await?;
    assert!(replaced.keys().all(|k| *k != r1));
    assert!(!events_of(&admin, &ns, "replace", "ReplaceConcurrent").await?.is_empty());

    wait_for("ForbidConcurrent on forbid", WAIT, || async {
        Ok((!events_of(&admin, &ns, "forbid", "ForbidConcurrent").await?.is_empty()).then_some(()))
    })
    .await?;
    assert_eq!(jobs_of(&admin, &ns, "forbid").await?.len(), 1, "Forbid: no second Job while the first runs");
    assert!(jobs_of(&admin, &ns, "paused").await?.is_empty(), "suspended: no Job");
    assert!(jobs_of(&admin, &ns, "broken").await?.is_empty(), "unparseable: no Job");
    let bad = events_of(&admin, &ns, "broken", "UnParseableCronJobSchedule").await?;
    assert!(
        bad.first().and_then(|e| e.message.clone()).unwrap_or_default().contains("61 * * * *"),
        "the Warning names the schedule: {bad:?}"
    );

    let refused = server.audit()?.by_user(CONTROLLER_USER).refused();
    assert!(refused.is_empty(), "requests outside deploy/controller.yaml's ClusterRole: {refused:?}");
    let log = controller.log_text();
    assert_eq!(controller.terminate(), Some(0), "controller log:\n{log}");
    Ok(())
}
