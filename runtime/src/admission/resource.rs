//! The resource arithmetic of Volcano's queue rules: `api.NewResource` of a Kubernetes resource
//! list (cpu in millicores, memory in bytes, scalar resources — extended, hugepages,
//! attachable volumes — in milli-units; `pods` and `ephemeral-storage` are not counted), sums,
//! `LessPartly` with the zero default, and Volcano's `Resource.String`.

use crate::convert::resources::{amount, format_amount};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

/// Volcano's `api.Resource` as the webhook uses it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VcResource {
    /// Millicores.
    pub milli_cpu: f64,
    /// Bytes.
    pub memory: f64,
    /// Scalar resources in milli-units, by name.
    pub scalars: BTreeMap<String, f64>,
}

/// Whether Volcano counts resource `name` as a scalar (`IsScalarResourceName`: an extended
/// resource, hugepages, an attachable-volumes count).
pub fn is_scalar(name: &str) -> bool {
    (name.contains('/') && !name.starts_with("kubernetes.io/"))
        || name.starts_with("hugepages-")
        || name.starts_with("attachable-volumes-")
}

impl VcResource {
    /// `api.NewResource(list)`; quantities that do not parse count as zero (the validating rule
    /// reports them first).
    pub fn of(list: Option<&BTreeMap<String, Quantity>>) -> Self {
        let mut r = VcResource::default();
        for (name, q) in list.into_iter().flatten() {
            let v = amount(name, &q.0).unwrap_or(0) as f64;
            match name.as_str() {
                "cpu" => r.milli_cpu += v,
                "memory" => r.memory += v,
                n if is_scalar(n) => *r.scalars.entry(n.to_string()).or_insert(0.0) += v,
                _ => {}
            }
        }
        r
    }

    /// Adds `o` to `self`.
    pub fn add(&mut self, o: &VcResource) {
        self.milli_cpu += o.milli_cpu;
        self.memory += o.memory;
        for (k, v) in &o.scalars {
            *self.scalars.entry(k.clone()).or_insert(0.0) += v;
        }
    }

    /// `LessPartly(rr, Zero)`: whether some dimension of `self` is below `rr`'s (a dimension
    /// missing here counts as zero).
    pub fn less_partly(&self, rr: &VcResource) -> bool {
        self.milli_cpu < rr.milli_cpu
            || self.memory < rr.memory
            || rr.scalars.iter().any(|(k, v)| self.scalars.get(k).copied().unwrap_or(0.0) < *v)
    }

    /// One dimension (`getSingleResource`): 0 when absent.
    pub fn get(&self, name: &str) -> f64 {
        match name {
            "cpu" => self.milli_cpu,
            "memory" => self.memory,
            n => self.scalars.get(n).copied().unwrap_or(0.0),
        }
    }

    /// `ResourceNames()`: the dimensions of at least 0.1, cpu and memory first.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.milli_cpu >= 0.1 {
            out.push("cpu".to_string());
        }
        if self.memory >= 0.1 {
            out.push("memory".to_string());
        }
        out.extend(self.scalars.iter().filter(|(_, v)| **v >= 0.1).map(|(k, _)| k.clone()));
        out
    }
}

impl std::fmt::Display for VcResource {
    /// Volcano's `Resource.String()`: `cpu 2000.00, memory 0.00, nvidia.com/gpu 1000.00`
    /// (scalars by name here; Go's map order is random).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cpu {:.2}, memory {:.2}", self.milli_cpu, self.memory)?;
        for (k, v) in &self.scalars {
            write!(f, ", {k} {v:.2}")?;
        }
        Ok(())
    }
}

/// `formatResourceWithType`: cpu and memory as quantities (`2`, `1500m`, `4Gi`), others `%.2f`.
pub fn format_with_type(name: &str, v: f64) -> String {
    match name {
        "cpu" | "memory" => format_amount(name, v as i64),
        _ => format!("{v:.2}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
        pairs.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect()
    }

    #[test]
    fn volcano_resources_count_cpu_memory_and_scalars_only() {
        let r = VcResource::of(Some(&list(&[
            ("cpu", "2"),
            ("memory", "1Gi"),
            ("pods", "10"),
            ("nvidia.com/gpu", "1"),
            ("ephemeral-storage", "1Gi"),
        ])));
        assert_eq!((r.milli_cpu, r.memory), (2000.0, 1073741824.0));
        assert_eq!(r.scalars.len(), 1);
        assert_eq!(r.to_string(), "cpu 2000.00, memory 1073741824.00, nvidia.com/gpu 1000.00");
        assert_eq!(r.names(), ["cpu", "memory", "nvidia.com/gpu"]);
        assert_eq!(format_with_type("cpu", 1500.0), "1500m");
        assert_eq!(format_with_type("memory", 1073741824.0), "1Gi");
        assert_eq!(format_with_type("nvidia.com/gpu", 1000.0), "1000.00");
    }

    #[test]
    fn less_partly_treats_missing_dimensions_as_zero() {
        let empty = VcResource::default();
        let gpu = VcResource::of(Some(&list(&[("nvidia.com/gpu", "1")])));
        assert!(empty.less_partly(&gpu));
        assert!(!gpu.less_partly(&empty));
        let cpu = VcResource::of(Some(&list(&[("cpu", "1")])));
        assert!(gpu.less_partly(&cpu), "gpu has no cpu");
    }
}
