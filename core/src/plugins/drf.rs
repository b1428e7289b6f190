//! `drf` (volcano-behaviour.md §3): dominant resource fairness between jobs. A job's share is
//! max over resources (with a non-zero cluster total) of allocated / total; lower share first.
//! Shares follow allocations through the session's event handlers. Fair-share arithmetic is in
//! `f64`, as Volcano's. Preemptable: a victim only when the preemptor job's share with the
//! preemptor's request added stays at or below the victim job's share with the victims taken so
//! far removed (within 1e-6).
//!
//! With `enableHierarchy: true` it also orders queues and picks reclaim victims by hierarchical
//! DRF ([`super::drf_hierarchy`]). When a queue's hierarchy cannot be derived (a missing parent,
//! a cycle), Volcano's drf registers nothing for the session; so does this one (every function
//! is neutral).

use super::drf_hierarchy::Tree;
use super::Verdict;
use crate::session::node_view::NodeView;
use crate::session::tables::{JobIdx, QueueIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

/// Volcano drf's `shareDelta`.
const SHARE_DELTA: f64 = 0.000001;

/// The drf plugin: per-job allocated vectors and shares, and with hierarchy the HDRF tree.
pub struct Drf {
    dims: usize,
    total: Vec<f64>,
    allocated: Vec<f64>,
    share: Vec<f64>,
    /// Whether the plugin registered its functions (false when the hierarchy is unusable).
    enabled: bool,
    tree: Option<Tree>,
    /// Why hierarchical DRF is off for this session, if it is.
    pub hierarchy_error: Option<String>,
}

impl Drf {
    /// Session open: allocated = Σ Resreq of each job's allocated-status tasks; `hierarchy` is
    /// the plugin's `enableHierarchy`.
    pub fn open(s: &State<'_>, hierarchy: bool) -> Self {
        let dims = s.dims;
        let mut d = Drf {
            dims,
            total: s.total.iter().map(|&v| v as f64).collect(),
            allocated: vec![0.0; s.jobs.len * dims],
            share: vec![0.0; s.jobs.len],
            enabled: true,
            tree: None,
            hierarchy_error: None,
        };
        for j in 0..s.jobs.len {
            for t in s.jobs.tasks(JobIdx(j as u32)) {
                if s.tasks.status()[t.ix()].allocated() {
                    for (k, &v) in s.tasks.req(t, dims).iter().enumerate() {
                        d.allocated[j * dims + k] += v as f64;
                    }
                }
            }
            d.update(j);
        }
        if hierarchy {
            match Tree::open(s, &d.allocated, &d.total) {
                Ok(t) => d.tree = Some(t),
                Err(e) => {
                    d.enabled = false;
                    d.hierarchy_error = Some(e);
                }
            }
        }
        d
    }

    fn update(&mut self, j: usize) {
        self.share[j] = self.share_of(&self.allocated[j * self.dims..(j + 1) * self.dims]);
    }

    /// Volcano drf `calculateShare`: max over dimensions with a total ≥ 0.1 of value / total.
    fn share_of(&self, alloc: &[f64]) -> f64 {
        let mut res = 0.0f64;
        for k in 0..self.dims {
            if self.total[k] < 0.1 {
                continue;
            }
            res = res.max(alloc[k] / self.total[k]);
        }
        res
    }

    /// The dominant share of job `j`.
    pub fn share(&self, j: JobIdx) -> f64 {
        self.share[j.ix()]
    }

    fn change(&mut self, s: &State<'_>, t: TaskIdx, sign: f64) {
        let Some(j) = s.tasks.job_of(t) else { return };
        let dims = self.dims;
        for (k, &v) in s.tasks.req(t, dims).iter().enumerate() {
            self.allocated[j.ix() * dims + k] += sign * v as f64;
        }
        self.update(j.ix());
        if let Some(tree) = self.tree.as_mut() {
            tree.add_total(s.tasks.req(t, dims), sign);
            tree.set_job(j, &self.allocated[j.ix() * dims..(j.ix() + 1) * dims], &self.total);
        }
    }
}

plugin_impl! {
    impl<'a> for Drf {
        fn name(&self) -> &'static str {
            "drf"
        }
        fn job_order(&self, _s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
            if !self.enabled {
                return Ordering::Equal;
            }
            self.share[l.ix()].partial_cmp(&self.share[r.ix()]).unwrap_or(Ordering::Equal)
        }
        fn preemptable(&self, s: &State<'a>, preemptor: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            if !self.enabled {
                return Verdict::Abstain;
            }
            let dims = self.dims;
            let Some(pj) = s.tasks.job_of(preemptor) else { return Verdict::Decided };
            let mut l = self.allocated[pj.ix() * dims..(pj.ix() + 1) * dims].to_vec();
            for (k, &v) in s.tasks.req(preemptor, dims).iter().enumerate() {
                l[k] += v as f64;
            }
            let ls = self.share_of(&l);
            // Per victim job: its allocation with the victims so far taken off.
            let mut left: Vec<(JobIdx, Vec<f64>)> = Vec::new();
            for &v in candidates {
                let Some(vj) = s.tasks.job_of(v) else { continue };
                let i = match left.iter().position(|(j, _)| *j == vj) {
                    Some(i) => i,
                    None => {
                        left.push((vj, self.allocated[vj.ix() * dims..(vj.ix() + 1) * dims].to_vec()));
                        left.len() - 1
                    }
                };
                for (k, &r) in s.tasks.req(v, dims).iter().enumerate() {
                    left[i].1[k] -= r as f64;
                }
                let rs = self.share_of(&left[i].1);
                if ls < rs || (ls - rs).abs() <= SHARE_DELTA {
                    out.push(v);
                }
            }
            Verdict::Decided
        }
        /// Hierarchical DRF's QueueOrderFn (only with `enableHierarchy`).
        fn queue_order(&self, _s: &State<'a>, l: QueueIdx, r: QueueIdx) -> Ordering {
            let Some(tree) = self.tree.as_ref() else { return Ordering::Equal };
            let c = tree.compare(l, r);
            if c < 0.0 {
                Ordering::Less
            } else if c > 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        /// Hierarchical DRF's ReclaimableFn (only with `enableHierarchy`): on a copy of the tree
        /// with the reclaimer's request added to its job, each candidate (independently) is a
        /// victim when, with its request taken off its job, the reclaimer's queue still orders
        /// before the candidate's.
        fn reclaimable(&self, s: &State<'a>, reclaimer: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            let Some(tree) = self.tree.as_ref() else { return Verdict::Abstain };
            let dims = self.dims;
            let Some(lj) = s.tasks.job_of(reclaimer) else { return Verdict::Decided };
            let lq = QueueIdx(s.jobs.queue[lj.ix()]);
            let mut t = tree.clone();
            let mut lalloc = self.allocated[lj.ix() * dims..(lj.ix() + 1) * dims].to_vec();
            let req = s.tasks.req(reclaimer, dims);
            for d in 0..dims {
                lalloc[d] += req[d] as f64;
            }
            t.add_total(req, 1.0);
            t.set_job(lj, &lalloc, &self.total);
            for &v in candidates {
                let Some(rj) = s.tasks.job_of(v) else { continue };
                let rq = QueueIdx(s.jobs.queue[rj.ix()]);
                let vreq = s.tasks.req(v, dims);
                let mut ralloc = self.allocated[rj.ix() * dims..(rj.ix() + 1) * dims].to_vec();
                for d in 0..dims {
                    ralloc[d] -= vreq[d] as f64;
                }
                t.add_total(vreq, -1.0);
                t.set_job(rj, &ralloc, &self.total);
                let ret = t.compare(lq, rq);
                t.add_total(vreq, 1.0);
                t.set_job(rj, &self.allocated[rj.ix() * dims..(rj.ix() + 1) * dims], &self.total);
                if ret < 0.0 {
                    out.push(v);
                }
            }
            Verdict::Decided
        }
        fn on_allocate(&mut self, s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            self.change(s, t, 1.0);
        }
        fn on_deallocate(&mut self, s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            self.change(s, t, -1.0);
        }
    }
}

impl Drf {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::JobOrder.bit() | F::QueueOrder.bit() | F::Preemptable.bit() | F::Reclaimable.bit() | F::EventHandler.bit()
    };
}
