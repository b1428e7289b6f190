//! Whether a PodGroup's task counts (`status.running`, `succeeded`, `failed`) differ from what
//! the cycle computed: Volcano writes the PodGroup when they do, even with phase and conditions
//! unchanged (`isPodGroupStatusUpdated`, volcano-behaviour.md §1.7).

use basalt_core::decision::PodGroupStatus;

/// Whether the counts of `s` differ from those of the PodGroup object `obj` (its JSON as the
/// API server returned it; an absent count reads as 0, as Volcano's `int32` fields with
/// `omitempty` do).
pub fn changed(obj: &serde_json::Value, s: &PodGroupStatus) -> bool {
    let count = |field: &str| obj.pointer(&format!("/status/{field}")).and_then(serde_json::Value::as_i64).unwrap_or(0);
    count("running") != i64::from(s.running)
        || count("succeeded") != i64::from(s.succeeded)
        || count("failed") != i64::from(s.failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::cluster::PodGroupId;
    use basalt_core::model::PodGroupPhase;

    fn status(running: i32, succeeded: i32, failed: i32) -> PodGroupStatus {
        PodGroupStatus {
            group: PodGroupId(0),
            phase: PodGroupPhase::Running,
            conditions: vec![],
            running,
            succeeded,
            failed,
            changed: false,
        }
    }

    #[test]
    fn pod_group_counts_changed_compares_running_succeeded_failed() {
        let obj = serde_json::json!({"status": {"phase": "Running", "running": 3}});
        assert!(!changed(&obj, &status(3, 0, 0)), "same counts: no write");
        assert!(changed(&obj, &status(2, 1, 0)), "one pod succeeded");
        assert!(changed(&obj, &status(3, 0, 1)), "one pod failed");
        assert!(changed(&serde_json::json!({}), &status(1, 0, 0)), "no status yet, one running");
        assert!(!changed(&serde_json::json!({}), &status(0, 0, 0)), "absent counts read as 0");
    }
}
