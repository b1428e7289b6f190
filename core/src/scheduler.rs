//! One scheduling cycle on one screen: open a session from the cluster copy, run the configured
//! actions in order, close the session into [`Decisions`] (Volcano `runOnce`).

use crate::actions;
use crate::cluster::Cluster;
use crate::conf::{ActionKind, SchedulerConf};
use crate::decision::Decisions;
use crate::session::Session;

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

/// Runs one cycle: open a session, run `conf.actions` in order, close.
pub fn run_cycle(cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> Decisions {
    let arena = bumpalo::Bump::new();
    run_cycle_in(&arena, cluster, conf, opts)
}

/// [`run_cycle`] with a caller-owned arena (reset it between cycles to reuse its memory).
pub fn run_cycle_in(arena: &bumpalo::Bump, cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> Decisions {
    run_cycle_observed(arena, cluster, conf, opts, |_| {})
}

/// A boundary between the phases of a cycle, reported to [`run_cycle_observed`]'s observer.
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
    /// The session is closed into [`Decisions`] (Volcano `CloseSession`).
    Closed,
}

/// [`run_cycle_in`], calling `observe` after each phase, in order: [`CyclePhase::TablesBuilt`],
/// one [`CyclePhase::PluginOpened`] per plugin the session instantiated (tier order),
/// [`CyclePhase::Opened`], one [`CyclePhase::ActionDone`] per configured action, one
/// [`CyclePhase::PluginClosed`] per plugin (tier order), [`CyclePhase::Closed`]. The core reads
/// no clock: a caller that measures phase times (`basalt simulate`'s timings; Volcano's
/// `open_session_duration`, `plugin_scheduling_latency{plugin,OnSession}`,
/// `action_scheduling_latency` and `e2e_scheduling_latency` metrics, volcano-behaviour §8.1)
/// reads its own in `observe`: a plugin's time is from the previous phase to its own. The
/// observer cannot change the decisions.
pub fn run_cycle_observed(
    arena: &bumpalo::Bump,
    cluster: &Cluster,
    conf: &SchedulerConf,
    opts: &CycleOptions,
    mut observe: impl FnMut(CyclePhase),
) -> Decisions {
    let mut ssn = Session::open_observed(arena, cluster, conf, opts, &crate::plugins::REGISTRY, &mut observe);
    observe(CyclePhase::Opened);
    for action in &conf.actions {
        actions::execute(*action, &mut ssn);
        observe(CyclePhase::ActionDone(*action));
    }
    let decisions = ssn.close_observed(&mut observe);
    observe(CyclePhase::Closed);
    decisions
}
