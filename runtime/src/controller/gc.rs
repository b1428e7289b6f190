//! The TTL collector (Volcano's garbage collector, volcano-behaviour.md §5.4): a Job with
//! `ttlSecondsAfterFinished` that is Completed, Failed or Terminated is deleted once that many
//! seconds have passed since its last transition.
//!
//! Difference: Volcano deletes with `propagationPolicy: Foreground`; Basalt uses `Background`,
//! so the Job goes at once and Kubernetes' garbage collector removes its pods and PodGroup
//! afterwards through their owner references (Foreground would leave the Job in place until the
//! garbage collector ran, forever on a server without one).

use super::cache::Cache;
use super::metrics::ControllerMetrics;
use super::state::phase_of;
use crate::crd::Job;
use crate::plumbing::limiter::RateLimiter;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Preconditions, PropagationPolicy};
use kube::Client;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::AbortHandle;

/// When `job` expires: last transition + TTL, for a finished job with a TTL; else `None`.
pub fn expiry(job: &Job) -> Option<Timestamp> {
    let ttl = job.spec.ttl_seconds_after_finished?;
    let status = job.status.as_ref()?;
    if !phase_of(Some(status)).is_finished() || job.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let at: Timestamp = status
        .state
        .last_transition_time
        .as_deref()
        .and_then(|t| t.parse().ok())
        .or_else(|| job.metadata.creation_timestamp.as_ref().map(|t| t.0))?;
    at.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(i64::from(ttl.max(0)))).ok()
}

/// Schedules deletions; one timer per Job UID.
pub struct TtlCollector {
    client: Client,
    cache: Arc<Cache>,
    limiter: Arc<RateLimiter>,
    metrics: Arc<ControllerMetrics>,
    timers: Mutex<HashMap<String, AbortHandle>>,
}

impl TtlCollector {
    /// A collector deleting through `client`.
    pub fn new(client: Client, cache: Arc<Cache>, limiter: Arc<RateLimiter>, metrics: Arc<ControllerMetrics>) -> Arc<Self> {
        Arc::new(TtlCollector { client, cache, limiter, metrics, timers: Mutex::new(HashMap::new()) })
    }

    /// Looks at a Job from the watch: schedules its deletion when it has expired or will.
    pub fn observe(self: &Arc<Self>, job: &Job) {
        let (Some(at), Some(uid)) = (expiry(job), job.metadata.uid.clone()) else { return };
        let mut timers = self.timers.lock().unwrap_or_else(|p| p.into_inner());
        if timers.contains_key(&uid) {
            return;
        }
        let wait = Duration::from_millis(u64::try_from(at.as_millisecond() - Timestamp::now().as_millisecond()).unwrap_or(0));
        let (me, ns, name) =
            (self.clone(), job.metadata.namespace.clone().unwrap_or_default(), job.metadata.name.clone().unwrap_or_default());
        let u = uid.clone();
        let h = tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            me.collect(&ns, &name, &u).await;
            me.timers.lock().unwrap_or_else(|p| p.into_inner()).remove(&u);
        });
        timers.insert(uid, h.abort_handle());
    }

    async fn collect(&self, ns: &str, name: &str, uid: &str) {
        // Still the same, still expired (the job may have been restarted or re-created).
        let current = self.cache.get(&super::cache::key(ns, name)).and_then(|e| e.job);
        let Some(job) = current else { return };
        if job.metadata.uid.as_deref() != Some(uid) || expiry(&job).is_none_or(|at| at > Timestamp::now()) {
            return;
        }
        let api: Api<Job> = Api::namespaced(self.client.clone(), ns);
        let dp = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            preconditions: Some(Preconditions { uid: Some(uid.to_string()), resource_version: None }),
            ..DeleteParams::default()
        };
        self.limiter.acquire().await;
        self.metrics.record_api("delete_job");
        match api.delete(name, &dp).await {
            Ok(_) => {
                tracing::info!(job = %format!("{ns}/{name}"), phase = ?phase_of(job.status.as_ref()).as_str(), "deleted: ttlSecondsAfterFinished passed")
            }
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
            Err(e) => tracing::warn!(job = %format!("{ns}/{name}"), "deleting after ttlSecondsAfterFinished: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_last_transition_plus_ttl_for_finished_jobs() {
        let mut j: Job = serde_yaml::from_str(
            "metadata: {name: j, namespace: ns}\nspec: {ttlSecondsAfterFinished: 30}\nstatus: {state: {phase: Completed, lastTransitionTime: '2025-01-01T00:00:00Z'}}\n",
        )
        .unwrap();
        assert_eq!(expiry(&j).map(|t| t.to_string()).as_deref(), Some("2025-01-01T00:00:30Z"));
        j.status.as_mut().unwrap().state.phase = Some("Running".into());
        assert_eq!(expiry(&j), None);
        j.status.as_mut().unwrap().state.phase = Some("Failed".into());
        j.spec.ttl_seconds_after_finished = None;
        assert_eq!(expiry(&j), None);
    }
}
