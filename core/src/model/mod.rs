//! Plain input types the runtime builds from Kubernetes objects (`runtime/src/convert`): nodes,
//! pods, PodGroups, Queues and PriorityClasses. Owned strings, no Kubernetes types; the
//! [`crate::cluster::Cluster`] interns them. Field names follow the Kubernetes and Volcano APIs.

mod affinity;
mod objects;

pub use affinity::*;
pub use objects::*;
