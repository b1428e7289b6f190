//! One scheduling cycle on one screen: open a session from the cluster copy, run the configured
//! actions in order, close the session into [`Decisions`] (Volcano `runOnce`).

use crate::actions;
use crate::cluster::Cluster;
use crate::conf::SchedulerConf;
use crate::decision::Decisions;
use crate::framework::Registry;
use crate::framework::Session;
pub use crate::session::cycle::{CycleOptions, CyclePhase};

/// Runs one cycle: open a session, run `conf.actions` in order, close.
pub fn run_cycle(cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> Decisions {
    let arena = bumpalo::Bump::new();
    run_cycle_in(&arena, cluster, conf, opts)
}

/// [`run_cycle`] with a caller-owned arena (reset it between cycles to reuse its memory).
pub fn run_cycle_in(arena: &bumpalo::Bump, cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> Decisions {
    run_cycle_observed(arena, cluster, conf, opts, |_| {})
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
    observe: impl FnMut(CyclePhase),
) -> Decisions {
    run_cycle_with(arena, cluster, conf, opts, &crate::plugins::REGISTRY, observe)
}

/// [`run_cycle_observed`] with the plugins of `registry` instead of Basalt's
/// ([`crate::plugins::REGISTRY`]): a conf plugin the registry lacks is skipped, as a session
/// skips it ([`Session::open`]).
pub fn run_cycle_with(
    arena: &bumpalo::Bump,
    cluster: &Cluster,
    conf: &SchedulerConf,
    opts: &CycleOptions,
    registry: &Registry,
    mut observe: impl FnMut(CyclePhase),
) -> Decisions {
    let mut ssn = Session::open_observed(arena, cluster, conf, opts, registry, &mut observe);
    observe(CyclePhase::Opened);
    for action in &conf.actions {
        actions::execute(*action, &mut ssn);
        observe(CyclePhase::ActionDone(*action));
    }
    let decisions = ssn.close_observed(&mut observe);
    observe(CyclePhase::Closed);
    decisions
}
