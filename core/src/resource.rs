//! Resource vectors in integers, with Volcano's comparison semantics
//! (`pkg/scheduler/api/resource_info.go`).
//!
//! Units: CPU in millicores, memory and ephemeral storage in bytes, `pods` in whole pods, every
//! other scalar (nvidia.com/gpu, hugepages-*, extended resources) in milli-units as Volcano
//! keeps them (`1` GPU = `1000`). Dimensions are interned per cluster ([`ResourceNames`]):
//! 0 = cpu, 1 = memory, 2 = pods, then scalars in order of first appearance.
//!
//! Volcano compares float resources with an epsilon of 0.1 of a unit; in integers that is plain
//! equality, so `l <= r` is exact here.

use crate::limits::MAX_RESOURCE_DIMS;

/// Dimension of CPU, in millicores.
pub const CPU: usize = 0;
/// Dimension of memory, in bytes.
pub const MEMORY: usize = 1;
/// Dimension of the `pods` count (whole pods); ignored by [`Resource::is_empty`].
pub const PODS: usize = 2;

/// A resource list by name as the runtime hands it over: name → amount in the units above,
/// sorted by name (a [`crate::vec_map::VecMap`]).
pub type ResourceList = crate::vec_map::VecMap<String, i64>;

/// How a dimension missing on the right-hand side compares (Volcano's `DimensionDefaultValue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DimDefault {
    /// A missing dimension is zero.
    Zero,
    /// A missing dimension is unlimited.
    Infinity,
}

/// The resource dimensions of one cluster: names interned to indexes.
#[derive(Clone, Debug)]
pub struct ResourceNames {
    names: Vec<String>,
}

impl Default for ResourceNames {
    fn default() -> Self {
        ResourceNames { names: vec!["cpu".into(), "memory".into(), "pods".into()] }
    }
}

impl ResourceNames {
    /// Index of `name`, adding it when new. `None` past [`MAX_RESOURCE_DIMS`].
    pub fn dim(&mut self, name: &str) -> Option<usize> {
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return Some(i);
        }
        if self.names.len() >= MAX_RESOURCE_DIMS {
            return None;
        }
        self.names.push(name.to_string());
        Some(self.names.len() - 1)
    }

    /// Index of `name` if known.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Name of dimension `d`.
    pub fn name(&self, d: usize) -> &str {
        self.names.get(d).map(String::as_str).unwrap_or("")
    }

    /// Number of dimensions.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Never true: cpu, memory and pods always exist.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Dimensions ordered as Volcano lists failing resources: cpu, memory, then the others by
    /// name (Volcano iterates a Go map there; sorting makes it deterministic).
    pub fn report_order(&self) -> Vec<usize> {
        let mut rest: Vec<usize> = (0..self.names.len()).filter(|&d| d != CPU && d != MEMORY).collect();
        rest.sort_by(|&a, &b| self.names[a].cmp(&self.names[b]));
        let mut out = vec![CPU, MEMORY];
        out.extend(rest);
        out
    }

    /// Converts a named list; unknown names are added. Returns the names that did not fit.
    pub fn resource(&mut self, list: &ResourceList) -> (Resource, Vec<String>) {
        let mut r = Resource::default();
        let mut dropped = Vec::new();
        for (name, &v) in list {
            match self.dim(name) {
                Some(d) => r.set(d, v.clamp(0, crate::limits::MAX_QUANTITY)),
                None => dropped.push(name.clone()),
            }
        }
        (r, dropped)
    }
}

/// A resource vector: one integer per dimension plus which dimensions are present.
/// CPU and memory always count as present (Volcano keeps them as plain fields).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Resource {
    vals: Vec<i64>,
    present: u64,
}

const ALWAYS: u64 = (1 << CPU) | (1 << MEMORY);

impl Resource {
    /// A vector with `cpu_milli` millicores and `memory_bytes` bytes.
    pub fn cpu_mem(cpu_milli: i64, memory_bytes: i64) -> Self {
        let mut r = Resource::default();
        r.set(CPU, cpu_milli);
        r.set(MEMORY, memory_bytes);
        r
    }

    /// Amount in dimension `d` (0 when absent).
    #[inline]
    pub fn get(&self, d: usize) -> i64 {
        self.vals.get(d).copied().unwrap_or(0)
    }

    /// Whether dimension `d` is present.
    #[inline]
    pub fn has(&self, d: usize) -> bool {
        (self.present | ALWAYS) & (1 << d) != 0
    }

    /// Sets dimension `d` (marks it present).
    pub fn set(&mut self, d: usize, v: i64) {
        if self.vals.len() <= d {
            self.vals.resize(d + 1, 0);
        }
        self.vals[d] = v;
        self.present |= 1 << d;
    }

    /// Highest dimension index + 1 that may be non-zero.
    pub fn width(&self) -> usize {
        self.vals.len()
    }

    /// Present dimensions, ascending (cpu and memory always).
    pub fn dims(&self) -> impl Iterator<Item = usize> + '_ {
        let mask = self.present | ALWAYS;
        (0..MAX_RESOURCE_DIMS).filter(move |d| mask & (1 << d) != 0)
    }

    /// `self += other` (dimensions of `other` become present).
    pub fn add(&mut self, other: &Resource) -> &mut Self {
        for d in other.dims() {
            let v = self.get(d).saturating_add(other.get(d));
            self.set(d, v);
        }
        self
    }

    /// `self -= other` (Volcano's `SubWithoutAssert`).
    pub fn sub(&mut self, other: &Resource) -> &mut Self {
        for d in other.dims() {
            let v = self.get(d).saturating_sub(other.get(d));
            self.set(d, v);
        }
        self
    }

    /// Volcano's `IsEmpty`: every dimension is zero, ignoring `pods`.
    pub fn is_empty(&self) -> bool {
        self.vals.iter().enumerate().all(|(d, &v)| d == PODS || v == 0)
    }

    /// Volcano's `LessEqual(rr, default)`: cpu and memory always compared; every present
    /// scalar of `self` compared with `rr`'s, a scalar missing in `rr` counting as zero or as
    /// unlimited by `default`.
    pub fn less_equal(&self, rr: &Resource, default: DimDefault) -> bool {
        self.first_exceeding(rr, default, &[]).is_none()
    }

    /// The first dimension (in `order`, else ascending) where `self > rr`, as
    /// [`Resource::less_equal`] decides.
    pub fn first_exceeding(&self, rr: &Resource, default: DimDefault, order: &[usize]) -> Option<usize> {
        let check = |d: usize| -> bool {
            if d == CPU || d == MEMORY {
                return self.get(d) > rr.get(d);
            }
            if !self.has(d) {
                return false;
            }
            if !rr.has(d) && default == DimDefault::Infinity {
                return false;
            }
            self.get(d) > rr.get(d)
        };
        if order.is_empty() {
            self.dims().find(|&d| check(d))
        } else {
            order.iter().copied().find(|&d| check(d))
        }
    }

    /// Volcano's `LessEqualWithDimension(rr, req)`: compares only the dimensions `req`
    /// requests (value > 0), a missing dimension in `rr` counting as zero.
    pub fn less_equal_on(&self, rr: &Resource, req: &Resource) -> bool {
        req.dims().filter(|&d| req.get(d) > 0).all(|d| self.get(d) <= rr.get(d))
    }

    /// Writes the vector into a dense row of `out.len()` dimensions.
    pub fn write_row(&self, out: &mut [i64]) {
        for (d, o) in out.iter_mut().enumerate() {
            *o = self.get(d);
        }
    }

    /// Presence mask (bit d = dimension d present; cpu and memory always set).
    pub fn present_mask(&self) -> u64 {
        self.present | ALWAYS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(v: i64) -> Resource {
        let mut r = Resource::cpu_mem(1000, 1 << 30);
        r.set(3, v);
        r
    }

    #[test]
    fn less_equal_missing_right_scalar_zero_vs_infinity() {
        let l = gpu(1000);
        let r = Resource::cpu_mem(2000, 2 << 30);
        assert!(!l.less_equal(&r, DimDefault::Zero), "missing gpu on the right is zero");
        assert!(l.less_equal(&r, DimDefault::Infinity), "missing gpu on the right is unlimited");
        assert_eq!(l.first_exceeding(&r, DimDefault::Zero, &[]), Some(3));
    }

    #[test]
    fn cpu_and_memory_always_compared_and_pods_ignored_by_is_empty() {
        let l = Resource::cpu_mem(1001, 0);
        let r = Resource::cpu_mem(1000, 0);
        assert!(!l.less_equal(&r, DimDefault::Infinity));
        let mut only_pods = Resource::default();
        only_pods.set(PODS, 1);
        assert!(only_pods.is_empty());
        assert!(!gpu(1).is_empty());
    }

    #[test]
    fn less_equal_on_compares_requested_dims_only() {
        let used = Resource::cpu_mem(3000, 100);
        let deserved = Resource::cpu_mem(2000, 1000);
        let mem_only = Resource::cpu_mem(0, 10);
        assert!(used.less_equal_on(&deserved, &mem_only));
        assert!(!used.less_equal_on(&deserved, &Resource::cpu_mem(1, 0)));
    }
}
