//! GPU share devices (Volcano `api/devices/nvidia/gpushare`): a node's cards from its
//! `status.capacity` `volcano.sh/gpu-memory` / `volcano.sh/gpu-number` and its
//! `volcano.sh/gpu-unhealthy-ids` annotation; a pod's requests from its containers' limits and
//! the cards it holds from its `volcano.sh/gpu-index` annotation.
//!
//! A malformed value is reported once per object and field (a warning naming both, logged
//! the first time that object is converted with that value) and never guessed at: a node's
//! cards are then not used ([`NodeSpec::gpu_share`](basalt_core::model::NodeSpec) `None`), and
//! a pod's bad `gpu-index` keeps its node's cards out of use while it is there.

use super::quantity;
use basalt_core::limits::MAX_GPU_CARDS;
use basalt_core::model::{GpuShareNode, PodGpu, GPU_INDEX, GPU_MEMORY, GPU_NUMBER, GPU_UNHEALTHY_IDS};
use k8s_openapi::api::core::v1 as k8s;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

/// (kind, object, field, value) already reported.
static REPORTED: Mutex<BTreeSet<(String, String, String, String)>> = Mutex::new(BTreeSet::new());

/// Logs a malformed device field of an object, once per object, field and value.
pub(super) fn report(kind: &str, name: &str, field: &str, value: &str, what: &str) {
    let key = (kind.to_string(), name.to_string(), field.to_string(), value.to_string());
    let first = REPORTED.lock().map(|mut r| r.insert(key)).unwrap_or(true);
    if first {
        tracing::warn!(object = %format!("{kind} {name}"), field, value, "{what}");
    }
}

/// A quantity's whole value (Kubernetes `Value()`), `None` when malformed or negative.
pub(super) fn value(q: &str) -> Option<u64> {
    quantity::to_units(q).ok().and_then(|v| u64::try_from(v).ok())
}

/// The node's GPU share cards (Volcano `NewGPUDevices`), `None` when it registers none
/// (either capacity absent, or `gpu-number` 0, as Volcano), or when a value is malformed: a
/// capacity that is not a whole non-negative quantity, more than
/// [`MAX_GPU_CARDS`] cards, or an unhealthy id that is not a card number (Volcano skips such an
/// id; Basalt does not guess which card is meant and leaves the node's cards out).
pub fn node_gpu_share(name: &str, node: &k8s::Node) -> Option<GpuShareNode> {
    let cap = node.status.as_ref().and_then(|s| s.capacity.as_ref())?;
    let (mem, num) = (cap.get(GPU_MEMORY)?, cap.get(GPU_NUMBER)?);
    let bad = |field: &str, v: &str, what: &str| {
        report("Node", name, field, v, what);
        None
    };
    let Some(memory) = value(&mem.0) else {
        return bad(
            &format!("status.capacity[{GPU_MEMORY}]"),
            &mem.0,
            "not a whole quantity; the node's GPU share cards are not used",
        );
    };
    let Some(number) = value(&num.0) else {
        return bad(
            &format!("status.capacity[{GPU_NUMBER}]"),
            &num.0,
            "not a whole quantity; the node's GPU share cards are not used",
        );
    };
    if number == 0 {
        return None;
    }
    if number > u64::from(MAX_GPU_CARDS) {
        return bad(
            &format!("status.capacity[{GPU_NUMBER}]"),
            &num.0,
            &format!("more than {MAX_GPU_CARDS} cards; the node's GPU share cards are not used"),
        );
    }
    let mut unhealthy = Vec::new();
    if let Some(v) = node.metadata.annotations.as_ref().and_then(|a| a.get(GPU_UNHEALTHY_IDS)) {
        for id in v.split(',') {
            match id.parse::<u32>() {
                Ok(id) => unhealthy.push(id),
                Err(_) => {
                    return bad(
                        &format!("metadata.annotations[{GPU_UNHEALTHY_IDS}]"),
                        v,
                        "not a comma list of card ids; the node's GPU share cards are not used",
                    )
                }
            }
        }
    }
    unhealthy.sort_unstable();
    unhealthy.dedup();
    Some(GpuShareNode { number: number as u32, memory_per_card: memory / number, unhealthy })
}

/// One container's limit of `resource` as a whole value (Volcano reads `Limits[...].Value()`);
/// a malformed limit has already failed the pod's request folding, so it reads as 0 here.
fn limit(c: &k8s::Container, resource: &str) -> u64 {
    c.resources.as_ref().and_then(|r| r.limits.as_ref()).and_then(|l| l.get(resource)).and_then(|q| value(&q.0)).unwrap_or(0)
}

/// Volcano's `getGPUMemoryOfPod` / `getGPUNumberOfPod`: max(Σ containers, largest init
/// container) of the limit.
fn pod_limit(spec: &k8s::PodSpec, resource: &str) -> u64 {
    let sum: u64 = spec.containers.iter().map(|c| limit(c, resource)).fold(0, u64::saturating_add);
    let init = spec.init_containers.iter().flatten().map(|c| limit(c, resource)).max().unwrap_or(0);
    sum.max(init)
}

/// What pod `key` asks of and holds on GPU share cards. A `volcano.sh/gpu-index` that is not a
/// comma list of card ids is reported and marks the pod (`index_invalid`).
pub fn pod_gpu(key: &str, spec: &k8s::PodSpec, annotations: &BTreeMap<String, String>) -> PodGpu {
    let mut gpu = PodGpu {
        memory: pod_limit(spec, GPU_MEMORY),
        number: u32::try_from(pod_limit(spec, GPU_NUMBER)).unwrap_or(u32::MAX),
        ..PodGpu::default()
    };
    if let Some(v) = annotations.get(GPU_INDEX) {
        match v.split(',').map(str::parse::<u32>).collect::<Result<Vec<_>, _>>() {
            Ok(ids) => gpu.index = ids,
            Err(_) => {
                gpu.index_invalid = true;
                report(
                    "Pod",
                    key,
                    &format!("metadata.annotations[{GPU_INDEX}]"),
                    v,
                    "not a comma list of card ids; the cards of the pod's node are not used while it is there",
                );
            }
        }
    }
    gpu
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(yaml: &str) -> k8s::Node {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn node_cards_from_capacity_and_unhealthy_ids() {
        let n = node("metadata: {name: n, annotations: {volcano.sh/gpu-unhealthy-ids: '3,1'}}\nstatus: {capacity: {volcano.sh/gpu-memory: '32000', volcano.sh/gpu-number: '4'}}\n");
        assert_eq!(node_gpu_share("n", &n), Some(GpuShareNode { number: 4, memory_per_card: 8000, unhealthy: vec![1, 3] }));
        let none = node("metadata: {name: n}\nstatus: {capacity: {volcano.sh/gpu-memory: '32000'}}\n");
        assert_eq!(node_gpu_share("n", &none), None, "no gpu-number: no cards, as Volcano");
        let zero =
            node("metadata: {name: n}\nstatus: {capacity: {volcano.sh/gpu-memory: '32000', volcano.sh/gpu-number: '0'}}\n");
        assert_eq!(node_gpu_share("n", &zero), None);
    }

    #[test]
    fn malformed_node_values_leave_the_cards_out() {
        let bad_ids = node("metadata: {name: n, annotations: {volcano.sh/gpu-unhealthy-ids: '1,x'}}\nstatus: {capacity: {volcano.sh/gpu-memory: '32000', volcano.sh/gpu-number: '4'}}\n");
        assert_eq!(node_gpu_share("n", &bad_ids), None);
        let too_many =
            node("metadata: {name: n}\nstatus: {capacity: {volcano.sh/gpu-memory: '32000', volcano.sh/gpu-number: '65'}}\n");
        assert_eq!(node_gpu_share("n", &too_many), None);
    }

    #[test]
    fn pod_requests_from_limits_and_index() {
        let spec: k8s::PodSpec = serde_yaml::from_str(
            "containers:\n- {name: a, resources: {limits: {volcano.sh/gpu-memory: '1000'}}}\n- {name: b, resources: {limits: {volcano.sh/gpu-memory: '500'}}}\ninitContainers:\n- {name: i, resources: {limits: {volcano.sh/gpu-memory: '1200', volcano.sh/gpu-number: '2'}}}\n",
        )
        .unwrap();
        let ann: BTreeMap<String, String> = [(GPU_INDEX.to_string(), "2,0".to_string())].into();
        let g = pod_gpu("ns/p", &spec, &ann);
        assert_eq!((g.memory, g.number, g.index.clone(), g.index_invalid), (1500, 2, vec![2, 0], false));
        let bad: BTreeMap<String, String> = [(GPU_INDEX.to_string(), "0,".to_string())].into();
        assert!(pod_gpu("ns/p", &spec, &bad).index_invalid);
    }
}
