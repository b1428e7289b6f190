//! Every fixed limit of the core, in one place, with its reason.

/// Most resource dimensions a cluster may name (cpu, memory, pods and scalars).
/// Presence of a dimension in a resource list is kept in a `u64` bit mask; 64 named resources is
/// far above what real clusters expose (cpu, memory, pods, ephemeral-storage, hugepages-*, a
/// few device plugins). A resource beyond this limit is reported and ignored.
pub const MAX_RESOURCE_DIMS: usize = 64;

/// Kubernetes' highest node score for one score plugin (kube-scheduler `MaxNodeScore`).
pub const MAX_NODE_SCORE: i64 = 100;

/// Below this many nodes a parallel scan costs more than it saves: a rayon join costs about
/// 15 µs on a 2-core machine, more than a sequential predicate pass over a few thousand nodes.
pub const PARALLEL_NODE_THRESHOLD: usize = 2048;
