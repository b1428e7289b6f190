//! The framework's [`Session`]: the session layer's tables with the conf's plugins by tier
//! ([`Plugins`]), opened and closed as Volcano's `OpenSession`/`CloseSession`
//! (volcano-behaviour.md §1.5), and the plugin set's answers to the Statement's events.

use super::invoke::Plugins;
use super::plugin::Registry;
use crate::cluster::Cluster;
use crate::conf::SchedulerConf;
use crate::decision::Decisions;
use crate::session::tables::{JobIdx, TaskIdx};
use crate::session::{CycleOptions, CyclePhase, SessionEvents, State};
use bumpalo::Bump;

/// A scheduling session: [`State`] plus the registered [`Plugins`] (what actions work on).
pub type Session<'a> = crate::session::Session<'a, Plugins<'a>>;

impl<'a> SessionEvents<'a> for Plugins<'a> {
    fn on_allocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
        Plugins::on_allocate(self, s, t)
    }

    fn on_deallocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
        Plugins::on_deallocate(self, s, t)
    }

    fn job_ready(&self, s: &State<'a>, j: JobIdx) -> bool {
        Plugins::job_ready(self, s, j)
    }
}

impl<'a> Session<'a> {
    /// Opens a session (Volcano `OpenSession`): builds the tables in `arena` from `cluster`,
    /// then instantiates the conf's plugins tier by tier from `registry` (usually
    /// [`crate::plugins::REGISTRY`]; a conf plugin it lacks is skipped).
    pub fn open(
        arena: &'a Bump,
        cluster: &'a Cluster,
        conf: &'a SchedulerConf,
        opts: &CycleOptions,
        registry: &Registry,
    ) -> Self {
        Self::open_observed(arena, cluster, conf, opts, registry, &mut |_| {})
    }

    /// [`Session::open`], reporting [`CyclePhase::TablesBuilt`] once the tables are built and
    /// [`CyclePhase::PluginOpened`] after each plugin's open (see
    /// [`crate::scheduler::run_cycle_observed`]).
    pub fn open_observed(
        arena: &'a Bump,
        cluster: &'a Cluster,
        conf: &'a SchedulerConf,
        opts: &CycleOptions,
        registry: &Registry,
        observe: &mut dyn FnMut(CyclePhase),
    ) -> Self {
        let state = State::open(arena, cluster, conf, opts, registry.device_conf(conf));
        observe(CyclePhase::TablesBuilt);
        let plugins = Plugins::open(conf, registry, &state, observe);
        Session { arena, state, plugins }
    }

    /// Closes the session (Volcano `CloseSession`): plugins' close, then PodGroup, Queue and
    /// pod statuses.
    pub fn close(self) -> Decisions {
        self.close_observed(&mut |_| {})
    }

    /// [`Session::close`], reporting [`CyclePhase::PluginClosed`] after each plugin's close.
    pub fn close_observed(mut self, observe: &mut dyn FnMut(CyclePhase)) -> Decisions {
        self.plugins.close(&mut self.state, observe);
        self.state.decisions()
    }
}
