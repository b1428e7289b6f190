//! The virtual clock's event list and cycle policy. Events are arrivals (a PodGroup or a pod
//! is created) and completions (a bound pod has run for its duration); cycles run every
//! period or on events ([`CyclePolicy`]). Time is in ms of virtual time from 0.

use super::workload::{VirtualMs, Workload};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// When scheduling cycles run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CyclePolicy {
    /// At every multiple of the period (ms, > 0), as a scheduler with `schedulePeriod` does. A
    /// tick is skipped when nothing happened since the previous cycle and that cycle changed
    /// nothing (no bind or eviction, and no PodGroup status change — at most
    /// [`MAX_STATUS_ONLY_CYCLES`] status-only cycles in a row count as a change): it would
    /// decide the same, but for the tie-break seed.
    Period(VirtualMs),
    /// At the time of each event, after applying every event of that instant; repeated at the
    /// same instant while a cycle binds or evicts (at most [`MAX_CYCLES_PER_INSTANT`] cycles).
    OnEvents,
}

/// Cycles run back to back at one instant in [`CyclePolicy::OnEvents`] mode at most.
pub const MAX_CYCLES_PER_INSTANT: u32 = 8;

/// In [`CyclePolicy::Period`] mode, a cycle that changed only PodGroup statuses (no bind or
/// eviction) makes the next tick run, at most this many times in a row, so status flapping
/// cannot keep an idle replay ticking. (Enqueue and allocate share a cycle, so a status change
/// alone seldom lets the next cycle do more.)
pub const MAX_STATUS_ONLY_CYCLES: u32 = 1;

impl CyclePolicy {
    /// The first cycle time at or after `t`.
    pub fn tick_at_or_after(self, t: VirtualMs) -> VirtualMs {
        match self {
            CyclePolicy::Period(p) => {
                let p = p.max(1);
                t.div_euclid(p) * p + if t.rem_euclid(p) == 0 { 0 } else { p }
            }
            CyclePolicy::OnEvents => t,
        }
    }

    /// Human description for the report.
    pub fn describe(self) -> String {
        match self {
            CyclePolicy::Period(p) => {
                format!("a cycle every {} s of virtual time (ticks with nothing to do skipped)", fmt_seconds(p))
            }
            CyclePolicy::OnEvents => {
                "a cycle at each event (arrival or completion), repeated at that instant while it binds".into()
            }
        }
    }
}

/// `p` ms as seconds without trailing zeros (`10`, `0.5`).
pub fn fmt_seconds(ms: VirtualMs) -> String {
    if ms % 1000 == 0 {
        (ms / 1000).to_string()
    } else {
        format!("{}", ms as f64 / 1000.0)
    }
}

/// An arrival: a job's PodGroup (`task: None`) or one of its pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Arrival {
    /// When.
    pub at: VirtualMs,
    /// Job index in the workload.
    pub job: usize,
    /// `None` for the PodGroup (sorted first), `Some(k)` for task `k` of the job.
    pub task: Option<usize>,
}

/// Pending events: arrivals in order, completions by time (then task index).
#[derive(Debug, Default)]
pub struct Events {
    arrivals: Vec<Arrival>,
    next_arrival: usize,
    completions: BinaryHeap<Reverse<(VirtualMs, usize)>>,
}

/// The next event to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A bound pod (global task index) finished.
    Completion(usize),
    /// Something arrived.
    Arrival(Arrival),
}

impl Events {
    /// The arrivals of `w`, sorted by (time, job, PodGroup before pods, task).
    pub fn new(w: &Workload) -> Self {
        let mut arrivals = Vec::with_capacity(w.pod_count() + w.jobs.len());
        for (j, job) in w.jobs.iter().enumerate() {
            arrivals.push(Arrival { at: job.arrival_ms, job: j, task: None });
            for (k, t) in job.tasks.iter().enumerate() {
                arrivals.push(Arrival { at: t.arrival_ms.max(job.arrival_ms), job: j, task: Some(k) });
            }
        }
        arrivals.sort();
        Events { arrivals, next_arrival: 0, completions: BinaryHeap::new() }
    }

    /// Schedules the completion of `task` at `at`.
    pub fn complete_at(&mut self, at: VirtualMs, task: usize) {
        self.completions.push(Reverse((at, task)));
    }

    /// Time of the next event, if any.
    pub fn next_time(&self) -> Option<VirtualMs> {
        let a = self.arrivals.get(self.next_arrival).map(|a| a.at);
        let c = self.completions.peek().map(|Reverse((t, _))| *t);
        match (a, c) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
    }

    /// Takes the next event at or before `until`: completions first at equal times.
    pub fn pop_until(&mut self, until: VirtualMs) -> Option<(VirtualMs, Event)> {
        let a = self.arrivals.get(self.next_arrival).copied().filter(|a| a.at <= until);
        let c = self.completions.peek().map(|Reverse(x)| *x).filter(|(t, _)| *t <= until);
        match (a, c) {
            (Some(a), Some((ct, task))) if ct <= a.at => {
                self.completions.pop();
                Some((ct, Event::Completion(task)))
            }
            (Some(a), _) => {
                self.next_arrival += 1;
                Some((a.at, Event::Arrival(a)))
            }
            (None, Some((ct, task))) => {
                self.completions.pop();
                Some((ct, Event::Completion(task)))
            }
            (None, None) => None,
        }
    }

    /// Events still to come (arrivals not yet applied + completions scheduled).
    pub fn remaining(&self) -> usize {
        self.arrivals.len() - self.next_arrival + self.completions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks() {
        let p = CyclePolicy::Period(10_000);
        assert_eq!(p.tick_at_or_after(0), 0);
        assert_eq!(p.tick_at_or_after(1), 10_000);
        assert_eq!(p.tick_at_or_after(10_000), 10_000);
        assert_eq!(CyclePolicy::OnEvents.tick_at_or_after(1234), 1234);
        assert_eq!(fmt_seconds(10_000), "10");
        assert_eq!(fmt_seconds(500), "0.5");
    }
}
