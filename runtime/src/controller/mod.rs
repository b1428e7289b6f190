//! `basalt controller`: Volcano's job controller (volcano-behaviour.md §5.1, §5.4) for
//! `batch.volcano.sh/v1alpha1` Jobs. The pure parts, each table-tested:
//! * [`request`]: phases, events, actions, requests (Volcano's spellings);
//! * [`defaults`]: the `jobs/mutate` webhook defaults the controller applies itself;
//! * [`policy`]: `applyPolicies`, request → action (task-level, then job-level);
//! * [`state`]: the state machine, phase × action → operation and next-phase rule;
//! * [`plan`]: which pods a sync creates/deletes and a kill deletes, and the status counts;
//! * [`build`]: the PodGroup `<job>-<uid>` and pods `<job>-<task>-<index>`;
//! * [`cache`]: the job cache and watch event → request translation;
//! * [`queue`]: per-worker rate-limited queues, jobs hashed to workers.
//!
//! The API side: [`execute`] (one request against the server), [`gc`] (TTL deletion),
//! [`metrics`], and [`run`] (the process).

pub mod build;
pub mod cache;
pub mod defaults;
pub mod execute;
pub mod gc;
pub mod keys;
pub mod metrics;
pub mod plan;
pub mod plugins;
pub mod policy;
pub mod queue;
pub mod request;
pub mod run;
pub mod state;
