//! `backfill` (volcano-behaviour.md §2): places BestEffort tasks (no requests) of non-pending,
//! valid jobs, queue → job → task order, with the predicates but no resource check, through the
//! session's non-transactional allocate (binds once the job is ready).

use super::heap::GoHeap;
use crate::framework::k8s::PodCtx;
use crate::framework::Session;
use crate::select::nodes::{best_node, predicate_nodes, NodeScan};
use crate::session::tables::{JobIdx, QueueIdx, TaskIdx, TaskStatus};

/// Runs backfill.
pub fn execute(ssn: &mut Session<'_>) {
    let args = ssn.state.conf.action_arguments("backfill");
    let use_cache = args.bool("predicateErrorCacheEnable").unwrap_or(true);
    let nq = ssn.state.queues.len;
    let mut queues: GoHeap<QueueIdx> = GoHeap::default();
    let mut queue_seen = vec![false; nq];
    let mut jobs: Vec<GoHeap<JobIdx>> = vec![GoHeap::default(); nq];
    let mut tasks: Vec<GoHeap<TaskIdx>> = vec![GoHeap::default(); ssn.state.jobs.len];
    for j in (0..ssn.state.jobs.len).map(|i| JobIdx(i as u32)) {
        if ssn.state.jobs.is_pending(j) || ssn.plugins.job_valid(&ssn.state, j).is_some() {
            continue;
        }
        // Pipelined BestEffort tasks are un-pipelined first.
        let pipelined: Vec<TaskIdx> = ssn
            .state
            .jobs
            .tasks(j)
            .filter(|&t| ssn.state.tasks.status()[t.ix()] == TaskStatus::Pipelined && ssn.state.tasks.best_effort[t.ix()])
            .collect();
        if !pipelined.is_empty() {
            let mut stmt = ssn.statement();
            for t in pipelined {
                ssn.unpipeline(&mut stmt, t);
            }
            ssn.commit(stmt);
        }
        let (st, pl) = (&ssn.state, &ssn.plugins);
        for t in st.jobs.tasks(j) {
            if st.tasks.status()[t.ix()] == TaskStatus::Pending
                && st.tasks.best_effort[t.ix()]
                && !st.tasks.rec[t.ix()].spec.scheduling_gated
            {
                tasks[j.ix()].push_ordered(t, pl, st);
            }
        }
        if tasks[j.ix()].is_empty() {
            continue;
        }
        let q = st.jobs.queue[j.ix()] as usize;
        if !queue_seen[q] {
            queue_seen[q] = true;
            queues.push_ordered(QueueIdx(q as u32), pl, st);
        }
        jobs[q].push_ordered(j, pl, st);
    }
    let mut order = Vec::new();
    {
        let (st, pl) = (&ssn.state, &ssn.plugins);
        while let Some(q) = queues.pop_ordered(pl, st) {
            while let Some(j) = jobs[q.ix()].pop_ordered(pl, st) {
                while let Some(t) = tasks[j.ix()].pop_ordered(pl, st) {
                    order.push((j, t));
                }
            }
        }
    }
    let mut scan = NodeScan::new(ssn.state.nodes.len, use_cache);
    for (j, t) in order {
        if let Err(e) = ssn.plugins.pre_predicate(&ssn.state, t) {
            let mut fe = crate::session::fit::FitErrors::message_only(e);
            fe.nodes = ssn.state.nodes.len as u32;
            ssn.state.set_fit_errors(j, t, fe);
            continue;
        }
        let ctx = PodCtx::build(&ssn.state, t, ssn.plugins.scores_nodes());
        let fe = predicate_nodes(ssn, &mut scan, &ctx, j, t, false);
        if scan.feasible.is_empty() {
            ssn.state.set_fit_errors(j, t, fe);
            continue;
        }
        // Under soft node sharding in-shard nodes first (Volcano `GetPredicatedNodeByShard`).
        let mut feasible = std::mem::take(&mut scan.feasible);
        let soft = ssn.state.options().sharding_mode == crate::model::ShardingMode::Soft;
        if soft && feasible.iter().any(|&n| ssn.state.in_shard(n)) {
            feasible.retain(|&n| ssn.state.in_shard(n));
        }
        let n = best_node(ssn, &mut scan, &ctx, t, &feasible);
        scan.feasible = feasible;
        ssn.allocate_now(t, n);
    }
}
