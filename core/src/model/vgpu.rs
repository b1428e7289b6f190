//! vGPU devices (Volcano `api/devices/nvidia/vgpu`, the HAMi device plugin): the cards a node
//! registers in its `volcano.sh/node-vgpu-register` annotation, what a pod asks of them (its
//! containers' `volcano.sh/vgpu-number`, `-memory`, `-cores` limits and its card filter
//! annotations) and what it already holds (`volcano.sh/vgpu-ids-new`); and the node locks
//! (`deviceshare.NodeLockEnable`, Volcano `plugins/util/nodelock`) a node carries.
//!
//! Basalt follows Volcano's default device config (`GetDefaultDevicesConfig`; it reads no
//! `volcano-vgpu-device-config` ConfigMap): resource names `volcano.sh/vgpu-number`,
//! `volcano.sh/vgpu-memory`, `volcano.sh/vgpu-cores`, no memory-percentage resource (so a
//! container that asks no `vgpu-memory` takes 100 % of each card's memory, as Volcano's
//! `ExtractResourceRequest` does), and no MIG geometries (a `mig` registration falls back to
//! `hami-core`, as Volcano's `decodeNodeDevices` does when no geometry matches).

/// Node annotation the HAMi device plugin writes: the node's cards,
/// `UUID,count,memory,type,health,mode` joined by `:`.
pub const VGPU_REGISTER: &str = "volcano.sh/node-vgpu-register";
/// Node allocatable and container limit: vGPU slices (a container's limit = cards it asks for).
pub const VGPU_NUMBER: &str = "volcano.sh/vgpu-number";
/// Node allocatable and container limit: card memory a container asks of each of its cards (MiB).
pub const VGPU_MEMORY: &str = "volcano.sh/vgpu-memory";
/// The memory-percentage resource Volcano reads only when the device ConfigMap names it
/// (`resourceMemoryPercentageName`); Basalt, on the default config, does not read it.
pub const VGPU_MEMORY_PERCENTAGE: &str = "volcano.sh/vgpu-memory-percentage";
/// Node allocatable and container limit: percent of a card's cores (100 = the whole card, alone).
pub const VGPU_CORES: &str = "volcano.sh/vgpu-cores";
/// Pod annotation: the cards each container holds (`UUID,type,memory,cores:` per card, containers
/// joined by `;`), written on bind.
pub const VGPU_IDS_NEW: &str = "volcano.sh/vgpu-ids-new";
/// Pod annotation written on bind: the same value as [`VGPU_IDS_NEW`], for the device plugin.
pub const DEVICES_TO_ALLOCATE: &str = "volcano.sh/devices-to-allocate";
/// Pod annotation written on bind: the node the cards are on.
pub const VGPU_NODE: &str = "volcano.sh/vgpu-node";
/// Pod annotation written on bind: when the cards were chosen (s since the Unix epoch).
pub const VGPU_TIME: &str = "volcano.sh/vgpu-time";
/// Pod annotation written on bind: when (s since the Unix epoch).
pub const BIND_TIME: &str = "volcano.sh/bind-time";
/// Pod annotation written on bind (`allocating`); the device plugin sets `success` or `failed`.
pub const BIND_PHASE: &str = "volcano.sh/bind-phase";
/// Pod annotation: card types (comma list, case-insensitive substrings) the pod may use.
pub const USE_GPU_TYPE: &str = "nvidia.com/use-gputype";
/// Pod annotation: card types (comma list, case-insensitive substrings) the pod must not use
/// (read only when [`USE_GPU_TYPE`] is absent).
pub const NOUSE_GPU_TYPE: &str = "nvidia.com/nouse-gputype";
/// Pod annotation: card UUIDs (comma list) the pod may use.
pub const USE_GPU_UUID: &str = "volcano.sh/vgpu-use-gpuuuid";
/// Pod annotation: card UUIDs (comma list) the pod must not use.
pub const NOUSE_GPU_UUID: &str = "volcano.sh/vgpu-nouse-gpuuuid";
/// Pod annotation: the sharing mode the pod needs (`hami-core` or `mig`).
pub const VGPU_MODE: &str = "volcano.sh/vgpu-mode";
/// Pod annotation: `spread` = no two pods of the pod's PodGroup on one card.
pub const VGPU_PODGROUP_POLICY: &str = "volcano.sh/vgpu-podgroup-policy";
/// The only sharing mode of a node on Volcano's default device config.
pub const HAMI_CORE: &str = "hami-core";
/// Node lock annotation (Volcano `nodelock.LockNode`) taken for vGPU pods (`vgpu.DeviceName`).
pub const NODE_LOCK_VGPU: &str = "hamivgpu";
/// Node lock annotation taken for GPU share / GPU number pods.
pub const NODE_LOCK_GPU: &str = "gpu";
/// How long a node lock holds (Volcano: a lock older than 5 minutes is taken over).
pub const NODE_LOCK_EXPIRY_MS: i64 = 5 * 60 * 1000;

/// One card of a node's `volcano.sh/node-vgpu-register` (Volcano `GPUDevice`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VgpuCard {
    /// Card UUID (field 1).
    pub uuid: String,
    /// How many pods may share the card (field 2, the device plugin's split count).
    pub number: u32,
    /// Card memory, MiB (field 3).
    pub memory: u64,
    /// Card type, e.g. `NVIDIA-Tesla V100` (field 4); a card whose type does not contain
    /// `NVIDIA` takes no pod (Volcano `checkType`).
    pub card_type: String,
    /// Field 5 (`true`/`false`). Volcano parses it but its vGPU filter never reads it, so an
    /// unhealthy card still takes pods; Basalt does the same.
    pub health: bool,
}

/// A node's vGPU registration (Volcano `NewGPUDevices`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VgpuNode {
    /// The cards, card id = position (at most [`crate::limits::MAX_GPU_CARDS`]).
    pub cards: Vec<VgpuCard>,
    /// The registration or the node's vGPU allocatable is malformed (the runtime reports it
    /// once, naming node and field): `cards` is empty and pods asking for vGPU do not fit.
    pub malformed: bool,
}

impl VgpuNode {
    /// Parses `volcano.sh/node-vgpu-register` (Volcano `decodeNodeDevices`): entries split by
    /// `:`, those without `,` skipped (the trailing empty one), each
    /// `UUID,count,memory,type,health,mode`. Volcano reads a bad number as 0 and a bad health
    /// as false; Basalt refuses them. `Err` names the field (`entry 2: memory "x" is not a
    /// whole number`); `Ok(None)` when no entry names a card (Volcano: no devices).
    pub fn parse(value: &str) -> Result<Option<VgpuNode>, String> {
        if !value.contains(':') {
            return Err("no ':' between cards (expected UUID,count,memory,type,health,mode:...)".into());
        }
        let mut cards = Vec::new();
        for (i, entry) in value.split(':').enumerate() {
            if !entry.contains(',') {
                continue;
            }
            let f: Vec<&str> = entry.split(',').collect();
            if f.len() < 6 {
                return Err(format!("entry {i} {entry:?} has {} fields, expected 6", f.len()));
            }
            let num = |name: &str, v: &str| -> Result<u64, String> {
                v.trim().parse::<u64>().map_err(|_| format!("entry {i}: {name} {v:?} is not a whole number"))
            };
            let number = u32::try_from(num("count", f[1])?).map_err(|_| format!("entry {i}: count {:?} too large", f[1]))?;
            let memory = num("memory", f[2])?;
            let health = match f[4].trim() {
                "true" | "True" | "TRUE" | "t" | "T" | "1" => true,
                "false" | "False" | "FALSE" | "f" | "F" | "0" => false,
                v => return Err(format!("entry {i}: health {v:?} is not a bool")),
            };
            cards.push(VgpuCard { uuid: f[0].to_string(), number, memory, card_type: f[3].to_string(), health });
        }
        if cards.is_empty() {
            return Ok(None);
        }
        if cards.len() > crate::limits::MAX_GPU_CARDS as usize {
            return Err(format!("{} cards, more than {}", cards.len(), crate::limits::MAX_GPU_CARDS));
        }
        Ok(Some(VgpuNode { cards, malformed: false }))
    }
}

/// A node lock annotation the node carries (Volcano `nodelock`: key = lock name, value = when it
/// was taken, RFC 3339).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeLock {
    /// The annotation key ([`NODE_LOCK_VGPU`] or [`NODE_LOCK_GPU`]).
    pub name: String,
    /// When it was taken, ms since the Unix epoch; `None` when the value is not RFC 3339
    /// (Volcano's `LockNode` then fails, so the lock holds).
    pub since_ms: Option<i64>,
}

/// What of a node's devices is not GPU share: its vGPU registration and its node locks.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeDevices {
    /// vGPU cards (`None`: the node registers none, or lacks a non-zero allocatable
    /// `vgpu-number`, `vgpu-memory` or `vgpu-cores`, as Volcano's `NewGPUDevices`).
    pub vgpu: Option<VgpuNode>,
    /// Node lock annotations present ([`NODE_LOCK_VGPU`], [`NODE_LOCK_GPU`]).
    pub locks: Vec<NodeLock>,
}

/// What one container asks of vGPU cards (Volcano `ContainerDeviceRequest` from
/// `ExtractResourceRequest`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct VgpuRequest {
    /// Cards (limit `vgpu-number`; 1 when only `vgpu-memory` is limited).
    pub number: u32,
    /// Memory of each card, MiB (limit, else request, `vgpu-memory`; 0 when absent).
    pub memory: u64,
    /// Percent of each card's memory, used instead of `memory` unless 101 (Volcano's "not
    /// set"); 100 when neither memory nor a percentage is asked.
    pub mem_percentage: u32,
    /// Percent of each card's cores (limit, else request, `vgpu-cores`; 0 when absent).
    pub cores: u32,
}

/// One card a pod's container holds (an entry of `volcano.sh/vgpu-ids-new`, Volcano
/// `ContainerDevice`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VgpuHeld {
    /// Card UUID (Volcano matches node cards whose UUID it contains).
    pub uuid: String,
    /// Device type (`NVIDIA`).
    pub kind: String,
    /// Memory taken, MiB.
    pub memory: u64,
    /// Cores taken, percent.
    pub cores: u32,
}

/// What a pod asks of vGPU cards and what it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PodVgpu {
    /// Per container that limits `vgpu-number` or `vgpu-memory`, in `spec.containers` order
    /// (init containers are not read, as in Volcano). Empty: no vGPU request.
    pub requests: Vec<VgpuRequest>,
    /// Annotation [`USE_GPU_TYPE`], split by `,`.
    pub use_types: Option<Vec<String>>,
    /// Annotation [`NOUSE_GPU_TYPE`], split by `,`.
    pub nouse_types: Option<Vec<String>>,
    /// Annotation [`USE_GPU_UUID`]: trimmed, non-empty UUIDs.
    pub use_uuids: Vec<String>,
    /// Annotation [`NOUSE_GPU_UUID`]: trimmed, non-empty UUIDs.
    pub nouse_uuids: Vec<String>,
    /// Annotation [`VGPU_MODE`] (`None` when absent: any node mode).
    pub mode: Option<String>,
    /// Annotation [`VGPU_PODGROUP_POLICY`] is `spread`.
    pub group_spread: bool,
    /// Annotation [`VGPU_IDS_NEW`] decoded: per container, the cards held.
    pub held: Vec<Vec<VgpuHeld>>,
    /// [`VGPU_IDS_NEW`] is present but malformed (the runtime reports it): the vGPU cards of the
    /// pod's node are not used while the pod is there.
    pub held_invalid: bool,
}

impl PodVgpu {
    /// Volcano `checkVGPUResourcesInPod`: a container limits `vgpu-number` or `vgpu-memory`.
    pub fn requests(&self) -> bool {
        !self.requests.is_empty()
    }

    /// Takes the cards named by a bind's `volcano.sh/vgpu-ids-new` (what the pod carries once
    /// the API server has copied the Binding's annotations onto it); other keys change nothing.
    pub fn apply_annotations(&mut self, annotations: &super::Labels) {
        if let Some(v) = annotations.get(VGPU_IDS_NEW) {
            match decode_pod_devices(v) {
                Ok(h) => {
                    self.held = h;
                    self.held_invalid = false;
                }
                Err(_) => self.held_invalid = true,
            }
        }
    }
}

/// Volcano `DecodePodDevices`: containers split by `;`, cards by `:`, each
/// `UUID,type,memory,cores` (pieces without `,` skipped). Volcano skips a card entry with too
/// few fields or bad numbers; Basalt refuses the value (`Err` says which entry).
pub fn decode_pod_devices(value: &str) -> Result<Vec<Vec<VgpuHeld>>, String> {
    if value.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (c, ctr) in value.split(';').enumerate() {
        let mut cards = Vec::new();
        for piece in ctr.split(':').filter(|p| p.contains(',')) {
            let f: Vec<&str> = piece.split(',').collect();
            if f.len() < 4 {
                return Err(format!("container {c}: {piece:?} has {} fields, expected 4", f.len()));
            }
            let memory = f[2].parse::<u32>().map_err(|_| format!("container {c}: memory {:?} is not a whole number", f[2]))?;
            let cores = f[3].parse::<u32>().map_err(|_| format!("container {c}: cores {:?} is not a whole number", f[3]))?;
            cards.push(VgpuHeld { uuid: f[0].to_string(), kind: f[1].to_string(), memory: u64::from(memory), cores });
        }
        out.push(cards);
    }
    Ok(out)
}

/// Volcano `encodePodDevices`: per container `UUID,type,memory,cores:` for each card,
/// containers joined by `;`.
pub fn encode_pod_devices(containers: &[Vec<VgpuHeld>]) -> String {
    let mut out = String::new();
    for (i, c) in containers.iter().enumerate() {
        if i > 0 {
            out.push(';');
        }
        for d in c {
            out.push_str(&format!("{},{},{},{}:", d.uuid, d.kind, d.memory, d.cores));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_parses_cards_and_refuses_bad_fields() {
        let n = VgpuNode::parse("GPU-a,10,16384,NVIDIA-Tesla V100,true,hami-core:GPU-b,10,8000,NVIDIA-T4,false,hami-core:")
            .unwrap()
            .unwrap();
        assert_eq!(n.cards.len(), 2);
        assert_eq!(
            n.cards[1],
            VgpuCard { uuid: "GPU-b".into(), number: 10, memory: 8000, card_type: "NVIDIA-T4".into(), health: false }
        );
        assert!(VgpuNode::parse("GPU-a,10,x,NVIDIA,true,hami-core:").unwrap_err().contains("memory"));
        assert!(VgpuNode::parse("GPU-a,10,100:").unwrap_err().contains("3 fields"));
        assert!(VgpuNode::parse("GPU-a,10,100,NVIDIA,yes,hami-core:").unwrap_err().contains("health"));
        assert!(VgpuNode::parse("nothing").is_err());
        assert_eq!(VgpuNode::parse(":").unwrap(), None);
    }

    #[test]
    fn pod_devices_round_trip_as_volcano_writes_them() {
        let v = "GPU-a,NVIDIA,1024,30:GPU-b,NVIDIA,1024,30:;GPU-a,NVIDIA,2000,0:";
        let d = decode_pod_devices(v).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(d[0][1], VgpuHeld { uuid: "GPU-b".into(), kind: "NVIDIA".into(), memory: 1024, cores: 30 });
        assert_eq!(encode_pod_devices(&d), v);
        assert!(decode_pod_devices("GPU-a,NVIDIA,x,0:").is_err());
        assert!(decode_pod_devices("GPU-a,NVIDIA:").is_err());
    }
}
