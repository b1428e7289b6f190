//! Volcano's `Statement` (`framework/statement.go`, volcano-behaviour.md §1.5): an undo log of
//! Allocate, Pipeline, UnPipeline and Evict operations on the session, the only way actions
//! change task placement. `commit` turns them into decisions (binds, evictions); `discard` undoes
//! them in reverse order and restores the session exactly: statuses, node accounting, the order
//! of each node's task list, `eviction_occurred`, and the plugins' state through the same event
//! handlers Volcano fires (undoing an allocate or pipeline fires `DeallocateFunc`, undoing an
//! evict fires `AllocateFunc`).

use super::devices::Held;
use super::tables::*;
use super::{Session, SessionEvents};
use bumpalo::collections::Vec as BVec;

/// What an operation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Task → Allocated on a node (idle taken).
    Allocate,
    /// Task → Pipelined on a node (waits for releasing resources).
    Pipeline,
    /// A Pipelined task → back to its earlier status, off its node (Volcano `UnPipeline`).
    UnPipeline,
    /// Task → Releasing (evicted; its resources are releasing).
    Evict,
}

/// One logged operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op<'a> {
    /// Kind.
    pub kind: OpKind,
    /// Task.
    pub task: TaskIdx,
    /// Node.
    pub node: NodeIdx,
    /// Status before the operation.
    pub prev: TaskStatus,
    /// `eviction_occurred` of the task before the operation.
    pub prev_eviction_occurred: bool,
    /// Eviction reason (`preempt`, `reclaim`, …; empty for the other kinds).
    pub reason: &'a str,
    /// For [`OpKind::UnPipeline`]: the task that followed it in the node's task list ([`NONE`]
    /// when it was last), where undoing puts it back.
    pub next_on_node: u32,
    /// Devices the operation took (allocate, pipeline) or freed (unpipeline, evict): cards
    /// (bit `i` = card id `i` of `node`), vGPU uses and the node lock ([`super::devices`]);
    /// undone exactly by discard.
    pub cards: Held<'a>,
}

/// An open transaction on the session, allocated from the session arena.
pub struct Statement<'a> {
    ops: BVec<'a, Op<'a>>,
}

impl<'a> Statement<'a> {
    /// Operations so far.
    pub fn ops(&self) -> &[Op<'a>] {
        &self.ops
    }

    /// Whether nothing was done.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Volcano `HasEvictions`: whether the statement evicts anything.
    pub fn has_evictions(&self) -> bool {
        self.ops.iter().any(|o| o.kind == OpKind::Evict)
    }

    /// Volcano `Merge`: appends `other`'s operations (already applied to the session) after
    /// this statement's, so one commit or discard covers both.
    pub fn merge(&mut self, other: Statement<'a>) {
        self.ops.extend(other.ops);
    }
}

impl<'a, P: SessionEvents<'a>> Session<'a, P> {
    /// A new, empty statement.
    pub fn statement(&self) -> Statement<'a> {
        Statement { ops: BVec::new_in(self.arena) }
    }

    #[allow(clippy::too_many_arguments)]
    fn log(
        &self,
        st: &mut Statement<'a>,
        kind: OpKind,
        t: TaskIdx,
        n: NodeIdx,
        prev: TaskStatus,
        reason: &'a str,
        cards: Held<'a>,
    ) {
        let prev_eviction_occurred = self.state.tasks.eviction_occurred[t.ix()];
        let next_on_node = self.state.tasks.next_on_node[t.ix()];
        st.ops.push(Op { kind, task: t, node: n, prev, prev_eviction_occurred, reason, next_on_node, cards });
    }

    /// Statement `Allocate`: `t` takes idle resources of `n` and, with device sharing on, its
    /// GPU share cards ([`State::device_pick`]). Fails (changing nothing) when `t`'s request
    /// does not fit `n`'s idle or no card of `n` can take it (Volcano's device `Allocate`
    /// error fails the allocate).
    pub fn allocate(&mut self, st: &mut Statement<'a>, t: TaskIdx, n: NodeIdx) -> bool {
        let req = self.state.tasks.req(t, self.state.dims);
        if !self.state.fits_idle(req, n) {
            return false;
        }
        let Some(cards) = self.state.device_pick(t, n, self.arena) else { return false };
        let prev = self.state.tasks.status[t.ix()];
        self.log(st, OpKind::Allocate, t, n, prev, "", cards);
        self.state.set_status(t, TaskStatus::Allocated);
        self.state.node_add_task(t, n);
        self.state.device_take(t, n, cards);
        self.plugins.on_allocate(&mut self.state, t);
        true
    }

    /// Statement `Pipeline` (Volcano `Pipeline(task, node, evictionOccurred)`): `t` waits on
    /// `n` for releasing resources; `eviction_occurred` says victims were evicted for it there.
    /// Fires `AllocateFunc`, and takes GPU share cards as allocate does (none when no card can
    /// take it: the predicate, which ran before, said one could).
    pub fn pipeline_evicted(&mut self, st: &mut Statement<'a>, t: TaskIdx, n: NodeIdx, eviction_occurred: bool) {
        let cards = self.state.device_pick(t, n, self.arena).unwrap_or_default();
        let prev = self.state.tasks.status[t.ix()];
        self.log(st, OpKind::Pipeline, t, n, prev, "", cards);
        self.state.set_status(t, TaskStatus::Pipelined);
        self.state.tasks.eviction_occurred[t.ix()] = eviction_occurred;
        self.state.node_add_task(t, n);
        self.state.device_take(t, n, cards);
        self.plugins.on_allocate(&mut self.state, t);
    }

    /// Statement `Pipeline` without an eviction (allocate's pipelining onto releasing
    /// resources).
    pub fn pipeline(&mut self, st: &mut Statement<'a>, t: TaskIdx, n: NodeIdx) {
        self.pipeline_evicted(st, t, n, false);
    }

    /// Statement `UnPipeline`: a Pipelined task goes back to Pending, off its node; fires
    /// `DeallocateFunc`. Does nothing for a task that is not Pipelined on a node.
    pub fn unpipeline(&mut self, st: &mut Statement<'a>, t: TaskIdx) {
        let Some(n) = self.state.tasks.node_of(t) else { return };
        if self.state.tasks.status[t.ix()] != TaskStatus::Pipelined {
            return;
        }
        let cards = self.state.device_holding(t, self.arena);
        self.log(st, OpKind::UnPipeline, t, n, TaskStatus::Pipelined, "", cards);
        self.state.device_release(t, n, cards);
        self.state.node_remove_task(t);
        self.state.set_status(t, TaskStatus::Pending);
        self.plugins.on_deallocate(&mut self.state, t);
    }

    /// Statement `Evict`: `t` becomes Releasing on its node (its place in the node's task list
    /// kept), and `DeallocateFunc` fires. `reason` is Volcano's (`preempt`, `reclaim`, …); the
    /// eviction becomes a decision only at [`Session::commit`]. Does nothing for a task on no
    /// node.
    pub fn evict(&mut self, st: &mut Statement<'a>, t: TaskIdx, reason: &str) {
        let Some(n) = self.state.tasks.node_of(t) else {
            return;
        };
        let reason: &'a str = self.arena.alloc_str(reason);
        let prev = self.state.tasks.status[t.ix()];
        let cards = self.state.device_holding(t, self.arena);
        self.log(st, OpKind::Evict, t, n, prev, reason, cards);
        self.state.device_release(t, n, cards);
        self.state.node_update_status(t, TaskStatus::Releasing);
        self.plugins.on_deallocate(&mut self.state, t);
    }

    /// Commits: evictions and binds become decisions (Allocated → Binding), in operation
    /// order; pipelined tasks stay Pipelined in the session.
    pub fn commit(&mut self, st: Statement<'a>) {
        for op in st.ops.iter() {
            match op.kind {
                OpKind::Evict => self.state.evictions.push((op.task, op.reason.to_string())),
                OpKind::Pipeline | OpKind::UnPipeline => {}
                OpKind::Allocate => self.dispatch(op.task),
            }
        }
    }

    /// Discards: undoes every operation in reverse order, recording each undone operation as
    /// the task's last transaction (Volcano `GenerateLastTxContext`).
    pub fn discard(&mut self, st: Statement<'a>) {
        for op in st.ops.iter().rev() {
            let t = op.task;
            self.state.tasks.last_status[t.ix()] = self.state.tasks.status[t.ix()];
            self.state.tasks.last_node[t.ix()] = op.node.0;
            match op.kind {
                OpKind::Allocate | OpKind::Pipeline => {
                    self.state.device_release(t, op.node, op.cards);
                    self.state.node_remove_task(t);
                    self.state.set_status(t, op.prev);
                    self.state.tasks.eviction_occurred[t.ix()] = op.prev_eviction_occurred;
                    self.plugins.on_deallocate(&mut self.state, t);
                }
                OpKind::UnPipeline => {
                    self.state.set_status(t, TaskStatus::Pipelined);
                    self.state.node_insert_task(t, op.node, op.next_on_node);
                    self.state.device_take(t, op.node, op.cards);
                    self.plugins.on_allocate(&mut self.state, t);
                }
                OpKind::Evict => {
                    self.state.node_update_status(t, op.prev);
                    self.state.device_take(t, op.node, op.cards);
                    self.plugins.on_allocate(&mut self.state, t);
                }
            }
        }
    }

    /// Dispatch: Allocated → Binding, and a bind decision.
    fn dispatch(&mut self, t: TaskIdx) {
        if self.state.tasks.status[t.ix()] != TaskStatus::Allocated {
            return;
        }
        let n = NodeIdx(self.state.tasks.node[t.ix()]);
        self.state.set_status(t, TaskStatus::Binding);
        self.state.binds.push((t, n));
    }

    /// Non-transactional `ssn.Allocate` (backfill): allocate, and when the job is ready
    /// dispatch all of its Allocated tasks.
    pub fn allocate_now(&mut self, t: TaskIdx, n: NodeIdx) -> bool {
        let req = self.state.tasks.req(t, self.state.dims);
        if !self.state.fits_idle(req, n) {
            return false;
        }
        let Some(cards) = self.state.device_pick(t, n, self.arena) else { return false };
        self.state.set_status(t, TaskStatus::Allocated);
        self.state.node_add_task(t, n);
        self.state.device_take(t, n, cards);
        self.plugins.on_allocate(&mut self.state, t);
        if let Some(j) = self.state.tasks.job_of(t) {
            if self.plugins.job_ready(&self.state, j) {
                for x in self.state.jobs.tasks(j) {
                    self.dispatch(x);
                }
            }
        }
        true
    }
}
