//! An independent reading of the cluster before a cycle, written from Volcano's rules rather
//! than from the core's session code: each pod's task status, which PodGroups are session jobs,
//! and what every Ready node already has in use. The invariants compare decisions against it.

use basalt_core::cluster::{NodeId, PodGroupId, PodId};
use basalt_core::model::{PodPhase, PodSpec};
use basalt_core::{Cluster, SchedulerConf};
use std::collections::{BTreeMap, BTreeSet};

/// Volcano's task status of a pod as it comes from the API (`getTaskStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Waiting for a node.
    Pending,
    /// Has a node, not running yet.
    Bound,
    /// Running.
    Running,
    /// Being deleted.
    Releasing,
    /// Completed successfully.
    Succeeded,
    /// Completed with failure.
    Failed,
    /// Unknown.
    Unknown,
}

impl Status {
    /// The status of `p`.
    pub fn of(p: &PodSpec) -> Self {
        match p.phase {
            PodPhase::Running | PodPhase::Pending if p.deleting => Status::Releasing,
            PodPhase::Running => Status::Running,
            PodPhase::Pending if p.node_name.is_empty() => Status::Pending,
            PodPhase::Pending => Status::Bound,
            PodPhase::Succeeded => Status::Succeeded,
            PodPhase::Failed => Status::Failed,
            PodPhase::Unknown => Status::Unknown,
        }
    }

    /// Whether a pod in this status holds resources of the node it names.
    pub fn uses_node(self) -> bool {
        !matches!(self, Status::Pending | Status::Succeeded | Status::Failed)
    }

    /// Whether it counts toward a gang (Volcano `ReadyTaskNum`: allocated statuses + Succeeded).
    pub fn ready(self) -> bool {
        matches!(self, Status::Bound | Status::Running | Status::Succeeded)
    }

    /// Volcano `AllocatedStatus` (what a queue's `allocated` sums).
    pub fn allocated(self) -> bool {
        matches!(self, Status::Bound | Status::Running)
    }
}

/// An amount as the core keeps it: clamped to `0..=limits::MAX_QUANTITY` on entry. The
/// invariants compare in these units (a 2^48 + 10 request fits a 2^48 + 5 node there).
pub fn amount(v: i64) -> i128 {
    i128::from(v.clamp(0, basalt_core::limits::MAX_QUANTITY))
}

/// Whether a pod requests nothing but its pod slot (Volcano BestEffort).
pub fn best_effort(p: &PodSpec) -> bool {
    p.resreq.iter().all(|(k, &v)| k == "pods" || v == 0)
}

/// The cluster before a cycle, as the invariants see it.
#[derive(Debug, Default)]
pub struct Before {
    /// Ready nodes.
    pub ready_nodes: BTreeSet<NodeId>,
    /// PodGroups in the session (their queue exists).
    pub jobs: BTreeSet<PodGroupId>,
    /// PodGroups left out (their queue does not exist).
    pub skipped: BTreeSet<PodGroupId>,
    /// Pods of session jobs → their PodGroup.
    pub job_of: BTreeMap<PodId, PodGroupId>,
    /// Every pod's status.
    pub status: BTreeMap<PodId, Status>,
    /// Per Ready node, Σ requests (by resource name) of the pods holding it.
    pub used: BTreeMap<NodeId, BTreeMap<String, i128>>,
    /// Per Ready node, the pods holding it.
    pub on_node: BTreeMap<NodeId, Vec<PodId>>,
}

impl Before {
    /// Reads `cluster` as a session of `conf` would be opened on it.
    pub fn read(cluster: &Cluster, conf: &SchedulerConf) -> Self {
        let mut b = Before::default();
        for (id, n) in cluster.nodes() {
            if n.spec.ready {
                b.ready_nodes.insert(id);
            }
        }
        for (id, g) in cluster.pod_groups() {
            let q = if g.spec.queue.is_empty() { conf.options.default_queue.as_str() } else { g.spec.queue.as_str() };
            if cluster.queue(q).is_some() {
                b.jobs.insert(id);
            } else {
                b.skipped.insert(id);
            }
        }
        for (id, p) in cluster.pods() {
            let s = &p.spec;
            let st = Status::of(s);
            b.status.insert(id, st);
            if let Some(g) = s.group.as_deref().and_then(|g| cluster.pod_group_id(&s.namespace, g)) {
                if b.jobs.contains(&g) {
                    b.job_of.insert(id, g);
                }
            }
            let node = cluster.node_id(&s.node_name).filter(|n| b.ready_nodes.contains(n));
            if let (Some(n), true) = (node, st.uses_node()) {
                let used = b.used.entry(n).or_default();
                for (k, &v) in &s.resreq {
                    *used.entry(k.clone()).or_default() += amount(v);
                }
                b.on_node.entry(n).or_default().push(id);
            }
        }
        b
    }
}
