//! The live bench (issue 9): pods bound per second by `basalt scheduler` through a real
//! kube-apiserver v1.20.2 + etcd, beside the server's own ceiling for binding POSTs measured the
//! same way in the same run (shared/notes/kubernetes-api.md §9 for the server and the peers).
//! A bench, not a test: it prints numbers and fails only when something is wrong (a pod not
//! bound, a bind audited twice, an API error), never on a speed.
//!
//! ```text
//! cargo build --release -p basalt-runtime --bin basalt
//! cargo run --release -p basalt-runtime --example live_bench -- --nodes 1000 --pods 10000 [--gang 10] [--output json]
//! ```
//!
//! One run:
//! 1. a fresh server (`runtime/tests/apiserver/start.sh` in a temp folder; stopped at the end and
//!    on error; `BASALT_TEST_KEEP=1` keeps the folder with its logs and audit log);
//! 2. `deploy/`'s CRDs and the scheduler's RBAC, N Ready nodes (8 CPU, 32Gi, 110 pods, no
//!    `not-ready` taint), 4 Queues, PodGroups of `--gang` (`minMember` = gang) and their pods
//!    (`schedulerName: volcano`, 100m CPU / 128Mi) in namespace `bench`, created
//!    `--create-concurrency` at a time before the scheduler starts;
//! 3. `target/release/basalt scheduler --kubeconfig DIR/scheduler.kubeconfig --leader-elect=false
//!    --schedule-period=1s` (the RBAC-restricted identity) as a child; a pod watch on `bench`
//!    gives the first and the last bind; then Basalt's CPU seconds (`/proc/PID/stat`) and peak
//!    RSS (`VmHWM`), SIGTERM;
//! 4. the ceiling: as many plain pods in namespace `ceiling` (another scheduler name), bound by
//!    POSTing bindings from this process, `--ceiling-concurrency` in flight, nodes round-robin,
//!    with the scheduler's identity, watched the same way;
//! 5. the audit log: exactly one 2xx binding per pod in each namespace.

#[path = "../../tests/support/mod.rs"]
mod support;

mod audit;
mod bound_watch;
mod ceiling;
mod first_list;
mod procstat;
mod report;
mod scheduler_child;
mod setup;

use bound_watch::BoundWatch;
use clap::Parser;
use report::{Report, SchedulerLog};
use scheduler_child::SchedulerChild;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use support::TestApiserver;

/// The identity of `DIR/scheduler.kubeconfig` (start.sh).
const SCHEDULER_USER: &str = "system:serviceaccount:volcano-system:volcano-scheduler";

/// Command line of the live bench.
#[derive(Debug, Parser)]
#[command(about = "Pods bound per second by `basalt scheduler` through a real kube-apiserver, beside the server's ceiling")]
struct Args {
    /// Ready nodes in the cluster.
    #[arg(long, default_value_t = 1000)]
    nodes: usize,
    /// Pods to schedule (and as many for the ceiling run).
    #[arg(long, default_value_t = 10_000)]
    pods: usize,
    /// Pods per PodGroup (`minMember`); must divide --pods.
    #[arg(long, default_value_t = 10)]
    gang: usize,
    /// Queues, PodGroups assigned round-robin.
    #[arg(long, default_value_t = 4)]
    queues: usize,
    /// Creates in flight while building the cluster.
    #[arg(long, default_value_t = 32)]
    create_concurrency: usize,
    /// Binding POSTs in flight in the ceiling run.
    #[arg(long, default_value_t = 16)]
    ceiling_concurrency: usize,
    /// Skip the ceiling run.
    #[arg(long)]
    no_ceiling: bool,
    /// Instead of binding: the pods are created already bound, and the bench reports how long
    /// the scheduler's first list of the cluster takes and its memory after it (`first_list.rs`).
    #[arg(long)]
    first_list: bool,
    /// The `basalt` binary.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/basalt"))]
    basalt: PathBuf,
    /// Extra flag for `basalt scheduler` (repeatable), e.g. `--scheduler-arg=--bind-workers=128`.
    #[arg(long = "scheduler-arg", allow_hyphen_values = true)]
    scheduler_args: Vec<String>,
    /// `RUST_LOG` of the scheduler (the per-cycle lines are at debug).
    #[arg(long, default_value = "info,basalt_runtime=debug")]
    scheduler_rust_log: String,
    /// Where the scheduler's log goes (default: `target/live-bench/scheduler-N-P.log`).
    #[arg(long)]
    scheduler_log: Option<PathBuf>,
    /// Give up waiting for the binds after this many seconds.
    #[arg(long, default_value_t = 900)]
    timeout_s: u64,
    /// `text` (a table) or `json`.
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    output: String,
    /// Also write the JSON report to this file.
    #[arg(long)]
    json_file: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("live_bench: cannot start tokio: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.first_list {
        return first_list_main(&rt, &args);
    }
    match rt.block_on(run(&args)) {
        Ok(report) => {
            let json = serde_json::to_string_pretty(&report).unwrap_or_default();
            if let Some(f) = &args.json_file {
                if let Err(e) = std::fs::write(f, &json) {
                    eprintln!("live_bench: {}: {e}", f.display());
                }
            }
            match args.output.as_str() {
                "json" => println!("{json}"),
                _ => print!("{}", report.table()),
            }
            match problems(&report, !args.no_ceiling) {
                None => ExitCode::SUCCESS,
                Some(p) => {
                    eprintln!("live_bench: the run is not clean: {p}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("live_bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--first-list`: runs [`first_list::run`] and prints its report.
fn first_list_main(rt: &tokio::runtime::Runtime, args: &Args) -> ExitCode {
    let log_path = match &args.scheduler_log {
        Some(p) => p.clone(),
        None => {
            let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/live-bench"));
            if let Err(e) = std::fs::create_dir_all(&dir) {
                eprintln!("live_bench: {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
            dir.join(format!("first-list-{}-{}.log", args.nodes, args.pods))
        }
    };
    match rt.block_on(first_list::run(args, &log_path)) {
        Ok(r) => {
            let json = serde_json::to_string_pretty(&r).unwrap_or_default();
            if let Some(f) = &args.json_file {
                if let Err(e) = std::fs::write(f, &json) {
                    eprintln!("live_bench: {}: {e}", f.display());
                }
            }
            match args.output.as_str() {
                "json" => println!("{json}"),
                _ => print!("{}", r.table()),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("live_bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// What is wrong with a finished run (not its speed), if anything.
fn problems(r: &Report, ceiling: bool) -> Option<String> {
    let mut p = Vec::new();
    if r.audit.successes != r.pods as u64 || r.audit.pods_not_bound_once != 0 {
        p.push(format!(
            "scheduler: {} successful bindings for {} pods, {} pods without exactly one",
            r.audit.successes, r.pods, r.audit.pods_not_bound_once
        ));
    }
    if r.audit.failures != 0 {
        p.push(format!("scheduler: {} failed bindings {:?}", r.audit.failures, r.audit.failure_codes));
    }
    if r.watch_anomalies != (0, 0) {
        p.push(format!("watch: {} pods moved node, {} stream errors", r.watch_anomalies.0, r.watch_anomalies.1));
    }
    if r.log.errors != 0 || r.log.warnings != 0 {
        p.push(format!("scheduler log: {} warnings, {} errors (see {})", r.log.warnings, r.log.errors, r.log.path));
    }
    if ceiling
        && (r.ceiling_errors != 0 || r.ceiling_audit.successes != r.pods as u64 || r.ceiling_audit.pods_not_bound_once != 0)
    {
        p.push(format!("ceiling: {} errors, {} bindings audited", r.ceiling_errors, r.ceiling_audit.successes));
    }
    (!p.is_empty()).then(|| p.join("; "))
}

fn step(t0: Instant, what: &str) {
    eprintln!("live_bench [{:7.1} s] {what}", t0.elapsed().as_secs_f64());
}

async fn run(args: &Args) -> support::Result<Report> {
    if args.gang == 0 || args.pods == 0 || args.nodes == 0 || !args.pods.is_multiple_of(args.gang) {
        return Err(format!("--pods {} must be a positive multiple of --gang {} (and --nodes > 0)", args.pods, args.gang).into());
    }
    if args.pods > args.nodes * setup::PODS_PER_NODE_BY_CPU {
        return Err(
            format!("--pods {} do not fit {} nodes ({} per node)", args.pods, args.nodes, setup::PODS_PER_NODE_BY_CPU).into()
        );
    }
    if !args.basalt.is_file() {
        return Err(format!(
            "--basalt {}: not found; build it first: cargo build --release -p basalt-runtime --bin basalt",
            args.basalt.display()
        )
        .into());
    }
    let log_path = match &args.scheduler_log {
        Some(p) => p.clone(),
        None => {
            let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/live-bench"));
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            dir.join(format!("scheduler-{}-{}.log", args.nodes, args.pods))
        }
    };
    let t0 = Instant::now();
    let server = tokio::task::spawn_blocking(TestApiserver::start).await??;
    step(t0, &format!("apiserver ready at {} ({})", server.server_url(), server.dir().display()));
    let admin = server.admin_client().await?;
    support::install_volcano_crds(&admin).await?;
    support::apply_scheduler_rbac(&admin).await?;
    setup::create_queues(&admin, args.queues).await?;
    let mut r = Report {
        nodes: args.nodes,
        pods: args.pods,
        gang: args.gang,
        ceiling_concurrency: args.ceiling_concurrency,
        ..Default::default()
    };

    let t = Instant::now();
    setup::create_nodes(&admin, args.nodes, args.create_concurrency).await?;
    r.create_nodes_s = t.elapsed().as_secs_f64();
    step(t0, &format!("{} nodes created in {:.1} s", args.nodes, r.create_nodes_s));
    support::ensure_namespace(&admin, "bench").await?;
    let t = Instant::now();
    let names =
        setup::create_batch(&admin, "bench", args.pods, Some(args.gang), args.queues, "volcano", args.create_concurrency, None)
            .await?;
    r.create_pods_s = t.elapsed().as_secs_f64();
    step(t0, &format!("{} PodGroups and {} pods created in {:.1} s", args.pods / args.gang, args.pods, r.create_pods_s));

    // --- Basalt ---------------------------------------------------------------------------------
    let mut watch = BoundWatch::start(&admin, "bench").await?;
    let server_cpu0 = procstat::server_cpu_seconds(server.dir())?;
    r.load_average.0 = procstat::load_average();
    let mut child = SchedulerChild::start(
        &args.basalt,
        &server.scheduler_kubeconfig(),
        &args.scheduler_args,
        &log_path,
        &args.scheduler_rust_log,
    )?;
    step(t0, &format!("basalt scheduler started (pid {}, log {})", child.pid(), log_path.display()));
    let deadline = child.started + Duration::from_secs(args.timeout_s);
    let mut last_report = Instant::now();
    let bound = loop {
        let slice = (Instant::now() + Duration::from_secs(1)).min(deadline);
        let n = watch.wait_for(args.pods, slice).await;
        if n >= args.pods || Instant::now() >= deadline {
            break n;
        }
        if let Some(status) = child.exited() {
            return Err(format!(
                "the scheduler exited ({status}) with {n} of {} pods bound; log: {}",
                args.pods,
                log_path.display()
            )
            .into());
        }
        if last_report.elapsed() >= Duration::from_secs(10) {
            step(t0, &format!("{n} of {} pods bound", args.pods));
            last_report = Instant::now();
        }
    };
    let pid = child.pid();
    r.basalt_cpu_s_at_last_bind = procstat::cpu_seconds(pid)?;
    r.server_cpu_s_scheduler = procstat::server_cpu_seconds(server.dir())? - server_cpu0;
    if bound < args.pods {
        let _ = child.terminate(Duration::from_secs(15)).await;
        return Err(
            format!("only {bound} of {} pods bound after {} s; log: {}", args.pods, args.timeout_s, log_path.display()).into()
        );
    }
    let times = watch.times().ok_or("no bind seen")?;
    r.start_to_first_bind_s = times.first.duration_since(child.started).as_secs_f64();
    r.first_to_last_bind_s = times.last.duration_since(times.first).as_secs_f64();
    r.start_to_last_bind_s = times.last.duration_since(child.started).as_secs_f64();
    r.scheduler_pods_per_s = args.pods as f64 / r.first_to_last_bind_s.max(1e-9);
    r.scheduler_pods_per_s_from_start = args.pods as f64 / r.start_to_last_bind_s.max(1e-9);
    r.pods_per_node = watch.spread();
    r.watch_anomalies = watch.anomalies();
    step(
        t0,
        &format!(
            "all {} pods bound, {:.0} pods/s first→last; letting the status writes settle",
            args.pods, r.scheduler_pods_per_s
        ),
    );
    // PodGroup statuses and events are written after the binds; give them time before stopping.
    tokio::time::sleep(Duration::from_secs(5)).await;
    r.basalt_cpu_s = procstat::cpu_seconds(pid)?;
    r.basalt_peak_rss_mib = procstat::peak_rss_mib(pid)?;
    let status = child.terminate(Duration::from_secs(20)).await?;
    r.basalt_exit = status.to_string();
    drop(watch);
    r.log = SchedulerLog::read(&log_path)?;
    r.audit = audit::bindings(server.dir(), "bench", &names, SCHEDULER_USER)?;
    r.server_first_to_last_bind_s = r.audit.server_first_to_last_s;

    // --- the server's ceiling -------------------------------------------------------------------
    if !args.no_ceiling {
        support::ensure_namespace(&admin, "ceiling").await?;
        let names =
            setup::create_batch(&admin, "ceiling", args.pods, None, args.queues, "bench-ceiling", args.create_concurrency, None)
                .await?;
        step(t0, &format!("{} ceiling pods created", args.pods));
        let mut watch = BoundWatch::start(&admin, "ceiling").await?;
        let scheduler_client = server.scheduler_client().await?;
        let cpu0 = procstat::server_cpu_seconds(server.dir())?;
        let run = ceiling::bind_all(&scheduler_client, "ceiling", &names, args.nodes, args.ceiling_concurrency).await;
        watch.wait_for(args.pods - run.errors as usize, Instant::now() + Duration::from_secs(60)).await;
        r.server_cpu_s_ceiling = procstat::server_cpu_seconds(server.dir())? - cpu0;
        r.ceiling_wall_s = run.wall.as_secs_f64();
        r.ceiling_pods_per_s = args.pods as f64 / r.ceiling_wall_s.max(1e-9);
        r.ceiling_errors = run.errors;
        if let Some(e) = &run.first_error {
            eprintln!("live_bench: ceiling binding refused: {e}");
        }
        r.ratio = r.scheduler_pods_per_s / r.ceiling_pods_per_s.max(1e-9);
        step(t0, &format!("ceiling: {:.0} pods/s", r.ceiling_pods_per_s));
        r.ceiling_audit = audit::bindings(server.dir(), "ceiling", &names, SCHEDULER_USER)?;
    }
    r.bench_cpu_s = procstat::cpu_seconds(std::process::id())?;
    r.load_average.1 = procstat::load_average();
    tokio::task::spawn_blocking(move || server.stop()).await??;
    step(t0, "apiserver stopped");
    Ok(r)
}
