//! The flight recorder: `basalt scheduler --record DIR` keeps, per cycle, the deltas applied to
//! the cluster copy, the conf and flags in force, the seed and session number, and the
//! decisions taken, so that an operator can re-run a production cycle offline with the same
//! core (`basalt replay --recording DIR [--cycle N] [--conf OTHER]`) and ask what happened to
//! one pod (`basalt explain --recording DIR --pod NS/NAME`). No Volcano version can do this.
//!
//! * [`cycle_recorder`]: the trait a scheduling loop calls once per cycle;
//! * [`format`]: records and their framing (postcard in gzip, one segment per file);
//! * [`format_v2`]: the record shape of formats 1 and 2, read into today's records;
//! * [`named`]: decisions by name and their per-cycle changes (the compact stored form);
//! * [`writer`]: the recorder the live scheduler runs, with rotation and a size budget;
//! * [`reader`]: walking a recording back, cycle by cycle;
//! * [`rerun`]: the offline re-run and its comparison;
//! * [`explain`]: one pod's story.
//!
//! Determinism: a cycle's decisions depend only on the cluster copy, the conf, the seed and
//! the session number (core, `scheduler::run_cycle_observed`), and the recorder keeps every
//! one of them, so re-running a recorded cycle gives the recorded decisions.

pub mod cycle_recorder;
pub mod explain;
pub mod explain_group;
pub mod format;
pub mod format_v2;
pub mod named;
pub mod reader;
pub mod rerun;
pub mod writer;
