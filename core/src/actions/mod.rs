//! Volcano's actions, run in the configured order on one session (volcano-behaviour.md §2).

pub mod allocate;
pub mod allocate_topology;
pub mod backfill;
pub mod enqueue;
pub mod gang_bundles;
pub mod gang_evict;
pub mod heap;
mod plugin_order;
mod queue_gate;
pub use crate::select::nodes;
pub mod preempt;
pub mod preempt_topology;
pub mod reclaim;
pub mod shuffle;
pub mod victims;

use crate::conf::ActionKind;
use crate::framework::Session;

/// Runs one action on the session (every action Volcano registers is implemented).
pub fn execute(action: ActionKind, ssn: &mut Session<'_>) {
    match action {
        ActionKind::Enqueue => enqueue::execute(ssn),
        ActionKind::Allocate => allocate::execute(ssn),
        ActionKind::Backfill => backfill::execute(ssn),
        ActionKind::Preempt => preempt::execute(ssn),
        ActionKind::Reclaim => reclaim::execute(ssn),
        ActionKind::Shuffle => shuffle::execute(ssn),
        ActionKind::GangPreempt => gang_evict::execute(ssn, crate::framework::EvictionKind::GangPreempt),
        ActionKind::GangReclaim => gang_evict::execute(ssn, crate::framework::EvictionKind::GangReclaim),
    }
}
