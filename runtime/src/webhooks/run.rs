//! `basalt webhook-manager` from start to signal: the certificate loaded (a bad one is an error
//! at start), the API client, the Queue cache's first list, the CA bundle written into the
//! enabled paths' webhook configurations, the HTTPS server, the certificate reload loop, and
//! `/healthz`; a stop signal lets open requests finish for `--graceful-shutdown-time`.

use super::admission_conf::ConfFile;
use super::options::WebhookOptions;
use super::review::Context;
use super::server::{self, NamespaceReader, Service};
use super::{ca_bundle, queue_cache, tls};
use crate::admission::QueueIndex;
use crate::plumbing::client::{api_client, block_on, serve, wait_for_signal, Endpoints};
use crate::plumbing::http::ListenAddress;
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::watch::WatchStats;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// Exit code: a bad flag, certificate or configuration at start.
pub const EXIT_START: u8 = 1;

/// Runs the webhook manager; returns the exit code.
pub fn run(o: WebhookOptions) -> u8 {
    block_on(EXIT_START, main(o))
}

async fn main(o: WebhookOptions) -> u8 {
    match start(o).await {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_START
        }
    }
}

async fn start(o: WebhookOptions) -> Result<(), String> {
    if o.webhook_url.is_empty() && o.webhook_namespace.is_empty() && o.webhook_service_name.is_empty() {
        return Err("failed to start webhooks as both 'url' and 'namespace/name' of webhook are empty".into());
    }
    let cert = Arc::new(tls::ReloadingCert::new(&o.tls_cert_file, &o.tls_private_key_file)?);
    let ca = match &o.ca_cert_file {
        Some(p) => Some(std::fs::read(p).map_err(|e| format!("--ca-cert-file {}: {e}", p.display()))?),
        None => None,
    };
    let tls_config = tls::server_config(cert.clone())?;
    let identity = std::env::var("HOSTNAME").unwrap_or_else(|_| "basalt-webhook-manager".into());
    let client = api_client(&o.kubeconfig, &o.master, "basalt-webhook-manager", &identity).await?;

    let queues = Arc::new(RwLock::new(QueueIndex::default()));
    let stats = Arc::new(WatchStats::default());
    let mut listed = queue_cache::start(client.clone(), queues.clone(), stats);
    tracing::info!("webhook manager: waiting for the Queue list");
    while !*listed.borrow() {
        if listed.changed().await.is_err() {
            return Err("the Queue watch ended before its first list".into());
        }
    }

    if let Some(ca) = &ca {
        for path in &o.enabled {
            let changed = ca_bundle::add(&client, path, ca, o.configuration_wait)
                .await
                .map_err(|e| format!("failed to add caCert for webhook {e}"))?;
            tracing::info!(path, changed, "CA bundle of {} is in place", super::paths::configuration_name(path));
        }
    } else {
        tracing::warn!("no --ca-cert-file: the webhook configurations' caBundle is left as it is");
    }

    let limiter = Arc::new(RateLimiter::new(o.kube_api_qps, o.kube_api_burst));
    let ns_client = client.clone();
    let namespaces: NamespaceReader = Arc::new(move |ns: String| {
        let api: Api<Namespace> = Api::all(ns_client.clone());
        let limiter = limiter.clone();
        Box::pin(async move {
            limiter.acquire().await;
            match api.get(&ns).await {
                Ok(n) => Some(n.metadata.annotations.unwrap_or_default()),
                Err(e) => {
                    tracing::error!("Failed to get namespace {ns}: {e}");
                    None
                }
            }
        })
    });
    let admission_conf = Arc::new(RwLock::new(o.admission_conf.as_ref().map(|(_, c)| c.clone()).unwrap_or_default()));
    let ctx = Context {
        queues,
        queue_rules: o.queue_rules.clone(),
        scheduler_names: o.scheduler_names.clone(),
        admission_conf: admission_conf.clone(),
        scheduling_gates_queue_admission: o.scheduling_gates_queue_admission,
    };
    let svc = Arc::new(Service { enabled: o.enabled.clone(), ctx, namespaces });

    let addr = ListenAddress { host: (!o.listen_address.is_empty()).then(|| o.listen_address.clone()), port: o.port };
    let listener = addr.bind().await.map_err(|e| format!("--listen-address/--port: {e}"))?;
    let (shutdown_tx, shutdown_rx) = tokio::sync::watch::channel(false);
    let (local, server_task) = server::spawn(listener, tls_config, svc, shutdown_rx.clone());
    tracing::info!("webhook manager serving {} on https://{local}", o.enabled.join(","));

    let serving = Arc::new(AtomicBool::new(true));
    let health = serving.clone();
    let _http = serve(
        Endpoints {
            metrics: None,
            healthz: o.healthz.clone().map(|a| {
                (a, Arc::new(move || if health.load(Ordering::Relaxed) { Ok(()) } else { Err("stopping".into()) }) as _)
            }),
        },
        shutdown_rx.clone(),
    )
    .await?;

    let poll = o.cert_poll;
    let mut conf_file = o.admission_conf.as_ref().map(|(p, _)| ConfFile::new(p.clone()));
    let reload = tokio::spawn(async move {
        loop {
            tokio::time::sleep(poll).await;
            match cert.reload_if_changed() {
                Ok(true) => tracing::info!("webhook certificate reloaded"),
                Ok(false) => {}
                Err(e) => tracing::error!("webhook certificate not reloaded, the last good one is still served: {e}"),
            }
            if let Some(f) = conf_file.as_mut() {
                f.reload_into(&admission_conf);
            }
        }
    });

    wait_for_signal().await;
    serving.store(false, Ordering::Relaxed);
    let _ = shutdown_tx.send(true);
    reload.abort();
    let _ = tokio::time::timeout(o.graceful_shutdown, server_task).await;
    Ok(())
}
