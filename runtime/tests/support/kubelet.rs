//! [`Kubelet`]: the node side of the test cluster, which a bare kube-apiserver does not have
//! (kubernetes-api.md §9 "What differs from a full cluster").

use super::objects::rfc3339_now;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, Semaphore};
use tokio::task::{AbortHandle, JoinHandle, JoinSet};

/// Pod annotation: seconds (a non-negative integer) the pod runs before the [`Kubelet`] marks it
/// `Succeeded`. Without it a pod runs until deleted.
pub const DURATION_ANNOTATION: &str = "basalt.dev/duration-seconds";

/// Pod annotation: the exit code (an integer) the pod's containers end with after
/// [`DURATION_ANNOTATION`] seconds; non-zero marks the pod `Failed` instead of `Succeeded`.
pub const EXIT_CODE_ANNOTATION: &str = "basalt.dev/exit-code";

/// A tokio task playing every node's kubelet for pods in one namespace (or all):
///
/// * a pod bound to a node (`spec.nodeName` set) in phase `Pending` (or no phase) is marked
///   `Running` through a strategic-merge PATCH of `pods/{name}/status`: `startTime`, conditions
///   `Initialized`, `ContainersReady`, `Ready` = True (the scheduler's `PodScheduled` is kept),
///   each container `running`;
/// * if it has annotation [`DURATION_ANNOTATION`], that many seconds later it is marked
///   `Succeeded` (containers `terminated` with exit code 0, `Ready` = False `PodCompleted`), or
///   `Failed` with the exit code of [`EXIT_CODE_ANNOTATION`] when that is non-zero;
/// * a bound pod being deleted (`deletionTimestamp` set) is deleted with `gracePeriodSeconds: 0`,
///   as a kubelet does once the containers are gone.
///
/// Pods are handled in parallel, at most [`KUBELET_CONCURRENCY`] API calls at once; one pod's
/// calls stay in order (its deletion first stops its Running/finish task). Status writes carry
/// the pod's UID as a precondition, so a pod deleted and re-created under
/// the same name is not touched by a stale timer. Pods already `Running` when it starts are left
/// as they are (no completion timer). Errors met (API errors, a malformed duration)
/// are collected, never dropped: see [`Kubelet::errors`]. Dropping it stops the task.
pub struct Kubelet {
    task: Option<JoinHandle<()>>,
    stop: Option<oneshot::Sender<()>>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Kubelet {
    /// Starts watching pods in `namespace` (None: all namespaces) with `client` (use an admin
    /// client: the kubelet's own RBAC is not modelled). Must be called inside a tokio runtime.
    pub fn start(client: Client, namespace: Option<&str>) -> Kubelet {
        let api: Api<Pod> = match namespace {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        };
        let errors = Arc::new(Mutex::new(Vec::new()));
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = tokio::spawn(run(client, api, stop_rx, errors.clone()));
        Kubelet { task: Some(task), stop: Some(stop_tx), errors }
    }

    /// Errors met so far, one message each (object and cause).
    pub fn errors(&self) -> Vec<String> {
        self.errors.lock().map(|e| e.clone()).unwrap_or_else(|p| p.into_inner().clone())
    }

    /// Stops the task (pending completions are dropped) and returns the errors it met.
    pub async fn stop(mut self) -> Vec<String> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.errors()
    }
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

fn record(errors: &Mutex<Vec<String>>, message: String) {
    match errors.lock() {
        Ok(mut e) => e.push(message),
        Err(p) => p.into_inner().push(message),
    }
}

/// API calls the [`Kubelet`] has in flight at once: one kubelet per node works in parallel with
/// the others, so a serial loop would make the test's node side, not the component under test,
/// the bottleneck of a burst (at 50 ms a call, a serial loop starts 20 pods a second).
pub const KUBELET_CONCURRENCY: usize = 16;

async fn run(client: Client, api: Api<Pod>, mut stop: oneshot::Receiver<()>, errors: Arc<Mutex<Vec<String>>>) {
    let mut pods = watcher(api, watcher::Config::default()).default_backoff().boxed();
    let mut started: HashSet<String> = HashSet::new();
    let mut deleting: HashSet<String> = HashSet::new();
    // The task running each started pod (mark Running, wait, mark finished), by UID: a deletion
    // aborts it first, so one pod's calls never race each other.
    let mut lives: HashMap<String, AbortHandle> = HashMap::new();
    let mut tasks: JoinSet<()> = JoinSet::new();
    let calls = Arc::new(Semaphore::new(KUBELET_CONCURRENCY));
    loop {
        tokio::select! {
            _ = &mut stop => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            event = pods.next() => {
                let pod = match event {
                    None => break,
                    Some(Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod))) => pod,
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => {
                        record(&errors, format!("kubelet: pod watch: {e}"));
                        continue;
                    }
                };
                let (Some(uid), Some(ns)) = (pod.uid(), pod.namespace()) else { continue };
                let name = pod.name_any();
                let bound = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
                if !bound {
                    continue;
                }
                let pods_api: Api<Pod> = Api::namespaced(client.clone(), &ns);
                if pod.metadata.deletion_timestamp.is_some() {
                    if deleting.insert(uid.clone()) {
                        if let Some(life) = lives.remove(&uid) {
                            life.abort();
                        }
                        let (errors, calls) = (errors.clone(), calls.clone());
                        tasks.spawn(async move {
                            let _permit = calls.acquire_owned().await;
                            let dp = DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() };
                            match pods_api.delete(&name, &dp.preconditions(kube::api::Preconditions { uid: Some(uid), resource_version: None })).await {
                                Ok(_) => {}
                                Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
                                Err(e) => record(&errors, format!("kubelet: deleting Pod {ns}/{name}: {e}")),
                            }
                        });
                    }
                    continue;
                }
                let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
                if phase != "Pending" || !started.insert(uid.clone()) {
                    continue;
                }
                let (errors, calls) = (errors.clone(), calls.clone());
                let life = tasks.spawn(live(pods_api, pod, uid.clone(), errors, calls));
                lives.insert(uid, life);
            }
        }
    }
}

/// One started pod's life: marked `Running`, then, with a [`DURATION_ANNOTATION`], marked
/// finished that many seconds later; each API call holds a permit of `calls`.
async fn live(pods_api: Api<Pod>, pod: Pod, uid: String, errors: Arc<Mutex<Vec<String>>>, calls: Arc<Semaphore>) {
    let (ns, name) = (pod.namespace().unwrap_or_default(), pod.name_any());
    {
        let _permit = calls.acquire().await;
        if let Err(e) = mark_running(&pods_api, &pod, &uid).await {
            record(&errors, format!("kubelet: marking Pod {ns}/{name} Running: {e}"));
            return;
        }
    }
    let Some(text) = pod.annotations().get(DURATION_ANNOTATION) else { return };
    let seconds: u64 = match text.trim().parse() {
        Ok(s) => s,
        Err(e) => {
            record(
                &errors,
                format!(
                    "kubelet: Pod {ns}/{name}: annotation {DURATION_ANNOTATION}={text:?} is not a whole number of seconds: {e}"
                ),
            );
            return;
        }
    };
    let exit_code: i32 = match pod.annotations().get(EXIT_CODE_ANNOTATION).map(|t| t.trim().parse()) {
        None => 0,
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            record(&errors, format!("kubelet: Pod {ns}/{name}: annotation {EXIT_CODE_ANNOTATION} is not an integer: {e}"));
            return;
        }
    };
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let _permit = calls.acquire().await;
    if let Err(e) = mark_finished(&pods_api, &pod, &uid, exit_code).await {
        record(&errors, format!("kubelet: marking Pod {ns}/{name} finished (exit code {exit_code}): {e}"));
    }
}

fn container_names(pod: &Pod) -> Vec<(String, String)> {
    pod.spec
        .as_ref()
        .map(|s| s.containers.iter().map(|c| (c.name.clone(), c.image.clone().unwrap_or_default())).collect())
        .unwrap_or_default()
}

async fn mark_running(api: &Api<Pod>, pod: &Pod, uid: &str) -> Result<(), kube::Error> {
    let now = rfc3339_now();
    let containers: Vec<_> = container_names(pod)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": "", "ready": true, "started": true, "restartCount": 0,
                   "state": {"running": {"startedAt": now}}})
        })
        .collect();
    let cond = |t: &str| json!({"type": t, "status": "True", "lastTransitionTime": now});
    let patch = json!({
        "metadata": {"uid": uid},
        "status": {
            "phase": "Running",
            "startTime": now,
            "hostIP": "127.0.0.1",
            "conditions": [cond("Initialized"), cond("ContainersReady"), cond("Ready")],
            "containerStatuses": containers,
        }
    });
    api.patch_status(&pod.name_any(), &PatchParams::default(), &Patch::Strategic(&patch)).await.map(|_| ())
}

async fn mark_finished(api: &Api<Pod>, pod: &Pod, uid: &str, exit_code: i32) -> Result<(), kube::Error> {
    let now = rfc3339_now();
    let (phase, reason) = if exit_code == 0 { ("Succeeded", "Completed") } else { ("Failed", "Error") };
    let containers: Vec<_> = container_names(pod)
        .into_iter()
        .map(|(name, image)| {
            json!({"name": name, "image": image, "imageID": "", "ready": false, "started": false, "restartCount": 0,
                   "state": {"terminated": {"exitCode": exit_code, "reason": reason, "finishedAt": now}}})
        })
        .collect();
    let cond = |t: &str| json!({"type": t, "status": "False", "reason": "PodCompleted", "lastTransitionTime": now});
    let patch = json!({
        "metadata": {"uid": uid},
        "status": {
            "phase": phase,
            "conditions": [cond("ContainersReady"), cond("Ready")],
            "containerStatuses": containers,
        }
    });
    match api.patch_status(&pod.name_any(), &PatchParams::default(), &Patch::Strategic(&patch)).await {
        Ok(_) => Ok(()),
        // Deleted meanwhile (or replaced by a pod with another UID): nothing left to complete.
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}
