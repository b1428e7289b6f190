//! `binpack` (volcano-behaviour.md §3): prefers fuller nodes. Score = Σ over requested,
//! weighted resources of (request + used) / allocatable × weight, divided by Σ weights, × 100 ×
//! `binpack.weight`; a resource that would overflow makes the whole score 0.

use super::k8s::PodCtx;
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::limits::MAX_NODE_SCORE;
use crate::resource::{CPU, MEMORY};
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;

/// The `arguments` keys binpack reads (integers except the resource list).
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("binpack.weight", ArgKind::Int, "1")
        .min(0.0, "used as given, as Volcano does (binpack then prefers emptier nodes)"),
    ArgSpec::new("binpack.cpu", ArgKind::Int, "1").min(0.0, "1 is used, as Volcano does"),
    ArgSpec::new("binpack.memory", ArgKind::Int, "1").min(0.0, "1 is used, as Volcano does"),
    ArgSpec::new("binpack.resources", ArgKind::Str, "\"\""),
    ArgSpec::new("binpack.resources.", ArgKind::Int, "1").prefix().min(0.0, "1 is used, as Volcano does"),
];

/// The binpack plugin: per-dimension weights.
pub struct Binpack {
    weight: i64,
    /// (dimension, weight).
    resources: Vec<(usize, i64)>,
}

impl Binpack {
    /// Reads `binpack.weight` (1), `binpack.cpu` (1), `binpack.memory` (1), `binpack.resources`
    /// (comma list of extra resource names) and `binpack.resources.<name>` (1); a negative
    /// weight becomes 1.
    pub fn open(s: &State<'_>, a: &Arguments) -> Self {
        let pos = |v: i64| if v < 0 { 1 } else { v };
        let mut resources =
            vec![(CPU, pos(a.int("binpack.cpu").unwrap_or(1))), (MEMORY, pos(a.int("binpack.memory").unwrap_or(1)))];
        if let Some(list) = a.string("binpack.resources") {
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let w = pos(a.int(&format!("binpack.resources.{name}")).unwrap_or(1));
                if let Some(d) = s.cluster.resources.find(name) {
                    resources.push((d, w));
                }
            }
        }
        Binpack { weight: a.int("binpack.weight").unwrap_or(1), resources }
    }

    /// The score of task `t` on node `n`.
    pub fn score(&self, s: &State<'_>, t: TaskIdx, n: NodeIdx) -> f64 {
        let req = s.tasks.req(t, s.dims);
        let mut score = 0.0;
        let mut weight_sum = 0i64;
        for &(d, w) in &self.resources {
            let r = req.get(d).copied().unwrap_or(0);
            if r == 0 {
                continue;
            }
            let cap = s.at(s.nodes.allocatable, n, d);
            let used = s.used(n, d);
            weight_sum = weight_sum.saturating_add(w);
            if cap == 0 || w == 0 {
                continue;
            }
            let fin = r.saturating_add(used);
            if fin > cap {
                return 0.0;
            }
            score += fin as f64 * w as f64 / cap as f64;
        }
        if weight_sum > 0 {
            score /= weight_sum as f64;
        }
        score * (MAX_NODE_SCORE as f64 * self.weight as f64)
    }
}

plugin_impl! {
    impl<'a> for Binpack {
        fn name(&self) -> &'static str {
            "binpack"
        }
        fn node_order(&self, s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> f64 {
            self.score(s, t, n)
        }
    }
}

impl Binpack {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::NodeOrder.bit()
    };
}
