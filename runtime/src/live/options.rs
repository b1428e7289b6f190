//! What `basalt scheduler` runs with, as plain values: [`crate::cli::scheduler::SchedulerArgs`]
//! parses vc-scheduler's flags (volcano-behaviour.md §7) and builds a [`SchedulerOptions`];
//! the live scheduler ([`super::runner`]) reads only this, never the command line.

use std::path::PathBuf;
use std::time::Duration;

/// The live scheduler's settings, one field per flag it acts on (the flag is named on each).
#[derive(Clone, Debug)]
pub struct SchedulerOptions {
    /// `--scheduler-name`: schedule pods whose `spec.schedulerName` is one of these.
    pub scheduler_names: Vec<String>,
    /// `--scheduler-conf`: the conf file, `None` for Volcano's built-in default conf.
    pub conf_path: Option<PathBuf>,
    /// `--schedule-period`: time between the end of one cycle and the start of the next.
    pub schedule_period: Duration,
    /// `--default-queue`: queue of PodGroups that name none; created at start when missing.
    pub default_queue: String,
    /// `--kubeconfig` (empty: in-cluster config, then `$KUBECONFIG`/`~/.kube/config`).
    pub kubeconfig: String,
    /// `--master` (empty: the kubeconfig's server).
    pub master: String,
    /// `--kube-api-qps`: client-side API requests per second (all writes share it).
    pub kube_api_qps: f64,
    /// `--kube-api-burst`: client-side burst above `kube_api_qps`.
    pub kube_api_burst: u32,
    /// `--leader-elect`.
    pub leader_elect: bool,
    /// `--leader-elect-lease-duration`.
    pub leader_elect_lease_duration: Duration,
    /// `--leader-elect-renew-deadline`.
    pub leader_elect_renew_deadline: Duration,
    /// `--leader-elect-retry-period`.
    pub leader_elect_retry_period: Duration,
    /// `--leader-elect-resource-lock` (only `leases` is supported).
    pub leader_elect_resource_lock: String,
    /// `--leader-elect-resource-name` (empty: derived from the scheduler names).
    pub leader_elect_resource_name: String,
    /// The Lease namespace (`--leader-elect-resource-namespace`, or the deprecated
    /// `--lock-object-namespace`).
    pub lease_namespace: String,
    /// `--listen-address` of `/metrics`.
    pub listen_address: String,
    /// `--enable-metrics`.
    pub enable_metrics: bool,
    /// `--healthz-address` of `/healthz`.
    pub healthz_address: String,
    /// `--enable-healthz`.
    pub enable_healthz: bool,
    /// `--node-selector` as (label key, value) pairs; empty: every node.
    pub node_selector: Vec<(String, String)>,
    /// `--percentage-nodes-to-find` (unset: the conf's value stays).
    pub percentage_nodes_to_find: Option<i32>,
    /// `--minimum-feasible-nodes`.
    pub minimum_feasible_nodes: i32,
    /// `--minimum-percentage-nodes-to-find`.
    pub minimum_percentage_nodes_to_find: i32,
    /// `--resource-sync-timeout`: the longest wait for every watched kind's first list.
    pub resource_sync_timeout: Duration,
    /// `--seed` of the random tie-breaks (cycle i uses seed + i).
    pub seed: u64,
    /// `--bind-workers`: binds in flight at once.
    pub bind_workers: u32,
    /// `--api-timeout` of one binder or status-writer API call.
    pub api_timeout: Duration,
    /// `--watch-timeout`: server-side timeout of each watch request.
    pub watch_timeout: Duration,
    /// `--max-cycles` (0: run until stopped).
    pub max_cycles: u64,
    /// `--strict`: refuse a conf naming what Basalt does not implement.
    pub strict: bool,
    /// `--record DIR` of the flight recorder.
    pub record: Option<PathBuf>,
    /// `--record-segment-bytes`.
    pub record_segment_bytes: u64,
    /// `--record-max-bytes`.
    pub record_max_bytes: u64,
    /// `--scheduler-sharding-mode` (`none`, `hard`, `soft`).
    pub sharding_mode: basalt_core::model::ShardingMode,
    /// `--scheduler-sharding-name`: the NodeShard this scheduler uses.
    pub sharding_name: String,
    /// `--feature-gates` `SchedulingGatesQueueAdmission`: allocate decides gate removals and the
    /// gate-removal workers apply them ([`super::gate_removal`]).
    pub scheduling_gates_queue_admission: bool,
    /// `--gate-removal-worker-num` (at least 1).
    pub gate_removal_workers: usize,
}
