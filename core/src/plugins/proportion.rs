//! `proportion` (volcano-behaviour.md §3): weight-based fair share between queues. Each queue
//! with jobs gets a `deserved` share by water-filling the cluster total by weight, capped by its
//! real capability and its request and raised to its guarantee. Queue order, overused,
//! allocatable, preemptive, reclaimable and enqueueable follow from deserved. Fair-share
//! arithmetic is in `f64`, as Volcano's, with its 0.1 epsilon.

use super::overcommit::{allocated_tasks, unallocated_min};
use super::{Verdict, Vote};
use crate::decision::QueueShare;
use crate::model::{PodGroupPhase, QueueState};
use crate::resource::ResourceList;
use crate::session::tables::{JobIdx, QueueIdx, TaskIdx, TaskStatus};
use crate::session::State;
use std::cmp::Ordering;

const EPS: f64 = 0.1;

/// Per-queue attributes (Volcano `queueAttr`), dense over resource dimensions.
#[derive(Clone, Debug, Default)]
pub struct QueueAttr {
    /// Whether the queue has jobs in this session.
    pub active: bool,
    /// Weight.
    pub weight: f64,
    /// Deserved.
    pub deserved: Vec<f64>,
    /// Allocated.
    pub allocated: Vec<f64>,
    /// Request (allocated + pending).
    pub request: Vec<f64>,
    /// Inqueue reservation.
    pub inqueue: Vec<f64>,
    /// Elastic (allocated beyond minResources).
    pub elastic: Vec<f64>,
    /// Guarantee.
    pub guarantee: Vec<f64>,
    /// Real capability (∞ where unlimited).
    pub real_capability: Vec<f64>,
    /// Share.
    pub share: f64,
}

/// The proportion plugin.
pub struct Proportion {
    dims: usize,
    attrs: Vec<QueueAttr>,
}

fn le(a: f64, b: f64) -> bool {
    a < b || (a - b).abs() < EPS
}

impl Proportion {
    /// Session open: queue attributes and the deserved water-filling.
    pub fn open(s: &State<'_>) -> Self {
        let dims = s.dims;
        let total: Vec<f64> = s.total.iter().map(|&v| v as f64).collect();
        let mut total_guarantee = vec![0.0; dims];
        for q in 0..s.queues.len {
            for (d, g) in total_guarantee.iter_mut().enumerate() {
                *g += s.queues.rec[q].guarantee.get(d) as f64;
            }
        }
        let mut attrs = vec![QueueAttr::default(); s.queues.len];
        for j in (0..s.jobs.len).map(|i| JobIdx(i as u32)) {
            let q = s.jobs.queue[j.ix()] as usize;
            let a = &mut attrs[q];
            if !a.active {
                let rec = s.queues.rec[q];
                a.active = true;
                // Any weight as given (0 included: remaining × 0 / Σw per round, so deserved
                // ends at the guarantee); negative counts as 0 so Σw cannot shrink.
                a.weight = rec.spec.weight.max(0) as f64;
                a.deserved = vec![0.0; dims];
                a.allocated = vec![0.0; dims];
                a.request = vec![0.0; dims];
                a.inqueue = vec![0.0; dims];
                a.elastic = vec![0.0; dims];
                a.guarantee = (0..dims).map(|d| rec.guarantee.get(d) as f64).collect();
                // realCapability = (total − Σ guarantees)⁺ + own guarantee, capped by capability.
                a.real_capability = (0..dims).map(|d| (total[d] - total_guarantee[d]).max(0.0) + a.guarantee[d]).collect();
                if let Some(cap) = rec.capability.as_ref() {
                    for d in 0..dims {
                        let c = if cap.has(d) { cap.get(d) as f64 } else { f64::INFINITY };
                        let c = if d < 2 && c <= 0.0 { f64::INFINITY } else { c };
                        a.real_capability[d] = a.real_capability[d].min(c);
                    }
                }
            }
            // Per dimension, in task order (the same additions as Volcano's per-task
            // `Resource.Add`, so the sums are bit-identical), with the sums in registers.
            for d in 0..dims {
                let (mut allocated, mut request) = (a.allocated[d], a.request[d]);
                for t in s.jobs.tasks(j) {
                    let st = s.tasks.status[t.ix()];
                    let r = s.tasks.req(t, dims)[d] as f64;
                    if st.allocated() {
                        allocated += r;
                        request += r;
                    } else if st == TaskStatus::Pending {
                        request += r;
                    }
                }
                a.allocated[d] = allocated;
                a.request[d] = request;
            }
            let min = s.jobs.rec[j.ix()].min_resources.as_ref();
            if s.jobs.phase[j.ix()] == PodGroupPhase::Inqueue {
                if let Some(min) = min {
                    for d in 0..dims {
                        a.inqueue[d] += min.get(d) as f64;
                    }
                }
            }
            if s.jobs.phase[j.ix()] == PodGroupPhase::Running && allocated_tasks(s, j) >= s.jobs.min_available[j.ix()] {
                if let Some(min) = min {
                    for (d, v) in unallocated_min(s, j, min).into_iter().enumerate() {
                        a.inqueue[d] += v;
                    }
                }
            }
            // Elastic: allocated beyond minResources.
            let mut alloc = vec![0i64; dims];
            for t in s.jobs.tasks(j).filter(|&t| s.tasks.status[t.ix()].allocated()) {
                for (d, v) in s.tasks.req(t, dims).iter().enumerate() {
                    alloc[d] = alloc[d].saturating_add(*v);
                }
            }
            for d in 0..dims {
                let m = min.map(|m| m.get(d)).unwrap_or(0);
                a.elastic[d] += (alloc[d] - m).max(0) as f64;
            }
        }
        let mut p = Proportion { dims, attrs };
        p.water_fill(&total);
        p
    }

    fn water_fill(&mut self, total: &[f64]) {
        let dims = self.dims;
        let mut remaining = total.to_vec();
        let mut met = vec![false; self.attrs.len()];
        loop {
            let total_weight: f64 =
                self.attrs.iter().enumerate().filter(|(i, a)| a.active && !met[*i]).map(|(_, a)| a.weight).sum();
            if total_weight == 0.0 {
                break;
            }
            let old_remaining = remaining.clone();
            let mut increased = vec![0.0; dims];
            let mut decreased = vec![0.0; dims];
            for (i, a) in self.attrs.iter_mut().enumerate() {
                if !a.active || met[i] {
                    continue;
                }
                let old = a.deserved.clone();
                for d in 0..dims {
                    let mut v = a.deserved[d] + remaining[d] * a.weight / total_weight;
                    v = v.min(a.real_capability[d]);
                    v = v.min(a.request[d]);
                    v = v.max(a.guarantee[d]);
                    a.deserved[d] = v;
                }
                a.share = share(&a.allocated, &a.deserved);
                let request_met = (0..dims).all(|d| le(a.request[d], a.deserved[d]));
                let unchanged = (0..dims).all(|d| (a.deserved[d] - old[d]).abs() < EPS);
                if request_met || unchanged {
                    met[i] = true;
                }
                for d in 0..dims {
                    let diff = a.deserved[d] - old[d];
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

    /// The attributes of queue `q`.
    pub fn attr(&self, q: QueueIdx) -> &QueueAttr {
        &self.attrs[q.ix()]
    }

    fn change(&mut self, s: &State<'_>, t: TaskIdx, sign: f64) {
        let Some(j) = s.tasks.job_of(t) else { return };
        let a = &mut self.attrs[s.jobs.queue[j.ix()] as usize];
        if !a.active {
            return;
        }
        for (d, &v) in s.tasks.req(t, self.dims).iter().enumerate() {
            a.allocated[d] += sign * v as f64;
        }
        a.share = share(&a.allocated, &a.deserved);
    }
}

/// max over dimensions with deserved ≥ 0.1 of allocated / deserved.
fn share(allocated: &[f64], deserved: &[f64]) -> f64 {
    let mut res = 0.0f64;
    for (a, d) in allocated.iter().zip(deserved) {
        if *d < EPS {
            continue;
        }
        res = res.max(a / d);
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
            self.attrs[l.ix()].share.partial_cmp(&self.attrs[r.ix()].share).unwrap_or(Ordering::Equal)
        }
        fn overused(&self, _s: &State<'a>, q: QueueIdx) -> bool {
            let a = &self.attrs[q.ix()];
            a.active && (0..self.dims).all(|d| le(a.deserved[d], a.allocated[d]))
        }
        /// Volcano master's `queueAllocatable`: the queue is Open and, in every dimension where the
        /// task requests more than 0 except `pods`, allocated + request ≤ deserved, compared
        /// strictly (no 0.1 tolerance). `pods` still counts in deserved, share and overused.
        fn allocatable(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
            if s.queues.rec[q.ix()].spec.state != QueueState::Open {
                return false;
            }
            let a = &self.attrs[q.ix()];
            if !a.active {
                return true;
            }
            let req = s.tasks.req(t, self.dims);
            (0..self.dims)
                .filter(|&d| req[d] > 0 && d != crate::resource::PODS)
                .all(|d| a.allocated[d] + req[d] as f64 <= a.deserved[d])
        }
        /// Volcano proportion's `PreemptiveFn`: the queue is Open and allocated + the task's
        /// request ≤ deserved in every dimension the task requests (as [`Plugin::allocatable`]).
        fn preemptive(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
            if s.queues.rec[q.ix()].spec.state != QueueState::Open {
                return false;
            }
            let a = &self.attrs[q.ix()];
            if !a.active {
                return true;
            }
            let req = s.tasks.req(t, self.dims);
            (0..self.dims)
                .filter(|&d| req[d] > 0 && d != crate::resource::PODS)
                .all(|d| a.allocated[d] + req[d] as f64 <= a.deserved[d])
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
                let a = &self.attrs[q as usize];
                let i = match tally.iter().position(|(x, _)| *x == q) {
                    Some(i) => i,
                    None => {
                        let start = if a.active { a.allocated.clone() } else { vec![0.0; dims] };
                        tally.push((q, start));
                        tally.len() - 1
                    }
                };
                let alloc = &mut tally[i].1;
                let within = a.active && (0..dims).all(|d| d == crate::resource::PODS || le(alloc[d], a.deserved[d]));
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
            let a = &self.attrs[q];
            let ok = (0..self.dims)
                .filter(|&d| min.get(d) > 0)
                .all(|d| le(min.get(d) as f64 + a.allocated[d] + a.inqueue[d] - a.elastic[d], a.real_capability[d]));
            if ok {
                Vote::Permit
            } else {
                Vote::Reject
            }
        }
        fn job_enqueued(&mut self, s: &State<'a>, j: JobIdx) {
            let q = s.jobs.queue[j.ix()] as usize;
            if let Some(min) = s.jobs.rec[j.ix()].min_resources.as_ref() {
                for d in 0..self.dims {
                    self.attrs[q].inqueue[d] += min.get(d) as f64;
                }
            }
        }
        fn on_allocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
            self.change(s, t, 1.0);
        }
        fn on_deallocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
            self.change(s, t, -1.0);
        }
        /// Hands the queues' accounting to the decisions (Volcano's proportion sets the
        /// `volcano_queue_*` gauges here).
        fn on_close(&mut self, s: &mut State<'a>) {
            s.queue_shares = self.queue_shares(s);
        }
    }
}

impl Proportion {
    /// The accounting of every queue with jobs, in queue order.
    fn queue_shares(&self, s: &State<'_>) -> Vec<QueueShare> {
        let list = |v: &[f64]| -> ResourceList {
            (0..self.dims).map(|d| (s.cluster.resources.name(d).to_string(), v[d].round() as i64)).collect()
        };
        self.attrs
            .iter()
            .enumerate()
            .filter(|(_, a)| a.active)
            .map(|(q, a)| QueueShare {
                name: s.queues.rec[q].spec.name.clone(),
                weight: a.weight,
                share: a.share,
                allocated: list(&a.allocated),
                request: list(&a.request),
                deserved: list(&a.deserved),
                overused: (0..self.dims).all(|d| le(a.deserved[d], a.allocated[d])),
            })
            .collect()
    }
}
