//! The optimised allocate path (per-class incremental node choice over wide max-trees) against
//! the plain reference scan (every node's predicates and scores per task), on generated
//! clusters big enough for three-level trees, with and without scarcity, for every workload
//! variant and two scoring confs. Decisions must be identical, binds and tie-breaks included.

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

fn cluster(spec: &WorkloadSpec) -> Cluster {
    let mut c = Cluster::new();
    for d in generate(spec) {
        c.apply(d).expect("generated objects are valid");
    }
    c
}

fn compare(variant: Variant, nodes: usize, pods: usize, conf: &SchedulerConf, seed: u64) {
    let spec = WorkloadSpec { nodes, pods, gang: 10, queues: 3, variant, seed };
    let c = cluster(&spec);
    let mut fast = conf.clone();
    fast.options.class_cache = true;
    let mut plain = conf.clone();
    plain.options.class_cache = false;
    let opts = CycleOptions { seed, cycle: 1 };
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
