//! Every fixed limit of the core, in one place, with its reason.

/// Most resource dimensions a cluster may name (cpu, memory, pods and scalars).
/// Presence of a dimension in a resource list is kept in a `u64` bit mask; 64 named resources is
/// far above what real clusters expose (cpu, memory, pods, ephemeral-storage, hugepages-*, a
/// few device plugins). A resource beyond this limit is reported and ignored.
pub const MAX_RESOURCE_DIMS: usize = 64;

/// Largest amount of one resource the core accepts in one object (2^48: 256 TiB of memory,
/// 2.8·10^11 cores); larger values are clamped when an object enters the cluster copy. Sums of
/// up to 2^15 such values per node then stay exact in `i64`, so node accounting never
/// saturates and a Statement discard restores it exactly. Negative amounts become 0.
pub const MAX_QUANTITY: i64 = 1 << 48;

/// Kubernetes' highest node score for one score plugin (kube-scheduler `MaxNodeScore`).
pub const MAX_NODE_SCORE: i64 = 100;

/// Below this many nodes a parallel scan costs more than it saves: a rayon join costs about
/// 15 µs on a 2-core machine, more than a sequential predicate pass over a few thousand nodes.
pub const PARALLEL_NODE_THRESHOLD: usize = 2048;

/// Changes noted for the kept session layout before it is simply recomputed: above this many
/// (or a quarter of the pods, whichever is more) patching row by row costs about what a fresh
/// layout does, and the change log would otherwise grow while nobody prepares.
pub const MAX_TRACKED_CHANGES: usize = 4096;

/// Interner length below which it is never compacted. Above it the cluster compacts when the
/// interner holds twice the names that were live at the last compaction, so it stays within
/// `max(2 × live, this)` names and the marking work is amortised over as many new names.
pub const MIN_INTERNER_COMPACT: usize = 4096;

/// Most GPU share cards one node may register (`volcano.sh/gpu-number`): the cards a task holds
/// are a `u64` bit mask in the session's device table. Real nodes carry 1–16 cards; a node
/// registering more is reported by the runtime and its cards are not used.
pub const MAX_GPU_CARDS: u32 = 64;
