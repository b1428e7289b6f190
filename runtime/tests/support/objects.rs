//! Creating the objects a scheduling test needs on the real server: namespaces, Nodes that look
//! registered by a kubelet, pods, PodGroups, Queues (status through `/status`), bindings.

use super::kubelet::DURATION_ANNOTATION;
use super::Result;
use basalt_runtime::crd::{PodGroup, PodGroupSpec, PodGroupStatus, Queue, QueueSpec, QueueStatus};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{
    Binding, Container, Namespace, Node, NodeSpec, ObjectReference, Pod, PodSpec, ResourceRequirements, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

/// The pod annotation naming its PodGroup (volcano-behaviour.md §1, "Pod → job").
pub const GROUP_NAME_ANNOTATION: &str = "scheduling.k8s.io/group-name";

/// The taint the `TaintNodesByCondition` admission plugin puts on every new Node; only the node
/// controller (absent here) would remove it.
pub const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

/// Parallel requests used by the bulk helpers.
const CONCURRENCY: usize = 16;

/// Creates namespace `name` unless it exists. Errors: the API call failed.
pub async fn ensure_namespace(client: &Client, name: &str) -> Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace { metadata: ObjectMeta { name: Some(name.to_string()), ..Default::default() }, ..Default::default() };
    match api.create(&PostParams::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(format!("creating namespace {name}: {e}").into()),
    }
}

/// Creates a new namespace `{prefix}-{n}` (n counts up per process, plus the process id, so
/// tests sharing one [`super::TestApiserver`] never collide) and returns its name.
pub async fn fresh_namespace(client: &Client, prefix: &str) -> Result<String> {
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!("{prefix}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    let api: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace { metadata: ObjectMeta { name: Some(name.clone()), ..Default::default() }, ..Default::default() };
    api.create(&PostParams::default(), &ns).await.map_err(|e| format!("creating namespace {name}: {e}"))?;
    Ok(name)
}

/// A Node as a kubelet would register it: allocatable (= capacity), labels (plus
/// `kubernetes.io/hostname`, `kubernetes.io/os`, `kubernetes.io/arch`), taints, condition Ready.
#[derive(Clone, Debug)]
pub struct TestNode {
    /// `metadata.name` (for [`create_nodes`]: the prefix).
    pub name: String,
    /// `status.allocatable` and `status.capacity`: resource name → quantity.
    pub allocatable: BTreeMap<String, String>,
    /// `metadata.labels`, besides the kubelet's own.
    pub labels: BTreeMap<String, String>,
    /// `spec.taints` as the test wants them (the not-ready taint is removed).
    pub taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// `status.conditions[Ready].status == "True"`.
    pub ready: bool,
}

impl TestNode {
    /// Node `name` with 8 CPUs, 32Gi memory, 110 pods, Ready, untainted.
    pub fn new(name: impl Into<String>) -> TestNode {
        let allocatable = [("cpu", "8"), ("memory", "32Gi"), ("pods", "110")];
        TestNode {
            name: name.into(),
            allocatable: allocatable.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            labels: BTreeMap::new(),
            taints: Vec::new(),
            unschedulable: false,
            ready: true,
        }
    }

    /// Sets allocatable (and capacity) of `resource`, e.g. `("nvidia.com/gpu", "4")`.
    pub fn allocatable(mut self, resource: &str, quantity: &str) -> TestNode {
        self.allocatable.insert(resource.to_string(), quantity.to_string());
        self
    }

    /// Adds label `key=value`.
    pub fn label(mut self, key: &str, value: &str) -> TestNode {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }

    /// Adds taint `key=value:effect` (`NoSchedule`, `PreferNoSchedule`, `NoExecute`).
    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> TestNode {
        self.taints.push(Taint {
            key: key.to_string(),
            value: Some(value.to_string()).filter(|v| !v.is_empty()),
            effect: effect.to_string(),
            time_added: None,
        });
        self
    }

    /// Sets `spec.unschedulable`.
    pub fn unschedulable(mut self, unschedulable: bool) -> TestNode {
        self.unschedulable = unschedulable;
        self
    }

    /// Sets whether condition Ready is True (else False, reason `KubeletNotReady`).
    pub fn ready(mut self, ready: bool) -> TestNode {
        self.ready = ready;
        self
    }

    fn with_name(&self, name: String) -> TestNode {
        TestNode { name, ..self.clone() }
    }
}

/// Creates `node`: POST the Node, write its status (allocatable, capacity, conditions) through
/// `nodes/{name}/status`, then set `spec.taints` to the test's taints, which removes the
/// `node.kubernetes.io/not-ready` taint added on create. Returns the Node as stored.
/// Errors: any of the three API calls failed (message names the node).
pub async fn create_node(client: &Client, node: &TestNode) -> Result<Node> {
    let api: Api<Node> = Api::all(client.clone());
    let name = node.name.as_str();
    let mut labels = node.labels.clone();
    for (k, v) in [("kubernetes.io/hostname", name), ("kubernetes.io/os", "linux"), ("kubernetes.io/arch", "amd64")] {
        labels.entry(k.to_string()).or_insert_with(|| v.to_string());
    }
    let obj = Node {
        metadata: ObjectMeta { name: Some(name.to_string()), labels: Some(labels), ..Default::default() },
        spec: Some(NodeSpec { unschedulable: Some(node.unschedulable).filter(|u| *u), ..Default::default() }),
        ..Default::default()
    };
    api.create(&PostParams::default(), &obj).await.map_err(|e| format!("creating Node {name}: {e}"))?;
    let resources: BTreeMap<String, Quantity> = node.allocatable.iter().map(|(k, v)| (k.clone(), Quantity(v.clone()))).collect();
    let now = rfc3339_now();
    let condition = |type_: &str, ok: bool, reason: &str| {
        json!({"type": type_, "status": if ok { "True" } else { "False" }, "reason": reason,
               "lastHeartbeatTime": now, "lastTransitionTime": now})
    };
    let status = json!({"status": {
        "capacity": resources,
        "allocatable": resources,
        "conditions": [
            condition("Ready", node.ready, if node.ready { "KubeletReady" } else { "KubeletNotReady" }),
            condition("MemoryPressure", false, "KubeletHasSufficientMemory"),
            condition("DiskPressure", false, "KubeletHasNoDiskPressure"),
            condition("PIDPressure", false, "KubeletHasSufficientPID"),
        ],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": name}],
        "nodeInfo": {"kubeletVersion": "v1.20.2", "operatingSystem": "linux", "architecture": "amd64",
                     "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
                     "containerRuntimeVersion": "", "kubeProxyVersion": "v1.20.2"},
    }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .map_err(|e| format!("writing status of Node {name}: {e}"))?;
    let taints = json!({"spec": {"taints": node.taints}});
    let stored = api
        .patch(name, &PatchParams::default(), &Patch::Merge(&taints))
        .await
        .map_err(|e| format!("setting taints of Node {name}: {e}"))?;
    Ok(stored)
}

/// Creates `count` nodes named `{template.name}-{i}` (i = 0..count) like `template`, 16 at a
/// time. Returns them in name order. Errors: the first failed node.
pub async fn create_nodes(client: &Client, template: &TestNode, count: usize) -> Result<Vec<Node>> {
    futures::stream::iter((0..count).map(|i| template.with_name(format!("{}-{i}", template.name))))
        .map(|node| async move { create_node(client, &node).await })
        .buffered(CONCURRENCY)
        .try_collect()
        .await
}

/// A pod for a scheduler test: one container `main` (image `registry.k8s.io/pause:3.2`, never
/// run), `schedulerName: volcano`, `restartPolicy: Never`, no requests until set.
#[derive(Clone, Debug)]
pub struct TestPod {
    pod: Pod,
}

impl TestPod {
    /// Pod `namespace/name`.
    pub fn new(namespace: &str, name: &str) -> TestPod {
        let pod = Pod {
            metadata: ObjectMeta { name: Some(name.to_string()), namespace: Some(namespace.to_string()), ..Default::default() },
            spec: Some(PodSpec {
                scheduler_name: Some("volcano".to_string()),
                restart_policy: Some("Never".to_string()),
                termination_grace_period_seconds: Some(0),
                containers: vec![Container {
                    name: "main".to_string(),
                    image: Some("registry.k8s.io/pause:3.2".to_string()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: None,
        };
        TestPod { pod }
    }

    fn spec(&mut self) -> &mut PodSpec {
        self.pod.spec.get_or_insert_with(Default::default)
    }

    /// Sets `spec.schedulerName`.
    pub fn scheduler(mut self, name: &str) -> TestPod {
        self.spec().scheduler_name = Some(name.to_string());
        self
    }

    /// Puts the pod in PodGroup `group` (annotation `scheduling.k8s.io/group-name`).
    pub fn group(self, group: &str) -> TestPod {
        self.annotation(GROUP_NAME_ANNOTATION, group)
    }

    /// Sets the container's requests (and equal limits), e.g. `&[("cpu", "1"), ("memory", "1Gi")]`.
    pub fn requests(mut self, requests: &[(&str, &str)]) -> TestPod {
        let map: BTreeMap<String, Quantity> = requests.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect();
        self.spec().containers[0].resources =
            Some(ResourceRequirements { requests: Some(map.clone()), limits: Some(map), ..Default::default() });
        self
    }

    /// How long the [`super::Kubelet`] lets the pod run before marking it Succeeded (annotation
    /// `basalt.dev/duration-seconds`).
    pub fn duration_seconds(self, seconds: u64) -> TestPod {
        self.annotation(DURATION_ANNOTATION, &seconds.to_string())
    }

    /// Sets `spec.priorityClassName`.
    pub fn priority_class(mut self, name: &str) -> TestPod {
        self.spec().priority_class_name = Some(name.to_string());
        self
    }

    /// Adds `spec.nodeSelector[key] = value`.
    pub fn node_selector(mut self, key: &str, value: &str) -> TestPod {
        self.spec().node_selector.get_or_insert_with(Default::default).insert(key.to_string(), value.to_string());
        self
    }

    /// Adds a toleration `key=value:effect` (operator `Equal`; an empty value means `Exists`).
    pub fn toleration(mut self, key: &str, value: &str, effect: &str) -> TestPod {
        let toleration = Toleration {
            key: Some(key.to_string()),
            operator: Some(if value.is_empty() { "Exists" } else { "Equal" }.to_string()),
            value: Some(value.to_string()).filter(|v| !v.is_empty()),
            effect: Some(effect.to_string()).filter(|e| !e.is_empty()),
            toleration_seconds: None,
        };
        self.spec().tolerations.get_or_insert_with(Default::default).push(toleration);
        self
    }

    /// Adds label `key=value`.
    pub fn label(mut self, key: &str, value: &str) -> TestPod {
        self.pod.metadata.labels.get_or_insert_with(Default::default).insert(key.to_string(), value.to_string());
        self
    }

    /// Adds annotation `key=value`.
    pub fn annotation(mut self, key: &str, value: &str) -> TestPod {
        self.pod.metadata.annotations.get_or_insert_with(Default::default).insert(key.to_string(), value.to_string());
        self
    }

    /// The pod object.
    pub fn build(self) -> Pod {
        self.pod
    }
}

/// Creates `pod` in its namespace. Errors: the API call failed (message names the pod).
pub async fn create_pod(client: &Client, pod: &Pod) -> Result<Pod> {
    let ns = pod.metadata.namespace.as_deref().ok_or_else(|| format!("Pod {}: metadata.namespace is not set", pod.name_any()))?;
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    Ok(api.create(&PostParams::default(), pod).await.map_err(|e| format!("creating Pod {ns}/{}: {e}", pod.name_any()))?)
}

/// Creates `pods`, 16 at a time, returning them as stored in the input order.
/// Errors: the first failed pod.
pub async fn create_pods(client: &Client, pods: &[Pod]) -> Result<Vec<Pod>> {
    futures::stream::iter(pods.iter()).map(|pod| create_pod(client, pod)).buffered(CONCURRENCY).try_collect().await
}

/// A PodGroup `namespace/name` with `minMember`, in `queue` (None: unset, the scheduler's
/// default), status phase `Pending` as Volcano's controller creates it.
pub fn pod_group(namespace: &str, name: &str, min_member: i32, queue: Option<&str>) -> PodGroup {
    let mut pg = PodGroup::new(
        name,
        PodGroupSpec { min_member: Some(min_member), queue: queue.map(str::to_string), ..Default::default() },
    );
    pg.metadata.namespace = Some(namespace.to_string());
    pg.status = Some(PodGroupStatus { phase: Some("Pending".to_string()), ..Default::default() });
    pg
}

/// Creates `pg` (status included: the PodGroup CRD has no status subresource).
/// Errors: the API call failed (message names the PodGroup).
pub async fn create_pod_group(client: &Client, pg: &PodGroup) -> Result<PodGroup> {
    let ns =
        pg.metadata.namespace.as_deref().ok_or_else(|| format!("PodGroup {}: metadata.namespace is not set", pg.name_any()))?;
    let api: Api<PodGroup> = Api::namespaced(client.clone(), ns);
    Ok(api.create(&PostParams::default(), pg).await.map_err(|e| format!("creating PodGroup {ns}/{}: {e}", pg.name_any()))?)
}

/// A Queue `name` with `weight`, `reclaimable: true`, status `state: Open`.
pub fn queue(name: &str, weight: i32) -> Queue {
    let mut q = Queue::new(name, QueueSpec { weight: Some(weight), reclaimable: Some(true), ..Default::default() });
    q.status = Some(QueueStatus { state: Some("Open".to_string()), ..Default::default() });
    q
}

/// Creates `q`, then writes its status through `queues/{name}/status` (create drops status on a
/// kind with a status subresource). Returns the Queue as stored.
/// Errors: either API call failed (message names the Queue).
pub async fn create_queue(client: &Client, q: &Queue) -> Result<Queue> {
    let api: Api<Queue> = Api::all(client.clone());
    let name = q.name_any();
    let created = api.create(&PostParams::default(), q).await.map_err(|e| format!("creating Queue {name}: {e}"))?;
    match &q.status {
        None => Ok(created),
        Some(status) => Ok(api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&json!({"status": status})))
            .await
            .map_err(|e| format!("writing status of Queue {name}: {e}"))?),
    }
}

/// POSTs a Binding of pod `namespace/pod` to `node` (`pods/{pod}/binding`, kubernetes-api.md §4),
/// as the client's identity. Errors: the API error as is (`kube::Error::Api` with 409 when the
/// pod is already bound, 403 without RBAC, 404 for a missing pod).
pub async fn bind_pod(client: &Client, namespace: &str, pod: &str, node: &str) -> std::result::Result<(), kube::Error> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let binding = Binding {
        metadata: ObjectMeta { name: Some(pod.to_string()), namespace: Some(namespace.to_string()), ..Default::default() },
        target: ObjectReference {
            api_version: Some("v1".to_string()),
            kind: Some("Node".to_string()),
            name: Some(node.to_string()),
            ..Default::default()
        },
    };
    let _status: serde_json::Value = api.create_subresource("binding", pod, &PostParams::default(), &binding).await?;
    Ok(())
}

/// Deletes pod `namespace/name` at once (`gracePeriodSeconds: 0`: there is no kubelet to wait
/// for). A missing pod is not an error.
pub async fn delete_pod_now(client: &Client, namespace: &str, name: &str) -> Result<()> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    match api.delete(name, &DeleteParams { grace_period_seconds: Some(0), ..Default::default() }).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(format!("deleting Pod {namespace}/{name}: {e}").into()),
    }
}

/// Now as RFC 3339 (seconds, UTC), for condition timestamps.
pub(crate) fn rfc3339_now() -> String {
    k8s_openapi::jiff::Timestamp::now().round(k8s_openapi::jiff::Unit::Second).map(|t| t.to_string()).unwrap_or_default()
}
