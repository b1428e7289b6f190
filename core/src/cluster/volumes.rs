//! The cluster copy's storage objects: PersistentVolumeClaims, PersistentVolumes,
//! StorageClasses and CSINodes, kept as converted and read by the volume filters at session
//! open ([`crate::session::volumes`]). They are not laid out in session rows: a change to them
//! leaves the kept layout valid.

use crate::model::{CsiNodeSpec, PersistentVolumeClaimSpec, PersistentVolumeSpec, StorageClassSpec};
use std::collections::BTreeMap;

/// Storage objects by key, in key order (so every session reads them in one order).
#[derive(Clone, Debug, Default)]
pub struct VolumeStore {
    /// Claims by (namespace, name).
    pub claims: BTreeMap<(String, String), PersistentVolumeClaimSpec>,
    /// Volumes by name.
    pub volumes: BTreeMap<String, PersistentVolumeSpec>,
    /// StorageClasses by name.
    pub classes: BTreeMap<String, StorageClassSpec>,
    /// CSINodes by name (the node's name).
    pub csi_nodes: BTreeMap<String, CsiNodeSpec>,
}

impl VolumeStore {
    /// A claim by namespace and name.
    pub fn claim(&self, namespace: &str, name: &str) -> Option<&PersistentVolumeClaimSpec> {
        self.claims.get(&(namespace.to_string(), name.to_string()))
    }

    /// Whether the store holds no object at all (sessions then skip the volume tables).
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty() && self.volumes.is_empty() && self.classes.is_empty() && self.csi_nodes.is_empty()
    }
}
