//! The session driver shared by the `session_*` targets: a structured input decoded by
//! `arbitrary` ([`input`]), turned into core objects ([`objects`]) and a conf ([`conf`]), run
//! for one to three cycles ([`driver`]) and checked after each ([`invariants`], against the
//! independent reading in [`model`]; Statement discard in [`statement`]). Inputs that reach findings still open are
//! skipped by [`known`]. The eviction targets (preempt, reclaim, capacity hierarchy) have their own
//! driver on generated production-like clusters: [`evict`].

#![allow(dead_code)]

pub mod conf;
pub mod devices;
pub mod driver;
pub mod evict;
pub mod input;
pub mod invariants;
pub mod known;
pub mod model;
pub mod objects;
pub mod statement;

// Every target includes this module; the session targets use these, `session_devices` does not.
#[allow(unused_imports)]
pub use conf::Family;
#[allow(unused_imports)]
pub use driver::run;
#[allow(unused_imports)]
pub use input::Input;
