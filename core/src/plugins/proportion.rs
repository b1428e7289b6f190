//! `proportion` (volcano-behaviour.md §3): weight-based fair share between queues. Each queue
//! with jobs gets a `deserved` share by water-filling the cluster total by weight, capped by its
//! real capability and its request and raised to its guarantee. Queue order, overused,
//! allocatable, preemptive, reclaimable and enqueueable follow from deserved. Fair-share
//! arithmetic is in `f64`, as Volcano's, with its 0.1 epsilon.

use super::{Verdict, Vote};
use crate::decision::QueueShare;
use crate::model::QueueState;
use crate::resource::ResourceList;
use crate::session::notes::CloseNotes;
use crate::session::queues::{QueueAccounts, UNLIMITED};
use crate::session::tables::{JobIdx, QueueIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

const EPS: f64 = 0.1;

/// The proportion plugin: the water-filled `deserved` of each queue with jobs. Allocated,
/// request, inqueue, elastic, guarantee and real capability are read from the session's queue
/// table ([`crate::session::queues`]).
pub struct Proportion {
    dims: usize,
    /// Per queue, dense over dimensions: deserved (row-major).
    deserved: Vec<f64>,
}

fn le(a: f64, b: f64) -> bool {
    a < b || (a - b).abs() < EPS
}

/// A queue-table amount as `f64`, [`UNLIMITED`] as ∞.
#[inline]
fn amount(v: i64) -> f64 {
    if v == UNLIMITED {
        f64::INFINITY
    } else {
        v as f64
    }
}

impl Proportion {
    /// Session open: the deserved water-filling over the queues with jobs.
    pub fn open(s: &State<'_>) -> Self {
        let mut p = Proportion { dims: s.dims, deserved: vec![0.0; s.queues.len * s.dims] };
        let total: Vec<f64> = s.total.iter().map(|&v| v as f64).collect();
        p.water_fill(s, &total);
        p
    }

    fn water_fill(&mut self, s: &State<'_>, total: &[f64]) {
        let dims = self.dims;
        let a = &s.queues.acct;
        let weight = |q: usize| s.queues.rec[q].spec.weight.max(0) as f64;
        let mut remaining = total.to_vec();
        let mut met = vec![false; s.queues.len];
        loop {
            // Any weight as given (0 included: remaining × 0 / Σw per round, so deserved ends at
            // the guarantee); negative counts as 0 so Σw cannot shrink.
            let total_weight: f64 = (0..s.queues.len).filter(|&q| a.has_jobs[q] && !met[q]).map(weight).sum();
            if total_weight == 0.0 {
                break;
            }
            let old_remaining = remaining.clone();
            let mut increased = vec![0.0; dims];
            let mut decreased = vec![0.0; dims];
            for q in 0..s.queues.len {
                if !a.has_jobs[q] || met[q] {
                    continue;
                }
                let row = q * dims;
                let old: Vec<f64> = self.deserved[row..row + dims].to_vec();
                let w = weight(q);
                for d in 0..dims {
                    let mut v = self.deserved[row + d] + remaining[d] * w / total_weight;
                    v = v.min(amount(a.real_capability[row + d]));
                    v = v.min(a.request[row + d] as f64);
                    v = v.max(a.guarantee[row + d] as f64);
                    self.deserved[row + d] = v;
                }
                let request_met = (0..dims).all(|d| le(a.request[row + d] as f64, self.deserved[row + d]));
                let unchanged = (0..dims).all(|d| (self.deserved[row + d] - old[d]).abs() < EPS);
                if request_met || unchanged {
                    met[q] = true;
                }
                for d in 0..dims {
                    let diff = self.deserved[row + d] - old[d];
                    if diff > 0.0 {
                        increased[d] += diff;
                    } else {
                        decreased[d] -= diff;
                    }
                }
            }
            for d in 0..dims {
                remaining[d] = remaining[d] - increased[d] + decreased[d];
            }
            let empty = remaining.iter().enumerate().all(|(d, &v)| d == crate::resource::PODS || v < EPS);
            if empty || remaining == old_remaining {
                break;
            }
        }
    }

    /// The deserved share of queue `q`, dense over dimensions.
    pub fn deserved(&self, q: QueueIdx) -> &[f64] {
        &self.deserved[q.ix() * self.dims..(q.ix() + 1) * self.dims]
    }

    /// Whether queue `q` is Open and has room within deserved for task `t`'s request
    /// (`Allocatable` and `Preemptive`): allocated + request ≤ deserved in every dimension the
    /// task requests except `pods`, compared strictly; a queue without jobs always has room.
    fn room_for(&self, s: &State<'_>, q: QueueIdx, t: TaskIdx) -> bool {
        if s.queues.rec[q.ix()].spec.state != QueueState::Open {
            return false;
        }
        if !s.queues.acct.has_jobs[q.ix()] {
            return true;
        }
        let alloc = QueueAccounts::row(s.queues.acct.allocated(), q, self.dims);
        let deserved = self.deserved(q);
        let req = s.tasks.req(t, self.dims);
        (0..self.dims)
            .filter(|&d| req[d] > 0 && d != crate::resource::PODS)
            .all(|d| alloc[d] as f64 + req[d] as f64 <= deserved[d])
    }

    /// The share of queue `q`: max over dimensions with deserved ≥ 0.1 of allocated / deserved.
    pub fn share(&self, s: &State<'_>, q: QueueIdx) -> f64 {
        share(QueueAccounts::row(s.queues.acct.allocated(), q, self.dims), self.deserved(q))
    }
}

/// max over dimensions with deserved ≥ 0.1 of allocated / deserved.
fn share(allocated: &[i64], deserved: &[f64]) -> f64 {
    let mut res = 0.0f64;
    for (&a, &d) in allocated.iter().zip(deserved) {
        if d < EPS {
            continue;
        }
        res = res.max(a as f64 / d);
    }
    res
}

plugin_impl! {
    impl<'a> for Proportion {
        fn name(&self) -> &'static str {
            "proportion"
        }
        fn queue_order(&self, s: &State<'a>, l: QueueIdx, r: QueueIdx) -> Ordering {
            let (lp, rp) = (s.queues.rec[l.ix()].spec.priority, s.queues.rec[r.ix()].spec.priority);
            if lp != rp {
                return rp.cmp(&lp);
            }
            self.share(s, l).partial_cmp(&self.share(s, r)).unwrap_or(Ordering::Equal)
        }
        fn overused(&self, s: &State<'a>, q: QueueIdx) -> bool {
            let alloc = QueueAccounts::row(s.queues.acct.allocated(), q, self.dims);
            s.queues.acct.has_jobs[q.ix()] && self.deserved(q).iter().zip(alloc).all(|(&d, &a)| le(d, a as f64))
        }
        /// Volcano master's `queueAllocatable`: the queue is Open and, in every dimension where the
        /// task requests more than 0 except `pods`, allocated + request ≤ deserved, compared
        /// strictly (no 0.1 tolerance). `pods` still counts in deserved, share and overused.
        fn allocatable(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
            self.room_for(s, q, t)
        }
        /// Volcano proportion's `PreemptiveFn`: the queue is Open and allocated + the task's
        /// request ≤ deserved in every dimension the task requests (as [`Plugin::allocatable`]).
        fn preemptive(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
            self.room_for(s, q, t)
        }
        /// Volcano proportion's `ReclaimableFn`: candidates in order; per victim queue a running
        /// tally starting at its allocated; a candidate is taken (and the tally lowered by its
        /// request) while the tally is not within deserved in every dimension (`pods` aside:
        /// Volcano's task requests carry no pod count).
        fn reclaimable(&self, s: &State<'a>, _reclaimer: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            let dims = self.dims;
            let mut tally: Vec<(u32, Vec<f64>)> = Vec::new();
            for &v in candidates {
                let Some(j) = s.tasks.job_of(v) else { continue };
                let q = s.jobs.queue[j.ix()];
                let active = s.queues.acct.has_jobs[q as usize];
                let deserved = self.deserved(QueueIdx(q));
                let i = match tally.iter().position(|(x, _)| *x == q) {
                    Some(i) => i,
                    None => {
                        let start = if active {
                            QueueAccounts::row(s.queues.acct.allocated(), QueueIdx(q), dims).iter().map(|&v| v as f64).collect()
                        } else {
                            vec![0.0; dims]
                        };
                        tally.push((q, start));
                        tally.len() - 1
                    }
                };
                let alloc = &mut tally[i].1;
                let within = active && (0..dims).all(|d| d == crate::resource::PODS || le(alloc[d], deserved[d]));
                if !within {
                    for (d, &r) in s.tasks.req(v, dims).iter().enumerate() {
                        alloc[d] -= r as f64;
                    }
                    out.push(v);
                }
            }
            Verdict::Decided
        }
        fn job_enqueueable(&self, s: &State<'a>, j: JobIdx) -> Vote {
            let q = s.jobs.queue[j.ix()] as usize;
            if s.queues.rec[q].spec.state != QueueState::Open {
                return Vote::Reject;
            }
            let Some(min) = s.jobs.rec[j.ix()].min_resources.as_ref() else {
                return Vote::Permit;
            };
            let a = &s.queues.acct;
            let row = q * self.dims;
            let ok = (0..self.dims).filter(|&d| min.get(d) > 0).all(|d| {
                let used = a.allocated()[row + d] as f64 + a.inqueue()[row + d] as f64 - a.elastic[row + d] as f64;
                le(min.get(d) as f64 + used, amount(a.real_capability[row + d]))
            });
            if ok {
                Vote::Permit
            } else {
                Vote::Reject
            }
        }
        /// Hands the queues' accounting to the decisions (Volcano's proportion sets the
        /// `volcano_queue_*` gauges here).
        fn on_close(&mut self, s: &State<'a>, notes: &mut CloseNotes) {
            notes.queue_shares = self.queue_shares(s);
        }
    }
}

impl Proportion {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::QueueOrder.bit()
            | F::Overused.bit()
            | F::Allocatable.bit()
            | F::JobEnqueueable.bit()
            | F::Reclaimable.bit()
            | F::Preemptive.bit()
    };
}

impl Proportion {
    /// The accounting of every queue with jobs, in queue order.
    fn queue_shares(&self, s: &State<'_>) -> Vec<QueueShare> {
        let dims = self.dims;
        let list = |v: &mut dyn Iterator<Item = f64>| -> ResourceList {
            v.enumerate().map(|(d, x)| (s.cluster.resources.name(d).to_string(), x.round() as i64)).collect()
        };
        let a = &s.queues.acct;
        (0..s.queues.len)
            .filter(|&q| a.has_jobs[q])
            .map(|q| {
                let qi = QueueIdx(q as u32);
                let allocated = QueueAccounts::row(a.allocated(), qi, dims);
                let request = QueueAccounts::row(a.request, qi, dims);
                let deserved = self.deserved(qi);
                QueueShare {
                    name: s.queues.rec[q].spec.name.clone(),
                    weight: s.queues.rec[q].spec.weight.max(0) as f64,
                    share: share(allocated, deserved),
                    allocated: list(&mut allocated.iter().map(|&v| v as f64)),
                    request: list(&mut request.iter().map(|&v| v as f64)),
                    deserved: list(&mut deserved.iter().copied()),
                    overused: (0..dims).all(|d| le(deserved[d], allocated[d] as f64)),
                    inqueue: list(&mut QueueAccounts::row(a.inqueue(), qi, dims).iter().map(|&v| v as f64)),
                    capability: None,
                    real_capability: None,
                }
            })
            .collect()
    }
}
