//! The Queue tables, byte for byte as Volcano prints them:
//!
//! * `vcctl queue list|get` (`queue.PrintQueues`, `PrintQueue`): `Name` 25, `Weight`, `State`,
//!   `Parent`, `Inqueue`, `Pending`, `Running`, `Unknown`, `Completed` 8 each, the counts being
//!   the PodGroups of the queue per phase ([`PodGroupCounts`]);
//! * `vqueues` (`vqueues.PrintQueues`): `Name` 25, `Weight`, `State`, `Inqueue`, `Pending`,
//!   `Running`, `Unknown` 8 each, the counts read from the Queue's `status`.
//!
//! `Weight` is `spec.weight` as stored (0 when unset, as Go prints an unset field).

use crate::crd::{PodGroup, Queue};
use std::collections::BTreeMap;
use std::fmt::Write;

/// PodGroups of one queue per phase (Volcano's `podgroup.PodGroupStatistics`); phases other
/// than these five are not counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodGroupCounts {
    /// Phase `Inqueue`.
    pub inqueue: i32,
    /// Phase `Pending`.
    pub pending: i32,
    /// Phase `Running`.
    pub running: i32,
    /// Phase `Unknown`.
    pub unknown: i32,
    /// Phase `Completed`.
    pub completed: i32,
}

impl PodGroupCounts {
    /// Counts `pg` by its `status.phase`.
    pub fn add(&mut self, pg: &PodGroup) {
        match pg.status.as_ref().and_then(|s| s.phase.as_deref()) {
            Some("Inqueue") => self.inqueue += 1,
            Some("Pending") => self.pending += 1,
            Some("Running") => self.running += 1,
            Some("Unknown") => self.unknown += 1,
            Some("Completed") => self.completed += 1,
            _ => {}
        }
    }
}

/// The counts per queue name of `pod_groups` (by `spec.queue`), for the queues in `queues` only.
pub fn counts_by_queue(queues: &[Queue], pod_groups: &[PodGroup]) -> BTreeMap<String, PodGroupCounts> {
    let mut out: BTreeMap<String, PodGroupCounts> =
        queues.iter().map(|q| (q.metadata.name.clone().unwrap_or_default(), PodGroupCounts::default())).collect();
    for pg in pod_groups {
        if let Some(c) = pg.spec.queue.as_deref().and_then(|q| out.get_mut(q)) {
            c.add(pg);
        }
    }
    out
}

fn name(q: &Queue) -> &str {
    q.metadata.name.as_deref().unwrap_or("")
}

fn state(q: &Queue) -> &str {
    q.status.as_ref().and_then(|s| s.state.as_deref()).unwrap_or("")
}

/// `vcctl queue list` (every queue) and `vcctl queue get` (one): header, then a row per queue
/// with its PodGroup counts from `counts` (zeros when absent).
pub fn queues_table(queues: &[Queue], counts: &BTreeMap<String, PodGroupCounts>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<25}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}",
        "Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed"
    );
    for q in queues {
        let c = counts.get(name(q)).copied().unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<25}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}",
            name(q),
            q.spec.weight.unwrap_or(0),
            state(q),
            q.spec.parent.as_deref().unwrap_or(""),
            c.inqueue,
            c.pending,
            c.running,
            c.unknown,
            c.completed
        );
    }
    out
}

/// `vqueues`: header, then a row per queue with the counts of its `status`.
pub fn vqueues_table(queues: &[Queue]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<25}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}",
        "Name", "Weight", "State", "Inqueue", "Pending", "Running", "Unknown"
    );
    for q in queues {
        let st = q.status.clone().unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<25}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}",
            name(q),
            q.spec.weight.unwrap_or(0),
            state(q),
            st.inqueue.unwrap_or(0),
            st.pending.unwrap_or(0),
            st.running.unwrap_or(0),
            st.unknown.unwrap_or(0)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(yaml: &str) -> Queue {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn pg(queue: &str, phase: &str) -> PodGroup {
        serde_yaml::from_str(&format!(
            "metadata: {{name: pg, namespace: ns}}\nspec: {{queue: {queue}}}\nstatus: {{phase: {phase}}}\n"
        ))
        .unwrap()
    }

    #[test]
    fn queue_list_is_volcanos() {
        let queues = [
            queue("metadata: {name: default}\nspec: {weight: 1, parent: root}\nstatus: {state: Open}\n"),
            queue("metadata: {name: research-team-queue-long}\nspec: {weight: 12}\nstatus: {state: Closed}\n"),
        ];
        let pgs = [
            pg("default", "Running"),
            pg("default", "Running"),
            pg("default", "Inqueue"),
            pg("default", "Pending"),
            pg("default", "Completed"),
            pg("default", "Unknown"),
            pg("elsewhere", "Running"),
        ];
        let counts = counts_by_queue(&queues, &pgs);
        assert_eq!(counts["default"], PodGroupCounts { inqueue: 1, pending: 1, running: 2, unknown: 1, completed: 1 });
        assert!(!counts.contains_key("elsewhere"), "only listed queues are counted");
        let want = "\
Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed
default                  1       Open    root    1       1       2       1       1       
research-team-queue-long 12      Closed          0       0       0       0       0       
";
        assert_eq!(queues_table(&queues, &counts), want);
    }

    #[test]
    fn vqueues_reads_the_status_counts() {
        let q = queue("metadata: {name: q1}\nspec: {}\nstatus: {state: Open, running: 3, pending: 2}\n");
        let want = "\
Name                     Weight  State   Inqueue Pending Running Unknown 
q1                       0       Open    0       2       3       0       
";
        assert_eq!(vqueues_table(&[q]), want);
    }
}
