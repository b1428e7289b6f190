//! The Queue controller's pure part (volcano-behaviour.md §5.3, Volcano's
//! `pkg/controllers/queue/state`): the queue state machine (Open, Closing, Closed, Unknown) under
//! the actions SyncQueue, OpenQueue and CloseQueue, the PodGroup phase counts (metrics, not
//! `status`), the `status.state` write, `spec.parent` defaulting and the parent → child
//! propagation of closing.

use std::collections::BTreeMap;

/// Queue annotation set on a child closed because its parent closed; reopening the parent
/// reopens exactly the children that carry it.
pub const CLOSED_BY_PARENT: &str = "volcano.sh/closed-by-parent";
/// The root of the queue hierarchy: never closed, has no parent.
pub const ROOT: &str = "root";

/// `Queue.status.state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueState {
    /// Accepts new PodGroups.
    Open,
    /// Closed while PodGroups remain; becomes Closed once none does.
    Closing,
    /// Accepts no new PodGroups and has none.
    Closed,
    /// Inconsistent; left alone until an OpenQueue or CloseQueue.
    Unknown,
}

impl QueueState {
    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueState::Open => "Open",
            QueueState::Closing => "Closing",
            QueueState::Closed => "Closed",
            QueueState::Unknown => "Unknown",
        }
    }

    /// Parses `status.state` of Queue `queue`: unset or empty is Open (a new queue).
    ///
    /// Errors: any other spelling, naming the queue and field.
    pub fn parse(queue: &str, state: Option<&str>) -> Result<QueueState, String> {
        match state.unwrap_or_default() {
            "" | "Open" => Ok(QueueState::Open),
            "Closing" => Ok(QueueState::Closing),
            "Closed" => Ok(QueueState::Closed),
            "Unknown" => Ok(QueueState::Unknown),
            other => Err(format!("Queue {queue}: status.state {other:?} is not Open, Closing, Closed or Unknown")),
        }
    }

    /// Closed or Closing.
    pub fn is_closed(self) -> bool {
        matches!(self, QueueState::Closed | QueueState::Closing)
    }
}

/// What a queue request asks (Volcano's `SyncQueue`, `OpenQueue`, `CloseQueue` actions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueAction {
    /// Recount and settle the state (queue or PodGroup changed).
    Sync,
    /// A Command `OpenQueue`, or a parent reopened.
    Open,
    /// A Command `CloseQueue`, or a parent closed.
    Close,
}

impl QueueAction {
    /// The action a Command's `action` names, if it is a queue action.
    pub fn from_command(action: &str) -> Option<QueueAction> {
        match action {
            "OpenQueue" => Some(QueueAction::Open),
            "CloseQueue" => Some(QueueAction::Close),
            _ => None,
        }
    }
}

/// The state after `action` on a queue in state `current` that has `pod_groups` PodGroups (of
/// any phase), as Volcano's `state/{open,closing,closed,unknown}.go`:
///
/// | current | OpenQueue | CloseQueue | SyncQueue |
/// |---|---|---|---|
/// | Open | Open | Closed if none, else Closing | Open |
/// | Closing | Open | Closed if none, else Closing | Closed if none, else Closing |
/// | Closed | Open | Closed | Closed |
/// | Unknown | Open | Closed if none, else Closing | Unknown |
pub fn next_state(current: QueueState, action: QueueAction, pod_groups: usize) -> QueueState {
    let drained = if pod_groups == 0 { QueueState::Closed } else { QueueState::Closing };
    match (current, action) {
        (_, QueueAction::Open) => QueueState::Open,
        (QueueState::Closed, _) => QueueState::Closed,
        (_, QueueAction::Close) | (QueueState::Closing, QueueAction::Sync) => drained,
        (s, QueueAction::Sync) => s,
    }
}

/// Whether `action` on a queue in state `current` closes it freshly, so its children must be
/// closed too (Volcano's `closeQueue` runs `closeHierarchicalQueue` only from Open or Unknown).
pub fn closes_children(current: QueueState, action: QueueAction) -> bool {
    action == QueueAction::Close && !current.is_closed()
}

/// What a queue must do to agree with its parent (Volcano's `syncHierarchicalQueue`): close
/// (and be marked [`CLOSED_BY_PARENT`]) when it is Open under a Closed or Closing parent; open
/// when the parent is Open and it was closed by a parent. `None`: nothing (no parent known,
/// or already consistent).
pub fn follow_parent(state: QueueState, closed_by_parent: bool, parent: Option<QueueState>) -> Option<QueueAction> {
    match parent? {
        p if p.is_closed() && state == QueueState::Open => Some(QueueAction::Close),
        QueueState::Open if state.is_closed() && closed_by_parent => Some(QueueAction::Open),
        _ => None,
    }
}

/// Why an OpenQueue must wait: the parent is still Closed or Closing (Volcano returns an
/// error and retries). `None` when the queue may open.
pub fn open_blocked(queue: &str, parent_name: &str, parent: Option<QueueState>) -> Option<String> {
    parent
        .filter(|p| p.is_closed())
        .map(|p| format!("Queue {queue}: cannot open while its parent Queue {parent_name} is {}", p.as_str()))
}

/// `spec.parent` a queue must be given: `root` for a non-root queue that names none (Volcano's
/// `updateQueueParent`); `None` when it needs no change.
pub fn default_parent(name: &str, parent: Option<&str>) -> Option<&'static str> {
    (name != ROOT && parent.unwrap_or_default().is_empty()).then_some(ROOT)
}

/// PodGroups of a queue by `status.phase` (a PodGroup with no or another phase is counted in
/// none): Volcano's `buildQueueStatus` counts, which it exports as the metrics
/// `volcano_queue_pod_group_{pending,running,inqueue,unknown,completed}_count` and no longer
/// writes into the Queue's `status` (volcano-behaviour.md §4, §9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseCounts {
    /// Phase Pending.
    pub pending: i32,
    /// Phase Running.
    pub running: i32,
    /// Phase Inqueue.
    pub inqueue: i32,
    /// Phase Unknown.
    pub unknown: i32,
    /// Phase Completed.
    pub completed: i32,
}

impl PhaseCounts {
    /// Counts `phases`.
    pub fn of<'a>(phases: impl IntoIterator<Item = &'a str>) -> PhaseCounts {
        let mut c = PhaseCounts::default();
        for p in phases {
            match p {
                "Pending" => c.pending += 1,
                "Running" => c.running += 1,
                "Inqueue" => c.inqueue += 1,
                "Unknown" => c.unknown += 1,
                "Completed" => c.completed += 1,
                _ => {}
            }
        }
        c
    }
}

/// The `status` merge patch that sets `state`: the only status field the controller writes
/// (Volcano applies `QueueStatus().WithState(..)` alone; `allocated` and `reservation` are the
/// scheduler's, and the PodGroup counts are metrics).
pub fn state_patch(state: QueueState) -> serde_json::Value {
    serde_json::json!({"status": {"state": state.as_str()}})
}

/// Whether `status.state` as stored (`stored`, unset for a new queue) must be written to say
/// `next`: whenever the spelling differs, so a new queue gets `Open` written, and an unchanged
/// state is never rewritten (Volcano's `persistFn` skips an equal state).
pub fn state_needs_write(stored: Option<&str>, next: QueueState) -> bool {
    stored != Some(next.as_str())
}

/// The children of `parent` among `parents` (queue name → its `spec.parent`, unset = `root`).
pub fn children<'a>(parent: &str, parents: &'a BTreeMap<String, String>) -> Vec<&'a str> {
    parents.iter().filter(|(name, p)| p.as_str() == parent && name.as_str() != parent).map(|(n, _)| n.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use QueueAction::{Close, Open, Sync};
    use QueueState::{Closed, Closing, Unknown};

    #[test]
    fn every_transition_of_volcanos_state_machine() {
        // (current, action, pod groups, next)
        let table = [
            (QueueState::Open, Open, 0, QueueState::Open),
            (QueueState::Open, Open, 3, QueueState::Open),
            (QueueState::Open, Close, 0, Closed),
            (QueueState::Open, Close, 3, Closing),
            (QueueState::Open, Sync, 0, QueueState::Open),
            (QueueState::Open, Sync, 3, QueueState::Open),
            (Closing, Open, 3, QueueState::Open),
            (Closing, Close, 0, Closed),
            (Closing, Close, 3, Closing),
            (Closing, Sync, 0, Closed),
            (Closing, Sync, 3, Closing),
            (Closed, Open, 0, QueueState::Open),
            (Closed, Close, 0, Closed),
            (Closed, Close, 3, Closed),
            (Closed, Sync, 3, Closed),
            (Unknown, Open, 3, QueueState::Open),
            (Unknown, Close, 0, Closed),
            (Unknown, Close, 3, Closing),
            (Unknown, Sync, 0, Unknown),
            (Unknown, Sync, 3, Unknown),
        ];
        for (cur, action, n, want) in table {
            assert_eq!(next_state(cur, action, n), want, "{cur:?} --{action:?}, {n} PodGroups-->");
        }
    }

    #[test]
    fn states_parse_with_empty_as_open() {
        assert_eq!(QueueState::parse("q", None), Ok(QueueState::Open));
        assert_eq!(QueueState::parse("q", Some("")), Ok(QueueState::Open));
        assert_eq!(QueueState::parse("q", Some("Closing")), Ok(Closing));
        for s in [QueueState::Open, Closing, Closed, Unknown] {
            assert_eq!(QueueState::parse("q", Some(s.as_str())), Ok(s));
        }
        assert_eq!(
            QueueState::parse("q", Some("closed")).unwrap_err(),
            "Queue q: status.state \"closed\" is not Open, Closing, Closed or Unknown"
        );
    }

    #[test]
    fn commands_name_queue_actions() {
        assert_eq!(QueueAction::from_command("OpenQueue"), Some(Open));
        assert_eq!(QueueAction::from_command("CloseQueue"), Some(Close));
        assert_eq!(QueueAction::from_command("AbortJob"), None);
    }

    #[test]
    fn only_a_fresh_close_closes_children() {
        assert!(closes_children(QueueState::Open, Close));
        assert!(closes_children(Unknown, Close));
        assert!(!closes_children(Closing, Close));
        assert!(!closes_children(Closed, Close));
        assert!(!closes_children(QueueState::Open, Sync));
    }

    #[test]
    fn children_follow_their_parent() {
        let cases = [
            (QueueState::Open, false, Some(Closed), Some(Close)),
            (QueueState::Open, false, Some(Closing), Some(Close)),
            (QueueState::Open, false, Some(QueueState::Open), None),
            (Closed, true, Some(QueueState::Open), Some(Open)),
            (Closing, true, Some(QueueState::Open), Some(Open)),
            (Closed, false, Some(QueueState::Open), None),
            (Closed, true, Some(Closed), None),
            (Closed, true, None, None),
            (Unknown, true, Some(QueueState::Open), None),
        ];
        for (state, marked, parent, want) in cases {
            assert_eq!(follow_parent(state, marked, parent), want, "{state:?} marked={marked} under {parent:?}");
        }
    }

    #[test]
    fn open_waits_for_a_closed_parent() {
        assert_eq!(open_blocked("c", "p", Some(QueueState::Open)), None);
        assert_eq!(open_blocked("c", "root", None), None);
        assert_eq!(open_blocked("c", "p", Some(Closing)).unwrap(), "Queue c: cannot open while its parent Queue p is Closing");
    }

    #[test]
    fn parent_defaults_to_root() {
        assert_eq!(default_parent("q", None), Some("root"));
        assert_eq!(default_parent("q", Some("")), Some("root"));
        assert_eq!(default_parent("q", Some("team")), None);
        assert_eq!(default_parent("root", None), None);
    }

    #[test]
    fn counts_by_phase() {
        let c = PhaseCounts::of(["Pending", "Running", "Running", "Inqueue", "Unknown", "Completed", "", "Other"]);
        assert_eq!(c, PhaseCounts { pending: 1, running: 2, inqueue: 1, unknown: 1, completed: 1 });
        assert_eq!(PhaseCounts::of([]), PhaseCounts::default());
    }

    #[test]
    fn only_the_state_is_written_and_only_when_it_changes() {
        assert_eq!(state_patch(Closing), serde_json::json!({"status": {"state": "Closing"}}), "no counts in status");
        let cases = [
            (None, QueueState::Open, true),
            (Some(""), QueueState::Open, true),
            (Some("Open"), QueueState::Open, false),
            (Some("Open"), Closing, true),
            (Some("Closing"), Closing, false),
            (Some("Closing"), Closed, true),
            (Some("Closed"), Closed, false),
            (Some("Unknown"), Unknown, false),
        ];
        for (stored, next, want) in cases {
            assert_eq!(state_needs_write(stored, next), want, "{stored:?} -> {next:?}");
        }
    }

    #[test]
    fn children_by_parent() {
        let parents: BTreeMap<String, String> = [("a", "root"), ("b", "a"), ("c", "a"), ("root", "root"), ("d", "root")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(children("a", &parents), vec!["b", "c"]);
        assert_eq!(children("root", &parents), vec!["a", "d"]);
        assert!(children("b", &parents).is_empty());
    }
}
