//! The status writer: every write the scheduler makes besides bindings, as Volcano makes them
//! (volcano-behaviour.md §1.6, §1.7):
//! * pod `PodScheduled` conditions through the `pods/status` subresource (`update`: GET, then
//!   PUT with the resourceVersion read, retried on conflict), only when the condition changed;
//! * PodGroup status by a full update of the object (its CRD has no status subresource), with
//!   the resourceVersion the watch last delivered; on a conflict the object is read again and
//!   the decided status written onto it (bounded by `max_attempts` calls);
//! * Queue `status.allocated` through the `queues/status` subresource;
//! * `v1` Events on pods and PodGroups (`Scheduled`, `FailedScheduling`, `Unschedulable`, …),
//!   through the shared recorder ([`crate::plumbing::events`]): a repeat within its window bumps
//!   the Event's `count` instead of creating another.
//!
//! Writes run asynchronously, at most `workers` at once, behind the shared rate limit and a
//! per-call timeout; transient failures (timeouts, transport errors, 429, 5xx) are retried with
//! backoff. Events go at most `event_workers` at once, in order, besides those: client-go's event
//! broadcaster (Volcano's and kube-scheduler's recorder) writes them one at a time, so a burst
//! of `Scheduled` events trails the binds instead of competing with them for the API server.
//! With [`WriterConfig::binds_outstanding`] set, an event also waits while binds are queued or
//! in flight, at most [`WriterConfig::event_defer_max`] after it was queued: at 10,000 pods the
//! `Scheduled` events are as many writes as the bindings, and the server is the bottleneck
//! (docs/live-bench.md). PodGroup updates that only report wait the same way; see
//! [`pod_group_waits`]. Every write ends in one
//! [`WriteResult`].

use super::outstanding::BindsOutstanding;
use crate::crd;
use crate::plumbing::api_errors::{conflict, not_found, transient, unreachable};
use crate::plumbing::events::EventRecorder;
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::retry::Backoff;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kube::Client;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Semaphore};

pub use crate::plumbing::events::Involved;

/// One write.
#[derive(Clone, Debug)]
pub enum Write {
    /// Set the pod's `PodScheduled` condition (`status` `False`, `reason`, `message`) and,
    /// when `nominated` is given, its `status.nominatedNodeName`, in one `pods/status` update
    /// (Volcano's `taskUnschedulable`, volcano-behaviour.md §1.6).
    PodCondition {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// UID the decision was about (a recreated pod is left alone).
        uid: String,
        /// `reason`: `Unschedulable`, `Schedulable` or `SchedulerError`.
        reason: String,
        /// `message`.
        message: String,
        /// `status.nominatedNodeName` to set (the node a preemption evicted victims on); `None`
        /// leaves the field as it is (Volcano never clears it).
        nominated: Option<String>,
    },
    /// Record an event.
    Event {
        /// What it is about.
        involved: Involved,
        /// `Normal` or `Warning`.
        type_: &'static str,
        /// Reason, e.g. `Scheduled`.
        reason: String,
        /// Message.
        message: String,
    },
    /// Replace a PodGroup (new status set in `object`).
    PodGroup {
        /// The PodGroup as last read, with the decided status.
        object: Box<DynamicObject>,
        /// Whether the update only reports and so waits for outstanding binds (see
        /// [`WriterConfig::binds_outstanding`]); decided by the cycle, [`pod_group_waits`].
        waits_for_binds: bool,
    },
    /// Evict a pod as Volcano's cache does (volcano-behaviour.md §1.6): conditions `Ready=False`
    /// (reason `Evict`) and `DisruptionTarget=True` (reason `PreemptionByScheduler`) through
    /// `pods/status`, then `DELETE` the pod (with its UID as a precondition).
    Evict {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// UID the decision was about.
        uid: String,
        /// Volcano's reason: `preempt`, `reclaim`, `shuffle`, `gangpreempt`, `gangreclaim`.
        reason: String,
        /// The scheduler name written in the `DisruptionTarget` message.
        scheduler: String,
    },
    /// Set a Queue's `status.allocated` (Kubernetes quantities).
    QueueAllocated {
        /// Queue name.
        name: String,
        /// `status.allocated`.
        allocated: std::collections::BTreeMap<String, String>,
    },
    /// Set this scheduler's NodeShard status (Volcano `UpdateNodeShardStatus`): the nodes it
    /// uses now, those desired but still used by another shard, those used but no longer
    /// desired, and `lastUpdateTime`, as one merge patch of `nodeshards/status`.
    NodeShardStatus {
        /// NodeShard name (`--scheduler-sharding-name`).
        name: String,
        /// `status.nodesInUse`.
        nodes_in_use: Vec<String>,
        /// `status.nodesToAdd`.
        nodes_to_add: Vec<String>,
        /// `status.nodesToRemove`.
        nodes_to_remove: Vec<String>,
    },
}

impl Write {
    /// Metric label of the write (`pod_status`, `event`, `podgroup`, `queue_status`, `evict`,
    /// `nodeshard_status`).
    pub fn kind(&self) -> &'static str {
        match self {
            Write::PodCondition { .. } => "pod_status",
            Write::Event { .. } => "event",
            Write::PodGroup { .. } => "podgroup",
            Write::Evict { .. } => "evict",
            Write::QueueAllocated { .. } => "queue_status",
            Write::NodeShardStatus { .. } => "nodeshard_status",
        }
    }
}

/// How a write ended.
#[derive(Clone, Debug)]
pub struct WriteResult {
    /// [`Write::kind`].
    pub kind: &'static str,
    /// `ns/name` or name of the object written.
    pub object: String,
    /// `Ok` with the updated object for PodGroups, or the error.
    pub outcome: Result<Option<DynamicObject>, String>,
    /// API calls made.
    pub calls: u32,
}

/// Writer settings.
#[derive(Clone, Debug)]
pub struct WriterConfig {
    /// Writes other than events in flight at once (Volcano uses 16 PodGroup status workers).
    pub workers: usize,
    /// Event writes in flight at once, first come first served (client-go's broadcaster: 1).
    pub event_workers: usize,
    /// Timeout of one call.
    pub timeout: Duration,
    /// Calls per write at most (conflicts and transient errors).
    pub max_attempts: u32,
    /// The `source.component` / `reportingComponent` of events (the scheduler name).
    pub component: String,
    /// Binds queued or in flight (kept by the runner); events and reporting PodGroup updates
    /// ([`pod_group_waits`]) wait while it is above 0. `None`: nothing waits for binds.
    pub binds_outstanding: Option<Arc<BindsOutstanding>>,
    /// How long after it was queued an event or a waiting PodGroup update waits for the binds
    /// at most.
    pub event_defer_max: Duration,
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            workers: 16,
            event_workers: 1,
            timeout: Duration::from_secs(10),
            max_attempts: 3,
            component: "volcano".into(),
            binds_outstanding: None,
            event_defer_max: Duration::from_secs(30),
        }
    }
}

fn pod_resource() -> ApiResource {
    ApiResource::erase::<Pod>(&())
}

fn pod_group_resource() -> ApiResource {
    ApiResource::erase::<crd::PodGroup>(&())
}

fn queue_resource() -> ApiResource {
    ApiResource::erase::<crd::Queue>(&())
}

/// What every write shares.
struct Shared {
    client: Client,
    limiter: Arc<RateLimiter>,
    cfg: Arc<WriterConfig>,
    /// The shared recorder ([`crate::plumbing::events`]): a repeated event bumps its count.
    events: EventRecorder,
}

/// One write's calls: the shared client, limit and settings, and the calls this write made.
struct Ctx {
    client: Client,
    limiter: Arc<RateLimiter>,
    cfg: Arc<WriterConfig>,
    calls: AtomicU64,
}

impl Ctx {
    /// The waits between one write's calls: 200 ms doubling to 5 s, or the server's
    /// `Retry-After` when longer ([`crate::plumbing::retry`]).
    fn backoff(&self) -> Backoff {
        Backoff::new(Duration::from_millis(200), Duration::from_secs(5))
    }

    async fn call<T, F>(&self, f: F) -> Result<T, kube::Error>
    where
        F: std::future::Future<Output = Result<T, kube::Error>>,
    {
        self.limiter.acquire().await;
        self.calls.fetch_add(1, Ordering::Relaxed);
        match tokio::time::timeout(self.cfg.timeout, f).await {
            Ok(r) => r,
            Err(_) => Err(kube::Error::Service(format!("timed out after {:?}", self.cfg.timeout).into())),
        }
    }
}

fn now_time() -> Time {
    Time(k8s_openapi::jiff::Timestamp::now())
}

/// Sets (replaces) condition `type_` in a pod object's `status.conditions`, with `status`,
/// `reason` and `message`; `lastTransitionTime` is now unless the status is unchanged.
pub fn set_pod_condition(pod: &mut Value, type_: &str, status: &str, reason: &str, message: &str) {
    let now = serde_json::to_value(now_time()).unwrap_or(Value::Null);
    let st = pod.as_object_mut().map(|o| o.entry("status").or_insert_with(|| serde_json::json!({})));
    let Some(st) = st.and_then(Value::as_object_mut) else { return };
    let conds = st.entry("conditions").or_insert_with(|| Value::Array(vec![]));
    if !conds.is_array() {
        *conds = Value::Array(vec![]);
    }
    let Some(list) = conds.as_array_mut() else { return };
    let old = list.iter().position(|c| c["type"] == type_);
    let transition = match old {
        Some(i) if list[i]["status"] == status => list[i]["lastTransitionTime"].clone(),
        _ => now,
    };
    let cond = serde_json::json!({
        "type": type_, "status": status, "reason": reason, "message": message,
        "lastProbeTime": Value::Null, "lastTransitionTime": transition,
    });
    match old {
        Some(i) => list[i] = cond,
        None => list.push(cond),
    }
}

/// Sets `PodScheduled` in a pod object's `status.conditions`: replaces a condition of that
/// type, keeping its `lastTransitionTime` when the status did not change.
pub fn set_pod_scheduled(pod: &mut Value, reason: &str, message: &str) {
    set_pod_condition(pod, "PodScheduled", "False", reason, message);
}

/// Sets a pod object's `status.nominatedNodeName` to `node` (creating `status` if needed).
pub fn set_nominated_node(pod: &mut Value, node: &str) {
    let Some(o) = pod.as_object_mut() else { return };
    let st = o.entry("status").or_insert_with(|| serde_json::json!({}));
    if !st.is_object() {
        *st = serde_json::json!({});
    }
    st["nominatedNodeName"] = node.into();
}

async fn write_pod_condition(
    ctx: &Ctx,
    ns: &str,
    name: &str,
    uid: &str,
    reason: &str,
    message: &str,
    nominated: Option<&str>,
) -> Result<(), String> {
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), ns, &pod_resource());
    let mut last = String::new();
    let mut backoff = ctx.backoff();
    for _ in 0..ctx.cfg.max_attempts.max(1) {
        let mut obj = match ctx.call(api.get(name)).await {
            Ok(o) => o,
            Err(e) if not_found(&e) => return Ok(()),
            Err(e) if transient(&e) => {
                last = e.to_string();
                tokio::time::sleep(backoff.delay(Some(&e))).await;
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        if obj.metadata.uid.as_deref().is_some_and(|u| u != uid) {
            return Ok(());
        }
        set_pod_scheduled(&mut obj.data, reason, message);
        if let Some(node) = nominated {
            set_nominated_node(&mut obj.data, node);
        }
        match ctx.call(api.replace_status(name, &PostParams::default(), &obj)).await {
            Ok(_) => return Ok(()),
            Err(e) if not_found(&e) => return Ok(()),
            Err(e) if conflict(&e) => last = e.to_string(),
            Err(e) if transient(&e) => {
                last = e.to_string();
                tokio::time::sleep(backoff.delay(Some(&e))).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(last)
}

/// Replaces a PodGroup with `obj` (its status decided this cycle). On a conflict (409: the
/// object changed since the watch delivered it) the current object is read again and the
/// decided status written onto it, at most [`WriterConfig::max_attempts`] calls in all, so the
/// write lands within the cycle instead of waiting for the next one (Volcano's job updater
/// writes `Update` with the session's copy; volcano-behaviour.md §1.7).
async fn write_pod_group(ctx: &Ctx, obj: &DynamicObject) -> Result<Option<DynamicObject>, String> {
    let ns = obj.metadata.namespace.clone().unwrap_or_else(|| crate::convert::DEFAULT_NAMESPACE.into());
    let name = obj.metadata.name.clone().unwrap_or_default();
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &ns, &pod_group_resource());
    let mut current = std::borrow::Cow::Borrowed(obj);
    let mut last = String::new();
    let mut calls = 0;
    let max = ctx.cfg.max_attempts.max(1);
    let mut backoff = ctx.backoff();
    while calls < max {
        calls += 1;
        match ctx.call(api.replace(&name, &PostParams::default(), &current)).await {
            Ok(o) => return Ok(Some(o)),
            Err(e) if not_found(&e) => return Ok(None),
            Err(e) if conflict(&e) => {
                last = e.to_string();
                if calls >= max {
                    break;
                }
                calls += 1;
                match ctx.call(api.get(&name)).await {
                    Ok(mut fresh) => {
                        if fresh.metadata.uid != obj.metadata.uid {
                            // Deleted and recreated: the decision was about the old one.
                            return Ok(None);
                        }
                        fresh.data["status"] = obj.data["status"].clone();
                        current = std::borrow::Cow::Owned(fresh);
                    }
                    Err(e) if not_found(&e) => return Ok(None),
                    Err(e) => last = e.to_string(),
                }
                continue;
            }
            // Not reaching the server at all (connection refused or reset): the next cycle
            // decides the status again and writes it, so this write gives up instead of
            // adding calls to a server that is down (Volcano's updater makes one call a cycle).
            Err(e) if unreachable(&e) => return Err(e.to_string()),
            Err(e) if transient(&e) => {
                last = e.to_string();
                if calls < max {
                    tokio::time::sleep(backoff.delay(Some(&e))).await;
                }
            }
            Err(e) => {
                tracing::debug!(podgroup = %format!("{ns}/{name}"), body = %obj.data["status"], "PodGroup update refused");
                return Err(e.to_string());
            }
        }
    }
    Err(last)
}

async fn write_queue_allocated(
    ctx: &Ctx,
    name: &str,
    allocated: &std::collections::BTreeMap<String, String>,
) -> Result<Option<DynamicObject>, String> {
    let api: Api<DynamicObject> = Api::all_with(ctx.client.clone(), &queue_resource());
    let mut last = String::new();
    let mut backoff = ctx.backoff();
    for _ in 0..ctx.cfg.max_attempts.max(1) {
        let mut obj = match ctx.call(api.get(name)).await {
            Ok(o) => o,
            Err(e) if not_found(&e) => return Ok(None),
            // As for PodGroups: a server that cannot be reached at all gets no more calls from
            // this write; the next cycle writes the Queue's allocation again.
            Err(e) if unreachable(&e) => return Err(e.to_string()),
            Err(e) if transient(&e) => {
                last = e.to_string();
                tokio::time::sleep(backoff.delay(Some(&e))).await;
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        if let Some(o) = obj.data.as_object_mut() {
            let status = o.entry("status").or_insert_with(|| serde_json::json!({}));
            if !status.is_object() {
                *status = serde_json::json!({});
            }
            status["allocated"] = serde_json::to_value(allocated).map_err(|e| e.to_string())?;
        }
        match ctx.call(api.replace_status(name, &PostParams::default(), &obj)).await {
            Ok(o) => return Ok(Some(o)),
            Err(e) if not_found(&e) => return Ok(None),
            Err(e) if unreachable(&e) => return Err(e.to_string()),
            Err(e) if conflict(&e) => last = e.to_string(),
            Err(e) if transient(&e) => {
                last = e.to_string();
                tokio::time::sleep(backoff.delay(Some(&e))).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(last)
}

/// One merge patch of `nodeshards/status`, retried as a Queue's status is (transient errors,
/// up to `max_attempts`; none once the server is unreachable: the next change writes again).
async fn write_node_shard_status(ctx: &Ctx, name: &str, status: &Value) -> Result<Option<DynamicObject>, String> {
    let api: Api<crd::NodeShard> = Api::all(ctx.client.clone());
    let mut last = String::new();
    let mut backoff = ctx.backoff();
    for _ in 0..ctx.cfg.max_attempts.max(1) {
        match ctx.call(api.patch_status(name, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(status))).await {
            Ok(_) => return Ok(None),
            Err(e) if not_found(&e) => return Ok(None),
            Err(e) if unreachable(&e) => return Err(e.to_string()),
            Err(e) if transient(&e) => {
                last = e.to_string();
                tokio::time::sleep(backoff.delay(Some(&e))).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(last)
}

async fn evict(ctx: &Ctx, ns: &str, name: &str, uid: &str, reason: &str, scheduler: &str) -> Result<(), String> {
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), ns, &pod_resource());
    let message = format!("Pod is evicted, because of {reason}");
    let mut obj = match ctx.call(api.get(name)).await {
        Ok(o) => o,
        Err(e) if not_found(&e) => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    if obj.metadata.uid.as_deref().is_some_and(|u| u != uid) {
        return Ok(());
    }
    set_pod_condition(&mut obj.data, "Ready", "False", "Evict", &message);
    set_pod_condition(
        &mut obj.data,
        "DisruptionTarget",
        "True",
        "PreemptionByScheduler",
        &format!("{scheduler}: preempting to accommodate a higher priority pod"),
    );
    if let Err(e) = ctx.call(api.replace_status(name, &PostParams::default(), &obj)).await {
        // The delete below is what frees the node; a lost condition is only reported.
        tracing::warn!(pod = %format!("{ns}/{name}"), "eviction conditions not written: {e}");
    }
    let dp = kube::api::DeleteParams {
        preconditions: Some(kube::api::Preconditions { uid: Some(uid.to_string()), resource_version: None }),
        ..Default::default()
    };
    match ctx.call(api.delete(name, &dp)).await {
        Ok(_) => Ok(()),
        Err(e) if not_found(&e) || conflict(&e) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

async fn perform(shared: &Shared, w: Write) -> WriteResult {
    let ctx = &Ctx {
        client: shared.client.clone(),
        limiter: shared.limiter.clone(),
        cfg: shared.cfg.clone(),
        calls: AtomicU64::new(0),
    };
    let kind = w.kind();
    let (object, outcome) = match &w {
        Write::PodCondition { namespace, name, uid, reason, message, nominated } => (
            format!("{namespace}/{name}"),
            write_pod_condition(ctx, namespace, name, uid, reason, message, nominated.as_deref()).await.map(|()| None),
        ),
        Write::Event { involved, type_, reason, message } => {
            let r = shared.events.record(involved, type_, reason, message).await;
            ctx.calls.fetch_add(u64::from(r.calls), Ordering::Relaxed);
            (format!("{}/{}", involved.namespace, involved.name), r.outcome.map(|()| None))
        }
        Write::PodGroup { object: obj, .. } => (
            format!("{}/{}", obj.metadata.namespace.as_deref().unwrap_or(""), obj.metadata.name.as_deref().unwrap_or("")),
            write_pod_group(ctx, obj).await,
        ),
        Write::QueueAllocated { name, allocated } => (name.clone(), write_queue_allocated(ctx, name, allocated).await),
        Write::NodeShardStatus { name, nodes_in_use, nodes_to_add, nodes_to_remove } => {
            let status = serde_json::json!({"status": {
                "nodesInUse": nodes_in_use, "nodesToAdd": nodes_to_add, "nodesToRemove": nodes_to_remove,
                "lastUpdateTime": serde_json::to_value(now_time()).unwrap_or(Value::Null),
            }});
            (name.clone(), write_node_shard_status(ctx, name, &status).await)
        }
        Write::Evict { namespace, name, uid, reason, scheduler } => {
            (format!("{namespace}/{name}"), evict(ctx, namespace, name, uid, reason, scheduler).await.map(|()| None))
        }
    };
    let calls = ctx.calls.load(Ordering::Relaxed) as u32;
    WriteResult { kind, object, outcome, calls }
}

/// Whether a PodGroup update waits for outstanding binds as events do (at most
/// [`WriterConfig::event_defer_max`], then one at a time while binds remain): every update but
/// one to `Unknown` (Volcano's job controller acts on it) and one to `Inqueue` for a PodGroup
/// with no bind in the cycle that decided it (Volcano's job controller creates a Job's pods only
/// once its PodGroup has left `Pending`, volcano-behaviour.md §5.1; a PodGroup whose pods are
/// being bound already has them). The others only report (counts, conditions, `Running`). Each
/// PodGroup update is a full write of a custom resource, which costs the API server more than a
/// binding: at 10,000 pods in gangs of 10, the 2,000 updates (`Inqueue`, then `Running`)
/// landing among the bindings held them back (docs/live-bench.md).
pub fn pod_group_waits(new_phase: &str, bound_this_cycle: bool) -> bool {
    match new_phase {
        "Unknown" => false,
        "Inqueue" => bound_this_cycle,
        _ => true,
    }
}

/// Runs the writer until `writes` closes, then waits for the writes in flight; every result
/// goes to `done`.
pub async fn run(
    client: Client,
    limiter: Arc<RateLimiter>,
    cfg: WriterConfig,
    mut writes: mpsc::UnboundedReceiver<Write>,
    done: impl Fn(WriteResult) + Send + Sync + 'static,
) {
    let slots = Arc::new(Semaphore::new(cfg.workers.max(1)));
    // Waiting PodGroup updates past their deadline while binds remain: one in flight.
    let trickle = Arc::new(Semaphore::new(1));
    let event_workers = cfg.event_workers.max(1);
    let events = EventRecorder::new(client.clone(), &cfg.component, Some(limiter.clone()), cfg.timeout, cfg.max_attempts);
    let ctx = Arc::new(Shared { client, limiter, cfg: Arc::new(cfg), events });
    let done = Arc::new(done);
    // Events queue as plain values in their own channel (not as one task each) and are written
    // by `event_workers` tasks in order, never holding up the other writes.
    let (event_tx, event_rx) = mpsc::unbounded_channel::<(Instant, Write)>();
    let event_rx = Arc::new(tokio::sync::Mutex::new(event_rx));
    let mut event_tasks = tokio::task::JoinSet::new();
    for _ in 0..event_workers {
        let (ctx, done, event_rx) = (ctx.clone(), done.clone(), event_rx.clone());
        event_tasks.spawn(async move {
            loop {
                let next = event_rx.lock().await.recv().await;
                let Some((queued, w)) = next else { break };
                if let Some(binds) = &ctx.cfg.binds_outstanding {
                    binds.wait_idle_until((queued + ctx.cfg.event_defer_max).into()).await;
                }
                done(perform(&ctx, w).await);
            }
        });
    }
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(w) = writes.recv().await {
        if matches!(w, Write::Event { .. }) {
            let _ = event_tx.send((Instant::now(), w));
            continue;
        }
        let waits = matches!(w, Write::PodGroup { waits_for_binds: true, .. });
        if let (true, Some(binds)) = (waits, ctx.cfg.binds_outstanding.clone()) {
            // Waits outside the slots, so it never holds up a write that does not wait; past
            // the deadline, goes one at a time while binds remain.
            let (ctx, done, slots, trickle) = (ctx.clone(), done.clone(), slots.clone(), trickle.clone());
            let until = Instant::now() + ctx.cfg.event_defer_max;
            tasks.spawn(async move {
                let idle = binds.wait_idle_until(until.into()).await;
                let one = if !idle { trickle.acquire_owned().await.ok() } else { None };
                let Ok(permit) = slots.acquire_owned().await else { return };
                let r = perform(&ctx, w).await;
                drop((permit, one));
                done(r);
            });
            while tasks.try_join_next().is_some() {}
            continue;
        }
        let Ok(permit) = slots.clone().acquire_owned().await else { break };
        let (ctx, done) = (ctx.clone(), done.clone());
        tasks.spawn(async move {
            let r = perform(&ctx, w).await;
            drop(permit);
            done(r);
        });
        while tasks.try_join_next().is_some() {}
    }
    drop(event_tx);
    while tasks.join_next().await.is_some() {}
    while event_tasks.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unknown_and_an_inqueue_without_binds_go_before_the_binds() {
        assert!(!pod_group_waits("Unknown", false));
        assert!(!pod_group_waits("Unknown", true));
        assert!(!pod_group_waits("Inqueue", false), "the job controller waits for it to create the pods");
        assert!(pod_group_waits("Inqueue", true), "its pods exist: they are being bound");
        for phase in ["Running", "Pending", "Completed", ""] {
            assert!(pod_group_waits(phase, false), "{phase}");
        }
    }

    #[test]
    fn pod_scheduled_replaces_the_condition_and_keeps_other_ones() {
        let mut pod = serde_json::json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"},
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "old", "lastTransitionTime": "2020-01-01T00:00:00Z"}
        ]}});
        set_pod_scheduled(&mut pod, "Unschedulable", "new");
        let conds = pod["status"]["conditions"].as_array().unwrap();
        assert_eq!(conds.len(), 2);
        assert_eq!(conds[0]["type"], "Ready");
        assert_eq!(conds[1]["message"], "new");
        assert_eq!(conds[1]["lastTransitionTime"], "2020-01-01T00:00:00Z", "status unchanged: transition time kept");
    }

    #[test]
    fn nominated_node_is_set_beside_the_condition() {
        let mut pod = serde_json::json!({"status": {"phase": "Pending"}});
        set_pod_scheduled(&mut pod, "Unschedulable", "m");
        set_nominated_node(&mut pod, "n1");
        assert_eq!(pod["status"]["nominatedNodeName"], "n1");
        assert_eq!(pod["status"]["phase"], "Pending", "other status fields are kept");
        let mut bare = serde_json::json!({});
        set_nominated_node(&mut bare, "n2");
        assert_eq!(bare["status"]["nominatedNodeName"], "n2");
    }

    #[test]
    fn pod_scheduled_is_added_when_missing() {
        let mut pod = serde_json::json!({"metadata": {"name": "p"}});
        set_pod_scheduled(&mut pod, "SchedulerError", "failed to bind to node n1: boom");
        let c = &pod["status"]["conditions"][0];
        assert_eq!(
            (c["type"].as_str(), c["status"].as_str(), c["reason"].as_str()),
            (Some("PodScheduled"), Some("False"), Some("SchedulerError"))
        );
        assert!(c["lastTransitionTime"].is_string());
    }
}

#[cfg(test)]
mod evict_tests {
    use super::*;

    #[test]
    fn eviction_conditions_are_volcanos() {
        let mut pod = serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        set_pod_condition(&mut pod, "Ready", "False", "Evict", "Pod is evicted, because of preempt");
        set_pod_condition(
            &mut pod,
            "DisruptionTarget",
            "True",
            "PreemptionByScheduler",
            "volcano: preempting to accommodate a higher priority pod",
        );
        let c = pod["status"]["conditions"].as_array().unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!((c[0]["status"].as_str(), c[0]["reason"].as_str()), (Some("False"), Some("Evict")));
        assert_eq!(c[1]["type"], "DisruptionTarget");
        assert!(c[0]["lastTransitionTime"].is_string(), "status changed: a new transition time");
    }
}
