//! `nodeorder` (volcano-behaviour.md §3): kube-scheduler's scores (0–100) × weight, summed.
//! Per node: LeastAllocated, MostAllocated, BalancedAllocation, NodeAffinity (raw sum of
//! matched preferred weights, not normalised, as Volcano). Per node set (normalised across the
//! candidates): InterPodAffinity, TaintToleration, PodTopologySpread. ImageLocality's weight is
//! accepted; the score is 0 because node image lists are not modelled.

use super::k8s::{default_normalize, PodCtx};
use crate::cluster::compile::label;
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::limits::MAX_NODE_SCORE;
use crate::model::TaintEffect;
use crate::resource::{CPU, MEMORY};
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;

/// Weights of the nodeorder plugin (argument keys and defaults as Volcano's).
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    /// `leastrequested.weight` (1).
    pub least: i64,
    /// `mostrequested.weight` (0).
    pub most: i64,
    /// `balancedresource.weight` (1).
    pub balanced: i64,
    /// `nodeaffinity.weight` (2).
    pub node_affinity: i64,
    /// `podaffinity.weight` (2).
    pub pod_affinity: i64,
    /// `tainttoleration.weight` (3).
    pub taint_toleration: i64,
    /// `imagelocality.weight` (1).
    pub image_locality: i64,
    /// `podtopologyspread.weight` (2).
    pub spread: i64,
}

const NEG: &str = "used as given, as Volcano does (the score then counts against the node)";

/// The `arguments` keys nodeorder reads (weights, integers; Volcano's keys and defaults).
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("leastrequested.weight", ArgKind::Int, "1").min(0.0, NEG),
    ArgSpec::new("mostrequested.weight", ArgKind::Int, "0").min(0.0, NEG),
    ArgSpec::new("balancedresource.weight", ArgKind::Int, "1").min(0.0, NEG),
    ArgSpec::new("nodeaffinity.weight", ArgKind::Int, "2").min(0.0, NEG),
    ArgSpec::new("podaffinity.weight", ArgKind::Int, "2").min(0.0, NEG),
    ArgSpec::new("tainttoleration.weight", ArgKind::Int, "3").min(0.0, NEG),
    ArgSpec::new("imagelocality.weight", ArgKind::Int, "1")
        .ignored("node image lists are not modelled, so the ImageLocality score is always 0"),
    ArgSpec::new("podtopologyspread.weight", ArgKind::Int, "2").min(0.0, NEG),
];

/// The nodeorder plugin.
pub struct NodeOrder {
    w: Weights,
    gpu: Option<usize>,
    /// Per node: has a PreferNoSchedule taint (else its TaintToleration raw score is 0 without
    /// reading the node).
    prefer_taint: Vec<bool>,
}

impl NodeOrder {
    /// Reads the weights (integers; absent keys take the defaults).
    pub fn open(s: &State<'_>, a: &Arguments) -> Self {
        let g = |k: &str, d: i64| a.int(k).unwrap_or(d);
        NodeOrder {
            w: Weights {
                least: g("leastrequested.weight", 1),
                most: g("mostrequested.weight", 0),
                balanced: g("balancedresource.weight", 1),
                node_affinity: g("nodeaffinity.weight", 2),
                pod_affinity: g("podaffinity.weight", 2),
                taint_toleration: g("tainttoleration.weight", 3),
                image_locality: g("imagelocality.weight", 1),
                spread: g("podtopologyspread.weight", 2),
            },
            gpu: s.cluster.resources.find("nvidia.com/gpu"),
            prefer_taint: (0..s.nodes.len)
                .map(|n| s.nodes.rec[n].taints.iter().any(|t| t.effect == TaintEffect::PreferNoSchedule))
                .collect(),
        }
    }

    /// The weights in force.
    pub fn weights(&self) -> &Weights {
        &self.w
    }
}

/// kube LeastAllocated (cpu and memory, weight 1 each, non-zero requests).
pub fn least_allocated(s: &State<'_>, t: TaskIdx, n: NodeIdx) -> i64 {
    let (cpu_req, mem_req, cpu_cap, mem_cap) = nonzero(s, t, n);
    (least(cpu_req, cpu_cap) + least(mem_req, mem_cap)) / 2
}

/// kube MostAllocated (cpu and memory, weight 1 each, non-zero requests).
pub fn most_allocated(s: &State<'_>, t: TaskIdx, n: NodeIdx) -> i64 {
    let (cpu_req, mem_req, cpu_cap, mem_cap) = nonzero(s, t, n);
    (most(cpu_req, cpu_cap) + most(mem_req, mem_cap)) / 2
}

fn nonzero(s: &State<'_>, t: TaskIdx, n: NodeIdx) -> (i64, i64, i64, i64) {
    let spec = &s.tasks.rec[t.ix()].spec;
    (
        s.view.nonzero_cpu(n).saturating_add(spec.nonzero_cpu_milli),
        s.view.nonzero_mem(n).saturating_add(spec.nonzero_memory_bytes),
        s.at(s.nodes.allocatable, n, CPU),
        s.at(s.nodes.allocatable, n, MEMORY),
    )
}

// kube-scheduler's integer formulas. The product is formed in i64 when it fits (always for
// amounts up to `limits::MAX_QUANTITY`, since it is at most cap × 100 < 2^55) and in i128
// otherwise, so exabyte-sized nodes cannot overflow; both give the same quotient.
fn least(req: i64, cap: i64) -> i64 {
    if cap <= 0 || req > cap {
        return 0;
    }
    match cap.checked_sub(req).and_then(|d| d.checked_mul(MAX_NODE_SCORE)) {
        Some(x) => x / cap,
        None => ((cap as i128 - req as i128) * MAX_NODE_SCORE as i128 / cap as i128) as i64,
    }
}

fn most(req: i64, cap: i64) -> i64 {
    if cap <= 0 {
        return 0;
    }
    match req.min(cap).checked_mul(MAX_NODE_SCORE) {
        Some(x) => x / cap,
        None => (req.min(cap) as i128 * MAX_NODE_SCORE as i128 / cap as i128) as i64,
    }
}

/// kube BalancedAllocation over cpu, memory and (when requested) `gpu_dim`: (1 − std of the
/// requested fractions) × 100.
pub fn balanced_allocation(s: &State<'_>, t: TaskIdx, n: NodeIdx, gpu_dim: Option<usize>) -> i64 {
    let req = s.tasks.req(t, s.dims);
    let mut fr: [f64; 3] = [0.0; 3];
    let mut k = 0;
    for (i, d) in [Some(CPU), Some(MEMORY), gpu_dim].into_iter().enumerate() {
        let Some(d) = d else { continue };
        if i == 2 && req.get(d).copied().unwrap_or(0) == 0 {
            continue;
        }
        let alloc = s.at(s.nodes.allocatable, n, d);
        if alloc == 0 {
            continue;
        }
        let used = s.view.requested(n)[d].saturating_add(req.get(d).copied().unwrap_or(0));
        fr[k] = (used as f64 / alloc as f64).min(1.0);
        k += 1;
    }
    let std = match k {
        2 => ((fr[0] - fr[1]) / 2.0).abs(),
        3 => {
            let mean = (fr[0] + fr[1] + fr[2]) / 3.0;
            (fr.iter().map(|f| (f - mean) * (f - mean)).sum::<f64>() / 3.0).sqrt()
        }
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// kube NodeAffinity score: Σ weights of matched preferred terms (not normalised, as Volcano).
pub fn node_affinity_score(s: &State<'_>, t: TaskIdx, n: NodeIdx) -> i64 {
    let pod = &s.tasks.rec[t.ix()].c;
    let node = s.nodes.rec[n.ix()];
    pod.node_preferred
        .iter()
        .filter(|(_, term)| term.matches(&node.labels, node.name, &s.cluster.names))
        .map(|(w, _)| *w as i64)
        .sum()
}

/// Intolerable PreferNoSchedule taints of `n` for the pod (kube TaintToleration raw score).
pub fn prefer_no_schedule_count(s: &State<'_>, t: TaskIdx, n: NodeIdx) -> i64 {
    let pod = &s.tasks.rec[t.ix()].c;
    let prefer = |tol: &&crate::cluster::compile::CToleration| tol.effect.is_none_or(|e| e == TaintEffect::PreferNoSchedule);
    s.nodes.rec[n.ix()]
        .taints
        .iter()
        .filter(|x| {
            x.effect == TaintEffect::PreferNoSchedule && !pod.tolerations.iter().filter(prefer).any(|tol| tol.tolerates(x))
        })
        .count() as i64
}

plugin_impl! {
    impl<'a> for NodeOrder {
        fn name(&self) -> &'static str {
            "nodeorder"
        }
        fn node_order(&self, s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> f64 {
            // Volcano: nodeScore += float64(score) * float64(weight).
            let w = &self.w;
            let mut score = 0.0f64;
            if w.least != 0 {
                score += least_allocated(s, t, n) as f64 * w.least as f64;
            }
            if w.most != 0 {
                score += most_allocated(s, t, n) as f64 * w.most as f64;
            }
            if w.balanced != 0 {
                score += balanced_allocation(s, t, n, self.gpu) as f64 * w.balanced as f64;
            }
            if w.node_affinity != 0 {
                score += node_affinity_score(s, t, n) as f64 * w.node_affinity as f64;
            }
            score
        }
        fn batch_node_order(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, nodes: &[NodeIdx], out: &mut [f64]) {
            let w = &self.w;
            let mut raw = vec![0i64; nodes.len()];
            if w.taint_toleration != 0 {
                for (r, &n) in raw.iter_mut().zip(nodes) {
                    *r = if self.prefer_taint[n.ix()] { prefer_no_schedule_count(s, t, n) } else { 0 };
                }
                default_normalize(&mut raw, true);
                for (o, r) in out.iter_mut().zip(&raw) {
                    *o += *r as f64 * w.taint_toleration as f64;
                }
            }
            if w.pod_affinity != 0 && ctx.pref_active {
                for (r, &n) in raw.iter_mut().zip(nodes) {
                    let nl = &s.nodes.rec[n.ix()].labels;
                    *r = ctx.pref_scores.iter().filter(|((k, v), _)| label(nl, *k) == Some(*v)).map(|(_, sc)| *sc).sum();
                }
                let (min, max) = (raw.iter().copied().min().unwrap_or(0), raw.iter().copied().max().unwrap_or(0));
                for (o, r) in out.iter_mut().zip(&raw) {
                    let f = if max > min { (MAX_NODE_SCORE as f64 * ((r - min) as f64 / (max - min) as f64)) as i64 } else { 0 };
                    *o += f as f64 * w.pod_affinity as f64;
                }
            }
            if w.spread != 0 && !ctx.spread_soft.is_empty() {
                let pod = &s.tasks.rec[t.ix()].c;
                let names = &s.cluster.names;
                let hostname = names.get("kubernetes.io/hostname");
                let mut ignored = vec![false; nodes.len()];
                for (i, &n) in nodes.iter().enumerate() {
                    let nl = &s.nodes.rec[n.ix()].labels;
                    let mut score = 0.0f64;
                    for st in &ctx.spread_soft {
                        let c = &pod.spread[st.index];
                        let Some(v) = label(nl, c.key) else {
                            ignored[i] = true;
                            continue;
                        };
                        let cnt = if Some(c.key) == hostname {
                            s.tasks_on(n)
                                .filter(|&o| {
                                    let oc = &s.tasks.rec[o.ix()].c;
                                    o != t
                                        && s.in_view_spread(o)
                                        && oc.namespace == pod.namespace
                                        && c.selector.as_ref().is_some_and(|sel| sel.matches(&oc.labels, names))
                                })
                                .count() as i64
                        } else {
                            st.counts.get(&v).copied().unwrap_or(0)
                        };
                        score += cnt as f64 * st.weight + (c.max_skew - 1) as f64;
                    }
                    raw[i] = score.round() as i64;
                }
                let mut min = i64::MAX;
                let mut max = 0i64;
                for (i, &r) in raw.iter().enumerate() {
                    if !ignored[i] {
                        min = min.min(r);
                        max = max.max(r);
                    }
                }
                for (i, o) in out.iter_mut().enumerate() {
                    let f = if ignored[i] {
                        0
                    } else if max == 0 {
                        MAX_NODE_SCORE
                    } else {
                        MAX_NODE_SCORE * (max + min - raw[i]) / max
                    };
                    *o += f as f64 * w.spread as f64;
                }
            }
        }
    }
}

impl NodeOrder {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::NodeOrder.bit() | F::BatchNodeOrder.bit()
    };
}
