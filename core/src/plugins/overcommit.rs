//! `overcommit` (volcano-behaviour.md §3): admits a PodGroup at enqueue only while the
//! `minResources` of admitted PodGroups fit in `total × overcommit-factor − used`.

use super::Vote;
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::model::PodGroupPhase;
use crate::resource::Resource;
use crate::session::tables::{JobIdx, NodeIdx, TaskStatus};
use crate::session::State;

/// The `arguments` keys overcommit reads.
pub const ARGS: &[ArgSpec] = &[ArgSpec::new("overcommit-factor", ArgKind::Float, "1.2").min(1.0, "1.2 is used, as Volcano does")];

/// Default `overcommit-factor`.
pub const DEFAULT_FACTOR: f64 = 1.2;

/// The overcommit plugin: cluster idle (overcommitted) and the inqueue reservation.
pub struct Overcommit {
    idle: Vec<f64>,
    inqueue: Vec<f64>,
}

/// Volcano `GetInqueueResource`: the part of `minResources` not yet allocated.
pub fn unallocated_min(s: &State<'_>, j: JobIdx, min: &Resource) -> Vec<f64> {
    let mut alloc = vec![0i64; s.dims];
    for t in s.jobs.tasks(j) {
        if s.tasks.status()[t.ix()].allocated() {
            for (d, v) in s.tasks.req(t, s.dims).iter().enumerate() {
                alloc[d] = alloc[d].saturating_add(*v);
            }
        }
    }
    (0..s.dims).map(|d| (min.get(d) - alloc[d]).max(0) as f64).collect()
}

/// Tasks of `j` that count as allocated (Volcano `CalculateAllocatedTaskNum`).
pub fn allocated_tasks(s: &State<'_>, j: JobIdx) -> i32 {
    s.jobs.tasks(j).filter(|&t| s.tasks.status()[t.ix()].allocated() || s.tasks.status()[t.ix()] == TaskStatus::Succeeded).count()
        as i32
}

impl Overcommit {
    /// Session open.
    pub fn open(s: &State<'_>, args: &Arguments) -> Self {
        let mut factor = args.float("overcommit-factor").unwrap_or(DEFAULT_FACTOR);
        if factor < 1.0 {
            factor = DEFAULT_FACTOR;
        }
        let dims = s.dims;
        let mut idle: Vec<f64> = s.total.iter().map(|&v| v as f64 * factor).collect();
        for (d, slot) in idle.iter_mut().enumerate() {
            *slot -= (0..s.nodes.len).map(|n| s.used(NodeIdx(n as u32), d) as f64).sum::<f64>();
        }
        let mut inqueue = vec![0.0; dims];
        for j in (0..s.jobs.len).map(|i| JobIdx(i as u32)) {
            let Some(min) = s.jobs.rec[j.ix()].min_resources.as_ref() else {
                continue;
            };
            match s.jobs.phase()[j.ix()] {
                PodGroupPhase::Inqueue => {
                    for (d, x) in inqueue.iter_mut().enumerate() {
                        *x += min.get(d) as f64;
                    }
                }
                PodGroupPhase::Running if allocated_tasks(s, j) >= s.jobs.min_available[j.ix()] => {
                    for (d, v) in unallocated_min(s, j, min).into_iter().enumerate() {
                        inqueue[d] += v;
                    }
                }
                _ => {}
            }
        }
        Overcommit { idle, inqueue }
    }
}

plugin_impl! {
    impl<'a> for Overcommit {
        fn name(&self) -> &'static str {
            "overcommit"
        }
        fn job_enqueueable(&self, s: &State<'a>, j: JobIdx) -> Vote {
            let Some(min) = s.jobs.rec[j.ix()].min_resources.as_ref() else {
                return Vote::Permit;
            };
            let fits = (0..s.dims).filter(|&d| min.get(d) > 0).all(|d| self.inqueue[d] + min.get(d) as f64 <= self.idle[d] + 0.1);
            if fits {
                Vote::Permit
            } else {
                Vote::Reject
            }
        }
        fn job_enqueued(&mut self, s: &State<'a>, j: JobIdx) {
            if let Some(min) = s.jobs.rec[j.ix()].min_resources.as_ref() {
                for (d, x) in self.inqueue.iter_mut().enumerate() {
                    *x += min.get(d) as f64;
                }
            }
        }
    }
}

impl Overcommit {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::JobEnqueueable.bit() | F::JobEnqueued.bit()
    };
}
