//! Kubernetes resource lists (`map[ResourceName]Quantity`) → the core's [`ResourceList`] in
//! core units: `cpu` in millicores, `memory` and `ephemeral-storage` in bytes, `pods` as a whole
//! count, every other resource (`nvidia.com/gpu`, `hugepages-2Mi`, extended resources) in
//! milli-units (1 GPU = 1000), as `basalt_core::resource` documents.

use super::quantity::{self, QuantityError};
use super::{ConvertError, ObjRef};
use basalt_core::resource::ResourceList;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// A Kubernetes resource list as it appears in objects.
pub type K8sResourceList = BTreeMap<String, Quantity>;

/// The integer scale a resource is kept in by the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Thousandths of a unit (`cpu`, extended resources, hugepages).
    Milli,
    /// Whole units (`memory` and `ephemeral-storage` bytes, `pods`).
    Units,
}

/// The scale the core keeps resource `name` in.
pub fn scale_of(name: &str) -> Scale {
    match name {
        "memory" | "ephemeral-storage" | "pods" => Scale::Units,
        _ => Scale::Milli,
    }
}

/// One quantity of resource `name` in core units. Errors as [`quantity::to_milli`].
pub fn amount(name: &str, q: &str) -> Result<i64, QuantityError> {
    match scale_of(name) {
        Scale::Milli => quantity::to_milli(q),
        Scale::Units => quantity::to_units(q),
    }
}

/// Converts `list` (absent = empty) found at `field` of `obj` into core units.
///
/// Errors: a malformed, out-of-range or negative quantity, naming the field as
/// `{field}.{resource}` (e.g. `spec.containers[0].resources.requests.cpu`).
pub fn resource_list(obj: ObjRef<'_>, field: &str, list: Option<&K8sResourceList>) -> Result<ResourceList, ConvertError> {
    let mut out = ResourceList::new();
    for (name, q) in list.into_iter().flatten() {
        let path = || format!("{field}.{name}");
        let v = amount(name, &q.0).map_err(|e| obj.error(path(), e.to_string()))?;
        if v < 0 {
            return Err(obj.error(path(), format!("negative quantity {:?} is not allowed", q.0)));
        }
        out.insert(name.clone(), v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(pairs: &[(&str, &str)]) -> K8sResourceList {
        pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect()
    }

    #[test]
    fn units_per_resource_name() {
        let obj = ObjRef { kind: "Node", name: "n1" };
        let got = resource_list(
            obj,
            "status.allocatable",
            Some(&list(&[
                ("cpu", "2500m"),
                ("memory", "1Gi"),
                ("ephemeral-storage", "10G"),
                ("pods", "110"),
                ("nvidia.com/gpu", "4"),
                ("hugepages-2Mi", "1Mi"),
            ])),
        )
        .unwrap();
        let want: ResourceList = [
            ("cpu", 2500),
            ("memory", 1 << 30),
            ("ephemeral-storage", 10_000_000_000),
            ("pods", 110),
            ("nvidia.com/gpu", 4000),
            ("hugepages-2Mi", 1_048_576_000),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        assert_eq!(got, want);
        assert_eq!(resource_list(obj, "x", None).unwrap(), ResourceList::new());
    }

    #[test]
    fn errors_name_object_and_field() {
        let obj = ObjRef { kind: "Pod", name: "ns/p" };
        let e = resource_list(obj, "spec.containers[0].resources.requests", Some(&list(&[("cpu", "abc")]))).unwrap_err();
        assert_eq!(e.to_string(), "Pod ns/p: field spec.containers[0].resources.requests.cpu: invalid quantity \"abc\"");
        let e = resource_list(obj, "spec.overhead", Some(&list(&[("memory", "-1")]))).unwrap_err();
        assert_eq!(e.to_string(), "Pod ns/p: field spec.overhead.memory: negative quantity \"-1\" is not allowed");
        let e = resource_list(obj, "spec.overhead", Some(&list(&[("cpu", "1e30")]))).unwrap_err();
        assert_eq!(e.field, "spec.overhead.cpu");
    }
}
