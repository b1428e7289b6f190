//! `basalt scheduler`: the live scheduler, with vc-scheduler's flags and defaults
//! (volcano-behaviour.md §7, `cmd/scheduler/app/options/options.go`) so an operator can swap the
//! binary under an unchanged Deployment. Go-style spellings are accepted: `--flag=value`,
//! boolean `--flag` / `--flag=false`, durations such as `1s` or `1m30s`, klog's `-v=3`.
//!
//! Flags Volcano has that Basalt accepts but does not act on are listed by
//! [`SchedulerArgs::ignored_flags`] and logged once at start; an unknown flag is an error.

use super::feature_gates::{FeatureGates, SCHEDULING_GATES_QUEUE_ADMISSION};
use crate::convert::duration::parse_go_duration;
use crate::live::options::SchedulerOptions;
use crate::live::runner;
use basalt_core::model::ShardingMode;
use clap::{ArgAction, Args};
use std::path::PathBuf;
use std::time::Duration;

fn duration(s: &str) -> Result<Duration, String> {
    parse_go_duration(s)
}

/// `--watch-timeout`: whole seconds, 1 s to 1 h (the API's `timeoutSeconds` is an integer).
fn watch_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_go_duration(s)?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(3600) || d.subsec_nanos() != 0 {
        return Err(format!("{s:?}: must be whole seconds between 1s and 1h"));
    }
    Ok(d)
}

/// Arguments of `basalt scheduler` (vc-scheduler's flags; defaults are Volcano's unless said).
#[derive(Debug, Args, Clone)]
pub struct SchedulerArgs {
    /// Schedule pods whose spec.schedulerName is this (repeatable).
    #[arg(long = "scheduler-name", value_name = "NAME", default_value = "volcano", action = ArgAction::Append)]
    pub scheduler_names: Vec<String>,
    /// volcano-scheduler.conf path (empty: Volcano's built-in default conf). Reloaded when the
    /// file's directory changes; a bad conf keeps the last good one.
    #[arg(long, value_name = "FILE", default_value = "")]
    pub scheduler_conf: String,
    /// Time between the end of one cycle and the start of the next (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = duration)]
    pub schedule_period: Duration,
    /// Queue of PodGroups that name none; created at start when missing.
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub default_queue: String,
    /// kubeconfig file (empty: in-cluster config, then `$KUBECONFIG`/`~/.kube/config`).
    #[arg(long, value_name = "FILE", default_value = "")]
    pub kubeconfig: String,
    /// API server address; overrides the kubeconfig's server.
    #[arg(long, value_name = "URL", default_value = "")]
    pub master: String,
    /// Client-side limit of API requests per second (all writes share it).
    #[arg(long, value_name = "QPS", default_value_t = 2000.0)]
    pub kube_api_qps: f64,
    /// Client-side burst above `--kube-api-qps`.
    #[arg(long, value_name = "N", default_value_t = 2000)]
    pub kube_api_burst: u32,
    /// Take part in leader election on a Lease before scheduling.
    #[arg(long, value_name = "BOOL", default_value_t = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub leader_elect: bool,
    /// How long a non-renewed lease is valid.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = duration)]
    pub leader_elect_lease_duration: Duration,
    /// How long the leader retries renewing before it gives up leading.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration)]
    pub leader_elect_renew_deadline: Duration,
    /// Time between acquire/renew attempts.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = duration)]
    pub leader_elect_retry_period: Duration,
    /// Lock kind; only `leases` is supported.
    #[arg(long, value_name = "KIND", default_value = "leases")]
    pub leader_elect_resource_lock: String,
    /// Lease name (empty: the scheduler name when exactly one is given, else `volcano`).
    #[arg(long, value_name = "NAME", default_value = "")]
    pub leader_elect_resource_name: String,
    /// Lease namespace.
    #[arg(long, value_name = "NAMESPACE", default_value = "volcano-system")]
    pub leader_elect_resource_namespace: String,
    /// Deprecated spelling of `--leader-elect-resource-namespace`.
    #[arg(long, value_name = "NAMESPACE")]
    pub lock_object_namespace: Option<String>,
    /// Address of `/metrics` (Go `host:port`; `:8080` means every interface).
    #[arg(long, value_name = "ADDR", default_value = ":8080")]
    pub listen_address: String,
    /// Serve Prometheus metrics on `--listen-address`.
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub enable_metrics: bool,
    /// Address of `/healthz`.
    #[arg(long, value_name = "ADDR", default_value = ":11251")]
    pub healthz_address: String,
    /// Serve `/healthz` on `--healthz-address`.
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub enable_healthz: bool,
    /// Only nodes with one of these `key:value` labels are scheduled onto (repeatable; empty:
    /// every node).
    #[arg(long, value_name = "KEY:VALUE", action = ArgAction::Append)]
    pub node_selector: Vec<String>,
    /// Percentage of nodes a predicate scan stops at (0 = Volcano's adaptive). Unset: Basalt
    /// scans every node (100), a deliberate difference from Volcano's 0.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(0..=100))]
    pub percentage_nodes_to_find: Option<i32>,
    /// Below this many nodes every node is scanned.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(i32).range(0..))]
    pub minimum_feasible_nodes: i32,
    /// Lower bound of the adaptive percentage.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(i32).range(0..=100))]
    pub minimum_percentage_nodes_to_find: i32,
    /// Wait at most this long for the first list of every watched kind before scheduling.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    pub resource_sync_timeout: Duration,
    /// klog verbosity: 0–3 info, 4 debug, 5+ trace (`RUST_LOG` overrides).
    #[arg(short = 'v', long = "v", value_name = "LEVEL", default_value_t = 0)]
    pub verbosity: u8,
    /// Seed of the random tie-breaks among equally scored nodes (Basalt; cycle i uses seed + i).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Binds in flight at once (Basalt).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub bind_workers: u32,
    /// Timeout of one API call made by the binder or status writer (Basalt).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration)]
    pub api_timeout: Duration,
    /// Server-side timeout of each watch request (Basalt; client-go picks 5–10 min). The watch
    /// is reopened from its last resourceVersion when it ends, and a stream silent for this long
    /// plus 5 s is taken for dead and reopened, so a stalled connection costs at most that long.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = watch_timeout)]
    pub watch_timeout: Duration,
    /// Stop after this many cycles, once their binds and writes are done (Basalt; for tests and
    /// comparisons with `basalt simulate`; 0 = run until stopped).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_cycles: u64,
    /// Refuse a conf that names an action or plugin Basalt does not implement, or a plugin
    /// argument it does not know or that has no effect here (Basalt; as `simulate --strict`):
    /// at start an error (exit 2), on a reload the conf is refused and the last good one kept.
    /// Without it these are skipped with a warning in the log.
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub strict: bool,
    /// Flight recorder: write every cycle's deltas, conf, seed and decisions into DIR
    /// (Basalt; replay them with `basalt replay --recording DIR`).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Flight recorder: close a segment file once it holds this many compressed bytes (Basalt).
    #[arg(long, value_name = "BYTES", default_value_t = crate::recorder::writer::DEFAULT_SEGMENT_BYTES)]
    pub record_segment_bytes: u64,
    /// Flight recorder: keep at most this many bytes in DIR, deleting the oldest segments
    /// (Basalt).
    #[arg(long, value_name = "BYTES", default_value_t = crate::recorder::writer::DEFAULT_MAX_BYTES)]
    pub record_max_bytes: u64,

    // vc-scheduler flags accepted for compatibility; Basalt does not act on them.
    /// Accepted for compatibility (logs always go to stderr).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub logtostderr: Option<bool>,
    /// Accepted for compatibility; not acted on.
    #[arg(long, value_name = "DURATION", hide = true)]
    pub resync_period: Option<String>,
    /// Accepted for compatibility; PriorityClasses are always read.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub priority_class: Option<bool>,
    /// Accepted for compatibility; not acted on.
    #[arg(long, value_name = "N", hide = true)]
    pub node_worker_threads: Option<u32>,
    /// Accepted for compatibility; volumes are not modelled.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub csi_storage: Option<bool>,
    /// Accepted for compatibility; volumes are not modelled.
    #[arg(long, value_name = "LIST", hide = true, action = ArgAction::Append)]
    pub ignored_provisioners: Vec<String>,
    /// Accepted for compatibility; Basalt has no Go plugins.
    #[arg(long, value_name = "DIR", hide = true)]
    pub plugins_dir: Option<String>,
    /// Accepted for compatibility; the built-in default is used only when no conf is given.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub disable_default_scheduler_config: Option<bool>,
    /// Accepted for compatibility; not acted on.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub cache_dumper: Option<bool>,
    /// Accepted for compatibility; not acted on.
    #[arg(long, value_name = "DIR", hide = true)]
    pub cache_dump_dir: Option<String>,
    /// Accepted for compatibility; no pprof endpoint.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set, hide = true)]
    pub enable_pprof: Option<bool>,
    /// Volcano's feature gates, `Name=true|false,…`. Basalt acts on
    /// `SchedulingGatesQueueAdmission` (off by default): pods gated only by
    /// `scheduling.volcano.sh/queue-allocation-gate` and annotated with it (`"true"`) have the
    /// gate removed once their queue admits them. Other gates are accepted and reported as
    /// without effect; a malformed entry exits with code 2.
    #[arg(long, value_name = "GATES", default_value = "")]
    pub feature_gates: String,
    /// Accepted for compatibility; not acted on.
    #[arg(long, value_name = "DURATION", hide = true)]
    pub log_flush_frequency: Option<String>,
    /// Workers removing the queue-allocation gate from admitted pods (with
    /// SchedulingGatesQueueAdmission); at least 1.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub gate_removal_worker_num: u32,
    /// Node sharding (Volcano's flag): `none`, or `hard` (only the nodes of the NodeShard named
    /// by --scheduler-sharding-name are candidates) or `soft` (they are preferred; other nodes
    /// take what they cannot). Another value exits with code 2.
    #[arg(long, value_name = "MODE", default_value = "none")]
    pub scheduler_sharding_mode: String,
    /// The NodeShard (`shard.volcano.sh/v1alpha1`) this scheduler uses with
    /// --scheduler-sharding-mode hard or soft; it writes that NodeShard's status.
    #[arg(long, value_name = "NAME", default_value = basalt_core::conf::DEFAULT_SHARD_NAME)]
    pub scheduler_sharding_name: String,
    /// Accepted for compatibility; not acted on.
    #[arg(long, value_name = "FILE", hide = true)]
    pub ca_cert_file: Option<String>,
    /// Accepted for compatibility; not acted on.
    #[arg(long, value_name = "FILE", hide = true)]
    pub tls_cert_file: Option<String>,
    /// Accepted for compatibility; not acted on.
    #[arg(long, value_name = "FILE", hide = true)]
    pub tls_private_key_file: Option<String>,
}

impl SchedulerArgs {
    /// Volcano flags given on this command line that Basalt accepts but does not act on, as
    /// `--flag` names (logged once at start).
    pub fn ignored_flags(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut note = |set: bool, name: &'static str| {
            if set {
                v.push(name);
            }
        };
        note(self.resync_period.is_some(), "--resync-period");
        note(self.priority_class == Some(false), "--priority-class=false");
        note(self.node_worker_threads.is_some(), "--node-worker-threads");
        note(self.csi_storage == Some(true), "--csi-storage");
        note(!self.ignored_provisioners.is_empty(), "--ignored-provisioners");
        note(self.plugins_dir.is_some(), "--plugins-dir");
        note(self.disable_default_scheduler_config == Some(true), "--disable-default-scheduler-config");
        note(self.cache_dump_dir.is_some(), "--cache-dump-dir");
        note(self.enable_pprof == Some(true), "--enable-pprof");
        note(
            self.ca_cert_file.is_some() || self.tls_cert_file.is_some() || self.tls_private_key_file.is_some(),
            "--*-file (TLS)",
        );
        v
    }

    /// The Lease namespace: `--leader-elect-resource-namespace`, or the deprecated
    /// `--lock-object-namespace` when only it was changed.
    pub fn lease_namespace(&self) -> String {
        match &self.lock_object_namespace {
            Some(ns) if self.leader_elect_resource_namespace == "volcano-system" => ns.clone(),
            _ => self.leader_elect_resource_namespace.clone(),
        }
    }

    /// The conf path, `None` when `--scheduler-conf` is empty (Volcano's built-in default).
    pub fn conf_path(&self) -> Option<PathBuf> {
        (!self.scheduler_conf.is_empty()).then(|| PathBuf::from(&self.scheduler_conf))
    }

    /// `--node-selector` as (key, value) pairs. Errors: an entry without `:`, naming it.
    pub fn node_selector_pairs(&self) -> Result<Vec<(String, String)>, String> {
        self.node_selector
            .iter()
            .flat_map(|s| s.split(','))
            .filter(|s| !s.trim().is_empty())
            .map(|s| match s.split_once(':') {
                Some((k, v)) => Ok((k.trim().to_string(), v.trim().to_string())),
                None => Err(format!("--node-selector {s:?}: expected key:value")),
            })
            .collect()
    }

    /// The live scheduler's plain settings from these flags, with `node_selector` already
    /// parsed ([`SchedulerArgs::node_selector_pairs`]).
    pub fn options(&self, node_selector: Vec<(String, String)>) -> SchedulerOptions {
        SchedulerOptions {
            scheduler_names: self.scheduler_names.clone(),
            conf_path: self.conf_path(),
            schedule_period: self.schedule_period,
            default_queue: self.default_queue.clone(),
            kubeconfig: self.kubeconfig.clone(),
            master: self.master.clone(),
            kube_api_qps: self.kube_api_qps,
            kube_api_burst: self.kube_api_burst,
            leader_elect: self.leader_elect,
            leader_elect_lease_duration: self.leader_elect_lease_duration,
            leader_elect_renew_deadline: self.leader_elect_renew_deadline,
            leader_elect_retry_period: self.leader_elect_retry_period,
            leader_elect_resource_lock: self.leader_elect_resource_lock.clone(),
            leader_elect_resource_name: self.leader_elect_resource_name.clone(),
            lease_namespace: self.lease_namespace(),
            listen_address: self.listen_address.clone(),
            enable_metrics: self.enable_metrics,
            healthz_address: self.healthz_address.clone(),
            enable_healthz: self.enable_healthz,
            node_selector,
            percentage_nodes_to_find: self.percentage_nodes_to_find,
            minimum_feasible_nodes: self.minimum_feasible_nodes,
            minimum_percentage_nodes_to_find: self.minimum_percentage_nodes_to_find,
            resource_sync_timeout: self.resource_sync_timeout,
            seed: self.seed,
            bind_workers: self.bind_workers,
            api_timeout: self.api_timeout,
            watch_timeout: self.watch_timeout,
            max_cycles: self.max_cycles,
            strict: self.strict,
            record: self.record.clone(),
            record_segment_bytes: self.record_segment_bytes,
            record_max_bytes: self.record_max_bytes,
            // `run` refuses a bad mode before building the options.
            sharding_mode: ShardingMode::parse(&self.scheduler_sharding_mode).unwrap_or_default(),
            sharding_name: self.scheduler_sharding_name.clone(),
            // `run` refuses malformed gates before building the options.
            scheduling_gates_queue_admission: FeatureGates::parse(&self.feature_gates)
                .is_ok_and(|g| g.enabled(SCHEDULING_GATES_QUEUE_ADMISSION)),
            gate_removal_workers: self.gate_removal_worker_num.max(1) as usize,
        }
    }

    /// The `tracing` filter for `--v` (klog levels 0–3 → info, 4 → debug, 5+ → trace).
    pub fn log_filter(&self) -> &'static str {
        match self.verbosity {
            0..=3 => "info",
            4 => "debug",
            _ => "trace",
        }
    }
}

/// Runs `basalt scheduler`: logs the flags accepted without effect, parses `--node-selector`
/// (exit 2 naming a bad entry) and runs the live scheduler ([`crate::live::runner::run`]) with
/// the options; returns the exit code.
pub fn run(args: &SchedulerArgs) -> u8 {
    for f in args.ignored_flags() {
        tracing::warn!("flag {f} is accepted for compatibility with vc-scheduler and has no effect in Basalt");
    }
    match FeatureGates::parse(&args.feature_gates) {
        Ok(g) => g.warnings().iter().for_each(|w| tracing::warn!("{w}")),
        Err(e) => {
            eprintln!("error: {e}");
            return runner::EXIT_BAD_INPUT;
        }
    }
    if let Err(e) = ShardingMode::parse(&args.scheduler_sharding_mode) {
        eprintln!("error: {e}");
        return runner::EXIT_BAD_INPUT;
    }
    let node_selector = match args.node_selector_pairs() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return runner::EXIT_BAD_INPUT;
        }
    };
    runner::run(&args.options(node_selector))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct T {
        #[command(flatten)]
        a: SchedulerArgs,
    }

    fn parse(args: &[&str]) -> Result<SchedulerArgs, clap::Error> {
        T::try_parse_from(std::iter::once("basalt").chain(args.iter().copied())).map(|t| t.a)
    }

    #[test]
    fn defaults_are_vc_schedulers() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.scheduler_names, vec!["volcano"]);
        assert_eq!(a.schedule_period, Duration::from_secs(1));
        assert_eq!(a.default_queue, "default");
        assert!(a.leader_elect);
        assert_eq!(a.leader_elect_lease_duration, Duration::from_secs(15));
        assert_eq!(a.leader_elect_renew_deadline, Duration::from_secs(10));
        assert_eq!(a.leader_elect_retry_period, Duration::from_secs(2));
        assert_eq!(a.lease_namespace(), "volcano-system");
        assert_eq!((a.kube_api_qps, a.kube_api_burst), (2000.0, 2000));
        assert_eq!((a.listen_address.as_str(), a.healthz_address.as_str()), (":8080", ":11251"));
        assert!(!a.enable_metrics && !a.enable_healthz);
        assert_eq!((a.minimum_feasible_nodes, a.minimum_percentage_nodes_to_find), (100, 5));
        assert_eq!(a.percentage_nodes_to_find, None);
    }

    #[test]
    fn helm_chart_args_parse() {
        // The args the Helm chart passes to vc-scheduler (volcano-behaviour.md §7).
        let a = parse(&[
            "--logtostderr",
            "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf",
            "--enable-healthz=true",
            "--enable-metrics=true",
            "--leader-elect=false",
            "--kube-api-qps=2000",
            "--kube-api-burst=2000",
            "--schedule-period=1s",
            "--node-worker-threads=20",
            "-v=3",
        ])
        .unwrap();
        assert!(!a.leader_elect && a.enable_metrics && a.enable_healthz);
        assert_eq!(a.verbosity, 3);
        assert_eq!(a.conf_path(), Some(PathBuf::from("/volcano.scheduler/volcano-scheduler.conf")));
        assert_eq!(a.ignored_flags(), vec!["--node-worker-threads"]);
    }

    #[test]
    fn repeated_scheduler_names_and_selectors() {
        let a = parse(&["--scheduler-name=a", "--scheduler-name", "b", "--node-selector=zone:a,pool:gpu"]).unwrap();
        assert_eq!(a.scheduler_names, vec!["a", "b"]);
        assert_eq!(a.node_selector_pairs().unwrap(), vec![("zone".into(), "a".into()), ("pool".into(), "gpu".into())]);
        let bad = parse(&["--node-selector=zone"]).unwrap();
        assert!(bad.node_selector_pairs().unwrap_err().contains("\"zone\""));
    }

    #[test]
    fn unknown_flags_and_bad_values_are_errors() {
        assert!(parse(&["--no-such-flag"]).is_err());
        assert!(parse(&["--schedule-period=1x"]).is_err());
        assert!(parse(&["--leader-elect=maybe"]).is_err());
        assert!(parse(&["--percentage-nodes-to-find=101"]).is_err());
    }

    #[test]
    fn watch_timeout_is_whole_seconds_within_an_hour() {
        assert_eq!(parse(&[]).unwrap().watch_timeout, Duration::from_secs(60));
        assert_eq!(parse(&["--watch-timeout=5s"]).unwrap().watch_timeout, Duration::from_secs(5));
        assert_eq!(parse(&["--watch-timeout=1m30s"]).unwrap().watch_timeout, Duration::from_secs(90));
        for bad in ["--watch-timeout=0s", "--watch-timeout=1500ms", "--watch-timeout=2h"] {
            let e = parse(&[bad]).unwrap_err().to_string();
            assert!(e.contains("whole seconds between 1s and 1h"), "{bad}: {e}");
        }
    }

    #[test]
    fn klog_verbosity_spellings() {
        assert_eq!(parse(&["--v=4"]).unwrap().log_filter(), "debug");
        assert_eq!(parse(&["-v", "5"]).unwrap().log_filter(), "trace");
        assert_eq!(parse(&["-v=2"]).unwrap().log_filter(), "info");
    }
}
