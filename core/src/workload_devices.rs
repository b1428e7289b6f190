//! GPU share cards on a generated cluster (issue 26), for the device speed bench: every node
//! registers the same GPU share cards (capacity `volcano.sh/gpu-memory` / `volcano.sh/gpu-number`
//! as the volcano-device-plugin writes them) and pending pods ask card memory (container limit
//! `volcano.sh/gpu-memory`), the shape of an inference cluster sharing cards by memory. The same
//! cluster is then scheduled with and without `deviceshare.GPUSharingEnable`: without it, the
//! memory is one extended resource pooled per node, as Volcano does without the plugin. Same
//! cluster and arguments ⇒ same objects.

use crate::cluster::{Cluster, Delta};
use crate::model::{GpuShareNode, PodSpec, GPU_MEMORY, GPU_NUMBER};

/// What [`gpu_share`] gives the nodes and pods.
#[derive(Clone, Copy, Debug)]
pub struct DeviceMix {
    /// Cards per node (at most [`crate::limits::MAX_GPU_CARDS`]).
    pub cards: u32,
    /// Memory per card (MiB, the device plugin's unit).
    pub card_memory: u64,
    /// Card memory each pod asks (MiB).
    pub pod_memory: u64,
    /// Every `every`-th pending pod (in `namespace/name` order) asks card memory; 0: none.
    pub every: usize,
}

impl Default for DeviceMix {
    /// 8 cards of 16,000 MiB per node, every pending pod asking 6,000 MiB (two pods per card).
    fn default() -> Self {
        DeviceMix { cards: 8, card_memory: 16_000, pod_memory: 6_000, every: 1 }
    }
}

/// Gives every node of `c` `mix.cards` healthy cards of `mix.card_memory` (capacity and
/// allocatable `volcano.sh/gpu-memory` = cards × memory, `volcano.sh/gpu-number` = cards) and
/// every `mix.every`-th pending pod a `volcano.sh/gpu-memory` request of `mix.pod_memory` (in
/// its request and as the card memory it asks). Applies the changes to `c`; every object is
/// valid by construction.
pub fn gpu_share(c: &mut Cluster, mix: DeviceMix) {
    let nodes: Vec<_> = c.nodes().map(|(_, n)| n.spec.clone()).collect();
    let total = (mix.card_memory * u64::from(mix.cards)) as i64;
    for mut n in nodes {
        for list in [&mut n.capacity, &mut n.allocatable] {
            list.insert(GPU_MEMORY.into(), total);
            list.insert(GPU_NUMBER.into(), i64::from(mix.cards));
        }
        n.gpu_share = Some(GpuShareNode { number: mix.cards, memory_per_card: mix.card_memory, ..Default::default() });
        c.apply(Delta::Node(n)).expect("generated node is valid");
    }
    if mix.every == 0 {
        return;
    }
    let mut pods: Vec<PodSpec> = c.pods().filter(|(_, p)| p.spec.node_name.is_empty()).map(|(_, p)| p.spec.clone()).collect();
    pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    for mut p in pods.into_iter().step_by(mix.every) {
        p.resreq.insert(GPU_MEMORY.into(), mix.pod_memory as i64);
        p.gpu.memory = mix.pod_memory;
        c.apply(Delta::Pod(p)).expect("generated pod is valid");
    }
}
