//! The binder: sends `POST pods/{name}/binding` for every bind the scheduler decided,
//! asynchronously and with at most `workers` binds in flight, each call behind the shared
//! client-side rate limit and a timeout, retried with exponential backoff when the failure is
//! transient (timeouts, transport errors, 429, 5xx), waiting at least the server's `Retry-After`
//! between calls and after the last one ([`crate::plumbing::retry`]: at most
//! [`BinderConfig::max_attempts`] calls per decided bind, and with `Retry-After: R` at most
//! `1 + ⌊F / R⌋` binding calls per pod during a fault of `F` seconds).
//!
//! A `409 Conflict` saying the pod "is already assigned to node X" is a success when X is the
//! node chosen (a retry after a lost response, or a bind that landed before its timeout), and a
//! failure otherwise. Every request ends in exactly one [`BindOutcome`], reported back to the
//! scheduling loop: Volcano `cache.Bind` / `processBindTask` (volcano-behaviour.md §1.6).

use super::mirror::BindRequest;
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::retry::{retry_after, Backoff};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use kube::Client;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Semaphore};

/// How a bind ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindOutcome {
    /// The API bound the pod to the chosen node.
    Bound,
    /// The bind failed for good; the message is the API's error (`failed to bind to node …`
    /// is added by the caller).
    Failed(String),
}

/// A finished bind.
#[derive(Clone, Debug)]
pub struct BindResult {
    /// What was asked.
    pub request: BindRequest,
    /// How it ended.
    pub outcome: BindOutcome,
    /// API calls it took.
    pub attempts: u32,
}

/// Binder settings.
#[derive(Clone, Debug)]
pub struct BinderConfig {
    /// Binds in flight at once.
    pub workers: usize,
    /// Timeout of one call.
    pub timeout: Duration,
    /// Calls per bind at most.
    pub max_attempts: u32,
    /// First retry delay (doubles per retry, capped at 5 s; a longer server `Retry-After` wins).
    pub backoff: Duration,
    /// How long a bind waits for its claims to be bound before giving up
    /// (`volumebinding.bindTimeoutSeconds`, Volcano's default 600 s).
    pub volume_timeout: Duration,
}

impl Default for BinderConfig {
    fn default() -> Self {
        BinderConfig {
            workers: 64,
            timeout: Duration::from_secs(10),
            max_attempts: 5,
            backoff: Duration::from_millis(100),
            volume_timeout: Duration::from_secs(600),
        }
    }
}

/// What one call's error means for the bind.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Done(BindOutcome),
    Retry(String),
}

/// The node named by the API server's "pod … is already assigned to node \"X\"" message.
fn assigned_node(message: &str) -> Option<&str> {
    let rest = message.split("is already assigned to node \"").nth(1)?;
    rest.split('"').next()
}

fn judge(err: &kube::Error, node: &str) -> Verdict {
    match err {
        kube::Error::Api(s) => match s.code {
            409 => match assigned_node(&s.message) {
                Some(n) if n == node => Verdict::Done(BindOutcome::Bound),
                _ => Verdict::Done(BindOutcome::Failed(s.message.clone())),
            },
            429 | 500..=599 => Verdict::Retry(format!("{} {}", s.code, s.message)),
            _ => Verdict::Done(BindOutcome::Failed(s.message.clone())),
        },
        other => Verdict::Retry(other.to_string()),
    }
}

fn binding_body(r: &BindRequest) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": r.name, "namespace": r.namespace, "uid": r.uid, "annotations": r.annotations},
        "target": {"apiVersion": "v1", "kind": "Node", "name": r.node},
    })
}

/// Sends one bind with retries; never panics, always returns an outcome. A bind with a node
/// lock first takes it ([`super::node_lock`]; when it cannot, nothing else is sent) and removes
/// it again when the bind fails. A bind with volume bindings then binds the claims
/// ([`super::volume_binder`]); when that fails the Binding is not sent and the outcome is
/// Volcano's PreBind failure.
pub async fn bind_one(client: &Client, limiter: &RateLimiter, cfg: &BinderConfig, r: BindRequest) -> BindResult {
    let Some(lock) = r.node_lock.clone() else { return bind_unlocked(client, limiter, cfg, r).await };
    limiter.acquire().await;
    if let Err(e) = super::node_lock::lock(client, &r.node, &lock).await {
        let msg = format!("node {} locked for {}/{} {lock} lockname: {e}", r.node, r.namespace, r.name);
        return BindResult { request: r, outcome: BindOutcome::Failed(msg), attempts: 1 };
    }
    let res = bind_unlocked(client, limiter, cfg, r).await;
    if res.outcome != BindOutcome::Bound {
        limiter.acquire().await;
        if let Err(e) = super::node_lock::release(client, &res.request.node, &lock).await {
            tracing::warn!(node = %res.request.node, lock = %lock, "the bind failed and its node lock could not be removed: {e}");
        }
    }
    res
}

async fn bind_unlocked(client: &Client, limiter: &RateLimiter, cfg: &BinderConfig, r: BindRequest) -> BindResult {
    if let Some(vb) = &r.volumes {
        limiter.acquire().await;
        if let Err(e) = super::volume_binder::bind_volumes(client, vb, cfg.volume_timeout).await {
            let msg = format!("execute preBind for pod {}/{} failed: {e}, resync the task", r.namespace, r.name);
            return BindResult { request: r, outcome: BindOutcome::Failed(msg), attempts: 1 };
        }
    }
    let api: Api<Pod> = Api::namespaced(client.clone(), &r.namespace);
    let body = binding_body(&r);
    let pp = PostParams::default();
    let mut last = String::new();
    let mut backoff = Backoff::new(cfg.backoff, Duration::from_secs(5));
    let mut server_wait = None;
    for attempt in 1..=cfg.max_attempts.max(1) {
        limiter.acquire().await;
        let call = api.create_subresource::<_, serde_json::Value>("binding", &r.name, &pp, &body);
        let (verdict, err) = match tokio::time::timeout(cfg.timeout, call).await {
            Ok(Ok(_)) => (Verdict::Done(BindOutcome::Bound), None),
            Ok(Err(e)) => (judge(&e, &r.node), Some(e)),
            Err(_) => (Verdict::Retry(format!("timed out after {:?}", cfg.timeout)), None),
        };
        match verdict {
            Verdict::Done(outcome) => return BindResult { request: r, outcome, attempts: attempt },
            Verdict::Retry(why) => {
                tracing::debug!(pod = %format!("{}/{}", r.namespace, r.name), attempt, "bind failed, retrying: {why}");
                last = why;
            }
        }
        server_wait = err.as_ref().and_then(retry_after);
        if attempt < cfg.max_attempts {
            tokio::time::sleep(backoff.delay(err.as_ref())).await;
        }
    }
    // The server asked to wait: the pod's next bind (decided again by the next cycle once this
    // one is reported) must not come sooner either.
    if let Some(w) = server_wait {
        tokio::time::sleep(w).await;
    }
    BindResult { request: r, outcome: BindOutcome::Failed(last), attempts: cfg.max_attempts.max(1) }
}

/// Runs the binder until `requests` closes, then waits for the binds in flight; every result
/// goes to `done`. A bind is sent only while `leading()` holds.
pub async fn run(
    client: Client,
    limiter: Arc<RateLimiter>,
    cfg: BinderConfig,
    mut requests: mpsc::UnboundedReceiver<BindRequest>,
    leading: Arc<dyn Fn() -> bool + Send + Sync>,
    done: impl Fn(BindResult) + Send + Sync + 'static,
) {
    let done = Arc::new(done);
    let slots = Arc::new(Semaphore::new(cfg.workers.max(1)));
    let cfg = Arc::new(cfg);
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(r) = requests.recv().await {
        let Ok(permit) = slots.clone().acquire_owned().await else { break };
        let (client, limiter, cfg, done, leading) = (client.clone(), limiter.clone(), cfg.clone(), done.clone(), leading.clone());
        tasks.spawn(async move {
            // Only the leader binds: a bind decided just before leadership ended is not sent.
            let res = if leading() {
                bind_one(&client, &limiter, &cfg, r).await
            } else {
                BindResult { request: r, outcome: BindOutcome::Failed("not the leader any more".into()), attempts: 0 }
            };
            drop(permit);
            done(res);
        });
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api_err(code: u16, message: &str) -> kube::Error {
        let mut s = Status::failure(message, "");
        s.code = code;
        kube::Error::Api(Box::new(s))
    }

    #[test]
    fn already_assigned_to_our_node_is_success() {
        let e = api_err(409, "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\"");
        assert_eq!(judge(&e, "n1"), Verdict::Done(BindOutcome::Bound));
        match judge(&e, "n2") {
            Verdict::Done(BindOutcome::Failed(m)) => assert!(m.contains("n1")),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn transient_errors_retry_and_client_errors_do_not() {
        for code in [429, 500, 503, 504] {
            assert!(matches!(judge(&api_err(code, "x"), "n"), Verdict::Retry(_)), "{code}");
        }
        for code in [400, 403, 404, 422] {
            assert!(matches!(judge(&api_err(code, "x"), "n"), Verdict::Done(BindOutcome::Failed(_))), "{code}");
        }
    }

    #[test]
    fn binding_names_pod_uid_and_node() {
        let b = binding_body(&BindRequest {
            namespace: "ns".into(),
            name: "p".into(),
            uid: "u".into(),
            node: "n".into(),
            volumes: None,
            annotations: [("volcano.sh/gpu-index".to_string(), "1".to_string())].into(),
            node_lock: None,
        });
        assert_eq!(b["metadata"]["uid"], "u");
        assert_eq!(b["metadata"]["annotations"]["volcano.sh/gpu-index"], "1");
        assert_eq!(b["target"]["name"], "n");
        assert_eq!(b["kind"], "Binding");
    }
}
