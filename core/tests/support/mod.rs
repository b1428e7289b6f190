//! Cluster builders shared by the core's integration tests (`mod support;` in a test file).

#![allow(dead_code)]

use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::Delta;

/// The `default` Queue: weight 1, reclaimable, Open.
pub fn default_queue() -> Delta {
    Delta::Queue(QueueSpec { name: "default".into(), weight: 1, reclaimable: true, ..Default::default() })
}

/// A Ready node whose capacity and allocatable are both `allocatable`.
pub fn ready_node(name: &str, allocatable: ResourceList) -> Delta {
    Delta::Node(NodeSpec { name: name.into(), capacity: allocatable.clone(), allocatable, ready: true, ..Default::default() })
}

/// A Running PodGroup `namespace/name` of `minMember` 1 in the `default` queue.
pub fn running_group(namespace: &str, name: &str) -> Delta {
    Delta::PodGroup(PodGroupSpec {
        namespace: namespace.into(),
        name: name.into(),
        min_member: 1,
        queue: "default".into(),
        phase: PodGroupPhase::Running,
        ..Default::default()
    })
}
