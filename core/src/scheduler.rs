//! One scheduling cycle on one screen: open a session from the cluster copy, run the configured
//! actions in order, close the session into [`Decisions`] (Volcano `runOnce`).

use crate::actions;
use crate::cluster::Cluster;
use crate::conf::SchedulerConf;
use crate::decision::Decisions;
use crate::session::Session;

/// Options of one cycle.
#[derive(Clone, Debug, Default)]
pub struct CycleOptions {
    /// Seed of the random choice among equally scored nodes.
    pub seed: u64,
    /// Cycle number; becomes the session id written into PodGroup conditions (`transitionID`).
    pub cycle: u64,
}

/// Runs one cycle: open a session, run `conf.actions` in order, close.
pub fn run_cycle(cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> Decisions {
    let arena = bumpalo::Bump::new();
    run_cycle_in(&arena, cluster, conf, opts)
}

/// [`run_cycle`] with a caller-owned arena (reset it between cycles to reuse its memory).
pub fn run_cycle_in(arena: &bumpalo::Bump, cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions) -> Decisions {
    let mut ssn = Session::open(arena, cluster, conf, opts, &crate::plugins::REGISTRY);
    for action in &conf.actions {
        actions::execute(*action, &mut ssn);
    }
    ssn.close()
}
