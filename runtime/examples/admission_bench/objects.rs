//! The bench's objects and requests: Queues, Jobs, AdmissionReviews, the webhook configuration.

use crate::measure::{timed, Stats};
use crate::support::{self, apply_manifest, deploy_dir, ensure_namespace, install_volcano_crds, TestApiserver};
use basalt_runtime::crd::{Job, Queue};
use base64::Engine;
use futures::stream::{self, StreamExt, TryStreamExt};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::{json, Value};
use std::process::Child;
use std::time::{Duration, Instant};

/// CRDs, `volcano-system` and the webhook manager's RBAC, and `queues` Open Queues `q-0…`.
pub async fn install(admin: &Client, _server: &TestApiserver, queues: usize) -> support::Result<()> {
    install_volcano_crds(admin).await?;
    apply_manifest(admin, &deploy_dir().join("base/basalt.yaml"), &["Namespace"]).await?;
    apply_manifest(admin, &deploy_dir().join("admission.yaml"), &["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]).await?;
    let api: Api<Queue> = Api::all(admin.clone());
    stream::iter(0..queues)
        .map(|i| {
            let api = api.clone();
            async move {
                let name = format!("q-{i}");
                let q: Queue = serde_json::from_value(json!({
                    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                    "metadata": {"name": name}, "spec": {"weight": 1, "reclaimable": true}
                }))?;
                api.create(&PostParams::default(), &q).await?;
                let open = json!({"status": {"state": "Open"}});
                api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&open)).await?;
                Ok::<(), support::Error>(())
            }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Job `j-i` of namespace `ns` in queue `queue` (one task of one pod).
fn job(ns: &str, i: usize, queue: &str) -> Value {
    json!({
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
        "metadata": {"name": format!("j-{i}"), "namespace": ns},
        "spec": {"queue": queue, "minAvailable": 1, "schedulerName": "volcano", "maxRetry": 3, "tasks": [{
            "name": "w", "replicas": 1, "minAvailable": 1, "maxRetry": 3,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
        }]}
    })
}

/// Creates `n` Jobs in a new namespace `ns` through the apiserver, timed.
pub async fn create_jobs(admin: &Client, ns: &str, n: usize, queues: usize, concurrency: usize) -> support::Result<Stats> {
    ensure_namespace(admin, ns).await?;
    let api: Api<Job> = Api::namespaced(admin.clone(), ns);
    let jobs: Vec<Job> =
        (0..n).map(|i| serde_json::from_value(job(ns, i, &format!("q-{}", i % queues)))).collect::<Result<_, _>>()?;
    let stats = timed(n, concurrency, |i| {
        let (api, j) = (api.clone(), jobs[i].clone());
        async move { api.create(&PostParams::default(), &j).await.map(|_| ()).map_err(|e| e.to_string()) }
    })
    .await?;
    Ok(stats)
}

/// An AdmissionReview v1 of the CREATE of `object` (a Job).
fn review(uid: usize, object: Value) -> Vec<u8> {
    let r = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": format!("bench-{uid}"),
            "kind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
            "resource": {"group": "batch.volcano.sh", "version": "v1alpha1", "resource": "jobs"},
            "name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"],
            "operation": "CREATE", "userInfo": {"username": "bench"}, "object": object, "dryRun": false
        }
    });
    serde_json::to_vec(&r).unwrap_or_default()
}

/// POSTs `body` to `/jobs/validate`: (allowed, message).
async fn validate(webhook: &Client, body: Vec<u8>) -> Result<(bool, String), String> {
    let req =
        http::Request::post("/jobs/validate").header("content-type", "application/json").body(body).map_err(|e| e.to_string())?;
    let text = webhook.request_text(req).await.map_err(|e| e.to_string())?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    let allowed = v["response"]["allowed"].as_bool().ok_or_else(|| format!("no response.allowed in {text}"))?;
    Ok((allowed, v["response"]["status"]["message"].as_str().unwrap_or_default().to_string()))
}

/// Waits until the webhook manager answers and admits a Job of the last Queue (its cache holds
/// them all), and checks that a Job of a missing Queue is refused.
///
/// Errors: the manager exited, or did not get there within 60 s.
pub async fn wait_until_cached(webhook: &Client, queues: usize, manager: &mut Child) -> support::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let last = review(0, job("probe", 0, &format!("q-{}", queues - 1)));
    loop {
        if let Some(status) = manager.try_wait()? {
            return Err(format!("the webhook manager exited ({status}); see webhook-manager.log in the server folder").into());
        }
        if let Ok((true, _)) = validate(webhook, last.clone()).await {
            break;
        }
        if Instant::now() > deadline {
            return Err("the webhook manager did not admit a Job of the last Queue within 60 s".into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (allowed, message) = validate(webhook, review(0, job("probe", 0, "no-such-queue"))).await?;
    if allowed || !message.contains("unable to find job queue") {
        return Err(format!("a Job of a missing queue: allowed {allowed}, {message:?}").into());
    }
    Ok(())
}

/// POSTs `n` reviews of Jobs spread over the Queues to `/jobs/validate`, timed; each must be
/// allowed.
pub async fn post_reviews(webhook: &Client, n: usize, queues: usize, concurrency: usize) -> support::Result<Stats> {
    let bodies: Vec<Vec<u8>> = (0..n).map(|i| review(i, job("direct", i, &format!("q-{}", i % queues)))).collect();
    let stats = timed(n, concurrency, |i| {
        let (webhook, body) = (webhook.clone(), bodies[i].clone());
        async move {
            match validate(&webhook, body).await? {
                (true, _) => Ok(()),
                (false, m) => Err(format!("refused: {m}")),
            }
        }
    })
    .await?;
    Ok(stats)
}

/// Registers `/jobs/validate` at `base` (CA `ca_pem`), then waits until the apiserver calls it
/// (a Job of a missing Queue is refused by the webhook).
pub async fn register(admin: &Client, base: &str, ca_pem: &[u8]) -> support::Result<()> {
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let c: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "volcano-admission-service-jobs-validate"},
        "webhooks": [{
            "name": "validatejob.volcano.sh", "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": format!("{base}/jobs/validate"), "caBundle": bundle},
            "failurePolicy": "Fail", "sideEffects": "NoneOnDryRun", "timeoutSeconds": 10,
            "rules": [{"apiGroups": ["batch.volcano.sh"], "apiVersions": ["v1alpha1"], "operations": ["CREATE", "UPDATE"], "resources": ["jobs"]}]
        }]
    }))?;
    Api::<ValidatingWebhookConfiguration>::all(admin.clone()).create(&PostParams::default(), &c).await?;
    ensure_namespace(admin, "probe").await?;
    let api: Api<Job> = Api::namespaced(admin.clone(), "probe");
    let deadline = Instant::now() + Duration::from_secs(30);
    for i in 0.. {
        let j: Job = serde_json::from_value(job("probe", i, "no-such-queue"))?;
        match api.create(&PostParams::default(), &j).await {
            Err(kube::Error::Api(s)) if s.message.contains("validatejob.volcano.sh") => return Ok(()),
            Err(e) => return Err(format!("probe Job: {e}").into()),
            Ok(_) if Instant::now() > deadline => return Err("the apiserver did not call the webhook within 30 s".into()),
            Ok(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    Ok(())
}
