//! Volcano allocate's queue-allocation gate (feature gate `SchedulingGatesQueueAdmission`,
//! volcano-behaviour.md §2 allocate; Volcano `allocateResourcesForTasks`): a pending pod gated
//! only by [`crate::model::QUEUE_ALLOCATION_GATE`] takes part in allocate's queue check although
//! it is gated. When the queue's Allocatable passes for it and it opted in (the annotation), the
//! session decides to remove its gate ([`crate::decision::GateRemoval`]) and `capacity` reserves
//! its request in the queue ([`crate::session::gate_reserve`]); the pod itself is skipped this
//! cycle, as every gated pod is, and scheduled in a later cycle once the gate is gone. A pod whose
//! queue does not admit it keeps its gate, so a cluster autoscaler never sees it as unschedulable.

use crate::session::tables::{QueueIdx, TaskIdx};
use crate::session::State;

/// Whether pending task `t` enters allocate's worksheet as far as gates go: it is not gated, or
/// the feature gate is on and its only gate is Volcano's (Volcano admits such pods to the
/// worksheet even with the feature gate off, then skips them; Basalt leaves them out then, which
/// decides the same).
pub(super) fn considered(s: &State<'_>, t: TaskIdx) -> bool {
    let spec = &s.tasks.rec[t.ix()].spec;
    !spec.scheduling_gated || (s.options().scheduling_gates_queue_admission && spec.volcano_gate_only)
}

/// Called once queue `q`'s Allocatable passed for `t`: with the feature gate, an opted-in task
/// joins the queue's gate reservation, and a gated one (gated only by Volcano's gate) gets its
/// gate removal decided, once per cycle. Returns whether `t` is gated, so allocate skips it.
pub(super) fn admit(s: &mut State<'_>, t: TaskIdx, q: QueueIdx) -> bool {
    let spec = &s.tasks.rec[t.ix()].spec;
    let gated = spec.scheduling_gated;
    if !s.options().scheduling_gates_queue_admission || !spec.queue_allocation_gate {
        return gated;
    }
    let releases = gated && spec.volcano_gate_only;
    if s.gate_admit(t, q) && releases {
        s.gate_removals.push(t);
    }
    gated
}
