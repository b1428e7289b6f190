//! `basalt webhook-manager`: Volcano's vc-webhook-manager (`cmd/webhook-manager`,
//! `pkg/webhooks/router`; volcano-behaviour.md §6, §7): an HTTPS server answering
//! AdmissionReview v1 requests on Volcano's paths with the rules of [`crate::admission`],
//! a Queue cache kept by a watch, the CA bundle written into the webhook configurations named
//! `volcano-admission-service-<resource>-<operation>`, and certificates and the admission conf
//! reloaded when their files change.
//!
//! * [`options`]: what it runs with (built by `cli/webhook_manager.rs` from the flags);
//! * [`paths`]: the admission paths, which are mutating or validating, which Basalt serves;
//! * [`review`]: one AdmissionReview in, one out (decode, dispatch, patch, deny);
//! * [`tls`]: the server certificate, loaded and reloaded;
//! * [`server`]: the HTTPS listener;
//! * [`queue_cache`]: the Queue watch;
//! * [`admission_conf`]: the `--admission-conf` file (`resourceGroups`), reloaded on change;
//! * [`ca_bundle`]: the webhook configurations' `caBundle`;
//! * [`run`]: the process from start to signal.

pub mod admission_conf;
pub mod ca_bundle;
pub mod options;
pub mod paths;
pub mod queue_cache;
pub mod review;
pub mod run;
pub mod server;
pub mod tls;
