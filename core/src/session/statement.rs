//! Volcano's `Statement`: an undo log of Allocate, Pipeline and Evict operations on the
//! session. `commit` turns them into decisions (binds, evictions); `discard` undoes them in
//! reverse order and restores the session exactly (`framework/statement.go`).

use super::tables::*;
use super::Session;
use bumpalo::collections::Vec as BVec;

/// What an operation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Task → Allocated on a node (idle taken).
    Allocate,
    /// Task → Pipelined on a node (waits for releasing resources).
    Pipeline,
    /// Task → Releasing (evicted; its resources are releasing).
    Evict,
}

/// One logged operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Kind.
    pub kind: OpKind,
    /// Task.
    pub task: TaskIdx,
    /// Node.
    pub node: NodeIdx,
    /// Status before the operation.
    pub prev: TaskStatus,
}

/// An open transaction on the session, allocated from the session arena.
pub struct Statement<'a> {
    ops: BVec<'a, Op>,
    reasons: Vec<String>,
}

impl<'a> Statement<'a> {
    /// Operations so far.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// Whether nothing was done.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

impl<'a> Session<'a> {
    /// A new, empty statement.
    pub fn statement(&self) -> Statement<'a> {
        Statement { ops: BVec::new_in(self.arena), reasons: Vec::new() }
    }

    /// Statement `Allocate`: `t` takes idle resources of `n`. Fails (changing nothing) when
    /// `t`'s request does not fit `n`'s idle.
    pub fn allocate(&mut self, st: &mut Statement<'a>, t: TaskIdx, n: NodeIdx) -> bool {
        let req = self.state.tasks.req(t, self.state.dims);
        if !self.state.fits_idle(req, n) {
            return false;
        }
        let prev = self.state.tasks.status[t.ix()];
        self.state.set_status(t, TaskStatus::Allocated);
        self.state.node_add_task(t, n);
        self.plugins.on_allocate(&mut self.state, t);
        st.ops.push(Op { kind: OpKind::Allocate, task: t, node: n, prev });
        true
    }

    /// Statement `Pipeline`: `t` waits on `n` for releasing resources.
    pub fn pipeline(&mut self, st: &mut Statement<'a>, t: TaskIdx, n: NodeIdx) {
        let prev = self.state.tasks.status[t.ix()];
        self.state.set_status(t, TaskStatus::Pipelined);
        self.state.node_add_task(t, n);
        self.plugins.on_allocate(&mut self.state, t);
        st.ops.push(Op { kind: OpKind::Pipeline, task: t, node: n, prev });
    }

    /// Statement `Evict`: `t` becomes Releasing on its node.
    pub fn evict(&mut self, st: &mut Statement<'a>, t: TaskIdx, reason: &str) {
        let Some(n) = self.state.tasks.node_of(t) else {
            return;
        };
        let prev = self.state.tasks.status[t.ix()];
        self.state.node_remove_task(t);
        self.state.set_status(t, TaskStatus::Releasing);
        self.state.node_add_task(t, n);
        self.plugins.on_deallocate(&mut self.state, t);
        st.ops.push(Op { kind: OpKind::Evict, task: t, node: n, prev });
        st.reasons.push(reason.to_string());
    }

    /// Commits: evictions and binds become decisions (Allocated → Binding); pipelined tasks
    /// stay Pipelined in the session.
    pub fn commit(&mut self, st: Statement<'a>) {
        let mut reasons = st.reasons.into_iter();
        for op in st.ops.iter() {
            match op.kind {
                OpKind::Evict => {
                    let r = reasons.next().unwrap_or_default();
                    self.state.evictions.push((op.task, r));
                }
                OpKind::Pipeline => {}
                OpKind::Allocate => self.dispatch(op.task),
            }
        }
    }

    /// Discards: undoes every operation in reverse order, recording each undone allocation
    /// as the task's last transaction.
    pub fn discard(&mut self, st: Statement<'a>) {
        for op in st.ops.iter().rev() {
            let t = op.task;
            match op.kind {
                OpKind::Allocate | OpKind::Pipeline => {
                    self.state.tasks.last_status[t.ix()] = self.state.tasks.status[t.ix()];
                    self.state.tasks.last_node[t.ix()] = op.node.0;
                    self.state.node_remove_task(t);
                    self.state.set_status(t, op.prev);
                    self.plugins.on_deallocate(&mut self.state, t);
                }
                OpKind::Evict => {
                    self.state.node_remove_task(t);
                    self.state.set_status(t, op.prev);
                    self.state.node_add_task(t, op.node);
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
        self.state.set_status(t, TaskStatus::Allocated);
        self.state.node_add_task(t, n);
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
