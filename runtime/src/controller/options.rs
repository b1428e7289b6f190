//! What `basalt controller` runs with, as plain values:
//! [`crate::cli::controller::ControllerArgs`] parses and checks vc-controller-manager's flags
//! (volcano-behaviour.md §5.5) and builds a [`ControllerOptions`]; the process
//! ([`super::run`]) reads only this, never the command line.

use super::shard_config::ShardingConfig;
use std::time::Duration;

/// The controller-manager's settings, one field per flag it acts on (the flag is named on each).
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// `--kubeconfig` (empty: in-cluster config, then `$KUBECONFIG`/`~/.kube/config`).
    pub kubeconfig: String,
    /// `--master` (empty: the kubeconfig's server).
    pub master: String,
    /// `--kube-api-qps`: client-side API requests per second.
    pub kube_api_qps: f64,
    /// `--kube-api-burst`: client-side burst above `kube_api_qps`.
    pub kube_api_burst: u32,
    /// `--worker-threads`: job controller workers (≥ 1).
    pub worker_threads: u32,
    /// `--max-requeue-num`: retries of a failing request (−1: unlimited).
    pub max_requeue_num: i32,
    /// `--scheduler-name`: written into pods that name none; whose plain pods get PodGroups.
    pub scheduler_names: Vec<String>,
    /// `--controllers` as given (for messages).
    pub controllers: String,
    /// Whether `--controllers` enables `job-controller`.
    pub job_controller: bool,
    /// Whether `--controllers` enables `pg-controller`.
    pub pg_controller: bool,
    /// Whether `--controllers` enables `queue-controller`.
    pub queue_controller: bool,
    /// Whether `--controllers` enables `cronjob-controller`.
    pub cronjob_controller: bool,
    /// Whether `--controllers` enables `sharding-controller` (off by default, as in Volcano).
    pub sharding_controller: bool,
    /// The sharding controller's flags.
    pub sharding: ShardingOptions,
    /// `--leader-elect`.
    pub leader_elect: bool,
    /// `--leader-elect-lease-duration`.
    pub leader_elect_lease_duration: Duration,
    /// `--leader-elect-renew-deadline`.
    pub leader_elect_renew_deadline: Duration,
    /// `--leader-elect-retry-period`.
    pub leader_elect_retry_period: Duration,
    /// `--leader-elect-resource-lock` (only `leases`).
    pub leader_elect_resource_lock: String,
    /// `--leader-elect-resource-name`.
    pub leader_elect_resource_name: String,
    /// `--leader-elect-resource-namespace`.
    pub leader_elect_resource_namespace: String,
    /// `--listen-address` of `/metrics`.
    pub listen_address: String,
    /// `--enable-metrics`.
    pub enable_metrics: bool,
    /// `--healthz-address` of `/healthz`.
    pub healthz_address: String,
    /// `--enable-healthz`.
    pub enable_healthz: bool,
    /// `--inherit-owner-annotations` (PodGroup controller).
    pub inherit_owner_annotations: bool,
    /// `--worker-threads-for-podgroup` (≥ 1).
    pub worker_threads_for_podgroup: u32,
    /// `--worker-threads-for-queue` (≥ 1).
    pub worker_threads_for_queue: u32,
    /// `--worker-threads-for-cronjob` (≥ 1).
    pub worker_threads_for_cronjob: u32,
}

/// The sharding controller's flags (Volcano's `ShardingControllerOptions`).
#[derive(Clone, Debug)]
pub struct ShardingOptions {
    /// `--scheduler-configs`, parsed: the configuration used until a sharding ConfigMap parses.
    pub flag_config: ShardingConfig,
    /// `--shard-sync-period`: time between full assignments.
    pub shard_sync_period: Duration,
    /// `--enable-node-event-trigger`: node and pod events may ask for an assignment.
    pub enable_node_event_trigger: bool,
    /// `--sharding-configmap` (empty: no ConfigMap, the flags only).
    pub configmap_name: String,
    /// `--sharding-configmap-namespace`.
    pub configmap_namespace: String,
}
