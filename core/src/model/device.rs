//! GPU share devices (Volcano `api/devices/nvidia/gpushare`): the cards a node registers through
//! its `volcano.sh/gpu-memory` / `volcano.sh/gpu-number` capacity and
//! `volcano.sh/gpu-unhealthy-ids` annotation, and what a pod asks of them (container limits) and
//! already holds (`volcano.sh/gpu-index`).

/// Node capacity and pod limit: total GPU memory of a node, memory a container asks of one card.
pub const GPU_MEMORY: &str = "volcano.sh/gpu-memory";
/// Node capacity and pod limit: number of cards of a node, whole cards a container asks for.
pub const GPU_NUMBER: &str = "volcano.sh/gpu-number";
/// Pod annotation: the card ids (comma-separated) the pod was given.
pub const GPU_INDEX: &str = "volcano.sh/gpu-index";
/// Pod annotation: when the card was chosen (ns since the Unix epoch).
pub const PREDICATE_TIME: &str = "volcano.sh/predicate-time";
/// Node annotation: ids (comma-separated) of cards not to be used.
pub const GPU_UNHEALTHY_IDS: &str = "volcano.sh/gpu-unhealthy-ids";

/// A node's GPU share cards (Volcano `NewGPUDevices`): cards `0..number`, each of
/// `memory_per_card` = capacity gpu-memory / gpu-number (integer division, as Volcano's
/// `uint(totalMemory / gpuNumber)`), less the unhealthy ones.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GpuShareNode {
    /// `status.capacity[volcano.sh/gpu-number]`, ≥ 1 and at most [`crate::limits::MAX_GPU_CARDS`].
    pub number: u32,
    /// Memory of each card, in the unit of the node's `volcano.sh/gpu-memory` capacity (the
    /// device plugin registers MiB).
    pub memory_per_card: u64,
    /// Card ids from `volcano.sh/gpu-unhealthy-ids`, sorted, no duplicates (ids ≥ `number`
    /// kept: they name no card, as in Volcano).
    pub unhealthy: Vec<u32>,
}

/// What a pod asks of GPU share devices and what it already holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PodGpu {
    /// GPU memory of one card (Volcano `getGPUMemoryOfPod`): max(Σ containers' limits
    /// `volcano.sh/gpu-memory`, the largest init container's), same unit as the node's.
    pub memory: u64,
    /// Whole cards (Volcano `getGPUNumberOfPod`): max(Σ containers' limits
    /// `volcano.sh/gpu-number`, the largest init container's).
    pub number: u32,
    /// Annotation `volcano.sh/gpu-index` as card ids, in the order written (empty when absent).
    pub index: Vec<u32>,
    /// The `volcano.sh/gpu-index` annotation is present but not a comma list of card ids (the
    /// runtime reports it): the cards of the pod's node are not used while the pod is there.
    pub index_invalid: bool,
}

impl PodGpu {
    /// Whether the pod asks for GPU share memory or whole cards.
    pub fn requests(&self) -> bool {
        self.memory > 0 || self.number > 0
    }

    /// Takes the cards named by a bind's `volcano.sh/gpu-index` annotation (what the pod carries
    /// once the API server has copied the Binding's annotations onto it); other keys, and no
    /// such key, change nothing.
    pub fn apply_annotations(&mut self, annotations: &super::Labels) {
        if let Some(v) = annotations.get(GPU_INDEX) {
            match v.split(',').map(str::parse::<u32>).collect::<Result<Vec<_>, _>>() {
                Ok(ids) => {
                    self.index = ids;
                    self.index_invalid = false;
                }
                Err(_) => self.index_invalid = true,
            }
        }
    }
}
