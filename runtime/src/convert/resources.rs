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

/// One amount of resource `name` in core units as a Kubernetes quantity, the inverse of
/// [`amount`], in the canonical form the API server prints: milli-scaled resources as whole
/// units when exact, else with `m` (`2`, `1500m`); bytes with the largest exact binary suffix
/// (`4Gi`, `1536Mi`, `1000`); counts as plain integers.
pub fn format_amount(name: &str, v: i64) -> String {
    match scale_of(name) {
        Scale::Milli if v % 1000 == 0 => (v / 1000).to_string(),
        Scale::Milli => format!("{v}m"),
        Scale::Units if name == "pods" || v == 0 => v.to_string(),
        Scale::Units => {
            const SUFFIXES: [(&str, i64); 6] =
                [("Ei", 1 << 60), ("Pi", 1 << 50), ("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)];
            for (suffix, unit) in SUFFIXES {
                if v % unit == 0 {
                    return format!("{}{suffix}", v / unit);
                }
            }
            v.to_string()
        }
    }
}

/// A core resource list as Kubernetes quantities ([`format_amount`]), leaving out zeros.
pub fn format_list(list: &ResourceList) -> BTreeMap<String, String> {
    list.iter().filter(|(_, v)| **v != 0).map(|(k, v)| (k.clone(), format_amount(k, *v))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_format_as_canonical_quantities_and_parse_back() {
        let cases = [
            ("cpu", 2000, "2"),
            ("cpu", 1500, "1500m"),
            ("memory", 4 << 30, "4Gi"),
            ("memory", 1536 << 20, "1536Mi"),
            ("memory", 1000, "1000"),
            ("nvidia.com/gpu", 1000, "1"),
            ("pods", 110, "110"),
            ("hugepages-2Mi", 536870912000, "536870912"),
        ];
        for (name, v, want) in cases {
            assert_eq!(format_amount(name, v), want, "{name} {v}");
            assert_eq!(amount(name, want).unwrap(), v, "{name} {want} parses back");
        }
    }

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
