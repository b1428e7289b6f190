//! Watches (on the generic loop of [`crate::plumbing::watch`]): one kube-rs watcher per kind (Nodes, Pods, PodGroups, Queues, PriorityClasses,
//! PodDisruptionBudgets, ResourceQuotas, PersistentVolumeClaims, PersistentVolumes,
//! StorageClasses, CSINodes, HyperNodes, NodeShards, Numatopologies), each event tagged with its kind and handed to the scheduling loop as a [`WatchEvent`]. The
//! watchers relist on their own after a `410 Gone` or a broken stream (kube-rs `watcher`, with
//! its default exponential backoff on errors), and a relist arrives as `Init … InitDone`, which
//! the [`super::mirror::Mirror`] turns into a resync.

use super::mirror::{Kind, Object, WatchEvent};
use crate::crd;
use crate::plumbing;
use crate::plumbing::watch::WatchStats;
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Pod, ResourceQuota};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::watcher::{self, Event};
use kube::Client;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

fn tag(kind: Kind, ev: Event<Object>) -> WatchEvent {
    match ev {
        Event::Init => WatchEvent::Init(kind),
        Event::InitApply(o) => WatchEvent::InitApply(o),
        Event::InitDone => WatchEvent::InitDone(kind),
        Event::Apply(o) => WatchEvent::Apply(o),
        Event::Delete(o) => WatchEvent::Delete(o),
    }
}

async fn drive<K, S>(kind: Kind, stream: S, wrap: fn(K) -> Object, send: Sender, stats: Arc<WatchStats>)
where
    S: futures::Stream<Item = Result<Event<K>, watcher::Error>>,
{
    plumbing::watch::run(kind.as_str(), stream, &stats, |ev| std::future::ready(send(tag(kind, ev.map(wrap))))).await
}

/// Where watch events go; returning false stops the watcher.
pub type Sender = Arc<dyn Fn(WatchEvent) -> bool + Send + Sync>;

/// How every watcher watches: `timeoutSeconds` = `timeout`, so the server ends each watch
/// after that long and kube-rs reopens it from the last resourceVersion; a stream that stays
/// silent for `timeout` + 5 s (a stalled connection) is dropped and reopened the same way.
fn config(timeout: Duration) -> watcher::Config {
    watcher::Config::default().timeout(u32::try_from(timeout.as_secs()).unwrap_or(u32::MAX).max(1))
}

fn spawn_typed<K>(
    kind: Kind,
    api: Api<K>,
    wrap: fn(K) -> Object,
    send: Sender,
    stats: Arc<WatchStats>,
    timeout: Duration,
) -> JoinHandle<()>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
{
    tokio::spawn(drive(kind, plumbing::watch::stream(api, config(timeout)), wrap, send, stats))
}

fn spawn_dynamic(
    kind: Kind,
    client: &Client,
    ar: ApiResource,
    wrap: fn(DynamicObject) -> Object,
    send: Sender,
    stats: Arc<WatchStats>,
    timeout: Duration,
) -> JoinHandle<()> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    tokio::spawn(drive(kind, plumbing::watch::stream(api, config(timeout)), wrap, send, stats))
}

/// The PodDisruptionBudget API the server serves: `policy/v1` when its discovery lists
/// `poddisruptionbudgets` there, else `policy/v1beta1` (servers before 1.21, such as the 1.20
/// test server). A discovery error other than "not served" also falls back, and is logged.
async fn pdb_api_resource(client: &Client) -> ApiResource {
    match client.list_api_group_resources("policy/v1").await {
        Ok(list) if list.resources.iter().any(|r| r.name == "poddisruptionbudgets") => {
            ApiResource::erase::<k8s_openapi::api::policy::v1::PodDisruptionBudget>(&())
        }
        other => {
            if let Err(e) = other {
                tracing::debug!("policy/v1 discovery: {e}; watching policy/v1beta1 PodDisruptionBudgets");
            }
            ApiResource {
                group: "policy".into(),
                version: "v1beta1".into(),
                api_version: "policy/v1beta1".into(),
                kind: "PodDisruptionBudget".into(),
                plural: "poddisruptionbudgets".into(),
            }
        }
    }
}

fn spawn_pdb(client: &Client, send: Sender, stats: Arc<WatchStats>, timeout: Duration) -> JoinHandle<()> {
    let client = client.clone();
    tokio::spawn(async move {
        let ar = pdb_api_resource(&client).await;
        let api: Api<DynamicObject> = Api::all_with(client, &ar);
        let wrap: fn(DynamicObject) -> Object = |o| Object::PodDisruptionBudget(Box::new(o));
        drive(Kind::PodDisruptionBudget, plumbing::watch::stream(api, config(timeout)), wrap, send, stats).await
    })
}

/// Whether the server serves `topology.volcano.sh/v1alpha1` HyperNodes (the CRD is installed).
/// A discovery error other than "not served" counts as served, so the watcher's own errors and
/// backoff report it.
async fn hyper_nodes_served(client: &Client) -> bool {
    match client.list_api_group_resources("topology.volcano.sh/v1alpha1").await {
        Ok(list) => list.resources.iter().any(|r| r.name == "hypernodes"),
        Err(kube::Error::Api(e)) if e.code == 404 => false,
        Err(e) => {
            tracing::debug!("topology.volcano.sh/v1alpha1 discovery: {e}; watching HyperNodes anyway");
            true
        }
    }
}

/// The HyperNode watcher. On a cluster without the HyperNode CRD (a Volcano release before
/// network topology), it reports an empty list once, logs that network topology is off, and
/// stops: the scheduler does not wait for a kind the server cannot list. Installing the CRD
/// later takes a restart.
fn spawn_hyper_nodes(client: &Client, send: Sender, stats: Arc<WatchStats>, timeout: Duration) -> JoinHandle<()> {
    let client = client.clone();
    tokio::spawn(async move {
        if !hyper_nodes_served(&client).await {
            tracing::info!(
                "the server does not serve topology.volcano.sh/v1alpha1 HyperNodes (CRD not installed): network topology is off"
            );
            let _ = send(WatchEvent::Init(Kind::HyperNode)) && send(WatchEvent::InitDone(Kind::HyperNode));
            return;
        }
        let api = Api::<crd::HyperNode>::all(client);
        let wrap: fn(crd::HyperNode) -> Object = |o| Object::HyperNode(Box::new(o));
        drive(Kind::HyperNode, plumbing::watch::stream(api, config(timeout)), wrap, send, stats).await
    })
}

/// The Numatopology watcher (Volcano's scheduler cache always watches them). On a cluster
/// without the Numatopology CRD it reports an empty list once, logs that NUMA information is
/// absent, and stops, as the HyperNode watcher does.
fn spawn_numatopologies(client: &Client, send: Sender, stats: Arc<WatchStats>, timeout: Duration) -> JoinHandle<()> {
    let client = client.clone();
    tokio::spawn(async move {
        let served = match client.list_api_group_resources("nodeinfo.volcano.sh/v1alpha1").await {
            Ok(list) => list.resources.iter().any(|r| r.name == "numatopologies"),
            Err(kube::Error::Api(e)) if e.code == 404 => false,
            Err(e) => {
                tracing::debug!("nodeinfo.volcano.sh/v1alpha1 discovery: {e}; watching Numatopologies anyway");
                true
            }
        };
        if !served {
            tracing::info!(
                "the server does not serve nodeinfo.volcano.sh/v1alpha1 Numatopologies (CRD not installed): no node has NUMA information for numa-aware"
            );
            let _ = send(WatchEvent::Init(Kind::Numatopology)) && send(WatchEvent::InitDone(Kind::Numatopology));
            return;
        }
        let api = Api::<crd::Numatopology>::all(client);
        let wrap: fn(crd::Numatopology) -> Object = |o| Object::Numatopology(Box::new(o));
        drive(Kind::Numatopology, plumbing::watch::stream(api, config(timeout)), wrap, send, stats).await
    })
}

/// The NodeShard watcher. Without node sharding (`--scheduler-sharding-mode none`, Volcano
/// registers no NodeShard informer then) or on a cluster without the NodeShard CRD it reports
/// an empty list once and stops; the latter is an error with sharding on (no shard: hard
/// sharding places nothing).
fn spawn_node_shards(client: &Client, send: Sender, stats: Arc<WatchStats>, timeout: Duration, on: bool) -> JoinHandle<()> {
    let client = client.clone();
    tokio::spawn(async move {
        let served = on
            && match client.list_api_group_resources("shard.volcano.sh/v1alpha1").await {
                Ok(list) => list.resources.iter().any(|r| r.name == "nodeshards"),
                Err(kube::Error::Api(e)) if e.code == 404 => false,
                Err(e) => {
                    tracing::debug!("shard.volcano.sh/v1alpha1 discovery: {e}; watching NodeShards anyway");
                    true
                }
            };
        if !served {
            if on {
                tracing::error!(
                    "--scheduler-sharding-mode is set but the server does not serve shard.volcano.sh/v1alpha1 NodeShards (CRD not installed, deploy/crds/shard.volcano.sh_nodeshards.yaml): no node is in this scheduler's shard"
                );
            }
            let _ = send(WatchEvent::Init(Kind::NodeShard)) && send(WatchEvent::InitDone(Kind::NodeShard));
            return;
        }
        let api = Api::<crd::NodeShard>::all(client);
        let wrap: fn(crd::NodeShard) -> Object = |o| Object::NodeShard(Box::new(o));
        drive(Kind::NodeShard, plumbing::watch::stream(api, config(timeout)), wrap, send, stats).await
    })
}

trait MapEvent<K> {
    fn map(self, f: fn(K) -> Object) -> Event<Object>;
}

impl<K> MapEvent<K> for Event<K> {
    fn map(self, f: fn(K) -> Object) -> Event<Object> {
        match self {
            Event::Init => Event::Init,
            Event::InitApply(o) => Event::InitApply(f(o)),
            Event::InitDone => Event::InitDone,
            Event::Apply(o) => Event::Apply(f(o)),
            Event::Delete(o) => Event::Delete(f(o)),
        }
    }
}

/// Starts the thirteen watchers, each watch request with `timeoutSeconds` = `timeout` (see
/// [`config`]); each event goes to `send` (returning false stops that watcher). NodeShards
/// are watched only with `sharding` on.
pub fn spawn_all(
    client: &Client,
    send: Sender,
    stats: Arc<WatchStats>,
    timeout: Duration,
    sharding: bool,
) -> Vec<JoinHandle<()>> {
    vec![
        spawn_typed(
            Kind::Node,
            Api::<Node>::all(client.clone()),
            |o| Object::Node(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_typed(
            Kind::Pod,
            Api::<Pod>::all(client.clone()),
            |o| Object::Pod(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_dynamic(
            Kind::PodGroup,
            client,
            ApiResource::erase::<crd::PodGroup>(&()),
            |o| Object::PodGroup(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_dynamic(
            Kind::Queue,
            client,
            ApiResource::erase::<crd::Queue>(&()),
            |o| Object::Queue(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_typed(
            Kind::PriorityClass,
            Api::<PriorityClass>::all(client.clone()),
            |o| Object::PriorityClass(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_typed(
            Kind::ResourceQuota,
            Api::<ResourceQuota>::all(client.clone()),
            |o| Object::ResourceQuota(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_typed(
            Kind::PersistentVolumeClaim,
            Api::<PersistentVolumeClaim>::all(client.clone()),
            |o| Object::PersistentVolumeClaim(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_typed(
            Kind::PersistentVolume,
            Api::<PersistentVolume>::all(client.clone()),
            |o| Object::PersistentVolume(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_typed(
            Kind::StorageClass,
            Api::<StorageClass>::all(client.clone()),
            |o| Object::StorageClass(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_typed(
            Kind::CsiNode,
            Api::<CSINode>::all(client.clone()),
            |o| Object::CsiNode(Box::new(o)),
            send.clone(),
            stats.clone(),
            timeout,
        ),
        spawn_pdb(client, send.clone(), stats.clone(), timeout),
        spawn_hyper_nodes(client, send.clone(), stats.clone(), timeout),
        spawn_node_shards(client, send.clone(), stats.clone(), timeout, sharding),
        spawn_numatopologies(client, send, stats, timeout),
    ]
}
