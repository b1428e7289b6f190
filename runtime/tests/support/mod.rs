//! Test support for tests against a **real** kube-apiserver v1.20.2 + etcd
//! (shared/notes/kubernetes-api.md §9). Include it with `mod support;` from a file in
//! `runtime/tests/`.
//!
//! * [`TestApiserver`]: builds the server once per machine if needed (`tests/apiserver/build.sh`,
//!   never skipped), starts a fresh etcd + kube-apiserver on free loopback ports, stops them on
//!   drop; [`TestApiserver::shared`] gives one instance per test binary.
//! * [`install_volcano_crds`], [`apply_scheduler_rbac`], [`apply_manifest`]: `deploy/`'s CRDs and
//!   RBAC.
//! * Object helpers: [`ensure_namespace`], [`fresh_namespace`], [`TestNode`] + [`create_node`] /
//!   [`create_nodes`], [`TestPod`] + [`create_pod`] / [`create_pods`], [`pod_group`] +
//!   [`create_pod_group`], [`queue`] + [`create_queue`], [`create_priority_class`], [`bind_pod`], [`delete_pod_now`].
//! * [`AuditLog`]: the server's audit log (rotated files included), with binding counts per pod
//!   and a filter by user; [`stream_audit`] reads it one request at a time.
//! * [`Kubelet`]: the node side, which this server does not have (marks bound pods Running,
//!   completes them after `basalt.dev/duration-seconds`, finishes deletions).
//! * [`FaultProxy`]: a fault-injecting proxy between a scheduler under test and the server
//!   (error answers, delays, dropped answers, dropped/stalled/expired watches, request counts).
//! * [`wait_for`], [`wait_for_every`], [`wait_for_pod`]: polling with a deadline, for conditions that become true
//!   asynchronously.
//!
//! Every helper returns [`Result`] (a boxed error), so tests returning `support::Result<()>` use
//! `?` throughout; Kubernetes API errors stay `kube::Error::Api` inside and can be downcast.

// Each test binary uses a different part of this module.
#![allow(dead_code, unused_imports)]

mod apiserver;
mod audit;
mod kubelet;
mod manifests;
mod objects;
mod proxy;
mod wait;

pub use apiserver::{client_from_kubeconfig, StoppedApiserver, TestApiserver};
pub use audit::{log_files as audit_log_files, stream as stream_audit, AuditEvent, AuditLog, BindingCounts};
pub use kubelet::{Kubelet, DURATION_ANNOTATION, EXIT_CODE_ANNOTATION};
pub use manifests::{apply_manifest, apply_scheduler_rbac, deploy_dir, install_volcano_crds};
pub use objects::{
    bind_pod, create_node, create_nodes, create_pod, create_pod_group, create_pods, create_priority_class, create_queue,
    delete_pod_now, ensure_namespace, fresh_namespace, pod_group, queue, TestNode, TestPod, GROUP_NAME_ANNOTATION,
    NOT_READY_TAINT,
};
pub use proxy::{Action, ApiRequest, FaultProxy, Matcher, Rule, RuleId};
pub use wait::{wait_for, wait_for_every, wait_for_pod};

/// The error type of every helper: anything (kube, I/O, YAML, a failed expectation with a message).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// The API error inside `err` (HTTP code, reason, message), when `err` is a Kubernetes API error.
pub fn api_status(err: &Error) -> Option<&kube::core::Status> {
    match err.downcast_ref::<kube::Error>() {
        Some(kube::Error::Api(status)) => Some(status),
        _ => None,
    }
}
