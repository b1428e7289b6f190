//! The sharding controller (`sharding-controller`, Volcano's `pkg/controllers/sharding`): writes
//! one `shard.volcano.sh/v1alpha1` NodeShard per configured scheduler, named after it, whose
//! `spec.nodesDesired` is the scheduler's share of the cluster's nodes ([`super::shard_plan`]),
//! for `basalt scheduler --scheduler-sharding-mode hard|soft --scheduler-sharding-name <name>`
//! (and Volcano's schedulers) to read.
//!
//! * Configuration ([`super::shard_config`]): the ConfigMap `--sharding-configmap` in
//!   `--sharding-configmap-namespace` (key `sharding.yaml`), watched and applied on every change;
//!   until one parses (absent, no key, or invalid: the error names the field) the deprecated
//!   `--scheduler-configs`, `--shard-sync-period` and `--enable-node-event-trigger` apply. A
//!   later invalid or deleted ConfigMap keeps the last good configuration.
//! * When it assigns: after every watch has listed, then every `shardSyncPeriod`; 200 ms after a
//!   node is added, or after a pod or node event moves a node's CPU or memory utilisation by more
//!   than 0.5 since its previous event (only while `enableNodeEventTrigger`); at once after a new
//!   configuration. A removed node leaves the shards at the next periodic assignment, as in
//!   Volcano (its node-delete event finds no node and does not reassign).
//! * What it writes: a missing NodeShard is created; one whose `spec.nodesDesired` differs by the
//!   count or by at least 10 % of the nodes is patched ([`super::shard_plan::needs_update`]); a
//!   NodeShard of a scheduler no longer configured is deleted at the next assignment. A NodeShard
//!   changed or deleted by someone else is rewritten from the last assignment (recomputed when
//!   older than 5 minutes). `status` is the scheduler's to write (a status subresource), so the
//!   controller does not write it. Writes go through the controller's client rate limiter and
//!   its work queue ([`super::retry::drain`]): a failed write is retried after the queue's
//!   backoff or the server's `Retry-After`, whichever is longer, 3 times (Volcano's sharding
//!   controller's limit), then dropped until the next assignment.
//! * Utilisation ([`super::shard_plan::utilization`]): per node, the requests of its pods'
//!   containers that are neither `Succeeded`, `Failed` nor mirror pods, over its capacity, kept
//!   current from the watches (Volcano caches each node's value from its last event and
//!   refreshes it every 80 s).

use super::metrics::ControllerMetrics;
use super::options::ShardingOptions;
use super::queue::WorkQueue;
use super::retry::{api_code, drain, lock, Failure};
use super::shard_config::{self, SchedulerShard, ShardingConfig};
use super::shard_plan::{self, significant, utilization, Assignment, NodeFacts, NodeView, Util};
use crate::convert::resources::amount;
use crate::crd::{NodeShard, NodeShardSpec};
use crate::plumbing::limiter::RateLimiter;
use crate::plumbing::watch::{self, WatchStats};
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher::{self, Event as WEvent};
use kube::Client;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// How long after a node or pod event the assignment runs (Volcano's `time.AfterFunc(200ms)`).
pub const EVENT_DELAY: Duration = Duration::from_millis(200);
/// How long an assignment serves NodeShard events before it is recomputed (Volcano's
/// `maxAssignmentCacheRetention`).
pub const PLAN_RETENTION: Duration = Duration::from_secs(300);
/// The period used when the configured one is zero (Volcano's `defaultShardSyncPeriod`).
pub const DEFAULT_PERIOD: Duration = Duration::from_secs(120);
/// Attempts of a failing NodeShard write (Volcano's sharding controller: 3).
pub const MAX_REQUEUE: i32 = 3;
/// The annotation of a mirror (static) pod, which does not count.
const MIRROR: &str = "kubernetes.io/config.mirror";

/// One NodeShard write the worker owes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ShardWork {
    /// Create or update NodeShard `name` from the assignment.
    Apply(String),
    /// Delete NodeShard `name`, whose scheduler is no longer configured.
    Delete(String),
}

impl fmt::Display for ShardWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardWork::Apply(n) => write!(f, "NodeShard {n}"),
            ShardWork::Delete(n) => write!(f, "stale NodeShard {n}"),
        }
    }
}

/// The configuration in force.
struct Active {
    schedulers: Vec<SchedulerShard>,
    period: Duration,
    trigger: bool,
    /// Where it came from (for logs).
    source: String,
}

/// What a counted pod adds to its node.
#[derive(Clone, Debug, PartialEq)]
struct PodEntry {
    node: String,
    cpu: i64,
    memory: i64,
}

#[derive(Clone, Debug, Default)]
struct NodeEntry {
    facts: NodeFacts,
    memory_capacity: i64,
}

#[derive(Default)]
struct State {
    active: Option<Active>,
    nodes: BTreeMap<String, NodeEntry>,
    pods: HashMap<String, PodEntry>,
    /// Requests of the counted pods per node: (cpu millicores, memory bytes).
    requested: HashMap<String, (i64, i64)>,
    /// Each node's utilisation at its previous event.
    last_util: HashMap<String, Util>,
    /// NodeShards by name: `spec.nodesDesired`.
    shards: BTreeMap<String, Vec<String>>,
    /// The last assignment and when it was made.
    plan: Option<(Instant, BTreeMap<String, Vec<String>>)>,
    /// Relists under way (Init … InitDone), per kind.
    relist_nodes: Option<BTreeMap<String, NodeEntry>>,
    relist_pods: Option<HashMap<String, PodEntry>>,
    relist_shards: Option<BTreeMap<String, Vec<String>>>,
    /// Kinds whose first list is done.
    listed: BTreeSet<&'static str>,
    /// The ConfigMap resourceVersion last applied.
    configmap_version: Option<String>,
}

/// The sharding controller's watches, assignment loop and writer.
pub struct ShardController {
    client: Client,
    limiter: Arc<RateLimiter>,
    metrics: Arc<ControllerMetrics>,
    opts: ShardingOptions,
    state: Mutex<State>,
    work: WorkQueue<ShardWork>,
    /// An assignment is wanted (after [`EVENT_DELAY`]).
    wake: Notify,
    /// A first list finished.
    listed: Notify,
}

fn name_of(m: &kube::api::ObjectMeta) -> String {
    m.name.clone().unwrap_or_default()
}

impl ShardController {
    /// Starts the watches (nodes, pods with a node, NodeShards, the ConfigMap when named), the
    /// assignment loop and the writer; returns their tasks.
    pub fn spawn(
        client: Client,
        limiter: Arc<RateLimiter>,
        metrics: Arc<ControllerMetrics>,
        opts: ShardingOptions,
    ) -> Vec<JoinHandle<()>> {
        let ctl = Arc::new(ShardController {
            client,
            limiter,
            metrics,
            opts,
            state: Mutex::default(),
            work: WorkQueue::default(),
            wake: Notify::new(),
            listed: Notify::new(),
        });
        ctl.use_flags();
        let mut tasks = vec![
            tokio::spawn(ctl.clone().watch_nodes()),
            tokio::spawn(ctl.clone().watch_pods()),
            tokio::spawn(ctl.clone().watch_shards()),
            tokio::spawn(ctl.clone().assign_loop()),
            tokio::spawn(ctl.clone().worker()),
        ];
        if ctl.configmap().is_some() {
            tasks.push(tokio::spawn(ctl.clone().watch_configmap()));
        }
        tasks
    }

    /// `(namespace, name)` of the sharding ConfigMap, unless either flag is empty.
    fn configmap(&self) -> Option<(&str, &str)> {
        let (ns, name) = (self.opts.configmap_namespace.as_str(), self.opts.configmap_name.as_str());
        (!ns.is_empty() && !name.is_empty()).then_some((ns, name))
    }

    /// How many first lists the loop and the writer wait for.
    fn kinds(&self) -> usize {
        3 + usize::from(self.configmap().is_some())
    }

    fn use_flags(&self) {
        let cfg = &self.opts.flag_config;
        let active = Active {
            schedulers: cfg.schedulers.clone(),
            period: self.opts.shard_sync_period,
            trigger: self.opts.enable_node_event_trigger,
            source: "--scheduler-configs".into(),
        };
        lock(&self.state).active = Some(active);
    }

    fn mark_listed(&self, st: &mut State, kind: &'static str) {
        st.listed.insert(kind);
        self.listed.notify_waiters();
    }

    async fn wait_listed(&self) {
        loop {
            let notified = self.listed.notified();
            if lock(&self.state).listed.len() >= self.kinds() {
                return;
            }
            notified.await;
        }
    }

    fn period(&self) -> Duration {
        let p = lock(&self.state).active.as_ref().map(|a| a.period).unwrap_or(DEFAULT_PERIOD);
        if p.is_zero() {
            DEFAULT_PERIOD
        } else {
            p
        }
    }

    /// The assignment loop: once every watch has listed, then each period or [`EVENT_DELAY`]
    /// after a wake.
    async fn assign_loop(self: Arc<Self>) {
        self.wait_listed().await;
        {
            let st = &mut *lock(&self.state);
            if let Some(a) = &st.active {
                if a.source == "--scheduler-configs" {
                    for w in &self.opts.flag_config.warnings {
                        tracing::warn!("sharding: {w}");
                    }
                    tracing::info!("sharding: no valid sharding ConfigMap; using --scheduler-configs");
                }
            }
            let names: Vec<String> = st.nodes.keys().cloned().collect();
            for n in names {
                if let Some(u) = node_util(st, &n) {
                    st.last_util.insert(n, u);
                }
            }
        }
        loop {
            self.assign();
            tokio::select! {
                _ = tokio::time::sleep(self.period()) => {}
                _ = self.wake.notified() => tokio::time::sleep(EVENT_DELAY).await,
            }
        }
    }

    /// Asks for an assignment when event triggers are on.
    fn trigger(&self, st: &State, why: &str) {
        if st.active.as_ref().is_some_and(|a| a.trigger) && st.listed.len() >= self.kinds() {
            tracing::debug!("sharding: {why}; reassigning");
            self.wake.notify_one();
        }
    }

    /// Recomputes node `n`'s utilisation after an event and asks for an assignment when it
    /// moved significantly.
    fn check_node(&self, st: &mut State, n: &str) {
        let Some(u) = node_util(st, n) else { return };
        let old = st.last_util.insert(n.to_string(), u);
        if significant(old, u) {
            self.trigger(st, &format!("node {n} utilisation changed (cpu {:.2}, memory {:.2})", u.cpu, u.memory));
        }
    }

    /// Computes the assignment, queues the writes and the deletion of stale NodeShards.
    fn assign(&self) {
        let (plan, stale) = {
            let st = &mut *lock(&self.state);
            let plan = compute(st);
            let stale: Vec<String> = st.shards.keys().filter(|k| !plan.iter().any(|a| &a.name == *k)).cloned().collect();
            let changed = st.plan.as_ref().is_none_or(|(_, old)| plan.iter().any(|a| old.get(&a.name) != Some(&a.nodes)));
            for a in &plan {
                let msg = format!("sharding: scheduler {} assigned {} nodes", a.name, a.nodes.len());
                if changed {
                    tracing::info!(nodes = ?a.nodes, "{msg}");
                } else {
                    tracing::debug!("{msg}");
                }
                if let Some(min) = a.short_of {
                    tracing::info!("sharding: scheduler {} has {} nodes, below node-limit minNodes={min}", a.name, a.nodes.len());
                }
            }
            st.plan = Some((Instant::now(), plan.iter().map(|a| (a.name.clone(), a.nodes.clone())).collect()));
            (plan, stale)
        };
        self.metrics.record_shard_sync();
        for a in plan {
            self.metrics.set_shard_nodes(&a.name, a.nodes.len());
            self.work.add(ShardWork::Apply(a.name));
        }
        for s in stale {
            self.work.add(ShardWork::Delete(s));
        }
    }

    async fn worker(self: Arc<Self>) {
        self.wait_listed().await;
        let q = self.work.clone();
        drain(q, MAX_REQUEUE, &self.metrics, "sharding", |w| {
            let me = self.clone();
            async move { me.write(w).await }
        })
        .await
    }

    /// Carries out one [`ShardWork`] against the server.
    async fn write(&self, w: ShardWork) -> Result<(), Failure> {
        let api: Api<NodeShard> = Api::all(self.client.clone());
        match w {
            ShardWork::Apply(name) => {
                let (desired, current) = {
                    let st = &mut *lock(&self.state);
                    if st.plan.as_ref().is_none_or(|(at, _)| at.elapsed() > PLAN_RETENTION) {
                        let plan = compute(st);
                        st.plan = Some((Instant::now(), plan.into_iter().map(|a| (a.name, a.nodes)).collect()));
                    }
                    let desired = st.plan.as_ref().and_then(|(_, p)| p.get(&name).cloned());
                    (desired, st.shards.get(&name).cloned())
                };
                let Some(desired) = desired else {
                    tracing::debug!("sharding: NodeShard {name} names no configured scheduler; left alone");
                    return Ok(());
                };
                match current {
                    None => {
                        let mut s = NodeShard::new(&name, NodeShardSpec { nodes_desired: desired.clone() });
                        s.metadata.name = Some(name.clone());
                        self.limiter.acquire().await;
                        self.metrics.record_api("create_nodeshard");
                        match api.create(&PostParams::default(), &s).await {
                            Ok(_) => tracing::info!("sharding: created NodeShard {name} with {} nodes", desired.len()),
                            Err(e) if api_code(&e) == Some(409) => tracing::debug!("sharding: NodeShard {name} exists already"),
                            Err(e) => return Err(Failure::api(format_args!("creating NodeShard {name}"), &e)),
                        }
                        lock(&self.state).shards.entry(name).or_insert(desired);
                    }
                    Some(cur) if shard_plan::needs_update(&cur, &desired) => {
                        let patch = serde_json::json!({"spec": {"nodesDesired": desired}});
                        self.limiter.acquire().await;
                        self.metrics.record_api("patch_nodeshard");
                        match api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                            Ok(_) => {
                                tracing::info!("sharding: NodeShard {name}: {} -> {} nodes desired", cur.len(), desired.len())
                            }
                            Err(e) if api_code(&e) == Some(404) => {
                                lock(&self.state).shards.remove(&name);
                                return Err(format!("patching NodeShard {name}: it was deleted; creating it next").into());
                            }
                            Err(e) => return Err(Failure::api(format_args!("patching NodeShard {name}"), &e)),
                        }
                        lock(&self.state).shards.insert(name, desired);
                    }
                    Some(_) => {}
                }
                Ok(())
            }
            ShardWork::Delete(name) => {
                {
                    let st = lock(&self.state);
                    let configured = st.active.as_ref().is_some_and(|a| a.schedulers.iter().any(|s| s.name == name));
                    if configured || !st.shards.contains_key(&name) {
                        return Ok(());
                    }
                }
                self.limiter.acquire().await;
                self.metrics.record_api("delete_nodeshard");
                match api.delete(&name, &DeleteParams::default()).await {
                    Ok(_) => tracing::info!("sharding: deleted NodeShard {name} (scheduler no longer configured)"),
                    Err(e) if api_code(&e) == Some(404) => {}
                    Err(e) => return Err(Failure::api(format_args!("deleting NodeShard {name}"), &e)),
                }
                lock(&self.state).shards.remove(&name);
                self.metrics.forget_shard(&name);
                Ok(())
            }
        }
    }

    async fn watch_nodes(self: Arc<Self>) {
        let api: Api<Node> = Api::all(self.client.clone());
        let mut first = true;
        watch::run("Node", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
            let st = &mut *lock(&self.state);
            match ev {
                WEvent::Init => st.relist_nodes = Some(BTreeMap::new()),
                WEvent::InitApply(n) => {
                    st.relist_nodes.get_or_insert_with(BTreeMap::new).insert(name_of(&n.metadata), node_entry(&n));
                }
                WEvent::InitDone => {
                    let fresh = st.relist_nodes.take().unwrap_or_default();
                    let added: Vec<String> = fresh.keys().filter(|k| !st.nodes.contains_key(*k)).cloned().collect();
                    st.last_util.retain(|k, _| fresh.contains_key(k));
                    st.nodes = fresh;
                    if std::mem::take(&mut first) {
                        self.mark_listed(st, "Node");
                    } else {
                        for n in added {
                            self.check_node(st, &n);
                        }
                    }
                }
                WEvent::Apply(n) => {
                    let name = name_of(&n.metadata);
                    let entry = node_entry(&n);
                    match st.nodes.insert(name.clone(), entry.clone()) {
                        None => self.check_node(st, &name),
                        Some(old) if shard_plan::node_changed(&old.facts, &entry.facts) => self.check_node(st, &name),
                        Some(_) => {}
                    }
                }
                WEvent::Delete(n) => {
                    let name = name_of(&n.metadata);
                    st.nodes.remove(&name);
                    st.last_util.remove(&name);
                }
            }
            std::future::ready(true)
        })
        .await
    }

    async fn watch_pods(self: Arc<Self>) {
        let api: Api<Pod> = Api::all(self.client.clone());
        // Only pods that count: on a node, not finished (a pod that finishes or is deleted leaves).
        let cfg = watcher::Config::default().fields("spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed");
        let mut first = true;
        watch::run("Pod", watch::stream(api, cfg), &WatchStats::default(), |ev| {
            let st = &mut *lock(&self.state);
            match ev {
                WEvent::Init => st.relist_pods = Some(HashMap::new()),
                WEvent::InitApply(p) => {
                    if let Some(e) = pod_entry(&p) {
                        st.relist_pods.get_or_insert_with(HashMap::new).insert(pod_key(&p), e);
                    }
                }
                WEvent::InitDone => {
                    st.pods = st.relist_pods.take().unwrap_or_default();
                    let old = std::mem::take(&mut st.requested);
                    for e in st.pods.values() {
                        let r = st.requested.entry(e.node.clone()).or_default();
                        r.0 += e.cpu;
                        r.1 += e.memory;
                    }
                    if std::mem::take(&mut first) {
                        self.mark_listed(st, "Pod");
                    } else {
                        let moved: Vec<String> = old
                            .keys()
                            .chain(st.requested.keys())
                            .filter(|n| old.get(*n) != st.requested.get(*n))
                            .cloned()
                            .collect::<BTreeSet<_>>()
                            .into_iter()
                            .collect();
                        for n in moved {
                            self.check_node(st, &n);
                        }
                    }
                }
                WEvent::Apply(p) => {
                    let (key, new) = (pod_key(&p), pod_entry(&p));
                    let old = match &new {
                        Some(e) => st.pods.insert(key, e.clone()),
                        None => st.pods.remove(&key),
                    };
                    self.pod_changed(st, old, new);
                }
                WEvent::Delete(p) => {
                    let old = st.pods.remove(&pod_key(&p));
                    self.pod_changed(st, old, None);
                }
            }
            std::future::ready(true)
        })
        .await
    }

    fn pod_changed(&self, st: &mut State, old: Option<PodEntry>, new: Option<PodEntry>) {
        if old == new {
            return;
        }
        for (e, sign) in [(&old, -1), (&new, 1)] {
            if let Some(e) = e {
                let r = st.requested.entry(e.node.clone()).or_default();
                r.0 += sign * e.cpu;
                r.1 += sign * e.memory;
            }
        }
        let nodes: BTreeSet<String> = old.iter().chain(new.iter()).map(|e| e.node.clone()).collect();
        for n in nodes {
            self.check_node(st, &n);
        }
    }

    async fn watch_shards(self: Arc<Self>) {
        let api: Api<NodeShard> = Api::all(self.client.clone());
        let mut first = true;
        watch::run("NodeShard", watch::stream(api, watcher::Config::default()), &WatchStats::default(), |ev| {
            let mut st = lock(&self.state);
            match ev {
                WEvent::Init => st.relist_shards = Some(BTreeMap::new()),
                WEvent::InitApply(s) => {
                    st.relist_shards.get_or_insert_with(BTreeMap::new).insert(name_of(&s.metadata), s.spec.nodes_desired);
                }
                WEvent::InitDone => {
                    let fresh = st.relist_shards.take().unwrap_or_default();
                    let names: BTreeSet<String> = fresh.keys().chain(st.shards.keys()).cloned().collect();
                    st.shards = fresh;
                    for n in names {
                        self.work.add(ShardWork::Apply(n));
                    }
                    if std::mem::take(&mut first) {
                        self.mark_listed(&mut st, "NodeShard");
                    }
                }
                WEvent::Apply(s) => {
                    let name = name_of(&s.metadata);
                    st.shards.insert(name.clone(), s.spec.nodes_desired);
                    self.work.add(ShardWork::Apply(name));
                }
                WEvent::Delete(s) => {
                    let name = name_of(&s.metadata);
                    st.shards.remove(&name);
                    self.work.add(ShardWork::Apply(name));
                }
            }
            std::future::ready(true)
        })
        .await
    }

    async fn watch_configmap(self: Arc<Self>) {
        let Some((ns, name)) = self.configmap().map(|(a, b)| (a.to_string(), b.to_string())) else { return };
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), &ns);
        let cfg = watcher::Config::default().fields(&format!("metadata.name={name}"));
        let mut first = true;
        watch::run("ConfigMap", watch::stream(api, cfg), &WatchStats::default(), |ev| {
            match ev {
                WEvent::Apply(cm) | WEvent::InitApply(cm) => self.apply_configmap(&cm),
                WEvent::Delete(_) => {
                    tracing::warn!("sharding: ConfigMap {ns}/{name} deleted; keeping the last configuration")
                }
                WEvent::InitDone => {
                    if std::mem::take(&mut first) {
                        self.mark_listed(&mut lock(&self.state), "ConfigMap");
                    }
                }
                WEvent::Init => {}
            }
            std::future::ready(true)
        })
        .await
    }

    /// Applies the sharding ConfigMap when it changed and parses; else logs why and keeps the
    /// configuration in force.
    fn apply_configmap(&self, cm: &ConfigMap) {
        let at = format!("{}/{}", cm.metadata.namespace.as_deref().unwrap_or_default(), name_of(&cm.metadata));
        let st = &mut *lock(&self.state);
        if cm.metadata.resource_version.is_some() && st.configmap_version == cm.metadata.resource_version {
            return;
        }
        st.configmap_version = cm.metadata.resource_version.clone();
        let Some(text) = cm.data.as_ref().and_then(|d| d.get(shard_config::CONFIGMAP_KEY)) else {
            tracing::warn!(
                "sharding: ConfigMap {at} has no key {:?}; keeping the last configuration",
                shard_config::CONFIGMAP_KEY
            );
            return;
        };
        let cfg: ShardingConfig = match shard_config::parse_yaml(text) {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(
                    "sharding: ConfigMap {at} key {}: {e}; keeping the last configuration",
                    shard_config::CONFIGMAP_KEY
                );
                return;
            }
        };
        for w in &cfg.warnings {
            tracing::warn!("sharding: {w}");
        }
        let old = st.active.take();
        let active = Active {
            schedulers: cfg.schedulers,
            period: cfg.shard_sync_period.or(old.as_ref().map(|a| a.period)).unwrap_or(self.opts.shard_sync_period),
            trigger: cfg
                .enable_node_event_trigger
                .or(old.as_ref().map(|a| a.trigger))
                .unwrap_or(self.opts.enable_node_event_trigger),
            source: format!("ConfigMap {at}"),
        };
        let summary: Vec<String> = active
            .schedulers
            .iter()
            .map(|s| {
                format!(
                    "{} [{}]",
                    s.name,
                    s.policies.iter().map(|p| format!("{}(w={})", p.policy.name(), p.weight)).collect::<Vec<_>>().join(", ")
                )
            })
            .collect();
        tracing::info!(period = ?active.period, trigger = active.trigger, "sharding: applied {}: {}", active.source, summary.join("; "));
        st.active = Some(active);
        st.plan = None;
        if st.listed.len() >= self.kinds() {
            self.wake.notify_one();
        }
    }
}

/// Node `n`'s utilisation now (None: not a known node).
fn node_util(st: &State, n: &str) -> Option<Util> {
    let node = st.nodes.get(n)?;
    let (cpu, memory) = st.requested.get(n).copied().unwrap_or_default();
    Some(Util { cpu: utilization(cpu, node.facts.cpu_capacity), memory: utilization(memory, node.memory_capacity) })
}

/// The assignment of the configuration in force over the nodes known now.
fn compute(st: &State) -> Vec<Assignment> {
    let Some(active) = &st.active else { return Vec::new() };
    let views: Vec<NodeView<'_>> = st
        .nodes
        .iter()
        .map(|(name, e)| {
            let cpu = st.requested.get(name).map(|r| r.0).unwrap_or(0);
            NodeView { name, cpu_util: utilization(cpu, e.facts.cpu_capacity), labels: &e.facts.labels }
        })
        .collect();
    shard_plan::assign(&active.schedulers, &views)
}

fn node_entry(n: &Node) -> NodeEntry {
    let cap = n.status.as_ref().and_then(|s| s.capacity.as_ref());
    let q = |r: &str| cap.and_then(|c| c.get(r)).and_then(|q| amount(r, &q.0).ok()).unwrap_or(0);
    NodeEntry {
        facts: NodeFacts {
            labels: n.metadata.labels.clone().unwrap_or_default(),
            annotations: n.metadata.annotations.clone().unwrap_or_default(),
            cpu_capacity: q("cpu"),
        },
        memory_capacity: q("memory"),
    }
}

fn pod_key(p: &Pod) -> String {
    format!("{}/{}", p.metadata.namespace.as_deref().unwrap_or_default(), name_of(&p.metadata))
}

/// What pod `p` adds to its node, or None when it does not count (no node, finished, mirror).
fn pod_entry(p: &Pod) -> Option<PodEntry> {
    let spec = p.spec.as_ref()?;
    let node = spec.node_name.clone().filter(|n| !n.is_empty())?;
    let phase = p.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default();
    if phase == "Succeeded" || phase == "Failed" || p.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(MIRROR)) {
        return None;
    }
    let req = |r: &str| -> i64 {
        spec.containers
            .iter()
            .filter_map(|c| c.resources.as_ref()?.requests.as_ref()?.get(r))
            .map(|q| amount(r, &q.0).unwrap_or(0))
            .sum()
    };
    Some(PodEntry { node, cpu: req("cpu"), memory: req("memory") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn pods_count_their_containers_requests_unless_finished_or_mirrored() {
        let p = pod("metadata: {name: a, namespace: n}\nspec:\n  nodeName: x\n  initContainers: [{name: i, resources: {requests: {cpu: '8'}}}]\n  containers:\n  - {name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}\n  - {name: d, resources: {requests: {cpu: '1'}, limits: {cpu: '4'}}}\n  - {name: e}\nstatus: {phase: Running}");
        assert_eq!(pod_entry(&p), Some(PodEntry { node: "x".into(), cpu: 1500, memory: 1 << 30 }));
        let done = pod("metadata: {name: a}\nspec: {nodeName: x, containers: [{name: c}]}\nstatus: {phase: Succeeded}");
        assert_eq!(pod_entry(&done), None);
        let pending = pod("metadata: {name: a}\nspec: {containers: [{name: c}]}");
        assert_eq!(pod_entry(&pending), None);
        let mirror = pod(
            "metadata: {name: a, annotations: {kubernetes.io/config.mirror: h}}\nspec: {nodeName: x, containers: [{name: c}]}",
        );
        assert_eq!(pod_entry(&mirror), None);
    }

    #[test]
    fn nodes_read_capacity_not_allocatable() {
        let n: Node = serde_yaml::from_str(
            "metadata: {name: x, labels: {a: b}}\nstatus: {capacity: {cpu: '4', memory: 8Gi}, allocatable: {cpu: '3', memory: 6Gi}}",
        )
        .unwrap();
        let e = node_entry(&n);
        assert_eq!((e.facts.cpu_capacity, e.memory_capacity), (4000, 8 << 30));
        assert_eq!(e.facts.labels.get("a").map(String::as_str), Some("b"));
    }

    #[test]
    fn work_items_name_the_node_shard() {
        assert_eq!(ShardWork::Apply("a".into()).to_string(), "NodeShard a");
        assert_eq!(ShardWork::Delete("b".into()).to_string(), "stale NodeShard b");
    }
}
