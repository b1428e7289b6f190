//! vGPU devices (Volcano `api/devices/nvidia/vgpu`, HAMi): a node's cards from its
//! `volcano.sh/node-vgpu-register` annotation (used only when its allocatable has non-zero
//! `volcano.sh/vgpu-number`, `-memory` and `-cores`, as Volcano's `NewGPUDevices`), its node
//! lock annotations (`hamivgpu`, `gpu`), and a pod's requests from its containers' limits,
//! its card filter annotations and the cards it holds (`volcano.sh/vgpu-ids-new`).
//!
//! A malformed registration or `vgpu-ids-new` is reported once per object, field and value
//! (a warning naming both) and never guessed at: the node's vGPU cards are not used.

use super::device::{report, value};
use basalt_core::model::*;
use k8s_openapi::api::core::v1 as k8s;
use std::collections::BTreeMap;

/// The node's vGPU registration and node locks.
pub fn node_devices(name: &str, node: &k8s::Node) -> NodeDevices {
    let ann = node.metadata.annotations.as_ref();
    let locks = [NODE_LOCK_VGPU, NODE_LOCK_GPU]
        .iter()
        .filter_map(|&k| {
            let v = ann?.get(k)?;
            Some(NodeLock { name: k.to_string(), since_ms: v.parse::<jiff::Timestamp>().ok().map(|t| t.as_millisecond()) })
        })
        .collect();
    NodeDevices { vgpu: node_vgpu(name, node), locks }
}

fn node_vgpu(name: &str, node: &k8s::Node) -> Option<VgpuNode> {
    let reg = node.metadata.annotations.as_ref()?.get(VGPU_REGISTER)?;
    // Volcano reads status.allocatable; Basalt's nodes without one use their capacity.
    let status = node.status.as_ref()?;
    let alloc = status.allocatable.as_ref().or(status.capacity.as_ref())?;
    let positive = |k: &str| alloc.get(k).and_then(|q| value(&q.0)).is_some_and(|v| v > 0);
    if !(positive(VGPU_NUMBER) && positive(VGPU_CORES) && positive(VGPU_MEMORY)) {
        return None;
    }
    match VgpuNode::parse(reg) {
        Ok(v) => v,
        Err(why) => {
            report(
                "Node",
                name,
                &format!("metadata.annotations[{VGPU_REGISTER}]"),
                reg,
                &format!("{why}; the node's vGPU cards are not used"),
            );
            Some(VgpuNode { cards: Vec::new(), malformed: true })
        }
    }
}

/// A container's limit, else request, of `resource` as a whole value (`None` when absent or
/// not a whole quantity: Volcano's `AsInt64` fails there).
fn limit_or_request(c: &k8s::Container, resource: &str) -> Option<u64> {
    let r = c.resources.as_ref()?;
    let q = r.limits.as_ref().and_then(|l| l.get(resource)).or_else(|| r.requests.as_ref().and_then(|l| l.get(resource)))?;
    value(&q.0)
}

fn limit_present(c: &k8s::Container, resource: &str) -> Option<Option<u64>> {
    let q = c.resources.as_ref()?.limits.as_ref()?.get(resource)?;
    Some(value(&q.0))
}

/// Volcano `ExtractResourceRequest` on the default device config: per container (not init
/// containers) that limits `vgpu-number` (cards = its value) or else `vgpu-memory` (1 card).
fn requests(spec: &k8s::PodSpec) -> Vec<VgpuRequest> {
    let mut out = Vec::new();
    for c in &spec.containers {
        let number = match (limit_present(c, VGPU_NUMBER), limit_present(c, VGPU_MEMORY)) {
            (Some(n), _) => n.unwrap_or(0),
            (None, Some(_)) => 1,
            (None, None) => continue,
        };
        let memory = limit_or_request(c, VGPU_MEMORY).unwrap_or(0);
        let cores = limit_or_request(c, VGPU_CORES).unwrap_or(0);
        out.push(VgpuRequest {
            number: u32::try_from(number).unwrap_or(u32::MAX),
            memory,
            mem_percentage: if memory == 0 { 100 } else { 101 },
            cores: u32::try_from(cores).unwrap_or(u32::MAX),
        });
    }
    out
}

fn uuid_list(v: Option<&String>) -> Vec<String> {
    v.map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()).unwrap_or_default()
}

/// What pod `key` asks of and holds on vGPU cards. A malformed `volcano.sh/vgpu-ids-new` is
/// reported and marks the pod (`held_invalid`).
pub fn pod_vgpu(key: &str, spec: &k8s::PodSpec, annotations: &BTreeMap<String, String>) -> PodVgpu {
    let types = |k: &str| annotations.get(k).map(|v| v.split(',').map(String::from).collect());
    let mut v = PodVgpu {
        requests: requests(spec),
        use_types: types(USE_GPU_TYPE),
        nouse_types: types(NOUSE_GPU_TYPE),
        use_uuids: uuid_list(annotations.get(USE_GPU_UUID)),
        nouse_uuids: uuid_list(annotations.get(NOUSE_GPU_UUID)),
        mode: annotations.get(VGPU_MODE).cloned(),
        group_spread: annotations.get(VGPU_PODGROUP_POLICY).is_some_and(|p| p == "spread"),
        ..PodVgpu::default()
    };
    if let Some(ids) = annotations.get(VGPU_IDS_NEW) {
        match decode_pod_devices(ids) {
            Ok(h) => v.held = h,
            Err(why) => {
                v.held_invalid = true;
                report(
                    "Pod",
                    key,
                    &format!("metadata.annotations[{VGPU_IDS_NEW}]"),
                    ids,
                    &format!("{why}; the vGPU cards of the pod's node are not used while it is there"),
                );
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(yaml: &str) -> k8s::Node {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn registration_needs_the_allocatable_and_a_bad_one_is_marked() {
        let ok = node(
            "metadata: {name: n, annotations: {volcano.sh/node-vgpu-register: 'GPU-a,10,16000,NVIDIA-T4,true,hami-core:', hamivgpu: '2026-01-01T00:00:00Z'}}
status: {allocatable: {volcano.sh/vgpu-number: '10', volcano.sh/vgpu-memory: '16000', volcano.sh/vgpu-cores: '100'}}",
        );
        let d = node_devices("n", &ok);
        assert_eq!(d.vgpu.as_ref().unwrap().cards.len(), 1);
        assert_eq!(d.locks, vec![NodeLock { name: "hamivgpu".into(), since_ms: Some(1_767_225_600_000) }]);
        let no_cores = node(
            "metadata: {name: n, annotations: {volcano.sh/node-vgpu-register: 'GPU-a,10,16000,NVIDIA-T4,true,hami-core:'}}
status: {allocatable: {volcano.sh/vgpu-number: '10', volcano.sh/vgpu-memory: '16000'}}",
        );
        assert_eq!(node_devices("n", &no_cores).vgpu, None, "no vgpu-cores allocatable: no devices, as Volcano");
        let bad = node(
            "metadata: {name: n, annotations: {volcano.sh/node-vgpu-register: 'GPU-a,ten,16000,NVIDIA-T4,true,hami-core:', gpu: 'soon'}}
status: {allocatable: {volcano.sh/vgpu-number: '10', volcano.sh/vgpu-memory: '16000', volcano.sh/vgpu-cores: '100'}}",
        );
        let d = node_devices("n", &bad);
        assert_eq!(d.vgpu, Some(VgpuNode { cards: vec![], malformed: true }));
        assert_eq!(d.locks, vec![NodeLock { name: "gpu".into(), since_ms: None }]);
    }

    #[test]
    fn container_requests_follow_extract_resource_request() {
        let spec: k8s::PodSpec = serde_yaml::from_str(
            "containers:
- {name: a, resources: {limits: {volcano.sh/vgpu-number: '2', volcano.sh/vgpu-memory: '3000', volcano.sh/vgpu-cores: '30'}}}
- {name: b, resources: {limits: {volcano.sh/vgpu-memory: '1000'}}}
- {name: c, resources: {limits: {volcano.sh/vgpu-number: '1'}}}
- {name: d, resources: {limits: {cpu: '1', volcano.sh/vgpu-cores: '50'}}}
initContainers:
- {name: i, resources: {limits: {volcano.sh/vgpu-number: '4'}}}",
        )
        .unwrap();
        let ann: BTreeMap<String, String> = [
            (VGPU_IDS_NEW.to_string(), "GPU-a,NVIDIA,1000,0:".to_string()),
            (USE_GPU_UUID.to_string(), " GPU-a, ,GPU-b".to_string()),
        ]
        .into();
        let v = pod_vgpu("ns/p", &spec, &ann);
        assert_eq!(
            v.requests,
            vec![
                VgpuRequest { number: 2, memory: 3000, mem_percentage: 101, cores: 30 },
                VgpuRequest { number: 1, memory: 1000, mem_percentage: 101, cores: 0 },
                VgpuRequest { number: 1, memory: 0, mem_percentage: 100, cores: 0 },
            ],
            "d limits only cores: no request; init containers are not read"
        );
        assert_eq!(v.use_uuids, vec!["GPU-a", "GPU-b"]);
        assert_eq!(v.held.len(), 1);
        let bad: BTreeMap<String, String> = [(VGPU_IDS_NEW.to_string(), "GPU-a,NVIDIA,x,0:".to_string())].into();
        assert!(pod_vgpu("ns/p", &spec, &bad).held_invalid);
    }
}
