//! What a cycle hands the session: its [`CycleOptions`] (seed, number, "now") and the
//! [`CyclePhase`] boundaries the session and the cycle report to an observer
//! (`scheduler::run_cycle_observed`).

use crate::conf::ActionKind;

/// Options of one cycle.
#[derive(Clone, Debug, Default)]
pub struct CycleOptions {
    /// Seed of the random choice among equally scored nodes.
    pub seed: u64,
    /// Cycle number; becomes the session id written into PodGroup conditions (`transitionID`).
    pub cycle: u64,
    /// "Now" for the cycle's time-based rules, in milliseconds since the Unix epoch; 0 means
    /// unknown, and then every rule that needs the time is off (e.g. `sla` never permits a job
    /// for having waited, `cdp` protects no pod, `rescheduling` ignores its `interval` and runs
    /// its strategies every cycle). The core reads no clock: `basalt simulate` sets the simulated time,
    /// `basalt replay` its virtual clock, `basalt scheduler` the wall clock at cycle start
    /// (Volcano's plugins call `time.Now()` during the cycle; one value per cycle keeps the
    /// decisions deterministic). Copied into [`crate::session::State::now_ms`].
    pub now_ms: i64,
}

/// A boundary between the phases of a cycle, reported to `scheduler::run_cycle_observed`'s observer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CyclePhase {
    /// The session's tables are built from the cluster copy; the plugins open next.
    TablesBuilt,
    /// A plugin's `OnSessionOpen` has run (its name, as in the conf).
    PluginOpened(&'static str),
    /// The session is open (Volcano `OpenSession`: tables built and every plugin opened).
    Opened,
    /// An action of `conf.actions` has run.
    ActionDone(ActionKind),
    /// A plugin's `OnSessionClose` has run (its name, as in the conf).
    PluginClosed(&'static str),
    /// The session is closed into [`crate::decision::Decisions`] (Volcano `CloseSession`).
    Closed,
}
