//! Statement discard restores the session exactly: allocate and pipeline tasks inside a
//! Statement, discard it, and compare everything observable with the state before.

use basalt_core::framework::fingerprint::NodeTasks;
use basalt_core::framework::Session;
use basalt_core::session::tables::{NodeIdx, TaskIdx, TaskStatus};
use basalt_core::{Cluster, CycleOptions, SchedulerConf};

/// Applies `ops` (task, node, pipeline) to Pending tasks inside one Statement, discards it and
/// asserts the session is as before.
pub fn discard_restores(cluster: &Cluster, conf: &SchedulerConf, ops: &[(u8, u8, bool)]) {
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, cluster, conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let (nt, nn) = (ssn.state.tasks.len, ssn.state.nodes.len);
    if nt == 0 || nn == 0 || ops.is_empty() {
        return;
    }
    let before = ssn.fingerprint(NodeTasks::AsSet);
    let mut st = ssn.statement();
    for &(t, n, pipe) in ops.iter().take(16) {
        let t = TaskIdx(t as u32 % nt as u32);
        let n = NodeIdx(n as u32 % nn as u32);
        if ssn.state.tasks.status()[t.ix()] != TaskStatus::Pending {
            continue;
        }
        if pipe {
            ssn.pipeline(&mut st, t, n);
        } else {
            ssn.allocate(&mut st, t, n);
        }
    }
    ssn.discard(st);
    assert_eq!(before, ssn.fingerprint(NodeTasks::AsSet), "Statement discard did not restore the session");
}
