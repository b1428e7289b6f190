//! The `basalt controller` process: client, leader election (Lease `vc-controller-manager` in
//! `volcano-system`, as Volcano's controller-manager), watches of Jobs, the controller's pods
//! (label `volcano.sh/job-name`), PodGroups, Commands and Queues (their names, for
//! [`super::validate`]) feeding the [`Cache`], then
//! `--worker-threads` workers, each draining its own [`WorkQueue`] once every watch has listed;
//! beside it the PodGroup controller ([`PgController`]) and the Queue controller
//! ([`QueueController`]); `--controllers` (Volcano's syntax: `*`, names, `-name`) picks among
//! `job-controller`, `pg-controller` and `queue-controller`; `/metrics` and `/healthz`; stops on
//! SIGTERM/SIGINT or when leadership is lost. Start, leadership and stop are the shared
//! [`crate::plumbing::process`] runner's.

use super::cache::Cache;
use super::cron_controller::{CronConfig, CronController};
use super::execute::{process, Context, ExecError};
use super::gc::TtlCollector;
use super::metrics::ControllerMetrics;
use super::options::ControllerOptions;
use super::pg_controller::{PgConfig, PgController};
use super::queue::WorkQueue;
use super::queue_controller::{QueueConfig, QueueController};
use super::request::{Action, Event, Request};
use super::retry::drain_with;
use super::shard_controller::ShardController;
use crate::crd::{Command, Job, PodGroup, Queue};
use crate::plumbing::client::{ElectionFlags, Endpoints};
use crate::plumbing::events::{EventRecorder, EventSink};
use crate::plumbing::http::HealthCheck;
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::process::{until_stopped, Process, ProcessFlags, Stop};
use crate::plumbing::watch::{self, WatchStats};
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::watcher::{self, Event as WEvent};
use kube::Client;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

pub use crate::plumbing::process::{EXIT_BAD_INPUT, EXIT_FATAL, EXIT_OK};

/// The watches a worker waits for before its first request.
const WATCHES: usize = 5;
/// The `source.component` of the controller's Events (Volcano's controller-manager's).
pub const EVENT_COMPONENT: &str = "vc-controller-manager";
/// `--controllers` name of the job controller (Volcano's).
pub const JOB_CONTROLLER: &str = "job-controller";
/// `--controllers` name of the PodGroup controller (Volcano's).
pub const PG_CONTROLLER: &str = "pg-controller";
/// `--controllers` name of the Queue controller (Volcano's).
pub const QUEUE_CONTROLLER: &str = "queue-controller";
/// `--controllers` name of the CronJob controller.
pub const CRONJOB_CONTROLLER: &str = "cronjob-controller";
/// `--controllers` name of the sharding controller (Volcano's; off unless named or `*` is
/// given without the default's `-sharding-controller`).
pub const SHARDING_CONTROLLER: &str = "sharding-controller";

/// Runs `basalt controller` to completion with options the command line checked
/// ([`crate::cli::controller::ControllerArgs::validate`]); returns the exit code.
pub fn run(args: &ControllerOptions) -> u8 {
    crate::plumbing::client::block_on(EXIT_FATAL, run_async(args.clone()))
}

/// Counts the watches that finished their first list and wakes the workers when all have.
#[derive(Default)]
struct Synced {
    done: AtomicUsize,
    notify: Notify,
}

impl Synced {
    fn mark(&self) {
        self.done.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
    async fn wait(&self, n: usize) {
        loop {
            let notified = self.notify.notified();
            if self.done.load(Ordering::SeqCst) >= n {
                return;
            }
            notified.await;
        }
    }
}

async fn run_async(args: ControllerOptions) -> u8 {
    let run_jobs = args.job_controller;
    let run_pg = args.pg_controller;
    let run_queues = args.queue_controller;
    let run_crons = args.cronjob_controller;
    let run_shards = args.sharding_controller;
    if !(run_jobs || run_pg || run_queues || run_crons || run_shards) {
        eprintln!(
            "error: --controllers {:?} enables none of {JOB_CONTROLLER}, {PG_CONTROLLER}, {QUEUE_CONTROLLER}, {CRONJOB_CONTROLLER}, {SHARDING_CONTROLLER} (the controllers Basalt implements)",
            args.controllers
        );
        return EXIT_BAD_INPUT;
    }
    for c in ["jobflow-controller", "jobtemplate-controller", "hypernode-controller"] {
        if args.controllers.split(',').any(|i| i.trim() == c) {
            tracing::warn!("--controllers names {c}, which Basalt does not implement; skipped");
        }
    }
    let flags = ProcessFlags {
        kubeconfig: &args.kubeconfig,
        master: &args.master,
        component: "basalt-controller",
        election: ElectionFlags {
            elect: args.leader_elect,
            resource_lock: &args.leader_elect_resource_lock,
            namespace: args.leader_elect_resource_namespace.clone(),
            name: args.leader_elect_resource_name.clone(),
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
    let metrics = Arc::new(ControllerMetrics::new());
    let synced = Arc::new(Synced::default());
    let s = synced.clone();
    // Only the job controller's watches are counted (the others start acting at once).
    let needed = if run_jobs { WATCHES } else { 0 };
    let health: HealthCheck = Arc::new(move || {
        let n = s.done.load(Ordering::SeqCst);
        if n >= needed {
            Ok(())
        } else {
            Err(format!("{n} of {needed} watches listed"))
        }
    });
    let m = metrics.clone();
    let endpoints = Endpoints {
        metrics: args.enable_metrics.then(|| (args.listen_address.clone(), Arc::new(move || m.encode()) as _)),
        healthz: args.enable_healthz.then(|| (args.healthz_address.clone(), health)),
    };
    if let Err(code) = process.serve(endpoints).await {
        return code;
    }

    // Nothing runs before the Lease is held; a stop signal while waiting for it ends the process.
    let elected = tokio::select! {
        l = process.lead() => Some(l),
        _ = crate::plumbing::client::wait_for_signal() => None,
    };
    let leadership = match elected {
        Some(Ok(l)) => l,
        Some(Err(e)) => {
            eprintln!("error: leader election: {e}");
            return EXIT_FATAL;
        }
        None => {
            process.shutdown(None).await;
            return EXIT_OK;
        }
    };
    metrics.set_leader(true);
    let lost = leadership.lost();

    let cache = Arc::new(Cache::default());
    let limiter = Arc::new(RateLimiter::new(args.kube_api_qps, args.kube_api_burst));
    let queues: Vec<WorkQueue> = (0..args.worker_threads).map(|_| WorkQueue::default()).collect();
    let ctx = Arc::new(Context {
        client: client.clone(),
        cache: cache.clone(),
        limiter: limiter.clone(),
        metrics: metrics.clone(),
        queues,
        max_requeue: args.max_requeue_num,
        delayed: Mutex::new(HashMap::new()),
        events: EventSink::spawn(Arc::new(EventRecorder::new(
            client.clone(),
            EVENT_COMPONENT,
            Some(limiter.clone()),
            std::time::Duration::from_secs(10),
            3,
        ))),
        known_queues: Mutex::new(None),
        held: Mutex::new(BTreeSet::new()),
    });
    let ttl = TtlCollector::new(client.clone(), cache.clone(), limiter.clone(), metrics.clone());
    let mut tasks = Vec::new();
    if run_jobs {
        tasks.extend([
            tokio::spawn(watch_jobs(client.clone(), ctx.clone(), ttl, synced.clone())),
            tokio::spawn(watch_pods(client.clone(), ctx.clone(), synced.clone())),
            tokio::spawn(watch_pod_groups(client.clone(), ctx.clone(), synced.clone())),
            tokio::spawn(watch_commands(client.clone(), ctx.clone(), synced.clone())),
            tokio::spawn(watch_queues(client.clone(), ctx.clone(), synced.clone())),
        ]);
        for w in 0..ctx.queues.len() {
            tasks.push(tokio::spawn(worker(ctx.clone(), w, synced.clone())));
        }
    }
    if run_pg {
        let cfg = PgConfig {
            scheduler_names: args.scheduler_names.clone(),
            workers: args.worker_threads_for_podgroup as usize,
            inherit_owner_annotations: args.inherit_owner_annotations,
            max_requeue: args.max_requeue_num,
        };
        tasks.extend(PgController::spawn(client.clone(), limiter.clone(), metrics.clone(), cfg));
    }
    if run_queues {
        let cfg = QueueConfig { workers: args.worker_threads_for_queue as usize, max_requeue: args.max_requeue_num };
        tasks.extend(QueueController::spawn(client.clone(), limiter.clone(), metrics.clone(), cfg));
    }
    if run_crons {
        let cfg = CronConfig { workers: args.worker_threads_for_cronjob as usize, max_requeue: args.max_requeue_num };
        tasks.extend(CronController::spawn(client.clone(), limiter.clone(), metrics.clone(), ctx.events.clone(), cfg));
    }
    if run_shards {
        tasks.extend(ShardController::spawn(client.clone(), limiter.clone(), metrics.clone(), args.sharding.clone()));
    }
    tracing::info!(
        workers = args.worker_threads,
        identity = %process.identity,
        leader_elect = args.leader_elect,
        job_controller = run_jobs,
        pg_controller = run_pg,
        queue_controller = run_queues,
        cronjob_controller = run_crons,
        sharding_controller = run_shards,
        "basalt controller started"
    );
    let stop = until_stopped(lost).await;
    if stop == Stop::LostLease {
        tracing::error!("lost the leader lease: stopping");
        metrics.set_leader(false);
    }
    for t in tasks {
        t.abort();
    }
    process.shutdown(Some(leadership)).await;
    stop.code()
}

async fn worker(ctx: Arc<Context>, w: usize, synced: Arc<Synced>) {
    synced.wait(WATCHES).await;
    let q = ctx.queues[w].clone();
    let (events, requeue) = (ctx.clone(), q.clone());
    let give_up = move |r: Request, e: ExecError, n: u32| {
        tracing::warn!(job = %r.key(), "{e}; retried {n} times (--max-requeue-num): terminating the job");
        let action = r.action.unwrap_or(Action::SyncJob);
        events.job_event_by_key(
            &r.namespace,
            &r.job_name,
            super::execute::EXECUTE_ACTION,
            &format!("Job failed on action {} for retry limit reached", action.as_str()),
        );
        let mut t = Request::job(&r.namespace, &r.job_name, Event::OutOfSync);
        t.action = Some(Action::TerminateJob);
        requeue.add(t);
    };
    let handle = |r: Request| {
        let ctx = ctx.clone();
        async move { process(&ctx, &r).await }
    };
    drain_with(q.clone(), ctx.max_requeue, &ctx.metrics, "job request", handle, give_up).await
}

async fn watch_jobs(client: Client, ctx: Arc<Context>, ttl: Arc<TtlCollector>, synced: Arc<Synced>) {
    let api: Api<Job> = Api::all(client);
    let mut first = true;
    watch::run("Job", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
        if watch::first_listed(&ev, &mut first) {
            synced.mark();
        }
        match ev {
            WEvent::Apply(j) | WEvent::InitApply(j) => {
                ttl.observe(&j);
                let k = super::cache::key(
                    j.metadata.namespace.as_deref().unwrap_or_default(),
                    j.metadata.name.as_deref().unwrap_or_default(),
                );
                if !j.spec.plugins.is_empty() && ctx.cache.get(&k).and_then(|e| e.watched).is_none() {
                    for w in super::plugins::check(&j) {
                        tracing::warn!(job = %k, "{w}");
                    }
                }
                if let Some(r) = ctx.cache.apply_job(j) {
                    ctx.enqueue(r);
                }
            }
            WEvent::Delete(j) => ctx.cache.delete_job(&j),
            _ => {}
        }
        std::future::ready(true)
    })
    .await
}

async fn watch_pods(client: Client, ctx: Arc<Context>, synced: Arc<Synced>) {
    let api: Api<Pod> = Api::all(client);
    let cfg = watcher::Config::default().labels(super::keys::JOB_NAME);
    let mut first = true;
    watch::run("Pod", watch::stream(api, cfg), &WatchStats::default(), |ev| {
        if watch::first_listed(&ev, &mut first) {
            synced.mark();
        }
        let r = match ev {
            WEvent::Apply(p) | WEvent::InitApply(p) => ctx.cache.apply_pod(p),
            WEvent::Delete(p) => ctx.cache.delete_pod(&p),
            _ => None,
        };
        if let Some(r) = r {
            ctx.enqueue(r);
        }
        std::future::ready(true)
    })
    .await
}

async fn watch_pod_groups(client: Client, ctx: Arc<Context>, synced: Arc<Synced>) {
    let api: Api<PodGroup> = Api::all(client);
    let mut first = true;
    watch::run("PodGroup", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
        if watch::first_listed(&ev, &mut first) {
            synced.mark();
        }
        let r = match ev {
            WEvent::Apply(p) | WEvent::InitApply(p) => ctx.cache.apply_pod_group(p),
            WEvent::Delete(p) => ctx.cache.delete_pod_group(&p),
            _ => None,
        };
        if let Some(r) = r {
            ctx.enqueue(r);
        }
        std::future::ready(true)
    })
    .await
}

/// The Queues' names for [`super::validate`]: a (re)list replaces them; a Queue added queues
/// the Jobs a failed validation holds again.
async fn watch_queues(client: Client, ctx: Arc<Context>, synced: Arc<Synced>) {
    let api: Api<Queue> = Api::all(client);
    let mut first = true;
    let mut listing: BTreeSet<String> = BTreeSet::new();
    watch::run("Queue", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
        if watch::first_listed(&ev, &mut first) {
            synced.mark();
        }
        let mut added = false;
        match ev {
            WEvent::Init => listing.clear(),
            WEvent::InitApply(q) => {
                listing.insert(q.metadata.name.clone().unwrap_or_default());
            }
            WEvent::InitDone => {
                *super::retry::lock(&ctx.known_queues) = Some(std::mem::take(&mut listing));
                added = true;
            }
            WEvent::Apply(q) => {
                let name = q.metadata.name.clone().unwrap_or_default();
                added = super::retry::lock(&ctx.known_queues).get_or_insert_with(BTreeSet::new).insert(name);
            }
            WEvent::Delete(q) => {
                if let Some(known) = super::retry::lock(&ctx.known_queues).as_mut() {
                    known.remove(q.metadata.name.as_deref().unwrap_or_default());
                }
            }
        }
        if added {
            let held: Vec<String> = super::retry::lock(&ctx.held).iter().cloned().collect();
            for k in held {
                if let Some((ns, name)) = k.split_once('/') {
                    ctx.enqueue(Request::job(ns, name, Event::OutOfSync));
                }
            }
        }
        std::future::ready(true)
    })
    .await
}

/// Commands naming a Job: deleted first (so each is acted on once), then queued as a
/// `CommandIssued` request with the Command's action. Commands for other kinds are left alone.
async fn watch_commands(client: Client, ctx: Arc<Context>, synced: Arc<Synced>) {
    let api: Api<Command> = Api::all(client.clone());
    let mut first = true;
    watch::run("Command", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
        if watch::first_listed(&ev, &mut first) {
            synced.mark();
        }
        job_command(client.clone(), ctx.clone(), ev)
    })
    .await
}

/// One Command watch event of the job controller (see [`watch_commands`]); always goes on.
async fn job_command(client: Client, ctx: Arc<Context>, ev: WEvent<Command>) -> bool {
    let cmd = match ev {
        WEvent::Apply(c) | WEvent::InitApply(c) => c,
        _ => return true,
    };
    let Some(target) = cmd.spec.target.as_ref().filter(|t| t.kind == "Job") else { return true };
    let (Some(ns), Some(name)) = (cmd.metadata.namespace.clone(), cmd.metadata.name.clone()) else { return true };
    let text = cmd.spec.action.clone().unwrap_or_default();
    let Some(action) = Action::parse(&text) else {
        tracing::warn!(command = %format!("{ns}/{name}"), "Command {ns}/{name}: action {text:?} is not a Volcano action; ignored");
        return true;
    };
    if !super::command::take(&client, &ctx.limiter, &ctx.metrics, &ns, &name).await {
        return true;
    }
    let mut r = Request::job(&ns, &target.name, Event::CommandIssued);
    r.action = Some(action);
    r.job_uid = Some(target.uid.clone()).filter(|u| !u.is_empty());
    ctx.enqueue(r);
    true
}
