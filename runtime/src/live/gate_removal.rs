//! The gate-removal workers (Volcano `pkg/scheduler/gate` `SchGateManager`, feature gate
//! `SchedulingGatesQueueAdmission`): they remove Volcano's scheduling gate
//! ([`basalt_core::model::QUEUE_ALLOCATION_GATE`]) from the pods whose queue admitted them
//! ([`basalt_core::decision::GateRemoval`]), so the pod becomes schedulable and, if no node fits
//! it, an autoscaler sees a real shortage instead of a queue limit.
//!
//! The scheduling loop never waits for them: [`GateRemover::enqueue`] puts the pod on a bounded
//! queue (`workers × 200`, as Volcano's channel) and returns; a full queue drops the request
//! with a warning, a pod already queued or in flight is not queued twice, and either way the
//! next cycle decides the removal again while the pod is still gated. `--gate-removal-worker-num`
//! workers (default 5) take requests in turn. Each removal is one JSON patch of the pod that
//! removes only Volcano's gate and only from the pod it was decided for:
//! `test /metadata/uid`, `test /spec/schedulingGates/0/name` = the gate, `remove
//! /spec/schedulingGates/0` (the core decides it only for pods whose one gate is Volcano's; Volcano
//! sends a strategic-merge `$patch: delete` of the gate by name). A failed `test` (422: the pod was
//! recreated or its gates changed) ends the removal: the next cycle reads the pod as it is now. A
//! 404 ends it too. 429, 5xx and timeouts are retried up to [`GateConfig::max_attempts`] calls,
//! each behind the shared QPS limiter, waiting as [`crate::plumbing::retry::Backoff`] says.

use crate::plumbing::api_errors::{api_code, transient};
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::retry::Backoff;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube::Client;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Volcano's `DefaultWorkerNum` (`--gate-removal-worker-num`).
pub const DEFAULT_WORKERS: usize = 5;

/// Volcano's queue room per worker (`bufferPerWorker`).
pub const BUFFER_PER_WORKER: usize = 200;

/// One removal: the pod, by name and uid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateRequest {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.uid` of the pod the removal was decided for.
    pub uid: String,
}

/// How a removal ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GateOutcome {
    /// The gate is gone.
    Removed,
    /// Nothing to do: the pod is gone, was recreated, or its gates are not what was decided on.
    Stale(String),
    /// Failed for good (a refusal, or every call failed); the message is the last error.
    Failed(String),
}

/// Worker settings.
#[derive(Clone, Debug)]
pub struct GateConfig {
    /// Workers (`--gate-removal-worker-num`; at least 1).
    pub workers: usize,
    /// Timeout of one call.
    pub timeout: Duration,
    /// Calls per removal at most.
    pub max_attempts: u32,
    /// First wait between calls (doubles, at most 5 s; a longer `Retry-After` wins).
    pub backoff: Duration,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            workers: DEFAULT_WORKERS,
            timeout: Duration::from_secs(10),
            max_attempts: 3,
            backoff: Duration::from_millis(100),
        }
    }
}

/// The JSON patch that removes Volcano's gate, the pod's only gate, from the pod with `uid`.
pub fn patch_body(uid: &str) -> serde_json::Value {
    serde_json::json!([
        {"op": "test", "path": "/metadata/uid", "value": uid},
        {"op": "test", "path": "/spec/schedulingGates/0/name", "value": basalt_core::model::QUEUE_ALLOCATION_GATE},
        {"op": "remove", "path": "/spec/schedulingGates/0"},
    ])
}

/// Removes the gate of `r`'s pod with retries; never panics, always returns an outcome, and the
/// number of calls made (at most `cfg.max_attempts`).
pub async fn remove_one(client: &Client, limiter: &RateLimiter, cfg: &GateConfig, r: &GateRequest) -> (GateOutcome, u32) {
    let api: Api<Pod> = Api::namespaced(client.clone(), &r.namespace);
    let ops: json_patch::Patch = match serde_json::from_value(patch_body(&r.uid)) {
        Ok(p) => p,
        Err(e) => return (GateOutcome::Failed(format!("gate removal patch: {e}")), 0),
    };
    let patch: Patch<()> = Patch::Json(ops);
    let pp = PatchParams::default();
    let mut backoff = Backoff::new(cfg.backoff, Duration::from_secs(5));
    let mut last = String::new();
    let max = cfg.max_attempts.max(1);
    for attempt in 1..=max {
        limiter.acquire().await;
        let err = match tokio::time::timeout(cfg.timeout, api.patch(&r.name, &pp, &patch)).await {
            Ok(Ok(_)) => return (GateOutcome::Removed, attempt),
            Ok(Err(e)) => match api_code(&e) {
                Some(404) => return (GateOutcome::Stale("the pod is gone".into()), attempt),
                Some(422) | Some(409) => return (GateOutcome::Stale(e.to_string()), attempt),
                _ if transient(&e) => Some(e),
                _ => return (GateOutcome::Failed(e.to_string()), attempt),
            },
            Err(_) => None,
        };
        last = err.as_ref().map_or_else(|| format!("timed out after {:?}", cfg.timeout), |e| e.to_string());
        if attempt < max {
            tokio::time::sleep(backoff.delay(err.as_ref())).await;
        }
    }
    (GateOutcome::Failed(last), max)
}

/// Told of every finished removal: the request, how it ended, and the calls it took.
pub type GateDone = Arc<dyn Fn(&GateRequest, &GateOutcome, u32) + Send + Sync>;

/// The handle the scheduling loop queues removals on.
#[derive(Clone)]
pub struct GateRemover {
    tx: mpsc::Sender<GateRequest>,
    /// Pods queued or in flight, by (namespace, name).
    busy: Arc<Mutex<HashSet<(String, String)>>>,
}

impl GateRemover {
    /// Starts `cfg.workers` workers on the current tokio runtime. A removal is sent only while
    /// `leading()` holds; each result goes to `done` with the calls it took.
    pub fn start(
        client: Client,
        limiter: Arc<RateLimiter>,
        cfg: GateConfig,
        leading: Arc<dyn Fn() -> bool + Send + Sync>,
        done: GateDone,
    ) -> (GateRemover, tokio::task::JoinHandle<()>) {
        let workers = cfg.workers.max(1);
        let (tx, rx) = mpsc::channel::<GateRequest>(workers * BUFFER_PER_WORKER);
        let busy: Arc<Mutex<HashSet<(String, String)>>> = Arc::default();
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        let cfg = Arc::new(cfg);
        let b = busy.clone();
        let handle = tokio::spawn(async move {
            let mut set = tokio::task::JoinSet::new();
            for _ in 0..workers {
                let (rx, client, limiter, cfg, leading, done, busy) =
                    (rx.clone(), client.clone(), limiter.clone(), cfg.clone(), leading.clone(), done.clone(), b.clone());
                set.spawn(async move {
                    loop {
                        let Some(r) = rx.lock().await.recv().await else { return };
                        let (outcome, calls) = if leading() {
                            remove_one(&client, &limiter, &cfg, &r).await
                        } else {
                            (GateOutcome::Failed("not the leader any more".into()), 0)
                        };
                        busy.lock().unwrap_or_else(|e| e.into_inner()).remove(&(r.namespace.clone(), r.name.clone()));
                        done(&r, &outcome, calls);
                    }
                });
            }
            while set.join_next().await.is_some() {}
        });
        (GateRemover { tx, busy }, handle)
    }

    /// Queues a removal without waiting. Returns false when the pod is already queued or in
    /// flight, or the queue is full (logged; the next cycle decides it again).
    pub fn enqueue(&self, r: GateRequest) -> bool {
        let key = (r.namespace.clone(), r.name.clone());
        let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        if busy.contains(&key) {
            return false;
        }
        match self.tx.try_send(r) {
            Ok(()) => {
                busy.insert(key);
                true
            }
            Err(mpsc::error::TrySendError::Full(r)) => {
                tracing::warn!(pod = %format!("{}/{}", r.namespace, r.name), "gate removal queue full, skipping gate removal; the next cycle decides it again");
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_removes_only_volcanos_gate_of_the_decided_pod() {
        let p = patch_body("u-1");
        assert_eq!(p[0], serde_json::json!({"op": "test", "path": "/metadata/uid", "value": "u-1"}));
        assert_eq!(p[1]["value"], "scheduling.volcano.sh/queue-allocation-gate");
        assert_eq!(p[2], serde_json::json!({"op": "remove", "path": "/spec/schedulingGates/0"}));
        // Applied to a pod object as the API server does (RFC 6902).
        let mut pod = serde_json::json!({
            "metadata": {"uid": "u-1"},
            "spec": {"schedulingGates": [{"name": "scheduling.volcano.sh/queue-allocation-gate"}]},
        });
        let patch: json_patch::Patch = serde_json::from_value(p.clone()).unwrap();
        json_patch::patch(&mut pod, &patch).unwrap();
        assert_eq!(pod["spec"]["schedulingGates"], serde_json::json!([]));
        // Another gate first, or another pod with the same name: the patch fails, nothing changes.
        for mut other in [
            serde_json::json!({"metadata": {"uid": "u-1"}, "spec": {"schedulingGates": [{"name": "x"}, {"name": "scheduling.volcano.sh/queue-allocation-gate"}]}}),
            serde_json::json!({"metadata": {"uid": "u-2"}, "spec": {"schedulingGates": [{"name": "scheduling.volcano.sh/queue-allocation-gate"}]}}),
        ] {
            let before = other.clone();
            assert!(json_patch::patch(&mut other, &patch).is_err());
            assert_eq!(other, before);
        }
    }

    #[tokio::test]
    async fn a_pod_is_queued_once_until_its_removal_ends_and_a_full_queue_refuses() {
        let (tx, mut rx) = mpsc::channel(2);
        let g = GateRemover { tx, busy: Arc::default() };
        let req = |n: &str| GateRequest { namespace: "ns".into(), name: n.into(), uid: n.into() };
        assert!(g.enqueue(req("a")));
        assert!(!g.enqueue(req("a")), "already queued");
        assert!(g.enqueue(req("b")));
        assert!(!g.enqueue(req("c")), "queue full: dropped, decided again next cycle");
        assert_eq!(rx.recv().await.unwrap().name, "a");
        g.busy.lock().unwrap().remove(&("ns".to_string(), "a".to_string()));
        assert!(g.enqueue(req("a")), "done: may be queued again");
    }
}
