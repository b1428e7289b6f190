//! `basalt scheduler`: the live scheduler that takes vc-scheduler's place (volcano-behaviour.md
//! §1.1). The parts:
//! * [`watch`]: kube-rs watchers of Nodes, Pods, PodGroups, Queues and PriorityClasses;
//! * [`mirror`]: watch events → core deltas on the cluster copy, with assumed binds and relists;
//! * [`cycle`]: one scheduling cycle on the mirror and the API work its decisions make;
//! * [`binder`] (with [`volume_binder`] for claims before pods) and [`status`]: that API work,
//!   asynchronous, rate-limited and retried (under [`crate::plumbing::limiter`]); [`outstanding`]
//!   counts the binds that events and reporting updates wait for; [`gate_removal`]'s workers
//!   remove Volcano's scheduling gate from pods their queue admitted;
//! * [`reload`]: the scheduler conf, re-read when its file (or ConfigMap volume) changes;
//! * [`metrics`]: Volcano's `volcano_*` scheduler metrics and Basalt's own, served on
//!   `/metrics`, with `/healthz`;
//! * [`options`]: the settings it runs with, built by [`crate::cli`] from the flags;
//! * [`runner`]: the process: client, startup queues, threads, signals.
//!
//! The scheduling loop runs on its own thread (the core is synchronous and uses rayon); the
//! watchers, binder and writer run on a small tokio runtime and talk to it through channels.

pub mod binder;
pub mod cycle;
pub mod gate_removal;
pub mod metrics;
pub mod mirror;
pub mod node_lock;
pub mod options;
pub mod outstanding;
pub mod pod_group_counts;
pub mod reload;
pub mod runner;
pub mod status;
pub mod ungrouped;
pub mod volume_binder;
pub mod watch;
