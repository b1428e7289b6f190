//! A pod's resource-quota usage as Kubernetes' quota evaluator counts it
//! (`pkg/quota/v1/evaluator/core/pods.go` `PodUsageFunc`), with Volcano's addition
//! (`pkg/controllers/util` `GetPodQuotaUsage`): every `requests.<extended>` is also listed under
//! its bare name. Volcano's PodGroup controller sets a plain pod's PodGroup `minResources` to
//! this usage × `minMember` (volcano-behaviour.md §5.2, `CalTaskRequests`). Pure.
//!
//! Keys of one non-terminal pod: `count/pods` and `pods` (1 each); `cpu`, `requests.cpu`,
//! `limits.cpu`, `memory`, `requests.memory`, `limits.memory`, `ephemeral-storage`,
//! `requests.ephemeral-storage`, `limits.ephemeral-storage` when the pod asks for them;
//! `hugepages-*` with its `requests.`/`limits.` forms; each extended resource (a name with a
//! `/` outside `kubernetes.io/`) as `requests.<name>` and `<name>`. A Succeeded or Failed pod
//! counts only `count/pods`.
//!
//! The pod's requests and limits are Kubernetes' effective ones: per resource the larger of the
//! containers' sum and the largest init container, plus `spec.overhead` (for limits only where
//! the pod has a limit of that resource); a container limit stands in for a missing request, as
//! the API server defaults it. Restartable (sidecar) init containers are counted as plain init
//! containers (the v1.20 API has none).

use crate::convert::quantity::{to_milli, QuantityError};
use crate::convert::resources::{format_amount, scale_of, Scale};
use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// Amounts in thousandths of the resource's unit (millicores, millibytes, milli-GPUs), by name.
pub type MilliList = BTreeMap<String, i64>;

/// A quantity in a pod that does not parse, naming the pod and the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Pod {pod}: field {field}: {error}")]
pub struct UsageError {
    /// `namespace/name`.
    pub pod: String,
    /// E.g. `spec.containers[0].resources.requests.cpu`.
    pub field: String,
    /// What is wrong with the quantity.
    pub error: QuantityError,
}

const REQUESTS: &str = "requests.";
const LIMITS: &str = "limits.";

/// Kubernetes' `IsNativeResource`: no domain, or a `kubernetes.io/` one.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// Kubernetes' `IsExtendedResourceName` (the name-syntax check aside: the API server has
/// validated it).
fn is_extended(name: &str) -> bool {
    !is_native(name) && !name.starts_with(REQUESTS)
}

fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.metadata.name.as_deref().unwrap_or_default())
}

/// Adds one container's requests (limits filling missing requests) or limits into `into`.
fn container_list(pod: &Pod, field: &str, c: &Container, limits: bool) -> Result<MilliList, UsageError> {
    let mut out = MilliList::new();
    let Some(r) = c.resources.as_ref() else { return Ok(out) };
    let mut add = |list: Option<&BTreeMap<String, Quantity>>, which: &str, only_missing: bool| -> Result<(), UsageError> {
        for (k, q) in list.into_iter().flatten() {
            if only_missing && out.contains_key(k) {
                continue;
            }
            let v = to_milli(&q.0).map_err(|error| UsageError {
                pod: pod_key(pod),
                field: format!("{field}.resources.{which}.{k}"),
                error,
            })?;
            out.insert(k.clone(), v);
        }
        Ok(())
    };
    if limits {
        add(r.limits.as_ref(), "limits", false)?;
    } else {
        add(r.requests.as_ref(), "requests", false)?;
        add(r.limits.as_ref(), "limits", true)?;
    }
    Ok(out)
}

/// The pod's effective requests (`limits == false`) or limits, in thousandths.
///
/// Errors: a quantity that does not parse, naming the field.
pub fn effective(pod: &Pod, limits: bool) -> Result<MilliList, UsageError> {
    let mut sum = MilliList::new();
    let Some(spec) = pod.spec.as_ref() else { return Ok(sum) };
    for (i, c) in spec.containers.iter().enumerate() {
        for (k, v) in container_list(pod, &format!("spec.containers[{i}]"), c, limits)? {
            *sum.entry(k).or_default() += v;
        }
    }
    for (i, c) in spec.init_containers.iter().flatten().enumerate() {
        for (k, v) in container_list(pod, &format!("spec.initContainers[{i}]"), c, limits)? {
            let slot = sum.entry(k).or_default();
            *slot = (*slot).max(v);
        }
    }
    for (k, q) in spec.overhead.iter().flatten() {
        if limits && !sum.contains_key(k) {
            continue;
        }
        let v = to_milli(&q.0).map_err(|error| UsageError { pod: pod_key(pod), field: format!("spec.overhead.{k}"), error })?;
        *sum.entry(k.clone()).or_default() += v;
    }
    Ok(sum)
}

/// One pod's quota usage (the module documentation lists the keys), in thousandths.
///
/// Errors: a quantity that does not parse, naming the pod and field.
pub fn pod_usage(pod: &Pod) -> Result<MilliList, UsageError> {
    let mut out = MilliList::from([("count/pods".to_string(), 1000)]);
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default();
    if matches!(phase, "Succeeded" | "Failed") {
        return Ok(out);
    }
    let requests = effective(pod, false)?;
    let limits = effective(pod, true)?;
    out.insert("pods".into(), 1000);
    for name in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(&v) = requests.get(name) {
            out.insert(name.into(), v);
            out.insert(format!("{REQUESTS}{name}"), v);
        }
        if let Some(&v) = limits.get(name) {
            out.insert(format!("{LIMITS}{name}"), v);
        }
    }
    for (name, &v) in &requests {
        if name.starts_with("hugepages-") {
            out.insert(name.clone(), v);
            out.insert(format!("{REQUESTS}{name}"), v);
        }
        if is_extended(name) {
            out.insert(format!("{REQUESTS}{name}"), v);
            // Volcano's GetPodQuotaUsage: the bare name of a non-native `requests.` key.
            out.insert(name.clone(), v);
        }
    }
    for (name, &v) in &limits {
        if name.starts_with("hugepages-") {
            out.insert(format!("{LIMITS}{name}"), v);
        }
    }
    Ok(out)
}

/// `usage` × `n` (Volcano's `CalTaskRequests`: the usage added `n` times; `n` ≤ 0 gives an empty
/// list).
pub fn times(usage: &MilliList, n: i32) -> MilliList {
    if n <= 0 {
        return MilliList::new();
    }
    usage.iter().map(|(k, v)| (k.clone(), v.saturating_mul(i64::from(n)))).collect()
}

/// One amount in thousandths as a Kubernetes quantity: byte-valued keys (`memory`,
/// `ephemeral-storage`, `hugepages-*`, with or without `requests.`/`limits.`) in whole bytes with the largest
/// exact binary suffix, counts (`pods`) as integers, the rest as whole units or with `m`.
pub fn quantity(name: &str, milli: i64) -> Quantity {
    let base = name.strip_prefix(REQUESTS).or_else(|| name.strip_prefix(LIMITS)).unwrap_or(name);
    let bytes = base.starts_with("hugepages-") || scale_of(base) == Scale::Units;
    let text = if bytes && milli % 1000 == 0 {
        // `pods` prints as a plain count, every other whole-unit key as bytes.
        format_amount(if base == "pods" { "pods" } else { "memory" }, milli / 1000)
    } else {
        format_amount("cpu", milli)
    };
    Quantity(text)
}

/// A list in thousandths as Kubernetes quantities ([`quantity`]).
pub fn quantities(list: &MilliList) -> BTreeMap<String, Quantity> {
    list.iter().map(|(k, &v)| (k.clone(), quantity(k, v))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn text(list: &MilliList) -> Vec<(String, String)> {
        quantities(list).into_iter().map(|(k, q)| (k, q.0)).collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter().map(|(k, q)| (k.to_string(), q.to_string())).collect()
    }

    #[test]
    fn usage_keys_as_the_quota_evaluator_and_volcano_list_them() {
        let p = pod(r#"
metadata: {name: p, namespace: ns}
spec:
  containers:
  - name: a
    image: x
    resources:
      requests: {cpu: 250m, memory: 1Gi}
      limits: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "2", hugepages-2Mi: 4Mi}
  - name: b
    image: x
    resources: {requests: {cpu: 250m, ephemeral-storage: 1Gi}}
"#);
        let got = text(&pod_usage(&p).unwrap());
        let want = pairs(&[
            ("count/pods", "1"),
            ("cpu", "500m"),
            ("ephemeral-storage", "1Gi"),
            ("hugepages-2Mi", "4Mi"),
            ("limits.cpu", "1"),
            ("limits.hugepages-2Mi", "4Mi"),
            ("limits.memory", "1Gi"),
            ("memory", "1Gi"),
            ("nvidia.com/gpu", "2"),
            ("pods", "1"),
            ("requests.cpu", "500m"),
            ("requests.ephemeral-storage", "1Gi"),
            ("requests.hugepages-2Mi", "4Mi"),
            ("requests.memory", "1Gi"),
            ("requests.nvidia.com/gpu", "2"),
        ]);
        assert_eq!(got, want);
    }

    #[test]
    fn init_containers_and_overhead() {
        let p = pod(r#"
metadata: {name: p, namespace: ns}
spec:
  overhead: {cpu: 100m, memory: 10Mi}
  initContainers:
  - {name: i, image: x, resources: {requests: {cpu: "2", memory: 64Mi}}}
  containers:
  - {name: a, image: x, resources: {requests: {cpu: 500m, memory: 128Mi}, limits: {memory: 256Mi}}}
"#);
        let req = effective(&p, false).unwrap();
        assert_eq!(req["cpu"], 2100, "init container's 2 CPUs win over 500m, plus 100m overhead");
        assert_eq!(req["memory"], (138i64 << 20) * 1000, "containers' 128Mi win, plus 10Mi");
        let lim = effective(&p, true).unwrap();
        assert_eq!(lim.get("cpu"), None, "no cpu limit: overhead is not added to limits it lacks");
        assert_eq!(lim["memory"], (266i64 << 20) * 1000);
    }

    #[test]
    fn limits_stand_in_for_missing_requests_and_terminal_pods_count_only_the_object() {
        let p = pod(
            "metadata: {name: p, namespace: ns}\nspec:\n  containers: [{name: a, image: x, resources: {limits: {cpu: 300m}}}]\n",
        );
        assert_eq!(pod_usage(&p).unwrap()["requests.cpu"], 300);
        let mut done = p.clone();
        done.status = Some(k8s_openapi::api::core::v1::PodStatus { phase: Some("Succeeded".into()), ..Default::default() });
        assert_eq!(text(&pod_usage(&done).unwrap()), pairs(&[("count/pods", "1")]));
    }

    #[test]
    fn times_multiplies_every_key() {
        let p = pod("metadata: {name: p, namespace: ns}\nspec:\n  containers: [{name: a, image: x, resources: {requests: {cpu: 100m, memory: 64Mi}}}]\n");
        let three = times(&pod_usage(&p).unwrap(), 3);
        let got = text(&three);
        assert_eq!(
            got,
            pairs(&[
                ("count/pods", "3"),
                ("cpu", "300m"),
                ("memory", "192Mi"),
                ("pods", "3"),
                ("requests.cpu", "300m"),
                ("requests.memory", "192Mi")
            ])
        );
        assert!(times(&three, 0).is_empty());
    }

    #[test]
    fn a_bad_quantity_names_pod_and_field() {
        let p = pod("metadata: {name: p, namespace: ns}\nspec:\n  containers: [{name: a, image: x, resources: {requests: {cpu: lots}}}]\n");
        let e = pod_usage(&p).unwrap_err();
        assert_eq!(e.pod, "ns/p");
        assert_eq!(e.field, "spec.containers[0].resources.requests.cpu");
        assert!(e.to_string().starts_with("Pod ns/p: field spec.containers[0].resources.requests.cpu: "), "{e}");
    }
}
