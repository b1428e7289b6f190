//! The actions' ordered heaps: a [`GoHeap`] of queues, jobs or tasks ordered by the session's
//! plugins (`QueueOrderFn`, `JobOrderFn`, `TaskOrderFn` with Volcano's fallbacks,
//! [`Plugins::queue_order`] and its siblings), so every action pushes and pops the same way:
//! [`GoHeap::push_by`] and [`GoHeap::pop_by`] with the session.

use super::heap::GoHeap;
use crate::framework::{Plugins, Session};
use crate::session::tables::{JobIdx, QueueIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

/// A row type the plugins order: queues, jobs or tasks.
pub trait PluginOrder: Copy {
    /// Whether `a` comes before `b` by the plugins' order of this row type.
    fn before<'a>(pl: &Plugins<'a>, st: &State<'a>, a: Self, b: Self) -> bool;
}

impl PluginOrder for QueueIdx {
    fn before<'a>(pl: &Plugins<'a>, st: &State<'a>, a: Self, b: Self) -> bool {
        pl.queue_order(st, a, b) == Ordering::Less
    }
}

impl PluginOrder for JobIdx {
    fn before<'a>(pl: &Plugins<'a>, st: &State<'a>, a: Self, b: Self) -> bool {
        pl.job_order(st, a, b) == Ordering::Less
    }
}

impl PluginOrder for TaskIdx {
    fn before<'a>(pl: &Plugins<'a>, st: &State<'a>, a: Self, b: Self) -> bool {
        pl.task_order(st, a, b) == Ordering::Less
    }
}

impl<T: PluginOrder> GoHeap<T> {
    /// [`GoHeap::push`] by the plugins' order of `T`.
    pub fn push_ordered<'a>(&mut self, x: T, pl: &Plugins<'a>, st: &State<'a>) {
        self.push(x, &mut |a, b| T::before(pl, st, a, b));
    }

    /// [`GoHeap::pop`] by the plugins' order of `T`.
    pub fn pop_ordered<'a>(&mut self, pl: &Plugins<'a>, st: &State<'a>) -> Option<T> {
        self.pop(&mut |a, b| T::before(pl, st, a, b))
    }

    /// [`GoHeap::push_ordered`] by the plugins of `ssn`, on its current state.
    pub fn push_by(&mut self, x: T, ssn: &Session<'_>) {
        self.push_ordered(x, &ssn.plugins, &ssn.state);
    }

    /// [`GoHeap::pop_ordered`] by the plugins of `ssn`, on its current state: the actions' loop
    /// head, `while let Some(q) = queues.pop_by(ssn) { … }` (the borrow of `ssn` ends with the
    /// call, so the body may change the session).
    pub fn pop_by(&mut self, ssn: &Session<'_>) -> Option<T> {
        self.pop_ordered(&ssn.plugins, &ssn.state)
    }
}
