//! The embedded default workload of `basalt replay` without arguments: a GPU cluster and a
//! stream of single-pod and gang jobs across four queues, drawn from a seed with distributions
//! shaped like the Alibaba GPU v2023 trace ([`tables`]). Same spec and seed, same workload.
//!
//! * Cluster: [`tables::NODES`] (147 nodes, 616 GPUs, 12,360 cores), interleaved so that a
//!   prefix of `nodes` nodes keeps the mix.
//! * Jobs: 80 % single pods (class by [`tables::CLASSES`], shape by the class's templates, a
//!   shared GPU's share by [`tables::GPU_SHARES`], QoS by [`tables::qos_mix`]); 20 % gangs
//!   (`minMember` = size) of identical whole-GPU workers: size 2, 4 or 8 (50/30/20 %) one-GPU
//!   workers, or (one gang in ten) 2 multi-GPU workers.
//! * Queues: gangs → `training` (weight 4); LS and Guaranteed single pods → `online` (3);
//!   BE → `batch` (2); Burstable → `dev` (1).
//! * Run time: log-normal, median 600 s, σ 1.9 (the trace's run times: median 616 s, p90
//!   7,763 s), clamped to 10 s … 4 h; a gang's workers share one run time.
//! * Arrivals: a Poisson process whose rate swings ±60 % in two waves over the window
//!   (`λ(t) = λ̄·(1 − 0.6·cos(4πt/W))`); λ̄ scales with the node count (3,000 pods per 2 h on
//!   147 nodes), so a smaller cluster sees the same load.
//! * With a [`topology::TopologyTree`] (`--topology GxNxL`): `nodes` identical nodes of G GPUs
//!   (12 cores and 48 GiB per GPU) instead of the embedded mix, under leaf and spine
//!   HyperNodes, and every gang with [`DefaultSpec::gang_topology`] as its `networkTopology`.

pub mod tables;
pub mod topology;

use super::shapes::{min_resources, node_spec, pod_spec, PodShape, Qos};
use super::workload::{JobArrival, TaskArrival, Workload, MS_PER_S};
use basalt_core::cluster::Delta;
use basalt_core::model::{PodGroupPhase, PodGroupSpec, QueueSpec};
use basalt_core::rng::SeededRng;
use tables::{PodClass, Template};

/// Namespace of generated pods and PodGroups.
pub const NAMESPACE: &str = "replay";

/// The queues of the default workload: (name, weight).
pub const QUEUES: [(&str, i32); 4] = [("training", 4), ("online", 3), ("batch", 2), ("dev", 1)];

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultSpec {
    /// Seed of every random draw.
    pub seed: u64,
    /// Pods in all (the last gang is cut to fit).
    pub pods: usize,
    /// Nodes (at most the embedded cluster's 147; fewer keep its mix). With `topology`, any
    /// number of identical GPU nodes.
    pub nodes: usize,
    /// A network topology tree over the nodes (`--topology`), `None` for the embedded mix.
    pub topology: Option<topology::TopologyTree>,
    /// With `topology`: the gangs' `networkTopology` (`--gang-topology`).
    pub gang_topology: topology::GangTopology,
}

impl Default for DefaultSpec {
    fn default() -> Self {
        DefaultSpec { seed: 1, pods: 3000, nodes: total_nodes(), topology: None, gang_topology: topology::GangTopology::Hard(1) }
    }
}

/// Nodes in the embedded cluster.
pub fn total_nodes() -> usize {
    tables::NODES.iter().map(|s| s.count).sum()
}

/// Mean arrival rate per node, pods per second (3,000 pods over 2 h on 147 nodes).
const PODS_PER_NODE_SECOND: f64 = 3000.0 / (2.0 * 3600.0) / 147.0;
/// Median run time, seconds.
const MEDIAN_RUN_S: f64 = 600.0;
/// σ of the log of the run time.
const SIGMA_RUN: f64 = 1.9;
/// Shortest and longest run time, seconds.
const RUN_S: (f64, f64) = (10.0, 4.0 * 3600.0);
/// Share of jobs that are gangs, per mille.
const GANG_PER_MILLE: u32 = 200;

/// Random draws on top of the core's SplitMix64.
struct Draw(SeededRng);

impl Draw {
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Index by weight.
    fn weighted(&mut self, weights: impl Iterator<Item = u32> + Clone) -> usize {
        let total: u32 = weights.clone().sum();
        let mut x = self.0.below(total.max(1) as usize) as u32;
        for (i, w) in weights.enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        0
    }

    /// A standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    fn run_time_ms(&mut self) -> i64 {
        let s = (MEDIAN_RUN_S.ln() + SIGMA_RUN * self.normal()).exp().clamp(RUN_S.0, RUN_S.1);
        (s.round() as i64) * MS_PER_S
    }

    fn template(&mut self, class: PodClass) -> Template {
        let t = tables::templates(class);
        t[self.weighted(t.iter().map(|x| x.3))]
    }

    fn qos(&mut self, class: PodClass) -> Qos {
        let (ls, burstable, be) = tables::qos_mix(class);
        [Qos::Ls, Qos::Burstable, Qos::Be][self.weighted([ls, burstable, be].into_iter())]
    }
}

/// Node shapes interleaved so that every prefix keeps the mix (largest deficit first).
fn interleaved_nodes() -> Vec<(usize, usize)> {
    let total = total_nodes();
    let mut taken = vec![0usize; tables::NODES.len()];
    let mut out = Vec::with_capacity(total);
    for i in 0..total {
        let pick = (0..tables::NODES.len())
            .filter(|&s| taken[s] < tables::NODES[s].count)
            .max_by(|&a, &b| {
                let deficit = |s: usize| tables::NODES[s].count as f64 * (i + 1) as f64 / total as f64 - taken[s] as f64;
                deficit(a).total_cmp(&deficit(b)).then(b.cmp(&a))
            })
            .unwrap_or(0);
        out.push((pick, taken[pick]));
        taken[pick] += 1;
    }
    out
}

fn queue_of(gang: bool, qos: Qos) -> &'static str {
    match (gang, qos) {
        (true, _) => "training",
        (false, Qos::Ls | Qos::Guaranteed) => "online",
        (false, Qos::Be) => "batch",
        (false, Qos::Burstable) => "dev",
    }
}

/// Generates the embedded default workload.
pub fn generate(spec: &DefaultSpec) -> Workload {
    let mut rng = Draw(SeededRng::new(spec.seed));
    let nodes = match spec.topology {
        Some(_) => spec.nodes.max(1),
        None => spec.nodes.clamp(1, total_nodes()),
    };
    let mut setup: Vec<Delta> = Qos::ALL.iter().map(|q| Delta::PriorityClass(q.priority_class_spec())).collect();
    for (name, weight) in QUEUES {
        setup.push(Delta::Queue(QueueSpec { name: name.into(), weight, reclaimable: true, ..Default::default() }));
    }
    match spec.topology {
        Some(tree) => {
            let g = tree.gpus_per_node;
            for i in 0..nodes {
                let name = topology::TopologyTree::node_name(i);
                setup.push(Delta::Node(node_spec(
                    &name,
                    g * topology::CPU_MILLI_PER_GPU,
                    g * topology::MEMORY_MIB_PER_GPU,
                    g,
                    "GPU",
                )));
            }
            setup.extend(tree.hyper_nodes(nodes));
        }
        None => {
            for (shape, i) in interleaved_nodes().into_iter().take(nodes) {
                let s = tables::NODES[shape];
                let kind = if s.model.is_empty() { "cpu".to_string() } else { s.model.to_lowercase() };
                let name = format!("{kind}-{}c-{i:03}", s.cpu_milli / 1000);
                setup.push(Delta::Node(node_spec(&name, s.cpu_milli, s.memory_mib, s.gpus, s.model)));
            }
        }
    }
    let gang_topology = spec.topology.and_then(|_| spec.gang_topology.spec());

    let rate_mean = PODS_PER_NODE_SECOND * nodes as f64;
    let window_s = spec.pods as f64 / rate_mean;
    let rate_max = rate_mean * 1.6;
    let mut t = 0.0f64;
    let mut jobs = Vec::new();
    let mut made = 0usize;
    while made < spec.pods {
        // Thinning: candidate arrivals at the peak rate, kept with probability λ(t)/λmax.
        t += -(1.0 - rng.unit()).ln() / rate_max;
        let rate = rate_mean * (1.0 - 0.6 * (4.0 * std::f64::consts::PI * t / window_s).cos());
        if rng.unit() * rate_max > rate {
            continue;
        }
        let arrival_ms = (t * MS_PER_S as f64).round() as i64;
        let gang = rng.0.below(1000) < GANG_PER_MILLE as usize;
        let (class, size) = if gang {
            if rng.0.below(10) == 0 {
                (PodClass::MultiGpu, 2)
            } else {
                (PodClass::OneGpu, [2, 4, 8][rng.weighted([50, 30, 20].into_iter())])
            }
        } else {
            (tables::CLASSES[rng.weighted(tables::CLASSES.iter().map(|c| c.1))].0, 1)
        };
        let size = size.min(spec.pods - made);
        let (cpu, mem, gpus, _) = rng.template(class);
        let gpu_milli = match class {
            PodClass::CpuOnly => 0,
            PodClass::SharedGpu => tables::GPU_SHARES[rng.weighted(tables::GPU_SHARES.iter().map(|s| s.1))].0,
            PodClass::OneGpu | PodClass::MultiGpu => 1000,
        };
        let shape = PodShape { cpu_milli: cpu, memory_mib: mem, num_gpu: gpus, gpu_milli };
        let qos = if gang {
            if rng.0.below(5) == 0 {
                Qos::Burstable
            } else {
                Qos::Ls
            }
        } else {
            rng.qos(class)
        };
        let run_ms = rng.run_time_ms();
        let job = jobs.len();
        let group = format!("job-{job:05}");
        let tasks: Vec<TaskArrival> = (0..size)
            .map(|i| TaskArrival {
                pod: pod_spec(NAMESPACE, &format!("{group}-{i}"), &group, arrival_ms, &shape, qos, &[]),
                arrival_ms,
                duration_ms: Some(run_ms),
            })
            .collect();
        made += size;
        jobs.push(JobArrival {
            group: PodGroupSpec {
                namespace: NAMESPACE.into(),
                name: group.clone(),
                uid: format!("{NAMESPACE}/{group}"),
                creation_ms: arrival_ms,
                min_member: size as i32,
                queue: queue_of(gang, qos).into(),
                priority_class_name: qos.priority_class().into(),
                min_resources: Some(min_resources(tasks.iter().map(|t| &t.pod))),
                phase: PodGroupPhase::Pending,
                network_topology: if size > 1 { gang_topology.clone() } else { None },
                ..Default::default()
            },
            arrival_ms,
            tasks,
        });
    }
    let gangs = jobs.iter().filter(|j| j.tasks.len() > 1).count();
    let note = format!(
        "generated: {} pods in {} jobs ({gangs} gangs) arriving over ~{:.1} h on {nodes} nodes; shapes from the Alibaba GPU v2023 mix",
        spec.pods,
        jobs.len(),
        window_s / 3600.0
    );
    let mut notes = vec![note];
    if let Some(t) = spec.topology {
        let leaves = nodes.div_ceil(t.nodes_per_leaf);
        notes.push(format!(
            "topology {}x{}x{}: {nodes} nodes of {} GPUs, {leaves} leaf HyperNodes (tier 1) of {} nodes, {} spine HyperNodes (tier 2) of {} leaves; gangs: {}",
            t.gpus_per_node,
            t.nodes_per_leaf,
            t.leaves_per_spine,
            t.gpus_per_node,
            t.nodes_per_leaf,
            leaves.div_ceil(t.leaves_per_spine),
            t.leaves_per_spine,
            spec.gang_topology.describe()
        ));
    }
    let mut w = Workload { name: format!("embedded default (seed {})", spec.seed), setup, jobs, notes, ..Default::default() };
    w.normalize();
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_workload_and_sizes() {
        let spec = DefaultSpec { seed: 7, pods: 300, nodes: 20, ..Default::default() };
        let a = generate(&spec);
        let b = generate(&spec);
        assert_eq!((&a.jobs, format!("{:?}", a.setup)), (&b.jobs, format!("{:?}", b.setup)));
        assert_ne!(a.jobs, generate(&DefaultSpec { seed: 8, ..spec.clone() }).jobs);
        assert_eq!(a.pod_count(), 300);
        assert_eq!(a.setup_counts(), (20, 4));
        let full: Vec<(usize, usize)> = interleaved_nodes();
        assert_eq!(full.len(), 147);
        let gpus: i64 = tables::NODES.iter().map(|s| s.count as i64 * s.gpus).sum();
        let cores: i64 = tables::NODES.iter().map(|s| s.count as i64 * s.cpu_milli / 1000).sum();
        assert_eq!((gpus, cores), (616, 12_360));
    }
}
