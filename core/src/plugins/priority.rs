//! `priority` (volcano-behaviour.md §3): higher task priority first, higher job priority
//! (PriorityClass value) first; a job starves while Ready + Waiting < #tasks.

use crate::session::tables::{JobIdx, TaskIdx};
use crate::session::State;
use std::cmp::Ordering;

/// The priority plugin (stateless).
pub struct Priority;

plugin_impl! {
    impl<'a> for Priority {
        fn name(&self) -> &'static str {
            "priority"
        }
        fn task_order(&self, s: &State<'a>, l: TaskIdx, r: TaskIdx) -> Ordering {
            s.tasks.priority[r.ix()].cmp(&s.tasks.priority[l.ix()])
        }
        fn job_order(&self, s: &State<'a>, l: JobIdx, r: JobIdx) -> Ordering {
            s.jobs.priority[r.ix()].cmp(&s.jobs.priority[l.ix()])
        }
        fn job_starving(&self, s: &State<'a>, j: JobIdx) -> bool {
            s.jobs.ready_num(j) + s.jobs.waiting_num(j) < s.jobs.task_count(j) as i32
        }
    }
}
