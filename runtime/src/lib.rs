//! `basalt-runtime`: the only Basalt crate that knows Kubernetes. Its top-level modules form
//! layers that point one way (bottom-up; `tests/layering.rs` holds the table and fails on an
//! import against it; docs/architecture.md `## Runtime` explains it):
//!
//! * [`crd`]: Volcano's custom resources (`PodGroup`, `Queue`, `Job`, `Command`) as `kube` types;
//! * [`convert`]: Kubernetes/Volcano objects → the core's plain model types (and Go durations);
//! * [`admission`]: Volcano's admission rules (jobs, queues, PodGroups, pods, HyperNodes) as pure
//!   functions, served by the webhook manager;
//! * [`conf_check`]: what of a scheduler conf Basalt does not honour (`--strict`);
//! * [`recorder`]: the flight recorder of `basalt scheduler --record`, its offline re-run
//!   (`basalt replay --recording`) and `basalt explain`, on the core's types only;
//! * [`plumbing`]: what every long-running process shares: API client and kubeconfig, leader
//!   election, rate limiter, `/metrics` and `/healthz`, the generic watch loop, the stop signal;
//! * [`controller`]: `basalt controller`, Volcano's job, PodGroup and Queue controllers (the job
//!   logic is pure and shared with the simulator);
//! * offline: [`load`] (YAML/JSON files → a core [`basalt_core::Cluster`]), [`sim`] (the
//!   in-memory cluster behind `basalt simulate`), [`replay`] (`basalt replay` over virtual time);
//! * live: [`live`], `basalt scheduler`: watches, the cluster mirror with assumed binds, the
//!   binder and status writer, the scheduling loop; it never names the offline side;
//! * [`webhooks`]: `basalt webhook-manager`, Volcano's admission webhooks over HTTPS;
//! * [`vcctl`]: Volcano's command line for Jobs and Queues, behind the `vcctl` binary;
//! * [`cli`]: the `basalt` and `vcctl` command lines: parses arguments into plain option structs
//!   ([`live::options`], [`controller::options`]) and calls one of the above.
//!
//! The core never sees a Kubernetes type: everything goes through `convert`.

pub mod admission;
pub mod cli;
pub mod conf_check;
pub mod controller;
pub mod convert;
pub mod crd;
pub mod live;
pub mod load;
pub mod plumbing;
pub mod recorder;
pub mod replay;
pub mod sim;
pub mod vcctl;
pub mod webhooks;
