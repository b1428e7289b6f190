//! The bench's result: one [`Report`] per run, printed as a text table or JSON, and what the
//! scheduler's log says (warnings, errors, per-cycle lines).

use crate::audit::BindingAudit;
use serde::Serialize;
use std::path::Path;

/// One cycle's debug line of `basalt scheduler` (`RUST_LOG=basalt_runtime=debug`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CycleLine {
    /// Cycle number.
    pub cycle: u64,
    /// Binds decided in it.
    pub binds: u64,
    /// Writes queued by it.
    pub writes: u64,
    /// Session open, ms.
    pub open_ms: f64,
    /// Open to the last request queued, ms.
    pub total_ms: f64,
}

/// What the scheduler's log holds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SchedulerLog {
    /// The log file.
    pub path: String,
    /// Lines at level WARN.
    pub warnings: u64,
    /// Lines at level ERROR.
    pub errors: u64,
    /// The first few WARN/ERROR lines, as written.
    pub first_problems: Vec<String>,
    /// Cycles that bound or wrote something.
    pub cycles: Vec<CycleLine>,
}

impl SchedulerLog {
    /// Reads the log at `path`. Errors: unreadable (path named).
    pub fn read(path: &Path) -> Result<SchedulerLog, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut log = SchedulerLog { path: path.display().to_string(), ..Default::default() };
        for line in text.lines() {
            let level = line.split_whitespace().nth(1).unwrap_or("");
            match level {
                "WARN" => log.warnings += 1,
                "ERROR" => log.errors += 1,
                _ => {}
            }
            if (level == "WARN" || level == "ERROR") && log.first_problems.len() < 10 {
                log.first_problems.push(line.to_string());
            }
            if level == "DEBUG" && line.contains(": cycle ") {
                let mut c = CycleLine::default();
                for kv in line.split_whitespace() {
                    let Some((k, v)) = kv.split_once('=') else { continue };
                    match k {
                        "cycle" => c.cycle = v.parse().unwrap_or(0),
                        "binds" => c.binds = v.parse().unwrap_or(0),
                        "writes" => c.writes = v.parse().unwrap_or(0),
                        "open_ms" => c.open_ms = v.parse().unwrap_or(0.0),
                        "total_ms" => c.total_ms = v.parse().unwrap_or(0.0),
                        _ => {}
                    }
                }
                log.cycles.push(c);
            }
        }
        Ok(log)
    }
}

/// Everything one bench run measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Nodes in the cluster.
    pub nodes: usize,
    /// Pods scheduled by Basalt (and, separately, bound directly for the ceiling).
    pub pods: usize,
    /// Pods per PodGroup (`minMember`).
    pub gang: usize,
    /// Seconds to create the nodes.
    pub create_nodes_s: f64,
    /// Seconds to create the PodGroups and pods of the scheduler's batch.
    pub create_pods_s: f64,
    /// Scheduler start → first pod seen bound, s.
    pub start_to_first_bind_s: f64,
    /// First → last pod seen bound (by the bench's watch), s.
    pub first_to_last_bind_s: f64,
    /// Scheduler start → last pod seen bound, s.
    pub start_to_last_bind_s: f64,
    /// pods / first_to_last_bind_s.
    pub scheduler_pods_per_s: f64,
    /// pods / start_to_last_bind_s.
    pub scheduler_pods_per_s_from_start: f64,
    /// First → last successful binding by the audit log's `stageTimestamp`, s.
    pub server_first_to_last_bind_s: f64,
    /// Basalt's CPU seconds (user + system) from start to the last bind.
    pub basalt_cpu_s_at_last_bind: f64,
    /// Basalt's CPU seconds from start until it was stopped (after its writes settled).
    pub basalt_cpu_s: f64,
    /// Basalt's peak RSS (VmHWM), MiB.
    pub basalt_peak_rss_mib: f64,
    /// API server + etcd CPU seconds from the scheduler's start to the last bind.
    pub server_cpu_s_scheduler: f64,
    /// The scheduler's exit status after SIGTERM.
    pub basalt_exit: String,
    /// Audit of the scheduler's bindings.
    pub audit: BindingAudit,
    /// The scheduler's log.
    pub log: SchedulerLog,
    /// Pods per node seen bound by the scheduler (min, max).
    pub pods_per_node: (usize, usize),
    /// Pods seen bound to a second node + watch errors (must be 0).
    pub watch_anomalies: (u64, u64),
    /// Concurrent binding POSTs of the ceiling run.
    pub ceiling_concurrency: usize,
    /// Wall time of the ceiling run, s.
    pub ceiling_wall_s: f64,
    /// pods / ceiling_wall_s.
    pub ceiling_pods_per_s: f64,
    /// API server + etcd CPU seconds during the ceiling run.
    pub server_cpu_s_ceiling: f64,
    /// Ceiling bindings refused.
    pub ceiling_errors: u64,
    /// Audit of the ceiling's bindings.
    pub ceiling_audit: BindingAudit,
    /// scheduler_pods_per_s / ceiling_pods_per_s.
    pub ratio: f64,
    /// The bench process's own CPU seconds (watches, creates, ceiling client).
    pub bench_cpu_s: f64,
    /// `/proc/loadavg` when the scheduler started and when the ceiling run ended (the machine is
    /// shared: a load above its 2 cores means the numbers are lower bounds).
    pub load_average: (String, String),
}

impl Report {
    /// The result as a small text table.
    pub fn table(&self) -> String {
        let a = &self.audit;
        let rows = [
            ("nodes / pods / gang", format!("{} / {} / {}", self.nodes, self.pods, self.gang)),
            ("create nodes, pods (s)", format!("{:.1}, {:.1}", self.create_nodes_s, self.create_pods_s)),
            ("start → first bind (s)", format!("{:.2}", self.start_to_first_bind_s)),
            (
                "first → last bind (s)",
                format!("{:.2} (audit: {:.2})", self.first_to_last_bind_s, self.server_first_to_last_bind_s),
            ),
            ("basalt pods/s (first→last)", format!("{:.0}", self.scheduler_pods_per_s)),
            ("basalt pods/s (start→last)", format!("{:.0}", self.scheduler_pods_per_s_from_start)),
            (
                "ceiling pods/s (direct POSTs)",
                format!("{:.0} ({} in flight, {:.2} s)", self.ceiling_pods_per_s, self.ceiling_concurrency, self.ceiling_wall_s),
            ),
            ("ratio basalt / ceiling", format!("{:.0} %", self.ratio * 100.0)),
            ("basalt CPU s (at last bind, total)", format!("{:.2}, {:.2}", self.basalt_cpu_s_at_last_bind, self.basalt_cpu_s)),
            ("basalt peak RSS (MiB)", format!("{:.0}", self.basalt_peak_rss_mib)),
            (
                "server CPU s (basalt run, ceiling run)",
                format!("{:.1}, {:.1}", self.server_cpu_s_scheduler, self.server_cpu_s_ceiling),
            ),
            (
                "binds audited (ok, failed, pods != 1 ok)",
                format!("{}, {} {:?}, {}", a.successes, a.failures, a.failure_codes, a.pods_not_bound_once),
            ),
            (
                "ceiling audited (ok, failed, pods != 1 ok)",
                format!(
                    "{}, {}, {}",
                    self.ceiling_audit.successes, self.ceiling_audit.failures, self.ceiling_audit.pods_not_bound_once
                ),
            ),
            ("pods per node (min, max)", format!("{:?}", self.pods_per_node)),
            ("scheduler log (warn, error)", format!("{}, {}", self.log.warnings, self.log.errors)),
            ("cycles that bound", format!("{}", self.log.cycles.iter().filter(|c| c.binds > 0).count())),
            ("basalt exit", self.basalt_exit.clone()),
            ("load average (start, end)", format!("{} | {}", self.load_average.0, self.load_average.1)),
        ];
        let w = rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
        let mut s = String::new();
        for (k, v) in rows {
            s.push_str(&format!("{k:<w$}  {v}\n"));
        }
        for c in self.log.cycles.iter().filter(|c| c.binds > 0) {
            s.push_str(&format!(
                "  cycle {}: {} binds, {} writes, open {:.1} ms, total {:.1} ms\n",
                c.cycle, c.binds, c.writes, c.open_ms, c.total_ms
            ));
        }
        let mut reqs: Vec<_> = a.requests_by_user.iter().collect();
        reqs.sort_by(|x, y| y.1.cmp(x.1));
        s.push_str("  scheduler's requests:");
        for (k, n) in reqs {
            s.push_str(&format!(" {k}={n};"));
        }
        s.push('\n');
        s.push_str("  of which between the first and the last binding:");
        let mut during: Vec<_> = a.requests_during_binds.iter().collect();
        during.sort_by(|x, y| y.1.cmp(x.1));
        for (k, n) in during {
            s.push_str(&format!(" {k}={n};"));
        }
        s.push('\n');
        s
    }
}
