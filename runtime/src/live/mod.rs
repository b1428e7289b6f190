//! The live scheduler behind `basalt scheduler`: a drop-in for Volcano's vc-scheduler on a real
//! cluster (behaviour contract §1.1).
//!
//! * [`leader`]: leader election on a `coordination.k8s.io/v1` Lease, client-go's algorithm;
//! * [`reload`]: the scheduler conf, re-read when its file (or ConfigMap volume) changes;
//! * [`metrics`]: Volcano's `volcano_*` scheduler metrics and Basalt's own, served on
//!   `/metrics`, with `/healthz`.

pub mod leader;
pub mod metrics;
pub mod reload;
