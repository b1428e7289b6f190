//! The Queue controller (`queue-controller`, volcano-behaviour.md §5.3): keeps every Queue's
//! `status.state` (Open, Closing, Closed, Unknown), exports its PodGroups by phase as the gauges
//! `volcano_queue_pod_group_{pending,running,inqueue,unknown,completed}_count{queue_name}`
//! (Volcano ≥ 1.11 no longer writes these counts into `status`: its `syncQueue` applies
//! `state` alone and records the counts as metrics), gives a non-root queue without
//! `spec.parent` the parent `root`, acts on `bus.volcano.sh/v1alpha1` Commands `OpenQueue` and
//! `CloseQueue` that target a Queue (deleting each Command first, so it is acted on once), and
//! carries closing down the hierarchy: a child of a Closed or Closing queue is closed and marked
//! `volcano.sh/closed-by-parent: "true"`; reopening the parent reopens the marked children. A
//! child closed by a Command of its own loses the mark, so reopening its parent leaves it closed.
//!
//! The state machine and the rules are [`super::queue_state`]; this module reads Queues,
//! PodGroups and Commands through watches and writes with merge patches: `spec.parent` and the
//! mark on the queue, `state` alone on `queues/status` and only when it changes (Volcano applies
//! it server-side as field manager `queue-controller`; the merge patch writes the same field and
//! leaves the scheduler's `allocated` alone). Work: `--worker-threads-for-queue` workers, each
//! with its own rate-limited queue, queues hashed to a worker by name, so one queue is never
//! handled by two workers at once. A failed request is retried with backoff up to
//! `--max-requeue-num` times (an OpenQueue under a closed parent waits that way, as Volcano's).
//!
//! Volcano's controller also records Events (`OpenQueue`/`CloseQueue` "… succeed"); Basalt does
//! not yet.

use super::metrics::ControllerMetrics;
use super::queue::{worker_of, WorkQueue};
use super::queue_state::{
    children, closes_children, default_parent, follow_parent, next_state, open_blocked, state_needs_write, state_patch,
    PhaseCounts, QueueAction, QueueState, CLOSED_BY_PARENT, ROOT,
};
use super::retry::{api_code, drain, lock, Failure};
use crate::crd::{Command, PodGroup, Queue};
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::watch::{self, WatchStats};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher::{self, Event as WEvent};
use kube::Client;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// Where a queue request came from: it decides what happens to the closed-by-parent mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A Queue or PodGroup change.
    Event,
    /// A Command: a manual close clears the mark.
    Command,
    /// The parent's state: a close sets the mark.
    Parent,
}

/// One unit of work: `action` on Queue `queue`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueueRequest {
    /// The Queue's name.
    pub queue: String,
    /// What to do.
    pub action: QueueAction,
    /// Who asked.
    pub origin: Origin,
}

impl std::fmt::Display for QueueRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} of Queue {} ({:?})", self.action, self.queue, self.origin)
    }
}

impl QueueRequest {
    fn sync(queue: &str) -> QueueRequest {
        QueueRequest { queue: queue.to_string(), action: QueueAction::Sync, origin: Origin::Event }
    }
}

/// The Queue controller's settings.
#[derive(Clone, Copy, Debug)]
pub struct QueueConfig {
    /// `--worker-threads-for-queue` (at least 1).
    pub workers: usize,
    /// `--max-requeue-num` (−1: unlimited).
    pub max_requeue: i32,
}

/// A PodGroup as the controller counts it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct GroupView {
    queue: String,
    phase: String,
}

/// What the watches and workers share.
pub struct QueueController {
    client: Client,
    limiter: Arc<RateLimiter>,
    metrics: Arc<ControllerMetrics>,
    cfg: QueueConfig,
    queues: Mutex<BTreeMap<String, Queue>>,
    groups: Mutex<HashMap<String, GroupView>>,
    work: Vec<WorkQueue<QueueRequest>>,
}

/// `spec.parent`, unset or empty meaning `root`.
fn parent_of(q: &Queue) -> String {
    q.spec.parent.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| ROOT.to_string())
}

fn marked(q: &Queue) -> bool {
    q.metadata.annotations.as_ref().and_then(|a| a.get(CLOSED_BY_PARENT)).is_some_and(|v| v == "true")
}

/// A PodGroup's queue (unset = `default`, the CRD's default) and phase.
fn group_view(g: &PodGroup) -> (String, GroupView) {
    let key =
        format!("{}/{}", g.metadata.namespace.as_deref().unwrap_or_default(), g.metadata.name.as_deref().unwrap_or_default());
    let queue = g.spec.queue.clone().filter(|q| !q.is_empty()).unwrap_or_else(|| "default".to_string());
    let phase = g.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
    (key, GroupView { queue, phase })
}

impl QueueController {
    /// Starts the watches (Queues, PodGroups, Commands) and workers; returns their tasks.
    pub fn spawn(
        client: Client,
        limiter: Arc<RateLimiter>,
        metrics: Arc<ControllerMetrics>,
        cfg: QueueConfig,
    ) -> Vec<JoinHandle<()>> {
        let workers = cfg.workers.max(1);
        let ctl = Arc::new(QueueController {
            client,
            limiter,
            metrics,
            cfg,
            queues: Mutex::default(),
            groups: Mutex::default(),
            work: (0..workers).map(|_| WorkQueue::default()).collect(),
        });
        let mut tasks = vec![
            tokio::spawn(ctl.clone().watch_queues()),
            tokio::spawn(ctl.clone().watch_groups()),
            tokio::spawn(ctl.clone().watch_commands()),
        ];
        for w in 0..workers {
            tasks.push(tokio::spawn(ctl.clone().worker(w)));
        }
        tasks
    }

    fn enqueue(&self, r: QueueRequest) {
        let w = worker_of(&r.queue, self.work.len());
        self.work[w].add(r);
    }

    /// Queues a sync of every child of `parent`, so each follows its state.
    fn sync_children(&self, parent: &str) {
        let parents: BTreeMap<String, String> = lock(&self.queues).iter().map(|(n, q)| (n.clone(), parent_of(q))).collect();
        for c in children(parent, &parents) {
            self.enqueue(QueueRequest::sync(c));
        }
    }

    async fn watch_queues(self: Arc<Self>) {
        let api: Api<Queue> = Api::all(self.client.clone());
        watch::run("Queue", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
            match ev {
                WEvent::Apply(q) | WEvent::InitApply(q) => {
                    let name = q.metadata.name.clone().unwrap_or_default();
                    let state = q.status.as_ref().and_then(|s| s.state.clone());
                    let old = lock(&self.queues).insert(name.clone(), q);
                    let state_changed = old.as_ref().is_none_or(|o| o.status.as_ref().and_then(|s| s.state.clone()) != state);
                    self.enqueue(QueueRequest::sync(&name));
                    if state_changed {
                        self.sync_children(&name);
                    }
                }
                WEvent::Delete(q) => {
                    let name = q.metadata.name.as_deref().unwrap_or_default();
                    lock(&self.queues).remove(name);
                    self.metrics.forget_queue(name);
                }
                _ => {}
            }
            std::future::ready(true)
        })
        .await
    }

    async fn watch_groups(self: Arc<Self>) {
        let api: Api<PodGroup> = Api::all(self.client.clone());
        watch::run("PodGroup", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
            match ev {
                WEvent::Apply(g) | WEvent::InitApply(g) => {
                    let (key, view) = group_view(&g);
                    let old = lock(&self.groups).insert(key, view.clone());
                    if old.as_ref() != Some(&view) {
                        if let Some(o) = old.filter(|o| o.queue != view.queue) {
                            self.enqueue(QueueRequest::sync(&o.queue));
                        }
                        self.enqueue(QueueRequest::sync(&view.queue));
                    }
                }
                WEvent::Delete(g) => {
                    let (key, view) = group_view(&g);
                    lock(&self.groups).remove(&key);
                    self.enqueue(QueueRequest::sync(&view.queue));
                }
                _ => {}
            }
            std::future::ready(true)
        })
        .await
    }

    /// Commands whose target is a Queue: deleted, then queued as the queue action they name.
    /// A Command naming another action is left for other controllers (and logged).
    async fn watch_commands(self: Arc<Self>) {
        let api: Api<Command> = Api::all(self.client.clone());
        let stats = WatchStats::default();
        watch::run("Command", watch::stream(api, watcher::Config::default()), &stats, |ev| self.clone().command(ev)).await
    }

    /// One Command watch event (see [`Self::watch_commands`]); always goes on.
    async fn command(self: Arc<Self>, ev: WEvent<Command>) -> bool {
        let cmd = match ev {
            WEvent::Apply(c) | WEvent::InitApply(c) => c,
            _ => return true,
        };
        let Some(target) = cmd.spec.target.as_ref().filter(|t| t.kind == "Queue") else { return true };
        let (Some(ns), Some(name)) = (cmd.metadata.namespace.clone(), cmd.metadata.name.clone()) else { return true };
        let text = cmd.spec.action.clone().unwrap_or_default();
        let Some(action) = QueueAction::from_command(&text) else {
            tracing::warn!(command = %format!("{ns}/{name}"), "Command {ns}/{name}: action {text:?} is not OpenQueue or CloseQueue; ignored");
            return true;
        };
        if !super::command::take(&self.client, &self.limiter, &self.metrics, &ns, &name).await {
            return true;
        }
        tracing::info!(queue = %target.name, "Command {ns}/{name}: {text}");
        self.enqueue(QueueRequest { queue: target.name.clone(), action, origin: Origin::Command });
        true
    }

    async fn worker(self: Arc<Self>, w: usize) {
        let q = self.work[w].clone();
        drain(q, self.cfg.max_requeue, &self.metrics, "queue request", |r| {
            let me = self.clone();
            async move { me.process(&r).await }
        })
        .await
    }

    /// Stores what a write returned, so the next request sees it before the watch does.
    fn store(&self, q: Queue) {
        if let Some(name) = q.metadata.name.clone() {
            lock(&self.queues).insert(name, q);
        }
    }

    async fn patch_queue(&self, name: &str, patch: serde_json::Value, status: bool) -> Result<(), Failure> {
        let api: Api<Queue> = Api::all(self.client.clone());
        self.limiter.acquire().await;
        let p = Patch::Merge(patch);
        let r = if status {
            self.metrics.record_api("patch_queue_status");
            api.patch_status(name, &PatchParams::default(), &p).await
        } else {
            self.metrics.record_api("patch_queue");
            api.patch(name, &PatchParams::default(), &p).await
        };
        match r {
            Ok(q) => {
                self.store(q);
                Ok(())
            }
            Err(e) if api_code(&e) == Some(404) => Ok(()),
            Err(e) => Err(Failure::api(format_args!("patching Queue {name}{}", if status { " status" } else { "" }), &e)),
        }
    }

    async fn set_mark(&self, name: &str, on: bool) -> Result<(), Failure> {
        let value = if on { serde_json::json!("true") } else { serde_json::Value::Null };
        self.patch_queue(name, serde_json::json!({"metadata": {"annotations": {CLOSED_BY_PARENT: value}}}), false).await
    }

    /// One request: parent defaulting, the state machine, the mark, the status write, then the
    /// children's turn when the state changed and the queue's own turn when its parent says so.
    ///
    /// Errors: an API call failed (with the server's `Retry-After`, if any), the queue's
    /// `status.state` is not a Volcano state, or an OpenQueue waits for its parent.
    async fn process(&self, r: &QueueRequest) -> Result<(), Failure> {
        let Some(q) = lock(&self.queues).get(&r.queue).cloned() else { return Ok(()) };
        let name = r.queue.as_str();
        if let Some(p) = default_parent(name, q.spec.parent.as_deref()) {
            self.patch_queue(name, serde_json::json!({"spec": {"parent": p}}), false).await?;
        }
        let current = QueueState::parse(name, q.status.as_ref().and_then(|s| s.state.as_deref()))?;
        let parent_name = parent_of(&q);
        let parent_state = if name == ROOT {
            None
        } else {
            lock(&self.queues)
                .get(&parent_name)
                .map(|p| QueueState::parse(&parent_name, p.status.as_ref().and_then(|s| s.state.as_deref())))
        }
        .transpose()?;
        let mut action = r.action;
        if action == QueueAction::Close && name == ROOT {
            tracing::warn!(queue = name, "Queue root cannot be closed; CloseQueue ignored");
            action = QueueAction::Sync;
        }
        if action == QueueAction::Open {
            if let Some(why) = open_blocked(name, &parent_name, parent_state) {
                return Err(why.into());
            }
        }
        let phases: Vec<String> = lock(&self.groups).values().filter(|g| g.queue == name).map(|g| g.phase.clone()).collect();
        let counts = PhaseCounts::of(phases.iter().map(String::as_str));
        let next = next_state(current, action, phases.len());
        // The mark: set by a parent's close, cleared by an open or by a close of its own.
        let is_marked = marked(&q);
        let want_mark = match (action, r.origin) {
            (QueueAction::Open, _) => false,
            (QueueAction::Close, Origin::Parent) if closes_children(current, action) => true,
            (QueueAction::Close, Origin::Command) => false,
            _ => is_marked,
        };
        if want_mark != is_marked {
            self.set_mark(name, want_mark).await?;
        }
        self.metrics.set_queue_pod_groups(name, counts);
        if state_needs_write(q.status.as_ref().and_then(|s| s.state.as_deref()), next) {
            self.patch_queue(name, state_patch(next), true).await?;
            if next != current {
                tracing::info!(
                    queue = name,
                    from = current.as_str(),
                    to = next.as_str(),
                    "Queue {name}: {} → {}",
                    current.as_str(),
                    next.as_str()
                );
            }
        }
        if next != current {
            self.sync_children(name);
        }
        if let Some(a) = follow_parent(next, want_mark, parent_state) {
            self.enqueue(QueueRequest { queue: name.to_string(), action: a, origin: Origin::Parent });
        }
        Ok(())
    }
}
