//! `enqueue` (volcano-behaviour.md §2): admits Pending PodGroups (phase → Inqueue) queue by
//! queue in round robin, in queue and job order, when their `minResources` is unset or every
//! JobEnqueueable vote allows it. Rejected PodGroups wait for the next cycle.

use super::heap::GoHeap;
use crate::decision::Event;
use crate::framework::Session;
use crate::model::PodGroupPhase;
use crate::session::tables::{JobIdx, QueueIdx};
use std::cmp::Ordering;

/// Runs enqueue.
pub fn execute(ssn: &mut Session<'_>) {
    let s = &ssn.state;
    let mut queues: GoHeap<QueueIdx> = GoHeap::default();
    let mut queue_seen = vec![false; s.queues.len];
    let mut jobs: Vec<GoHeap<JobIdx>> = vec![GoHeap::default(); s.queues.len];
    {
        let (st, pl) = (&ssn.state, &ssn.plugins);
        let mut qless = |a: QueueIdx, b: QueueIdx| pl.queue_order(st, a, b) == Ordering::Less;
        let mut jless = |a: JobIdx, b: JobIdx| pl.job_order(st, a, b) == Ordering::Less;
        for j in (0..st.jobs.len).map(|i| JobIdx(i as u32)) {
            let q = st.jobs.queue[j.ix()] as usize;
            if !queue_seen[q] {
                queue_seen[q] = true;
                queues.push(QueueIdx(q as u32), &mut qless);
            }
            if st.jobs.is_pending(j) {
                jobs[q].push(j, &mut jless);
            }
        }
    }
    loop {
        let q = {
            let (st, pl) = (&ssn.state, &ssn.plugins);
            match queues.pop_ordered(pl, st) {
                Some(q) => q,
                None => break,
            }
        };
        let j = {
            let (st, pl) = (&ssn.state, &ssn.plugins);
            match jobs[q.ix()].pop_ordered(pl, st) {
                Some(j) => j,
                None => continue,
            }
        };
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
                        message,
                    });
                }
            }
        }
        let (st, pl) = (&ssn.state, &ssn.plugins);
        queues.push_ordered(q, pl, st);
    }
}
