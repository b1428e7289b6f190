//! `drf` (volcano-behaviour.md §3): dominant resource fairness between jobs. A job's share is
//! max over resources (with a non-zero cluster total) of allocated / total; lower share first.
//! Shares follow allocations through the session's event handlers. Fair-share arithmetic is in
//! `f64`, as Volcano's. Preemptable: a victim only when the preemptor job's share with the
//! preemptor's request added stays at or below the victim job's share with the victims taken so
//! far removed (within 1e-6).

use super::Verdict;
use crate::session::tables::{JobIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

/// Volcano drf's `shareDelta`.
const SHARE_DELTA: f64 = 0.000001;

/// The drf plugin: per-job allocated vectors and shares.
pub struct Drf {
    dims: usize,
    total: Vec<f64>,
    allocated: Vec<f64>,
    share: Vec<f64>,
}

impl Drf {
    /// Session open: allocated = Σ Resreq of each job's allocated-status tasks.
    pub fn open(s: &State<'_>) -> Self {
        let dims = s.dims;
        let mut d = Drf {
            dims,
            total: s.total.iter().map(|&v| v as f64).collect(),
            allocated: vec![0.0; s.jobs.len * dims],
            share: vec![0.0; s.jobs.len],
        };
        for j in 0..s.jobs.len {
            for t in s.jobs.tasks(JobIdx(j as u32)) {
                if s.tasks.status[t.ix()].allocated() {
                    for (k, &v) in s.tasks.req(t, dims).iter().enumerate() {
                        d.allocated[j * dims + k] += v as f64;
                    }
                }
            }
            d.update(j);
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
        for (k, &v) in s.tasks.req(t, self.dims).iter().enumerate() {
            self.allocated[j.ix() * self.dims + k] += sign * v as f64;
        }
        self.update(j.ix());
    }
}

plugin_impl! {
    impl<'a> for Drf {
        fn name(&self) -> &'static str {
            "drf"
        }
        fn job_order(&self, _s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
            self.share[l.ix()].partial_cmp(&self.share[r.ix()]).unwrap_or(Ordering::Equal)
        }
        fn preemptable(&self, s: &State<'a>, preemptor: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
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
        fn on_allocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
            self.change(s, t, 1.0);
        }
        fn on_deallocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
            self.change(s, t, -1.0);
        }
    }
}
