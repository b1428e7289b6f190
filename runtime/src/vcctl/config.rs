//! The API client of `vcctl`, found as Volcano's `util.BuildConfig` finds it (client-go's
//! default loading rules): `--kubeconfig` when given, else `$KUBECONFIG` (a list of files) or
//! `~/.kube/config`, else the in-cluster ServiceAccount; `--master` overrides the server.

use crate::plumbing::client::client_config;
use kube::{Client, Config};

/// The client for `kubeconfig` and `master` (empty strings: not given).
///
/// Errors: a `--kubeconfig` file missing or unreadable (the message names the flag and the file,
/// as [`client_config`] does); no kubeconfig found and not in a cluster; a `--master` that is no
/// URL; a client that cannot be built (TLS material unreadable).
pub async fn client(kubeconfig: &str, master: &str) -> Result<Client, String> {
    let cfg = if !kubeconfig.is_empty() {
        client_config(kubeconfig, master).await?
    } else {
        let mut cfg = Config::infer().await.map_err(|e| {
            format!("no --kubeconfig given and none found ($KUBECONFIG, ~/.kube/config) nor an in-cluster config: {e}")
        })?;
        if !master.is_empty() {
            cfg.cluster_url = master.parse().map_err(|e| format!("--master {master:?}: {e}"))?;
        }
        cfg
    };
    Client::try_from(cfg).map_err(|e| format!("cannot build the API client: {e}"))
}
