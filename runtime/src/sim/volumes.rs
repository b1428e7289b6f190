//! The simulator's PV controller: the part of the cluster that answers a bind decision's
//! volume bindings ([`basalt_core::model::VolumeBinding`]). A static PV chosen for a claim gets
//! the claim's `claimRef` and phase Bound, and the claim `spec.volumeName` and
//! `pv.kubernetes.io/bind-completed`; a claim to provision gets a new PV `pvc-<ns>-<claim>`
//! of its class and size, pinned to the chosen node's zone labels when the class names
//! `allowedTopologies`, or reachable from every node when not (as a zonal or network disk
//! would be). Done at once, within the cycle's deltas: the simulator's PV controller never
//! fails.

use basalt_core::cluster::{Cluster, Delta};
use basalt_core::model::{ClaimRef, NodeSelectorTerm, PersistentVolumeSpec, Requirement, SelectorOp, VolumeBinding, VolumePhase};

/// The PV and PVC changes that bind the claims of `bindings`, in order.
pub fn bind_volumes(cluster: &Cluster, bindings: &[VolumeBinding]) -> Vec<Delta> {
    let store = cluster.volumes();
    let mut out = Vec::new();
    for b in bindings {
        for (claim, pv_name) in &b.bind {
            let (Some(c), Some(pv)) = (store.claim(&b.namespace, claim), store.volumes.get(pv_name)) else { continue };
            let mut pv = pv.clone();
            pv.claim_ref = Some(ClaimRef { namespace: c.namespace.clone(), name: c.name.clone(), uid: c.uid.clone() });
            pv.phase = VolumePhase::Bound;
            let mut c = c.clone();
            c.volume_name = pv.name.clone();
            c.bind_completed = true;
            out.push(Delta::PersistentVolume(pv));
            out.push(Delta::PersistentVolumeClaim(c));
        }
        for claim in &b.provision {
            let Some(c) = store.claim(&b.namespace, claim) else { continue };
            let class = c.storage_class_name.clone().unwrap_or_default();
            let node = cluster.node_id(&b.node).and_then(|id| cluster.node(id));
            let node_affinity = store.classes.get(&class).filter(|sc| !sc.allowed_topologies.is_empty()).and_then(|sc| {
                let keys: Vec<&String> = sc.allowed_topologies.iter().flatten().map(|r| &r.key).collect();
                let labels = &node?.spec.labels;
                let reqs: Vec<Requirement> = keys
                    .into_iter()
                    .filter_map(|k| {
                        labels.get(k).map(|v| Requirement { key: k.clone(), op: SelectorOp::In, values: vec![v.clone()] })
                    })
                    .collect();
                (!reqs.is_empty()).then(|| vec![NodeSelectorTerm { match_expressions: reqs, match_fields: vec![] }])
            });
            let name = format!("pvc-{}-{}", c.namespace, c.name);
            let pv = PersistentVolumeSpec {
                name: name.clone(),
                storage_class_name: class,
                capacity_bytes: c.request_bytes,
                access_modes: c.access_modes.clone(),
                block: c.block,
                node_affinity,
                claim_ref: Some(ClaimRef { namespace: c.namespace.clone(), name: c.name.clone(), uid: c.uid.clone() }),
                phase: VolumePhase::Bound,
                ..Default::default()
            };
            let mut c = c.clone();
            c.selected_node = b.node.clone();
            c.volume_name = name;
            c.bind_completed = true;
            out.push(Delta::PersistentVolume(pv));
            out.push(Delta::PersistentVolumeClaim(c));
        }
    }
    out
}
