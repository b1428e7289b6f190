//! What `basalt webhook-manager` runs with: vc-webhook-manager's flags, checked and plain.

use crate::admission::queues::QueueRules;
use crate::admission::resource_groups::AdmissionConf;
use std::path::PathBuf;
use std::time::Duration;

/// The webhook manager's settings (`cli/webhook_manager.rs` builds them from the flags).
#[derive(Clone, Debug)]
pub struct WebhookOptions {
    /// `--kubeconfig` (empty: in-cluster, then the usual lookup).
    pub kubeconfig: String,
    /// `--master`.
    pub master: String,
    /// `--listen-address` (empty: every interface) and `--port` (8443).
    pub listen_address: String,
    /// `--port`.
    pub port: u16,
    /// `--tls-cert-file`: the server certificate chain (PEM).
    pub tls_cert_file: PathBuf,
    /// `--tls-private-key-file`: its key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub tls_private_key_file: PathBuf,
    /// `--ca-cert-file`: the CA written into the webhook configurations' `caBundle` (none: not
    /// written).
    pub ca_cert_file: Option<PathBuf>,
    /// `--webhook-url`, `--webhook-namespace`, `--webhook-service-name` (one of the URL or the
    /// service must be given, as in Volcano).
    pub webhook_url: String,
    /// `--webhook-namespace`.
    pub webhook_namespace: String,
    /// `--webhook-service-name`.
    pub webhook_service_name: String,
    /// `--enabled-admission`, parsed.
    pub enabled: Vec<String>,
    /// `--scheduler-name` (repeatable; the first is a Job's default).
    pub scheduler_names: Vec<String>,
    /// The queue rules' flags.
    pub queue_rules: QueueRules,
    /// `--kube-api-qps` and `--kube-api-burst` (the webhook's own API calls).
    pub kube_api_qps: f64,
    /// `--kube-api-burst`.
    pub kube_api_burst: u32,
    /// `--healthz-address` when `--enable-healthz`.
    pub healthz: Option<String>,
    /// How often the certificate files are checked for a change.
    pub cert_poll: Duration,
    /// How long to wait for each webhook configuration to exist before the CA bundle is written
    /// (Volcano: 5 minutes).
    pub configuration_wait: Duration,
    /// `--graceful-shutdown-time`: how long open requests may finish after a stop signal.
    pub graceful_shutdown: Duration,
    /// `--admission-conf`: the file (reloaded when it changes, checked every `cert_poll`) and its
    /// conf as read at start (empty without the flag).
    pub admission_conf: Option<(PathBuf, AdmissionConf)>,
    /// `--feature-gates` `SchedulingGatesQueueAdmission`: `/pods/mutate` adds Volcano's
    /// scheduling gate to pods that opted in.
    pub scheduling_gates_queue_admission: bool,
}
