//! The Events `basalt controller` records (issue 25, item 3), against the real test apiserver.
//!
//! * The shared recorder (`plumbing::events`), on the shared server in a namespace of its own: the
//!   same event twice is one Event with `count` 2 (a patch, not a second Event); an Event deleted
//!   meanwhile is created again with the count carried on.
//! * The controller, on a server of its own (it watches every namespace), with the ServiceAccount
//!   and ClusterRole of `deploy/controller.yaml` and no scheduler: a Job whose task name is not a
//!   DNS-1123 label (`Worker_1`) gets a `Warning` `FailedCreate` Event carrying the API server's
//!   refusal, is not retried in a loop, and a repeat (the Job changed, the pods refused again)
//!   bumps that Event's count; duplicate task names, `minAvailable` above the replicas and a queue
//!   that does not exist each get a `Warning` `FailedValidation` Event with Volcano's webhook
//!   message and no PodGroup; a Queue added re-validates the held Job (count 2 on the same Event),
//!   and once its queue exists the Job goes on (its PodGroup is created). A Job whose pods are
//!   refused in a way a retry might mend (403 from a ResourceQuota) is retried up to
//!   `--max-requeue-num`, then gets Volcano's `ExecuteAction` "Job failed on action SyncJob for
//!   retry limit reached" and is terminated. The controller's log says it at the default
//!   verbosity; the audit log shows none of its requests refused by RBAC.

use crate::{e2e, support};

use basalt_runtime::crd::{Job, PodGroup};
use basalt_runtime::plumbing::events::{EventRecorder, Involved, WARNING};
use e2e::process::SchedulerProcess;
use e2e::stack::CONTROLLER_USER;
use k8s_openapi::api::core::v1::{Event, ResourceQuota};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use std::time::Duration;
use support::{apply_manifest, create_queue, deploy_dir, fresh_namespace, install_volcano_crds, queue, wait_for, TestApiserver};

const WAIT: Duration = Duration::from_secs(60);

/// The Events on object `name` (any kind) of `reason` in `ns`.
async fn events_of(client: &Client, ns: &str, kind: &str, name: &str, reason: &str) -> support::Result<Vec<Event>> {
    Ok(e2e::events(client, ns)
        .await?
        .into_iter()
        .filter(|e| {
            e.involved_object.kind.as_deref() == Some(kind)
                && e.involved_object.name.as_deref() == Some(name)
                && e.reason.as_deref() == Some(reason)
        })
        .collect())
}

/// Waits for exactly one Event of `reason` on Job `name` whose count is at least `count`.
async fn one_event(client: &Client, ns: &str, name: &str, reason: &str, count: i32) -> support::Result<Event> {
    wait_for(&format!("a {reason} Event on Job {ns}/{name} with count ≥ {count}"), WAIT, || async {
        let evs = events_of(client, ns, "Job", name, reason).await?;
        assert!(evs.len() <= 1, "repeats of one event are one Event: {evs:?}");
        Ok(evs.into_iter().next().filter(|e| e.count.unwrap_or(0) >= count))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recorder_bumps_the_count_of_a_repeated_event() -> support::Result<()> {
    let server = TestApiserver::shared()?;
    let admin = server.admin_client().await?;
    let ns = fresh_namespace(&admin, "events-rec").await?;
    let rec = EventRecorder::new(admin.clone(), "basalt-test", None, Duration::from_secs(10), 3);
    let inv = Involved { kind: "Pod", api_version: "v1", namespace: ns.clone(), name: "p".into(), uid: "u-1".into() };
    for _ in 0..2 {
        rec.record(&inv, WARNING, "FailedCreate", "boom").await.outcome?;
    }
    let evs = events_of(&admin, &ns, "Pod", "p", "FailedCreate").await?;
    assert_eq!(evs.len(), 1, "{evs:?}");
    let ev = &evs[0];
    assert_eq!(ev.count, Some(2));
    assert_eq!(ev.source.as_ref().and_then(|s| s.component.as_deref()), Some("basalt-test"));
    assert!(ev.last_timestamp >= ev.first_timestamp, "{ev:?}");
    let r = rec.record(&inv, WARNING, "FailedCreate", "other message").await;
    assert_eq!((r.calls, r.outcome.is_ok()), (1, true), "another message is a create");
    assert_eq!(events_of(&admin, &ns, "Pod", "p", "FailedCreate").await?.len(), 2);

    // The Event deleted (its TTL expired): the patch finds nothing and it is created again.
    let name = ev.metadata.name.clone().unwrap_or_default();
    Api::<Event>::namespaced(admin.clone(), &ns).delete(&name, &DeleteParams::default()).await?;
    let r = rec.record(&inv, WARNING, "FailedCreate", "boom").await;
    assert!(r.outcome.is_ok(), "{r:?}");
    assert_eq!(r.calls, 2, "a patch (404), then a create");
    let again: Vec<Event> = events_of(&admin, &ns, "Pod", "p", "FailedCreate")
        .await?
        .into_iter()
        .filter(|e| e.message.as_deref() == Some("boom"))
        .collect();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].count, Some(3), "the count carries on");
    assert_ne!(again[0].metadata.name.as_deref(), Some(name.as_str()), "under a new name");
    Ok(())
}

fn job_yaml(name: &str, spec_head: &str, tasks: &[(&str, i32)]) -> String {
    let mut t = String::new();
    for (task, replicas) in tasks {
        t += &format!(
            "  - name: {task}\n    replicas: {replicas}\n    template:\n      spec:\n        restartPolicy: Never\n        containers: [{{name: c, image: busybox}}]\n"
        );
    }
    format!("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n  schedulerName: volcano\n{spec_head}  tasks:\n{t}")
}

async fn create_job(client: &Client, ns: &str, yaml: &str) -> support::Result<Job> {
    let job: Job = serde_yaml::from_str(yaml).map_err(|e| format!("job YAML: {e}\n{yaml}"))?;
    Ok(Api::<Job>::namespaced(client.clone(), ns).create(&PostParams::default(), &job).await?)
}

/// Sets the phase of Job `job`'s PodGroup in `ns` to `Inqueue`, as a scheduler would (the
/// controller creates pods only then); the tests that use it run no scheduler.
async fn admit(client: &Client, ns: &str, job: &str) -> support::Result<()> {
    let pgs = Api::<PodGroup>::namespaced(client.clone(), ns);
    let prefix = format!("{job}-");
    let name = wait_for(&format!("Job {ns}/{job}'s PodGroup"), WAIT, || async {
        let list = pgs.list(&ListParams::default()).await?;
        Ok(list.items.iter().filter_map(|g| g.metadata.name.clone()).find(|n| n.starts_with(&prefix)))
    })
    .await?;
    pgs.patch(&name, &PatchParams::default(), &Patch::Merge(&serde_json::json!({"status": {"phase": "Inqueue"}}))).await?;
    Ok(())
}

async fn pod_groups(client: &Client, ns: &str) -> support::Result<usize> {
    Ok(Api::<PodGroup>::namespaced(client.clone(), ns).list(&ListParams::default()).await?.items.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_records_why_a_job_cannot_start() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_manifest(&admin, &deploy_dir().join("base/basalt.yaml"), &["Namespace"]).await?;
    apply_manifest(&admin, &deploy_dir().join("controller.yaml"), &["ServiceAccount", "ClusterRole", "ClusterRoleBinding"])
        .await?;
    // No scheduler here: it would create `default` at its start.
    create_queue(&admin, &queue("default", 1)).await?;
    let mut controller = SchedulerProcess::start_command(
        "controller",
        server.dir(),
        "controller",
        &server.controllers_kubeconfig(),
        &["--leader-elect=false", "--controllers=job-controller", "--max-requeue-num=3"],
    )?;
    let log = |c: &SchedulerProcess| c.log_text();
    let ns = fresh_namespace(&admin, "events").await?;
    create_job(&admin, &ns, &job_yaml("bad-name", "", &[("Worker_1", 1)])).await?;
    create_job(&admin, &ns, &job_yaml("dup", "", &[("w", 1), ("w", 1)])).await?;
    create_job(&admin, &ns, &job_yaml("too-few", "  minAvailable: 3\n", &[("w", 2)])).await?;
    create_job(&admin, &ns, &job_yaml("lost", "  queue: nowhere\n", &[("w", 1)])).await?;

    // Pods are created only once the PodGroup leaves Pending; with no scheduler here, the test
    // admits bad-name's PodGroup itself (Volcano's PodGroup has no status subresource).
    admit(&admin, &ns, "bad-name").await?;

    // The API server's refusal, as Volcano records it.
    let ev = one_event(&admin, &ns, "bad-name", "FailedCreate", 1)
        .await
        .map_err(|e| format!("{e}\ncontroller log:\n{}", log(&controller)))?;
    let msg = ev.message.clone().unwrap_or_default();
    assert_eq!(ev.type_.as_deref(), Some("Warning"));
    assert!(msg.starts_with("Error creating pods: [failed to create pod bad-name-Worker_1-0"), "{msg}");
    assert!(msg.contains("Invalid value"), "the server's own words: {msg}");
    assert!(!msg.contains("Status {"), "the server's message, not kube's debug dump of its Status: {msg}");
    assert_eq!(ev.source.as_ref().and_then(|s| s.component.as_deref()), Some("vc-controller-manager"));
    // Not retried in a loop: a few attempts (the Job's create, its status write), then quiet.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let attempts = |server: &TestApiserver| -> support::Result<usize> {
        Ok(server
            .audit()?
            .by_user(CONTROLLER_USER)
            .events()
            .iter()
            .filter(|e| e.verb == "create" && e.resource == "pods" && e.namespace == ns)
            .count())
    };
    let first = attempts(&server)?;
    assert!((1..=4).contains(&first), "{first} pod creates for bad-name\n{}", log(&controller));
    let count = one_event(&admin, &ns, "bad-name", "FailedCreate", 1).await?.count.unwrap_or(0);
    // A repeat: the Job changes, the pod is refused again; the same Event counts it.
    Api::<Job>::namespaced(admin.clone(), &ns)
        .patch("bad-name", &PatchParams::default(), &Patch::Merge(&serde_json::json!({"spec": {"maxRetry": 5}})))
        .await?;
    let bumped = one_event(&admin, &ns, "bad-name", "FailedCreate", count + 1).await?;
    assert_eq!(bumped.metadata.name, ev.metadata.name, "the same Event, patched");
    assert!(bumped.last_timestamp >= ev.last_timestamp);

    // The webhook's checks, each with Volcano's message.
    for (job, text) in [
        ("dup", "duplicated task name w"),
        ("too-few", "job 'minAvailable' should not be greater than total replicas in tasks"),
        ("lost", "unable to find job queue: queues.scheduling.volcano.sh \"nowhere\" not found"),
    ] {
        let ev = one_event(&admin, &ns, job, "FailedValidation", 1).await?;
        let msg = ev.message.unwrap_or_default();
        assert_eq!(ev.type_.as_deref(), Some("Warning"), "{job}");
        assert!(msg.contains(text), "{job}: {msg}");
        assert!(log(&controller).contains(text), "logged at the default verbosity: {text}\n{}", log(&controller));
    }
    assert_eq!(pod_groups(&admin, &ns).await?, 1, "only bad-name got a PodGroup");

    // A Queue added: the held Job is checked again (the same Event, count 2)…
    create_queue(&admin, &queue("other", 1)).await?;
    one_event(&admin, &ns, "lost", "FailedValidation", 2).await?;
    // …and once its queue exists, it goes on.
    create_queue(&admin, &queue("nowhere", 1)).await?;
    wait_for("Job lost's PodGroup", WAIT, || async {
        let pgs = Api::<PodGroup>::namespaced(admin.clone(), &ns).list(&ListParams::default()).await?;
        Ok(pgs.items.iter().any(|g| g.metadata.name.as_deref().is_some_and(|n| n.starts_with("lost-"))).then_some(()))
    })
    .await?;

    // Pods refused by a ResourceQuota (pods: 0, so every pod create is Forbidden: exceeded
    // quota): retried up to --max-requeue-num=3, then Volcano's retry-limit event, and the Job
    // is terminated.
    let quota_ns = fresh_namespace(&admin, "events-quota").await?;
    let rq: ResourceQuota =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "no-pods"}, "spec": {"hard": {"pods": "0"}}}))?;
    let quotas = Api::<ResourceQuota>::namespaced(admin.clone(), &quota_ns);
    quotas.create(&PostParams::default(), &rq).await?;
    // The usage the quota controller would compute (a quota without status.hard admits all).
    let usage = serde_json::json!({"status": {"hard": {"pods": "0"}, "used": {"pods": "0"}}});
    quotas.patch_status("no-pods", &PatchParams::default(), &Patch::Merge(&usage)).await?;
    create_job(&admin, &quota_ns, &job_yaml("quota", "", &[("w", 1)])).await?;
    admit(&admin, &quota_ns, "quota").await?;
    let limit = "Job failed on action SyncJob for retry limit reached";
    let ev = wait_for("the retry-limit ExecuteAction Event on Job quota", WAIT, || async {
        let evs = events_of(&admin, &quota_ns, "Job", "quota", "ExecuteAction").await?;
        Ok(evs.into_iter().find(|e| e.message.as_deref() == Some(limit)))
    })
    .await
    .map_err(|e| format!("{e}\ncontroller log:\n{}", log(&controller)))?;
    assert_eq!(ev.type_.as_deref(), Some("Normal"), "Volcano's recordJobEvent: {ev:?}");
    let created = one_event(&admin, &quota_ns, "quota", "FailedCreate", 1).await?;
    assert!(created.message.as_deref().unwrap_or_default().contains("forbidden"), "{created:?}");
    let creates = |server: &TestApiserver| -> support::Result<usize> {
        Ok(server
            .audit()?
            .by_user(CONTROLLER_USER)
            .events()
            .iter()
            .filter(|e| e.verb == "create" && e.resource == "pods" && e.namespace == quota_ns)
            .count())
    };
    wait_for("Job quota terminated", WAIT, || async {
        let j = Api::<Job>::namespaced(admin.clone(), &quota_ns).get("quota").await?;
        let phase = j.status.and_then(|s| s.state.phase).unwrap_or_default();
        Ok(matches!(phase.as_str(), "Terminating" | "Terminated").then_some(()))
    })
    .await
    .map_err(|e| format!("{e}\ncontroller log:\n{}", log(&controller)))?;
    let tried = creates(&server)?;
    assert!(tried >= 4, "the first attempt and 3 retries: {tried} pod creates");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(creates(&server)?, tried, "terminated: no more attempts");
    assert!(log(&controller).contains("retried 3 times"), "logged at the default verbosity:\n{}", log(&controller));

    let refused: Vec<String> = server
        .audit()?
        .by_user(CONTROLLER_USER)
        .events()
        .iter()
        .filter(|e| e.code == 403 && !(e.resource == "pods" && e.namespace == quota_ns))
        .map(|e| format!("{} {}", e.verb, e.request_uri))
        .collect();
    assert!(refused.is_empty(), "requests outside deploy/controller.yaml's ClusterRole: {refused:?}");
    assert_eq!(controller.terminate(), Some(0), "controller log:\n{}", log(&controller));
    Ok(())
}
