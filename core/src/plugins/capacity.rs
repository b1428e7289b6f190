//! `capacity` (volcano-behaviour.md §3 "capacity", Volcano `plugins/capacity/capacity.go`):
//! queues with an explicit `deserved`, `guarantee` and `capability`, flat or as a tree
//! (`enableHierarchy: true`, `spec.parent`). Limits are in [`super::capacity_attrs`]; allocated,
//! request, inqueue and elastic come from the session's queue table (with hierarchy, a queue's
//! amounts include its descendants').
//!
//! Registers QueueOrder, Allocatable, JobEnqueueable, Preemptive, Reclaimable,
//! UnifiedEvictable (gangpreempt/gangreclaim) and (with hierarchy) VictimQueueOrder. Like Volcano's, it registers no Overused function: a queue
//! beyond its deserved share is only reported (share > 1), and reclaim's victims are chosen by
//! [`Plugin::reclaimable`].
//!
//! With hierarchy, a job in a queue that has children, a missing `root` queue, a missing parent
//! or a cycle make the plugin refuse everything (no allocation, no enqueue, no reclaim), as
//! Volcano's `readyToSchedule = false` does.
//!
//! Comparisons follow Volcano's resource helpers in integers: `pods` is never compared; a
//! queue limit check looks only at the dimensions the task (or `minResources`) requests.
//! With the feature gate `SchedulingGatesQueueAdmission` (off by default), the queue's own
//! Allocatable check counts the queue-allocation-gate reservation
//! ([`crate::session::gate_reserve`]); the reservation is made by allocate when it admits an
//! opted-in pod (Volcano makes it inside AllocatableFn, so also for preempt's and reclaim's
//! checks; Basalt only for allocate's). Not modelled: DRA device-class quotas
//! (`capacity.DynamicResourceAllocationEnable`, accepted and ignored).

use super::capacity_attrs::Attrs;
use super::{EvictionKind, Verdict, Vote};
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::decision::QueueShare;
use crate::model::QueueState;
use crate::resource::ResourceList;
use crate::resource::PODS;
use crate::session::notes::CloseNotes;
use crate::session::queues::QueueAccounts;
use crate::session::queues::UNLIMITED;
use crate::session::tables::{JobIdx, QueueIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

/// The `arguments` keys capacity reads.
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("ancestorReclaimLevel", ArgKind::Int, "0").min(0.0, "0 is used, as Volcano does"),
    ArgSpec::new("capacity.DynamicResourceAllocationEnable", ArgKind::Bool, "false")
        .ignored("Basalt has no dynamic resource allocation"),
    ArgSpec::new("capacity.DRAConsumableCapacityEnable", ArgKind::Bool, "false")
        .ignored("Basalt has no dynamic resource allocation"),
];

/// The capacity plugin.
pub struct Capacity {
    dims: usize,
    hierarchy: bool,
    /// Volcano `readyToSchedule`: false when the hierarchy is unusable.
    ready: bool,
    ancestor_reclaim_level: usize,
    attrs: Attrs,
}

impl Capacity {
    /// Session open (Volcano `OnSessionOpen`): `hierarchy` is the plugin's `enableHierarchy`.
    pub fn open(s: &State<'_>, args: &Arguments, hierarchy: bool) -> Self {
        let level = args.int("ancestorReclaimLevel").unwrap_or(0).max(0) as usize;
        let a = &s.queues.acct;
        let mut ready = true;
        let attrs = if hierarchy {
            let leaf_jobs_only = (0..s.jobs.len).all(|j| a.leaf[s.jobs.queue[j] as usize]);
            ready = a.tree_error.is_none() && a.root.is_some() && leaf_jobs_only;
            Attrs::hierarchical(s)
        } else {
            Attrs::flat(s)
        };
        Capacity { dims: s.dims, hierarchy, ready, ancestor_reclaim_level: level, attrs }
    }

    /// Allocated of `q` as the plugin counts it: with hierarchy its subtree's.
    fn allocated<'s>(&self, s: &'s State<'_>, q: QueueIdx) -> &'s [i64] {
        let a = &s.queues.acct;
        QueueAccounts::row(if self.hierarchy { a.tree_allocated() } else { a.allocated() }, q, self.dims)
    }

    /// The queue's share (allocated / deserved, 1 for an empty deserved).
    pub fn share(&self, s: &State<'_>, q: QueueIdx) -> f64 {
        self.attrs.share(q, self.allocated(s, q))
    }

    /// The effective deserved of `q`, dense.
    pub fn deserved(&self, q: QueueIdx) -> &[i64] {
        self.attrs.row(&self.attrs.deserved, q)
    }

    /// The real capability of `q`, dense ([`crate::session::queues::UNLIMITED`] = none).
    pub fn real_capability(&self, q: QueueIdx) -> &[i64] {
        self.attrs.row(&self.attrs.real_capability, q)
    }

    /// Volcano `compareShareWithDeserved`: lower share first; equal shares put a queue with a
    /// deserved before a best-effort one.
    fn compare_share(&self, s: &State<'_>, l: QueueIdx, r: QueueIdx) -> Ordering {
        let (ls, rs) = (self.share(s, l), self.share(s, r));
        if ls == rs {
            let (lh, rh) = (!self.attrs.deserved_empty(l), !self.attrs.deserved_empty(r));
            return rh.cmp(&lh);
        }
        ls.partial_cmp(&rs).unwrap_or(Ordering::Equal)
    }

    /// The queue and its ancestors, the queue first (only the queue without hierarchy).
    fn chain<'s>(&self, s: &'s State<'_>, q: QueueIdx) -> impl Iterator<Item = QueueIdx> + 's {
        let hier = self.hierarchy;
        std::iter::once(q).chain(s.queues.acct.ancestors(q).filter(move |_| hier))
    }

    /// Ancestors root first (Volcano `attr.ancestors`).
    fn ancestors_root_first(&self, s: &State<'_>, q: QueueIdx) -> Vec<QueueIdx> {
        let mut v: Vec<QueueIdx> = s.queues.acct.ancestors(q).collect();
        v.reverse();
        v
    }

    /// Volcano `getQueueLevel`: index (root first) of the deepest ancestor the two queues'
    /// ancestor lists share as a common prefix.
    fn queue_level(&self, s: &State<'_>, l: QueueIdx, r: QueueIdx) -> usize {
        let (la, ra) = (self.ancestors_root_first(s, l), self.ancestors_root_first(s, r));
        let mut level = 0;
        for i in 0..la.len().min(ra.len()) {
            if la[i] == ra[i] {
                level = i;
            } else {
                return level;
            }
        }
        level
    }

    /// Volcano `queueAncestorAtDepth`: the ancestor `depth` levels up (1 = parent).
    fn ancestor_at(&self, s: &State<'_>, q: QueueIdx, depth: usize) -> Option<QueueIdx> {
        if depth == 0 {
            return None;
        }
        s.queues.acct.ancestors(q).nth(depth - 1)
    }

    fn is_root(&self, s: &State<'_>, q: QueueIdx) -> bool {
        s.queues.acct.root == Some(q)
    }

    /// Volcano `sharesAnyNonRootAncestorWithinLevel`.
    fn shares_ancestor(&self, s: &State<'_>, a: QueueIdx, b: QueueIdx) -> bool {
        let l = self.ancestor_reclaim_level;
        let aa: Vec<QueueIdx> = (1..=l).filter_map(|d| self.ancestor_at(s, a, d)).collect();
        (1..=l).filter_map(|d| self.ancestor_at(s, b, d)).any(|x| !self.is_root(s, x) && aa.contains(&x))
    }

    /// Volcano `getReclaimeeAncestorToCheck`: `Some(ancestor)` of the reclaimee's queue at
    /// `level` when it must be checked.
    fn ancestor_to_check(&self, s: &State<'_>, reclaimer: QueueIdx, reclaimee: QueueIdx, level: usize) -> Option<QueueIdx> {
        let theirs = self.ancestor_at(s, reclaimee, level)?;
        if self.is_root(s, theirs) {
            return None;
        }
        if self.ancestor_at(s, reclaimer, level) == Some(theirs) {
            return None;
        }
        Some(theirs)
    }

    /// `used + req ≤ limit` in every dimension `req` requests (Volcano
    /// `LessEqualWithDimensionAndResourcesName`, `pods` ignored).
    fn within(used: &[i64], req: &[i64], limit: &[i64]) -> bool {
        (0..req.len()).filter(|&d| d != PODS && req[d] > 0).all(|d| used[d].saturating_add(req[d]) <= limit[d])
    }

    /// Volcano `isImmediateVictim` negated (`hasRelevantDeserved`): the task requests some
    /// dimension the deserved names.
    fn relevant(req: &[i64], deserved: &[i64]) -> bool {
        (0..req.len()).any(|d| d != PODS && req[d] > 0 && deserved[d] > 0)
    }

    /// Volcano `GreaterPartlyWithRelevantDimensions`: allocated exceeds deserved on a dimension
    /// the task requests and the deserved names.
    fn exceeds(allocated: &[i64], deserved: &[i64], req: &[i64]) -> bool {
        (0..req.len()).any(|d| d != PODS && req[d] > 0 && deserved[d] > 0 && allocated[d] > deserved[d])
    }

    /// Volcano `checkGuaranteeConstraint`: guarantee ≤ allocated − request (cpu and memory
    /// always, scalars the guarantee names).
    fn keeps_guarantee(allocated: &[i64], req: &[i64], guarantee: &[i64]) -> bool {
        (0..req.len()).filter(|&d| d != PODS).all(|d| {
            let named = d == crate::resource::CPU || d == crate::resource::MEMORY || guarantee[d] > 0;
            !named || guarantee[d] <= allocated[d] - req[d]
        })
    }

    /// Volcano `LessEqualPartlyWithDimensionZeroFiltered(deserved, req)` on `allocated + req`:
    /// some requested dimension stays within deserved.
    fn partly_within(allocated: &[i64], req: &[i64], deserved: &[i64]) -> bool {
        (0..req.len()).any(|d| d != PODS && req[d] > 0 && allocated[d].saturating_add(req[d]) <= deserved[d])
    }

    /// Volcano `jobEnqueueable` on one queue of the chain: minResources + allocated + inqueue −
    /// elastic within the real capability on the dimensions minResources names.
    fn enqueueable_on(&self, s: &State<'_>, q: QueueIdx, min: &[i64]) -> bool {
        let a = &s.queues.acct;
        let (alloc, inq, el): (&[i64], &[i64], &[i64]) = if self.hierarchy {
            (a.tree_allocated(), a.tree_inqueue(), a.tree_elastic)
        } else {
            (a.allocated(), a.inqueue(), a.elastic)
        };
        let row = q.ix() * self.dims;
        let cap = self.real_capability(q);
        (0..self.dims).filter(|&d| d != PODS && min[d] > 0).all(|d| {
            let used = alloc[row + d].saturating_add(inq[row + d]).saturating_sub(el[row + d]);
            min[d].saturating_add(used) <= cap[d]
        })
    }
}

impl Capacity {
    /// The accounting of every queue with jobs, in queue order, as Volcano's capacity records
    /// its `volcano_queue_*` gauges (deserved, allocated, request, capacity when
    /// `spec.capability` is set, real capacity; overused = share > 1 at close). Amounts are the
    /// plugin's own: with hierarchy a queue's include its descendants'.
    fn queue_shares(&self, s: &State<'_>) -> Vec<QueueShare> {
        let dims = self.dims;
        let a = &s.queues.acct;
        let name = |d: usize| s.cluster.resources.name(d).to_string();
        let dense = |row: &[i64]| -> ResourceList { row.iter().enumerate().map(|(d, &v)| (name(d), v)).collect() };
        let tree =
            |col: &[i64], own: &[i64], q: QueueIdx| dense(QueueAccounts::row(if self.hierarchy { col } else { own }, q, dims));
        (0..s.queues.len)
            .filter(|&q| a.has_jobs[q])
            .map(|q| {
                let qi = QueueIdx(q as u32);
                let set = a.capability_set[q];
                let capability = (set != 0).then(|| {
                    let row = QueueAccounts::row(a.capability, qi, dims);
                    (0..dims).filter(|&d| set & (1 << d) != 0).map(|d| (name(d), row[d])).collect()
                });
                let real = self.real_capability(qi);
                let real_capability = Some((0..dims).filter(|&d| real[d] != UNLIMITED).map(|d| (name(d), real[d])).collect());
                let share = self.share(s, qi);
                QueueShare {
                    name: s.queues.rec[q].spec.name.clone(),
                    weight: s.queues.rec[q].spec.weight.max(0) as f64,
                    share,
                    allocated: dense(self.allocated(s, qi)),
                    request: tree(a.tree_request, a.request, qi),
                    deserved: dense(self.deserved(qi)),
                    overused: share > 1.0,
                    inqueue: tree(a.tree_inqueue(), a.inqueue(), qi),
                    capability,
                    real_capability,
                }
            })
            .collect()
    }
}

plugin_impl! {
    impl<'a> for Capacity {
        fn name(&self) -> &'static str {
            "capacity"
        }
        /// Hands the queues' accounting to the decisions (Volcano's capacity records the
        /// `volcano_queue_*` gauges in its session hooks).
        fn on_close(&mut self, s: &State<'a>, notes: &mut CloseNotes) {
            notes.queue_shares = self.queue_shares(s);
        }
        /// Volcano capacity's QueueOrderFn: `spec.priority` descending, then (with hierarchy) leaf
        /// queues before others and two leaves compared by their ancestors just below the
        /// deepest common one, then share ascending (a queue with a deserved first on a tie).
        fn queue_order(&self, s: &State<'a>, l: QueueIdx, r: QueueIdx) -> Ordering {
            let (lp, rp) = (s.queues.rec[l.ix()].spec.priority, s.queues.rec[r.ix()].spec.priority);
            if lp != rp {
                return rp.cmp(&lp);
            }
            if !self.hierarchy {
                return self.compare_share(s, l, r);
            }
            let a = &s.queues.acct;
            match (a.leaf[l.ix()], a.leaf[r.ix()]) {
                (true, false) => return Ordering::Less,
                (false, true) => return Ordering::Greater,
                (false, false) => return self.compare_share(s, l, r),
                (true, true) => {}
            }
            let level = self.queue_level(s, l, r);
            let (la, ra) = (self.ancestors_root_first(s, l), self.ancestors_root_first(s, r));
            let lq = la.get(level + 1).copied().unwrap_or(l);
            let rq = ra.get(level + 1).copied().unwrap_or(r);
            self.compare_share(s, lq, rq)
        }
        /// Volcano capacity's AllocatableFn: the queue is Open, the plugin is ready, (hierarchy)
        /// the queue is a leaf, and allocated + request ≤ real capability on the requested
        /// dimensions for the queue and every ancestor; with `SchedulingGatesQueueAdmission`, the
        /// queue's own check adds the requests reserved by admitted opted-in pods not yet
        /// allocated ([`crate::session::gate_reserve`]).
        fn allocatable(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
            if s.queues.rec[q.ix()].spec.state != QueueState::Open || !self.ready {
                return false;
            }
            if self.hierarchy && !s.queues.acct.leaf[q.ix()] {
                return false;
            }
            let req = s.tasks.req(t, self.dims);
            if let Some(reserved) = s.gate_reserve.reserved(q) {
                // Volcano `queueAllocatableWithReserved`: the queue's own gate reservation counts
                // (the candidate's own share once, as its request).
                let own = s.gate_reserve.holds(t, q);
                let (alloc, limit) = (self.allocated(s, q), self.real_capability(q));
                let fits = (0..req.len()).filter(|&d| d != PODS && req[d] > 0).all(|d| {
                    let held = if own { reserved[d].saturating_sub(req[d]) } else { reserved[d] };
                    alloc[d].saturating_add(held).saturating_add(req[d]) <= limit[d]
                });
                if !fits {
                    return false;
                }
            }
            self.chain(s, q).all(|x| Self::within(self.allocated(s, x), req, self.real_capability(x)))
        }
        /// Volcano capacity's JobEnqueueableFn: Reject when not ready, (hierarchy) not a leaf or
        /// the queue is not Open; Permit without minResources; else Permit only when
        /// minResources + allocated + inqueue − elastic ≤ real capability for the queue and every
        /// ancestor (the enqueue action records "queue resource quota insufficient").
        fn job_enqueueable(&self, s: &State<'a>, j: JobIdx) -> Vote {
            let q = QueueIdx(s.jobs.queue[j.ix()]);
            if !self.ready || (self.hierarchy && !s.queues.acct.leaf[q.ix()]) {
                return Vote::Reject;
            }
            if s.queues.rec[q.ix()].spec.state != QueueState::Open {
                return Vote::Reject;
            }
            let Some(min) = s.jobs.rec[j.ix()].min_resources.as_ref() else {
                return Vote::Permit;
            };
            let min: Vec<i64> = (0..self.dims).map(|d| min.get(d)).collect();
            if self.chain(s, q).all(|x| self.enqueueable_on(s, x, &min)) {
                Vote::Permit
            } else {
                Vote::Reject
            }
        }
        /// Volcano capacity's PreemptiveFn (reclaim): the plugin is ready, the queue is Open,
        /// allocated + request ≤ real capability on the requested dimensions, and some requested
        /// dimension stays within deserved for the queue or (hierarchy, `ancestorReclaimLevel` >
        /// 0) for a non-root ancestor up to that many levels.
        fn preemptive(&self, s: &State<'a>, q: QueueIdx, t: TaskIdx) -> bool {
            if !self.ready || s.queues.rec[q.ix()].spec.state != QueueState::Open {
                return false;
            }
            let req = s.tasks.req(t, self.dims);
            let alloc = self.allocated(s, q);
            if !Self::within(alloc, req, self.real_capability(q)) {
                return false;
            }
            if Self::partly_within(alloc, req, self.deserved(q)) {
                return true;
            }
            if self.hierarchy && self.ancestor_reclaim_level > 0 {
                for level in 1..=self.ancestor_reclaim_level {
                    let Some(anc) = self.ancestor_at(s, q, level) else { continue };
                    if self.is_root(s, anc) {
                        continue;
                    }
                    if Self::partly_within(self.allocated(s, anc), req, self.deserved(anc)) {
                        return true;
                    }
                }
            }
            false
        }
        /// Volcano capacity's ReclaimableFn, over `candidates` in the order given: skip a
        /// candidate sharing no requested dimension with the reclaimer, or whose eviction would
        /// take its queue below its guarantee; take it when its queue's deserved names none of its
        /// requested dimensions (unless, with `ancestorReclaimLevel`, both queues share a non-root
        /// ancestor in range and the reclaimer's deserved names none of its own) or the queue's
        /// running allocated tally exceeds deserved on one of them; with hierarchy and
        /// `ancestorReclaimLevel` > 0, every ancestor of the victim's queue in range that the
        /// reclaimer's queue does not share must also be over its deserved. Tallies start at the
        /// queues' allocated and drop by each victim's request. Not ready ⇒ no victim at all.
        fn reclaimable(&self, s: &State<'a>, reclaimer: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            if !self.ready {
                return Verdict::Decided;
            }
            let Some(rj) = s.tasks.job_of(reclaimer) else { return Verdict::Decided };
            let rq = QueueIdx(s.jobs.queue[rj.ix()]);
            let dims = self.dims;
            let want = s.tasks.req(reclaimer, dims);
            let mut tally: Vec<(QueueIdx, Vec<i64>)> = Vec::new();
            fn slot(tally: &mut Vec<(QueueIdx, Vec<i64>)>, q: QueueIdx, start: &[i64]) -> usize {
                match tally.iter().position(|(x, _)| *x == q) {
                    Some(i) => i,
                    None => {
                        tally.push((q, start.to_vec()));
                        tally.len() - 1
                    }
                }
            }
            let level = if self.hierarchy { self.ancestor_reclaim_level } else { 0 };
            for &v in candidates {
                let Some(j) = s.tasks.job_of(v) else { continue };
                let q = QueueIdx(s.jobs.queue[j.ix()]);
                let req = s.tasks.req(v, dims);
                if !(0..dims).any(|d| d != PODS && req[d] > 0 && want[d] > 0) {
                    continue;
                }
                let qi = slot(&mut tally, q, self.allocated(s, q));
                if !Self::keeps_guarantee(&tally[qi].1, req, self.attrs.row(&self.attrs.guarantee, q)) {
                    continue;
                }
                let deserved = self.deserved(q);
                if !Self::relevant(req, deserved) {
                    if level > 0 && self.shares_ancestor(s, rq, q) && !Self::relevant(want, self.deserved(rq)) {
                        continue;
                    }
                } else if !Self::exceeds(&tally[qi].1, deserved, req) {
                    continue;
                }
                let mut checked: Vec<usize> = Vec::new();
                let mut eligible = true;
                for l in 1..=level {
                    let Some(anc) = self.ancestor_to_check(s, rq, q, l) else { continue };
                    let ai = slot(&mut tally, anc, self.allocated(s, anc));
                    checked.push(ai);
                    let ad = self.deserved(anc);
                    if !Self::relevant(req, ad) {
                        continue;
                    }
                    if !Self::exceeds(&tally[ai].1, ad, req) {
                        eligible = false;
                        break;
                    }
                }
                if !eligible {
                    continue;
                }
                checked.push(qi);
                checked.sort_unstable();
                checked.dedup();
                for i in checked {
                    for d in 0..dims {
                        tally[i].1[d] -= req[d];
                    }
                }
                out.push(v);
            }
            Verdict::Decided
        }
        /// Volcano capacity's `UnifiedEvictableFn`: gangpreempt may take every candidate;
        /// gangreclaim, over `candidates` in order, a task whose eviction keeps its queue at its
        /// guarantee and whose queue's deserved names none of its requested dimensions or is
        /// exceeded on one of them (tallies start at the queues' allocated and drop by each
        /// victim's request). Not ready ⇒ no victim. Basalt checks the victim's own queue only,
        /// not its ancestors with `ancestorReclaimLevel`.
        fn unified_evictable(
            &self,
            s: &State<'a>,
            kind: EvictionKind,
            _job: JobIdx,
            candidates: &[TaskIdx],
            out: &mut Vec<TaskIdx>,
        ) -> Verdict {
            if kind == EvictionKind::GangPreempt {
                out.extend_from_slice(candidates);
                return Verdict::Decided;
            }
            if !self.ready {
                return Verdict::Decided;
            }
            let dims = self.dims;
            let mut tally: Vec<(QueueIdx, Vec<i64>)> = Vec::new();
            for &v in candidates {
                let Some(j) = s.tasks.job_of(v) else { continue };
                let q = QueueIdx(s.jobs.queue[j.ix()]);
                let req = s.tasks.req(v, dims);
                let qi = match tally.iter().position(|(x, _)| *x == q) {
                    Some(i) => i,
                    None => {
                        tally.push((q, self.allocated(s, q).to_vec()));
                        tally.len() - 1
                    }
                };
                if !Self::keeps_guarantee(&tally[qi].1, req, self.attrs.row(&self.attrs.guarantee, q)) {
                    continue;
                }
                let deserved = self.deserved(q);
                if Self::relevant(req, deserved) && !Self::exceeds(&tally[qi].1, deserved, req) {
                    continue;
                }
                for d in 0..dims {
                    tally[qi].1[d] -= req[d];
                }
                out.push(v);
            }
            Verdict::Decided
        }
        /// Volcano capacity's VictimQueueOrderFn (hierarchy only): the queue sharing the deeper
        /// common ancestor with the reclaimer's queue gives victims first.
        fn victim_queue_order(&self, s: &State<'a>, l: QueueIdx, r: QueueIdx, preemptor_queue: QueueIdx) -> Ordering {
            if !self.hierarchy {
                return Ordering::Equal;
            }
            let (ll, rl) = (self.queue_level(s, l, preemptor_queue), self.queue_level(s, r, preemptor_queue));
            rl.cmp(&ll)
        }
    }
}

impl Capacity {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::QueueOrder.bit()
            | F::Allocatable.bit()
            | F::JobEnqueueable.bit()
            | F::Reclaimable.bit()
            | F::Preemptive.bit()
            | F::VictimQueueOrder.bit()
            | F::UnifiedEvictable.bit()
    };
}
