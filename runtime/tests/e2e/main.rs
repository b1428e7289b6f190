//! The end-to-end tests of `basalt scheduler` and `basalt controller` against a **real**
//! kube-apiserver v1.20.2 + etcd (`tests/support`, kubernetes-api.md §9), as one test binary
//! (`cargo test --release -p basalt-runtime --test e2e`), one module per former `e2e_*.rs` file.
//! One binary compiles and links the support code once instead of once per file, and its tests
//! run in parallel on the test harness's threads (2 on the CI machine; `RUST_TEST_THREADS`).
//!
//! # Which server a test uses
//! * [`support::TestApiserver::shared`]: one instance per binary, started on first use. A test
//!   on it keeps to its own namespaces ([`support::fresh_namespace`]) and names, and a scheduler
//!   it starts keeps to its own nodes and pods (`--node-selector` on a labelled node pool and its
//!   own `--scheduler-name`, as [`e2e::rig::Rig`] does), so concurrent tests do not see each
//!   other's work. `apiserver_smoke`, `devices`, `faults`, `leader_lease`, `numa`, `queue_gate`,
//!   `user_trips` and `controller_events`' recorder test use it.
//! * [`support::TestApiserver::start`]: a server of the test's own, where the test needs one:
//!   it stops the server or compacts etcd (`faults_server`), changes RBAC (`rbac`,
//!   `apiserver_smoke`'s drop test), runs a scheduler or controller over the whole cluster whose
//!   cluster-wide results it checks (`/metrics` gauges and counters, Queue `status`, the Lease
//!   `volcano-system/volcano`, exact audit-log counts of one identity: `scheduler`, `restart`,
//!   `leader`, `preempt`, `reload`, `recorder`, `parity`, `status_writes`, `controller`,
//!   `controller_burst`, `controller_events`' controller test, `controller_faults`, `cronjobs`, `job_plugins`,
//!   `podgroup_queue_controllers`, `sharding_controller`: it assigns every node and deletes
//!   NodeShards it does not configure), registers admission webhooks every request passes through
//!   (`webhooks`), creates cluster-scoped objects other schedulers would see
//!   (HyperNodes, an invalid tree among them: `topology`), or applies `deploy/` with kubectl
//!   (`deploy`). A start costs about 4 s of one core.
//!
//! # Sizes
//! The scale runs (`scheduler`: 5,000 pods on 500 nodes; `restart`: 3,000 pods;
//! `controller_burst`: 1,000 Jobs) run at about a tenth of that in CI; `BASALT_E2E_FULL=1` runs
//! them at full size ([`e2e::scale`]). docs/live-scheduler.md and docs/controller.md give the
//! full-size numbers.
//!
//! # Adding a test file
//! A new `runtime/tests/e2e_<area>.rs` (which opens with `mod e2e; mod support;`) joins this
//! binary by `git mv runtime/tests/e2e_<area>.rs runtime/tests/e2e/<area>.rs`, replacing those
//! two lines with `use crate::{e2e, support};`, and adding `mod <area>;` below. Its test bodies
//! stay as they are; a test that can keep to its own namespace, nodes and scheduler name may
//! switch `TestApiserver::start()` to `TestApiserver::shared()`.

#[path = "../support/mod.rs"]
mod support;

// The helpers every module uses (`e2e::nodes`, `e2e::process::SchedulerProcess`, `e2e::rig`);
// also what an unfolded `tests/e2e_*.rs` file includes with `mod e2e;`.
#[path = "mod.rs"]
mod e2e;

mod apiserver_smoke;
mod controller;
mod controller_burst;
mod controller_events;
mod controller_faults;
mod cronjobs;
mod deploy;
mod devices;
mod faults;
mod faults_server;
mod job_plugins;
mod leader;
mod leader_lease;
mod numa;
mod parity;
mod podgroup_queue_controllers;
mod preempt;
mod queue_gate;
mod rbac;
mod recorder;
mod reload;
mod restart;
mod scheduler;
mod sharding;
mod sharding_controller;
mod status_writes;
mod topology;
mod user_trips;
mod vcctl;
mod volumes;
mod webhooks;
