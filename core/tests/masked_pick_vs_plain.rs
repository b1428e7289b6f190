//! The class path's masked pick (pods with bound claims keep their template's class and pick
//! inside their PVs' node mask: under full scans through the maximum and its holders kept per
//! class and mask, `basalt_core::kernels::masked_max`; under sampling by reading the mask's
//! leaves) against the plain scan, on generated clusters whose PVs restrict pods to
//! overlapping sets of racks as well as to zones and single nodes: many distinct masks per
//! class (more than a class keeps maxima for, so they are recycled), masks of every size
//! (below and above the size that gets a kept maximum), with full scans and Volcano's node
//! sampling, with room and scarce, with classes recycled. Decisions must be identical, binds
//! and tie-breaks included, and every pod with a rack claim must land inside its PV's racks.

use basalt_core::cluster::{Cluster, Delta};
use basalt_core::conf::SchedulerConf;
use basalt_core::model::{
    AccessMode, ClaimRef, NodeSelectorTerm, PersistentVolumeClaimSpec, PersistentVolumeSpec, PodSpec, PodVolumeClaim,
    Requirement, SelectorOp, VolumePhase,
};
use basalt_core::rng::SeededRng;
use basalt_core::workload::{generate, Variant, WorkloadSpec};
use basalt_core::workload_volumes::{zonal, VolumeMix};
use basalt_core::{run_cycle, CycleOptions};
use std::collections::BTreeSet;

const RACK: &str = "example.com/rack";
const RACKS: usize = 12;

/// A pod given a rack PV: its (namespace, name) and the racks its PV admits.
type RackClaim = ((String, String), BTreeSet<String>);

/// The cluster of `spec` with zone labels (`zonal`'s, with `mix`'s zonal and local claims),
/// every node labelled with rack `i % RACKS` or, for half the racks, in blocks of nodes, and
/// every `every`-th pending pod without a claim given one bound to a PV whose node affinity
/// admits a random set of 1 to 6 racks. Returns the cluster and each rack-PV pod's
/// (namespace, name) with its allowed racks.
fn racked(spec: &WorkloadSpec, mix: VolumeMix, every: usize) -> (Cluster, Vec<RackClaim>) {
    let mut c = Cluster::new();
    for d in generate(spec) {
        c.apply(d).expect("generated objects are valid");
    }
    zonal(&mut c, mix);
    let nodes: Vec<_> = c.nodes().map(|(_, n)| n.spec.clone()).collect();
    let block = nodes.len().div_ceil(RACKS).max(1);
    for (i, mut n) in nodes.into_iter().enumerate() {
        let rack = if i % 2 == 0 { i % RACKS } else { (i / block) % RACKS };
        n.labels.insert(RACK.into(), format!("r{rack}"));
        c.apply(Delta::Node(n)).expect("labelled node is valid");
    }
    let mut pods: Vec<PodSpec> = c
        .pods()
        .filter(|(_, p)| p.spec.node_name.is_empty() && p.spec.volume_claims.is_empty())
        .map(|(_, p)| p.spec.clone())
        .collect();
    pods.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let mut rng = SeededRng::new(spec.seed ^ 0x5eed);
    let mut allowed = Vec::new();
    for mut p in pods.into_iter().step_by(every) {
        let want = 1 + rng.below(6);
        let racks: BTreeSet<String> = (0..want).map(|_| format!("r{}", rng.below(RACKS))).collect();
        let (claim, pv) = (format!("rack-{}", p.name), format!("rack-disk-{}-{}", p.namespace, p.name));
        c.apply(Delta::PersistentVolume(PersistentVolumeSpec {
            name: pv.clone(),
            storage_class_name: "local".into(),
            capacity_bytes: 1 << 30,
            access_modes: vec![AccessMode::ReadWriteOnce],
            node_affinity: Some(vec![NodeSelectorTerm {
                match_expressions: vec![Requirement {
                    key: RACK.into(),
                    op: SelectorOp::In,
                    values: racks.iter().cloned().collect(),
                }],
                match_fields: Vec::new(),
            }]),
            claim_ref: Some(ClaimRef { namespace: p.namespace.clone(), name: claim.clone(), uid: String::new() }),
            phase: VolumePhase::Bound,
            ..Default::default()
        }))
        .expect("rack PV is valid");
        c.apply(Delta::PersistentVolumeClaim(PersistentVolumeClaimSpec {
            namespace: p.namespace.clone(),
            name: claim.clone(),
            storage_class_name: Some("local".into()),
            volume_name: pv,
            bind_completed: true,
            access_modes: vec![AccessMode::ReadWriteOnce],
            request_bytes: 1 << 30,
            ..Default::default()
        }))
        .expect("rack claim is valid");
        p.volume_claims.push(PodVolumeClaim { volume: "scratch".into(), claim, ephemeral: false });
        allowed.push(((p.namespace.clone(), p.name.clone()), racks));
        c.apply(Delta::Pod(p)).expect("pod with a claim is valid");
    }
    (c, allowed)
}

fn sampled(conf: &SchedulerConf, percentage: i32, min_nodes: i32) -> SchedulerConf {
    let mut c = conf.clone();
    c.options.percentage_nodes_to_find = percentage;
    c.options.minimum_feasible_nodes = min_nodes;
    c
}

/// Rack and zone PVs with overlapping, varied node masks: the class path (masked trees, and
/// the mask scan for masks too small for a tree) decides exactly what the plain scan decides.
#[test]
fn masked_picks_agree_with_the_plain_scan_on_overlapping_pv_masks() {
    let default = SchedulerConf::default();
    let mut few_classes = default.clone();
    few_classes.options.class_limit = Some(2);
    let confs = [default.clone(), sampled(&default, 0, 10), sampled(&default, 7, 3), few_classes];
    let shapes = [
        (Variant::Identical, 420, 2100, 31, 2),
        (Variant::Identical, 300, 9000, 32, 3),
        (Variant::Selectors, 300, 6000, 33, 2),
        (Variant::AntiAffinity, 360, 1800, 34, 3),
    ];
    let mix = VolumeMix { every: 7, local: 4, shared: 0 };
    for (variant, nodes, pods, seed, every) in shapes {
        let spec = WorkloadSpec { nodes, pods, gang: 10, queues: 3, variant, seed };
        let (c, allowed) = racked(&spec, mix, every);
        for (i, conf) in confs.iter().enumerate() {
            let mut fast = conf.clone();
            fast.options.class_cache = true;
            let mut plain = conf.clone();
            plain.options.class_cache = false;
            let opts = CycleOptions { seed, cycle: 1, now_ms: 0 };
            let (a, b) = (run_cycle(&c, &fast, &opts), run_cycle(&c, &plain, &opts));
            assert_eq!(a, b, "{variant:?} {nodes} nodes {pods} pods, conf {i}: class path and plain scan differ");
            let mut rack_binds = 0;
            for bind in &a.binds {
                let pod = &c.pod(bind.pod).expect("bound pod").spec;
                let Some((_, racks)) = allowed.iter().find(|((ns, name), _)| *ns == pod.namespace && *name == pod.name) else {
                    continue;
                };
                let node = &c.node(bind.node).expect("bound node").spec;
                let rack = node.labels.get(RACK).expect("every node has a rack");
                assert!(racks.contains(rack), "{}: bound in {rack}, outside its PV's racks {racks:?}", pod.name);
                rack_binds += 1;
            }
            assert!(rack_binds > 0, "{variant:?} {nodes}/{pods}, conf {i}: no pod with a rack claim bound");
        }
    }
}
