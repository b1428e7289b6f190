//! `basalt controller`'s metrics, served on `/metrics` (OpenMetrics text) at `--listen-address`.
//! Volcano's controller-manager exports only client-go and workqueue internals; Basalt's own
//! counters (prefix `basalt_controller_`) say what the job controller did:
//! `requests_total{action}`, `request_errors_total`, `api_calls_total{call}`,
//! `job_phase_transitions_total{phase}`, and `leader` (1 while leading).

use super::request::{Action, Phase};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Label = [(&'static str, &'static str); 1];

/// The controller's metrics registry.
pub struct ControllerMetrics {
    registry: Registry,
    requests: Family<Label, Counter>,
    errors: Counter,
    api_calls: Family<Label, Counter>,
    phases: Family<Label, Counter>,
    leader: Gauge,
}

impl Default for ControllerMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl ControllerMetrics {
    /// A registry with every metric at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("basalt_controller");
        let requests = Family::<Label, Counter>::default();
        let errors = Counter::default();
        let api_calls = Family::<Label, Counter>::default();
        let phases = Family::<Label, Counter>::default();
        let leader = Gauge::default();
        registry.register("requests", "Job requests processed, by the action taken", requests.clone());
        registry.register("request_errors", "Job requests that failed and were retried", errors.clone());
        registry.register("api_calls", "API calls made, by call", api_calls.clone());
        registry.register("job_phase_transitions", "Job phase transitions, by the phase entered", phases.clone());
        registry.register("leader", "1 while this process leads (or runs without leader election)", leader.clone());
        ControllerMetrics { registry, requests, errors, api_calls, phases, leader }
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

    /// The registry in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "cannot encode the metrics");
        }
        out
    }
}
