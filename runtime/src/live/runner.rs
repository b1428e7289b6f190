//! The `basalt scheduler` process: builds the API client (kubeconfig, `--master`, or in-cluster
//! config), creates the `root` and default Queues when missing (volcano-behaviour.md §1.3),
//! starts the watchers, binder and status writer, runs the scheduling loop on its own thread
//! every `--schedule-period` (sliding: counted from the end of the previous cycle), and stops on
//! SIGTERM/SIGINT after the binds in flight finish (or the grace period ends). Start,
//! leadership and stop are the shared [`crate::plumbing::process`] runner's.

use super::binder::{self, BindOutcome, BinderConfig};
use super::cycle::{Input, Outputs, Scheduler};
use super::gate_removal::{GateConfig, GateOutcome, GateRemover, GateRequest};
use super::metrics::{ApiWriteKind, Metrics, QueueMetrics, QueueResources, ScheduleResult, SchedulingStage};
use super::mirror::{BindRequest, Mirror};
use super::options::SchedulerOptions;
use super::outstanding::BindsOutstanding;
use super::reload::ConfWatcher;
use super::status::{self, Write, WriterConfig};
use super::watch;
use crate::crd;
use crate::plumbing::client::{ElectionFlags, Endpoints};
use crate::plumbing::http::HealthCheck;
use crate::plumbing::leader::{self, Leadership};
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::process::{Process, ProcessFlags};
use crate::plumbing::watch::WatchStats;
use basalt_core::conf::SchedulerConf;
use crossbeam::channel::{Receiver, RecvTimeoutError, Sender};
use kube::api::{Api, ObjectMeta, PostParams};
use kube::{Client, Config};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub use crate::plumbing::process::{EXIT_BAD_INPUT, EXIT_FATAL, EXIT_OK};

/// How long in-flight binds may take to finish after a stop signal.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Builds the client config from `--kubeconfig` and `--master` ([`crate::plumbing::client::client_config`]).
///
/// Errors: a message naming the file or the failing source.
pub async fn client_config(args: &SchedulerOptions) -> Result<Config, String> {
    crate::plumbing::client::client_config(&args.kubeconfig, &args.master).await
}

/// Creates Queue `name` with `weight` 1 and `reclaimable` as given when it does not exist.
async fn ensure_queue(client: &Client, name: &str, reclaimable: bool) -> Result<bool, kube::Error> {
    let api: Api<crd::Queue> = Api::all(client.clone());
    if api.get_opt(name).await?.is_some() {
        return Ok(false);
    }
    let q = crd::Queue {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: crd::QueueSpec { weight: Some(1), reclaimable: Some(reclaimable), ..Default::default() },
        status: None,
    };
    match api.create(&PostParams::default(), &q).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Volcano's startup: Queues `root` (not reclaimable) and the default queue (reclaimable),
/// retried up to 60 times a second apart.
pub async fn ensure_startup_queues(client: &Client, default_queue: &str) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..60 {
        let r = async {
            let root = ensure_queue(client, "root", false).await?;
            let dq = if default_queue == "root" { false } else { ensure_queue(client, default_queue, true).await? };
            Ok::<_, kube::Error>((root, dq))
        }
        .await;
        match r {
            Ok((root, dq)) => {
                if root {
                    tracing::info!("created Queue root");
                }
                if dq {
                    tracing::info!(queue = default_queue, "created the default Queue");
                }
                return Ok(());
            }
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Err(format!("cannot create Queues root and {default_queue:?}: {last}"))
}

/// Sends the loop's API work into the binder's and writer's channels, counting the binds queued
/// or in flight (the binder's result callback counts them down), which events wait for
/// ([`WriterConfig::binds_outstanding`]).
struct ChannelOutputs {
    binds: mpsc::UnboundedSender<BindRequest>,
    writes: mpsc::UnboundedSender<Write>,
    binds_outstanding: Arc<BindsOutstanding>,
    /// The gate-removal workers, with `SchedulingGatesQueueAdmission` on.
    gates: Option<GateRemover>,
}

impl Outputs for ChannelOutputs {
    fn bind(&self, r: BindRequest) {
        // Counted before it is sent, so the binder's count-down never runs first.
        self.binds_outstanding.add();
        if self.binds.send(r).is_err() {
            self.binds_outstanding.done();
        }
    }
    fn write(&self, w: Write) {
        let _ = self.writes.send(w);
    }
    fn remove_gate(&self, r: GateRequest) {
        match &self.gates {
            Some(g) => {
                g.enqueue(r);
            }
            None => {
                tracing::warn!(pod = %format!("{}/{}", r.namespace, r.name), "gate removal decided without SchedulingGatesQueueAdmission; not sent")
            }
        }
    }
}

/// Called after every cycle with its summary and the scheduler.
pub type Observer = Box<dyn FnMut(&super::cycle::CycleSummary, &Scheduler) + Send>;

/// What the loop thread needs besides the scheduler.
pub struct LoopControl {
    /// `--schedule-period`.
    pub period: Duration,
    /// The conf in force for the next cycle.
    pub conf: Box<dyn Fn() -> Arc<SchedulerConf> + Send>,
    /// Whether this process may schedule (leader, or leader election off).
    pub leading: Box<dyn Fn() -> bool + Send>,
    /// Set to stop the loop.
    pub stop: Arc<AtomicBool>,
    /// First cycle no later than this, even if a kind has not listed yet.
    pub sync_deadline: Instant,
    /// Called after every cycle with its summary.
    pub observe: Observer,
    /// Return after this many cycles (0: never).
    pub max_cycles: u64,
}

/// The scheduling loop: applies inputs as they arrive, runs a cycle every period once every
/// kind has listed (or the sync deadline passed) and while leading; returns on stop or when
/// every input sender is gone.
pub fn scheduling_loop(mut s: Scheduler, rx: Receiver<Input>, out: &dyn Outputs, mut ctl: LoopControl) -> Scheduler {
    let mut next = Instant::now();
    let started = next;
    let mut warned_unsynced = false;
    let mut logged_synced = false;
    loop {
        loop {
            if ctl.stop.load(Ordering::Relaxed) {
                return s;
            }
            let now = Instant::now();
            if now >= next {
                break;
            }
            match rx.recv_timeout((next - now).min(Duration::from_millis(100))) {
                Ok(i) => s.handle(i, out),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return s,
            }
        }
        // Everything that arrived before the cycle starts is in it (bounded: what is queued now).
        for _ in 0..rx.len() {
            match rx.try_recv() {
                Ok(i) => s.handle(i, out),
                Err(_) => break,
            }
        }
        let now = Instant::now();
        if s.mirror.synced() && !logged_synced {
            let (nodes, pods, pod_groups, queues) = s.mirror.cluster.counts();
            let after_ms = now.duration_since(started).as_millis() as u64;
            tracing::info!(nodes, pods, pod_groups, queues, after_ms, "first list complete");
            logged_synced = true;
        }
        if !s.mirror.synced() && now < ctl.sync_deadline {
            next = now + Duration::from_millis(50);
            continue;
        }
        if !s.mirror.synced() && !warned_unsynced {
            tracing::warn!(kinds = ?s.mirror.unsynced(), "first list not complete within --resource-sync-timeout; scheduling anyway");
            warned_unsynced = true;
        }
        if !(ctl.leading)() {
            next = now + ctl.period;
            continue;
        }
        let conf = (ctl.conf)();
        let summary = s.run_cycle(&conf, out);
        (ctl.observe)(&summary, &s);
        if ctl.max_cycles > 0 && s.cycles() >= ctl.max_cycles {
            // Let the last cycle's binds land (the watch confirms them) before returning.
            let deadline = Instant::now() + SHUTDOWN_GRACE;
            while !s.mirror.assumed().is_empty() && Instant::now() < deadline && !ctl.stop.load(Ordering::Relaxed) {
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(i) => s.handle(i, out),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            return s;
        }
        next = Instant::now() + ctl.period;
    }
}

/// Runs `basalt scheduler` to completion; returns the exit code.
pub fn run(args: &SchedulerOptions) -> u8 {
    crate::plumbing::client::block_on(EXIT_FATAL, run_async(args.clone()))
}

async fn run_async(args: SchedulerOptions) -> u8 {
    let conf = {
        let a = args.clone();
        let strict = args.strict;
        // Every conf read from the file: with --strict what Basalt does not implement refuses
        // it, else each such item is logged as skipped (volcano-behaviour.md §1.2).
        let check = move |c: &SchedulerConf, p: &std::path::Path| {
            let what = format!("conf {}", p.display());
            if strict {
                return crate::conf_check::strict_check(c, &what);
            }
            for n in crate::conf_check::NotHonouredReport::of(c, None) {
                tracing::warn!(file = %p.display(), "not honoured: {}", n.message);
            }
            Ok(())
        };
        match ConfWatcher::start_checked(args.conf_path.clone(), check, move |c: &mut SchedulerConf| apply_options(c, &a)) {
            Ok(w) => Arc::new(w),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    };
    let flags = ProcessFlags {
        kubeconfig: &args.kubeconfig,
        master: &args.master,
        component: "basalt-scheduler",
        election: ElectionFlags {
            elect: args.leader_elect,
            resource_lock: &args.leader_elect_resource_lock,
            namespace: args.lease_namespace.clone(),
            name: if args.leader_elect_resource_name.is_empty() {
                leader::lease_name(&args.scheduler_names)
            } else {
                args.leader_elect_resource_name.clone()
            },
            lease_duration: args.leader_elect_lease_duration,
            renew_deadline: args.leader_elect_renew_deadline,
            retry_period: args.leader_elect_retry_period,
        },
    };
    let mut process = match Process::start(&flags).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let client = process.client.clone();

    let metrics = Arc::new(Metrics::new());
    let loop_alive = Arc::new(AtomicBool::new(true));
    let alive = loop_alive.clone();
    let health: HealthCheck =
        Arc::new(move || if alive.load(Ordering::Relaxed) { Ok(()) } else { Err("the scheduling loop stopped".into()) });
    let m = metrics.clone();
    let endpoints = Endpoints {
        metrics: args.enable_metrics.then(|| (args.listen_address.clone(), Arc::new(move || m.encode()) as _)),
        healthz: args.enable_healthz.then(|| (args.healthz_address.clone(), health)),
    };
    if let Err(code) = process.serve(endpoints).await {
        return code;
    }
    if let Err(e) = ensure_startup_queues(&client, &args.default_queue).await {
        eprintln!("error: {e}");
        return EXIT_FATAL;
    }

    // Leadership: filled once acquired (or at once without election); read before every cycle
    // and every bind.
    let leadership: Arc<Mutex<Option<Leadership>>> = Arc::new(Mutex::new(None));
    let leading = {
        let l = leadership.clone();
        move || l.lock().map(|g| g.as_ref().is_some_and(Leadership::is_leading)).unwrap_or(false)
    };

    let (in_tx, in_rx): (Sender<Input>, Receiver<Input>) = crossbeam::channel::unbounded();
    let (bind_tx, bind_rx) = mpsc::unbounded_channel();
    let (write_tx, write_rx) = mpsc::unbounded_channel();
    let limiter = Arc::new(RateLimiter::new(args.kube_api_qps, args.kube_api_burst));
    let stats = Arc::new(WatchStats::default());
    let watch_tx = in_tx.clone();
    let watchers = watch::spawn_all(
        &client,
        Arc::new(move |ev| watch_tx.send(Input::Watch(ev)).is_ok()),
        stats.clone(),
        args.watch_timeout,
        args.sharding_mode != basalt_core::model::ShardingMode::None,
    );
    let bind_done = in_tx.clone();
    let binds_outstanding = Arc::new(BindsOutstanding::new());
    let outstanding = binds_outstanding.clone();
    // The predicates plugin's `volumebinding.bindTimeoutSeconds` (read at start; Volcano reads
    // it at plugin build too).
    let volume_timeout = conf
        .current()
        .tiers
        .iter()
        .flat_map(|t| &t.plugins)
        .find(|p| p.name == "predicates")
        .and_then(|p| p.arguments.int("volumebinding.bindTimeoutSeconds"))
        .filter(|&s| s > 0)
        .map(|s| std::time::Duration::from_secs(s as u64))
        .unwrap_or(BinderConfig::default().volume_timeout);
    let binder_cfg = BinderConfig {
        workers: args.bind_workers as usize,
        timeout: args.api_timeout,
        volume_timeout,
        ..BinderConfig::default()
    };
    let m = metrics.clone();
    let binder =
        tokio::spawn(binder::run(client.clone(), limiter.clone(), binder_cfg, bind_rx, Arc::new(leading.clone()), move |r| {
            outstanding.done();
            m.record_bind(r.outcome == BindOutcome::Bound);
            for _ in 0..r.attempts {
                m.record_api_write(ApiWriteKind::Binding);
            }
            let _ = bind_done.send(Input::Bind(r));
        }));
    let write_done = in_tx.clone();
    let writer_cfg = WriterConfig {
        timeout: args.api_timeout,
        component: args.scheduler_names.first().cloned().unwrap_or_else(|| "volcano".into()),
        binds_outstanding: Some(binds_outstanding.clone()),
        ..WriterConfig::default()
    };
    let m = metrics.clone();
    let writer = tokio::spawn(status::run(client.clone(), limiter.clone(), writer_cfg, write_rx, move |r| {
        let kind = match r.kind {
            "pod_status" => ApiWriteKind::PodStatus,
            "event" => ApiWriteKind::Event,
            "podgroup" => ApiWriteKind::PodGroup,
            "evict" => ApiWriteKind::PodStatus,
            _ => ApiWriteKind::QueueStatus,
        };
        for _ in 0..r.calls {
            m.record_api_write(kind);
        }
        let _ = write_done.send(Input::Write(r));
    }));
    drop(in_tx);

    let stop = Arc::new(AtomicBool::new(false));
    let cycle_base = (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)) << 20;
    let mut scheduler =
        Scheduler::new(Mirror::new(args.scheduler_names.clone(), args.node_selector.clone()), args.seed, cycle_base);
    if let Some(dir) = &args.record {
        let cfg = crate::recorder::writer::RecorderConfig {
            dir: dir.clone(),
            segment_bytes: args.record_segment_bytes,
            max_bytes: args.record_max_bytes,
            args: std::env::args().skip(1).collect(),
            wait_written: false,
        };
        match crate::recorder::writer::Recorder::start(cfg) {
            Ok(r) => scheduler.set_recorder(Box::new(r)),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    let conf_now = conf.clone();
    let (m, conf_counts, is_leader) = (metrics.clone(), conf.clone(), leading.clone());
    let ctl = LoopControl {
        period: args.schedule_period,
        conf: Box::new(move || conf_now.current()),
        leading: Box::new(leading.clone()),
        stop: stop.clone(),
        sync_deadline: Instant::now() + args.resource_sync_timeout,
        max_cycles: args.max_cycles,
        observe: Box::new(move |s, sch| {
            observe_cycle(&m, s);
            m.sync_conf_reloads(conf_counts.reloads(), conf_counts.failures());
            m.set_leader(is_leader());
            if s.binds > 0 || s.writes > 0 {
                tracing::debug!(
                    cycle = sch.cycles(),
                    binds = s.binds,
                    pending = s.unschedulable,
                    writes = s.writes,
                    assumed = s.assumed,
                    open_ms = s.open_ms,
                    total_ms = s.total_ms,
                    "cycle"
                );
            }
        }),
    };
    let gates = args.scheduling_gates_queue_admission.then(|| {
        let cfg = GateConfig { workers: args.gate_removal_workers, timeout: args.api_timeout, ..GateConfig::default() };
        let m = metrics.clone();
        let done = Arc::new(move |r: &GateRequest, outcome: &GateOutcome, calls: u32| {
            for _ in 0..calls {
                m.record_api_write(ApiWriteKind::GateRemoval);
            }
            let pod = format!("{}/{}", r.namespace, r.name);
            match outcome {
                GateOutcome::Removed => tracing::debug!(pod = %pod, "removed the Volcano scheduling gate"),
                GateOutcome::Stale(why) => tracing::debug!(pod = %pod, "gate removal not needed: {why}"),
                GateOutcome::Failed(why) => tracing::warn!(pod = %pod, "failed to remove the Volcano scheduling gate: {why}"),
            }
        });
        GateRemover::start(client.clone(), limiter.clone(), cfg, Arc::new(leading.clone()), done)
    });
    let (gates, gate_workers) = match gates {
        Some((g, h)) => (Some(g), Some(h)),
        None => (None, None),
    };
    let outputs = ChannelOutputs { binds: bind_tx, writes: write_tx, binds_outstanding, gates };
    tracing::info!(
        schedulers = ?args.scheduler_names,
        period = ?args.schedule_period,
        identity = %process.identity,
        leader_elect = args.leader_elect,
        actions = ?conf.current().actions.iter().map(|a| a.name()).collect::<Vec<_>>(),
        "basalt scheduler started"
    );
    let alive = loop_alive.clone();
    let loop_thread = std::thread::Builder::new().name("basalt-scheduling-loop".into()).spawn(move || {
        let s = scheduling_loop(scheduler, in_rx, &outputs, ctl);
        alive.store(false, Ordering::Relaxed);
        drop(outputs);
        s
    });
    let loop_thread = match loop_thread {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot start the scheduling loop: {e}");
            return EXIT_FATAL;
        }
    };

    // The loop schedules only once the Lease is held (`leading`); a lost Lease stops the process.
    let election = {
        let (slot, m, process) = (leadership.clone(), metrics.clone(), &process);
        async move {
            let l = match process.lead().await {
                Ok(l) => l,
                Err(e) => return format!("leader election: {e}"),
            };
            let lost = l.lost();
            if let Ok(mut g) = slot.lock() {
                *g = Some(l);
            }
            m.set_leader(true);
            lost.await;
            "lost the leader lease".to_string()
        }
    };
    let mut joined = tokio::task::spawn_blocking(move || loop_thread.join());
    let mut code = EXIT_OK;
    let joined = tokio::select! {
        j = &mut joined => j,
        _ = crate::plumbing::client::wait_for_signal() => {
            tracing::info!("stopping: no new cycles; waiting for binds in flight");
            stop.store(true, Ordering::Relaxed);
            joined.await
        }
        why = election => {
            // Volcano exits when it stops leading; so does Basalt, at once.
            tracing::error!("{why}: stopping");
            metrics.set_leader(false);
            code = EXIT_FATAL;
            stop.store(true, Ordering::Relaxed);
            joined.await
        }
    };
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, async {
        let _ = binder.await;
        let _ = writer.await;
    })
    .await;
    // Gate removals are best effort (Volcano's too): the next leader decides any left again.
    if let Some(h) = gate_workers {
        h.abort();
    }
    for w in watchers {
        w.abort();
    }
    let held = leadership.lock().ok().and_then(|mut g| g.take());
    process.shutdown(held).await;
    match joined {
        Ok(Ok(s)) => {
            tracing::info!(cycles = s.cycles(), bound = s.bound, bind_failures = s.bind_failures, "stopped");
            code
        }
        _ => EXIT_FATAL,
    }
}

/// Feeds one cycle's timings and counts to the metrics (volcano-behaviour.md §8.1).
pub fn observe_cycle(m: &Metrics, s: &super::cycle::CycleSummary) {
    let d = |ms: f64| Duration::from_secs_f64(ms.max(0.0) / 1e3);
    m.observe_cycle(d(s.total_ms));
    m.observe_open_session(d(s.open_ms));
    for (action, ms) in &s.actions {
        m.observe_action(action, d(*ms));
    }
    for (plugin, phase, ms) in &s.plugins {
        m.observe_plugin(plugin, *phase, d(*ms));
    }
    for (stage, ms) in &s.task_stages {
        m.observe_task_stage(*stage, d(*ms));
    }
    for ms in &s.bind_stage_ms {
        m.observe_scheduling_stage(SchedulingStage::Bind, d(*ms));
    }
    m.record_schedule_attempts(ScheduleResult::Scheduled, s.binds as u64);
    m.record_schedule_attempts(ScheduleResult::Unschedulable, s.unschedulable_pods as u64);
    m.record_schedule_attempts(ScheduleResult::Error, s.bind_errors);
    m.record_preemption(u64::from(s.preemption.attempts), s.preemption.last_victims, &s.preemption.eviction_transactions);
    m.set_unschedulable(s.unready_jobs.iter().map(|(j, n)| (j.as_str(), *n)), s.unready_jobs.len() as i64);
    let queues: Vec<QueueMetrics> = s.queues.iter().map(queue_metrics).collect();
    m.set_queues(&queues);
    m.observe_bind_rate(Instant::now());
}

/// A core resource list in Volcano's metric units: CPU in millicores, memory in bytes, other
/// scalars in milli-units (the core's units already); the `pods` count is left out, as
/// Volcano's queue gauges carry only CPU, memory and scalar resources.
fn queue_resources(l: &basalt_core::resource::ResourceList) -> QueueResources {
    let mut r = QueueResources::default();
    for (name, &v) in l {
        match name.as_str() {
            "cpu" => r.milli_cpu = v as f64,
            "memory" => r.memory_bytes = v as f64,
            "pods" => {}
            _ => r.scalar.push((name.clone(), v as f64)),
        }
    }
    r
}

fn queue_metrics(q: &basalt_core::decision::QueueShare) -> QueueMetrics {
    QueueMetrics {
        name: q.name.clone(),
        allocated: queue_resources(&q.allocated),
        request: queue_resources(&q.request),
        deserved: queue_resources(&q.deserved),
        share: q.share,
        weight: q.weight,
        overused: q.overused,
        inqueue: queue_resources(&q.inqueue),
        capability: q.capability.as_ref().map(queue_resources),
        real_capability: q.real_capability.as_ref().map(queue_resources),
    }
}

/// Applies the scheduler flags that live in the conf's options.
pub fn apply_options(c: &mut SchedulerConf, a: &SchedulerOptions) {
    let o = &mut c.options;
    if let Some(v) = a.percentage_nodes_to_find {
        o.percentage_nodes_to_find = v;
    }
    o.minimum_feasible_nodes = a.minimum_feasible_nodes;
    o.minimum_percentage_nodes_to_find = a.minimum_percentage_nodes_to_find;
    o.default_queue = a.default_queue.clone();
    o.sharding_mode = a.sharding_mode;
    o.sharding_name = a.sharding_name.clone();
    o.scheduling_gates_queue_admission = a.scheduling_gates_queue_admission;
}
