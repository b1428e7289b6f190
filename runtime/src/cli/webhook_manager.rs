//! `basalt webhook-manager`: Volcano's vc-webhook-manager replacement, with its flags and
//! defaults (volcano-behaviour.md §7, `cmd/webhook-manager/app/options`). Builds
//! [`crate::webhooks::options::WebhookOptions`] and runs [`crate::webhooks::run`].

use crate::admission::queues::QueueRules;
use crate::admission::resource_groups::AdmissionConf;
use crate::convert::duration::parse_go_duration;
use crate::webhooks::options::WebhookOptions;
use crate::webhooks::paths::{parse_enabled, DEFAULT_ENABLED};
use clap::{ArgAction, Args};
use std::path::PathBuf;
use std::time::Duration;

fn duration(s: &str) -> Result<Duration, String> {
    parse_go_duration(s)
}

/// Arguments of `basalt webhook-manager` (vc-webhook-manager's flags; defaults are Volcano's).
#[derive(Debug, Args, Clone)]
pub struct WebhookManagerArgs {
    /// kubeconfig file (empty: in-cluster config, then `$KUBECONFIG`/`~/.kube/config`).
    #[arg(long, value_name = "FILE", default_value = "")]
    pub kubeconfig: String,
    /// API server address; overrides the kubeconfig's server.
    #[arg(long, value_name = "URL", default_value = "")]
    pub master: String,
    /// Address to listen on (empty: every interface).
    #[arg(long, value_name = "HOST", default_value = "")]
    pub listen_address: String,
    /// HTTPS port of the admission server.
    #[arg(long, value_name = "PORT", default_value_t = 8443)]
    pub port: u16,
    /// Server certificate (PEM), reloaded when the file changes.
    #[arg(long, value_name = "FILE")]
    pub tls_cert_file: PathBuf,
    /// Server private key (PEM), reloaded when the file changes.
    #[arg(long, value_name = "FILE")]
    pub tls_private_key_file: PathBuf,
    /// CA certificate (PEM) written into the webhook configurations' `caBundle`.
    #[arg(long, value_name = "FILE")]
    pub ca_cert_file: Option<PathBuf>,
    /// URL the API server calls (when the webhook runs outside the cluster).
    #[arg(long, value_name = "URL", default_value = "")]
    pub webhook_url: String,
    /// Namespace of the webhook's Service.
    #[arg(long, value_name = "NAMESPACE", default_value = "")]
    pub webhook_namespace: String,
    /// Name of the webhook's Service.
    #[arg(long, value_name = "NAME", default_value = "")]
    pub webhook_service_name: String,
    /// Admission paths to serve, comma separated.
    #[arg(long, value_name = "PATHS", default_value = DEFAULT_ENABLED)]
    pub enabled_admission: String,
    /// Scheduler name a Job gets by default and whose pods `/pods/validate` checks (repeatable).
    #[arg(long = "scheduler-name", value_name = "NAME", default_value = "volcano", action = ArgAction::Append)]
    pub scheduler_names: Vec<String>,
    /// The admission ConfigMap's data file (`resourceGroups` for `/pods/mutate`).
    #[arg(long, value_name = "FILE", default_value = "")]
    pub admission_conf: String,
    /// Client-side limit of the webhook's own API requests per second.
    #[arg(long, value_name = "QPS", default_value_t = 50.0)]
    pub kube_api_qps: f64,
    /// Client-side burst above `--kube-api-qps`.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub kube_api_burst: u32,
    /// Serve `/healthz` on `--healthz-address`.
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub enable_healthz: bool,
    /// Address of `/healthz`.
    #[arg(long, value_name = "ADDR", default_value = ":11251")]
    pub healthz_address: String,
    /// Deepest allowed queue hierarchy.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub max_queue_depth: usize,
    /// Refuse changes of the root queue's capability, deserved and guarantee.
    #[arg(long, value_name = "BOOL", default_value_t = true, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub enable_root_queue_protection: bool,
    /// Refuse deleting a queue that has allocated pods.
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = ArgAction::Set)]
    pub enable_queue_allocated_pods_check: bool,
    /// How long open requests may finish after SIGTERM.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub graceful_shutdown_time: Duration,
    /// How long to wait for each webhook configuration to exist before writing its CA bundle.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = duration)]
    pub webhook_configuration_wait: Duration,
    /// How often the certificate files are checked for a change.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration)]
    pub cert_reload_period: Duration,
    /// Volcano's feature gates, `Name=true|false,…`: `SchedulingGatesQueueAdmission=true` makes
    /// `/pods/mutate` add the `scheduling.volcano.sh/queue-allocation-gate` scheduling gate to
    /// pods annotated with it (`"true"`); other gates are accepted and reported as without effect.
    #[arg(long, value_name = "GATES", default_value = "")]
    pub feature_gates: String,
    /// klog verbosity: 0–3 info, 4 debug, 5+ trace (`RUST_LOG` overrides).
    #[arg(short = 'v', long = "v", value_name = "LEVEL", default_value_t = 0)]
    pub verbosity: u8,
}

impl WebhookManagerArgs {
    /// The `tracing` filter `-v` asks for.
    pub fn log_filter(&self) -> &'static str {
        match self.verbosity {
            0..=3 => "info",
            4 => "debug",
            _ => "trace",
        }
    }

    /// The options, checked: the enabled paths, a positive QPS, a queue depth of at least 1, an
    /// admission conf that reads and parses (its `resourceGroups` for `/pods/mutate`).
    ///
    /// Errors: the flag and why.
    pub fn options(&self) -> Result<WebhookOptions, String> {
        let enabled = parse_enabled(&self.enabled_admission)?;
        let gates = super::feature_gates::FeatureGates::parse(&self.feature_gates)?;
        for w in gates.warnings() {
            tracing::warn!("{w}");
        }
        if self.kube_api_qps <= 0.0 {
            return Err("--kube-api-qps must be positive".into());
        }
        if self.max_queue_depth == 0 {
            return Err("--max-queue-depth must be at least 1".into());
        }
        let admission_conf = if self.admission_conf.is_empty() {
            None
        } else {
            let text = std::fs::read_to_string(&self.admission_conf)
                .map_err(|e| format!("--admission-conf {}: {e}", self.admission_conf))?;
            let conf = AdmissionConf::parse(&text).map_err(|e| format!("--admission-conf {}: {e}", self.admission_conf))?;
            Some((PathBuf::from(&self.admission_conf), conf))
        };
        Ok(WebhookOptions {
            kubeconfig: self.kubeconfig.clone(),
            master: self.master.clone(),
            listen_address: self.listen_address.clone(),
            port: self.port,
            tls_cert_file: self.tls_cert_file.clone(),
            tls_private_key_file: self.tls_private_key_file.clone(),
            ca_cert_file: self.ca_cert_file.clone(),
            webhook_url: self.webhook_url.clone(),
            webhook_namespace: self.webhook_namespace.clone(),
            webhook_service_name: self.webhook_service_name.clone(),
            enabled,
            scheduler_names: self.scheduler_names.clone(),
            queue_rules: QueueRules {
                max_depth: self.max_queue_depth,
                root_protection: self.enable_root_queue_protection,
                allocated_pods_check: self.enable_queue_allocated_pods_check,
            },
            kube_api_qps: self.kube_api_qps,
            kube_api_burst: self.kube_api_burst,
            healthz: self.enable_healthz.then(|| self.healthz_address.clone()),
            cert_poll: self.cert_reload_period,
            configuration_wait: self.webhook_configuration_wait,
            graceful_shutdown: self.graceful_shutdown_time,
            admission_conf,
            scheduling_gates_queue_admission: gates.enabled(super::feature_gates::SCHEDULING_GATES_QUEUE_ADMISSION),
        })
    }
}

/// Runs `basalt webhook-manager`; returns the exit code (2 for bad flags).
pub fn run(args: &WebhookManagerArgs) -> u8 {
    match args.options() {
        Ok(o) => crate::webhooks::run::run(o),
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: WebhookManagerArgs,
    }

    fn parse(args: &[&str]) -> WebhookManagerArgs {
        let mut all = vec!["x", "--tls-cert-file=c.pem", "--tls-private-key-file=k.pem"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).unwrap().a
    }

    #[test]
    fn defaults_are_volcanos() {
        let o = parse(&[]).options().unwrap();
        assert_eq!(o.port, 8443);
        assert_eq!(o.enabled.len(), 7);
        assert_eq!(o.scheduler_names, ["volcano"]);
        assert_eq!(
            (o.queue_rules.max_depth, o.queue_rules.root_protection, o.queue_rules.allocated_pods_check),
            (5, true, false)
        );
        assert_eq!((o.kube_api_qps, o.kube_api_burst), (50.0, 100));
        assert_eq!(o.healthz, None);
    }

    #[test]
    fn bad_flags_are_errors_naming_them() {
        assert!(parse(&["--enabled-admission=/jobs/nope"])
            .options()
            .unwrap_err()
            .starts_with("--enabled-admission: unknown path"));
        assert!(parse(&["--kube-api-qps=0"]).options().unwrap_err().starts_with("--kube-api-qps"));
        assert!(parse(&["--admission-conf=/nonexistent"]).options().unwrap_err().starts_with("--admission-conf /nonexistent"));
        let dir = std::env::temp_dir().join(format!("basalt-admission-conf-{}", std::process::id()));
        std::fs::write(&dir, "resourceGroups:\n- resourceGroup: gpu\n  object: {key: namespace, value: [ns]}\n").unwrap();
        let p = format!("--admission-conf={}", dir.display());
        let o = parse(&[&p]).options().unwrap();
        assert_eq!(o.admission_conf.as_ref().map(|(_, c)| c.groups[0].name.as_str()), Some("gpu"));
        std::fs::write(&dir, "resourceGroups:\n- resourceGroup: gpu\n  affinity: '{'\n").unwrap();
        let err = parse(&[&p]).options().unwrap_err();
        assert!(err.contains("resourceGroups[0] (gpu): field affinity"), "{err}");
        std::fs::remove_file(dir).unwrap();
    }
}
