//! `basalt controller`'s metrics, served on `/metrics` (OpenMetrics text) at `--listen-address`.
//! Volcano's controller-manager exports only client-go and workqueue internals; Basalt's own
//! counters (prefix `basalt_controller_`) say what the job controller did:
//! `requests_total{action}`, `request_errors_total`, `api_calls_total{call}`,
//! `job_phase_transitions_total{phase}`, and `leader` (1 while leading). The Queue controller's
//! PodGroup counts carry Volcano's names (its `pkg/controllers/metrics`, volcano-behaviour.md
//! §5.3): `volcano_queue_pod_group_{inqueue,pending,running,unknown,completed}_count{queue_name}`.
//! The sharding controller's: `basalt_controller_shard_assignments_total` and
//! `basalt_controller_shard_nodes_desired{shard}`.

use super::queue_state::PhaseCounts;
use super::request::{Action, Phase};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Label = [(&'static str, &'static str); 1];
type QueueLabel = [(&'static str, String); 1];

/// Volcano's per-queue PodGroup gauges, by phase: (metric name, help).
const QUEUE_GAUGES: [(&str, &str); 5] = [
    ("volcano_queue_pod_group_inqueue_count", "The number of Inqueue PodGroup in this queue"),
    ("volcano_queue_pod_group_pending_count", "The number of Pending PodGroup in this queue"),
    ("volcano_queue_pod_group_running_count", "The number of Running PodGroup in this queue"),
    ("volcano_queue_pod_group_unknown_count", "The number of Unknown PodGroup in this queue"),
    ("volcano_queue_pod_group_completed_count", "The number of Completed PodGroup in this queue"),
];

/// The controller's metrics registry.
pub struct ControllerMetrics {
    registry: Registry,
    requests: Family<Label, Counter>,
    errors: Counter,
    api_calls: Family<Label, Counter>,
    phases: Family<Label, Counter>,
    leader: Gauge,
    /// In [`QUEUE_GAUGES`] order.
    queue_pod_groups: [Family<QueueLabel, Gauge>; 5],
    shard_syncs: Counter,
    shard_nodes: Family<[(&'static str, String); 1], Gauge>,
}

impl Default for ControllerMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl ControllerMetrics {
    /// A registry with every metric at zero.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<Label, Counter>::default();
        let errors = Counter::default();
        let api_calls = Family::<Label, Counter>::default();
        let phases = Family::<Label, Counter>::default();
        let leader = Gauge::default();
        registry.register("basalt_controller_requests", "Job requests processed, by the action taken", requests.clone());
        registry.register("basalt_controller_request_errors", "Job requests that failed and were retried", errors.clone());
        registry.register("basalt_controller_api_calls", "API calls made, by call", api_calls.clone());
        registry.register(
            "basalt_controller_job_phase_transitions",
            "Job phase transitions, by the phase entered",
            phases.clone(),
        );
        registry.register(
            "basalt_controller_leader",
            "1 while this process leads (or runs without leader election)",
            leader.clone(),
        );
        let queue_pod_groups: [Family<QueueLabel, Gauge>; 5] = Default::default();
        for ((name, help), family) in QUEUE_GAUGES.iter().zip(&queue_pod_groups) {
            registry.register(*name, *help, family.clone());
        }
        let shard_syncs = Counter::default();
        let shard_nodes = Family::<[(&'static str, String); 1], Gauge>::default();
        registry.register(
            "basalt_controller_shard_assignments",
            "Node shard assignments computed (sharding controller)",
            shard_syncs.clone(),
        );
        registry.register(
            "basalt_controller_shard_nodes_desired",
            "Nodes in the last assignment of each NodeShard (sharding controller)",
            shard_nodes.clone(),
        );
        ControllerMetrics { registry, requests, errors, api_calls, phases, leader, queue_pod_groups, shard_syncs, shard_nodes }
    }

    /// One request processed with `action`.
    pub fn record_request(&self, action: Action) {
        self.requests.get_or_create(&[("action", action.as_str())]).inc();
    }

    /// One failed request.
    pub fn record_error(&self) {
        self.errors.inc();
    }

    /// One API call.
    pub fn record_api(&self, call: &'static str) {
        self.api_calls.get_or_create(&[("call", call)]).inc();
    }

    /// A job entered `phase`.
    pub fn record_phase(&self, phase: Phase) {
        self.phases.get_or_create(&[("phase", phase.as_str())]).inc();
    }

    /// Whether this process leads.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Queue `queue`'s PodGroups by phase (Volcano's `UpdateQueueMetrics`).
    pub fn set_queue_pod_groups(&self, queue: &str, counts: PhaseCounts) {
        let values = [counts.inqueue, counts.pending, counts.running, counts.unknown, counts.completed];
        let label = [("queue_name", queue.to_string())];
        for (family, v) in self.queue_pod_groups.iter().zip(values) {
            family.get_or_create(&label).set(i64::from(v));
        }
    }

    /// Drops the series of deleted Queue `queue` (Volcano's `DeleteQueueMetrics`).
    pub fn forget_queue(&self, queue: &str) {
        let label = [("queue_name", queue.to_string())];
        for family in &self.queue_pod_groups {
            family.remove(&label);
        }
    }

    /// One node shard assignment computed.
    pub fn record_shard_sync(&self) {
        self.shard_syncs.inc();
    }

    /// NodeShard `shard`'s assignment holds `nodes` nodes.
    pub fn set_shard_nodes(&self, shard: &str, nodes: usize) {
        self.shard_nodes.get_or_create(&[("shard", shard.to_string())]).set(nodes as i64);
    }

    /// Drops the series of deleted NodeShard `shard`.
    pub fn forget_shard(&self, shard: &str) {
        self.shard_nodes.remove(&[("shard", shard.to_string())]);
    }

    /// The registry in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "cannot encode the metrics");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_pod_group_gauges_carry_volcanos_names() {
        let m = ControllerMetrics::new();
        m.set_queue_pod_groups("team", PhaseCounts { pending: 1, running: 2, inqueue: 3, unknown: 0, completed: 4 });
        let text = m.encode();
        for line in [
            "volcano_queue_pod_group_pending_count{queue_name=\"team\"} 1",
            "volcano_queue_pod_group_running_count{queue_name=\"team\"} 2",
            "volcano_queue_pod_group_inqueue_count{queue_name=\"team\"} 3",
            "volcano_queue_pod_group_unknown_count{queue_name=\"team\"} 0",
            "volcano_queue_pod_group_completed_count{queue_name=\"team\"} 4",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        m.set_queue_pod_groups("team", PhaseCounts::default());
        assert!(m.encode().contains("volcano_queue_pod_group_running_count{queue_name=\"team\"} 0"), "a drained queue reads 0");
        m.forget_queue("team");
        assert!(!m.encode().contains("queue_name=\"team\""), "a deleted queue's series are dropped");
    }

    #[test]
    fn job_controller_counters_keep_their_prefix() {
        let m = ControllerMetrics::new();
        m.record_error();
        m.set_leader(true);
        let text = m.encode();
        assert!(text.lines().any(|l| l == "basalt_controller_request_errors_total 1"), "{text}");
        assert!(text.lines().any(|l| l == "basalt_controller_leader 1"), "{text}");
    }
}
