//! Carrying out one request against the API server (Volcano's `processNextReq`, `killJob`,
//! `syncJob`; volcano-behaviour.md §5.1): policies give the action, the state machine gives the
//! step, this module deletes and creates pods and the PodGroup and writes the Job's status, then
//! stores what it wrote in the cache so the next request sees it.

use super::build;
use super::cache::{key, Cache};
use super::keys;
use super::metrics::ControllerMetrics;
use super::plan::{self, PodView};
use super::plugins;
use super::queue::WorkQueue;
use super::reconcile::{self, Begin};
use super::request::Action;
use super::request::{Event, Request};
use super::retry::Failure;
use super::state::Op;
use super::validate;
use super::volumes;
use crate::crd::{Job, JobStatus, PodGroup};
use crate::plumbing::events::{EventSink, Involved, NORMAL, WARNING};
use crate::plumbing::limiter::RateLimiter;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::Client;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::AbortHandle;

/// Pods created or deleted at once by one request.
const API_CONCURRENCY: usize = 16;

/// Volcano's Job event reasons (`pkg/controllers/job/constant.go`, `batch/v1alpha1` `JobEvent`).
pub const FAILED_CREATE: &str = "FailedCreate";
/// See [`FAILED_CREATE`].
pub const FAILED_DELETE: &str = "FailedDelete";
/// See [`FAILED_CREATE`].
pub const EXECUTE_ACTION: &str = "ExecuteAction";
/// See [`FAILED_CREATE`].
pub const PLUGIN_ERROR: &str = "PluginError";
/// See [`FAILED_CREATE`].
pub const POD_GROUP_ERROR: &str = "PodGroupError";
/// See [`FAILED_CREATE`].
pub const POD_GROUP_PENDING: &str = "PodGroupPending";

/// A pod the server did not create: the message, and whether the server refused the pod
/// itself (422 Invalid), which no retry changes.
struct CreateError {
    message: String,
    /// The server's `Retry-After` of the refusal.
    retry_after: Option<Duration>,
    invalid: bool,
    /// 409: the pod exists (the cache has not seen it yet); Volcano skips it without an event.
    exists: bool,
}

/// What the workers share.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// The cache the watches feed.
    pub cache: Arc<Cache>,
    /// Client-side rate limit of every API call (`--kube-api-qps`, `--kube-api-burst`).
    pub limiter: Arc<RateLimiter>,
    /// Metrics.
    pub metrics: Arc<ControllerMetrics>,
    /// One queue per worker.
    pub queues: Vec<WorkQueue>,
    /// `--max-requeue-num` (−1: unlimited).
    pub max_requeue: i32,
    /// Delayed policy actions by pod UID: (event that scheduled it, its task).
    pub delayed: Mutex<HashMap<String, Vec<(Event, AbortHandle)>>>,
    /// The Job Events (Volcano's recorder, component `vc-controller-manager`).
    pub events: EventSink,
    /// The Queues' names, once the Queue watch has listed (`None` before): [`validate`] refuses
    /// a Job naming another.
    pub known_queues: Mutex<Option<BTreeSet<String>>>,
    /// Jobs held by a failed [`validate`], by `ns/name`: queued again when a Queue is added.
    pub held: Mutex<BTreeSet<String>>,
}

/// The object reference of `job` in its Events.
pub fn job_involved(job: &Job) -> Involved {
    Involved {
        kind: "Job",
        api_version: "batch.volcano.sh/v1alpha1",
        namespace: job.metadata.namespace.clone().unwrap_or_default(),
        name: job.metadata.name.clone().unwrap_or_default(),
        uid: job.metadata.uid.clone().unwrap_or_default(),
    }
}

impl Context {
    /// Records an event on `job`.
    pub fn job_event(&self, job: &Job, type_: &'static str, reason: &str, message: &str) {
        self.events.event(job_involved(job), type_, reason, message);
    }

    /// Records Volcano's `ExecuteAction` event on the Job `ns/name` of the cache (Volcano's
    /// `recordJobEvent`: nothing when the Job is not cached).
    pub fn job_event_by_key(&self, ns: &str, name: &str, reason: &str, message: &str) {
        if let Some(job) = self.cache.get(&key(ns, name)).and_then(|e| e.job) {
            self.job_event(&job, NORMAL, reason, message);
        }
    }

    /// Queues `r` on its job's worker.
    pub fn enqueue(&self, r: Request) {
        let w = super::queue::worker_of(&r.key(), self.queues.len());
        self.queues[w].add(r);
    }
}

/// An API error or bad input met while processing a request; the request is retried, no
/// sooner than the server's `Retry-After` when it named one.
pub type ExecError = Failure;

/// The server's own message of an API error (`Pod "x" is invalid: metadata.name: …`), else the
/// error as text.
fn server_words(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if !s.message.is_empty() => s.message.clone(),
        e => e.to_string(),
    }
}

/// The failures' messages, space-separated (Volcano's `Error creating pods: [...]`).
fn messages(failures: &[Failure]) -> String {
    failures.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join(" ")
}

fn is_status(e: &kube::Error, code: u16) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == code)
}

/// Formats `d` as a Go `time.Duration` string (`1h2m3s`, `3.5s`, `0s`).
pub fn go_duration(d: Duration) -> String {
    let ms = d.as_millis();
    let (h, m, s, frac) = (ms / 3_600_000, (ms / 60_000) % 60, (ms / 1000) % 60, ms % 1000);
    let secs = if frac == 0 { format!("{s}s") } else { format!("{s}.{}s", format!("{frac:03}").trim_end_matches('0')) };
    match (h, m) {
        (0, 0) => secs,
        (0, m) => format!("{m}m{secs}"),
        (h, m) => format!("{h}h{m}m{secs}"),
    }
}

/// Cancels delayed actions that `r` makes moot (Volcano): a pod's later non-pending event
/// cancels its `PodPending` delay; `PodRunning` cancels its `PodFailed`/`PodEvicted` delays.
fn cancel_delays(ctx: &Context, r: &Request) {
    let Some(uid) = r.pod_uid.as_deref() else { return };
    let mut d = ctx.delayed.lock().unwrap_or_else(|p| p.into_inner());
    let Some(list) = d.get_mut(uid) else { return };
    list.retain(|(ev, h)| {
        let cancel = reconcile::cancels(*ev, r.event);
        if cancel {
            h.abort();
        }
        !cancel
    });
    if list.is_empty() {
        d.remove(uid);
    }
}

/// Processes one request to the end: `Ok` when done (or nothing to do), `Err` to retry.
pub async fn process(ctx: &Context, req: &Request) -> Result<(), ExecError> {
    let Some(entry) = ctx.cache.get(&req.key()) else { return Ok(()) };
    let Some(mut job) = entry.job else { return Ok(()) };
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    cancel_delays(ctx, req);
    let mut views: BTreeMap<String, PodView> =
        entry.pods.values().map(|p| (p.metadata.name.clone().unwrap_or_default(), PodView::of(p))).collect();
    let mut work = match reconcile::begin(&job, req, &views).map_err(|e| Failure::from(e.to_string()))? {
        Begin::Delay { action, delay } => {
            ctx.job_event(
                &job,
                NORMAL,
                EXECUTE_ACTION,
                &format!("Execute action {} after {}", action.as_str(), go_duration(delay)),
            );
            let mut later = req.clone();
            later.action = Some(action);
            let q = ctx.queues[super::queue::worker_of(&req.key(), ctx.queues.len())].clone();
            let h = tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                q.add(later);
            })
            .abort_handle();
            if let Some(uid) = req.pod_uid.clone() {
                ctx.delayed.lock().unwrap_or_else(|p| p.into_inner()).entry(uid).or_default().push((req.event, h));
            }
            return Ok(());
        }
        Begin::Run(work) => *work,
    };
    ctx.metrics.record_request(work.action);
    let jkey = req.key();
    // Not initiated yet (Volcano's `isInitiated` is false): phase unset or Pending.
    let initiating = matches!(work.old_status.state.phase.as_deref().unwrap_or(""), "" | "Pending");
    let uncreated = entry.pod_group.is_none() && entry.pods.is_empty();
    if matches!(work.step.op, Op::Sync) && uncreated && initiating {
        let problems = {
            let queues = super::retry::lock(&ctx.known_queues);
            validate::validate(&job, queues.as_ref())
        };
        if !problems.is_empty() {
            let msg = validate::message(&problems);
            let first = super::retry::lock(&ctx.held).insert(jkey.clone());
            if first {
                tracing::warn!(job = %jkey, "Job {jkey}: {msg}");
            }
            ctx.job_event(&job, WARNING, validate::FAILED_VALIDATION, &msg);
            return Ok(());
        }
        super::retry::lock(&ctx.held).remove(&jkey);
    }
    if work.action != Action::SyncJob {
        ctx.job_event(&job, NORMAL, EXECUTE_ACTION, &format!("Start to execute action {} ", work.action.as_str()));
    }
    tracing::debug!(job = %req.key(), event = req.event.as_str(), action = %work.action, phase = %work.phase, op = ?work.step.op, "request");
    let mut errors = Vec::new();
    // Refusals that no retry can change (422: the pod is invalid): reported, not retried.
    let mut refused = Vec::new();
    match &work.step.op {
        Op::Kill { .. } => {
            let mut failed = Vec::new();
            for (name, r) in delete_pods(ctx, &job, &entry.pods, &work.kill).await {
                match r {
                    Ok(()) => {
                        if let Some(v) = views.get_mut(&name) {
                            v.deleting = true;
                        }
                    }
                    Err(e) => failed.push(e),
                }
            }
            if !failed.is_empty() {
                ctx.job_event(&job, WARNING, FAILED_DELETE, &format!("Error deleting pods: [{}]", messages(&failed)));
                errors.extend(failed);
            }
            if work.delete_pod_group {
                if let Err(e) = delete_pod_group(ctx, &job).await {
                    errors.push(e);
                }
                errors.extend(plugins::apply::on_job_delete(ctx, &job, &mut work.status).await);
            }
        }
        Op::Sync => {
            let mut pg_phase = entry.pod_group.as_ref().and_then(|pg| pg.status.as_ref()).and_then(|s| s.phase.clone());
            // Job plugins: OnJobAdd until initiated (a failure holds back the PodGroup and pods,
            // as Volcano's initiateJob), then OnJobUpdate on job-level requests.
            let plugin_errors = if initiating {
                plugins::apply::on_job_add(ctx, &job, &mut work.status).await
            } else if req.pod_name.is_none() {
                plugins::apply::on_job_update(ctx, &job).await
            } else {
                Vec::new()
            };
            let plugins_ok = plugin_errors.is_empty();
            if let Some(e) = plugin_errors.first() {
                ctx.job_event(&job, WARNING, PLUGIN_ERROR, &format!("Execute plugin when job add failed, err: {e}"));
            }
            errors.extend(plugin_errors);
            let mut plugins_ok = plugins_ok;
            // The job's claims, after the plugins and before the PodGroup (Volcano's
            // createJobIOIfNotExist); the pods are built from the Job with the claim names.
            if plugins_ok && initiating {
                match volumes::ensure(ctx, &job, &mut work.status).await {
                    Ok(Some(updated)) => {
                        ctx.cache.store_job(updated.clone());
                        job = updated;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        ctx.job_event(&job, WARNING, volumes::PVC_ERROR, &format!("Failed to create PVC, err: {e}"));
                        errors.push(e);
                        plugins_ok = false;
                    }
                }
            }
            if !plugins_ok {
                pg_phase = None;
            }
            if plugins_ok && work.creates_pod_group(entry.pod_group.is_some()) {
                match create_pod_group(ctx, &job).await {
                    Ok(Some(pg)) => {
                        pg_phase = pg.status.as_ref().and_then(|s| s.phase.clone());
                        ctx.cache.store_pod_group(pg);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        ctx.job_event(&job, WARNING, POD_GROUP_ERROR, &format!("Failed to create PodGroup, err: {e}"));
                        errors.push(e);
                    }
                }
            }
            // An existing PodGroup follows the Job's spec (Volcano's createOrUpdatePodGroup on
            // job-level syncs): minMember, minResources, minTaskMember, subGroupPolicy.
            if let (true, None, Some(pg)) = (plugins_ok, req.pod_name.as_ref(), entry.pod_group.as_ref()) {
                match build::pod_group_patch(&job, pg) {
                    Ok(Some(patch)) => {
                        if let Err(e) = patch_pod_group(ctx, &job, pg, patch).await {
                            ctx.job_event(&job, WARNING, POD_GROUP_ERROR, &format!("Failed to update PodGroup, err: {e}"));
                            errors.push(e);
                        }
                    }
                    Ok(None) => {}
                    Err(e) => errors.push(e.to_string().into()),
                }
            }
            if let Some(pg) = &entry.pod_group {
                if let Some(msg) = pod_group_pending(&job, pg) {
                    ctx.job_event(&job, WARNING, POD_GROUP_PENDING, &msg);
                }
            }
            let sync = plan::plan_sync(&job, &work.facts, &views, pg_phase.as_deref());
            let mut built = Vec::new();
            let job_plugins = plugins::of_job(&job);
            for (ti, i) in &sync.create {
                match build::pod(&job, *ti, *i) {
                    Ok(mut p) => {
                        plugins::on_pod_create(&job_plugins, &mut p, &job);
                        built.push(p);
                    }
                    Err(e) => errors.push(e.to_string().into()),
                }
            }
            let (mut failed, mut waiting) = (Vec::new(), Vec::new());
            for r in create_pods(ctx, built).await {
                match r {
                    Ok(p) => {
                        let v = PodView::of(&p);
                        ctx.cache.store_pod(p);
                        views.insert(v.name.clone(), v);
                    }
                    Err(CreateError { message, exists: true, .. }) => waiting.push(Failure::from(message)),
                    Err(CreateError { message, invalid, retry_after, .. }) => {
                        if invalid {
                            refused.push(message.clone());
                        }
                        failed.push(Failure { message, retry_after });
                    }
                }
            }
            if !failed.is_empty() {
                ctx.job_event(&job, WARNING, FAILED_CREATE, &format!("Error creating pods: [{}]", messages(&failed)));
                if refused.len() < failed.len() {
                    errors.extend(failed);
                }
            }
            errors.extend(waiting);
            let mut failed = Vec::new();
            for (name, r) in delete_pods(ctx, &job, &entry.pods, &sync.delete).await {
                match r {
                    Ok(()) => {
                        if let Some(v) = views.get_mut(&name) {
                            v.deleting = true;
                        }
                    }
                    Err(e) => failed.push(e),
                }
            }
            if !failed.is_empty() {
                ctx.job_event(&job, WARNING, FAILED_DELETE, &format!("Error deleting pods: [{}]", messages(&failed)));
                errors.extend(failed);
            }
        }
    }
    let (entered, changed) = work.finish(&job, views.values(), Timestamp::now());
    if let Some(p) = entered {
        ctx.metrics.record_phase(p);
    }
    if work.old_status.state.phase != work.status.state.phase {
        tracing::info!(
            job = %req.key(),
            from = work.old_status.state.phase.as_deref().unwrap_or(""),
            to = work.status.state.phase.as_deref().unwrap_or(""),
            retry = work.status.retry_count,
            version = work.status.version,
            "job phase"
        );
    }
    if changed {
        if let Err(e) = write_status(ctx, &job, work.status).await {
            // The attempt's other failures may have named a longer Retry-After.
            return Err(Failure::first_of(std::iter::once(e).chain(errors)).unwrap_or_default());
        }
    }
    if let Some(e) = Failure::first_of(errors) {
        return Err(e);
    }
    if let Some(e) = refused.first() {
        // Retrying cannot help: the server refuses the pod as built from the Job's spec.
        tracing::warn!(job = %jkey, "{e}; the API server refuses the pod as the Job builds it: not retried until the Job changes");
    }
    Ok(())
}

/// Volcano's `PodGroupPending` warning (`recordPodGroupEvent`): the PodGroup's latest `True`
/// condition by `lastTransitionTime`, when it is not `Scheduled`, as "PodGroup <ns>:<job>
/// <type lowercased>, reason: <message>".
pub fn pod_group_pending(job: &Job, pg: &PodGroup) -> Option<String> {
    let conds = pg.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    let mut latest: Option<&crate::crd::PodGroupCondition> = None;
    for c in conds.iter().filter(|c| c.status.as_deref() == Some("True")) {
        // RFC 3339 times in UTC compare as strings.
        if latest.is_none_or(|l| c.last_transition_time > l.last_transition_time) {
            latest = Some(c);
        }
    }
    let c = latest.filter(|c| c.type_.as_deref() != Some("Scheduled"))?;
    Some(format!(
        "PodGroup {}:{} {}, reason: {}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default(),
        c.type_.as_deref().unwrap_or_default().to_lowercase(),
        c.message.as_deref().unwrap_or_default()
    ))
}

async fn write_status(ctx: &Context, job: &Job, status: JobStatus) -> Result<(), ExecError> {
    let (ns, name) = (job.metadata.namespace.clone().unwrap_or_default(), job.metadata.name.clone().unwrap_or_default());
    let api: Api<Job> = Api::namespaced(ctx.client.clone(), &ns);
    let mut updated = job.clone();
    updated.status = Some(status);
    ctx.limiter.acquire().await;
    ctx.metrics.record_api("update_job_status");
    match api.replace_status(&name, &PostParams::default(), &updated).await {
        Ok(j) => {
            ctx.cache.store_job(j);
            Ok(())
        }
        Err(e) => Err(Failure::api(format_args!("Job {ns}/{name}: updating status"), &e)),
    }
}

async fn create_pod_group(ctx: &Context, job: &Job) -> Result<Option<PodGroup>, ExecError> {
    let pg = build::pod_group(job).map_err(|e| Failure::from(e.to_string()))?;
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let api: Api<PodGroup> = Api::namespaced(ctx.client.clone(), &ns);
    ctx.limiter.acquire().await;
    ctx.metrics.record_api("create_podgroup");
    match api.create(&PostParams::default(), &pg).await {
        Ok(pg) => Ok(Some(pg)),
        Err(e) if is_status(&e, 409) => Ok(None),
        Err(e) => Err(Failure::api(
            format_args!("Job {}: creating PodGroup {}", build::job_key(job), pg.metadata.name.unwrap_or_default()),
            &e,
        )),
    }
}

async fn patch_pod_group(ctx: &Context, job: &Job, pg: &PodGroup, patch: serde_json::Value) -> Result<(), ExecError> {
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let name = pg.metadata.name.clone().unwrap_or_default();
    let api: Api<PodGroup> = Api::namespaced(ctx.client.clone(), &ns);
    ctx.limiter.acquire().await;
    ctx.metrics.record_api("patch_podgroup");
    match api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(pg) => {
            ctx.cache.store_pod_group(pg);
            Ok(())
        }
        Err(e) => Err(Failure::api(format_args!("Job {}: updating PodGroup {name}", build::job_key(job)), &e)),
    }
}

async fn delete_pod_group(ctx: &Context, job: &Job) -> Result<(), ExecError> {
    let name = build::pod_group_name(job).map_err(|e| Failure::from(e.to_string()))?;
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    let api: Api<PodGroup> = Api::namespaced(ctx.client.clone(), &ns);
    let k = key(&ns, job.metadata.name.as_deref().unwrap_or_default());
    if ctx.cache.get(&k).and_then(|e| e.pod_group).is_none() {
        return Ok(());
    }
    ctx.limiter.acquire().await;
    ctx.metrics.record_api("delete_podgroup");
    match api.delete(&name, &DeleteParams::default()).await {
        Ok(_) => {
            ctx.cache.forget_pod_group(&k);
            Ok(())
        }
        Err(e) if is_status(&e, 404) => {
            ctx.cache.forget_pod_group(&k);
            Ok(())
        }
        Err(e) => Err(Failure::api(format_args!("Job {k}: deleting PodGroup {name}"), &e)),
    }
}

async fn create_pods(ctx: &Context, pods: Vec<Pod>) -> Vec<Result<Pod, CreateError>> {
    use futures::StreamExt;
    futures::stream::iter(pods)
        .map(|p| async move {
            let ns = p.metadata.namespace.clone().unwrap_or_default();
            let name = p.metadata.name.clone().unwrap_or_default();
            let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &ns);
            ctx.limiter.acquire().await;
            ctx.metrics.record_api("create_pod");
            match api.create(&PostParams::default(), &p).await {
                Ok(p) => Ok(p),
                Err(e) if is_status(&e, 409) => Err(CreateError {
                    message: format!("Pod {ns}/{name}: exists already (waiting for the cache)"),
                    retry_after: None,
                    invalid: false,
                    exists: true,
                }),
                Err(e) => Err(CreateError {
                    message: format!("failed to create pod {name}, err: {}", server_words(&e)),
                    retry_after: crate::plumbing::retry::retry_after(&e),
                    invalid: is_status(&e, 422),
                    exists: false,
                }),
            }
        })
        .buffer_unordered(API_CONCURRENCY)
        .collect()
        .await
}

/// Marks each pod `volcano.sh/controller-out-of-sync: "true"` (so its deletion is not taken for
/// an eviction), then deletes it; a pod already gone counts as deleted.
async fn delete_pods(
    ctx: &Context,
    job: &Job,
    pods: &BTreeMap<String, Pod>,
    names: &[String],
) -> Vec<(String, Result<(), ExecError>)> {
    use futures::StreamExt;
    let ns = job.metadata.namespace.clone().unwrap_or_default();
    futures::stream::iter(names.to_vec())
        .map(|name| {
            let ns = ns.clone();
            let uid = pods.get(&name).and_then(|p| p.metadata.uid.clone());
            let jkey = key(&ns, job.metadata.name.as_deref().unwrap_or_default());
            async move {
                let api: Api<Pod> = Api::namespaced(ctx.client.clone(), &ns);
                let patch = serde_json::json!({"metadata": {"annotations": {keys::OUT_OF_SYNC: "true"}}});
                ctx.limiter.acquire().await;
                ctx.metrics.record_api("patch_pod");
                let r = match api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                    Ok(_) => {
                        ctx.limiter.acquire().await;
                        ctx.metrics.record_api("delete_pod");
                        match api.delete(&name, &DeleteParams::default()).await {
                            Ok(_) => Ok(()),
                            Err(e) if is_status(&e, 404) => Ok(()),
                            Err(e) => Err(Failure::api(format_args!("Pod {ns}/{name}: deleting"), &e)),
                        }
                    }
                    Err(e) if is_status(&e, 404) => Ok(()),
                    Err(e) => Err(Failure::api(format_args!("Pod {ns}/{name}: marking out of sync"), &e)),
                };
                if let (Ok(()), Some(uid)) = (&r, uid) {
                    ctx.cache.mark_deleting(&jkey, &name, &uid);
                }
                (name, r)
            }
        })
        .buffer_unordered(API_CONCURRENCY)
        .collect()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(go_duration(Duration::ZERO), "0s");
        assert_eq!(go_duration(Duration::from_millis(3500)), "3.5s");
        assert_eq!(go_duration(Duration::from_secs(125)), "2m5s");
        assert_eq!(go_duration(Duration::from_secs(3723)), "1h2m3s");
        assert_eq!(go_duration(Duration::from_secs(3600)), "1h0m0s");
    }

    /// The cases of Volcano's `TestRecordPodGroupEvent` (job_controller_actions_test.go).
    #[test]
    fn pod_group_pending_reports_the_latest_true_condition_unless_scheduled() {
        let job: Job = serde_json::from_value(serde_json::json!({
            "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "job1", "namespace": "default"}, "spec": {}
        }))
        .unwrap();
        let pg = |conds: serde_json::Value| -> PodGroup {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": "job1-uid", "namespace": "default"},
                "spec": {}, "status": {"phase": "Running", "conditions": conds}
            }))
            .unwrap()
        };
        let cond = |kind: &str, status: &str, at: &str| serde_json::json!({"type": kind, "status": status, "reason": "test reason", "message": "test message", "lastTransitionTime": at});
        let want = Some("PodGroup default:job1 unschedulable, reason: test message".to_string());
        assert_eq!(pod_group_pending(&job, &pg(serde_json::json!([]))), None, "no conditions");
        assert_eq!(
            pod_group_pending(&job, &pg(serde_json::json!([cond("Unschedulable", "True", "2024-07-01T15:04:05Z")]))),
            want,
            "Unschedulable"
        );
        assert_eq!(
            pod_group_pending(
                &job,
                &pg(serde_json::json!([
                    cond("Unschedulable", "True", "2024-07-01T15:15:05Z"),
                    cond("Scheduled", "True", "2024-07-01T15:04:05Z")
                ]))
            ),
            want,
            "Unschedulable later than Scheduled"
        );
        assert_eq!(
            pod_group_pending(
                &job,
                &pg(serde_json::json!([
                    cond("Unschedulable", "True", "2024-07-01T15:15:05Z"),
                    cond("Scheduled", "True", "2024-07-01T15:20:05Z")
                ]))
            ),
            None,
            "Scheduled later than Unschedulable"
        );
        assert_eq!(
            pod_group_pending(&job, &pg(serde_json::json!([cond("Unschedulable", "False", "2024-07-01T15:04:05Z")]))),
            None,
            "only True conditions count"
        );
    }
}
