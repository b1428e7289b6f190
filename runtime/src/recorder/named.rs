//! A cycle's [`Decisions`] with every id resolved to a name, so they can be stored, compared
//! across runs of the core and read by a person, and their compact on-disk form
//! ([`DecisionsDiff`]: what changed since the previous cycle).
//!
//! Binds, evictions and pipelined tasks are kept in decision order; per-pod conditions,
//! PodGroup statuses, Queue allocations, skipped PodGroups and PodGroup events are kept per
//! object (by name). A condition's `transitionID` equal to the cycle's own session id is stored
//! as [`THIS_SESSION`], so an unchanged PodGroup does not differ from one cycle to the next.

use basalt_core::cluster::Cluster;
use basalt_core::decision::{Decisions, PodGroupStatus};
use basalt_core::model::{Labels, VolumeBinding};
use basalt_core::resource::ResourceList;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `(namespace, name)` of a pod or PodGroup.
pub type ObjKey = (String, String);

/// Stands for "the session id of the cycle that decided it" in a condition's `transitionID`.
pub const THIS_SESSION: &str = "=session";

/// A PodGroup's status as a cycle decided it: the core's [`PodGroupStatus`] with the PodGroup
/// left out (`()`: the map of [`NamedDecisions::pod_groups`] keys it by name), its
/// `transitionID` of this cycle as [`THIS_SESSION`]. Stored as the core's fields in order
/// (postcard writes `()` as nothing), so recordings of the former recorder-own struct with the
/// same fields read unchanged.
pub type GroupStatus = PodGroupStatus<()>;

/// An event on a PodGroup.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupEvent {
    /// `Normal` or `Warning`.
    pub kind: String,
    /// Reason, e.g. `Unschedulable`.
    pub reason: String,
    /// Message.
    pub message: String,
}

/// Everything one cycle decided, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedDecisions {
    /// `(pod, node)` in commit order.
    pub binds: Vec<(ObjKey, String)>,
    /// `(pod, reason)` in order.
    pub evictions: Vec<(ObjKey, String)>,
    /// `(pod, node)` left pipelined.
    pub pipelined: Vec<(ObjKey, String)>,
    /// Pending pods: `(reason, message)` of their `PodScheduled=False` condition.
    pub unschedulable: BTreeMap<ObjKey, (String, String)>,
    /// Every PodGroup in the session.
    pub pod_groups: BTreeMap<ObjKey, GroupStatus>,
    /// `status.allocated` of every Queue.
    pub queues: BTreeMap<String, ResourceList>,
    /// PodGroups left out of the session, with the reason.
    pub skipped: BTreeMap<ObjKey, String>,
    /// Events per PodGroup, in order.
    pub events: BTreeMap<ObjKey, Vec<GroupEvent>>,
    /// What the volume binder does before some binds are sent (PVs bound to claims, claims
    /// provisioned for the chosen node), by name already, in the decisions' order.
    pub volume_bindings: Vec<VolumeBinding>,
    /// The annotations each bind carries on its Binding (`volcano.sh/gpu-index`, the vGPU
    /// keys, …), for the binds that carry any, in commit order (format 3).
    pub bind_annotations: Vec<(ObjKey, Labels)>,
    /// The node lock annotation value each bind takes on its node first
    /// (`deviceshare.NodeLockEnable`), for the binds that take one, in commit order (format 3).
    pub node_locks: Vec<(ObjKey, String)>,
    /// Pods whose Volcano queue-allocation gate the cycle removes, in order (format 3).
    pub gate_removals: Vec<ObjKey>,
    /// `(pod, node, CPU ids)` the `numa-aware` plugin assigned bound pods (format 3).
    pub numa_assignments: Vec<(ObjKey, String, Vec<u32>)>,
}

impl NamedDecisions {
    /// Resolves `d`'s ids on `cluster` (the cluster the cycle ran on, before its binds are
    /// assumed). An id the cluster no longer has is named `?<id>` (it cannot happen for the
    /// cluster the cycle read).
    pub fn of(d: &Decisions, cluster: &Cluster, cycle: u64) -> Self {
        let session = format!("basalt-session-{cycle}");
        let pod = |id: basalt_core::cluster::PodId| match cluster.pod(id) {
            Some(p) => (p.spec.namespace.clone(), p.spec.name.clone()),
            None => (String::new(), format!("?{}", id.0)),
        };
        let node = |id: basalt_core::cluster::NodeId| match cluster.node(id) {
            Some(n) => n.spec.name.clone(),
            None => format!("?{}", id.0),
        };
        let group = |id: basalt_core::cluster::PodGroupId| match cluster.pod_group(id) {
            Some(g) => (g.spec.namespace.clone(), g.spec.name.clone()),
            None => (String::new(), format!("?{}", id.0)),
        };
        let mut out = NamedDecisions {
            binds: d.binds.iter().map(|b| (pod(b.pod), node(b.node))).collect(),
            evictions: d.evictions.iter().map(|e| (pod(e.pod), e.reason.clone())).collect(),
            pipelined: d.pipelined.iter().map(|p| (pod(p.pod), node(p.node))).collect(),
            unschedulable: d.unschedulable.iter().map(|c| (pod(c.pod), (c.reason.clone(), c.message.clone()))).collect(),
            pod_groups: BTreeMap::new(),
            queues: d.queues.iter().map(|q| (q.name.clone(), q.allocated.clone())).collect(),
            skipped: d.skipped.iter().map(|(g, r)| (group(*g), r.clone())).collect(),
            events: BTreeMap::new(),
            volume_bindings: d.volume_bindings.clone(),
            bind_annotations: d
                .binds
                .iter()
                .filter(|b| !b.annotations.is_empty())
                .map(|b| (pod(b.pod), (*b.annotations).clone()))
                .collect(),
            node_locks: d.binds.iter().filter_map(|b| b.node_lock.as_ref().map(|l| (pod(b.pod), l.clone()))).collect(),
            gate_removals: d.gate_removals.iter().map(|g| pod(g.pod)).collect(),
            numa_assignments: d.numa_assignments.iter().map(|a| (pod(a.pod), node(a.node), a.cpus.clone())).collect(),
        };
        for s in &d.pod_groups {
            let mut status: GroupStatus = s.naming(());
            for c in status.conditions.iter_mut().filter(|c| c.transition_id == session) {
                c.transition_id = THIS_SESSION.into();
            }
            out.pod_groups.insert(group(s.group), status);
        }
        for e in &d.events {
            out.events.entry(group(e.group)).or_default().push(GroupEvent {
                kind: e.kind.to_string(),
                reason: e.reason.to_string(),
                message: e.message.to_string(),
            });
        }
        out
    }
}

/// Where allocate's HyperNode gradient path searched for a PodGroup it could not place
/// ([`basalt_core::decision::TopologySearch`], by name), stored in
/// [`super::format::Record::Topology`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedTopologySearch {
    /// The PodGroup.
    pub group: ObjKey,
    /// Its highest allowed tier after Volcano's rewrites; `None` when only its sub-groups have
    /// a limit.
    pub highest_tier: Option<i32>,
    /// The tiers searched, lowest first, each with the number of HyperNodes eligible in it.
    pub tiers: Vec<(i32, u32)>,
    /// Why nothing fitted.
    pub reason: String,
    /// `(HyperNode, tier, why it did not hold the gang)` in search order, at most
    /// [`basalt_core::decision::TRIED_PER_TIER`] per tier.
    pub tried: Vec<(String, i32, String)>,
}

impl NamedTopologySearch {
    /// `d`'s topology searches with their PodGroups named on `cluster` (`?<id>` for one the
    /// cluster no longer has).
    pub fn all_of(d: &Decisions, cluster: &Cluster) -> Vec<Self> {
        d.topology_searches
            .iter()
            .map(|t| NamedTopologySearch {
                group: match cluster.pod_group(t.group) {
                    Some(g) => (g.spec.namespace.clone(), g.spec.name.clone()),
                    None => (String::new(), format!("?{}", t.group.0)),
                },
                highest_tier: t.highest_tier,
                tiers: t.tiers.clone(),
                reason: t.reason.clone(),
                tried: t.tried.iter().map(|h| (h.hyper_node.clone(), h.tier, h.why.clone())).collect(),
            })
            .collect()
    }

    /// The explanation's lines: the limit and tiers searched, one line per HyperNode tried,
    /// and the reason.
    pub fn lines(&self) -> Vec<String> {
        let limit = match self.highest_tier {
            Some(t) => format!("highest allowed tier {t}"),
            None => "limits on its sub-groups only".to_string(),
        };
        let tiers: Vec<String> = self.tiers.iter().map(|(t, n)| format!("tier {t} ({n} HyperNodes)")).collect();
        let searched = if tiers.is_empty() { "no tier".to_string() } else { tiers.join(", ") };
        let mut out = vec![format!("topology search ({limit}): searched {searched}; {}", self.reason)];
        for (h, tier, why) in &self.tried {
            out.push(format!("  tier {tier} HyperNode {h} rejected: {why}"));
        }
        for (t, n) in &self.tiers {
            let named = self.tried.iter().filter(|x| x.1 == *t).count() as u32;
            if *n > named {
                out.push(format!("  tier {t}: {} more HyperNodes tried, not listed", n - named));
            }
        }
        out
    }
}

/// A map's changes: entries added or changed, keys removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapDiff<K: Ord, V> {
    /// Added or changed entries.
    pub upsert: Vec<(K, V)>,
    /// Removed keys.
    pub remove: Vec<K>,
}

impl<K: Ord, V> Default for MapDiff<K, V> {
    fn default() -> Self {
        MapDiff { upsert: Vec::new(), remove: Vec::new() }
    }
}

impl<K: Ord + Clone, V: Clone + PartialEq> MapDiff<K, V> {
    /// The changes that turn `old` into `new`.
    pub fn between(old: &BTreeMap<K, V>, new: &BTreeMap<K, V>) -> Self {
        let upsert = new.iter().filter(|(k, v)| old.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect();
        let remove = old.keys().filter(|k| !new.contains_key(*k)).cloned().collect();
        MapDiff { upsert, remove }
    }

    /// Applies the changes to `m`.
    pub fn apply(&self, m: &mut BTreeMap<K, V>) {
        for k in &self.remove {
            m.remove(k);
        }
        for (k, v) in &self.upsert {
            m.insert(k.clone(), v.clone());
        }
    }
}

/// A cycle's decisions as stored: the ordered lists whole, the per-object maps as changes from
/// the previous cycle of the segment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionsDiff {
    /// [`NamedDecisions::binds`].
    pub binds: Vec<(ObjKey, String)>,
    /// [`NamedDecisions::evictions`].
    pub evictions: Vec<(ObjKey, String)>,
    /// [`NamedDecisions::pipelined`].
    pub pipelined: Vec<(ObjKey, String)>,
    /// Changes of [`NamedDecisions::unschedulable`].
    pub unschedulable: MapDiff<ObjKey, (String, String)>,
    /// Changes of [`NamedDecisions::pod_groups`].
    pub pod_groups: MapDiff<ObjKey, GroupStatus>,
    /// Changes of [`NamedDecisions::queues`].
    pub queues: MapDiff<String, ResourceList>,
    /// Changes of [`NamedDecisions::skipped`].
    pub skipped: MapDiff<ObjKey, String>,
    /// Changes of [`NamedDecisions::events`].
    pub events: MapDiff<ObjKey, Vec<GroupEvent>>,
    /// [`NamedDecisions::volume_bindings`] (whole, like the binds they go with).
    pub volume_bindings: Vec<VolumeBinding>,
    /// [`NamedDecisions::bind_annotations`] (whole; format 3).
    pub bind_annotations: Vec<(ObjKey, Labels)>,
    /// [`NamedDecisions::node_locks`] (whole; format 3).
    pub node_locks: Vec<(ObjKey, String)>,
    /// [`NamedDecisions::gate_removals`] (whole; format 3).
    pub gate_removals: Vec<ObjKey>,
    /// [`NamedDecisions::numa_assignments`] (whole; format 3).
    pub numa_assignments: Vec<(ObjKey, String, Vec<u32>)>,
}

impl DecisionsDiff {
    /// `new` as changes from `old`.
    pub fn between(old: &NamedDecisions, new: &NamedDecisions) -> Self {
        DecisionsDiff {
            binds: new.binds.clone(),
            evictions: new.evictions.clone(),
            pipelined: new.pipelined.clone(),
            unschedulable: MapDiff::between(&old.unschedulable, &new.unschedulable),
            pod_groups: MapDiff::between(&old.pod_groups, &new.pod_groups),
            queues: MapDiff::between(&old.queues, &new.queues),
            skipped: MapDiff::between(&old.skipped, &new.skipped),
            events: MapDiff::between(&old.events, &new.events),
            volume_bindings: new.volume_bindings.clone(),
            bind_annotations: new.bind_annotations.clone(),
            node_locks: new.node_locks.clone(),
            gate_removals: new.gate_removals.clone(),
            numa_assignments: new.numa_assignments.clone(),
        }
    }

    /// The decisions these changes make from `prev` (the previous cycle's).
    pub fn apply(&self, prev: &NamedDecisions) -> NamedDecisions {
        let mut d = prev.clone();
        d.binds = self.binds.clone();
        d.evictions = self.evictions.clone();
        d.pipelined = self.pipelined.clone();
        self.unschedulable.apply(&mut d.unschedulable);
        self.pod_groups.apply(&mut d.pod_groups);
        self.queues.apply(&mut d.queues);
        self.skipped.apply(&mut d.skipped);
        self.events.apply(&mut d.events);
        d.volume_bindings = self.volume_bindings.clone();
        d.bind_annotations = self.bind_annotations.clone();
        d.node_locks = self.node_locks.clone();
        d.gate_removals = self.gate_removals.clone();
        d.numa_assignments = self.numa_assignments.clone();
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::model::{PodGroupCondition, PodGroupPhase};

    /// The recorder's own copy of a PodGroup status before it reused the core's
    /// [`PodGroupStatus`] (the struct recordings made until then hold).
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct FormerGroupStatus {
        phase: PodGroupPhase,
        conditions: Vec<PodGroupCondition>,
        running: i32,
        succeeded: i32,
        failed: i32,
        changed: bool,
    }

    #[test]
    fn a_group_status_is_stored_as_the_former_struct_was() {
        let condition = PodGroupCondition {
            kind: "Unschedulable".into(),
            status: "True".into(),
            transition_id: THIS_SESSION.into(),
            reason: "NotEnoughResources".into(),
            message: "2/3 tasks in gang unschedulable".into(),
        };
        let former = FormerGroupStatus {
            phase: PodGroupPhase::Inqueue,
            conditions: vec![condition.clone()],
            running: 1,
            succeeded: -2,
            failed: 300,
            changed: true,
        };
        let now: GroupStatus = PodGroupStatus {
            group: (),
            phase: PodGroupPhase::Inqueue,
            conditions: vec![condition],
            running: 1,
            succeeded: -2,
            failed: 300,
            changed: true,
        };
        let old_bytes = postcard::to_stdvec(&former).unwrap();
        assert_eq!(postcard::to_stdvec(&now).unwrap(), old_bytes, "the same bytes on disk");
        assert_eq!(postcard::from_bytes::<GroupStatus>(&old_bytes).unwrap(), now, "an old recording reads");
        let mut diff = DecisionsDiff::default();
        diff.pod_groups.upsert.push((key("pg"), now));
        let back: DecisionsDiff = postcard::from_bytes(&postcard::to_stdvec(&diff).unwrap()).unwrap();
        assert_eq!(back, diff);
    }

    fn key(n: &str) -> ObjKey {
        ("ns".into(), n.into())
    }

    #[test]
    fn diff_then_apply_gives_the_new_decisions() {
        let mut a = NamedDecisions::default();
        a.unschedulable.insert(key("p1"), ("Unschedulable".into(), "0/1 nodes are unavailable".into()));
        a.unschedulable.insert(key("p2"), ("Unschedulable".into(), "x".into()));
        a.queues.insert("q".into(), [("cpu".to_string(), 1000)].into());
        let mut b = a.clone();
        b.binds.push((key("p1"), "n1".into()));
        b.unschedulable.remove(&key("p1"));
        b.unschedulable.insert(key("p2"), ("Unschedulable".into(), "y".into()));
        b.queues.insert("q".into(), [("cpu".to_string(), 2000)].into());
        let d = DecisionsDiff::between(&a, &b);
        assert_eq!(d.unschedulable.remove, vec![key("p1")]);
        assert_eq!(d.unschedulable.upsert.len(), 1, "only what changed is stored");
        assert_eq!(d.apply(&a), b);
        let mut c = b.clone();
        c.binds.clear();
        let quiet = DecisionsDiff::between(&b, &c);
        assert!(quiet.unschedulable.upsert.is_empty() && quiet.queues.upsert.is_empty() && quiet.binds.is_empty());
        assert_eq!(quiet.apply(&b), c, "binds are per cycle, never carried over");
    }

    /// Issue 22: a bind's volume bindings (a static PV for a claim, a claim to provision) are
    /// recorded with it, survive the on-disk encoding, and, like binds, belong to their cycle.
    #[test]
    fn volume_bindings_are_recorded_with_their_binds() {
        let a = NamedDecisions::default();
        let mut b = a.clone();
        b.binds.push((key("p1"), "n1".into()));
        b.volume_bindings.push(VolumeBinding {
            namespace: "ns".into(),
            pod: "p1".into(),
            node: "n1".into(),
            bind: vec![("data-p1".into(), "pv-local-n1".into())],
            provision: vec!["scratch-p1".into()],
        });
        let d = DecisionsDiff::between(&a, &b);
        let bytes = postcard::to_stdvec(&d).unwrap();
        let back: DecisionsDiff = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.apply(&a), b);
        let mut c = b.clone();
        c.binds.clear();
        c.volume_bindings.clear();
        assert_eq!(DecisionsDiff::between(&b, &c).apply(&b), c, "volume bindings are per cycle, never carried over");
    }
}
