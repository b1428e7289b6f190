//! Plain input types the runtime builds from Kubernetes objects (`runtime/src/convert`): nodes,
//! pods, PodGroups, Queues, PriorityClasses, PodDisruptionBudgets and ResourceQuotas. Owned
//! strings, no Kubernetes types; the [`crate::cluster::Cluster`] interns them. Field names follow the Kubernetes and Volcano APIs.

mod affinity;
mod disruption;
mod objects;
mod quota;

pub use affinity::*;
pub use disruption::*;
pub use objects::*;
pub use quota::*;
