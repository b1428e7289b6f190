//! The `capacity` plugin's per-queue limits (Volcano `capacity.go` `buildQueueAttrs` and
//! `buildHierarchicalQueueAttrs` / `checkHierarchicalQueue`; volcano-behaviour.md §3
//! "capacity"): effective deserved, guarantee, capability and real capability, dense over the
//! session's resource dimensions in integers ([`UNLIMITED`] = no limit). Allocated, request,
//! inqueue and elastic are not kept here: they are the session's queue table
//! ([`crate::session::queues`]).
//!
//! Without hierarchy: real capability is the queue table's flat one; deserved =
//! max(min(`spec.deserved`, real capability), guarantee).
//!
//! With hierarchy (`enableHierarchy`): the tree of `spec.parent` (unset = `root`) from the
//! queue table. Root: capability unlimited when its `spec.capability` is empty, real capability =
//! capability, guarantee and deserved = Σ of its children's. Every child, parent first: deserved
//! = max(`spec.deserved`, guarantee); a cpu or memory capability ≤ 0 and every scalar the child's
//! capability does not name are inherited from the parent; real capability = (parent's real
//! capability − Σ the siblings' guarantees (own included))⁺ + own guarantee, capped by the
//! child's capability. A child capability above its parent's is allowed and limits only that
//! child: the parent's real capability bounds it through the formula.

use crate::resource::{CPU, MEMORY, PODS};
use crate::session::queues::UNLIMITED;
use crate::session::tables::QueueIdx;
use crate::session::State;

/// Dense per-queue limits, row-major (`q * dims + d`).
pub struct Attrs {
    /// Number of dimensions.
    pub dims: usize,
    /// Effective deserved. A scalar dimension at 0 is absent (Volcano's `helpers.Max` drops
    /// zero scalars); cpu and memory are always compared.
    pub deserved: Vec<i64>,
    /// Guarantee (root: Σ of its children's, with hierarchy).
    pub guarantee: Vec<i64>,
    /// Effective capability (hierarchy: after inheritance); [`UNLIMITED`] where none.
    pub capability: Vec<i64>,
    /// Real capability; [`UNLIMITED`] where none.
    pub real_capability: Vec<i64>,
}

impl Attrs {
    /// Row `q` of column `col`.
    #[inline]
    pub fn row<'s>(&self, col: &'s [i64], q: QueueIdx) -> &'s [i64] {
        &col[q.ix() * self.dims..(q.ix() + 1) * self.dims]
    }

    /// Flat attributes (no hierarchy).
    pub fn flat(s: &State<'_>) -> Self {
        let dims = s.dims;
        let a = &s.queues.acct;
        let n = s.queues.len * dims;
        let mut out = Attrs {
            dims,
            deserved: vec![0; n],
            guarantee: a.guarantee.to_vec(),
            capability: vec![UNLIMITED; n],
            real_capability: a.real_capability.to_vec(),
        };
        for q in 0..s.queues.len {
            let has_cap = s.queues.rec[q].capability.is_some();
            for d in 0..dims {
                let i = q * dims + d;
                if has_cap && a.capability_set[q] & (1 << d) != 0 {
                    let c = a.capability[i];
                    out.capability[i] = if (d == CPU || d == MEMORY) && c <= 0 { UNLIMITED } else { c };
                }
                let des = a.deserved[i].min(out.real_capability[i]);
                out.deserved[i] = des.max(out.guarantee[i]);
            }
        }
        out
    }

    /// Hierarchical attributes; the queue table's tree must be valid
    /// ([`crate::session::queues::QueueAccounts::tree_error`] is `None`) and have a root.
    pub fn hierarchical(s: &State<'_>) -> Self {
        let dims = s.dims;
        let a = &s.queues.acct;
        let nq = s.queues.len;
        let n = nq * dims;
        let mut out = Attrs {
            dims,
            deserved: a.deserved.to_vec(),
            guarantee: a.guarantee.to_vec(),
            capability: a.capability.to_vec(),
            real_capability: vec![0; n],
        };
        // Which capability dimensions each queue names (inheritance fills the rest).
        let mut cap_set: Vec<u64> =
            (0..nq).map(|q| if s.queues.rec[q].capability.is_some() { a.capability_set[q] } else { 0 }).collect();
        let Some(root) = a.root else { return out };
        let r = root.ix() * dims;
        let root_empty = (0..dims).all(|d| d == PODS || cap_set[root.ix()] & (1 << d) == 0 || out.capability[r + d] == 0);
        if root_empty {
            for d in 0..dims {
                out.capability[r + d] = UNLIMITED;
            }
            cap_set[root.ix()] = u64::MAX;
        }
        for d in 0..dims {
            out.real_capability[r + d] = out.capability[r + d];
        }
        // Parents before children: breadth-first from the root.
        let mut order = vec![root];
        let mut i = 0;
        while i < order.len() {
            let p = order[i];
            i += 1;
            let kids: Vec<QueueIdx> = a.children_of(p).collect();
            let pr = p.ix() * dims;
            let mut total_guarantee = vec![0i64; dims];
            let mut total_deserved = vec![0i64; dims];
            for &c in &kids {
                let cr = c.ix() * dims;
                for d in 0..dims {
                    out.deserved[cr + d] = out.deserved[cr + d].max(out.guarantee[cr + d]);
                    total_deserved[d] = total_deserved[d].saturating_add(out.deserved[cr + d]);
                    total_guarantee[d] = total_guarantee[d].saturating_add(out.guarantee[cr + d]);
                    let inherit = if d == CPU || d == MEMORY {
                        cap_set[c.ix()] & (1 << d) == 0 || out.capability[cr + d] <= 0
                    } else {
                        cap_set[c.ix()] & (1 << d) == 0 && cap_set[p.ix()] & (1 << d) != 0
                    };
                    if inherit {
                        out.capability[cr + d] = out.capability[pr + d];
                        if cap_set[p.ix()] & (1 << d) != 0 || d == CPU || d == MEMORY {
                            cap_set[c.ix()] |= 1 << d;
                        }
                    }
                }
            }
            if p == root {
                out.guarantee[pr..pr + dims].copy_from_slice(&total_guarantee);
                out.deserved[pr..pr + dims].copy_from_slice(&total_deserved);
            }
            for &c in &kids {
                let cr = c.ix() * dims;
                for d in 0..dims {
                    let parent = out.real_capability[pr + d];
                    let mut v = if parent == UNLIMITED {
                        UNLIMITED
                    } else {
                        (parent - total_guarantee[d]).max(0).saturating_add(out.guarantee[cr + d])
                    };
                    if cap_set[c.ix()] & (1 << d) != 0 {
                        v = v.min(out.capability[cr + d]);
                    }
                    out.real_capability[cr + d] = v;
                }
                order.push(c);
            }
        }
        out
    }

    /// Whether queue `q`'s deserved is empty (every dimension but `pods` 0): a best-effort
    /// queue, whose share is 1.
    pub fn deserved_empty(&self, q: QueueIdx) -> bool {
        self.row(&self.deserved, q).iter().enumerate().all(|(d, &v)| d == PODS || v <= 0)
    }

    /// Volcano `updateQueueAttrShare`: 1 for an empty deserved, else max over the dimensions
    /// with deserved > 0 of allocated / deserved.
    pub fn share(&self, q: QueueIdx, allocated: &[i64]) -> f64 {
        if self.deserved_empty(q) {
            return 1.0;
        }
        let des = self.row(&self.deserved, q);
        let mut res = 0.0f64;
        for d in 0..self.dims {
            if d == PODS || des[d] <= 0 {
                continue;
            }
            res = res.max(allocated[d] as f64 / des[d] as f64);
        }
        res
    }
}
