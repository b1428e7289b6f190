//! Volumes on a generated cluster (issue 22), for the volume speed bench and the fast-path
//! differential tests: zone labels on the nodes and claims bound to PersistentVolumes on some of
//! the pending pods, the way cloud clusters use zonal disks (EBS, PD, Azure Disk: a PV labelled
//! `topology.kubernetes.io/zone`) and local NVMe PVs (a PV whose `nodeAffinity` names one
//! node). Same cluster and arguments ⇒ same objects.

use crate::cluster::{Cluster, Delta};
use crate::model::{
    AccessMode, ClaimRef, NodeSelectorTerm, PersistentVolumeClaimSpec, PersistentVolumeSpec, PodSpec, PodVolumeClaim,
    Requirement, SelectorOp, VolumePhase,
};

/// The zone label [`zonal`] sets on nodes and PVs (kube's `topology.kubernetes.io/zone`).
pub const ZONE: &str = "topology.kubernetes.io/zone";

/// Zones [`zonal`] labels nodes with (`z0`, `z1`, `z2`).
pub const ZONES: usize = 3;

/// What the claims of [`zonal`] are.
#[derive(Clone, Copy, Debug, Default)]
pub struct VolumeMix {
    /// Every `every`-th pending pod (in `namespace/name` order) gets a claim; 0: none.
    pub every: usize,
    /// Of those, every `local`-th pod's claim is bound to a local PV pinned to one node (by its
    /// hostname label) instead of a zonal disk; 0: none.
    pub local: usize,
    /// Of those, every `shared`-th pod mounts the claim of the previous claim-carrying pod
    /// instead of its own (a ReadWriteOnce claim two pods mount, which ties the second pod to
    /// the first one's node); 0: none.
    pub shared: usize,
}

/// Labels every node of `c` with one of [`ZONES`] zones (by node order, round robin) and gives
/// the pending pods `mix`'s claims, each bound (`volumeName` set, bind completed) to a 10 GiB
/// ReadWriteOnce PV in zone `i % 3` (the `i`-th claim-carrying pod), or to a local PV on node
/// `i·7919 mod nodes`. Applies the changes to `c`; every object is valid by construction.
pub fn zonal(c: &mut Cluster, mix: VolumeMix) {
    let nodes: Vec<_> = c.nodes().map(|(_, n)| n.spec.clone()).collect();
    let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    for (i, mut n) in nodes.into_iter().enumerate() {
        n.labels.insert(ZONE.into(), format!("z{}", i % ZONES));
        c.apply(Delta::Node(n)).expect("generated node is valid");
    }
    if mix.every == 0 || names.is_empty() {
        return;
    }
    let mut pods: Vec<PodSpec> = c.pods().filter(|(_, p)| p.spec.node_name.is_empty()).map(|(_, p)| p.spec.clone()).collect();
    pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let mut previous: Option<(String, String)> = None;
    for (i, mut p) in pods.into_iter().step_by(mix.every).enumerate() {
        let share = mix.shared > 0 && i % mix.shared == mix.shared - 1;
        let claim = match &previous {
            Some((ns, claim)) if share && *ns == p.namespace => claim.clone(),
            _ => {
                let claim = format!("data-{}", p.name);
                let pv = format!("disk-{}-{}", p.namespace, p.name);
                let local = mix.local > 0 && i % mix.local == 0;
                let (labels, node_affinity) = if local {
                    let node = &names[i * 7919 % names.len()];
                    let term = NodeSelectorTerm {
                        match_expressions: vec![Requirement {
                            key: "kubernetes.io/hostname".into(),
                            op: SelectorOp::In,
                            values: vec![node.clone()],
                        }],
                        match_fields: Vec::new(),
                    };
                    (Default::default(), Some(vec![term]))
                } else {
                    ([(ZONE.to_string(), format!("z{}", i % ZONES))].into(), None)
                };
                c.apply(Delta::PersistentVolume(PersistentVolumeSpec {
                    name: pv.clone(),
                    labels,
                    storage_class_name: "gp3".into(),
                    capacity_bytes: 10 << 30,
                    access_modes: vec![AccessMode::ReadWriteOnce],
                    node_affinity,
                    claim_ref: Some(ClaimRef { namespace: p.namespace.clone(), name: claim.clone(), uid: String::new() }),
                    phase: VolumePhase::Bound,
                    csi_driver: Some("ebs.csi.aws.com".into()),
                    ..Default::default()
                }))
                .expect("generated PV is valid");
                c.apply(Delta::PersistentVolumeClaim(PersistentVolumeClaimSpec {
                    namespace: p.namespace.clone(),
                    name: claim.clone(),
                    storage_class_name: Some("gp3".into()),
                    volume_name: pv,
                    bind_completed: true,
                    access_modes: vec![AccessMode::ReadWriteOnce],
                    request_bytes: 10 << 30,
                    ..Default::default()
                }))
                .expect("generated claim is valid");
                claim
            }
        };
        previous = Some((p.namespace.clone(), claim.clone()));
        p.volume_claims.push(PodVolumeClaim { volume: "data".into(), claim, ephemeral: false });
        c.apply(Delta::Pod(p)).expect("generated pod is valid");
    }
}
