//! The optimised allocate path (per-class incremental node choice over wide max-trees) against
//! the plain reference scan (every node's predicates and scores per task), on generated
//! clusters big enough for three-level trees, with and without scarcity, for every workload
//! variant and two scoring confs, with full scans and with Volcano's node sampling (the class
//! path's window from the rotating start). Decisions must be identical, binds and tie-breaks
//! included.

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_core::workload::{generate, Variant, WorkloadSpec};
use basalt_core::{run_cycle, CycleOptions};

const CONF_BINPACK: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments:
      mostrequested.weight: 2
  - name: binpack
"#;

/// Volcano's default conf with VolumeZone off: the class masks hold the bound PVs' node
/// affinity only.
const CONF_NO_VOLUME_ZONE: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
    arguments:
      predicate.VolumeZoneEnable: false
  - name: proportion
  - name: nodeorder
"#;

fn cluster(spec: &WorkloadSpec) -> Cluster {
    let mut c = Cluster::new();
    for d in generate(spec) {
        c.apply(d).expect("generated objects are valid");
    }
    c
}

/// The conf with Volcano's node sampling: `percentage` of the nodes (0 = adaptive,
/// max(50 − N/125, 5) %), every node below `min_nodes` nodes.
fn sampled(conf: &SchedulerConf, percentage: i32, min_nodes: i32) -> SchedulerConf {
    let mut c = conf.clone();
    c.options.percentage_nodes_to_find = percentage;
    c.options.minimum_feasible_nodes = min_nodes;
    c
}

fn compare(variant: Variant, nodes: usize, pods: usize, conf: &SchedulerConf, seed: u64) {
    let spec = WorkloadSpec { nodes, pods, gang: 10, queues: 3, variant, seed };
    let c = cluster(&spec);
    let mut fast = conf.clone();
    fast.options.class_cache = true;
    let mut plain = conf.clone();
    plain.options.class_cache = false;
    let opts = CycleOptions { seed, cycle: 1, now_ms: 0 };
    let (a, b) = (run_cycle(&c, &fast, &opts), run_cycle(&c, &plain, &opts));
    assert!(!a.binds.is_empty(), "{variant:?} {nodes}/{pods}: nothing bound, the comparison would be empty");
    assert_eq!(a, b, "{variant:?} {nodes} nodes {pods} pods seed {seed}: class path and plain scan differ");
}

#[test]
fn optimised_and_plain_allocate_agree_with_room() {
    let conf = SchedulerConf::default();
    for v in [Variant::Identical, Variant::Selectors, Variant::Taints, Variant::Distinct] {
        compare(v, 300, 1500, &conf, 11);
    }
}

#[test]
fn optimised_and_plain_allocate_agree_when_scarce() {
    // 30 pods of 0.5–2 cores per 32-core node: the cluster runs out, later gangs are discarded.
    let conf = SchedulerConf::default();
    for v in [Variant::Identical, Variant::Selectors, Variant::Taints] {
        compare(v, 280, 8400, &conf, 5);
    }
}

#[test]
fn optimised_and_plain_allocate_agree_with_binpack_and_mostrequested() {
    let conf = SchedulerConf::parse(CONF_BINPACK).expect("conf parses").0;
    for (v, pods) in [(Variant::Identical, 1500), (Variant::Identical, 8400), (Variant::Selectors, 8400)] {
        compare(v, 280, pods, &conf, 3);
    }
}

/// With room for only 3 classes, the 144 selector × request classes keep evicting each other:
/// recycled classes must be rebuilt from scratch.
#[test]
fn optimised_and_plain_allocate_agree_when_classes_are_recycled() {
    let mut conf = SchedulerConf::default();
    conf.options.class_limit = Some(3);
    compare(Variant::Selectors, 200, 4000, &conf, 8);
    compare(Variant::Identical, 200, 6400, &conf, 8);
}

#[test]
fn optimised_and_plain_allocate_agree_with_required_anti_affinity() {
    let conf = SchedulerConf::default();
    compare(Variant::AntiAffinity, 150, 1500, &conf, 9);
    // Scarce: 12 pods per job-free node slot run out, the later gangs cannot place.
    compare(Variant::AntiAffinity, 40, 800, &conf, 9);
}

/// Inter-pod terms of every kind the index treats differently: matchLabels (indexed),
/// `In` with two values and `Exists` (scanned), an empty selector (matches every pod),
/// namespaces from a selector, preferred and required, affinity and anti-affinity.
#[test]
fn optimised_and_plain_allocate_agree_with_mixed_inter_pod_terms() {
    use basalt_core::model::{LabelSelector, PodAffinityTerm, Requirement, SelectorOp, WeightedPodAffinityTerm};
    use basalt_core::Delta;
    let spec = WorkloadSpec { nodes: 120, pods: 1200, gang: 10, queues: 2, variant: Variant::Identical, seed: 4 };
    let mut c = Cluster::new();
    for d in generate(&spec) {
        let d = match d {
            Delta::Pod(mut p) => {
                let job: usize = p.name[4..10].parse().expect("job-NNNNNN-i");
                let own = LabelSelector { match_labels: p.labels.clone(), ..Default::default() };
                let term = |sel: LabelSelector, key: &str| PodAffinityTerm {
                    label_selector: Some(sel),
                    topology_key: key.into(),
                    ..Default::default()
                };
                let two = LabelSelector {
                    match_expressions: vec![Requirement {
                        key: "job".into(),
                        op: SelectorOp::In,
                        values: vec![format!("job-{:06}", job.saturating_sub(1)), format!("job-{:06}", job.saturating_sub(2))],
                    }],
                    ..Default::default()
                };
                let exists = LabelSelector {
                    match_expressions: vec![Requirement { key: "job".into(), op: SelectorOp::Exists, values: vec![] }],
                    ..Default::default()
                };
                match job % 5 {
                    0 => p
                        .affinity
                        .pod_preferred
                        .push(WeightedPodAffinityTerm { weight: 10, term: term(own, "kubernetes.io/hostname") }),
                    1 => p.affinity.anti_preferred.push(WeightedPodAffinityTerm { weight: 7, term: term(two, "group") }),
                    2 => {
                        let mut t = term(exists, "group");
                        t.namespace_selector = Some(LabelSelector::default());
                        p.affinity.anti_preferred.push(WeightedPodAffinityTerm { weight: 3, term: t });
                    }
                    3 => p.affinity.pod_required.push(term(own, "group")),
                    _ => p.affinity.pod_preferred.push(WeightedPodAffinityTerm {
                        weight: 5,
                        term: term(LabelSelector::default(), "kubernetes.io/hostname"),
                    }),
                }
                Delta::Pod(p)
            }
            d => d,
        };
        c.apply(d).expect("objects are valid");
    }
    let mut fast = SchedulerConf::default();
    fast.options.class_cache = true;
    let mut plain = fast.clone();
    plain.options.class_cache = false;
    let opts = CycleOptions { seed: 4, cycle: 1, now_ms: 0 };
    let (a, b) = (run_cycle(&c, &fast, &opts), run_cycle(&c, &plain, &opts));
    assert!(a.binds.len() > 100, "only {} binds", a.binds.len());
    assert_eq!(a, b, "mixed inter-pod terms: indexed and plain differ");
}

/// Node sampling: the plain scan stops at the `numNodesToFind`-th feasible node from a start
/// that rotates task by task; the class path answers from the same window. Adaptive (42–48 %
/// here, `minimum-feasible-nodes` lowered so the clusters are sampled at all), a small fixed
/// percentage (the window wraps past the last node often) and a minimum of 0 (the scan stops
/// at the first feasible node); with room, when scarce (windows reach past infeasible nodes and
/// whole scans happen when fewer nodes fit than wanted), with selectors and taints (many
/// infeasible nodes inside a window), anti-affinity masks, and binpack.
#[test]
fn optimised_and_plain_allocate_agree_under_node_sampling() {
    let default = SchedulerConf::default();
    let binpack = SchedulerConf::parse(CONF_BINPACK).expect("conf parses").0;
    for (pct, min) in [(0, 10), (3, 2), (0, 0)] {
        let conf = sampled(&default, pct, min);
        for v in [Variant::Identical, Variant::Selectors, Variant::Taints] {
            compare(v, 300, 1500, &conf, 13);
        }
        compare(Variant::Identical, 280, 8400, &conf, 5);
        compare(Variant::Selectors, 280, 8400, &conf, 6);
        compare(Variant::AntiAffinity, 150, 1500, &conf, 9);
        compare(Variant::Identical, 280, 8400, &sampled(&binpack, pct, min), 3);
    }
}

/// Pods with bound claims (issue 22): zonal disks and local PVs restrict a pod to the nodes
/// of its class mask (the pod shares the class of its template and picks inside the mask); a
/// ReadWriteOnce claim two pods mount sends the second to the plain scan. With room and when
/// scarce, full scans and sampling, node selectors and anti-affinity masks on top, VolumeZone
/// on and off, the class path decides what the plain scan decides, and every bound pod with a
/// claim lands where its PV is.
#[test]
fn optimised_and_plain_allocate_agree_with_bound_claims() {
    use basalt_core::workload_volumes::{zonal, VolumeMix, ZONE, ZONES};
    let mix = VolumeMix { every: 3, local: 5, shared: 4 };
    let default = SchedulerConf::default();
    let no_zone = SchedulerConf::parse(CONF_NO_VOLUME_ZONE).expect("conf parses").0;
    let confs = [
        (default.clone(), true),
        (sampled(&default, 0, 10), true),
        (SchedulerConf::parse(CONF_BINPACK).expect("conf parses").0, true),
        (no_zone, false),
    ];
    let shapes = [
        (Variant::Identical, 300, 1500, 21),
        (Variant::Identical, 280, 8400, 22),
        (Variant::Selectors, 280, 8400, 23),
        (Variant::AntiAffinity, 300, 1500, 24),
    ];
    for (variant, nodes, pods, seed) in shapes {
        for (conf, zone_on) in &confs {
            let spec = WorkloadSpec { nodes, pods, gang: 10, queues: 3, variant, seed };
            let mut c = cluster(&spec);
            zonal(&mut c, mix);
            let mut fast = conf.clone();
            fast.options.class_cache = true;
            let mut plain = conf.clone();
            plain.options.class_cache = false;
            let opts = CycleOptions { seed, cycle: 1, now_ms: 0 };
            let (a, b) = (run_cycle(&c, &fast, &opts), run_cycle(&c, &plain, &opts));
            assert_eq!(a, b, "{variant:?} {nodes} nodes {pods} pods seed {seed}: class path and plain scan differ with claims");
            let (mut zonal_binds, mut local_binds) = (0, 0);
            for bind in &a.binds {
                let pod = &c.pod(bind.pod).expect("bound pod").spec;
                let Some(vc) = pod.volume_claims.first() else { continue };
                let pv_name = format!("disk-{}-{}", pod.namespace, vc.claim.trim_start_matches("data-"));
                let Some(pv) = c.volumes().volumes.get(&pv_name) else { continue };
                let node = &c.node(bind.node).expect("bound node").spec;
                if let Some(z) = pv.labels.get(ZONE) {
                    if *zone_on {
                        assert_eq!(node.labels.get(ZONE), Some(z), "{}: bound outside its disk's zone", pod.name);
                    }
                    zonal_binds += 1;
                }
                if let Some(terms) = &pv.node_affinity {
                    let host = &terms[0].match_expressions[0].values[0];
                    assert_eq!(&node.name, host, "{}: bound away from its local PV", pod.name);
                    local_binds += 1;
                }
            }
            assert!(zonal_binds >= ZONES, "{variant:?} {nodes}/{pods}: only {zonal_binds} pods with zonal claims bound");
            assert!(local_binds > 0, "{variant:?} {nodes}/{pods}: no pod with a local claim bound");
        }
    }
}
