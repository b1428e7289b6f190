//! The volume variant of the cycle benches (issue 22): the same seeded shape with zone labels
//! on every node (three zones, round robin), and with or without bound zonal claims on a
//! fraction of the pending pods (a PV labelled `topology.kubernetes.io/zone` per claim, as an
//! EBS/PD disk is).

use basalt_core::cluster::Cluster;
use basalt_core::model::{AccessMode, ClaimRef, PersistentVolumeClaimSpec, PersistentVolumeSpec, PodVolumeClaim, VolumePhase};
use basalt_core::Delta;

/// The zone label the variant sets.
pub const ZONE: &str = "topology.kubernetes.io/zone";

/// Labels every node of `c` with one of three zones (`z0`, `z1`, `z2`, by node order) and, when
/// `every` > 0, gives every `every`-th pending pod (in `namespace/name` order) a claim bound to
/// a 10 GiB CSI disk in zone `i % 3`.
pub fn zonal(c: &mut Cluster, every: usize) {
    let nodes: Vec<_> = c.nodes().map(|(_, n)| n.spec.clone()).collect();
    for (i, mut n) in nodes.into_iter().enumerate() {
        n.labels.insert(ZONE.into(), format!("z{}", i % 3));
        c.apply(Delta::Node(n)).expect("bench node is valid");
    }
    if every == 0 {
        return;
    }
    let pods: Vec<_> = c.pods().filter(|(_, p)| p.spec.node_name.is_empty()).map(|(_, p)| p.spec.clone()).collect();
    for (i, mut p) in pods.into_iter().enumerate().filter(|(i, _)| i % every == 0) {
        let claim = format!("data-{}", p.name);
        let pv = format!("disk-{}-{}", p.namespace, p.name);
        c.apply(Delta::PersistentVolume(PersistentVolumeSpec {
            name: pv.clone(),
            labels: [(ZONE.to_string(), format!("z{}", i % 3))].into(),
            storage_class_name: "gp3".into(),
            capacity_bytes: 10 << 30,
            access_modes: vec![AccessMode::ReadWriteOnce],
            claim_ref: Some(ClaimRef { namespace: p.namespace.clone(), name: claim.clone(), uid: String::new() }),
            phase: VolumePhase::Bound,
            csi_driver: Some("ebs.csi.aws.com".into()),
            ..Default::default()
        }))
        .expect("bench PV is valid");
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
        .expect("bench claim is valid");
        p.volume_claims.push(PodVolumeClaim { volume: "data".into(), claim, ephemeral: false });
        c.apply(Delta::Pod(p)).expect("bench pod is valid");
    }
}
