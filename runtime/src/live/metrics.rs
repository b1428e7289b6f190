//! Observability of the live scheduler: Volcano's scheduler metrics under their names, labels and
//! bucket layouts (behaviour contract §8.1, `pkg/scheduler/metrics/{metrics,queue}.go`), Basalt's
//! own `basalt_*` metrics, and [`serve_metrics`], which serves them on `/metrics` through
//! [`crate::plumbing::http`] (§1.1: Volcano serves them on `--listen-address` `:8080`).
//!
//! `/metrics` is the OpenMetrics 1.0 text format (prometheus-client). Counters there carry the
//! `_total` suffix on their samples, so `volcano_schedule_attempts_total` reads as in Volcano.
//!
//! Only what Basalt can fill is registered: no per-task `Predicate`/`Scoring` stage times (the
//! core reads no clock inside an action), no `Watched`/`PreBound` task stages and no `PreBind`
//! stage (Basalt has no PreBind step). docs/live-scheduler.md lists them.
//! `volcano_total_preemption_attempts` is a gauge here (its value only grows): an OpenMetrics
//! counter's sample would be named `…_total`, and Volcano's is not.
//!
//! Recording takes a lock on labelled families (prometheus-client's `Family`) and on Basalt's
//! bookkeeping: call it after a cycle, never from inside the session's hot path.

use std::collections::{HashSet, VecDeque};
use std::hash::Hash;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus_client::encoding::EncodeMetric;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets_range, Histogram};
use prometheus_client::registry::Registry;
use tokio::sync::watch;

use crate::plumbing::http::{serve_encoded, HttpServer, ServeError};

/// Window over which `basalt_pods_bound_per_second` is averaged.
pub const BIND_RATE_WINDOW: Duration = Duration::from_secs(10);

/// One label with a free value (`action`, `job_id`, `queue_name`).
type Label = [(&'static str, String); 1];
/// One label with a value from a fixed set (`stage`, `result`, `kind`).
type Fixed = [(&'static str, &'static str); 1];
/// A float gauge.
type FGauge = Gauge<f64, AtomicU64>;
/// A family of histograms sharing one bucket layout.
type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

// Volcano's bucket layouts (`prometheus.ExponentialBucketsRange(min, max, count)`).
fn session_buckets() -> Histogram {
    Histogram::new(exponential_buckets_range(1.0, 5000.0, 20))
}
fn action_buckets() -> Histogram {
    Histogram::new(exponential_buckets_range(1.0, 2000.0, 20))
}
fn plugin_buckets() -> Histogram {
    Histogram::new(exponential_buckets_range(0.1, 100.0, 15))
}
fn task_buckets() -> Histogram {
    Histogram::new(exponential_buckets_range(50.0, 60000.0, 30))
}
fn stage_buckets() -> Histogram {
    Histogram::new(exponential_buckets_range(0.1, 500.0, 20))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A gauge family whose label sets are replaced as a whole: label sets not in the latest update
/// are removed (a deleted queue or a job that became schedulable leaves no stale series).
#[derive(Debug)]
struct Swept<L: Clone + Hash + Eq> {
    family: Family<L, FGauge>,
    live: Mutex<HashSet<L>>,
}

impl<L: Clone + Hash + Eq + std::fmt::Debug + Send + Sync + 'static> Swept<L>
where
    Family<L, FGauge>: EncodeMetric,
{
    fn new() -> Self {
        Swept { family: Family::default(), live: Mutex::new(HashSet::new()) }
    }

    fn set_all(&self, values: impl IntoIterator<Item = (L, f64)>) {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let mut now = HashSet::with_capacity(live.len());
        for (l, v) in values {
            self.family.get_or_create(&l).set(v);
            now.insert(l);
        }
        for gone in live.difference(&now) {
            self.family.remove(gone);
        }
        *live = now;
    }
}

/// Label `OnSession` of `volcano_plugin_scheduling_latency_milliseconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginPhase {
    /// `OnSessionOpen`.
    OnSessionOpen,
    /// `OnSessionClose`.
    OnSessionClose,
}

impl PluginPhase {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginPhase::OnSessionOpen => "OnSessionOpen",
            PluginPhase::OnSessionClose => "OnSessionClose",
        }
    }
}

/// Label `stage` of `volcano_task_scheduling_latency_milliseconds` (time from pod creation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStage {
    /// Allocated to a node in memory (the cycle's decision), not yet bound.
    Assumed,
    /// The binding was accepted.
    Bound,
}

impl TaskStage {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStage::Assumed => "Assumed",
            TaskStage::Bound => "Bound",
        }
    }
}

/// Label `stage` of `volcano_scheduling_stage_duration_milliseconds` (per-task stage time).
/// Volcano's `Predicate`, `Scoring` and `PreBind` are not measured (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedulingStage {
    /// Bind: from the decision (pod assumed) to the binding accepted.
    Bind,
}

impl SchedulingStage {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            SchedulingStage::Bind => "Bind",
        }
    }
}

/// Label `result` of `volcano_schedule_attempts_total` (kube-scheduler's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleResult {
    /// The pod was placed.
    Scheduled,
    /// No node fits.
    Unschedulable,
    /// An internal problem.
    Error,
}

impl ScheduleResult {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleResult::Scheduled => "scheduled",
            ScheduleResult::Unschedulable => "unschedulable",
            ScheduleResult::Error => "error",
        }
    }
}

/// Label `kind` of `basalt_api_writes_total`: one per kind of API write the scheduler makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiWriteKind {
    /// `POST pods/{name}/binding`.
    Binding,
    /// A pod status write (`PodScheduled` condition, nominated node).
    PodStatus,
    /// An Event.
    Event,
    /// A PodGroup status write.
    PodGroup,
    /// A Queue status write.
    QueueStatus,
    /// A pod patch removing Volcano's scheduling gate ([`super::gate_removal`]).
    GateRemoval,
}

impl ApiWriteKind {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiWriteKind::Binding => "binding",
            ApiWriteKind::PodStatus => "pod_status",
            ApiWriteKind::Event => "event",
            ApiWriteKind::PodGroup => "podgroup",
            ApiWriteKind::QueueStatus => "queue_status",
            ApiWriteKind::GateRemoval => "gate_removal",
        }
    }
}

/// Resource amounts of one queue for one aspect (allocated, request, deserved, …).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueResources {
    /// CPU in millicores.
    pub milli_cpu: f64,
    /// Memory in bytes.
    pub memory_bytes: f64,
    /// Other resources by name (e.g. `nvidia.com/gpu`), in Volcano's scalar units (milli).
    pub scalar: Vec<(String, f64)>,
}

/// What one session knows about one queue (the `proportion` plugin's accounting at close).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueMetrics {
    /// `queue_name` label.
    pub name: String,
    /// `volcano_queue_allocated_*`.
    pub allocated: QueueResources,
    /// `volcano_queue_request_*`.
    pub request: QueueResources,
    /// `volcano_queue_deserved_*`.
    pub deserved: QueueResources,
    /// `volcano_queue_share`.
    pub share: f64,
    /// `volcano_queue_weight`.
    pub weight: f64,
    /// `volcano_queue_overused` (1 or 0).
    pub overused: bool,
    /// `volcano_queue_inqueue_*`.
    pub inqueue: QueueResources,
    /// `volcano_queue_capacity_*` (`spec.capability`; `None`: no series, as Volcano records it
    /// only when the capability is set).
    pub capability: Option<QueueResources>,
    /// `volcano_queue_real_capacity_*` (`None`: no series; only `capacity` records it).
    pub real_capability: Option<QueueResources>,
}

/// The three gauges of one resource aspect of queues.
#[derive(Debug)]
struct QueueResourceGauges {
    milli_cpu: Swept<Label>,
    memory_bytes: Swept<Label>,
    scalar: Swept<[(&'static str, String); 2]>,
}

impl QueueResourceGauges {
    fn register(registry: &mut Registry, aspect: &str, help: &str) -> Self {
        let g = QueueResourceGauges { milli_cpu: Swept::new(), memory_bytes: Swept::new(), scalar: Swept::new() };
        registry.register(
            format!("queue_{aspect}_milli_cpu"),
            format!("{help} CPU count for one queue"),
            g.milli_cpu.family.clone(),
        );
        registry.register(
            format!("queue_{aspect}_memory_bytes"),
            format!("{help} memory for one queue"),
            g.memory_bytes.family.clone(),
        );
        registry.register(
            format!("queue_{aspect}_scalar_resources"),
            format!("{help} scalar resources for one queue"),
            g.scalar.family.clone(),
        );
        g
    }

    fn set<'a>(&self, queues: impl Iterator<Item = (&'a str, &'a QueueResources)> + Clone) {
        self.milli_cpu.set_all(queues.clone().map(|(q, r)| ([("queue_name", q.to_string())], r.milli_cpu)));
        self.memory_bytes.set_all(queues.clone().map(|(q, r)| ([("queue_name", q.to_string())], r.memory_bytes)));
        self.scalar.set_all(queues.flat_map(|(q, r)| {
            r.scalar.iter().map(move |(name, v)| ([("queue_name", q.to_string()), ("resource", name.clone())], *v))
        }));
    }
}

/// `basalt_pods_bound_per_second` bookkeeping: (time, `basalt_pods_bound_total` then).
#[derive(Debug, Default)]
struct BindRate {
    samples: VecDeque<(Instant, u64)>,
}

/// The conf reload counts already added to `basalt_conf_reloads_total`.
#[derive(Debug, Default)]
struct ReloadsSeen {
    success: u64,
    failure: u64,
}

/// Every metric of the live scheduler, in one registry.
pub struct Metrics {
    registry: Registry,
    e2e_scheduling_latency: Histogram,
    open_session_duration: Histogram,
    action_scheduling_latency: Histograms<Label>,
    plugin_scheduling_latency: Histograms<[(&'static str, String); 2]>,
    task_scheduling_latency: Histograms<Fixed>,
    scheduling_stage_duration: Histograms<Fixed>,
    schedule_attempts: Family<Fixed, Counter>,
    unschedule_task_count: Swept<Label>,
    unschedule_job_count: Gauge,
    queue_allocated: QueueResourceGauges,
    queue_request: QueueResourceGauges,
    queue_deserved: QueueResourceGauges,
    queue_inqueue: QueueResourceGauges,
    queue_capacity: QueueResourceGauges,
    queue_real_capacity: QueueResourceGauges,
    queue_share: Swept<Label>,
    pod_preemption_victims: Gauge,
    total_preemption_attempts: Gauge,
    eviction_transactions: Family<Fixed, Counter>,
    queue_weight: Swept<Label>,
    queue_overused: Swept<Label>,
    pods_bound: Counter,
    bind_failures: Counter,
    api_writes: Family<Fixed, Counter>,
    pods_bound_per_second: FGauge,
    conf_reloads: Family<Fixed, Counter>,
    leader: Gauge,
    bind_rate: Mutex<BindRate>,
    reloads_seen: Mutex<ReloadsSeen>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("registry", &self.registry).finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// All metrics registered, at zero; labelled series appear when first recorded.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let v = registry.sub_registry_with_prefix("volcano");
        let e2e_scheduling_latency = session_buckets();
        v.register(
            "e2e_scheduling_latency_milliseconds",
            "Duration of a single scheduling session execution in milliseconds (open, actions, close)",
            e2e_scheduling_latency.clone(),
        );
        let open_session_duration = session_buckets();
        v.register(
            "open_session_duration_milliseconds",
            "Duration of opening a scheduling session in milliseconds",
            open_session_duration.clone(),
        );
        let action_scheduling_latency: Histograms<Label> = Family::new_with_constructor(action_buckets);
        v.register(
            "action_scheduling_latency_milliseconds",
            "Action scheduling latency in milliseconds",
            action_scheduling_latency.clone(),
        );
        let plugin_scheduling_latency: Histograms<[(&'static str, String); 2]> = Family::new_with_constructor(plugin_buckets);
        v.register(
            "plugin_scheduling_latency_milliseconds",
            "Plugin scheduling latency in milliseconds",
            plugin_scheduling_latency.clone(),
        );
        let task_scheduling_latency: Histograms<Fixed> = Family::new_with_constructor(task_buckets);
        v.register(
            "task_scheduling_latency_milliseconds",
            "Task scheduling latency from creation to various stages in milliseconds",
            task_scheduling_latency.clone(),
        );
        let scheduling_stage_duration: Histograms<Fixed> = Family::new_with_constructor(stage_buckets);
        v.register(
            "scheduling_stage_duration_milliseconds",
            "Duration of per-task scheduling stages (Predicate, Scoring, PreBind, Bind) in milliseconds",
            scheduling_stage_duration.clone(),
        );
        let schedule_attempts = Family::<Fixed, Counter>::default();
        v.register("schedule_attempts", "Number of attempts to schedule pods, by the result", schedule_attempts.clone());
        let unschedule_task_count = Swept::new();
        v.register("unschedule_task_count", "Number of tasks could not be scheduled", unschedule_task_count.family.clone());
        let unschedule_job_count = Gauge::default();
        v.register("unschedule_job_count", "Number of jobs could not be scheduled", unschedule_job_count.clone());
        let queue_allocated = QueueResourceGauges::register(v, "allocated", "Allocated");
        let queue_request = QueueResourceGauges::register(v, "request", "Request");
        let queue_deserved = QueueResourceGauges::register(v, "deserved", "Deserved");
        let queue_inqueue = QueueResourceGauges::register(v, "inqueue", "Inqueue");
        let queue_capacity = QueueResourceGauges::register(v, "capacity", "Capacity");
        let queue_real_capacity = QueueResourceGauges::register(v, "real_capacity", "Real capacity");
        let pod_preemption_victims = Gauge::default();
        v.register("pod_preemption_victims", "Number of selected preemption victims", pod_preemption_victims.clone());
        // A gauge, not a counter: OpenMetrics names every counter's sample `<name>_total`, and
        // Volcano's sample is `volcano_total_preemption_attempts` (it only ever increases).
        let total_preemption_attempts = Gauge::default();
        v.register(
            "total_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            total_preemption_attempts.clone(),
        );
        let eviction_transactions = Family::<Fixed, Counter>::default();
        v.register(
            "eviction_transactions",
            "Committed scheduler statements that evicted at least one pod, by action",
            eviction_transactions.clone(),
        );
        let queue_share = Swept::new();
        v.register("queue_share", "Share for one queue", queue_share.family.clone());
        let queue_weight = Swept::new();
        v.register("queue_weight", "Weight for one queue", queue_weight.family.clone());
        let queue_overused = Swept::new();
        v.register("queue_overused", "If one queue is overused", queue_overused.family.clone());

        let b = registry.sub_registry_with_prefix("basalt");
        let pods_bound = Counter::default();
        b.register("pods_bound", "Pods bound (bindings the apiserver accepted)", pods_bound.clone());
        let bind_failures = Counter::default();
        b.register("bind_failures", "Bindings the apiserver refused or that failed in transport", bind_failures.clone());
        let api_writes = Family::<Fixed, Counter>::default();
        b.register("api_writes", "API write requests issued, by kind", api_writes.clone());
        let pods_bound_per_second = FGauge::default();
        b.register(
            "pods_bound_per_second",
            "Pods bound per second over the cycles of the last 10 seconds",
            pods_bound_per_second.clone(),
        );
        let conf_reloads = Family::<Fixed, Counter>::default();
        b.register("conf_reloads", "Scheduler conf reloads, by result (success, failure)", conf_reloads.clone());
        let leader = Gauge::default();
        b.register("leader", "1 while this process holds the leader lease (or runs without election), else 0", leader.clone());

        Metrics {
            registry,
            e2e_scheduling_latency,
            open_session_duration,
            action_scheduling_latency,
            plugin_scheduling_latency,
            task_scheduling_latency,
            scheduling_stage_duration,
            schedule_attempts,
            unschedule_task_count,
            unschedule_job_count,
            queue_allocated,
            queue_request,
            queue_deserved,
            queue_inqueue,
            queue_capacity,
            queue_real_capacity,
            queue_share,
            pod_preemption_victims,
            total_preemption_attempts,
            eviction_transactions,
            queue_weight,
            queue_overused,
            pods_bound,
            bind_failures,
            api_writes,
            pods_bound_per_second,
            conf_reloads,
            leader,
            bind_rate: Mutex::new(BindRate::default()),
            reloads_seen: Mutex::new(ReloadsSeen::default()),
        }
    }

    /// `volcano_e2e_scheduling_latency_milliseconds`: one whole cycle (open, actions, close).
    pub fn observe_cycle(&self, d: Duration) {
        self.e2e_scheduling_latency.observe(ms(d));
    }

    /// `volcano_open_session_duration_milliseconds`.
    pub fn observe_open_session(&self, d: Duration) {
        self.open_session_duration.observe(ms(d));
    }

    /// `volcano_action_scheduling_latency_milliseconds{action}`; `action` as in the conf
    /// (`allocate`).
    pub fn observe_action(&self, action: &str, d: Duration) {
        self.action_scheduling_latency.get_or_create(&[("action", action.to_string())]).observe(ms(d));
    }

    /// `volcano_plugin_scheduling_latency_milliseconds{plugin,OnSession}`.
    pub fn observe_plugin(&self, plugin: &str, phase: PluginPhase, d: Duration) {
        let l = [("plugin", plugin.to_string()), ("OnSession", phase.as_str().to_string())];
        self.plugin_scheduling_latency.get_or_create(&l).observe(ms(d));
    }

    /// `volcano_task_scheduling_latency_milliseconds{stage}`: time from pod creation to `stage`.
    pub fn observe_task_stage(&self, stage: TaskStage, since_creation: Duration) {
        self.task_scheduling_latency.get_or_create(&[("stage", stage.as_str())]).observe(ms(since_creation));
    }

    /// `volcano_scheduling_stage_duration_milliseconds{stage}`.
    pub fn observe_scheduling_stage(&self, stage: SchedulingStage, d: Duration) {
        self.scheduling_stage_duration.get_or_create(&[("stage", stage.as_str())]).observe(ms(d));
    }

    /// `volcano_schedule_attempts_total{result}` += `n`.
    pub fn record_schedule_attempts(&self, result: ScheduleResult, n: u64) {
        self.schedule_attempts.get_or_create(&[("result", result.as_str())]).inc_by(n);
    }

    /// `volcano_unschedule_task_count{job_id}` for every job with unschedulable tasks after a
    /// session (jobs not listed lose their series), and `volcano_unschedule_job_count` =
    /// `jobs`. `job_id` is the job (PodGroup) name, as Volcano labels it.
    pub fn set_unschedulable<'a>(&self, tasks_per_job: impl IntoIterator<Item = (&'a str, u64)>, jobs: i64) {
        self.unschedule_task_count.set_all(tasks_per_job.into_iter().map(|(j, n)| ([("job_id", j.to_string())], n as f64)));
        self.unschedule_job_count.set(jobs);
    }

    /// All `volcano_queue_*` gauges from one session's queues; queues not listed (deleted)
    /// lose their series, as Volcano's `DeleteQueueMetrics`.
    pub fn set_queues(&self, queues: &[QueueMetrics]) {
        let all = || queues.iter();
        self.queue_allocated.set(all().map(|q| (q.name.as_str(), &q.allocated)));
        self.queue_request.set(all().map(|q| (q.name.as_str(), &q.request)));
        self.queue_deserved.set(all().map(|q| (q.name.as_str(), &q.deserved)));
        self.queue_inqueue.set(all().map(|q| (q.name.as_str(), &q.inqueue)));
        self.queue_capacity.set(all().filter_map(|q| Some((q.name.as_str(), q.capability.as_ref()?))));
        self.queue_real_capacity.set(all().filter_map(|q| Some((q.name.as_str(), q.real_capability.as_ref()?))));
        let label = |q: &QueueMetrics| [("queue_name", q.name.clone())];
        self.queue_share.set_all(all().map(|q| (label(q), q.share)));
        self.queue_weight.set_all(all().map(|q| (label(q), q.weight)));
        self.queue_overused.set_all(all().map(|q| (label(q), if q.overused { 1.0 } else { 0.0 })));
    }

    /// One cycle's preemption counters: `volcano_total_preemption_attempts` += `attempts`,
    /// `volcano_pod_preemption_victims` = `last_victims` when preempt considered a node (kept
    /// otherwise, as Volcano's gauge keeps its last value), and
    /// `volcano_eviction_transactions_total{action}` += each action's committed statements
    /// with evictions.
    pub fn record_preemption(&self, attempts: u64, last_victims: Option<u32>, transactions: &[(&'static str, u32)]) {
        self.total_preemption_attempts.inc_by(attempts as i64);
        if let Some(v) = last_victims {
            self.pod_preemption_victims.set(i64::from(v));
        }
        for &(action, n) in transactions {
            self.eviction_transactions.get_or_create(&[("action", action)]).inc_by(u64::from(n));
        }
    }

    /// One binding's outcome: `basalt_pods_bound_total` or `basalt_bind_failures_total` += 1.
    /// The request itself is counted by [`Metrics::record_api_write`] with
    /// [`ApiWriteKind::Binding`].
    pub fn record_bind(&self, bound: bool) {
        if bound {
            self.pods_bound.inc();
        } else {
            self.bind_failures.inc();
        }
    }

    /// `basalt_api_writes_total{kind}` += 1: one API write request issued.
    pub fn record_api_write(&self, kind: ApiWriteKind) {
        self.api_writes.get_or_create(&[("kind", kind.as_str())]).inc();
    }

    /// Updates `basalt_pods_bound_per_second` at `now` (call once per cycle): pods bound since
    /// the last sample at or before `now − 10 s` (or the first sample), divided by the time
    /// since it; 0 before there are two samples.
    pub fn observe_bind_rate(&self, now: Instant) {
        let total = self.pods_bound.get();
        let mut r = self.bind_rate.lock().unwrap_or_else(|p| p.into_inner());
        r.samples.push_back((now, total));
        let window_start = now.checked_sub(BIND_RATE_WINDOW);
        while r.samples.len() > 2 && window_start.is_some_and(|w| r.samples[1].0 <= w) {
            r.samples.pop_front();
        }
        let (t0, n0) = r.samples[0];
        let span = now.saturating_duration_since(t0).as_secs_f64();
        let rate = if span > 0.0 { total.saturating_sub(n0) as f64 / span } else { 0.0 };
        self.pods_bound_per_second.set(rate);
    }

    /// Brings `basalt_conf_reloads_total{result}` up to the [`ConfWatcher`] counts (monotonic
    /// totals; call after each cycle).
    ///
    /// [`ConfWatcher`]: super::reload::ConfWatcher
    pub fn sync_conf_reloads(&self, reloads: u64, failures: u64) {
        let mut seen = self.reloads_seen.lock().unwrap_or_else(|p| p.into_inner());
        if reloads > seen.success {
            self.conf_reloads.get_or_create(&[("result", "success")]).inc_by(reloads - seen.success);
            seen.success = reloads;
        }
        if failures > seen.failure {
            self.conf_reloads.get_or_create(&[("result", "failure")]).inc_by(failures - seen.failure);
            seen.failure = failures;
        }
    }

    /// `basalt_leader` = 1 when leading, else 0.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// The registry in the OpenMetrics text format (ends with `# EOF`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail; an encoder error would be a bug in a metric type.
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "cannot encode the metrics");
        }
        out
    }
}

/// Serves `GET /metrics` (OpenMetrics text) on `addr` (`:8080` or `host:port`) until `shutdown`
/// turns true (or its sender is dropped). Needs a tokio runtime.
///
/// Errors: a bad address or a failed bind, before anything is served.
pub async fn serve_metrics(addr: &str, metrics: Arc<Metrics>, shutdown: watch::Receiver<bool>) -> Result<HttpServer, ServeError> {
    serve_encoded(addr, Arc::new(move || metrics.encode()), shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plumbing::http::tests::get;

    /// The value of the sample line starting with `series ` (exact series, labels included).
    fn sample(text: &str, series: &str) -> Option<f64> {
        text.lines().find_map(|l| l.strip_prefix(series).and_then(|r| r.strip_prefix(' ')).map(|v| v.parse().unwrap()))
    }

    #[test]
    fn volcano_names_labels_and_buckets() {
        let m = Metrics::new();
        m.observe_cycle(Duration::from_millis(3));
        m.observe_open_session(Duration::from_micros(1500));
        m.observe_action("allocate", Duration::from_millis(2));
        m.observe_plugin("gang", PluginPhase::OnSessionOpen, Duration::from_micros(200));
        m.observe_task_stage(TaskStage::Bound, Duration::from_millis(120));
        m.observe_scheduling_stage(SchedulingStage::Bind, Duration::from_micros(300));
        m.record_schedule_attempts(ScheduleResult::Scheduled, 7);
        m.set_unschedulable([("job-a", 3)], 1);
        let q = QueueMetrics {
            name: "default".into(),
            allocated: QueueResources {
                milli_cpu: 1500.0,
                memory_bytes: 2048.0,
                scalar: vec![("nvidia.com/gpu".into(), 1000.0)],
            },
            share: 0.25,
            weight: 1.0,
            overused: true,
            ..QueueMetrics::default()
        };
        m.set_queues(&[q]);
        let t = m.encode();
        assert!(t.ends_with("# EOF\n"));
        assert_eq!(sample(&t, "volcano_e2e_scheduling_latency_milliseconds_count"), Some(1.0));
        assert_eq!(sample(&t, "volcano_e2e_scheduling_latency_milliseconds_sum"), Some(3.0));
        // Volcano's ExponentialBucketsRange(1, 5000, 20): 1 ms first, 5000 ms last.
        assert_eq!(sample(&t, "volcano_e2e_scheduling_latency_milliseconds_bucket{le=\"1.0\"}"), Some(0.0));
        assert!(t.contains("volcano_e2e_scheduling_latency_milliseconds_bucket{le=\"5000.0"));
        assert_eq!(sample(&t, "volcano_open_session_duration_milliseconds_count"), Some(1.0));
        assert_eq!(sample(&t, "volcano_action_scheduling_latency_milliseconds_count{action=\"allocate\"}"), Some(1.0));
        assert_eq!(
            sample(&t, "volcano_plugin_scheduling_latency_milliseconds_count{plugin=\"gang\",OnSession=\"OnSessionOpen\"}"),
            Some(1.0)
        );
        assert_eq!(sample(&t, "volcano_task_scheduling_latency_milliseconds_count{stage=\"Bound\"}"), Some(1.0));
        assert_eq!(sample(&t, "volcano_scheduling_stage_duration_milliseconds_count{stage=\"Bind\"}"), Some(1.0));
        assert_eq!(sample(&t, "volcano_schedule_attempts_total{result=\"scheduled\"}"), Some(7.0));
        assert_eq!(sample(&t, "volcano_unschedule_task_count{job_id=\"job-a\"}"), Some(3.0));
        assert_eq!(sample(&t, "volcano_unschedule_job_count"), Some(1.0));
        assert_eq!(sample(&t, "volcano_queue_allocated_milli_cpu{queue_name=\"default\"}"), Some(1500.0));
        assert_eq!(sample(&t, "volcano_queue_allocated_memory_bytes{queue_name=\"default\"}"), Some(2048.0));
        assert_eq!(
            sample(&t, "volcano_queue_allocated_scalar_resources{queue_name=\"default\",resource=\"nvidia.com/gpu\"}"),
            Some(1000.0)
        );
        assert_eq!(sample(&t, "volcano_queue_share{queue_name=\"default\"}"), Some(0.25));
        assert_eq!(sample(&t, "volcano_queue_weight{queue_name=\"default\"}"), Some(1.0));
        assert_eq!(sample(&t, "volcano_queue_overused{queue_name=\"default\"}"), Some(1.0));
        assert_eq!(sample(&t, "volcano_queue_inqueue_milli_cpu{queue_name=\"default\"}"), Some(0.0));
        assert!(!t.contains("volcano_queue_capacity_milli_cpu{"), "no capability set: no capacity series");
        assert!(!t.contains("volcano_queue_real_capacity_milli_cpu{"), "proportion reports no real capacity");
        assert_eq!(sample(&t, "volcano_total_preemption_attempts"), Some(0.0));
        assert_eq!(sample(&t, "volcano_pod_preemption_victims"), Some(0.0));
    }

    /// The preemption metrics (volcano-behaviour.md §8.1): attempts add up across cycles, the
    /// victims gauge keeps the last node's count (a cycle without preempt leaves it), and the
    /// eviction transactions count per action.
    #[test]
    fn preemption_metrics_add_up_and_keep_the_last_victims() {
        let m = Metrics::new();
        m.record_preemption(2, Some(3), &[("preempt", 1)]);
        m.record_preemption(1, Some(1), &[("preempt", 2), ("reclaim", 1)]);
        m.record_preemption(0, None, &[]);
        let t = m.encode();
        assert_eq!(sample(&t, "volcano_total_preemption_attempts"), Some(3.0));
        assert_eq!(sample(&t, "volcano_pod_preemption_victims"), Some(1.0));
        assert_eq!(sample(&t, "volcano_eviction_transactions_total{action=\"preempt\"}"), Some(3.0));
        assert_eq!(sample(&t, "volcano_eviction_transactions_total{action=\"reclaim\"}"), Some(1.0));
    }

    /// `capacity`'s gauges: capacity only for a queue with `spec.capability`, real capacity and
    /// inqueue in the same units as allocated; a queue that drops its capability loses the
    /// series.
    #[test]
    fn capacity_and_inqueue_gauges() {
        let m = Metrics::new();
        let gpu = |v: f64| QueueResources { milli_cpu: 4000.0, memory_bytes: 8.0, scalar: vec![("nvidia.com/gpu".into(), v)] };
        let q1 = QueueMetrics {
            name: "q1".into(),
            inqueue: QueueResources { milli_cpu: 500.0, ..QueueResources::default() },
            capability: Some(gpu(2000.0)),
            real_capability: Some(gpu(1000.0)),
            ..QueueMetrics::default()
        };
        let q2 = QueueMetrics { name: "q2".into(), real_capability: Some(gpu(3000.0)), ..QueueMetrics::default() };
        m.set_queues(&[q1.clone(), q2]);
        let t = m.encode();
        assert_eq!(sample(&t, "volcano_queue_inqueue_milli_cpu{queue_name=\"q1\"}"), Some(500.0));
        assert_eq!(sample(&t, "volcano_queue_capacity_milli_cpu{queue_name=\"q1\"}"), Some(4000.0));
        assert_eq!(
            sample(&t, "volcano_queue_capacity_scalar_resources{queue_name=\"q1\",resource=\"nvidia.com/gpu\"}"),
            Some(2000.0)
        );
        assert_eq!(sample(&t, "volcano_queue_capacity_milli_cpu{queue_name=\"q2\"}"), None, "q2 has no capability");
        assert_eq!(
            sample(&t, "volcano_queue_real_capacity_scalar_resources{queue_name=\"q2\",resource=\"nvidia.com/gpu\"}"),
            Some(3000.0)
        );
        m.set_queues(&[QueueMetrics { capability: None, ..q1 }]);
        let t = m.encode();
        assert_eq!(sample(&t, "volcano_queue_capacity_milli_cpu{queue_name=\"q1\"}"), None);
        assert_eq!(sample(&t, "volcano_queue_real_capacity_milli_cpu{queue_name=\"q2\"}"), None, "q2 is gone");
    }

    #[test]
    fn stale_jobs_and_deleted_queues_lose_their_series() {
        let m = Metrics::new();
        m.set_unschedulable([("job-a", 3), ("job-b", 1)], 2);
        m.set_queues(&[
            QueueMetrics { name: "q1".into(), weight: 1.0, ..QueueMetrics::default() },
            QueueMetrics { name: "q2".into(), weight: 2.0, ..QueueMetrics::default() },
        ]);
        m.set_unschedulable([("job-b", 4)], 1);
        m.set_queues(&[QueueMetrics { name: "q2".into(), weight: 3.0, ..QueueMetrics::default() }]);
        let t = m.encode();
        assert_eq!(sample(&t, "volcano_unschedule_task_count{job_id=\"job-a\"}"), None);
        assert_eq!(sample(&t, "volcano_unschedule_task_count{job_id=\"job-b\"}"), Some(4.0));
        assert_eq!(sample(&t, "volcano_queue_weight{queue_name=\"q1\"}"), None);
        assert_eq!(sample(&t, "volcano_queue_allocated_milli_cpu{queue_name=\"q1\"}"), None);
        assert_eq!(sample(&t, "volcano_queue_weight{queue_name=\"q2\"}"), Some(3.0));
    }

    #[test]
    fn basalt_counters_rate_reloads_and_leader() {
        let m = Metrics::new();
        let t0 = Instant::now();
        m.observe_bind_rate(t0);
        for _ in 0..100 {
            m.record_bind(true);
            m.record_api_write(ApiWriteKind::Binding);
        }
        m.observe_bind_rate(t0 + Duration::from_secs(1));
        for _ in 0..200 {
            m.record_bind(true);
        }
        m.record_bind(false);
        m.record_api_write(ApiWriteKind::PodStatus);
        m.record_api_write(ApiWriteKind::QueueStatus);
        m.observe_bind_rate(t0 + Duration::from_secs(2));
        let t = m.encode();
        assert_eq!(sample(&t, "basalt_pods_bound_total"), Some(300.0));
        assert_eq!(sample(&t, "basalt_bind_failures_total"), Some(1.0));
        assert_eq!(sample(&t, "basalt_api_writes_total{kind=\"binding\"}"), Some(100.0));
        assert_eq!(sample(&t, "basalt_api_writes_total{kind=\"pod_status\"}"), Some(1.0));
        assert_eq!(sample(&t, "basalt_api_writes_total{kind=\"queue_status\"}"), Some(1.0));
        assert_eq!(sample(&t, "basalt_pods_bound_per_second"), Some(150.0), "300 pods over 2 s");
        // Nothing bound for a while: the window slides past the binds.
        m.observe_bind_rate(t0 + Duration::from_secs(20));
        assert_eq!(sample(&m.encode(), "basalt_pods_bound_per_second"), Some(0.0));

        m.sync_conf_reloads(2, 1);
        m.sync_conf_reloads(3, 1);
        m.set_leader(true);
        let t = m.encode();
        assert_eq!(sample(&t, "basalt_conf_reloads_total{result=\"success\"}"), Some(3.0));
        assert_eq!(sample(&t, "basalt_conf_reloads_total{result=\"failure\"}"), Some(1.0));
        assert_eq!(sample(&t, "basalt_leader"), Some(1.0));
        m.set_leader(false);
        assert_eq!(sample(&m.encode(), "basalt_leader"), Some(0.0));
    }

    #[tokio::test]
    async fn metrics_are_served_over_tcp_and_stop_on_shutdown() {
        let m = Arc::new(Metrics::new());
        m.observe_action("allocate", Duration::from_millis(4));
        m.record_bind(true);
        let (stop_tx, stop_rx) = watch::channel(false);
        let srv = serve_metrics("127.0.0.1:0", m.clone(), stop_rx).await.unwrap();
        let (code, head, body) = get(srv.local_addr, "/metrics").await;
        assert_eq!(code, 200);
        assert!(head.to_ascii_lowercase().contains("content-type: application/openmetrics-text; version=1.0.0"), "{head}");
        for name in [
            "volcano_e2e_scheduling_latency_milliseconds",
            "volcano_open_session_duration_milliseconds",
            "volcano_action_scheduling_latency_milliseconds_count{action=\"allocate\"} 1",
            "volcano_unschedule_job_count",
            "basalt_pods_bound_total 1",
            "basalt_pods_bound_per_second",
            "basalt_leader",
        ] {
            assert!(body.contains(name), "{name} missing from\n{body}");
        }
        assert_eq!(get(srv.local_addr, "/nope").await.0, 404);
        stop_tx.send(true).unwrap();
        srv.handle.await.unwrap();
        assert!(tokio::net::TcpStream::connect(srv.local_addr).await.is_err(), "the listener is closed");
    }
}
