//! The PodGroup controller (`pg-controller`, volcano-behaviour.md §5.2): gives every plain pod
//! of the controller's `--scheduler-name`s that names no PodGroup one, `podgroup-<owner UID |
//! pod UID>` ([`super::plain_pod::build`]), then annotates the pod with it
//! (`scheduling.k8s.io/group-name`), so the scheduler gangs it.
//!
//! Watches: pods of each scheduler name (field selector `spec.schedulerName`), and PodGroups
//! (which exist already). Work: `--worker-threads-for-podgroup` workers, each with its own
//! rate-limited queue, pods hashed to a worker by `namespace/name`. One pod: skipped when it is
//! gone or already grouped; the owners' annotations are read (ReplicaSet, StatefulSet,
//! DaemonSet, batch Job; with `--inherit-owner-annotations`) only when the PodGroup must be
//! created; the PodGroup is created unless the watch has it (a 409 counts as created); the pod
//! is patched. So a restart re-does nothing already done, and every pod of a ReplicaSet shares
//! its owner's PodGroup. A failed step is retried with backoff up to `--max-requeue-num` times.
//!
//! Not done (Volcano does): deleting the PodGroup of a ReplicaSet or StatefulSet scaled to 0,
//! and updating a PodGroup whose owner's template changed.

use super::keys::GROUP_NAME;
use super::metrics::ControllerMetrics;
use super::plain_pod::{self, pod_key};
use super::queue::{worker_of, WorkQueue};
use super::retry::{api_code, drain, lock, Failure};
use crate::crd::PodGroup;
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::watch::{self, WatchStats};
use k8s_openapi::api::apps::v1::{DaemonSet, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job as BatchJob;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::watcher::{self, Event as WEvent};
use kube::Client;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// The PodGroup controller's settings (from `basalt controller`'s flags).
#[derive(Clone, Debug)]
pub struct PgConfig {
    /// `--scheduler-name` values: pods of these schedulers get PodGroups.
    pub scheduler_names: Vec<String>,
    /// `--worker-threads-for-podgroup` (at least 1).
    pub workers: usize,
    /// `--inherit-owner-annotations`.
    pub inherit_owner_annotations: bool,
    /// `--max-requeue-num` (−1: unlimited).
    pub max_requeue: i32,
}

/// What the watches and workers share.
pub struct PgController {
    client: Client,
    limiter: Arc<RateLimiter>,
    metrics: Arc<ControllerMetrics>,
    cfg: PgConfig,
    pods: Mutex<HashMap<String, Pod>>,
    groups: Mutex<HashSet<String>>,
    queues: Vec<WorkQueue<String>>,
}

impl PgController {
    /// Starts the watches and workers; returns their tasks (abort them to stop).
    pub fn spawn(
        client: Client,
        limiter: Arc<RateLimiter>,
        metrics: Arc<ControllerMetrics>,
        cfg: PgConfig,
    ) -> Vec<JoinHandle<()>> {
        let workers = cfg.workers.max(1);
        let names = cfg.scheduler_names.clone();
        let ctl = Arc::new(PgController {
            client,
            limiter,
            metrics,
            cfg,
            pods: Mutex::default(),
            groups: Mutex::default(),
            queues: (0..workers).map(|_| WorkQueue::default()).collect(),
        });
        let mut tasks = vec![tokio::spawn(ctl.clone().watch_groups())];
        for name in names {
            tasks.push(tokio::spawn(ctl.clone().watch_pods(name)));
        }
        for w in 0..workers {
            tasks.push(tokio::spawn(ctl.clone().worker(w)));
        }
        tasks
    }

    fn enqueue(&self, key: String) {
        let w = worker_of(&key, self.queues.len());
        self.queues[w].add(key);
    }

    async fn watch_pods(self: Arc<Self>, scheduler: String) {
        let api: Api<Pod> = Api::all(self.client.clone());
        let cfg = watcher::Config::default().fields(&format!("spec.schedulerName={scheduler}"));
        let what = format!("Pod (schedulerName {scheduler})");
        watch::run(&what, watch::stream(api, cfg), &WatchStats::default(), |ev| {
            match ev {
                WEvent::Apply(p) | WEvent::InitApply(p) => {
                    let key = pod_key(&p);
                    let wants = plain_pod::wants_group(&p, &self.cfg.scheduler_names);
                    lock(&self.pods).insert(key.clone(), p);
                    if wants {
                        self.enqueue(key);
                    }
                }
                WEvent::Delete(p) => {
                    lock(&self.pods).remove(&pod_key(&p));
                }
                _ => {}
            }
            std::future::ready(true)
        })
        .await
    }

    async fn watch_groups(self: Arc<Self>) {
        let api: Api<PodGroup> = Api::all(self.client.clone());
        let key = |g: &PodGroup| {
            format!("{}/{}", g.metadata.namespace.as_deref().unwrap_or_default(), g.metadata.name.as_deref().unwrap_or_default())
        };
        watch::run("PodGroup", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
            match ev {
                WEvent::Apply(g) | WEvent::InitApply(g) => {
                    lock(&self.groups).insert(key(&g));
                }
                WEvent::Delete(g) => {
                    lock(&self.groups).remove(&key(&g));
                }
                _ => {}
            }
            std::future::ready(true)
        })
        .await
    }

    async fn worker(self: Arc<Self>, w: usize) {
        let q = self.queues[w].clone();
        drain(q, self.cfg.max_requeue, &self.metrics, "pod", |key| {
            let me = self.clone();
            async move { me.process(&key).await }
        })
        .await
    }

    /// One pod: create its PodGroup when missing, then annotate the pod.
    ///
    /// Errors: an API call failed (the pod is retried, no sooner than the server's
    /// `Retry-After`), or the pod cannot be grouped (named).
    async fn process(&self, key: &str) -> Result<(), Failure> {
        let Some(pod) = lock(&self.pods).get(key).cloned() else { return Ok(()) };
        if !plain_pod::wants_group(&pod, &self.cfg.scheduler_names) {
            return Ok(());
        }
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        let name = plain_pod::group_name(&pod).map_err(|e| e.to_string())?;
        let group_key = format!("{ns}/{name}");
        if !lock(&self.groups).contains(&group_key) {
            let owners = if self.cfg.inherit_owner_annotations { self.owner_annotations(&pod).await } else { BTreeMap::new() };
            let built = plain_pod::build(&pod, &owners, self.cfg.inherit_owner_annotations).map_err(|e| e.to_string())?;
            for w in &built.warnings {
                tracing::warn!(pod = %key, "{w}");
            }
            let api: Api<PodGroup> = Api::namespaced(self.client.clone(), &ns);
            self.limiter.acquire().await;
            self.metrics.record_api("create_podgroup");
            match api.create(&PostParams::default(), &built.pod_group).await {
                Ok(_) => tracing::info!(pod = %key, podgroup = %name, "created PodGroup {ns}/{name} for pod {key}"),
                Err(e) if api_code(&e) == Some(409) => {}
                Err(e) => return Err(Failure::api(format_args!("creating PodGroup {ns}/{name} for pod {key}"), &e)),
            }
            lock(&self.groups).insert(group_key);
        }
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        self.limiter.acquire().await;
        self.metrics.record_api("patch_pod");
        match pods.patch(&pod_name, &PatchParams::default(), &Patch::Merge(plain_pod::group_annotation_patch(&name))).await {
            Ok(p) => {
                let mut cache = lock(&self.pods);
                if let Some(slot) = cache.get_mut(key) {
                    // Only a newer pod than the watch's replaces it (the watch may be ahead).
                    if lacks_group(slot) {
                        *slot = p;
                    }
                }
                Ok(())
            }
            Err(e) if api_code(&e) == Some(404) => Ok(()),
            Err(e) => Err(Failure::api(format_args!("annotating pod {key} with {GROUP_NAME}={name}"), &e)),
        }
    }

    /// The annotations of the pod's owners that Volcano reads (ReplicaSet, DaemonSet,
    /// StatefulSet, batch/v1 Job), the first owner's value winning for a key; an owner that
    /// cannot be read is logged and skipped, as Volcano does.
    async fn owner_annotations(&self, pod: &Pod) -> BTreeMap<String, String> {
        let ns = pod.metadata.namespace.clone().unwrap_or_default();
        let mut out = BTreeMap::new();
        for o in pod.metadata.owner_references.iter().flatten() {
            if o.name.is_empty() {
                continue;
            }
            self.limiter.acquire().await;
            let got = match o.kind.as_str() {
                "ReplicaSet" => self.get_annotations::<ReplicaSet>(&ns, &o.name, "get_replicaset").await,
                "DaemonSet" => self.get_annotations::<DaemonSet>(&ns, &o.name, "get_daemonset").await,
                "StatefulSet" => self.get_annotations::<StatefulSet>(&ns, &o.name, "get_statefulset").await,
                "Job" if o.api_version.starts_with("batch/") => self.get_annotations::<BatchJob>(&ns, &o.name, "get_job").await,
                _ => continue,
            };
            match got {
                Ok(ann) => {
                    for (k, v) in ann {
                        out.entry(k).or_insert(v);
                    }
                }
                Err(e) => tracing::warn!(pod = %pod_key(pod), "cannot read owner {} {ns}/{}: {e}", o.kind, o.name),
            }
        }
        out
    }

    async fn get_annotations<K>(&self, ns: &str, name: &str, call: &'static str) -> Result<BTreeMap<String, String>, kube::Error>
    where
        K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        self.metrics.record_api(call);
        let api: Api<K> = Api::namespaced(self.client.clone(), ns);
        Ok(api.get(name).await?.meta().annotations.clone().unwrap_or_default())
    }
}

/// Whether a pod lacks the group annotation.
fn lacks_group(p: &Pod) -> bool {
    p.metadata.annotations.as_ref().and_then(|a| a.get(GROUP_NAME)).is_none_or(|g| g.is_empty())
}
