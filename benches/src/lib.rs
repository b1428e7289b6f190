//! Shared helpers of Basalt's benches: build a cluster copy from a seeded workload shape and
//! name the shape (`n10000_p100000_gang10`).

use basalt_core::cluster::Cluster;
use basalt_core::workload::{generate, WorkloadSpec};

/// The cluster copy of `spec`.
pub fn cluster(spec: &WorkloadSpec) -> Cluster {
    let mut c = Cluster::new();
    for d in generate(spec) {
        c.apply(d).expect("generated objects are valid");
    }
    c
}

/// The bench name of a shape: `n<nodes>_p<pods>_gang<gang>[_<variant>]`.
pub fn shape_name(spec: &WorkloadSpec) -> String {
    let base = format!("n{}_p{}_gang{}", spec.nodes, spec.pods, spec.gang);
    match spec.variant {
        basalt_core::workload::Variant::Identical => base,
        v => format!("{base}_{}", v.name()),
    }
}
