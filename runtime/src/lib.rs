//! `basalt-runtime`: the only Basalt crate that knows Kubernetes.
//!
//! * [`crd`]: Volcano's `PodGroup` and `Queue` custom resources as `kube` types;
//! * [`convert`]: Kubernetes/Volcano objects → the core's plain model types;
//! * [`load`]: YAML/JSON files → a core [`basalt_core::Cluster`], with per-document issues;
//! * [`sim`]: the in-memory simulated cluster behind `basalt simulate`, and its reports;
//! * [`replay`]: `basalt replay`: workloads and traces over virtual time, with a report;
//! * [`live`]: building blocks of the live scheduler (leader election, conf reload, metrics);
//! * [`cli`]: the `basalt` command line;
//! * [`client`]: the API client, leader-election config, `/metrics`/`/healthz` and stop signal
//!   that `basalt scheduler` and `basalt controller` share.
//!
//! * [`live`]: `basalt scheduler`, the live scheduler: watches, the cluster mirror with assumed
//!   binds, the binder and status writer, the scheduling loop.
//!
//! * [`recorder`]: the flight recorder of `basalt scheduler --record`, its offline re-run
//!   (`basalt replay --recording`) and `basalt explain`.
//!
//! The core never sees a Kubernetes type: everything goes through `convert`.

pub mod cli;
pub mod controller;
pub mod convert;
pub mod crd;
pub mod live;
pub mod load;
pub mod plumbing;
pub mod recorder;
pub mod replay;
pub mod sim;
