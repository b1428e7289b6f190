//! The hook through which a scheduling loop hands each cycle to a recorder: the trait only, so
//! that the live scheduler ([`crate::live::cycle::Scheduler`]) can call a recorder without the
//! recorder knowing the live scheduler's types (its cluster mirror, watch events, outputs).

use basalt_core::cluster::{Cluster, Delta};
use basalt_core::conf::SchedulerConf;
use basalt_core::decision::Decisions;
use basalt_core::scheduler::CycleOptions;

/// Sees every cycle's input and decisions (the flight recorder, [`super::writer::Recorder`]).
pub trait CycleRecorder: Send + std::fmt::Debug {
    /// Called once per cycle, after the core decided and before the decisions are applied:
    /// `deltas` are the deltas applied to `cluster` since the previous call (the mirror's
    /// journal, in order), `cluster` the cluster the cycle read, `conf` and `opts` what the
    /// cycle ran with.
    fn cycle(&mut self, deltas: Vec<Delta>, cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions, decisions: &Decisions);
}
