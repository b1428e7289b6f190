//! Plugin enable flags, spelled exactly as Volcano spells them (`enable…` vs `enabled…`).

/// One enable flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[allow(missing_docs)]
pub enum Flag {
    JobOrder,
    JobReady,
    JobPipelined,
    TaskOrder,
    Preemptable,
    Reclaimable,
    Preemptive,
    QueueOrder,
    Predicate,
    BestNode,
    NodeOrder,
    TargetJob,
    ReservedNodes,
    JobEnqueued,
    Victim,
    JobStarving,
    Overused,
    Allocatable,
    HyperNodeOrder,
    SubJobReady,
    SubJobPipelined,
    SubJobOrder,
    HyperNodeGradient,
    Hierarchy,
    ClusterOrder,
}

/// Every flag with its YAML key and whether unset means true.
pub const FLAGS: &[(Flag, &str, bool)] = &[
    (Flag::JobOrder, "enableJobOrder", true),
    (Flag::JobReady, "enableJobReady", true),
    (Flag::JobPipelined, "enableJobPipelined", true),
    (Flag::TaskOrder, "enableTaskOrder", true),
    (Flag::Preemptable, "enablePreemptable", true),
    (Flag::Reclaimable, "enableReclaimable", true),
    (Flag::Preemptive, "enablePreemptive", true),
    (Flag::QueueOrder, "enableQueueOrder", true),
    (Flag::Predicate, "enablePredicate", true),
    (Flag::BestNode, "enableBestNode", true),
    (Flag::NodeOrder, "enableNodeOrder", true),
    (Flag::TargetJob, "enableTargetJob", true),
    (Flag::ReservedNodes, "enableReservedNodes", true),
    (Flag::JobEnqueued, "enableJobEnqueued", true),
    (Flag::Victim, "enabledVictim", true),
    (Flag::JobStarving, "enableJobStarving", true),
    (Flag::Overused, "enabledOverused", true),
    (Flag::Allocatable, "enabledAllocatable", true),
    (Flag::HyperNodeOrder, "enabledHyperNodeOrder", true),
    (Flag::SubJobReady, "enabledSubJobReady", true),
    (Flag::SubJobPipelined, "enabledSubJobPipelined", true),
    (Flag::SubJobOrder, "enabledSubJobOrder", true),
    (Flag::HyperNodeGradient, "enabledHyperNodeGradient", true),
    (Flag::Hierarchy, "enableHierarchy", false),
    (Flag::ClusterOrder, "enabledClusterOrder", false),
];

/// The flags set on one plugin entry; unset flags take Volcano's default.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EnableFlags {
    set: Vec<(Flag, bool)>,
}

impl EnableFlags {
    /// Sets `flag`.
    pub fn set(&mut self, flag: Flag, on: bool) {
        self.set.retain(|(f, _)| *f != flag);
        self.set.push((flag, on));
    }

    /// Whether `flag` is on (unset ⇒ true, except `enableHierarchy` and `enabledClusterOrder`).
    pub fn on(&self, flag: Flag) -> bool {
        if let Some((_, v)) = self.set.iter().find(|(f, _)| *f == flag) {
            return *v;
        }
        FLAGS.iter().find(|(f, _, _)| *f == flag).map(|(_, _, d)| *d).unwrap_or(true)
    }

    /// The flag spelled `key`, if it is one.
    pub fn lookup(key: &str) -> Option<Flag> {
        FLAGS.iter().find(|(_, k, _)| *k == key).map(|(f, _, _)| *f)
    }
}
