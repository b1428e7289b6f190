//! Taking a `bus.volcano.sh/v1alpha1` Command off the server before acting on it, as Volcano's
//! job and queue controllers do (volcano-behaviour.md §5.1, §5.3): the Command is deleted first,
//! so that each is acted on once even when several controllers or replicas see it.

use super::metrics::ControllerMetrics;
use super::retry::api_code;
use crate::crd::Command;
use crate::plumbing::limiter::RateLimiter;
use kube::api::{Api, DeleteParams};
use kube::Client;

/// Deletes Command `ns/name` (behind `limiter`, counted as the `delete_command` API call):
/// true when this call deleted it and the caller should act on it; false when it was already
/// gone (404: someone else took it) or the delete failed (logged, naming the Command).
pub async fn take(client: &Client, limiter: &RateLimiter, metrics: &ControllerMetrics, ns: &str, name: &str) -> bool {
    let api: Api<Command> = Api::namespaced(client.clone(), ns);
    limiter.acquire().await;
    metrics.record_api("delete_command");
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => true,
        Err(e) if api_code(&e) == Some(404) => false,
        Err(e) => {
            tracing::warn!(command = %format!("{ns}/{name}"), "deleting Command {ns}/{name}: {e}");
            false
        }
    }
}
