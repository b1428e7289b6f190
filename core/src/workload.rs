//! A seeded synthetic workload: a cluster of nodes and pending gang jobs, as [`Delta`]s. Shared
//! by the benches, the property tests and `basalt bench`; the same spec and seed give the same
//! deltas.

use crate::cluster::Delta;
use crate::model::*;
use crate::resource::ResourceList;
use crate::rng::SeededRng;

/// Shape variants of the generated pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Every gang job's pods share one template (identical replicas).
    Identical,
    /// Every pod has its own request.
    Distinct,
    /// Half of the jobs select one of 8 node label groups.
    Selectors,
    /// A quarter of the nodes are tainted; half of the jobs tolerate the taint.
    Taints,
    /// Pods of a job repel each other (required anti-affinity on hostname).
    AntiAffinity,
}

impl Variant {
    /// Parses `identical|distinct|selectors|taints|anti-affinity`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "identical" => Variant::Identical,
            "distinct" => Variant::Distinct,
            "selectors" => Variant::Selectors,
            "taints" => Variant::Taints,
            "anti-affinity" => Variant::AntiAffinity,
            _ => return None,
        })
    }

    /// The name [`Variant::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Identical => "identical",
            Variant::Distinct => "distinct",
            Variant::Selectors => "selectors",
            Variant::Taints => "taints",
            Variant::AntiAffinity => "anti-affinity",
        }
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    /// Nodes (32 cores, 128 GiB, 110 pods each).
    pub nodes: usize,
    /// Pending pods in total.
    pub pods: usize,
    /// Pods per gang job (minMember = gang size).
    pub gang: usize,
    /// Queues (weight 1 each) the jobs are spread over.
    pub queues: usize,
    /// Pod shapes.
    pub variant: Variant,
    /// Seed.
    pub seed: u64,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec { nodes: 100, pods: 1000, gang: 10, queues: 4, variant: Variant::Identical, seed: 1 }
    }
}

fn res(cpu_milli: i64, mem: i64, pods: i64) -> ResourceList {
    let mut r = ResourceList::new();
    r.insert("cpu".into(), cpu_milli);
    r.insert("memory".into(), mem);
    r.insert("pods".into(), pods);
    r
}

/// Generates the deltas of `spec`: queues, nodes, PodGroups (phase Inqueue) and pending pods.
pub fn generate(spec: &WorkloadSpec) -> Vec<Delta> {
    let mut rng = SeededRng::new(spec.seed);
    let mut out = Vec::with_capacity(spec.nodes + spec.pods + spec.pods / spec.gang.max(1) + spec.queues);
    let queues = spec.queues.max(1);
    for q in 0..queues {
        out.push(Delta::Queue(QueueSpec { name: format!("q{q}"), weight: 1, reclaimable: true, ..Default::default() }));
    }
    const GIB: i64 = 1 << 30;
    for n in 0..spec.nodes {
        let mut labels = Labels::new();
        labels.insert("kubernetes.io/hostname".into(), format!("node-{n:05}"));
        labels.insert("group".into(), format!("g{}", n % 8));
        let mut taints = Vec::new();
        if spec.variant == Variant::Taints && n % 4 == 0 {
            taints.push(Taint { key: "dedicated".into(), value: "batch".into(), effect: TaintEffect::NoSchedule });
        }
        out.push(Delta::Node(NodeSpec {
            name: format!("node-{n:05}"),
            labels,
            taints,
            allocatable: res(32_000, 128 * GIB, 110),
            capacity: res(32_000, 128 * GIB, 110),
            ready: true,
            ..Default::default()
        }));
    }
    let gang = spec.gang.max(1);
    let jobs = spec.pods.div_ceil(gang);
    let mut made = 0;
    for j in 0..jobs {
        let ns = format!("ns{}", j % 16);
        let name = format!("job-{j:06}");
        let size = gang.min(spec.pods - made);
        out.push(Delta::PodGroup(PodGroupSpec {
            namespace: ns.clone(),
            name: name.clone(),
            uid: format!("{ns}/{name}"),
            creation_ms: j as i64,
            min_member: size as i32,
            queue: format!("q{}", j % queues),
            phase: PodGroupPhase::Inqueue,
            ..Default::default()
        }));
        let cpu = 500 * (1 + rng.below(4) as i64);
        let mem = GIB * (1 + rng.below(4) as i64);
        for i in 0..size {
            let (c, m) = if spec.variant == Variant::Distinct {
                (100 + rng.below(2000) as i64, GIB / 4 + rng.below(4096) as i64 * (1 << 20))
            } else {
                (cpu, mem)
            };
            let mut labels = Labels::new();
            labels.insert("job".into(), name.clone());
            let mut p = PodSpec {
                namespace: ns.clone(),
                name: format!("{name}-{i}"),
                uid: format!("{ns}/{name}-{i}"),
                creation_ms: j as i64,
                labels,
                group: Some(name.clone()),
                scheduler_name: "volcano".into(),
                resreq: res(c, m, 1),
                nonzero_cpu_milli: c,
                nonzero_memory_bytes: m,
                preemptable: true,
                ..Default::default()
            };
            match spec.variant {
                Variant::Selectors if j % 2 == 0 => {
                    p.node_selector.insert("group".into(), format!("g{}", j % 8));
                }
                Variant::Taints if j % 2 == 0 => p.tolerations.push(Toleration {
                    key: "dedicated".into(),
                    op: TolerationOp::Equal,
                    value: "batch".into(),
                    effect: Some(TaintEffect::NoSchedule),
                }),
                Variant::AntiAffinity => {
                    let mut sel = LabelSelector::default();
                    sel.match_labels.insert("job".into(), name.clone());
                    p.affinity.anti_required.push(PodAffinityTerm {
                        label_selector: Some(sel),
                        topology_key: "kubernetes.io/hostname".into(),
                        ..Default::default()
                    });
                }
                _ => {}
            }
            out.push(Delta::Pod(p));
        }
        made += size;
    }
    out
}
