//! `v1.ResourceQuota` → [`ResourceQuotaSpec`] for the `resourcequota` plugin
//! (volcano-behaviour.md §3 resourcequota).

use super::resources::{amount, K8sResourceList};
use super::{namespace, required_name, ConvertError, ObjRef};
use basalt_core::model::ResourceQuotaSpec;
use basalt_core::resource::ResourceList;
use k8s_openapi::api::core::v1::ResourceQuota;

/// Converts one quota list at `field`, names kept as written. Each amount is in the core unit
/// of the resource it limits: `requests.memory` and `limits.memory` like `memory` (bytes),
/// `pods` and `count/*` as whole counts, the rest like their resource (`cpu` millicores,
/// extended resources milli-units).
fn quota_list(obj: ObjRef<'_>, field: &str, list: Option<&K8sResourceList>) -> Result<ResourceList, ConvertError> {
    let mut out = ResourceList::new();
    for (name, q) in list.into_iter().flatten() {
        let base = name.strip_prefix("requests.").or_else(|| name.strip_prefix("limits.")).unwrap_or(name);
        let unit =
            if name.starts_with("count/") || base == "storage" || base == "persistentvolumeclaims" { "pods" } else { base };
        let v = amount(unit, &q.0).map_err(|e| obj.error(format!("{field}.{name}"), e.to_string()))?;
        if v < 0 {
            return Err(obj.error(format!("{field}.{name}"), format!("negative quantity {:?} is not allowed", q.0)));
        }
        out.insert(name.clone(), v);
    }
    Ok(out)
}

/// Converts a ResourceQuota: `hard` from `status.hard` (what the quota controller enforces),
/// else `spec.hard` when the status is not written yet; `used` from `status.used` (empty when
/// not written). Scopes are ignored, as Volcano ignores them. Errors: missing name, a
/// malformed or negative quantity, naming the field (`spec.hard.cpu`).
pub fn convert_resource_quota(q: &ResourceQuota) -> Result<ResourceQuotaSpec, ConvertError> {
    let name = required_name("ResourceQuota", &q.metadata)?;
    let ns = namespace(&q.metadata);
    let key = format!("{ns}/{name}");
    let obj = ObjRef { kind: "ResourceQuota", name: &key };
    let status_hard = q.status.as_ref().and_then(|s| s.hard.as_ref());
    let hard = match status_hard {
        Some(h) => quota_list(obj, "status.hard", Some(h))?,
        None => quota_list(obj, "spec.hard", q.spec.as_ref().and_then(|s| s.hard.as_ref()))?,
    };
    let used = quota_list(obj, "status.used", q.status.as_ref().and_then(|s| s.used.as_ref()))?;
    Ok(ResourceQuotaSpec { namespace: ns, name, hard, used })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rq(yaml: &str) -> ResourceQuota {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn status_hard_wins_over_spec_and_units_follow_the_resource() {
        let q = convert_resource_quota(&rq("metadata: {name: q, namespace: ns}\n\
             spec: {hard: {cpu: '8'}}\n\
             status: {hard: {cpu: '4', requests.memory: 2Gi, pods: '10', count/pods: '5', nvidia.com/gpu: '2'}, used: {cpu: 1500m}}\n"))
        .unwrap();
        let get = |l: &ResourceList, k: &str| l.get(k).copied();
        assert_eq!(get(&q.hard, "cpu"), Some(4000));
        assert_eq!(get(&q.hard, "requests.memory"), Some(2 << 30));
        assert_eq!(get(&q.hard, "pods"), Some(10));
        assert_eq!(get(&q.hard, "count/pods"), Some(5));
        assert_eq!(get(&q.hard, "nvidia.com/gpu"), Some(2000));
        assert_eq!(get(&q.used, "cpu"), Some(1500));
        let q = convert_resource_quota(&rq("metadata: {name: q}\nspec: {hard: {cpu: '8'}}\n")).unwrap();
        assert_eq!((q.namespace.as_str(), get(&q.hard, "cpu"), q.used.is_empty()), ("default", Some(8000), true));
    }

    #[test]
    fn bad_quantities_name_the_field() {
        let e = convert_resource_quota(&rq("metadata: {name: q, namespace: ns}\nspec: {hard: {cpu: lots}}\n")).unwrap_err();
        assert_eq!((e.kind, e.name.as_str(), e.field.as_str()), ("ResourceQuota", "ns/q", "spec.hard.cpu"));
        let e = convert_resource_quota(&rq("metadata: {name: q}\nstatus: {used: {memory: '-1'}}\n")).unwrap_err();
        assert_eq!(e.field, "status.used.memory");
    }
}
