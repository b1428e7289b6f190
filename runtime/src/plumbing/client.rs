//! What the two long-running commands, `basalt scheduler` ([`crate::live::runner`]) and `basalt
//! controller` ([`crate::controller::run`]), set up the same way: the async runtime, the API
//! client (`--kubeconfig`, `--master`, a `User-Agent` naming the process), the Lease
//! configuration from the leader-election flags, `/metrics` and `/healthz`, and the stop
//! signal. Flag names and defaults stay with each command's arguments (they differ: the
//! scheduler's `--kube-api-qps` is 2000, the controller's 50; their Leases and listen addresses
//! differ too).

use super::http::{serve_encoded, serve_healthz, HealthCheck, HttpServer};
use super::leader::LeaderConfig;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Runs `main` on a two-thread tokio runtime and returns its exit code, or `fatal` with a
/// message when the runtime cannot start.
pub fn block_on(fatal: u8, main: impl Future<Output = u8>) -> u8 {
    match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt.block_on(main),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            fatal
        }
    }
}

/// The client config: `kubeconfig` when given, else the in-cluster config, else the usual
/// kubeconfig lookup (`$KUBECONFIG`, `~/.kube/config`); `master` overrides the server. Empty
/// strings mean the flag was not given.
///
/// Errors: a message naming the flag and file, or the failing source.
pub async fn client_config(kubeconfig: &str, master: &str) -> Result<Config, String> {
    let mut cfg = if !kubeconfig.is_empty() {
        let kc = Kubeconfig::read_from(kubeconfig).map_err(|e| format!("--kubeconfig {kubeconfig}: {e}"))?;
        Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
            .await
            .map_err(|e| format!("--kubeconfig {kubeconfig}: {e}"))?
    } else {
        match Config::incluster() {
            Ok(c) => c,
            Err(_) => Config::infer().await.map_err(|e| format!("no --kubeconfig, no in-cluster config: {e}"))?,
        }
    };
    if !master.is_empty() {
        cfg.cluster_url = master.parse().map_err(|e| format!("--master {master:?}: {e}"))?;
    }
    Ok(cfg)
}

/// The API client of process `component` (`basalt-scheduler`, `basalt-controller`): the
/// [`client_config`] with `User-Agent: <component>/<version> (<identity>)`, so the audit log
/// tells the processes and replicas apart, and without kube-rs's retry layer: a call is one
/// request, and the callers' loops retry ([`super::retry`]).
///
/// Errors: as [`client_config`], or the client cannot be built (TLS material unreadable).
pub async fn api_client(kubeconfig: &str, master: &str, component: &str, identity: &str) -> Result<Client, String> {
    let mut cfg = client_config(kubeconfig, master).await?;
    let ua = format!("{component}/{} ({identity})", env!("CARGO_PKG_VERSION"));
    if let Ok(v) = http::HeaderValue::from_str(&ua) {
        cfg.headers.push((http::header::USER_AGENT, v));
    }
    // One retry layer: Basalt's loops ([`super::retry`]), each call behind the QPS limiter.
    // kube-rs's own (on by default) would retry 429/503/504 up to 15 times inside one call.
    cfg.default_retry = false;
    Client::try_from(cfg).map_err(|e| format!("cannot build the API client: {e}"))
}

/// The leader-election flags of either command.
#[derive(Clone, Debug)]
pub struct ElectionFlags<'a> {
    /// `--leader-elect`.
    pub elect: bool,
    /// `--leader-elect-resource-lock` (only `leases` is supported).
    pub resource_lock: &'a str,
    /// The Lease namespace.
    pub namespace: String,
    /// The Lease name.
    pub name: String,
    /// `--leader-elect-lease-duration`.
    pub lease_duration: Duration,
    /// `--leader-elect-renew-deadline`.
    pub renew_deadline: Duration,
    /// `--leader-elect-retry-period`.
    pub retry_period: Duration,
}

/// The Lease configuration for `identity`; its timings are checked only when `elect` is set
/// (client-go's rules: lease > renew deadline > retry period × 1.2).
///
/// Errors: a lock other than `leases`, or timings that break the rules, naming the flag.
pub fn lease_config(f: &ElectionFlags<'_>, identity: &str) -> Result<LeaderConfig, String> {
    if f.resource_lock != "leases" {
        return Err(format!("--leader-elect-resource-lock {:?}: only \"leases\" is supported", f.resource_lock));
    }
    let lease = LeaderConfig {
        namespace: f.namespace.clone(),
        name: f.name.clone(),
        identity: identity.to_string(),
        lease_duration: f.lease_duration,
        renew_deadline: f.renew_deadline,
        retry_period: f.retry_period,
    };
    if f.elect {
        lease.validate().map_err(|e| format!("leader election flags: {e}"))?;
    }
    Ok(lease)
}

/// Where and what to serve over HTTP.
pub struct Endpoints {
    /// `/metrics` on this address with this OpenMetrics text, when `--enable-metrics`.
    pub metrics: Option<(String, Arc<dyn Fn() -> String + Send + Sync>)>,
    /// `/healthz` on this address with this check, when `--enable-healthz`.
    pub healthz: Option<(String, HealthCheck)>,
}

/// Starts the [`Endpoints`] asked for; they stop when `shutdown` turns true. Keep the returned
/// servers alive as long as they should serve.
///
/// Errors: an address that does not parse or cannot be bound, naming the flag
/// (`--listen-address`, `--healthz-address`).
pub async fn serve(e: Endpoints, shutdown: tokio::sync::watch::Receiver<bool>) -> Result<Vec<HttpServer>, String> {
    let mut servers = Vec::new();
    if let Some((addr, encode)) = e.metrics {
        servers.push(serve_encoded(&addr, encode, shutdown.clone()).await.map_err(|e| format!("--listen-address: {e}"))?);
    }
    if let Some((addr, health)) = e.healthz {
        servers.push(serve_healthz(&addr, health, shutdown).await.map_err(|e| format!("--healthz-address: {e}"))?);
    }
    Ok(servers)
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(elect: bool, lock: &str, lease: u64) -> ElectionFlags<'_> {
        ElectionFlags {
            elect,
            resource_lock: lock,
            namespace: "volcano-system".into(),
            name: "vc-controller-manager".into(),
            lease_duration: Duration::from_secs(lease),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    #[test]
    fn lease_config_checks_lock_and_timings() {
        let l = lease_config(&flags(true, "leases", 15), "me").unwrap();
        assert_eq!(
            (l.namespace.as_str(), l.name.as_str(), l.identity.as_str()),
            ("volcano-system", "vc-controller-manager", "me")
        );
        assert!(lease_config(&flags(true, "endpoints", 15), "me")
            .unwrap_err()
            .starts_with("--leader-elect-resource-lock \"endpoints\""));
        assert!(lease_config(&flags(true, "leases", 5), "me").unwrap_err().starts_with("leader election flags: "));
        assert!(lease_config(&flags(false, "leases", 5), "me").is_ok(), "timings are not checked without election");
    }

    #[tokio::test]
    async fn bad_addresses_name_the_flag() {
        let (_tx, rx) = tokio::sync::watch::channel(false);
        let e = Endpoints { metrics: Some(("nonsense".into(), Arc::new(String::new))), healthz: None };
        assert!(serve(e, rx.clone()).await.err().unwrap().starts_with("--listen-address: "));
        let e = Endpoints { metrics: None, healthz: Some(("x:y:z".into(), Arc::new(|| Ok(())))) };
        assert!(serve(e, rx).await.err().unwrap().starts_with("--healthz-address: "));
    }

    #[tokio::test]
    async fn a_missing_kubeconfig_names_the_flag() {
        let e = client_config("/nonexistent/kubeconfig", "").await.unwrap_err();
        assert!(e.starts_with("--kubeconfig /nonexistent/kubeconfig: "), "{e}");
    }
}
