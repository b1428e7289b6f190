//! Inputs that reach a finding still open in the core (listed in `fuzz/README.md`). The driver
//! skips them so the targets keep looking for new findings instead of re-finding the old one;
//! set `BASALT_FUZZ_KNOWN=1` to run them anyway. Remove a guard once its regression test in
//! `core/tests/fuzz_regressions.rs` passes.

use basalt_core::session::tables::{NodeIdx, TaskIdx};
use basalt_core::session::State;
use basalt_core::{Delta, SchedulerConf};
use std::collections::BTreeMap;

/// Whether the guards are off (`BASALT_FUZZ_KNOWN=1`).
pub fn disabled() -> bool {
    std::env::var_os("BASALT_FUZZ_KNOWN").is_some_and(|v| v == "1")
}

/// Σ over `lists` per resource name, exact.
fn sums<'a>(lists: impl Iterator<Item = &'a BTreeMap<String, i64>>) -> BTreeMap<&'a str, i128> {
    let mut out: BTreeMap<&str, i128> = BTreeMap::new();
    for l in lists {
        for (k, &v) in l {
            *out.entry(k.as_str()).or_default() += i128::from(v);
        }
    }
    out
}

/// `regression_least_allocated_product_overflows_i64` and
/// `regression_nonzero_requested_sum_overflows_i64`: with nodeorder configured, a node whose cpu
/// or memory allocatable exceeds `i64::MAX / 100`, or pods whose cpu or memory requests add up
/// past `i64::MAX / 2`.
fn nodeorder_overflows(deltas: &[Delta], conf: &SchedulerConf) -> bool {
    if !conf.tiers.iter().flat_map(|t| &t.plugins).any(|p| p.name == "nodeorder") {
        return false;
    }
    let nodes = deltas.iter().filter_map(|d| if let Delta::Node(n) = d { Some(&n.allocatable) } else { None });
    let big_node = nodes.flat_map(|a| ["cpu", "memory"].map(|k| a.get(k).copied().unwrap_or(0))).any(|v| v > i64::MAX / 100);
    let pods = deltas.iter().filter_map(|d| if let Delta::Pod(p) = d { Some(&p.resreq) } else { None });
    let requests = sums(pods);
    let big_sum = ["cpu", "memory"].iter().any(|k| requests.get(k).copied().unwrap_or(0) > i128::from(i64::MAX / 2));
    big_node || big_sum
}

/// `regression_discard_after_saturated_pipeline` and
/// `regression_discard_after_saturated_nonzero_request`: an operation that would push one of
/// node `n`'s sums past `i64::MAX` (saturation is not undone by discard).
pub fn op_saturates(s: &State<'_>, t: TaskIdx, n: NodeIdx, pipeline: bool) -> bool {
    let (len, i) = (s.nodes.len, n.ix());
    let column = if pipeline { &*s.nodes.pipelined } else { &*s.nodes.used };
    let spec = &s.tasks.rec[t.ix()].spec;
    !disabled()
        && (s.tasks.req(t, s.dims).iter().enumerate().any(|(d, &r)| column[d * len + i].checked_add(r).is_none())
            || s.nodes.nonzero_cpu[i].checked_add(spec.nonzero_cpu_milli).is_none()
            || s.nodes.nonzero_mem[i].checked_add(spec.nonzero_memory_bytes).is_none())
}

/// Whether `deltas` and `conf` reach an open finding (and the guards are on).
pub fn skip(deltas: &[Delta], conf: &SchedulerConf) -> bool {
    !disabled() && nodeorder_overflows(deltas, conf)
}
