//! Plain input types the runtime builds from Kubernetes objects (`runtime/src/convert`): nodes,
//! pods, PodGroups, Queues, PriorityClasses, PodDisruptionBudgets, ResourceQuotas and storage objects
//! (PVCs, PVs, StorageClasses, CSINodes). Owned
//! strings, no Kubernetes types; the [`crate::cluster::Cluster`] interns them. Field names follow the Kubernetes and Volcano APIs.

mod affinity;
mod disruption;
mod objects;
mod quota;
mod volume;

pub use affinity::*;
pub use disruption::*;
pub use objects::*;
pub use quota::*;
pub use volume::*;
