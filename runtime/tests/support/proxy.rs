//! [`FaultProxy`]: a fault-injecting HTTP proxy between a client under test (`basalt scheduler`)
//! and the [`TestApiserver`]. The client speaks plain HTTP/1.1 to `http://127.0.0.1:PORT`
//! ([`FaultProxy::write_kubeconfig`]); the proxy forwards each request over HTTPS to the real
//! server with the client's own `Authorization` header, so the server sees the client's
//! identity and RBAC applies as without the proxy.
//!
//! The test holds the proxy and changes what it does while the client runs:
//! * [`Rule`]s match requests ([`ApiRequest`]: verb, resource, subresource, namespace, name,
//!   User-Agent) and answer them with an error status (500/503/504, 429 with `Retry-After`),
//!   delay them, hold them until the rule is removed, forward them and drop the answer, reset
//!   the connection, or run a test action before forwarding (a second client acting first);
//! * watch streams open now can be dropped (connection reset), stalled (silent for ever, the
//!   connection kept open) or ended with an in-stream `410 Gone` ERROR event;
//! * every request is recorded with its arrival time and status code ([`FaultProxy::requests`]),
//!   so a test can count what the client sent while a fault lasted.
//!
//! When the server cannot be reached (stopped), the client's connection is closed without an
//! answer, as the client would see a refused connection.

use super::{Error, Result, TestApiserver};
use futures::future::BoxFuture;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use kube::config::{AuthInfo, KubeConfigOptions, Kubeconfig};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;

/// The body type of the proxy's answers.
type ProxyBody = BoxBody<Bytes, Error>;

/// Where a watch stream's copier sends the frames of the answer's body.
type FrameTx = mpsc::Sender<std::result::Result<Frame<Bytes>, Error>>;

/// One request as the proxy saw it. Path fields follow the apiserver's request info: for
/// `/api/v1/namespaces/ns/pods/p/binding`, group `""`, resource `pods`, namespace `ns`, name
/// `p`, subresource `binding`.
#[derive(Clone, Debug, Default)]
pub struct ApiRequest {
    /// Arrival at the proxy.
    pub at: Option<Instant>,
    /// HTTP method.
    pub method: String,
    /// The Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection;
    /// `""` for non-resource paths.
    pub verb: String,
    /// The path, without the query.
    pub path: String,
    /// The query string (empty when none).
    pub query: String,
    /// API group (`""` for the core group).
    pub group: String,
    /// Resource, e.g. `pods`.
    pub resource: String,
    /// Subresource, e.g. `binding`, `status`.
    pub subresource: String,
    /// Namespace (empty for cluster-scoped or all-namespace requests).
    pub namespace: String,
    /// Object name (empty for collections).
    pub name: String,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The status code answered; 0 when the connection was closed without an answer or the
    /// request has not been answered yet.
    pub code: u16,
}

impl ApiRequest {
    fn parse(method: &str, uri: &http::Uri, user_agent: &str) -> ApiRequest {
        let path = uri.path().to_string();
        let query = uri.query().unwrap_or("").to_string();
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (group, rest): (String, &[&str]) = match segs.as_slice() {
            ["api", _v, rest @ ..] => (String::new(), rest),
            ["apis", g, _v, rest @ ..] => (g.to_string(), rest),
            _ => (String::new(), &[]),
        };
        let is_resource = segs.first().is_some_and(|s| *s == "api" || *s == "apis") && !rest.is_empty();
        let (namespace, rest): (String, &[&str]) = match rest {
            ["namespaces", ns, more @ ..] if !more.is_empty() => (ns.to_string(), more),
            other => (String::new(), other),
        };
        let at = |i: usize| rest.get(i).map(|s| s.to_string()).unwrap_or_default();
        let watch = query.split('&').any(|kv| kv == "watch=true" || kv == "watch=1");
        let name = at(1);
        let verb = if !is_resource {
            ""
        } else {
            match method {
                "GET" if watch => "watch",
                "GET" if name.is_empty() => "list",
                "GET" => "get",
                "POST" => "create",
                "PUT" => "update",
                "PATCH" => "patch",
                "DELETE" if name.is_empty() => "deletecollection",
                "DELETE" => "delete",
                _ => "",
            }
        };
        ApiRequest {
            at: Some(Instant::now()),
            method: method.to_string(),
            verb: verb.to_string(),
            path: path.clone(),
            query,
            group,
            resource: at(0),
            subresource: at(2),
            namespace,
            name,
            user_agent: user_agent.to_string(),
            code: 0,
        }
    }

    /// A watch request.
    pub fn is_watch(&self) -> bool {
        self.verb == "watch"
    }

    /// A `pods/binding` create.
    pub fn is_binding(&self) -> bool {
        self.verb == "create" && self.group.is_empty() && self.resource == "pods" && self.subresource == "binding"
    }

    /// A Lease write (the leader's renewals and takeovers).
    pub fn is_lease_write(&self) -> bool {
        self.group == "coordination.k8s.io" && self.resource == "leases" && (self.verb == "update" || self.verb == "create")
    }
}

/// What the proxy does with a request a [`Rule`] matches.
#[derive(Clone)]
pub enum Action {
    /// Answer at once with this status code and a Kubernetes `Status` body, without forwarding;
    /// with `Some(s)`, also the `Retry-After: s` header and `details.retryAfterSeconds` (as the
    /// apiserver's own 429 does).
    Respond {
        /// HTTP status code.
        code: u16,
        /// Seconds for `Retry-After`.
        retry_after: Option<u32>,
    },
    /// Wait this long, then forward.
    Delay(Duration),
    /// Wait until the rule is removed ([`FaultProxy::remove`] / [`FaultProxy::clear`]), then
    /// forward (a client that gave up meanwhile gets nothing).
    Hold,
    /// Forward, wait for the server's answer, then close the connection without passing it on:
    /// the request took effect and the client does not know.
    DropResponse,
    /// Close the connection without forwarding.
    Reset,
    /// Run this (the test's own API calls) first, then forward.
    Before(Arc<dyn Fn(ApiRequest) -> BoxFuture<'static, ()> + Send + Sync>),
}

/// Requests a [`Rule`] applies to.
pub type Matcher = Arc<dyn Fn(&ApiRequest) -> bool + Send + Sync>;

/// A fault: requests that `matches` accepts get `action`, at most `times` of them (None: every
/// one while the rule is installed).
#[derive(Clone)]
pub struct Rule {
    /// Which requests.
    pub matches: Matcher,
    /// What happens to them.
    pub action: Action,
    /// How many requests it applies to at most.
    pub times: Option<usize>,
}

impl Rule {
    /// `action` for every request `matches` accepts.
    pub fn new(matches: impl Fn(&ApiRequest) -> bool + Send + Sync + 'static, action: Action) -> Rule {
        Rule { matches: Arc::new(matches), action, times: None }
    }

    /// Applies to the first `n` matching requests only.
    pub fn times(mut self, n: usize) -> Rule {
        self.times = Some(n);
        self
    }
}

/// What happens to the watch streams open at the time of the command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WatchCmd {
    Drop,
    Stall,
    Expire,
}

struct Installed {
    id: u64,
    rule: Rule,
    used: usize,
}

struct State {
    upstream: kube::Client,
    rules: Mutex<Vec<Installed>>,
    next_rule: AtomicU64,
    removed: watch::Sender<u64>,
    requests: Mutex<Vec<ApiRequest>>,
    watch_cmds: broadcast::Sender<WatchCmd>,
    open_watches: AtomicU64,
    /// `410` ERROR events the server sent in watch streams (not the injected ones).
    gone_seen: AtomicU64,
    /// Senders of stalled streams, kept so those streams never end.
    stalled: Mutex<Vec<FrameTx>>,
}

/// A running proxy; stops when dropped (its connections end with the test's runtime).
pub struct FaultProxy {
    addr: std::net::SocketAddr,
    state: Arc<State>,
    task: JoinHandle<()>,
}

/// A handle to an installed rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleId(u64);

impl FaultProxy {
    /// Starts a proxy to `server` on a free loopback port. Call inside the test's tokio runtime.
    /// Errors: the admin kubeconfig cannot be read, or no port can be bound.
    pub async fn start(server: &TestApiserver) -> Result<FaultProxy> {
        let path = server.admin_kubeconfig();
        let kc = Kubeconfig::read_from(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
        // The client's own token goes through; the proxy adds nothing and retries nothing.
        cfg.auth_info = AuthInfo::default();
        cfg.headers.clear();
        cfg.default_retry = false;
        let upstream = kube::Client::try_from(cfg)?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            upstream,
            rules: Mutex::new(Vec::new()),
            next_rule: AtomicU64::new(1),
            removed: watch::channel(0).0,
            requests: Mutex::new(Vec::new()),
            watch_cmds: broadcast::channel(16).0,
            open_watches: AtomicU64::new(0),
            gone_seen: AtomicU64::new(0),
            stalled: Mutex::new(Vec::new()),
        });
        let st = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let st = st.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| handle(st.clone(), req));
                    // A connection ends with an error when the proxy drops an answer on purpose.
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                });
            }
        });
        Ok(FaultProxy { addr, state, task })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Writes a kubeconfig at `path` with the server of this proxy and the bearer token of the
    /// kubeconfig `identity` (e.g. [`TestApiserver::scheduler_kubeconfig`]).
    /// Errors: `identity` unreadable or without a `token:` line; `path` not writable.
    pub fn write_kubeconfig(&self, identity: &Path, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(identity).map_err(|e| format!("{}: {e}", identity.display()))?;
        let token = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("token:"))
            .map(|t| t.trim().to_string())
            .ok_or_else(|| format!("{}: no token line", identity.display()))?;
        let kc = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n  - name: proxy\n    cluster:\n      server: {}\nusers:\n  - name: through-proxy\n    user:\n      token: {token}\ncontexts:\n  - name: proxy\n    context:\n      cluster: proxy\n      user: through-proxy\n      namespace: default\ncurrent-context: proxy\n",
            self.url()
        );
        std::fs::write(path, kc).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(())
    }

    /// Installs `rule` (after the ones installed before: the first matching rule wins).
    pub fn add(&self, rule: Rule) -> RuleId {
        let id = self.state.next_rule.fetch_add(1, Ordering::Relaxed);
        lock(&self.state.rules).push(Installed { id, rule, used: 0 });
        RuleId(id)
    }

    /// Removes a rule; requests it holds are forwarded now.
    pub fn remove(&self, id: RuleId) {
        lock(&self.state.rules).retain(|r| r.id != id.0);
        self.state.removed.send_modify(|n| *n += 1);
    }

    /// Removes every rule.
    pub fn clear(&self) {
        lock(&self.state.rules).clear();
        self.state.removed.send_modify(|n| *n += 1);
    }

    /// Resets the connections of every watch stream open now (the client sees a broken stream).
    pub fn drop_watches(&self) {
        let _ = self.state.watch_cmds.send(WatchCmd::Drop);
    }

    /// Makes every watch stream open now silent for ever, its connection kept open (a half-open
    /// connection, or a server that stopped sending). New watches are not affected.
    pub fn stall_watches(&self) {
        let _ = self.state.watch_cmds.send(WatchCmd::Stall);
    }

    /// Ends every watch stream open now with an in-stream ERROR event `410 Gone` (reason
    /// `Expired`, "too old resource version"), as the server does when a watch falls out of its
    /// history, then closes the stream.
    pub fn expire_watches(&self) {
        let _ = self.state.watch_cmds.send(WatchCmd::Expire);
    }

    /// Watch streams open now (forwarded and not ended).
    pub fn open_watches(&self) -> u64 {
        self.state.open_watches.load(Ordering::Relaxed)
    }

    /// How many `410 Gone` ERROR events the server itself sent in watch streams (a watch that
    /// resumed from a compacted resourceVersion); injected ones are not counted.
    pub fn gone_events_seen(&self) -> u64 {
        self.state.gone_seen.load(Ordering::Relaxed)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<ApiRequest> {
        lock(&self.state.requests).clone()
    }

    /// Requests that arrived at or after `since` and that `keep` accepts.
    pub fn count_since(&self, since: Instant, keep: impl Fn(&ApiRequest) -> bool) -> usize {
        lock(&self.state.requests).iter().filter(|r| r.at.is_some_and(|t| t >= since) && keep(r)).count()
    }

    /// Requests that arrived in `[from, to)` and that `keep` accepts.
    pub fn count_between(&self, from: Instant, to: Instant, keep: impl Fn(&ApiRequest) -> bool) -> usize {
        lock(&self.state.requests).iter().filter(|r| r.at.is_some_and(|t| t >= from && t < to) && keep(r)).count()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The first installed rule matching `r`, counted as used; None when no rule applies.
fn pick(state: &State, r: &ApiRequest) -> Option<(u64, Action)> {
    let mut rules = lock(&state.rules);
    let found = rules.iter_mut().find(|i| i.rule.times.is_none_or(|n| i.used < n) && (i.rule.matches)(r))?;
    found.used += 1;
    Some((found.id, found.rule.action.clone()))
}

fn status_body(code: u16, retry_after: Option<u32>) -> Bytes {
    let reason = match code {
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        410 => "Expired",
        _ => "Unknown",
    };
    let mut status = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("injected by the fault proxy: {code} {reason}"), "reason": reason, "code": code,
    });
    if let Some(s) = retry_after {
        status["details"] = serde_json::json!({"retryAfterSeconds": s});
    }
    Bytes::from(status.to_string())
}

fn full(b: Bytes) -> ProxyBody {
    Full::new(b).map_err(|never| match never {}).boxed()
}

async fn handle(state: Arc<State>, req: hyper::Request<Incoming>) -> std::result::Result<hyper::Response<ProxyBody>, Error> {
    let ua = req.headers().get(http::header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let info = ApiRequest::parse(req.method().as_str(), req.uri(), &ua);
    let index = {
        let mut reqs = lock(&state.requests);
        reqs.push(info.clone());
        reqs.len() - 1
    };
    let result = respond(&state, req, info).await;
    let code = result.as_ref().map(|r| r.status().as_u16()).unwrap_or(0);
    lock(&state.requests)[index].code = code;
    result
}

async fn respond(
    state: &Arc<State>,
    req: hyper::Request<Incoming>,
    info: ApiRequest,
) -> std::result::Result<hyper::Response<ProxyBody>, Error> {
    let mut drop_response = false;
    if let Some((id, action)) = pick(state, &info) {
        match action {
            Action::Respond { code, retry_after } => {
                let mut b = hyper::Response::builder().status(code).header("content-type", "application/json");
                if let Some(s) = retry_after {
                    b = b.header("retry-after", s.to_string());
                }
                return Ok(b.body(full(status_body(code, retry_after)))?);
            }
            Action::Delay(d) => tokio::time::sleep(d).await,
            Action::Hold => {
                let mut removed = state.removed.subscribe();
                while lock(&state.rules).iter().any(|r| r.id == id) {
                    if removed.changed().await.is_err() {
                        break;
                    }
                }
            }
            Action::DropResponse => drop_response = true,
            Action::Reset => return Err("connection reset by the fault proxy".into()),
            Action::Before(f) => f(info.clone()).await,
        }
    }
    let (parts, body) = req.into_parts();
    let body = body.collect().await?.to_bytes();
    let uri = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/").to_string();
    let mut up = http::Request::builder().method(parts.method.clone()).uri(uri);
    for (k, v) in parts.headers.iter() {
        if k != http::header::HOST && k != http::header::CONNECTION && k != http::header::TRANSFER_ENCODING {
            up = up.header(k, v);
        }
    }
    let up = up.body(kube::client::Body::from(body.to_vec()))?;
    // A watch subscribes before it is sent, so a command given while it starts reaches it.
    let cmds = info.is_watch().then(|| state.watch_cmds.subscribe());
    let resp = state.upstream.send(up).await.map_err(|e| format!("upstream: {e}"))?;
    let (parts, body) = resp.into_parts();
    let mut out = hyper::Response::builder().status(parts.status);
    for (k, v) in parts.headers.iter() {
        if k != http::header::CONNECTION && k != http::header::TRANSFER_ENCODING && k != http::header::CONTENT_LENGTH {
            out = out.header(k, v);
        }
    }
    match cmds {
        Some(cmds) if parts.status.is_success() && !drop_response => {
            let (tx, rx) = mpsc::channel(64);
            tokio::spawn(pump_watch(state.clone(), body, tx, cmds));
            let stream = StreamBody::new(tokio_stream_from(rx));
            Ok(out.body(BodyExt::boxed(stream))?)
        }
        _ => {
            let bytes = body.collect_bytes().await.map_err(|e| format!("upstream body: {e}"))?;
            if drop_response {
                return Err("answer dropped by the fault proxy".into());
            }
            Ok(out.body(full(bytes))?)
        }
    }
}

/// A receiver as a stream of frames.
fn tokio_stream_from(
    rx: mpsc::Receiver<std::result::Result<Frame<Bytes>, Error>>,
) -> impl futures::Stream<Item = std::result::Result<Frame<Bytes>, Error>> + Send + Sync + 'static {
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) })
}

/// Copies a watch stream line by line (whole events only, so an injected event never splits
/// one) until it ends or a command changes it.
async fn pump_watch(state: Arc<State>, mut body: kube::client::Body, tx: FrameTx, mut cmds: broadcast::Receiver<WatchCmd>) {
    state.open_watches.fetch_add(1, Ordering::Relaxed);
    let mut pending: Vec<u8> = Vec::new();
    loop {
        tokio::select! {
            cmd = cmds.recv() => match cmd {
                Ok(WatchCmd::Drop) => {
                    let _ = tx.send(Err("watch dropped by the fault proxy".into())).await;
                    break;
                }
                Ok(WatchCmd::Stall) => {
                    lock(&state.stalled).push(tx);
                    break;
                }
                Ok(WatchCmd::Expire) => {
                    let gone = serde_json::json!({"type": "ERROR", "object": {
                        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": "too old resource version (injected by the fault proxy)", "reason": "Expired", "code": 410}});
                    let _ = tx.send(Ok(Frame::data(Bytes::from(format!("{gone}\n"))))).await;
                    break;
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => break,
            },
            frame = body.frame() => match frame {
                Some(Ok(f)) => {
                    let Ok(data) = f.into_data() else { continue };
                    pending.extend_from_slice(&data);
                    if let Some(end) = pending.iter().rposition(|b| *b == b'\n') {
                        let lines: Vec<u8> = pending.drain(..=end).collect();
                        let text = String::from_utf8_lossy(&lines);
                        let gone = text.lines().filter(|l| l.contains("\"type\":\"ERROR\"") && l.contains("\"code\":410")).count();
                        state.gone_seen.fetch_add(gone as u64, Ordering::Relaxed);
                        if tx.send(Ok(Frame::data(Bytes::from(lines)))).await.is_err() {
                            break;
                        }
                    }
                }
                Some(Err(e)) => {
                    let _ = tx.send(Err(format!("upstream watch: {e}").into())).await;
                    break;
                }
                None => {
                    if !pending.is_empty() {
                        let _ = tx.send(Ok(Frame::data(Bytes::from(std::mem::take(&mut pending))))).await;
                    }
                    break;
                }
            },
        }
    }
    state.open_watches.fetch_sub(1, Ordering::Relaxed);
}
