//! `enqueue` (volcano-behaviour.md §2): admits Pending PodGroups (phase → Inqueue) queue by
//! queue in round robin, in queue and job order, when their `minResources` is unset or every
//! JobEnqueueable vote allows it. Rejected PodGroups wait for the next cycle.

use super::heap::GoHeap;
use crate::decision::Event;
use crate::framework::Session;
use crate::model::PodGroupPhase;
use crate::session::tables::{JobIdx, QueueIdx};

/// Runs enqueue.
pub fn execute(ssn: &mut Session<'_>) {
    let s = &ssn.state;
    let mut queues: GoHeap<QueueIdx> = GoHeap::default();
    let mut queue_seen = vec![false; s.queues.len];
    let mut jobs: Vec<GoHeap<JobIdx>> = vec![GoHeap::default(); s.queues.len];
    for j in (0..s.jobs.len).map(|i| JobIdx(i as u32)) {
        let q = s.jobs.queue[j.ix()] as usize;
        if !queue_seen[q] {
            queue_seen[q] = true;
            queues.push_by(QueueIdx(q as u32), ssn);
        }
        if s.jobs.is_pending(j) {
            jobs[q].push_by(j, ssn);
        }
    }
    while let Some(q) = queues.pop_by(ssn) {
        let Some(j) = jobs[q.ix()].pop_by(ssn) else { continue };
        let has_min = ssn.state.jobs.rec[j.ix()].min_resources.is_some();
        let verdict = if has_min { ssn.plugins.job_enqueueable_why(&ssn.state, j) } else { Ok(()) };
        match verdict {
            Ok(()) => {
                ssn.plugins.job_enqueued(&mut ssn.state, j);
                ssn.state.set_phase(j, PodGroupPhase::Inqueue);
            }
            Err(plugin) => {
                // The PodGroup events Volcano's plugins record when they refuse a job.
                let message = match plugin {
                    "proportion" | "capacity" => "queue resource quota insufficient".to_string(),
                    "overcommit" => "resource in cluster is overused".to_string(),
                    other => ssn.plugins.enqueue_rejection(other, &ssn.state, j).unwrap_or_default(),
                };
                if !message.is_empty() {
                    ssn.state.events.push(Event {
                        group: ssn.state.jobs.group[j.ix()],
                        kind: "Normal",
                        reason: "Unschedulable".into(),
                        message: message.into(),
                    });
                }
            }
        }
        queues.push_by(q, ssn);
    }
}
