//! PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes → the core's storage
//! model ([`basalt_core::model::PersistentVolumeClaimSpec`] and siblings), and the claims a
//! pod's volumes name. Quantities in bytes; unknown access modes, volume modes and binding
//! modes are refused with the field named, as the API server's validation would.

use super::affinity::{label_selector, node_selector_term};
use super::quantity::to_units;
use super::{namespace, required_name, ConvertError, ObjRef};
use basalt_core::model::{
    AccessMode, ClaimRef, CsiNodeSpec, PersistentVolumeClaimSpec, PersistentVolumeSpec, PodVolumeClaim, Requirement, SelectorOp,
    StorageClassSpec, VolumeBindingMode, VolumePhase, BIND_COMPLETED_ANNOTATION, SELECTED_NODE_ANNOTATION,
};
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::storage::v1 as storage;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use std::collections::BTreeMap;

fn access_modes(obj: ObjRef<'_>, field: &str, modes: &Option<Vec<String>>) -> Result<Vec<AccessMode>, ConvertError> {
    modes
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, m)| {
            AccessMode::parse(m).ok_or_else(|| obj.error(format!("{field}[{i}]"), format!("unknown access mode {m:?}")))
        })
        .collect()
}

fn volume_mode(obj: ObjRef<'_>, field: &str, m: &Option<String>) -> Result<bool, ConvertError> {
    match m.as_deref() {
        None | Some("Filesystem") => Ok(false),
        Some("Block") => Ok(true),
        Some(other) => Err(obj.error(field, format!("unknown volume mode {other:?}"))),
    }
}

fn storage_bytes(obj: ObjRef<'_>, field: &str, l: Option<&BTreeMap<String, Quantity>>) -> Result<i64, ConvertError> {
    match l.and_then(|l| l.get("storage")) {
        None => Ok(0),
        Some(q) => to_units(&q.0).map_err(|e| obj.error(field, e.to_string())),
    }
}

/// Converts a `v1.PersistentVolumeClaim`.
///
/// Errors: a missing name, an unknown access or volume mode, a storage request that is not a
/// quantity, an invalid `spec.selector`.
pub fn convert_persistent_volume_claim(c: &k8s::PersistentVolumeClaim) -> Result<PersistentVolumeClaimSpec, ConvertError> {
    let meta = &c.metadata;
    let name = required_name("PersistentVolumeClaim", meta)?;
    let ns = namespace(meta);
    let key = format!("{ns}/{name}");
    let obj = ObjRef { kind: "PersistentVolumeClaim", name: &key };
    let spec = c.spec.clone().unwrap_or_default();
    let annotations = meta.annotations.clone().unwrap_or_default();
    Ok(PersistentVolumeClaimSpec {
        uid: meta.uid.clone().unwrap_or_default(),
        deleting: meta.deletion_timestamp.is_some(),
        storage_class_name: spec.storage_class_name.clone(),
        volume_name: spec.volume_name.clone().unwrap_or_default(),
        bind_completed: annotations.contains_key(BIND_COMPLETED_ANNOTATION),
        selected_node: annotations.get(SELECTED_NODE_ANNOTATION).cloned().unwrap_or_default(),
        access_modes: access_modes(obj, "spec.accessModes", &spec.access_modes)?,
        request_bytes: storage_bytes(
            obj,
            "spec.resources.requests.storage",
            spec.resources.as_ref().and_then(|r| r.requests.as_ref()),
        )?,
        block: volume_mode(obj, "spec.volumeMode", &spec.volume_mode)?,
        selector: spec.selector.as_ref().map(|s| label_selector(obj, "spec.selector", s)).transpose()?,
        namespace: ns,
        name,
    })
}

/// Converts a `v1.PersistentVolume`.
///
/// Errors: a missing name, an unknown access or volume mode or phase, a capacity that is not a
/// quantity, an invalid `spec.nodeAffinity`.
pub fn convert_persistent_volume(v: &k8s::PersistentVolume) -> Result<PersistentVolumeSpec, ConvertError> {
    let meta = &v.metadata;
    let name = required_name("PersistentVolume", meta)?;
    let obj = ObjRef { kind: "PersistentVolume", name: &name };
    let spec = v.spec.clone().unwrap_or_default();
    let node_affinity = match spec.node_affinity.as_ref().and_then(|a| a.required.as_ref()) {
        None => None,
        Some(ns) => Some(
            ns.node_selector_terms
                .iter()
                .enumerate()
                .map(|(i, t)| node_selector_term(obj, &format!("spec.nodeAffinity.required.nodeSelectorTerms[{i}]"), t))
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let phase = match v.status.as_ref().and_then(|s| s.phase.as_deref()) {
        None | Some("") | Some("Available") => VolumePhase::Available,
        Some("Pending") => VolumePhase::Pending,
        Some("Bound") => VolumePhase::Bound,
        Some("Released") => VolumePhase::Released,
        Some("Failed") => VolumePhase::Failed,
        Some(other) => return Err(obj.error("status.phase", format!("unknown phase {other:?}"))),
    };
    Ok(PersistentVolumeSpec {
        labels: meta.labels.clone().unwrap_or_default().into(),
        deleting: meta.deletion_timestamp.is_some(),
        storage_class_name: spec.storage_class_name.clone().unwrap_or_default(),
        capacity_bytes: storage_bytes(obj, "spec.capacity.storage", spec.capacity.as_ref())?,
        access_modes: access_modes(obj, "spec.accessModes", &spec.access_modes)?,
        block: volume_mode(obj, "spec.volumeMode", &spec.volume_mode)?,
        node_affinity,
        claim_ref: spec.claim_ref.as_ref().map(|r| ClaimRef {
            namespace: r.namespace.clone().unwrap_or_default(),
            name: r.name.clone().unwrap_or_default(),
            uid: r.uid.clone().unwrap_or_default(),
        }),
        phase,
        csi_driver: spec.csi.as_ref().map(|c| c.driver.clone()),
        name,
    })
}

/// Converts a `storage.k8s.io/v1` StorageClass.
///
/// Errors: a missing name, an unknown `volumeBindingMode`.
pub fn convert_storage_class(c: &storage::StorageClass) -> Result<StorageClassSpec, ConvertError> {
    let name = required_name("StorageClass", &c.metadata)?;
    let obj = ObjRef { kind: "StorageClass", name: &name };
    let binding_mode = match c.volume_binding_mode.as_deref() {
        None => None,
        Some("Immediate") => Some(VolumeBindingMode::Immediate),
        Some("WaitForFirstConsumer") => Some(VolumeBindingMode::WaitForFirstConsumer),
        Some(other) => return Err(obj.error("volumeBindingMode", format!("unknown binding mode {other:?}"))),
    };
    let allowed_topologies = c
        .allowed_topologies
        .iter()
        .flatten()
        .map(|t| {
            t.match_label_expressions
                .iter()
                .flatten()
                .map(|r| Requirement { key: r.key.clone(), op: SelectorOp::In, values: r.values.clone() })
                .collect()
        })
        .collect();
    Ok(StorageClassSpec { provisioner: c.provisioner.clone(), binding_mode, allowed_topologies, name })
}

/// Converts a `storage.k8s.io/v1` CSINode.
///
/// Errors: a missing name.
pub fn convert_csi_node(n: &storage::CSINode) -> Result<CsiNodeSpec, ConvertError> {
    let name = required_name("CSINode", &n.metadata)?;
    let drivers = n.spec.drivers.iter().map(|d| (d.name.clone(), d.allocatable.as_ref().and_then(|a| a.count))).collect();
    Ok(CsiNodeSpec { name, drivers })
}

/// The claims a pod's volumes name: `persistentVolumeClaim.claimName`, and for an `ephemeral`
/// volume the claim `<pod>-<volume>` its controller creates.
pub fn pod_volume_claims(pod_name: &str, spec: &k8s::PodSpec) -> Vec<PodVolumeClaim> {
    spec.volumes
        .iter()
        .flatten()
        .filter_map(|v| {
            if let Some(c) = &v.persistent_volume_claim {
                Some(PodVolumeClaim { volume: v.name.clone(), claim: c.claim_name.clone(), ephemeral: false })
            } else {
                v.ephemeral.as_ref().map(|_| PodVolumeClaim {
                    volume: v.name.clone(),
                    claim: format!("{pod_name}-{}", v.name),
                    ephemeral: true,
                })
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml<T: serde::de::DeserializeOwned>(s: &str) -> T {
        serde_yaml::from_str(s).expect("test object parses")
    }

    #[test]
    fn claim_fields_and_bound_state() {
        let c: k8s::PersistentVolumeClaim = yaml(
            "metadata: {name: data, namespace: ns, annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n\
             spec: {storageClassName: local, volumeName: pv1, accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}",
        );
        let got = convert_persistent_volume_claim(&c).unwrap();
        assert_eq!(got.request_bytes, 10 << 30);
        assert_eq!(got.storage_class_name.as_deref(), Some("local"));
        assert!(got.fully_bound());
        let bad: k8s::PersistentVolumeClaim = yaml("metadata: {name: d, namespace: ns}\nspec: {accessModes: [WriteSometimes]}");
        let e = convert_persistent_volume_claim(&bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            "PersistentVolumeClaim ns/d: field spec.accessModes[0]: unknown access mode \"WriteSometimes\""
        );
    }

    #[test]
    fn volume_affinity_csi_and_class_topologies() {
        let v: k8s::PersistentVolume = yaml(
            "metadata: {name: pv1, labels: {topology.kubernetes.io/zone: a}}\n\
             spec:\n  capacity: {storage: 1Gi}\n  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]",
        );
        let got = convert_persistent_volume(&v).unwrap();
        assert_eq!(got.capacity_bytes, 1 << 30);
        assert_eq!(got.csi_driver.as_deref(), Some("ebs.csi.aws.com"));
        assert_eq!(got.node_affinity.as_ref().map(|t| t.len()), Some(1));
        assert_eq!(got.phase, VolumePhase::Available);
        let sc: storage::StorageClass = yaml(
            "metadata: {name: zonal}\nprovisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\n\
             allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [a, b]}]}]",
        );
        let got = convert_storage_class(&sc).unwrap();
        assert_eq!(got.binding_mode, Some(VolumeBindingMode::WaitForFirstConsumer));
        assert_eq!(got.allowed_topologies[0][0].values, vec!["a".to_string(), "b".to_string()]);
        let bad: storage::StorageClass = yaml("metadata: {name: x}\nprovisioner: p\nvolumeBindingMode: Later");
        assert_eq!(convert_storage_class(&bad).unwrap_err().field, "volumeBindingMode");
    }

    #[test]
    fn pod_claims_include_ephemeral_volumes() {
        let spec: k8s::PodSpec = yaml(
            "containers: []\nvolumes:\n- {name: data, persistentVolumeClaim: {claimName: c1}}\n- {name: cache, ephemeral: {volumeClaimTemplate: {spec: {}}}}\n- {name: tmp, emptyDir: {}}",
        );
        let got = pod_volume_claims("p", &spec);
        assert_eq!(got.iter().map(|c| c.claim.as_str()).collect::<Vec<_>>(), vec!["c1", "p-cache"]);
    }
}
