//! `basalt controller`: Volcano's job controller (volcano-behaviour.md §5.1, §5.4) for
//! `batch.volcano.sh/v1alpha1` Jobs, its PodGroup controller for plain pods (§5.2) and its Queue
//! controller (§5.3). The pure parts, each table-tested:
//! * [`request`]: phases, events, actions, requests (Volcano's spellings);
//! * [`defaults`]: the `jobs/mutate` webhook defaults the controller applies itself;
//! * [`policy`]: `applyPolicies`, request → action (task-level, then job-level);
//! * [`state`]: the state machine, phase × action → operation and next-phase rule;
//! * [`plan`]: which pods a sync creates/deletes and a kill deletes, and the status counts;
//! * [`build`]: the PodGroup `<job>-<uid>` and pods `<job>-<task>-<index>`;
//! * [`reconcile`]: one request's work before and after the API calls (shared with the
//!   simulator);
//! * [`cache`]: the job cache and watch event → request translation;
//! * [`queue`]: per-worker rate-limited queues, jobs hashed to workers;
//! * [`plain_pod`], [`pod_usage`]: the PodGroup controller's PodGroup for a plain pod (§5.2);
//! * [`queue_state`]: the Queue controller's state machine and rules (§5.3);
//! * [`shard_config`], [`shard_plan`]: the sharding controller's configuration and node
//!   assignment (Volcano's `pkg/controllers/sharding`);
//! * [`validate`]: the admission webhook's checks a Job created without it would slip past
//!   (§6), recorded as a `FailedValidation` Event.
//!
//! The API side: [`execute`] (one request against the server, recording Volcano's Job Events
//! through [`crate::plumbing::events`]), [`gc`] (TTL deletion),
//! [`pg_controller`] (PodGroups for plain pods), [`queue_controller`] (Queue states and
//! Commands), [`shard_controller`] (NodeShards' `spec.nodesDesired`), [`command`] (taking a Command before acting on it), [`retry`] (their worker loop), [`metrics`], [`options`] (the settings, built by [`crate::cli`]),
//! and [`run`] (the process).

pub mod build;
pub mod cache;
pub mod command;
pub mod cron_controller;
pub mod cron_plan;
pub mod defaults;
pub mod execute;
pub mod gc;
pub mod keys;
pub mod metrics;
pub mod options;
pub mod pg_controller;
pub mod plain_pod;
pub mod plan;
pub mod plugins;
pub mod pod_usage;
pub mod policy;
pub mod queue;
pub mod queue_controller;
pub mod queue_state;
pub mod reconcile;
pub mod request;
pub mod retry;
pub mod run;
pub mod shard_config;
pub mod shard_controller;
pub mod shard_plan;
pub mod state;
pub mod validate;
pub mod volumes;
