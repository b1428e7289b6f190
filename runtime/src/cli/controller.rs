//! `basalt controller`: Volcano's controller-manager replacement, with its flags and defaults
//! (volcano-behaviour.md §5.5, `cmd/controller-manager/app/options`). Runs the job, PodGroup and
//! Queue controllers ([`crate::controller`]). Go-style spellings are accepted as for `basalt scheduler`.

use crate::controller::options::{ControllerOptions, ShardingOptions};
use crate::controller::run::{
    self as runner, CRONJOB_CONTROLLER, JOB_CONTROLLER, PG_CONTROLLER, QUEUE_CONTROLLER, SHARDING_CONTROLLER,
};
use crate::controller::shard_config::{self, ShardingConfig};
use crate::convert::duration::parse_go_duration;
use clap::{ArgAction, Args};
use std::time::Duration;

fn duration(s: &str) -> Result<Duration, String> {
    parse_go_duration(s)
}

/// Arguments of `basalt controller` (vc-controller-manager's flags; defaults are Volcano's).
#[derive(Debug, Args, Clone)]
pub struct ControllerArgs {
    /// kubeconfig file (empty: in-cluster config, then `$KUBECONFIG`/`~/.kube/config`).
    #[arg(long, value_name = "FILE", default_value = "")]
    pub kubeconfig: String,
    /// API server address; overrides the kubeconfig's server.
    #[arg(long, value_name = "URL", default_value = "")]
    pub master: String,
    /// Client-side limit of API requests per second.
    #[arg(long, value_name = "QPS", default_value_t = 50.0)]
    pub kube_api_qps: f64,
    /// Client-side burst above `--kube-api-qps`.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub kube_api_burst: u32,
    /// Job controller workers; each owns a queue and the jobs hashed to it.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub worker_threads: u32,
    /// Retries of a failing job request before the job is terminated (−1: unlimited).
    #[arg(long, value_name = "N", default_value_t = 15, allow_hyphen_values = true)]
    pub max_requeue_num: i32,
    /// Scheduler name written into pods that name none, and whose plain pods get PodGroups
    /// (repeatable; the first is written).
    #[arg(long = "scheduler-name", value_name = "NAME", default_value = "volcano", action = ArgAction::Append)]
    pub scheduler_names: Vec<String>,
    /// Controllers to run (`*` or a comma list; `-name` disables). Implemented:
    /// `job-controller`, `pg-controller`, `queue-controller`, `cronjob-controller`,
    /// `sharding-controller` (off by default, as in Volcano); others named are reported and
    /// skipped.
    #[arg(long, value_name = "LIST", default_value = "*,-sharding-controller")]
    pub controllers: String,
    /// Sharding controller, deprecated (use the sharding ConfigMap): the schedulers' shards as
    /// `name:type:min_util:max_util:prefer_warmup:min_nodes:max_nodes` (comma-separated or
    /// repeated), used while no valid sharding ConfigMap exists.
    #[arg(long, value_name = "LIST", value_delimiter = ',', action = ArgAction::Append,
          default_values_t = shard_config::DEFAULT_SCHEDULER_CONFIGS.map(String::from))]
    pub scheduler_configs: Vec<String>,
    /// Sharding controller: time between full node assignments.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    pub shard_sync_period: Duration,
    /// Sharding controller: node and pod events that change a node's utilisation by more than
    /// 0.5, and added nodes, trigger an assignment.
    #[arg(long, value_name = "BOOL", default_value_t = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub enable_node_event_trigger: bool,
    /// Sharding controller: the ConfigMap holding its configuration (key `sharding.yaml`),
    /// watched; empty: `--scheduler-configs` only.
    #[arg(long, value_name = "NAME", default_value = shard_config::DEFAULT_CONFIGMAP_NAME)]
    pub sharding_configmap: String,
    /// Sharding controller: the namespace of `--sharding-configmap`.
    #[arg(long, value_name = "NAMESPACE", default_value = shard_config::DEFAULT_CONFIGMAP_NAMESPACE)]
    pub sharding_configmap_namespace: String,
    /// Take part in leader election before acting.
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
    /// Lease name.
    #[arg(long, value_name = "NAME", default_value = "vc-controller-manager")]
    pub leader_elect_resource_name: String,
    /// Lease namespace.
    #[arg(long, value_name = "NAMESPACE", default_value = "volcano-system")]
    pub leader_elect_resource_namespace: String,
    /// Address of `/metrics`.
    #[arg(long, value_name = "ADDR", default_value = ":8081")]
    pub listen_address: String,
    /// Serve metrics on `--listen-address`.
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub enable_metrics: bool,
    /// Address of `/healthz`.
    #[arg(long, value_name = "ADDR", default_value = ":11251")]
    pub healthz_address: String,
    /// Serve `/healthz` on `--healthz-address`.
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub enable_healthz: bool,
    /// PodGroup controller: copy the owners' `volcano.sh/*` annotations onto a plain pod's
    /// PodGroup and read its `minMember` from their `scheduling.volcano.sh/group-min-member`.
    #[arg(long, value_name = "BOOL", default_value_t = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub inherit_owner_annotations: bool,
    /// PodGroup controller workers; pods are hashed to one by `namespace/name`.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub worker_threads_for_podgroup: u32,
    /// Queue controller workers; queues are hashed to one by name.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub worker_threads_for_queue: u32,
    /// Accepted for compatibility (no effect: the TTL collector is one task).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub worker_threads_for_gc: u32,
    /// CronJob controller workers; CronJobs are hashed to one by `namespace/name`.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub worker_threads_for_cronjob: u32,
    /// klog verbosity: 0–3 info, 4 debug, 5+ trace (`RUST_LOG` overrides).
    #[arg(short = 'v', long = "v", value_name = "LEVEL", default_value_t = 0)]
    pub verbosity: u8,
}

impl ControllerArgs {
    /// The `tracing` filter `-v` asks for.
    pub fn log_filter(&self) -> &'static str {
        match self.verbosity {
            0..=3 => "info",
            4 => "debug",
            _ => "trace",
        }
    }

    /// Checks values clap cannot: every worker count ≥ 1, `--max-requeue-num` ≥ −1, positive QPS,
    /// `--scheduler-configs` entries.
    ///
    /// Errors: the flag and why.
    pub fn validate(&self) -> Result<(), String> {
        for (flag, n) in [
            ("--worker-threads", self.worker_threads),
            ("--worker-threads-for-podgroup", self.worker_threads_for_podgroup),
            ("--worker-threads-for-queue", self.worker_threads_for_queue),
            ("--worker-threads-for-cronjob", self.worker_threads_for_cronjob),
        ] {
            if n == 0 {
                return Err(format!("{flag} must be at least 1"));
            }
        }
        if self.max_requeue_num < -1 {
            return Err(format!("--max-requeue-num {}: must be −1 (unlimited) or ≥ 0", self.max_requeue_num));
        }
        if self.kube_api_qps.is_nan() || self.kube_api_qps <= 0.0 {
            return Err(format!("--kube-api-qps {}: must be positive", self.kube_api_qps));
        }
        self.sharding_flag_config()?;
        if self.leader_elect_resource_lock != "leases" {
            return Err(format!(
                "--leader-elect-resource-lock {:?}: only \"leases\" is supported",
                self.leader_elect_resource_lock
            ));
        }
        Ok(())
    }

    /// Whether `--controllers` enables `name` (Volcano's syntax: `*`, names, `-name`).
    pub fn controller_enabled(&self, name: &str) -> bool {
        let items: Vec<&str> = self.controllers.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if items.iter().any(|i| i.strip_prefix('-') == Some(name)) {
            return false;
        }
        items.iter().any(|i| *i == name || *i == "*")
    }
}

impl ControllerArgs {
    /// `--scheduler-configs` parsed ([`shard_config::parse_flag`]). Errors: the entry and why.
    pub fn sharding_flag_config(&self) -> Result<ShardingConfig, String> {
        shard_config::parse_flag(&self.scheduler_configs)
    }

    /// The controller-manager's plain settings from these flags (`--controllers` resolved).
    pub fn options(&self) -> ControllerOptions {
        ControllerOptions {
            kubeconfig: self.kubeconfig.clone(),
            master: self.master.clone(),
            kube_api_qps: self.kube_api_qps,
            kube_api_burst: self.kube_api_burst,
            worker_threads: self.worker_threads,
            max_requeue_num: self.max_requeue_num,
            scheduler_names: self.scheduler_names.clone(),
            controllers: self.controllers.clone(),
            job_controller: self.controller_enabled(JOB_CONTROLLER),
            pg_controller: self.controller_enabled(PG_CONTROLLER),
            queue_controller: self.controller_enabled(QUEUE_CONTROLLER),
            cronjob_controller: self.controller_enabled(CRONJOB_CONTROLLER),
            sharding_controller: self.controller_enabled(SHARDING_CONTROLLER),
            sharding: ShardingOptions {
                flag_config: self.sharding_flag_config().unwrap_or_default(),
                shard_sync_period: self.shard_sync_period,
                enable_node_event_trigger: self.enable_node_event_trigger,
                configmap_name: self.sharding_configmap.clone(),
                configmap_namespace: self.sharding_configmap_namespace.clone(),
            },
            leader_elect: self.leader_elect,
            leader_elect_lease_duration: self.leader_elect_lease_duration,
            leader_elect_renew_deadline: self.leader_elect_renew_deadline,
            leader_elect_retry_period: self.leader_elect_retry_period,
            leader_elect_resource_lock: self.leader_elect_resource_lock.clone(),
            leader_elect_resource_name: self.leader_elect_resource_name.clone(),
            leader_elect_resource_namespace: self.leader_elect_resource_namespace.clone(),
            listen_address: self.listen_address.clone(),
            enable_metrics: self.enable_metrics,
            healthz_address: self.healthz_address.clone(),
            enable_healthz: self.enable_healthz,
            inherit_owner_annotations: self.inherit_owner_annotations,
            worker_threads_for_podgroup: self.worker_threads_for_podgroup,
            worker_threads_for_queue: self.worker_threads_for_queue,
            worker_threads_for_cronjob: self.worker_threads_for_cronjob,
        }
    }
}

/// Runs `basalt controller`: checks the flags ([`ControllerArgs::validate`], exit 2 naming the
/// flag) and runs the controllers ([`crate::controller::run::run`]) with the options; returns
/// the exit code.
pub fn run(args: &ControllerArgs) -> u8 {
    if let Err(e) = args.validate() {
        eprintln!("error: {e}");
        return runner::EXIT_BAD_INPUT;
    }
    runner::run(&args.options())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: ControllerArgs,
    }

    #[test]
    fn volcano_defaults_and_spellings() {
        let a = T::parse_from(["t"]).a;
        assert_eq!((a.worker_threads, a.max_requeue_num, a.kube_api_qps, a.kube_api_burst), (3, 15, 50.0, 100));
        assert_eq!(a.scheduler_names, vec!["volcano".to_string()]);
        assert!(a.leader_elect);
        assert_eq!(a.leader_elect_resource_name, "vc-controller-manager");
        let a = T::parse_from(["t", "--worker-threads=5", "--max-requeue-num=-1", "--leader-elect=false", "-v=4"]).a;
        assert_eq!((a.worker_threads, a.max_requeue_num, a.leader_elect, a.log_filter()), (5, -1, false, "debug"));
        assert!(a.validate().is_ok());
    }

    #[test]
    fn bad_values_are_named() {
        let a = T::parse_from(["t", "--worker-threads=0"]).a;
        assert_eq!(a.validate().unwrap_err(), "--worker-threads must be at least 1");
        let a = T::parse_from(["t", "--worker-threads-for-queue=0"]).a;
        assert_eq!(a.validate().unwrap_err(), "--worker-threads-for-queue must be at least 1");
        let a = T::parse_from(["t", "--max-requeue-num=-2"]).a;
        assert!(a.validate().unwrap_err().starts_with("--max-requeue-num -2"));
    }

    #[test]
    fn controllers_list() {
        let mut a = T::parse_from(["t"]).a;
        assert!(a.controller_enabled("job-controller"));
        a.controllers = "*,-job-controller".into();
        assert!(!a.controller_enabled("job-controller"));
        a.controllers = "queue-controller".into();
        assert!(!a.controller_enabled("job-controller"));
        assert!(a.controller_enabled("queue-controller"));
        a.controllers = "*,-pg-controller".into();
        assert!(!a.controller_enabled("pg-controller") && a.controller_enabled("queue-controller"));
    }

    #[test]
    fn sharding_controller_is_off_by_default_and_takes_volcanos_flags() {
        let a = T::parse_from(["t"]).a;
        assert!(!a.options().sharding_controller && a.options().job_controller);
        assert_eq!(a.scheduler_configs, shard_config::DEFAULT_SCHEDULER_CONFIGS.map(String::from));
        let o = a.options().sharding;
        assert_eq!((o.shard_sync_period, o.enable_node_event_trigger), (Duration::from_secs(60), true));
        assert_eq!((o.configmap_name.as_str(), o.configmap_namespace.as_str()), ("volcano-sharding-configmap", "volcano-system"));
        assert_eq!(o.flag_config.schedulers.len(), 2);
        let a = T::parse_from([
            "t",
            "--controllers=*",
            "--scheduler-configs=a:volcano:0:1:false:0:2,b:volcano:0:1:false:0:0",
            "--shard-sync-period=5s",
            "--enable-node-event-trigger=false",
            "--sharding-configmap=",
        ])
        .a;
        assert!(a.validate().is_ok());
        let o = a.options();
        assert!(o.sharding_controller);
        let names: Vec<&str> = o.sharding.flag_config.schedulers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!((o.sharding.shard_sync_period, o.sharding.enable_node_event_trigger), (Duration::from_secs(5), false));
        assert!(o.sharding.configmap_name.is_empty());
        let a = T::parse_from(["t", "--scheduler-configs", "a:volcano:0:2:false:0:0"]).a;
        assert!(a.validate().unwrap_err().starts_with("--scheduler-configs \"a:volcano:0:2:false:0:0\""));
    }
}
