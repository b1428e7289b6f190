//! The CPUs the `numa-aware` plugin gave pods it bound, kept per node across cycles until the
//! resource exporter reports them (Volcano `NodeInfo.UnassignedNumaPods`,
//! `SchedulerCache.AddUnassignedNumaPods`, `NodeInfo.RefreshNumaSchedulerInfoByCrd`,
//! `clearUnassignedNumaTask`; volcano-behaviour.md §3 numaaware).
//!
//! Volcano's rules, kept here:
//! - a pod the plugin bound is added with its CPUs on its node
//!   ([`super::Delta::PodNumaAssumed`], applied by the driver after the cycle);
//! - while any pod of a node is not yet listed in the node's Numatopology
//!   (`spec.podAllocations`, by UID or namespace/name), every kept pod of that node keeps its
//!   CPUs out of the plugin's free CPUs ("volcano's allocation decision may differ from
//!   kubelet's"); once all are listed, the node's pods are dropped together;
//! - a deleted pod is dropped (Volcano's `DeletePod` → `clearUnassignedNumaPod`), and so is a
//!   node's whole list when the node is deleted.
//!
//! Basalt also drops a pod that ended (`Succeeded`/`Failed`: the kubelet's CPU manager has
//! given its CPUs back), that was recreated under the same name (another UID), or that is no
//! longer on the node (a failed bind returned it to pending): Volcano keeps those until the
//! pod object is deleted.

use crate::model::{NumaAssumed, NumatopologySpec, PodPhase, PodSpec};
use std::collections::BTreeMap;

/// One kept pod: its UID (matched against `spec.podAllocations`) and CPU ids.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Kept {
    uid: String,
    cpus: Vec<u32>,
}

/// The kept pods, by node and by pod.
#[derive(Clone, Debug, Default)]
pub struct NumaAssumedStore {
    /// Node name → `(namespace, name)` → what it holds.
    by_node: BTreeMap<String, BTreeMap<(String, String), Kept>>,
    /// `(namespace, name)` → its node.
    node_of: BTreeMap<(String, String), String>,
}

impl NumaAssumedStore {
    /// Whether no pod is kept.
    pub fn is_empty(&self) -> bool {
        self.node_of.is_empty()
    }

    /// Keeps `a` for pod `pod` (its UID read from the cluster), replacing what the pod held on
    /// any node; an empty `a.cpus` only removes. Then drops the node's pods if the node's
    /// Numatopology `topo` lists them all.
    pub fn insert(&mut self, a: NumaAssumed, uid: &str, topo: Option<&NumatopologySpec>) {
        let key = (a.namespace, a.name);
        self.remove(&key);
        if a.cpus.is_empty() {
            return;
        }
        self.node_of.insert(key.clone(), a.node.clone());
        self.by_node.entry(a.node.clone()).or_default().insert(key, Kept { uid: uid.to_string(), cpus: a.cpus });
        self.settle(&a.node, topo);
    }

    /// Removes pod `key`; returns the node it was kept on.
    fn remove(&mut self, key: &(String, String)) -> Option<String> {
        let node = self.node_of.remove(key)?;
        if let Some(m) = self.by_node.get_mut(&node) {
            m.remove(key);
            if m.is_empty() {
                self.by_node.remove(&node);
            }
        }
        Some(node)
    }

    /// The node pod `namespace/name` is kept on, if any.
    pub fn node_of(&self, namespace: &str, name: &str) -> Option<&str> {
        self.node_of.get(&(namespace.to_string(), name.to_string())).map(String::as_str)
    }

    /// A pod was deleted: drops it, then settles its node with `topo` (a function giving a
    /// node's Numatopology).
    pub fn pod_deleted<'t>(&mut self, namespace: &str, name: &str, topo: impl Fn(&str) -> Option<&'t NumatopologySpec>) {
        let key = (namespace.to_string(), name.to_string());
        if let Some(node) = self.remove(&key) {
            self.settle(&node, topo(&node));
        }
    }

    /// A pod was added or changed: drops it when it ended, was recreated (another UID) or is
    /// no longer on the node it was kept on.
    pub fn pod_changed<'t>(&mut self, p: &PodSpec, topo: impl Fn(&str) -> Option<&'t NumatopologySpec>) {
        let key = (p.namespace.clone(), p.name.clone());
        let Some(node) = self.node_of.get(&key) else { return };
        let Some(kept) = self.by_node.get(node).and_then(|m| m.get(&key)) else { return };
        let ended = matches!(p.phase, PodPhase::Succeeded | PodPhase::Failed);
        if ended || kept.uid != p.uid || p.node_name != *node {
            let node = node.clone();
            self.remove(&key);
            self.settle(&node, topo(&node));
        }
    }

    /// A node was deleted: its kept pods go with it.
    pub fn node_deleted(&mut self, node: &str) {
        if let Some(m) = self.by_node.remove(node) {
            for k in m.keys() {
                self.node_of.remove(k);
            }
        }
    }

    /// Volcano `RefreshNumaSchedulerInfoByCrd`'s clearing: when `topo` (node `node`'s
    /// Numatopology) lists every pod kept on the node, they are all dropped.
    pub fn settle(&mut self, node: &str, topo: Option<&NumatopologySpec>) {
        let Some(m) = self.by_node.get(node) else { return };
        let Some(t) = topo else { return };
        if m.iter().all(|((ns, name), k)| t.lists_pod(&k.uid, ns, name)) {
            self.node_deleted(node);
        }
    }

    /// The CPU ids node `node`'s kept pods hold (each id once, ascending): what the plugin takes
    /// from the node's free CPUs. Empty when none is kept, or when `topo` lists them all.
    pub fn pre_occupied(&self, node: &str, topo: Option<&NumatopologySpec>) -> Vec<u32> {
        let Some(m) = self.by_node.get(node) else { return Vec::new() };
        if topo.is_some_and(|t| m.iter().all(|((ns, name), k)| t.lists_pod(&k.uid, ns, name))) {
            return Vec::new();
        }
        let mut v: Vec<u32> = m.values().flat_map(|k| k.cpus.iter().copied()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Every kept pod as the delta that keeps it, by node then `namespace/name`.
    pub fn all(&self) -> impl Iterator<Item = NumaAssumed> + '_ {
        self.by_node.iter().flat_map(|(node, m)| {
            m.iter().map(move |((ns, name), k)| NumaAssumed {
                namespace: ns.clone(),
                name: name.clone(),
                node: node.clone(),
                cpus: k.cpus.clone(),
            })
        })
    }
}
