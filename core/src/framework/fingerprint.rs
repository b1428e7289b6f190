//! A session's observable state as text, for checks that an operation left it exactly as it
//! was: a discarded [`super::statement::Statement`] must restore everything this covers (the
//! property tests and the fuzz targets compare fingerprints before and after).
//!
//! Not for the hot path: it formats every table and asks the plugins about every pair of jobs
//! and queues, O(jobs² + queues² + queues × tasks).

use super::Session;
use crate::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx};
use std::fmt::Write;

/// How a fingerprint lists the tasks on each node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeTasks {
    /// In the session's own order (which victim orderings depend on).
    InOrder,
    /// Sorted: only which tasks are on the node.
    AsSet,
}

impl Session<'_> {
    /// Everything observable about the session: the node, task, job and queue tables (idle,
    /// used, releasing, pipelined, statuses, placements, job counts, eviction flags, the
    /// evictions, queue allocated with and without descendants), the predicates' node view,
    /// the tasks on each node (`tasks`), and what the plugins answer that reads plugin state
    /// (job ready / pipelined / starving, job and queue order, queue overused and allocatable
    /// per task).
    pub fn fingerprint(&self, tasks: NodeTasks) -> String {
        let s = &self.state;
        let mut out = format!(
            "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
            s.nodes.acct(),
            s.view.sums(),
            s.tasks.status(),
            s.tasks.node(),
            s.jobs.counts(),
            s.view.node(),
            s.tasks.eviction_occurred(),
            s.evictions,
            s.queues.acct.allocated(),
            s.queues.acct.tree_allocated(),
        );
        for n in 0..s.nodes.len {
            let mut on: Vec<_> = s.tasks_on(NodeIdx(n as u32)).collect();
            if tasks == NodeTasks::AsSet {
                on.sort();
            }
            let _ = write!(out, "{on:?}");
        }
        let p = &self.plugins;
        for a in 0..s.jobs.len {
            let j = JobIdx(a as u32);
            let _ = write!(out, "{}{}{}", p.job_ready(s, j), p.job_pipelined(s, j), p.job_starving(s, j));
            for b in 0..s.jobs.len {
                let _ = write!(out, "{:?}", p.job_order(s, j, JobIdx(b as u32)));
            }
        }
        for a in 0..s.queues.len {
            let q = QueueIdx(a as u32);
            let _ = write!(out, "{}", p.overused(s, q));
            for b in 0..s.queues.len {
                let _ = write!(out, "{:?}", p.queue_order(s, q, QueueIdx(b as u32)));
            }
            for t in 0..s.tasks.len {
                let _ = write!(out, "{}", u8::from(p.allocatable(s, q, TaskIdx(t as u32))));
            }
        }
        out
    }
}
