//! Queue accounting shared by the queue plugins (`proportion`, `capacity`, `drf` with
//! `enableHierarchy`): the per-queue resource columns of [`QueueTable`] and the queue tree from
//! `spec.parent` (volcano-behaviour.md §3, "proportion" and "capacity").
//!
//! Built once per session from the jobs' task statuses, then kept by the session's allocation
//! events in one place ([`State::queue_allocate`], [`State::queue_deallocate`], called by
//! [`super::Plugins::on_allocate`] / [`super::Plugins::on_deallocate`] for every Statement
//! Allocate, Pipeline, Evict and Discard) and by enqueue ([`State::queue_enqueued`]). Plugins read
//! the columns; none keeps a private copy of allocated, request, inqueue or elastic.
//!
//! Columns are row-major (`q * dims + d`), in the resource units of [`crate::resource`].
//! "Unlimited" is [`UNLIMITED`].

use super::tables::*;
use super::State;
use crate::model::PodGroupPhase;
use crate::resource::{CPU, MEMORY};
use bumpalo::Bump;

/// An unlimited amount in [`QueueTable::capability`] and [`QueueTable::real_capability`].
pub const UNLIMITED: i64 = i64::MAX;

/// Volcano's root queue name (`capacity`'s `rootQueueID`).
pub const ROOT: &str = "root";

/// Queue resource columns and the queue tree, cut from the session arena (empty by default,
/// before the session's tables are built).
#[derive(Default)]
pub struct QueueAccounts<'a> {
    /// Σ `Resreq` of the queue's own jobs' tasks, as the plugins' `attr.allocated`: at open the
    /// allocated-status tasks (Bound, Binding, Running, Allocated), then + every AllocateFunc
    /// (allocate, pipeline, undone evict) and − every DeallocateFunc (evict, undone
    /// allocate/pipeline).
    pub(in crate::session) allocated: &'a mut [i64],
    /// `allocated` of the queue and all its descendants (equal to `allocated` for a leaf).
    pub(in crate::session) tree_allocated: &'a mut [i64],
    /// `attr.request`: allocated-status + Pending tasks' `Resreq` at open (constant in a session).
    pub request: &'a [i64],
    /// `request` of the queue and its descendants.
    pub tree_request: &'a [i64],
    /// `attr.inqueue`: for Inqueue PodGroups, and Running PodGroups with at least `minMember`
    /// allocated tasks, the part of `minResources` not yet allocated (Volcano
    /// `GetInqueueResource`), less the requests of scheduling-gated tasks (not those gated only by Volcano's queue-allocation gate); + `minResources` of
    /// each job enqueued in the session.
    pub(in crate::session) inqueue: &'a mut [i64],
    /// `inqueue` of the queue and its descendants.
    pub(in crate::session) tree_inqueue: &'a mut [i64],
    /// `attr.elastic`: Σ over jobs of the positive part of allocated − `minResources`.
    pub elastic: &'a [i64],
    /// `elastic` of the queue and its descendants.
    pub tree_elastic: &'a [i64],
    /// `spec.guarantee.resource` (0 where unset).
    pub guarantee: &'a [i64],
    /// `spec.capability` as written (0 where unset); [`QueueAccounts::capability_set`] says which
    /// dimensions it names.
    pub capability: &'a [i64],
    /// Per queue: bit `d` set when `spec.capability` names dimension `d`.
    pub capability_set: &'a [u64],
    /// `spec.deserved` as written (0 where unset).
    pub deserved: &'a [i64],
    /// Per queue: bit `d` set when `spec.deserved` names dimension `d`.
    pub deserved_set: &'a [u64],
    /// Flat real capability (proportion, capacity without hierarchy): (total − Σ every queue's
    /// guarantee)⁺ + own guarantee, capped by the capability (cpu or memory ≤ 0, or a scalar the
    /// capability does not name, is unlimited there).
    pub real_capability: &'a [i64],
    /// Whether the queue has jobs in this session.
    pub has_jobs: &'a [bool],
    /// Parent row ([`NONE`] for `root`, and for every queue when the tree is invalid).
    pub parent: &'a [u32],
    /// Depth below `root` (root 0; 0 when the tree is invalid).
    pub depth: &'a [u16],
    /// Whether the queue has no children.
    pub leaf: &'a [bool],
    /// Children of queue `q`: `children[child_start[q]..child_start[q + 1]]`, in name order.
    pub child_start: &'a [u32],
    /// See [`QueueAccounts::child_start`].
    pub children: &'a [u32],
    /// Row of the `root` queue, if it exists.
    pub root: Option<QueueIdx>,
    /// Why the tree from `spec.parent` is unusable (a missing `root`, a missing parent, a
    /// cycle), naming the queue; `None` when it is valid. Hierarchical plugins refuse to
    /// schedule then, as Volcano's `capacity` does.
    pub tree_error: Option<String>,
}

/// Read access outside the session to the columns the session changes (through the
/// Statement's allocate/pipeline/evict and enqueue; see each field).
impl QueueAccounts<'_> {
    /// `attr.allocated` per queue, row-major (`queue * dims + d`).
    #[inline]
    pub fn allocated(&self) -> &[i64] {
        self.allocated
    }

    /// `allocated` of each queue and all its descendants.
    #[inline]
    pub fn tree_allocated(&self) -> &[i64] {
        self.tree_allocated
    }

    /// `attr.inqueue` per queue.
    #[inline]
    pub fn inqueue(&self) -> &[i64] {
        self.inqueue
    }

    /// `inqueue` of each queue and its descendants.
    #[inline]
    pub fn tree_inqueue(&self) -> &[i64] {
        self.tree_inqueue
    }
}

fn mask(r: &crate::resource::Resource, dims: usize) -> u64 {
    let all = if dims >= 64 { u64::MAX } else { (1u64 << dims) - 1 };
    r.present_mask() & all
}

/// Builds the queue tree: parent rows, depths, children. Returns the error of the first queue
/// (in name order) whose ancestor chain is broken.
fn tree(queues: &QueueTable<'_>) -> (Vec<u32>, Vec<u16>, Option<QueueIdx>, Option<String>) {
    let n = queues.len;
    let row = |name: &str| queues.rec.iter().position(|q| q.spec.name == name);
    let root = row(ROOT).map(|r| QueueIdx(r as u32));
    let mut parent = vec![NONE; n];
    for (q, rec) in queues.rec.iter().enumerate() {
        if Some(QueueIdx(q as u32)) == root {
            continue;
        }
        let p = if rec.spec.parent.is_empty() { ROOT } else { rec.spec.parent.as_str() };
        parent[q] = row(p).map(|r| r as u32).unwrap_or(NONE);
    }
    let mut error = None;
    if root.is_none() && n > 0 {
        error = Some(format!("Queue {:?}: the root queue {ROOT:?} does not exist", queues.rec[0].spec.name));
    }
    let mut depth = vec![0u16; n];
    for q in 0..n {
        if error.is_some() {
            break;
        }
        let mut cur = q;
        let mut d = 0usize;
        while Some(QueueIdx(cur as u32)) != root {
            let p = parent[cur];
            let rec = &queues.rec[cur].spec;
            if p == NONE {
                let name = if rec.parent.is_empty() { ROOT } else { rec.parent.as_str() };
                error = Some(format!("Queue {:?}: field spec.parent: parent queue {name:?} does not exist", rec.name));
                break;
            }
            d += 1;
            if d > n {
                error = Some(format!("Queue {:?}: field spec.parent: cycle in the queue hierarchy", queues.rec[q].spec.name));
                break;
            }
            cur = p as usize;
        }
        depth[q] = d.min(u16::MAX as usize) as u16;
    }
    if error.is_some() {
        parent.iter_mut().for_each(|p| *p = NONE);
        depth.iter_mut().for_each(|d| *d = 0);
    }
    (parent, depth, root, error)
}

/// Builds the accounting columns for `s` (its queues and jobs are built; `total` is set).
/// Whether a pending task's request is deducted from its job's inqueue (Volcano
/// `GetSchGatedPodResources`): gated, but not only by Volcano's queue-allocation gate, whose pods
/// count in inqueue because the scheduler itself releases them.
fn deducted_gated(spec: &crate::model::PodSpec) -> bool {
    spec.scheduling_gated && !spec.volcano_gate_only
}

pub(super) fn build<'a>(arena: &'a Bump, s: &State<'a>) -> QueueAccounts<'a> {
    let dims = s.dims;
    let nq = s.queues.len;
    let z = || vec![0i64; nq * dims];
    let (mut allocated, mut request, mut inqueue, mut elastic) = (z(), z(), z(), z());
    let mut has_jobs = vec![false; nq];
    let mut job_alloc = vec![0i64; dims];
    for j in (0..s.jobs.len).map(|i| JobIdx(i as u32)) {
        let q = s.jobs.queue[j.ix()] as usize;
        has_jobs[q] = true;
        job_alloc.iter_mut().for_each(|v| *v = 0);
        let mut gated = vec![0i64; 0];
        let mut alloc_tasks = 0i32;
        for t in s.jobs.tasks(j) {
            let st = s.tasks.status[t.ix()];
            let req = s.tasks.req(t, dims);
            if st.allocated() {
                alloc_tasks += 1;
                for d in 0..dims {
                    job_alloc[d] = job_alloc[d].saturating_add(req[d]);
                    allocated[q * dims + d] = allocated[q * dims + d].saturating_add(req[d]);
                    request[q * dims + d] = request[q * dims + d].saturating_add(req[d]);
                }
            } else if st == TaskStatus::Pending {
                for d in 0..dims {
                    request[q * dims + d] = request[q * dims + d].saturating_add(req[d]);
                }
                if deducted_gated(&s.tasks.rec[t.ix()].spec) {
                    gated.resize(dims, 0);
                    for d in 0..dims {
                        gated[d] = gated[d].saturating_add(req[d]);
                    }
                }
            } else if st == TaskStatus::Succeeded {
                alloc_tasks += 1;
            }
        }
        let min = s.jobs.rec[j.ix()].min_resources.as_ref();
        if let Some(min) = min {
            let phase = s.jobs.phase[j.ix()];
            let counts = phase == PodGroupPhase::Inqueue
                || (phase == PodGroupPhase::Running && alloc_tasks >= s.jobs.min_available[j.ix()]);
            if counts {
                for d in 0..dims {
                    let unalloc = (min.get(d) - job_alloc[d]).max(0);
                    let g = gated.get(d).copied().unwrap_or(0);
                    inqueue[q * dims + d] = inqueue[q * dims + d].saturating_add((unalloc - g).max(0));
                }
            }
        }
        for d in 0..dims {
            let m = min.map(|m| m.get(d)).unwrap_or(0);
            elastic[q * dims + d] = elastic[q * dims + d].saturating_add((job_alloc[d] - m).max(0));
        }
    }
    let (mut guarantee, mut capability, mut deserved) = (z(), z(), z());
    let (mut capability_set, mut deserved_set) = (vec![0u64; nq], vec![0u64; nq]);
    let mut total_guarantee = vec![0i64; dims];
    for (q, rec) in s.queues.rec.iter().enumerate() {
        for d in 0..dims {
            guarantee[q * dims + d] = rec.guarantee.get(d);
            total_guarantee[d] = total_guarantee[d].saturating_add(rec.guarantee.get(d));
        }
        if let Some(c) = rec.capability.as_ref() {
            capability_set[q] = mask(c, dims);
            for d in 0..dims {
                capability[q * dims + d] = c.get(d);
            }
        }
        if let Some(ds) = rec.deserved.as_ref() {
            deserved_set[q] = mask(ds, dims);
            for d in 0..dims {
                deserved[q * dims + d] = ds.get(d);
            }
        }
    }
    let mut real_capability = z();
    for (q, rec) in s.queues.rec.iter().enumerate() {
        for d in 0..dims {
            let mut v = (s.total[d] - total_guarantee[d]).max(0).saturating_add(guarantee[q * dims + d]);
            if rec.capability.is_some() && capability_set[q] & (1 << d) != 0 {
                let c = capability[q * dims + d];
                let c = if (d == CPU || d == MEMORY) && c <= 0 { UNLIMITED } else { c };
                v = v.min(c);
            }
            real_capability[q * dims + d] = v;
        }
    }
    let (parent, depth, root, tree_error) = tree(&s.queues);
    let mut leaf = vec![true; nq];
    let mut kids: Vec<Vec<u32>> = vec![Vec::new(); nq];
    for q in 0..nq {
        if parent[q] != NONE {
            leaf[parent[q] as usize] = false;
            kids[parent[q] as usize].push(q as u32);
        }
    }
    let mut child_start = Vec::with_capacity(nq + 1);
    let mut children = Vec::new();
    for k in &kids {
        child_start.push(children.len() as u32);
        children.extend_from_slice(k);
    }
    child_start.push(children.len() as u32);
    // Subtree sums: add each queue's own columns to every ancestor.
    let subtree = |own: &[i64]| {
        let mut out = own.to_vec();
        for q in 0..nq {
            let mut p = parent[q];
            while p != NONE {
                for d in 0..dims {
                    out[p as usize * dims + d] = out[p as usize * dims + d].saturating_add(own[q * dims + d]);
                }
                p = parent[p as usize];
            }
        }
        out
    };
    let (ta, tr, ti, te) = (subtree(&allocated), subtree(&request), subtree(&inqueue), subtree(&elastic));
    QueueAccounts {
        allocated: arena.alloc_slice_copy(&allocated),
        tree_allocated: arena.alloc_slice_copy(&ta),
        request: arena.alloc_slice_copy(&request),
        tree_request: arena.alloc_slice_copy(&tr),
        inqueue: arena.alloc_slice_copy(&inqueue),
        tree_inqueue: arena.alloc_slice_copy(&ti),
        elastic: arena.alloc_slice_copy(&elastic),
        tree_elastic: arena.alloc_slice_copy(&te),
        guarantee: arena.alloc_slice_copy(&guarantee),
        capability: arena.alloc_slice_copy(&capability),
        capability_set: arena.alloc_slice_copy(&capability_set),
        deserved: arena.alloc_slice_copy(&deserved),
        deserved_set: arena.alloc_slice_copy(&deserved_set),
        real_capability: arena.alloc_slice_copy(&real_capability),
        has_jobs: arena.alloc_slice_copy(&has_jobs),
        parent: arena.alloc_slice_copy(&parent),
        depth: arena.alloc_slice_copy(&depth),
        leaf: arena.alloc_slice_copy(&leaf),
        child_start: arena.alloc_slice_copy(&child_start),
        children: arena.alloc_slice_copy(&children),
        root,
        tree_error,
    }
}

impl QueueAccounts<'_> {
    /// Row `q` of a row-major queue column.
    #[inline]
    pub fn row(col: &[i64], q: QueueIdx, dims: usize) -> &[i64] {
        &col[q.ix() * dims..(q.ix() + 1) * dims]
    }

    /// Children of `q`.
    pub fn children_of(&self, q: QueueIdx) -> impl Iterator<Item = QueueIdx> + '_ {
        let (a, b) = (self.child_start[q.ix()] as usize, self.child_start[q.ix() + 1] as usize);
        self.children[a..b].iter().map(|&c| QueueIdx(c))
    }

    /// Ancestors of `q`, nearest first (parent, grandparent, …, root).
    pub fn ancestors(&self, q: QueueIdx) -> impl Iterator<Item = QueueIdx> + '_ {
        let mut cur = self.parent.get(q.ix()).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            if cur == NONE {
                return None;
            }
            let out = QueueIdx(cur);
            cur = self.parent[cur as usize];
            Some(out)
        })
    }
}

impl State<'_> {
    fn queue_change(&mut self, t: TaskIdx, sign: i64) {
        self.gate_reserve_change(t, sign);
        let Some(j) = self.tasks.job_of(t) else { return };
        let dims = self.dims;
        let q = self.jobs.queue[j.ix()] as usize;
        let a = &mut self.queues.acct;
        if a.allocated.is_empty() {
            return;
        }
        let req = &self.tasks.resreq[t.ix() * dims..(t.ix() + 1) * dims];
        let mut cur = q as u32;
        let mut own = true;
        while cur != NONE {
            let row = cur as usize * dims;
            for d in 0..dims {
                let v = sign.saturating_mul(req[d]);
                if own {
                    a.allocated[row + d] = a.allocated[row + d].saturating_add(v);
                }
                a.tree_allocated[row + d] = a.tree_allocated[row + d].saturating_add(v);
            }
            own = false;
            cur = a.parent[cur as usize];
        }
    }

    /// AllocateFunc accounting: `t`'s request joins its queue's (and ancestors') allocated.
    pub fn queue_allocate(&mut self, t: TaskIdx) {
        self.queue_change(t, 1);
    }

    /// DeallocateFunc accounting: `t`'s request leaves its queue's (and ancestors') allocated.
    pub fn queue_deallocate(&mut self, t: TaskIdx) {
        self.queue_change(t, -1);
    }

    /// JobEnqueued accounting: `minResources` (less scheduling-gated pending tasks' requests, Volcano's own gate excepted) of
    /// job `j` joins its queue's (and ancestors') inqueue.
    pub fn queue_enqueued(&mut self, j: JobIdx) {
        let Some(min) = self.jobs.rec[j.ix()].min_resources.as_ref() else { return };
        let dims = self.dims;
        let mut add: Vec<i64> = (0..dims).map(|d| min.get(d)).collect();
        for t in self.jobs.tasks(j) {
            if self.tasks.status[t.ix()] == TaskStatus::Pending && deducted_gated(&self.tasks.rec[t.ix()].spec) {
                for (d, v) in add.iter_mut().enumerate() {
                    *v = (*v - self.tasks.resreq[t.ix() * dims + d]).max(0);
                }
            }
        }
        let a = &mut self.queues.acct;
        if a.inqueue.is_empty() {
            return;
        }
        let mut cur = self.jobs.queue[j.ix()];
        let mut own = true;
        while cur != NONE {
            let row = cur as usize * dims;
            for d in 0..dims {
                if own {
                    a.inqueue[row + d] = a.inqueue[row + d].saturating_add(add[d]);
                }
                a.tree_inqueue[row + d] = a.tree_inqueue[row + d].saturating_add(add[d]);
            }
            own = false;
            cur = a.parent[cur as usize];
        }
    }
}
