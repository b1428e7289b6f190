//! Watching one namespace's pods and noting when each is first seen bound (`spec.nodeName` set),
//! so the bench knows the moment the last pod is bound without polling the server.

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher::{self, watcher, Event};
use kube::{Api, Client, ResourceExt};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// What the watch has seen so far.
#[derive(Debug, Default)]
struct Seen {
    /// Pod name → when it was first seen bound.
    bound_at: HashMap<String, Instant>,
    /// Pods seen bound to a different node later (a pod's node never changes once bound, so
    /// this must stay 0).
    rebound: u64,
    nodes: HashMap<String, String>,
    /// Watch stream errors (the watcher relists after each).
    errors: u64,
}

/// A running watch of one namespace's pods.
pub struct BoundWatch {
    seen: Arc<Mutex<Seen>>,
    count: watch::Receiver<usize>,
    task: JoinHandle<()>,
}

/// When the pods were bound, as the watch saw it.
#[derive(Clone, Copy, Debug)]
pub struct BoundTimes {
    /// The first pod seen bound.
    pub first: Instant,
    /// The last pod seen bound.
    pub last: Instant,
}

impl BoundWatch {
    /// Starts watching `namespace` and returns once the initial list is complete (so pods
    /// bound afterwards are seen as they are bound). Errors: the initial list failed, or did
    /// not complete within 120 s.
    pub async fn start(client: &Client, namespace: &str) -> Result<BoundWatch, String> {
        let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let seen = Arc::new(Mutex::new(Seen::default()));
        let (count_tx, count) = watch::channel(0usize);
        let (ready_tx, ready) = oneshot::channel::<()>();
        let s = seen.clone();
        let task = tokio::spawn(async move {
            let mut ready_tx = Some(ready_tx);
            let stream = watcher(api, watcher::Config::default());
            futures::pin_mut!(stream);
            while let Some(item) = stream.next().await {
                let pod = match item {
                    Ok(Event::Apply(p)) | Ok(Event::InitApply(p)) => p,
                    Ok(Event::InitDone) => {
                        if let Some(tx) = ready_tx.take() {
                            let _ = tx.send(());
                        }
                        continue;
                    }
                    Ok(_) => continue,
                    Err(e) => {
                        eprintln!("live_bench: pod watch error (relisting): {e}");
                        s.lock().unwrap_or_else(|e| e.into_inner()).errors += 1;
                        continue;
                    }
                };
                let Some(node) = pod.spec.as_ref().and_then(|sp| sp.node_name.clone()) else { continue };
                let name = pod.name_any();
                let mut g = s.lock().unwrap_or_else(|e| e.into_inner());
                match g.nodes.get(&name) {
                    Some(n) if *n != node => g.rebound += 1,
                    Some(_) => {}
                    None => {
                        g.nodes.insert(name.clone(), node);
                        g.bound_at.insert(name, Instant::now());
                        let n = g.bound_at.len();
                        drop(g);
                        let _ = count_tx.send(n);
                    }
                }
            }
        });
        match tokio::time::timeout(Duration::from_secs(120), ready).await {
            Ok(Ok(())) => Ok(BoundWatch { seen, count, task }),
            Ok(Err(_)) => Err(format!("pod watch of namespace {namespace} ended before its first list completed")),
            Err(_) => {
                task.abort();
                Err(format!("pod watch of namespace {namespace}: first list not complete after 120 s"))
            }
        }
    }

    /// Waits until `n` pods are seen bound or `deadline` passes; returns how many are bound.
    pub async fn wait_for(&mut self, n: usize, deadline: Instant) -> usize {
        let until = tokio::time::Instant::from_std(deadline);
        loop {
            let now = *self.count.borrow_and_update();
            if now >= n {
                return now;
            }
            match tokio::time::timeout_at(until, self.count.changed()).await {
                Ok(Ok(())) => {}
                _ => return *self.count.borrow(),
            }
        }
    }

    /// First and last bind seen (None before any).
    pub fn times(&self) -> Option<BoundTimes> {
        let g = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let first = g.bound_at.values().min().copied()?;
        let last = g.bound_at.values().max().copied()?;
        Some(BoundTimes { first, last })
    }

    /// (pods seen moving to another node, watch errors); both must be 0.
    pub fn anomalies(&self) -> (u64, u64) {
        let g = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        (g.rebound, g.errors)
    }

    /// Pods bound per node seen: (min, max) over the nodes that got any.
    pub fn spread(&self) -> (usize, usize) {
        let g = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let mut per: HashMap<&str, usize> = HashMap::new();
        for n in g.nodes.values() {
            *per.entry(n.as_str()).or_default() += 1;
        }
        (per.values().min().copied().unwrap_or(0), per.values().max().copied().unwrap_or(0))
    }
}

impl Drop for BoundWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}
