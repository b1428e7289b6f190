//! The `capacity` plugin's queue-allocation-gate reservation (Volcano capacity
//! `queueGateReservedTasks`, feature gate `SchedulingGatesQueueAdmission`): opted-in pods
//! ([`crate::model::PodSpec::queue_allocation_gate`]) that their queue admitted but that are not
//! allocated yet keep their request reserved in that queue, so the queue does not admit (or
//! allocate) beyond its capability while their gates are being removed and they wait for a node.
//!
//! Built at session open from the Pending, ungated, opted-in tasks (their gate was removed in an
//! earlier cycle); a task joins when allocate admits it ([`State::gate_admit`]), leaves on every
//! AllocateFunc and joins again on a DeallocateFunc when opted in (Volcano's event handlers).
//! Only the task's own queue holds the reservation, not its ancestors, as in Volcano. Empty and
//! unused with the feature gate off.

use super::tables::{QueueIdx, TaskIdx, TaskStatus};
use super::State;

/// Reserved requests per queue and which tasks hold them.
#[derive(Default)]
pub struct GateReserve {
    dims: usize,
    /// Per task: holds a reservation, and in which queue.
    held: Vec<Option<QueueIdx>>,
    /// Per queue, row-major by dims: Σ requests of the tasks holding a reservation there.
    amount: Vec<i64>,
}

impl GateReserve {
    /// The reservation at session open: every Pending task of a job in queue `queue_of(t)` that
    /// is not gated and opted in. Empty when `on` is false.
    pub(super) fn build(s: &State<'_>, on: bool) -> Self {
        if !on {
            return GateReserve::default();
        }
        let dims = s.dims;
        let mut r = GateReserve { dims, held: vec![None; s.tasks.len], amount: vec![0; s.queues.len * dims] };
        for t in (0..s.tasks.len).map(|i| TaskIdx(i as u32)) {
            let spec = &s.tasks.rec[t.ix()].spec;
            if s.tasks.status[t.ix()] != TaskStatus::Pending || spec.scheduling_gated || !spec.queue_allocation_gate {
                continue;
            }
            if let Some(j) = s.tasks.job_of(t) {
                r.add(t, QueueIdx(s.jobs.queue[j.ix()]), s.tasks.req(t, dims));
            }
        }
        r
    }

    /// Whether the reservation is kept at all (the feature gate is on).
    pub fn on(&self) -> bool {
        !self.held.is_empty()
    }

    /// Σ requests reserved in `q` (`None` when nothing is kept).
    pub fn reserved(&self, q: QueueIdx) -> Option<&[i64]> {
        if !self.on() {
            return None;
        }
        self.amount.get(q.ix() * self.dims..(q.ix() + 1) * self.dims)
    }

    /// Whether `t` holds a reservation in `q`.
    pub fn holds(&self, t: TaskIdx, q: QueueIdx) -> bool {
        self.held.get(t.ix()).copied().flatten() == Some(q)
    }

    fn add(&mut self, t: TaskIdx, q: QueueIdx, req: &[i64]) {
        if !self.on() || self.held[t.ix()].is_some() {
            return;
        }
        self.held[t.ix()] = Some(q);
        let row = &mut self.amount[q.ix() * self.dims..(q.ix() + 1) * self.dims];
        for (a, r) in row.iter_mut().zip(req) {
            *a = a.saturating_add(*r);
        }
    }

    fn remove(&mut self, t: TaskIdx, req: &[i64]) {
        let Some(q) = self.held.get(t.ix()).copied().flatten() else { return };
        self.held[t.ix()] = None;
        let row = &mut self.amount[q.ix() * self.dims..(q.ix() + 1) * self.dims];
        for (a, r) in row.iter_mut().zip(req) {
            *a = a.saturating_sub(*r);
        }
    }
}

impl State<'_> {
    /// Allocate admitted opted-in task `t` of queue `q` (Volcano capacity's AllocatableFn
    /// `addTaskToReservedCache`): its request stays reserved in `q` until it is allocated.
    /// Returns whether it joined now (false: it already held a reservation, the feature gate is
    /// off, or the task did not opt in).
    pub fn gate_admit(&mut self, t: TaskIdx, q: QueueIdx) -> bool {
        if !self.tasks.rec[t.ix()].spec.queue_allocation_gate || !self.gate_reserve.on() || self.gate_reserve.holds(t, q) {
            return false;
        }
        let all = self.tasks.resreq;
        self.gate_reserve.add(t, q, &all[t.ix() * self.dims..(t.ix() + 1) * self.dims]);
        true
    }

    /// The reservation side of an AllocateFunc (`sign > 0`: `t` leaves it) or a DeallocateFunc
    /// (`t` joins again when opted in).
    pub(super) fn gate_reserve_change(&mut self, t: TaskIdx, sign: i64) {
        if !self.gate_reserve.on() {
            return;
        }
        let all = self.tasks.resreq;
        let req = &all[t.ix() * self.dims..(t.ix() + 1) * self.dims];
        if sign > 0 {
            self.gate_reserve.remove(t, req);
        } else if self.tasks.rec[t.ix()].spec.queue_allocation_gate {
            if let Some(j) = self.tasks.job_of(t) {
                let q = QueueIdx(self.jobs.queue[j.ix()]);
                self.gate_reserve.add(t, q, req);
            }
        }
    }
}
