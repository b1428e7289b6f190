//! `--first-list`: how long `basalt scheduler`'s first list of a running cluster takes through
//! the real kube-apiserver, and the scheduler's memory right after it (issue 29, "the live path
//! at that size"). The cluster is `--nodes` Ready nodes and `--pods` pods already bound to them
//! round-robin, in PodGroups of `--gang`; nothing is left to schedule. The scheduler lists every
//! kind in pages of 500 (kube-rs's watcher default, which the live watches keep) and logs
//! `first list complete` with its own elapsed time once every kind has listed; the bench polls
//! the log every 100 ms, reads the scheduler's `VmRSS` and `VmHWM` at that moment, lets it run
//! 5 s more (a cycle over the full cluster), reads them again and stops it.

use crate::scheduler_child::SchedulerChild;
use crate::{procstat, setup, step, support, Args};
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// One first-list run.
#[derive(Debug, Default, Serialize)]
pub struct FirstListReport {
    /// Ready nodes.
    pub nodes: usize,
    /// Bound pods (and `pods / gang` PodGroups).
    pub pods: usize,
    /// Seconds to create the nodes, and the PodGroups and pods.
    pub create_s: (f64, f64),
    /// The scheduler's own `after_ms` of its `first list complete` line, in seconds: from the
    /// start of its scheduling loop to the end of the last kind's first list.
    pub first_list_s: f64,
    /// From the process's spawn to the bench seeing that line (100 ms polls), seconds.
    pub spawn_to_listed_s: f64,
    /// Nodes and pods the scheduler counted when it logged the line.
    pub listed: (u64, u64),
    /// `VmRSS` and `VmHWM` of the scheduler when the line was seen, MiB.
    pub rss_at_listed_mib: (f64, f64),
    /// `VmRSS` and `VmHWM` 5 s later, after cycles over the full cluster, MiB.
    pub rss_after_5s_mib: (f64, f64),
    /// The scheduler's CPU seconds at the line and 5 s later.
    pub cpu_s: (f64, f64),
    /// API server + etcd CPU seconds during the first list.
    pub server_cpu_s: f64,
    /// Load average before and after.
    pub load_average: (String, String),
}

impl FirstListReport {
    /// A readable summary.
    pub fn table(&self) -> String {
        format!(
            "{} nodes, {} bound pods: first list {:.1} s (spawn → seen {:.1} s), listed {} nodes / {} pods; \
             scheduler RSS {:.0} MiB (peak {:.0}) after the list, {:.0} MiB (peak {:.0}) 5 s later; \
             CPU {:.1} s / {:.1} s; server CPU {:.1} s; created in {:.0} s + {:.0} s; load {} → {}\n",
            self.nodes,
            self.pods,
            self.first_list_s,
            self.spawn_to_listed_s,
            self.listed.0,
            self.listed.1,
            self.rss_at_listed_mib.0,
            self.rss_at_listed_mib.1,
            self.rss_after_5s_mib.0,
            self.rss_after_5s_mib.1,
            self.cpu_s.0,
            self.cpu_s.1,
            self.server_cpu_s,
            self.create_s.0,
            self.create_s.1,
            self.load_average.0,
            self.load_average.1,
        )
    }
}

/// The `first list complete` line of the scheduler's log, if written yet: `(after_ms, nodes, pods)`.
fn listed_line(log: &Path) -> Option<(u64, u64, u64)> {
    let text = std::fs::read_to_string(log).ok()?;
    let line = text.lines().find(|l| l.contains("first list complete"))?;
    let field = |name: &str| {
        line.split_whitespace().find_map(|w| w.strip_prefix(name).and_then(|v| v.trim_matches('"').parse::<u64>().ok()))
    };
    Some((field("after_ms=")?, field("nodes=")?, field("pods=")?))
}

/// Runs the first-list bench. Errors: the server, a create, or the scheduler failed (named).
pub async fn run(args: &Args, log_path: &Path) -> support::Result<FirstListReport> {
    let t0 = Instant::now();
    let server = tokio::task::spawn_blocking(support::TestApiserver::start).await??;
    step(t0, &format!("apiserver ready at {} ({})", server.server_url(), server.dir().display()));
    let admin = server.admin_client().await?;
    support::install_volcano_crds(&admin).await?;
    support::apply_scheduler_rbac(&admin).await?;
    setup::create_queues(&admin, args.queues).await?;
    let mut r = FirstListReport { nodes: args.nodes, pods: args.pods, ..Default::default() };
    let t = Instant::now();
    setup::create_nodes(&admin, args.nodes, args.create_concurrency).await?;
    r.create_s.0 = t.elapsed().as_secs_f64();
    step(t0, &format!("{} nodes created in {:.1} s", args.nodes, r.create_s.0));
    support::ensure_namespace(&admin, "bench").await?;
    let t = Instant::now();
    setup::create_batch(
        &admin,
        "bench",
        args.pods,
        Some(args.gang),
        args.queues,
        "volcano",
        args.create_concurrency,
        Some(args.nodes),
    )
    .await?;
    r.create_s.1 = t.elapsed().as_secs_f64();
    step(t0, &format!("{} PodGroups and {} bound pods created in {:.1} s", args.pods / args.gang, args.pods, r.create_s.1));

    r.load_average.0 = procstat::load_average();
    let server_cpu0 = procstat::server_cpu_seconds(server.dir())?;
    let mut child = SchedulerChild::start(&args.basalt, &server.scheduler_kubeconfig(), &args.scheduler_args, log_path, "info")?;
    step(t0, &format!("basalt scheduler started (pid {}, log {})", child.pid(), log_path.display()));
    let pid = child.pid();
    let deadline = child.started + Duration::from_secs(args.timeout_s);
    let (after_ms, nodes, pods) = loop {
        if let Some(found) = listed_line(log_path) {
            break found;
        }
        if let Some(status) = child.exited() {
            return Err(format!("the scheduler exited ({status}) before its first list; log: {}", log_path.display()).into());
        }
        if Instant::now() >= deadline {
            let _ = child.terminate(Duration::from_secs(15)).await;
            return Err(format!("no first list after {} s; log: {}", args.timeout_s, log_path.display()).into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    r.spawn_to_listed_s = child.started.elapsed().as_secs_f64();
    r.server_cpu_s = procstat::server_cpu_seconds(server.dir())? - server_cpu0;
    r.first_list_s = after_ms as f64 / 1e3;
    r.listed = (nodes, pods);
    r.rss_at_listed_mib = (procstat::rss_mib(pid)?, procstat::peak_rss_mib(pid)?);
    r.cpu_s.0 = procstat::cpu_seconds(pid)?;
    step(t0, &format!("first list complete after {:.1} s", r.first_list_s));
    tokio::time::sleep(Duration::from_secs(5)).await;
    r.rss_after_5s_mib = (procstat::rss_mib(pid)?, procstat::peak_rss_mib(pid)?);
    r.cpu_s.1 = procstat::cpu_seconds(pid)?;
    child.terminate(Duration::from_secs(20)).await?;
    r.load_average.1 = procstat::load_average();
    tokio::task::spawn_blocking(move || server.stop()).await??;
    step(t0, "apiserver stopped");
    if (nodes, pods) != (args.nodes as u64, args.pods as u64) {
        return Err(format!(
            "the scheduler listed {nodes} nodes and {pods} pods, not {} and {}; log: {}",
            args.nodes,
            args.pods,
            log_path.display()
        )
        .into());
    }
    Ok(r)
}
