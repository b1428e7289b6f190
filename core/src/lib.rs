//! `basalt-core`: the scheduling core of Basalt, a Volcano-compatible batch scheduler.
//!
//! Owns the cluster copy ([`cluster::Cluster`]), the per-cycle session ([`session`] tables
//! built in a `bumpalo` arena as struct-of-arrays, [`framework::Session`] with its plugins), the
//! Volcano plugins and actions, the scheduler configuration ([`conf`]) and the plain-data
//! [`decision::Decisions`] a cycle returns. Its modules form layers that point one way
//! (`docs/architecture.md`, checked by `core/tests/layering.rs`). The synthetic workload
//! generators of the benches and tests are behind the `testkit` feature.
//!
//! It refuses I/O, async code, clocks and Kubernetes types: the runtime converts Kubernetes
//! objects into [`model`] types and applies decisions. Same input and seed give the same
//! decisions.

pub mod actions;
pub mod cluster;
pub mod conf;
pub mod decision;
pub mod framework;
pub mod intern;
pub mod kernels;
pub mod limits;
pub mod model;
pub mod plugins;
pub mod rare;
pub mod resource;
pub mod rng;
pub mod scheduler;
pub mod select;
pub mod session;
pub mod vec_map;
#[cfg(any(test, feature = "testkit"))]
pub mod workload;
#[cfg(any(test, feature = "testkit"))]
pub mod workload_devices;
#[cfg(any(test, feature = "testkit"))]
pub mod workload_mixed;
#[cfg(any(test, feature = "testkit"))]
pub mod workload_topology;
#[cfg(any(test, feature = "testkit"))]
pub mod workload_volumes;

pub use cluster::{Cluster, Delta};
pub use conf::SchedulerConf;
pub use decision::Decisions;
pub use scheduler::{run_cycle, CycleOptions};
