//! The API server's own ceiling for bindings: POST `pods/{name}/binding` for every pod of a
//! batch straight from the bench, `concurrency` requests in flight, nodes round-robin, the way
//! kubernetes-api.md §9 measured it (there with a Python client and 16 connections).

use crate::setup::node_name;
use futures::StreamExt;
use kube::Client;
use std::time::{Duration, Instant};

/// Result of the direct-binding run.
#[derive(Clone, Debug)]
pub struct CeilingRun {
    /// Wall time from the first POST to the last answer.
    pub wall: Duration,
    /// Bindings the server refused (must be 0).
    pub errors: u64,
    /// The first refusal's message, if any.
    pub first_error: Option<String>,
}

/// Binds `pods` of `namespace` to nodes `node-{i % nodes}`, `concurrency` at a time, with
/// `client`'s identity.
pub async fn bind_all(client: &Client, namespace: &str, pods: &[String], nodes: usize, concurrency: usize) -> CeilingRun {
    let t0 = Instant::now();
    let mut errors = 0u64;
    let mut first_error = None;
    let mut results = futures::stream::iter(pods.iter().enumerate())
        .map(|(i, pod)| async move {
            crate::support::bind_pod(client, namespace, pod, &node_name(i % nodes))
                .await
                .map_err(|e| format!("{namespace}/{pod}: {e}"))
        })
        .buffer_unordered(concurrency);
    while let Some(r) = results.next().await {
        if let Err(e) = r {
            errors += 1;
            first_error.get_or_insert(e);
        }
    }
    CeilingRun { wall: t0.elapsed(), errors, first_error }
}
