//! `shuffle` (volcano-behaviour.md §2, Volcano `actions/shuffle/shuffle.go`): the plugins'
//! `VictimTasks` (the rescheduling plugin's strategies, [`crate::plugins::rescheduling`]) pick
//! among every Running task of the session, and each victim is evicted at once with reason
//! `shuffle`.
//!
//! Volcano calls `ssn.Evict` for each victim, outside any statement; Basalt evicts them through
//! one statement committed right away, which gives the same decisions (each victim Releasing
//! for the rest of the session, one eviction decision each, in the plugins' order). The action
//! takes no arguments.

use crate::framework::Session;
use crate::session::tables::{TaskIdx, TaskStatus};

/// Volcano's eviction reason for this action.
pub const REASON: &str = "shuffle";

/// Runs shuffle.
pub fn execute(ssn: &mut Session<'_>) {
    let s = &ssn.state;
    // Volcano walks jobs, then each job's tasks; tasks without a job are not in a job's list.
    let running: Vec<TaskIdx> = (0..s.jobs.len)
        .flat_map(|j| s.jobs.tasks(crate::session::tables::JobIdx(j as u32)))
        .filter(|&t| s.tasks.status()[t.ix()] == TaskStatus::Running)
        .collect();
    if running.is_empty() {
        return;
    }
    let (mut victims, mut scratch) = (Vec::new(), Vec::new());
    ssn.plugins.victim_tasks(&ssn.state, &running, &mut victims, &mut scratch);
    if victims.is_empty() {
        return;
    }
    let mut stmt = ssn.statement();
    for v in victims {
        // Plugins return candidates (Running tasks of jobs); one returned twice goes once.
        if ssn.state.tasks.status()[v.ix()] == TaskStatus::Running && ssn.state.tasks.job_of(v).is_some() {
            ssn.evict(&mut stmt, v, REASON);
        }
    }
    ssn.commit(stmt);
}
