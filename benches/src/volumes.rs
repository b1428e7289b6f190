//! The volume variant of the cycle benches (issue 22): the same seeded shape with zone labels
//! on every node (three zones, round robin), and with or without bound zonal claims on a
//! fraction of the pending pods (a PV labelled `topology.kubernetes.io/zone` per claim, as an
//! EBS/PD disk is). The objects come from [`basalt_core::workload_volumes`], which the
//! fast-path differential tests use too.

use basalt_core::cluster::Cluster;
use basalt_core::workload_volumes::VolumeMix;

pub use basalt_core::workload_volumes::ZONE;

/// Labels every node of `c` with one of three zones (`z0`, `z1`, `z2`, by node order) and, when
/// `every` > 0, gives every `every`-th pending pod (in `namespace/name` order) a claim bound to
/// a 10 GiB CSI disk in zone `i % 3`.
pub fn zonal(c: &mut Cluster, every: usize) {
    basalt_core::workload_volumes::zonal(c, VolumeMix { every, ..VolumeMix::default() });
}
