//! Statement discard restores the session exactly: allocate and pipeline tasks inside a
//! Statement, discard it, and compare everything observable with the state before.

use basalt_core::session::tables::{JobIdx, NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use basalt_core::session::Session;
use basalt_core::{Cluster, CycleOptions, SchedulerConf};

/// Everything observable about a session: tables, tasks per node, and the plugin orders and
/// votes that read plugin state.
fn snapshot(ssn: &Session<'_>) -> String {
    let s = &ssn.state;
    let mut out = format!(
        "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
        s.nodes.idle,
        s.nodes.used,
        s.nodes.releasing,
        s.nodes.pipelined,
        s.view.pods,
        s.tasks.status,
        s.tasks.node,
        s.jobs.counts,
        s.view.nonzero_cpu,
        s.view.nonzero_mem,
        s.view.requested,
        s.view.node
    );
    for n in 0..s.nodes.len {
        let mut on: Vec<_> = s.tasks_on(NodeIdx(n as u32)).collect();
        on.sort();
        out.push_str(&format!("{on:?}"));
    }
    for a in 0..s.jobs.len {
        let j = JobIdx(a as u32);
        out.push_str(&format!("{}{}", ssn.plugins.job_ready(s, j), ssn.plugins.job_pipelined(s, j)));
        for b in 0..s.jobs.len {
            out.push_str(&format!("{:?}", ssn.plugins.job_order(s, j, JobIdx(b as u32))));
        }
    }
    for a in 0..s.queues.len {
        let q = QueueIdx(a as u32);
        out.push_str(&format!("{}", ssn.plugins.overused(s, q)));
        for b in 0..s.queues.len {
            out.push_str(&format!("{:?}", ssn.plugins.queue_order(s, q, QueueIdx(b as u32))));
        }
        for t in 0..s.tasks.len {
            out.push_str(&format!("{}", ssn.plugins.allocatable(s, q, TaskIdx(t as u32))));
        }
    }
    out
}

/// Applies `ops` (task, node, pipeline) to Pending tasks inside one Statement, discards it and
/// asserts the session is as before.
pub fn discard_restores(cluster: &Cluster, conf: &SchedulerConf, ops: &[(u8, u8, bool)]) {
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, cluster, conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let (nt, nn) = (ssn.state.tasks.len, ssn.state.nodes.len);
    if nt == 0 || nn == 0 || ops.is_empty() {
        return;
    }
    let before = snapshot(&ssn);
    let mut st = ssn.statement();
    for &(t, n, pipe) in ops.iter().take(16) {
        let t = TaskIdx(t as u32 % nt as u32);
        let n = NodeIdx(n as u32 % nn as u32);
        if ssn.state.tasks.status[t.ix()] != TaskStatus::Pending {
            continue;
        }
        if pipe {
            ssn.pipeline(&mut st, t, n);
        } else {
            ssn.allocate(&mut st, t, n);
        }
    }
    ssn.discard(st);
    assert_eq!(before, snapshot(&ssn), "Statement discard did not restore the session");
}
