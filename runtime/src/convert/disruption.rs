//! `policy/v1` (and, same shape, `policy/v1beta1`) `PodDisruptionBudget` →
//! [`PodDisruptionBudgetSpec`] for the `pdb` plugin (volcano-behaviour.md §3 pdb).

use super::affinity::label_selector;
use super::{namespace, required_name, ConvertError, ObjRef};
use basalt_core::model::{IntOrPercent, LabelSelector, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// An `IntOrString` budget at `field`: an integer ≥ 0 or `"N%"` with 0 ≤ N ≤ 100 (what the API
/// server's validation admits).
fn int_or_percent(obj: ObjRef<'_>, field: &str, v: &IntOrString) -> Result<IntOrPercent, ConvertError> {
    match v {
        IntOrString::Int(n) if *n >= 0 => Ok(IntOrPercent::Int(*n)),
        IntOrString::Int(n) => Err(obj.error(field, format!("must be >= 0, got {n}"))),
        IntOrString::String(s) => match s.strip_suffix('%').map(|p| p.parse::<i32>()) {
            Some(Ok(p)) if (0..=100).contains(&p) => Ok(IntOrPercent::Percent(p)),
            _ => Err(obj.error(field, format!("must be an integer or a percentage between 0% and 100%, got {s:?}"))),
        },
    }
}

/// Converts a PodDisruptionBudget. Namespace defaults to `default`; an absent selector is the
/// empty one (which the plugin treats as matching nothing, as Volcano does). The status is kept
/// only once the disruption controller has written it (`status.observedGeneration` ≥ 1), since
/// a fresh object's zero `disruptionsAllowed` means "not computed", not "none allowed".
///
/// Errors, naming the field: missing name, both `minAvailable` and `maxUnavailable` set, a
/// negative count or a percentage outside 0–100%, an invalid selector requirement.
pub fn convert_pod_disruption_budget(pdb: &PodDisruptionBudget) -> Result<PodDisruptionBudgetSpec, ConvertError> {
    let name = required_name("PodDisruptionBudget", &pdb.metadata)?;
    let ns = namespace(&pdb.metadata);
    let key = format!("{ns}/{name}");
    let obj = ObjRef { kind: "PodDisruptionBudget", name: &key };
    let spec = pdb.spec.clone().unwrap_or_default();
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        return Err(obj.error("spec.maxUnavailable", "minAvailable and maxUnavailable cannot both be set"));
    }
    let selector = match &spec.selector {
        Some(s) => label_selector(obj, "spec.selector", s)?,
        None => LabelSelector::default(),
    };
    let status = pdb.status.as_ref().filter(|s| s.observed_generation.unwrap_or(0) >= 1).map(|s| PodDisruptionBudgetStatus {
        disruptions_allowed: s.disruptions_allowed.unwrap_or(0),
        disrupted_pods: s.disrupted_pods.iter().flatten().map(|(k, _)| k.clone()).collect(),
    });
    Ok(PodDisruptionBudgetSpec {
        min_available: spec.min_available.as_ref().map(|v| int_or_percent(obj, "spec.minAvailable", v)).transpose()?,
        max_unavailable: spec.max_unavailable.as_ref().map(|v| int_or_percent(obj, "spec.maxUnavailable", v)).transpose()?,
        selector,
        status,
        namespace: ns,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pdb(yaml: &str) -> PodDisruptionBudget {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn converts_spec_and_a_computed_status() {
        let b = convert_pod_disruption_budget(&pdb(
            "metadata: {name: web, namespace: ns}\n\
             spec: {minAvailable: 50%, selector: {matchLabels: {app: web}}}\n\
             status: {observedGeneration: 1, disruptionsAllowed: 2, currentHealthy: 4, desiredHealthy: 2, expectedPods: 4, disruptedPods: {web-0: '2024-01-01T00:00:00Z'}}\n",
        ))
        .unwrap();
        assert_eq!(b.namespace, "ns");
        assert_eq!(b.min_available, Some(IntOrPercent::Percent(50)));
        assert_eq!(b.max_unavailable, None);
        assert_eq!(b.selector.match_labels.get("app").map(String::as_str), Some("web"));
        assert_eq!(b.status, Some(PodDisruptionBudgetStatus { disruptions_allowed: 2, disrupted_pods: vec!["web-0".into()] }));
    }

    #[test]
    fn a_status_the_controller_never_wrote_is_dropped() {
        let b = convert_pod_disruption_budget(&pdb(
            "metadata: {name: web}\nspec: {maxUnavailable: 1}\nstatus: {disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0}\n",
        ))
        .unwrap();
        assert_eq!((b.namespace.as_str(), b.max_unavailable, b.status), ("default", Some(IntOrPercent::Int(1)), None));
    }

    #[test]
    fn bad_budgets_name_the_field() {
        let cases = [
            ("spec: {minAvailable: 1, maxUnavailable: 1}", "spec.maxUnavailable"),
            ("spec: {minAvailable: -1}", "spec.minAvailable"),
            ("spec: {maxUnavailable: 150%}", "spec.maxUnavailable"),
            ("spec: {minAvailable: half}", "spec.minAvailable"),
            ("spec: {selector: {matchExpressions: [{key: a, operator: In}]}}", "spec.selector.matchExpressions[0].values"),
            (
                "spec: {selector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}}",
                "spec.selector.matchExpressions[0].operator",
            ),
        ];
        for (spec, field) in cases {
            let e = convert_pod_disruption_budget(&pdb(&format!("metadata: {{name: b, namespace: ns}}\n{spec}\n"))).unwrap_err();
            assert_eq!((e.kind, e.name.as_str(), e.field.as_str()), ("PodDisruptionBudget", "ns/b", field), "{spec}: {e}");
        }
    }
}
