//! The embedded default's tables: node shapes and pod templates with weights, read off the
//! Alibaba GPU v2023 trace (`openb_node_list_all_node.csv` scaled to about a tenth;
//! `openb_pod_list_default.csv`: the most common request shapes of each pod class,
//! renormalised). Numbers only — no trace row is copied. `docs/replay.md` lists them.

/// A node shape and how many nodes of it the embedded cluster has.
#[derive(Clone, Copy, Debug)]
pub struct NodeShape {
    /// Node count.
    pub count: usize,
    /// CPU, millicores.
    pub cpu_milli: i64,
    /// Memory, MiB.
    pub memory_mib: i64,
    /// GPUs.
    pub gpus: i64,
    /// GPU model (empty = CPU-only).
    pub model: &'static str,
}

const fn n(count: usize, cpu_milli: i64, memory_mib: i64, gpus: i64, model: &'static str) -> NodeShape {
    NodeShape { count, cpu_milli, memory_mib, gpus, model }
}

/// The embedded cluster: 147 nodes, 616 GPUs, 12,360 cores (the trace's 1,523-node mix / 10).
pub const NODES: [NodeShape; 15] = [
    n(55, 96_000, 393_216, 8, "G2"),
    n(39, 104_000, 524_288, 2, "T4"),
    n(13, 32_000, 262_144, 0, ""),
    n(11, 16_000, 122_880, 2, "P100"),
    n(6, 96_000, 524_288, 0, ""),
    n(4, 128_000, 786_432, 8, "G3"),
    n(3, 96_000, 393_216, 0, ""),
    n(3, 32_000, 131_072, 4, "V100M16"),
    n(2, 96_000, 786_432, 8, "V100M32"),
    n(2, 64_000, 262_144, 2, "P100"),
    n(2, 32_000, 131_072, 0, ""),
    n(2, 64_000, 524_288, 0, ""),
    n(2, 104_000, 524_288, 0, ""),
    n(2, 96_000, 393_216, 4, "T4"),
    n(1, 48_000, 376_832, 4, "V100M32"),
];

/// A pod template: (CPU millicores, memory MiB, GPUs, weight).
pub type Template = (i64, i64, i64, u32);

/// Pods asking for one whole GPU (48 % of the trace's pods).
pub const ONE_GPU: [Template; 8] = [
    (11_300, 49_152, 1, 22),
    (11_400, 48_128, 1, 14),
    (3_152, 5_600, 1, 12),
    (18_708, 64_512, 1, 7),
    (9_810, 41_560, 1, 5),
    (12_000, 24_576, 1, 4),
    (15_700, 58_368, 1, 4),
    (11_908, 47_104, 1, 4),
];

/// Pods sharing one GPU (38 %); the share comes from [`GPU_SHARES`].
pub const SHARED_GPU: [Template; 8] = [
    (3_152, 5_600, 1, 37),
    (11_908, 47_104, 1, 20),
    (8_000, 30_517, 1, 16),
    (4_000, 22_888, 1, 6),
    (4_000, 15_258, 1, 6),
    (4_152, 10_600, 1, 5),
    (4_000, 30_517, 1, 4),
    (6_000, 6_144, 1, 2),
];

/// GPU shares of shared-GPU pods: (thousandths of a GPU, weight).
pub const GPU_SHARES: [(i64, u32); 12] =
    [(810, 35), (470, 24), (320, 11), (650, 8), (230, 5), (460, 4), (590, 2), (160, 2), (550, 2), (220, 2), (370, 2), (110, 1)];

/// CPU-only pods (13 %).
pub const CPU_ONLY: [Template; 8] = [
    (12_500, 57_344, 0, 34),
    (32_000, 49_152, 0, 26),
    (8_000, 30_517, 0, 15),
    (15_400, 51_200, 0, 11),
    (16_500, 51_200, 0, 9),
    (11_400, 57_344, 0, 1),
    (8_000, 15_625, 0, 1),
    (16_000, 31_250, 0, 1),
];

/// Pods asking for 2, 4 or 8 whole GPUs (1 %).
pub const MULTI_GPU: [Template; 8] = [
    (88_000, 327_680, 8, 24),
    (64_200, 263_168, 8, 24),
    (32_200, 132_096, 4, 12),
    (16_200, 66_560, 2, 9),
    (120_000, 737_280, 8, 4),
    (6_000, 65_536, 2, 4),
    (64_000, 262_144, 8, 4),
    (32_000, 131_072, 4, 4),
];

/// Pod classes of single-pod jobs: (class, weight in per mille).
pub const CLASSES: [(PodClass, u32); 4] =
    [(PodClass::SharedGpu, 378), (PodClass::OneGpu, 480), (PodClass::CpuOnly, 133), (PodClass::MultiGpu, 9)];

/// The class of a pod's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodClass {
    /// One GPU, shared (< 1000 thousandths).
    SharedGpu,
    /// One whole GPU.
    OneGpu,
    /// No GPU.
    CpuOnly,
    /// 2, 4 or 8 whole GPUs.
    MultiGpu,
}

/// QoS mix of each class in the trace, per mille: (LS, Burstable, BE).
pub fn qos_mix(class: PodClass) -> (u32, u32, u32) {
    match class {
        PodClass::SharedGpu => (247, 0, 753),
        PodClass::OneGpu => (820, 20, 160),
        PodClass::CpuOnly => (585, 0, 415),
        PodClass::MultiGpu => (700, 300, 0),
    }
}

/// The templates of a class.
pub fn templates(class: PodClass) -> &'static [Template] {
    match class {
        PodClass::SharedGpu => &SHARED_GPU,
        PodClass::OneGpu => &ONE_GPU,
        PodClass::CpuOnly => &CPU_ONLY,
        PodClass::MultiGpu => &MULTI_GPU,
    }
}
