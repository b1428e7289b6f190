//! Plain input types the runtime builds from Kubernetes objects (`runtime/src/convert`): nodes,
//! pods, PodGroups, Queues, PriorityClasses, PodDisruptionBudgets, ResourceQuotas, storage objects
//! (PVCs, PVs, StorageClasses, CSINodes), HyperNodes, NodeShards, GPU share and vGPU devices and NUMA topologies. Owned
//! strings, no Kubernetes types; the [`crate::cluster::Cluster`] interns them. Field names follow the Kubernetes and Volcano APIs.

mod affinity;
mod device;
mod disruption;
mod hypernode;
mod numa;
mod objects;
mod quota;
mod shard;
mod vgpu;
mod volume;

pub use affinity::*;
pub use device::*;
pub use disruption::*;
pub use hypernode::*;
pub use numa::*;
pub use objects::*;
pub use quota::*;
pub use shard::*;
pub use vgpu::*;
pub use volume::*;

crate::rare_default!(Affinity, PodGpu, PodVgpu, Labels, Option<String>);
