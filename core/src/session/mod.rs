//! The per-cycle session (stub while the core is written).
use crate::cluster::Cluster;
use crate::conf::SchedulerConf;
use crate::decision::Decisions;
use crate::scheduler::CycleOptions;

/// A scheduling session.
pub struct Session<'a> {
    _c: &'a Cluster,
}

impl<'a> Session<'a> {
    /// Opens a session.
    pub fn open(_arena: &'a bumpalo::Bump, c: &'a Cluster, _conf: &'a SchedulerConf, _o: &CycleOptions) -> Self {
        Session { _c: c }
    }
    /// Closes the session.
    pub fn close(self) -> Decisions {
        Decisions::default()
    }
}
