//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's algorithm
//! (`tools/leaderelection/leaderelection.go`), so Basalt and a running Go vc-scheduler share one
//! lock with one meaning during a rollout (behaviour contract §1.1; API facts
//! `kubernetes-api.md` §6).
//!
//! * Each attempt GETs the Lease. A missing Lease is CREATEd holding it (`leaseTransitions` 0).
//! * A Lease held by another identity is left alone while its record is fresh: fresh means
//!   `leaseDurationSeconds` have not passed on the **local monotonic clock** since this candidate
//!   last *observed the record change* (the remote `renewTime` is never compared with the local
//!   wall clock, so clock skew between machines does not matter).
//! * Otherwise the new record is written with a PUT carrying the `resourceVersion` of the GET
//!   (optimistic concurrency: a 409 means someone else wrote first and this attempt failed).
//!   Renewing keeps `acquireTime` and `leaseTransitions`; taking over sets `acquireTime` and
//!   increments `leaseTransitions`.
//! * Candidates retry every `retryPeriod` (jittered by up to ×1.2, as client-go's `JitterUntil`);
//!   the leader renews every `retryPeriod` and **stops leading as soon as `renewDeadline` has
//!   passed since the start of its last successful renewal** ([`Leadership::is_leading`] turns
//!   false at that instant, without waiting for a request to fail). Seeing the Lease held by
//!   another identity also ends leadership at once (client-go keeps retrying until the deadline;
//!   stepping down earlier is the safe side of the same rule).
//! * [`Leadership::release`] on graceful shutdown writes `holderIdentity: ""`,
//!   `leaseDurationSeconds: 1`, as client-go's `ReleaseOnCancel`.
//!
//! Only the verbs Volcano's ClusterRole grants on `leases` are used: get, create, update (§7).
//!
//! The algorithm runs over two small traits, [`LeaseStore`] (get/create/replace of the one
//! Lease) and [`Clock`] (monotonic now + sleep), so it is tested with an in-memory store and a
//! hand-driven clock; [`KubeLeaseStore`] and [`TokioClock`] are the production implementations.

use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Volcano's default Lease namespace (`--leader-elect-resource-namespace`, §1.1).
pub const DEFAULT_NAMESPACE: &str = "volcano-system";
/// Volcano's Lease name when not exactly one `--scheduler-name` is given (§1.1).
pub const DEFAULT_LEASE_NAME: &str = "volcano";
/// Volcano's default `--leader-elect-lease-duration` (15 s).
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
/// Volcano's default `--leader-elect-renew-deadline` (10 s).
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// Volcano's default `--leader-elect-retry-period` (2 s).
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);
/// client-go's `JitterFactor`: a candidate waits `retryPeriod × (1 + r × 1.2)`, `r` in [0, 1).
const JITTER_FACTOR: f64 = 1.2;

/// The Lease name Volcano uses: the scheduler name when exactly one `--scheduler-name` is given,
/// otherwise `volcano` (`cmd/scheduler/app/server.go`, §1.1).
pub fn lease_name(scheduler_names: &[String]) -> String {
    match scheduler_names {
        [one] => one.clone(),
        _ => DEFAULT_LEASE_NAME.to_string(),
    }
}

/// An identity as Volcano builds it: `<hostname>_<random UUID>` (§1.1), so two processes on one
/// host, or a restarted process, never share an identity.
///
/// The hostname is read as Go's `os.Hostname` does on Linux (`/proc/sys/kernel/hostname`), falling
/// back to `$HOSTNAME`. Errors: [`LeaderError::Hostname`] when neither gives a non-empty name.
pub fn default_identity() -> Result<String, LeaderError> {
    let from_proc = std::fs::read_to_string("/proc/sys/kernel/hostname").ok();
    let host = from_proc
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().map(|h| h.trim().to_string()).filter(|h| !h.is_empty()))
        .ok_or(LeaderError::Hostname)?;
    Ok(format!("{host}_{}", random_uuid()))
}

/// A random version-4 UUID string (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`) from the process's
/// randomly seeded hasher keys; uniqueness, not secrecy, is what an identity needs.
fn random_uuid() -> String {
    let hi = random_u64();
    let lo = random_u64();
    let b = ((hi as u128) << 64) | lo as u128;
    // Version 4, variant 10xx.
    let b = (b & !(0xf_u128 << 76)) | (0x4_u128 << 76);
    let b = (b & !(0x3_u128 << 62)) | (0x2_u128 << 62);
    let h = format!("{b:032x}");
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

/// 64 random bits: std seeds `RandomState` keys from the OS once per thread and steps them on every
/// `RandomState::new`, so every call differs; mixed with the time and pid for good measure.
fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    h.write_u32(std::process::id());
    h.finish()
}

/// Leader-election settings; [`LeaderConfig::volcano_defaults`] gives Volcano's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderConfig {
    /// Namespace of the Lease (`volcano-system`).
    pub namespace: String,
    /// Name of the Lease (see [`lease_name`]).
    pub name: String,
    /// This candidate's `holderIdentity` (see [`default_identity`]); must not be empty.
    pub identity: String,
    /// How long a candidate waits, after it last saw the record change, before taking the Lease
    /// from another holder; written as `leaseDurationSeconds` (whole seconds, at least 1).
    pub lease_duration: Duration,
    /// How long the leader keeps leading without a successful renewal. Less than
    /// `lease_duration`.
    pub renew_deadline: Duration,
    /// Time between attempts (candidates jitter it up to ×1.2). `1.2 × retry_period` is less
    /// than `renew_deadline`.
    pub retry_period: Duration,
}

impl LeaderConfig {
    /// Volcano's defaults (lease 15 s, renew deadline 10 s, retry 2 s, namespace
    /// `volcano-system`) for a Lease `name` and an `identity`.
    pub fn volcano_defaults(name: impl Into<String>, identity: impl Into<String>) -> Self {
        LeaderConfig {
            namespace: DEFAULT_NAMESPACE.to_string(),
            name: name.into(),
            identity: identity.into(),
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
        }
    }

    /// client-go's `NewLeaderElector` checks: `lease_duration > renew_deadline >
    /// 1.2 × retry_period > 0`, a whole number of seconds of at least 1 for `lease_duration`,
    /// non-empty namespace, name and identity.
    pub fn validate(&self) -> Result<(), LeaderError> {
        let bad = |field: &'static str, reason: String| Err(LeaderError::InvalidConfig { field, reason });
        if self.namespace.is_empty() {
            return bad("namespace", "must not be empty".into());
        }
        if self.name.is_empty() {
            return bad("name", "must not be empty".into());
        }
        if self.identity.is_empty() {
            return bad("identity", "must not be empty".into());
        }
        if self.retry_period.is_zero() {
            return bad("retry_period", "must be greater than zero".into());
        }
        if self.lease_duration < Duration::from_secs(1) || self.lease_duration.subsec_nanos() != 0 {
            return bad("lease_duration", format!("must be a whole number of seconds ≥ 1, got {:?}", self.lease_duration));
        }
        if self.lease_duration <= self.renew_deadline {
            return bad(
                "lease_duration",
                format!("must be greater than renew_deadline ({:?} ≤ {:?})", self.lease_duration, self.renew_deadline),
            );
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return bad(
                "renew_deadline",
                format!(
                    "must be greater than {JITTER_FACTOR} × retry_period ({:?} ≤ {JITTER_FACTOR} × {:?})",
                    self.renew_deadline, self.retry_period
                ),
            );
        }
        Ok(())
    }
}

/// Errors of leader election.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaderError {
    /// A [`LeaderConfig`] field breaks client-go's rules.
    #[error("invalid leader election config: {field}: {reason}")]
    InvalidConfig {
        /// The field, e.g. `renew_deadline`.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// No hostname to build the identity from.
    #[error("cannot build a leader election identity: no hostname (/proc/sys/kernel/hostname and $HOSTNAME are empty)")]
    Hostname,
}

/// Errors of one [`LeaseStore`] call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// 409: the Lease changed since it was read (replace), or exists already (create).
    #[error("conflict: the Lease was written by someone else")]
    Conflict,
    /// Any other failure (transport, 403, 5xx, …), with the message.
    #[error("{0}")]
    Other(String),
}

/// The one Lease the election runs on: get/create/replace, nothing else (the verbs Volcano's
/// RBAC grants, §7). `replace` must honour `metadata.resourceVersion` as a precondition.
pub trait LeaseStore: Send + Sync {
    /// The Lease, or `None` when it does not exist (404).
    fn get(&self) -> BoxFuture<'_, Result<Option<Lease>, StoreError>>;
    /// Creates the Lease; [`StoreError::Conflict`] when it exists.
    fn create(&self, lease: Lease) -> BoxFuture<'_, Result<Lease, StoreError>>;
    /// Replaces the Lease if its `resourceVersion` still equals `lease.metadata.resourceVersion`;
    /// [`StoreError::Conflict`] otherwise.
    fn replace(&self, lease: Lease) -> BoxFuture<'_, Result<Lease, StoreError>>;
}

/// A monotonic clock the election measures with, and sleeps on.
pub trait Clock: Send + Sync {
    /// Now, monotonic.
    fn now(&self) -> Instant;
    /// Resolves once [`Clock::now`] has reached `deadline`.
    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// The real clock: tokio's timer (so `tokio::time::pause` also drives it).
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioClock;

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)))
    }
}

/// [`LeaseStore`] over the Kubernetes API: `GET`/`POST`/`PUT` on
/// `/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}`.
#[derive(Clone)]
pub struct KubeLeaseStore {
    api: Api<Lease>,
    name: String,
}

impl KubeLeaseStore {
    /// The store for Lease `name` in `namespace`.
    pub fn new(client: kube::Client, namespace: &str, name: &str) -> Self {
        KubeLeaseStore { api: Api::namespaced(client, namespace), name: name.to_string() }
    }
}

impl fmt::Debug for KubeLeaseStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeLeaseStore").field("name", &self.name).finish_non_exhaustive()
    }
}

fn store_error(op: &str, name: &str, e: kube::Error) -> StoreError {
    match &e {
        kube::Error::Api(s) if s.is_conflict() || s.is_already_exists() => StoreError::Conflict,
        _ => StoreError::Other(format!("{op} Lease {name}: {e}")),
    }
}

impl LeaseStore for KubeLeaseStore {
    fn get(&self) -> BoxFuture<'_, Result<Option<Lease>, StoreError>> {
        Box::pin(async move { self.api.get_opt(&self.name).await.map_err(|e| store_error("get", &self.name, e)) })
    }

    fn create(&self, lease: Lease) -> BoxFuture<'_, Result<Lease, StoreError>> {
        Box::pin(async move {
            self.api.create(&PostParams::default(), &lease).await.map_err(|e| store_error("create", &self.name, e))
        })
    }

    fn replace(&self, lease: Lease) -> BoxFuture<'_, Result<Lease, StoreError>> {
        Box::pin(async move {
            self.api.replace(&self.name, &PostParams::default(), &lease).await.map_err(|e| store_error("update", &self.name, e))
        })
    }
}

/// The outcome of one acquire-or-renew attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Attempt {
    /// This candidate holds the Lease now (created, taken over or renewed).
    Leading,
    /// Another identity holds a fresh record.
    HeldBy(String),
    /// The store call failed; nothing is known to have changed.
    Failed(StoreError),
}

/// One candidate's view: client-go's `LeaderElector` minus the loops.
struct Elector {
    store: Arc<dyn LeaseStore>,
    clock: Arc<dyn Clock>,
    cfg: LeaderConfig,
    /// The last Lease read or written (its spec is the observed record, its metadata the
    /// resourceVersion to write against).
    observed: Option<Lease>,
    /// Local time at which `observed`'s spec was first seen in its current form.
    observed_time: Option<Instant>,
}

fn spec_of(lease: &Lease) -> LeaseSpec {
    lease.spec.clone().unwrap_or_default()
}

fn holder_of(spec: &LeaseSpec) -> &str {
    spec.holder_identity.as_deref().unwrap_or("")
}

fn wall_now() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

impl Elector {
    fn new(store: Arc<dyn LeaseStore>, clock: Arc<dyn Clock>, cfg: LeaderConfig) -> Self {
        Elector { store, clock, cfg, observed: None, observed_time: None }
    }

    /// Whether the last observed record names this candidate (client-go's `IsLeader`).
    fn observed_self(&self) -> bool {
        self.observed.as_ref().is_some_and(|l| holder_of(&spec_of(l)) == self.cfg.identity)
    }

    fn lease_seconds(&self) -> i32 {
        i32::try_from(self.cfg.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }

    fn record(&self, now: &MicroTime) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.cfg.identity.clone()),
            lease_duration_seconds: Some(self.lease_seconds()),
            acquire_time: Some(now.clone()),
            renew_time: Some(now.clone()),
            lease_transitions: Some(0),
            ..LeaseSpec::default()
        }
    }

    fn observe(&mut self, lease: Lease, at: Instant) {
        self.observed = Some(lease);
        self.observed_time = Some(at);
    }

    /// client-go's `tryAcquireOrRenew`.
    async fn try_acquire_or_renew(&mut self) -> Attempt {
        let wall = wall_now();
        let mut record = self.record(&wall);
        let old = match self.store.get().await {
            Ok(l) => l,
            Err(e) => return Attempt::Failed(e),
        };
        let Some(old) = old else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.cfg.name.clone()),
                    namespace: Some(self.cfg.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(record),
            };
            return match self.store.create(lease).await {
                Ok(created) => {
                    let now = self.clock.now();
                    self.observe(created, now);
                    Attempt::Leading
                }
                Err(e) => Attempt::Failed(e),
            };
        };
        let old_spec = spec_of(&old);
        let changed = self.observed.as_ref().is_none_or(|o| spec_of(o) != old_spec);
        if changed {
            let now = self.clock.now();
            self.observe(old.clone(), now);
        } else {
            // Same record: keep the time it was first seen, take the newest metadata.
            self.observed = Some(old.clone());
        }
        let holder = holder_of(&old_spec).to_string();
        let i_hold = holder == self.cfg.identity;
        if !holder.is_empty() && !i_hold && self.observed_record_valid() {
            return Attempt::HeldBy(holder);
        }
        if i_hold {
            record.acquire_time = old_spec.acquire_time.clone();
            record.lease_transitions = old_spec.lease_transitions;
        } else {
            record.lease_transitions = Some(old_spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        let lease = Lease { metadata: old.metadata.clone(), spec: Some(record) };
        match self.store.replace(lease).await {
            Ok(written) => {
                let now = self.clock.now();
                self.observe(written, now);
                Attempt::Leading
            }
            Err(e) => Attempt::Failed(e),
        }
    }

    /// Whether the observed record is still fresh: `leaseDurationSeconds` of the record (this
    /// config's when absent or not positive) have not passed since it was observed.
    fn observed_record_valid(&self) -> bool {
        let (Some(lease), Some(at)) = (&self.observed, self.observed_time) else { return false };
        let secs = spec_of(lease).lease_duration_seconds.filter(|s| *s > 0).map(|s| s as u64);
        let duration = secs.map(Duration::from_secs).unwrap_or(self.cfg.lease_duration);
        self.clock.now() < at + duration
    }

    /// client-go's `release`: clears the holder if this candidate still holds the Lease.
    async fn release(&mut self) -> Result<(), StoreError> {
        if !self.observed_self() {
            return Ok(());
        }
        let Some(old) = self.observed.clone() else { return Ok(()) };
        let now = wall_now();
        let spec = LeaseSpec {
            holder_identity: Some(String::new()),
            lease_duration_seconds: Some(1),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            lease_transitions: spec_of(&old).lease_transitions,
            ..LeaseSpec::default()
        };
        let written = self.store.replace(Lease { metadata: old.metadata, spec: Some(spec) }).await?;
        let at = self.clock.now();
        self.observe(written, at);
        Ok(())
    }
}

/// Shared between [`Leadership`] and its renew task.
struct Shared {
    clock: Arc<dyn Clock>,
    /// Reference point for `valid_until_ns`.
    base: Instant,
    /// Leading until `base + valid_until_ns` (the start of the last successful renewal plus
    /// the renew deadline).
    valid_until_ns: AtomicU64,
    /// Set once leadership ended (deadline passed, another holder seen, released).
    ended: AtomicBool,
    /// `true` once ended, for [`Leadership::lost`].
    ended_tx: watch::Sender<bool>,
    /// Forever-leading (leader election disabled).
    unelected: bool,
}

impl Shared {
    fn set_valid_until(&self, t: Instant) {
        let ns = t.saturating_duration_since(self.base).as_nanos().min(u64::MAX as u128) as u64;
        self.valid_until_ns.store(ns, Ordering::Release);
    }

    fn valid_until(&self) -> Instant {
        self.base + Duration::from_nanos(self.valid_until_ns.load(Ordering::Acquire))
    }

    fn end(&self) {
        self.ended.store(true, Ordering::Release);
        self.ended_tx.send_replace(true);
    }
}

/// Holding the Lease. Dropping it stops renewing (without releasing the Lease).
pub struct Leadership {
    shared: Arc<Shared>,
    stop_tx: watch::Sender<bool>,
    task: Option<JoinHandle<Elector>>,
    identity: String,
}

impl fmt::Debug for Leadership {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Leadership")
            .field("identity", &self.identity)
            .field("leading", &self.is_leading())
            .field("unelected", &self.shared.unelected)
            .finish()
    }
}

/// Waits until this process holds the Lease `cfg.namespace/cfg.name` on the cluster behind
/// `client`, then keeps renewing in a background task (needs a tokio runtime). Never gives up
/// while waiting: store errors are logged (warn) and retried every `retry_period`, as client-go.
///
/// Errors: [`LeaderError::InvalidConfig`] for a config client-go would refuse.
pub async fn acquire(client: kube::Client, cfg: LeaderConfig) -> Result<Leadership, LeaderError> {
    let store = Arc::new(KubeLeaseStore::new(client, &cfg.namespace, &cfg.name));
    acquire_with(store, Arc::new(TokioClock), cfg).await
}

/// [`acquire`] over any [`LeaseStore`] and [`Clock`].
pub async fn acquire_with(
    store: Arc<dyn LeaseStore>,
    clock: Arc<dyn Clock>,
    cfg: LeaderConfig,
) -> Result<Leadership, LeaderError> {
    cfg.validate()?;
    let mut elector = Elector::new(store, clock.clone(), cfg.clone());
    let lease = format!("{}/{}", cfg.namespace, cfg.name);
    tracing::info!(lease = %lease, identity = %cfg.identity, "attempting to acquire the leader lease");
    let mut last_holder = String::new();
    loop {
        let start = clock.now();
        let outcome = tokio::select! {
            a = elector.try_acquire_or_renew() => a,
            () = clock.sleep_until(start + cfg.renew_deadline) =>
                Attempt::Failed(StoreError::Other(format!("no answer within {:?}", cfg.renew_deadline))),
        };
        match outcome {
            Attempt::Leading => {
                tracing::info!(lease = %lease, identity = %cfg.identity, "acquired the leader lease");
                return Ok(Leadership::start(elector, start));
            }
            Attempt::HeldBy(holder) => {
                if holder != last_holder {
                    tracing::info!(lease = %lease, holder = %holder, "the leader lease is held by another identity and has not expired");
                    last_holder = holder;
                }
            }
            Attempt::Failed(e) => tracing::warn!(lease = %lease, error = %e, "cannot acquire the leader lease; retrying"),
        }
        let jitter = cfg.retry_period.mul_f64(JITTER_FACTOR * (random_u64() as f64 / u64::MAX as f64));
        clock.sleep_until(start + cfg.retry_period + jitter).await;
    }
}

impl Leadership {
    /// A leadership that never ends: for `--leader-elect=false` (Volcano's Helm default), so
    /// the scheduling loop checks one type either way.
    pub fn unelected() -> Self {
        let (ended_tx, _) = watch::channel(false);
        let (stop_tx, _) = watch::channel(false);
        let shared = Shared {
            clock: Arc::new(TokioClock),
            base: Instant::now(),
            valid_until_ns: AtomicU64::new(u64::MAX),
            ended: AtomicBool::new(false),
            ended_tx,
            unelected: true,
        };
        Leadership { shared: Arc::new(shared), stop_tx, task: None, identity: String::new() }
    }

    fn start(elector: Elector, renewed_at: Instant) -> Self {
        let clock = elector.clock.clone();
        let (ended_tx, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            clock: clock.clone(),
            base: renewed_at,
            valid_until_ns: AtomicU64::new(0),
            ended: AtomicBool::new(false),
            ended_tx,
            unelected: false,
        });
        shared.set_valid_until(renewed_at + elector.cfg.renew_deadline);
        let (stop_tx, stop_rx) = watch::channel(false);
        let identity = elector.cfg.identity.clone();
        let task = tokio::spawn(renew_loop(elector, shared.clone(), stop_rx, renewed_at));
        Leadership { shared, stop_tx, task: Some(task), identity }
    }

    /// Whether this process may act as the leader now: the renew deadline has not passed since
    /// the start of the last successful renewal, and no other holder has been seen. Cheap (two
    /// atomic loads and a clock read): check it before every bind.
    pub fn is_leading(&self) -> bool {
        let s = &self.shared;
        if s.unelected {
            return true;
        }
        !s.ended.load(Ordering::Acquire) && s.clock.now() < s.valid_until()
    }

    /// This candidate's `holderIdentity` (empty for [`Leadership::unelected`]).
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Resolves once leadership has ended (renewals failed past the renew deadline, another
    /// holder took the Lease, or it was released). Never resolves for
    /// [`Leadership::unelected`]. Volcano exits on this (§1.1).
    pub fn lost(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut rx = self.shared.ended_tx.subscribe();
        async move {
            // An error means every sender is gone: nothing can lead any more.
            let _ = rx.wait_for(|ended| *ended).await;
        }
    }

    /// Graceful shutdown: stops renewing and, if still leading, clears `holderIdentity` (and sets
    /// `leaseDurationSeconds: 1`) so a standby takes over at its next retry. A failed write is
    /// logged (warn); the Lease then expires on its own.
    pub async fn release(mut self) {
        let Some(task) = self.task.take() else { return };
        let still_leading = self.is_leading();
        self.stop_tx.send_replace(true);
        let mut elector = match task.await {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e, "the leader renew task failed; the Lease is not released");
                self.shared.end();
                return;
            }
        };
        self.shared.end();
        if !still_leading {
            return;
        }
        let lease = format!("{}/{}", elector.cfg.namespace, elector.cfg.name);
        match elector.release().await {
            Ok(()) => tracing::info!(lease = %lease, "released the leader lease"),
            Err(e) => tracing::warn!(lease = %lease, error = %e, "cannot release the leader lease; it expires on its own"),
        }
    }
}

impl Drop for Leadership {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.stop_tx.send_replace(true);
        }
    }
}

/// The leader's loop: every `retry_period` after the previous attempt started, renew; give up
/// when `renew_deadline` passes after the start of the last successful renewal.
async fn renew_loop(mut elector: Elector, shared: Arc<Shared>, mut stop: watch::Receiver<bool>, mut last: Instant) -> Elector {
    let clock = elector.clock.clone();
    let cfg = elector.cfg.clone();
    let lease = format!("{}/{}", cfg.namespace, cfg.name);
    let mut attempt_start = last;
    loop {
        let deadline = shared.valid_until();
        let next = attempt_start + cfg.retry_period;
        tokio::select! {
            _ = stop.wait_for(|s| *s) => return elector,
            () = clock.sleep_until(next.min(deadline)) => {}
        }
        if clock.now() >= deadline {
            tracing::error!(lease = %lease, since = ?last, "failed to renew the leader lease within the renew deadline; stopped leading");
            shared.end();
            return elector;
        }
        attempt_start = clock.now();
        let outcome = tokio::select! {
            _ = stop.wait_for(|s| *s) => return elector,
            a = elector.try_acquire_or_renew() => Some(a),
            () = clock.sleep_until(deadline) => None,
        };
        match outcome {
            Some(Attempt::Leading) => {
                last = attempt_start;
                shared.set_valid_until(attempt_start + cfg.renew_deadline);
            }
            Some(Attempt::HeldBy(holder)) => {
                tracing::error!(lease = %lease, holder = %holder, "the leader lease is held by another identity; stopped leading");
                shared.end();
                return elector;
            }
            Some(Attempt::Failed(e)) => tracing::warn!(lease = %lease, error = %e, "failed to renew the leader lease; retrying"),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// An in-memory Lease with the apiserver's resourceVersion rules, and fault switches.
    #[derive(Default)]
    struct MemStore {
        lease: Mutex<Option<Lease>>,
        rv: AtomicU64,
        /// Every call fails with `Other`.
        down: AtomicBool,
        /// The next replace fails with `Conflict` (another writer got in between).
        conflict_next: AtomicBool,
        calls: AtomicU64,
    }

    impl MemStore {
        fn spec(&self) -> LeaseSpec {
            self.lease.lock().unwrap().as_ref().map(spec_of).expect("lease exists")
        }

        /// Writes the spec as another process would (bumps the resourceVersion).
        fn write_as_other(&self, spec: LeaseSpec) {
            let mut g = self.lease.lock().unwrap();
            let rv = self.rv.fetch_add(1, Ordering::SeqCst) + 1;
            let mut meta = g.as_ref().map(|l| l.metadata.clone()).unwrap_or_default();
            meta.name = Some("volcano".into());
            meta.resource_version = Some(rv.to_string());
            *g = Some(Lease { metadata: meta, spec: Some(spec) });
        }
    }

    impl LeaseStore for MemStore {
        fn get(&self) -> BoxFuture<'_, Result<Option<Lease>, StoreError>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let r = if self.down.load(Ordering::SeqCst) {
                Err(StoreError::Other("apiserver down".into()))
            } else {
                Ok(self.lease.lock().unwrap().clone())
            };
            Box::pin(async move { r })
        }

        fn create(&self, lease: Lease) -> BoxFuture<'_, Result<Lease, StoreError>> {
            let r = self.create_now(lease);
            Box::pin(async move { r })
        }

        fn replace(&self, lease: Lease) -> BoxFuture<'_, Result<Lease, StoreError>> {
            let r = self.replace_now(lease);
            Box::pin(async move { r })
        }
    }

    impl MemStore {
        fn create_now(&self, mut lease: Lease) -> Result<Lease, StoreError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.down.load(Ordering::SeqCst) {
                return Err(StoreError::Other("apiserver down".into()));
            }
            let mut g = self.lease.lock().unwrap();
            if g.is_some() {
                return Err(StoreError::Conflict);
            }
            lease.metadata.resource_version = Some((self.rv.fetch_add(1, Ordering::SeqCst) + 1).to_string());
            *g = Some(lease.clone());
            Ok(lease)
        }

        fn replace_now(&self, mut lease: Lease) -> Result<Lease, StoreError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.down.load(Ordering::SeqCst) {
                return Err(StoreError::Other("apiserver down".into()));
            }
            if self.conflict_next.swap(false, Ordering::SeqCst) {
                return Err(StoreError::Conflict);
            }
            let mut g = self.lease.lock().unwrap();
            let Some(cur) = g.as_ref() else { return Err(StoreError::Other("not found".into())) };
            if cur.metadata.resource_version != lease.metadata.resource_version {
                return Err(StoreError::Conflict);
            }
            lease.metadata.resource_version = Some((self.rv.fetch_add(1, Ordering::SeqCst) + 1).to_string());
            *g = Some(lease.clone());
            Ok(lease)
        }
    }

    /// A clock that moves only when the test says so.
    struct FakeClock {
        base: Instant,
        offset: watch::Sender<Duration>,
    }

    impl FakeClock {
        fn new() -> Arc<Self> {
            Arc::new(FakeClock { base: Instant::now(), offset: watch::channel(Duration::ZERO).0 })
        }

        fn advance(&self, d: Duration) {
            self.offset.send_modify(|o| *o += d);
        }
    }

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            self.base + *self.offset.borrow()
        }

        fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
            let mut rx = self.offset.subscribe();
            let base = self.base;
            Box::pin(async move {
                let _ = rx.wait_for(|o| base + *o >= deadline).await;
            })
        }
    }

    /// Lets spawned tasks on the current-thread runtime run to their next wait.
    async fn settle() {
        for _ in 0..64 {
            tokio::task::yield_now().await;
        }
    }

    /// Advances the fake clock in 100 ms steps, letting tasks run after each.
    async fn run_for(clock: &FakeClock, d: Duration) {
        let step = Duration::from_millis(100);
        let mut done = Duration::ZERO;
        while done < d {
            clock.advance(step);
            done += step;
            settle().await;
        }
    }

    fn cfg(identity: &str) -> LeaderConfig {
        LeaderConfig::volcano_defaults("volcano", identity)
    }

    /// A record written by another process; `renewal` makes each renewal's record distinct.
    fn other_holder(name: &str, transitions: i32, renewal: i64) -> LeaseSpec {
        let t = |s| MicroTime(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000 + s).unwrap());
        LeaseSpec {
            holder_identity: Some(name.into()),
            lease_duration_seconds: Some(15),
            acquire_time: Some(t(0)),
            renew_time: Some(t(renewal)),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn leadership_can_be_shared_across_tasks() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Leadership>();
    }

    #[test]
    fn lease_name_follows_volcano() {
        assert_eq!(lease_name(&["my-sched".to_string()]), "my-sched");
        assert_eq!(lease_name(&[]), "volcano");
        assert_eq!(lease_name(&["a".to_string(), "b".to_string()]), "volcano");
    }

    #[test]
    fn identity_is_hostname_underscore_uuid_and_unique() {
        let a = default_identity().unwrap();
        let b = default_identity().unwrap();
        assert_ne!(a, b);
        let (host, uuid) = a.rsplit_once('_').unwrap();
        assert!(!host.is_empty());
        let parts: Vec<_> = uuid.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
        assert_eq!(&uuid[14..15], "4", "version nibble");
    }

    #[test]
    fn config_rules_of_client_go() {
        assert_eq!(cfg("me").validate(), Ok(()));
        let mut c = cfg("me");
        c.renew_deadline = Duration::from_secs(15);
        assert!(matches!(c.validate(), Err(LeaderError::InvalidConfig { field: "lease_duration", .. })));
        let mut c = cfg("me");
        c.retry_period = Duration::from_secs(9);
        assert!(matches!(c.validate(), Err(LeaderError::InvalidConfig { field: "renew_deadline", .. })));
        let mut c = cfg("");
        c.identity.clear();
        assert!(matches!(c.validate(), Err(LeaderError::InvalidConfig { field: "identity", .. })));
        let mut c = cfg("me");
        c.lease_duration = Duration::from_millis(15_500);
        assert!(matches!(c.validate(), Err(LeaderError::InvalidConfig { field: "lease_duration", .. })));
    }

    #[tokio::test]
    async fn acquires_a_missing_lease_by_creating_it() {
        let store = Arc::new(MemStore::default());
        let clock = FakeClock::new();
        let l = acquire_with(store.clone(), clock.clone(), cfg("me")).await.unwrap();
        assert!(l.is_leading());
        let spec = store.spec();
        assert_eq!(spec.holder_identity.as_deref(), Some("me"));
        assert_eq!(spec.lease_duration_seconds, Some(15));
        assert_eq!(spec.lease_transitions, Some(0));
        assert!(spec.acquire_time.is_some() && spec.renew_time.is_some());
    }

    #[tokio::test]
    async fn acquires_a_released_lease_at_once_and_counts_a_transition() {
        let store = Arc::new(MemStore::default());
        let mut released = other_holder("", 3, 0);
        released.lease_duration_seconds = Some(1);
        store.write_as_other(released);
        let clock = FakeClock::new();
        let l = acquire_with(store.clone(), clock.clone(), cfg("me")).await.unwrap();
        assert!(l.is_leading());
        assert_eq!(store.spec().holder_identity.as_deref(), Some("me"));
        assert_eq!(store.spec().lease_transitions, Some(4));
    }

    #[tokio::test]
    async fn does_not_take_a_fresh_lease_held_by_another() {
        let store = Arc::new(MemStore::default());
        store.write_as_other(other_holder("other", 2, 0));
        let clock = FakeClock::new();
        let task = tokio::spawn(acquire_with(store.clone(), clock.clone(), cfg("me")));
        settle().await;
        // The other holder keeps renewing every 2 s: the record keeps changing, so it stays fresh
        // for ever even though 60 s pass.
        for renewal in 1..=30 {
            run_for(&clock, Duration::from_secs(2)).await;
            store.write_as_other(other_holder("other", 2, renewal));
        }
        assert!(!task.is_finished());
        assert_eq!(store.spec().holder_identity.as_deref(), Some("other"));
        task.abort();
    }

    #[tokio::test]
    async fn takes_an_expired_lease_and_increments_transitions() {
        let store = Arc::new(MemStore::default());
        store.write_as_other(other_holder("other", 2, 0));
        let clock = FakeClock::new();
        let task = tokio::spawn(acquire_with(store.clone(), clock.clone(), cfg("me")));
        settle().await;
        // The other holder stopped renewing. 14.9 s after this candidate first saw the record it
        // is still fresh (renewTime is not trusted against the local clock).
        run_for(&clock, Duration::from_millis(14_900)).await;
        assert!(!task.is_finished());
        assert_eq!(store.spec().holder_identity.as_deref(), Some("other"));
        // After 15 s (+ at most one jittered retry period of 2 × 2.2 s) it is taken.
        run_for(&clock, Duration::from_millis(5_000)).await;
        assert!(task.is_finished());
        let l = task.await.unwrap().unwrap();
        assert!(l.is_leading());
        let spec = store.spec();
        assert_eq!(spec.holder_identity.as_deref(), Some("me"));
        assert_eq!(spec.lease_transitions, Some(3));
    }

    #[tokio::test]
    async fn renewal_keeps_acquire_time_and_transitions() {
        let store = Arc::new(MemStore::default());
        let clock = FakeClock::new();
        let l = acquire_with(store.clone(), clock.clone(), cfg("me")).await.unwrap();
        let first = store.spec();
        let rv0 = store.rv.load(Ordering::SeqCst);
        run_for(&clock, Duration::from_secs(30)).await;
        assert!(l.is_leading(), "renewals every 2 s keep leadership past the 10 s deadline");
        let now = store.spec();
        assert!(store.rv.load(Ordering::SeqCst) >= rv0 + 14, "about one renewal per retry period");
        assert_eq!(now.acquire_time, first.acquire_time);
        assert_eq!(now.lease_transitions, Some(0));
        assert_eq!(now.holder_identity.as_deref(), Some("me"));
    }

    #[tokio::test]
    async fn a_renewal_that_meets_a_conflict_fails() {
        let store = Arc::new(MemStore::default());
        let clock = FakeClock::new();
        let mut e = Elector::new(store.clone(), clock.clone(), cfg("me"));
        assert_eq!(e.try_acquire_or_renew().await, Attempt::Leading);
        store.conflict_next.store(true, Ordering::SeqCst);
        assert_eq!(e.try_acquire_or_renew().await, Attempt::Failed(StoreError::Conflict));
        // The next attempt, with a fresh read, succeeds again.
        assert_eq!(e.try_acquire_or_renew().await, Attempt::Leading);
    }

    #[tokio::test]
    async fn a_write_against_a_stale_resource_version_is_refused() {
        let store = Arc::new(MemStore::default());
        let clock = FakeClock::new();
        let mut e = Elector::new(store.clone(), clock.clone(), cfg("me"));
        assert_eq!(e.try_acquire_or_renew().await, Attempt::Leading);
        let stale = e.observed.clone().unwrap();
        store.write_as_other(other_holder("other", 1, 0));
        assert_eq!(store.replace(stale).await, Err(StoreError::Conflict));
    }

    #[tokio::test]
    async fn stops_leading_when_renewals_fail_for_the_renew_deadline() {
        let store = Arc::new(MemStore::default());
        let clock = FakeClock::new();
        let l = acquire_with(store.clone(), clock.clone(), cfg("me")).await.unwrap();
        let lost = tokio::spawn(l.lost());
        store.down.store(true, Ordering::SeqCst);
        let calls0 = store.calls.load(Ordering::SeqCst);
        run_for(&clock, Duration::from_millis(9_900)).await;
        assert!(l.is_leading());
        assert!(!lost.is_finished());
        assert!(store.calls.load(Ordering::SeqCst) > calls0, "it kept trying to renew");
        // The deadline passes: not leading at that instant, before any task runs.
        clock.advance(Duration::from_millis(100));
        assert!(!l.is_leading());
        settle().await;
        assert!(lost.is_finished());
        // The apiserver comes back: the ended leadership does not come back with it.
        store.down.store(false, Ordering::SeqCst);
        run_for(&clock, Duration::from_secs(5)).await;
        assert!(!l.is_leading());
    }

    #[tokio::test]
    async fn a_hanging_renewal_still_ends_leadership_at_the_deadline() {
        /// A store whose replace never answers.
        struct Hang(MemStore);
        impl LeaseStore for Hang {
            fn get(&self) -> BoxFuture<'_, Result<Option<Lease>, StoreError>> {
                self.0.get()
            }
            fn create(&self, lease: Lease) -> BoxFuture<'_, Result<Lease, StoreError>> {
                self.0.create(lease)
            }
            fn replace(&self, _: Lease) -> BoxFuture<'_, Result<Lease, StoreError>> {
                Box::pin(futures::future::pending())
            }
        }
        let store = Arc::new(Hang(MemStore::default()));
        let clock = FakeClock::new();
        let l = acquire_with(store.clone(), clock.clone(), cfg("me")).await.unwrap();
        let lost = tokio::spawn(l.lost());
        run_for(&clock, Duration::from_millis(9_900)).await;
        assert!(l.is_leading());
        run_for(&clock, Duration::from_millis(200)).await;
        assert!(!l.is_leading());
        assert!(lost.is_finished());
    }

    #[tokio::test]
    async fn seeing_another_holder_ends_leadership_at_once() {
        let store = Arc::new(MemStore::default());
        let clock = FakeClock::new();
        let l = acquire_with(store.clone(), clock.clone(), cfg("me")).await.unwrap();
        store.write_as_other(other_holder("other", 1, 0));
        run_for(&clock, Duration::from_millis(2_100)).await;
        assert!(!l.is_leading());
        assert_eq!(store.spec().holder_identity.as_deref(), Some("other"), "it does not fight back");
    }

    #[tokio::test]
    async fn release_clears_the_holder_and_a_standby_takes_over_at_once() {
        let store = Arc::new(MemStore::default());
        let clock = FakeClock::new();
        let l = acquire_with(store.clone(), clock.clone(), cfg("me")).await.unwrap();
        let lost = l.lost();
        l.release().await;
        lost.await;
        let spec = store.spec();
        assert_eq!(spec.holder_identity.as_deref(), Some(""));
        assert_eq!(spec.lease_duration_seconds, Some(1));
        assert_eq!(spec.lease_transitions, Some(0));
        // The standby saw nothing before; a cleared holder is free without waiting.
        let standby = acquire_with(store.clone(), clock.clone(), cfg("standby")).await.unwrap();
        assert!(standby.is_leading());
        assert_eq!(store.spec().holder_identity.as_deref(), Some("standby"));
        assert_eq!(store.spec().lease_transitions, Some(1));
    }

    #[tokio::test]
    async fn unelected_leads_for_ever() {
        let l = Leadership::unelected();
        assert!(l.is_leading());
        let lost = tokio::spawn(l.lost());
        settle().await;
        assert!(!lost.is_finished());
        lost.abort();
    }
}
