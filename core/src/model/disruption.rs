//! PodDisruptionBudgets (`policy/v1`, `policy/v1beta1` on older servers) as the `pdb` plugin
//! reads them (volcano-behaviour.md §3 pdb).

use super::affinity::LabelSelector;

/// A Kubernetes `IntOrString` budget: a pod count or a percentage of the expected pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum IntOrPercent {
    /// A number of pods (`2`).
    Int(i32),
    /// A percentage, 0–100 (`"50%"`).
    Percent(i32),
}

impl IntOrPercent {
    /// Kubernetes `GetScaledValueFromIntOrPercent(value, total, roundUp = true)`: the count, or
    /// `ceil(percent × total / 100)`.
    pub fn scaled_up(self, total: i32) -> i32 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => {
                let (p, total) = (p as i64, total as i64);
                ((p * total + 99) / 100).clamp(i32::MIN as i64, i32::MAX as i64) as i32
            }
        }
    }
}

/// `status` of a PodDisruptionBudget as the disruption controller writes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PodDisruptionBudgetStatus {
    /// `status.disruptionsAllowed`: evictions the budget allows now.
    pub disruptions_allowed: i32,
    /// Names of `status.disruptedPods` (evictions the API server admitted that the controller
    /// has not seen go yet): not counted again, as Volcano does.
    pub disrupted_pods: Vec<String>,
}

/// A PodDisruptionBudget.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PodDisruptionBudgetSpec {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.selector`; an empty (or absent) selector matches no pod, as in Volcano's pdb plugin.
    pub selector: LabelSelector,
    /// `spec.minAvailable`.
    pub min_available: Option<IntOrPercent>,
    /// `spec.maxUnavailable`.
    pub max_unavailable: Option<IntOrPercent>,
    /// `status`, when the disruption controller has computed it (`status.observedGeneration`
    /// ≥ 1); `None` for hand-written manifests and servers without that controller, in which
    /// case the plugin computes the allowance from the spec.
    pub status: Option<PodDisruptionBudgetStatus>,
}
