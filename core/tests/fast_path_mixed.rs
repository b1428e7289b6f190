//! The fast path (task classes, kept session layout, affinity index) against the plain
//! reference scan on production-like clusters (`workload_mixed`: running and Releasing pods,
//! tasks pipelined in an earlier cycle onto releasing GPUs, GPU and CPU nodes, PreferNoSchedule
//! and NoSchedule taints, node affinity required and preferred, inter-pod affinity and
//! anti-affinity, topology spread, queues with capability and guarantee, best-effort pods),
//! over several cycles, with node sampling off and on, with 1 and 2 threads, with the kept
//! layout and without. Every cycle's decisions (binds, pipelined tasks, pending pods' reasons,
//! PodGroup and Queue status) must be identical, and the reference must bind and pipeline
//! something.

use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use basalt_core::workload_mixed::{generate, next_cycle, MixedSpec};
use basalt_core::{run_cycle, CycleOptions, Decisions};

#[derive(Clone, Copy, Debug)]
struct Path {
    fast: bool,
    sampling: bool,
    threads: usize,
    kept_layout: bool,
}

const PLAIN: Path = Path { fast: false, sampling: false, threads: 1, kept_layout: false };

/// Runs `cycles` cycles of `spec` along `path`; returns every cycle's decisions.
fn run(spec: &MixedSpec, conf: &SchedulerConf, path: Path, cycles: u64) -> Vec<Decisions> {
    let mut conf = conf.clone();
    conf.options.class_cache = path.fast;
    if path.sampling {
        conf.options.percentage_nodes_to_find = 0;
        conf.options.minimum_feasible_nodes = 10;
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(path.threads).build().expect("thread pool");
    pool.install(|| {
        let mut c = Cluster::new();
        for d in generate(spec) {
            c.apply(d).expect("generated objects are valid");
        }
        let mut out = Vec::new();
        for cycle in 0..cycles {
            if path.kept_layout {
                c.prepare(&conf.options.default_queue);
            }
            let d = run_cycle(&c, &conf, &CycleOptions { seed: spec.seed + cycle, cycle, now_ms: 0 });
            let next = next_cycle(&c, &d, spec.seed * 31 + cycle, 100_000 * (cycle as usize + 1), spec.jobs / 4);
            for delta in next {
                c.apply(delta).expect("next-cycle objects are valid");
            }
            out.push(d);
        }
        out
    })
}

fn compare(spec: &MixedSpec, conf: &SchedulerConf, cycles: u64, paths: &[Path]) {
    compare_sampling(spec, conf, cycles, paths, &[false, true]);
}

fn compare_sampling(spec: &MixedSpec, conf: &SchedulerConf, cycles: u64, paths: &[Path], sampling: &[bool]) {
    for &sampling in sampling {
        let reference = run(spec, conf, Path { sampling, ..PLAIN }, cycles);
        let binds: usize = reference.iter().map(|d| d.binds.len()).sum();
        assert!(binds > 0, "{spec:?}: nothing bound, the comparison would be empty");
        let pipelined: usize = reference.iter().map(|d| d.pipelined.len()).sum();
        assert!(pipelined > 0, "{spec:?}: nothing pipelined, the FutureIdle tier would not be compared");
        for &p in paths {
            let p = Path { sampling, ..p };
            let got = run(spec, conf, p, cycles);
            for (i, (a, b)) in got.iter().zip(&reference).enumerate() {
                assert_eq!(a, b, "{spec:?} {p:?} cycle {i}: differs from the plain scan");
            }
        }
    }
}

const ALL: [Path; 4] = [
    Path { fast: true, sampling: false, threads: 1, kept_layout: false },
    Path { fast: true, sampling: false, threads: 2, kept_layout: false },
    Path { fast: true, sampling: false, threads: 1, kept_layout: true },
    Path { fast: true, sampling: false, threads: 2, kept_layout: true },
];

const CONF_BINPACK: &str = r#"actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments:
      mostrequested.weight: 1
  - name: binpack
"#;

#[test]
fn small_clusters_many_seeds() {
    let conf = SchedulerConf::default();
    for seed in 1..=6 {
        compare(&MixedSpec { nodes: 24 + 7 * seed as usize, jobs: 40, running_per_node: 2, seed }, &conf, 3, &ALL);
    }
}

#[test]
fn medium_cluster_default_and_binpack_confs() {
    let spec = MixedSpec { nodes: 400, jobs: 500, running_per_node: 3, seed: 17 };
    compare(&spec, &SchedulerConf::default(), 3, &ALL);
    compare(&spec, &SchedulerConf::parse(CONF_BINPACK).unwrap().0, 2, &ALL[..2]);
}

#[test]
fn large_cluster_one_path() {
    // 5,000 nodes: the size where the class path's wide trees and the anti-affinity masks of
    // big clusters come in; one path, full scan, two cycles, to keep `cargo test` short.
    let spec = MixedSpec { nodes: 5000, jobs: 500, running_per_node: 2, seed: 23 };
    compare_sampling(&spec, &SchedulerConf::default(), 2, &ALL[2..3], &[false]);
}
