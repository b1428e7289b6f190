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
    /// Every pod of every job has the same request (1 CPU, 2 GiB): one task class, where
    /// `identical` draws one of 16 requests per job. It separates what a bind costs outside the
    /// class trees from what 16 classes add (issue 29).
    Uniform,
    /// Every pod has its own request.
    Distinct,
    /// Half of the jobs select one of 8 node label groups.
    Selectors,
    /// A quarter of the nodes are tainted; half of the jobs tolerate the taint.
    Taints,
    /// Pods of a job repel each other (required anti-affinity on hostname).
    AntiAffinity,
    /// A 3-tier HyperNode tree over the nodes ([`TOPOLOGY_FANOUT`]: 16 nodes per tier-1 leaf,
    /// 8 leaves per tier-2 spine, 8 spines per tier-3 HyperNode, exactMatch members) and every
    /// gang with `networkTopology: {mode: hard, highestTierAllowed: 1}`: each gang must fit one
    /// leaf (issue 23's bench; [`without_topology`] gives the same workload without it).
    Topology,
    /// Volcano's allocate benchmark `BenchmarkAllocateSubGroups` (allocate_test.go): nodes of
    /// 4 cpu, 8Gi and 10 pods, 10 per tier-1 HyperNode under one tier-2 HyperNode; every pod
    /// (4 cpu, 8Gi) in one PodGroup (hard, highestTierAllowed 2, minMember = pods,
    /// minResources = the pods' sum) with a `subGroupPolicy` of 10-pod sub-groups (hard,
    /// highestTierAllowed 1, `minSubGroups` = pods / 10) keyed by label `volcano.sh/task-spec`.
    /// At 1,000 nodes and 1,000 pods it is Volcano's case; `gang` and `queues` are not used.
    SubGroups,
}

/// Fan-out of the [`Variant::Topology`] tree: nodes per tier-1 HyperNode, tier-1 per tier-2,
/// tier-2 per tier-3.
pub const TOPOLOGY_FANOUT: [usize; 3] = [16, 8, 8];

impl Variant {
    /// Parses `identical|uniform|distinct|selectors|taints|anti-affinity|topology|subgroups`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "identical" => Variant::Identical,
            "uniform" => Variant::Uniform,
            "distinct" => Variant::Distinct,
            "selectors" => Variant::Selectors,
            "taints" => Variant::Taints,
            "anti-affinity" => Variant::AntiAffinity,
            "topology" => Variant::Topology,
            "subgroups" => Variant::SubGroups,
            _ => return None,
        })
    }

    /// The name [`Variant::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Identical => "identical",
            Variant::Uniform => "uniform",
            Variant::Distinct => "distinct",
            Variant::Selectors => "selectors",
            Variant::Taints => "taints",
            Variant::AntiAffinity => "anti-affinity",
            Variant::Topology => "topology",
            Variant::SubGroups => "subgroups",
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

/// Generates the deltas of `spec`: queues, nodes, PodGroups (phase Inqueue) and pending pods
/// (and the HyperNodes of the topology variants). All of them at once; [`generate_into`] hands
/// them out one by one.
pub fn generate(spec: &WorkloadSpec) -> Vec<Delta> {
    let mut out = Vec::with_capacity(spec.nodes + spec.pods + spec.pods / spec.gang.max(1) + spec.queues);
    generate_into(spec, |d| out.push(d));
    out
}

/// The deltas of [`generate`], in the same order, handed to `emit` one at a time as they are
/// made, so that a caller which applies them at once never holds the whole workload (at
/// 1,000,000 pods the list alone was about a gigabyte).
pub fn generate_into(spec: &WorkloadSpec, mut emit: impl FnMut(Delta)) {
    if spec.variant == Variant::SubGroups {
        crate::workload_topology::sub_groups(spec.nodes, spec.pods).into_iter().for_each(emit);
        return;
    }
    let mut rng = SeededRng::new(spec.seed);
    let queues = spec.queues.max(1);
    for q in 0..queues {
        emit(Delta::Queue(QueueSpec { name: format!("q{q}"), weight: 1, reclaimable: true, ..Default::default() }));
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
        emit(Delta::Node(NodeSpec {
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
        let size = gang.min(spec.pods - made);
        push_job(&mut emit, &mut rng, spec, j, &format!("job-{j:06}"), size);
        made += size;
    }
    if spec.variant == Variant::Topology {
        crate::workload_topology::tree(spec.nodes, &TOPOLOGY_FANOUT, |n| format!("node-{n:05}")).into_iter().for_each(emit);
    }
}

/// `deltas` without their network topology: no HyperNode, no PodGroup `networkTopology` or
/// `subGroupPolicy` (the plain cycle a topology bench is compared with).
pub fn without_topology(deltas: &[Delta]) -> Vec<Delta> {
    deltas.iter().filter_map(|d| strip_topology(d.clone())).collect()
}

/// One delta of [`without_topology`]: `None` for a HyperNode, a PodGroup without
/// `networkTopology` and `subGroupPolicy`, any other delta as it is.
pub fn strip_topology(d: Delta) -> Option<Delta> {
    match d {
        Delta::HyperNode(_) => None,
        Delta::PodGroup(mut g) => {
            g.network_topology = None;
            g.sub_group_policy.clear();
            Some(Delta::PodGroup(g))
        }
        d => Some(d),
    }
}

/// Appends gang job number `j` (a PodGroup of minMember `size`, phase Inqueue, and its `size`
/// pending pods) named `name` to `out`.
fn push_job(out: &mut impl FnMut(Delta), rng: &mut SeededRng, spec: &WorkloadSpec, j: usize, name: &str, size: usize) {
    const GIB: i64 = 1 << 30;
    let queues = spec.queues.max(1);
    let ns = format!("ns{}", j % 16);
    let network_topology = (spec.variant == Variant::Topology).then(|| NetworkTopologySpec {
        mode: TopologyMode::Hard,
        highest_tier_allowed: Some(1),
        highest_tier_name: String::new(),
    });
    out(Delta::PodGroup(PodGroupSpec {
        namespace: ns.clone(),
        name: name.to_string(),
        uid: format!("{ns}/{name}"),
        creation_ms: j as i64,
        min_member: size as i32,
        queue: format!("q{}", j % queues),
        phase: PodGroupPhase::Inqueue,
        network_topology,
        ..Default::default()
    }));
    let cpu = 500 * (1 + rng.below(4) as i64);
    let mem = GIB * (1 + rng.below(4) as i64);
    let (cpu, mem) = if spec.variant == Variant::Uniform { (1000, 2 * GIB) } else { (cpu, mem) };
    for i in 0..size {
        let (c, m) = if spec.variant == Variant::Distinct {
            (100 + rng.below(2000) as i64, GIB / 4 + rng.below(4096) as i64 * (1 << 20))
        } else {
            (cpu, mem)
        };
        let mut labels = Labels::new();
        labels.insert("job".into(), name.to_string());
        let mut p = PodSpec {
            namespace: ns.clone(),
            name: format!("{name}-{i}"),
            uid: format!("{ns}/{name}-{i}"),
            creation_ms: j as i64,
            labels,
            group: Some(name.to_string()),
            scheduler_name: "volcano".into(),
            resreq: res(c, m, 1),
            nonzero_cpu_milli: c,
            nonzero_memory_bytes: m,
            preemptable: true,
            ..Default::default()
        };
        match spec.variant {
            Variant::Selectors if j.is_multiple_of(2) => {
                p.node_selector.insert("group".into(), format!("g{}", j % 8));
            }
            Variant::Taints if j.is_multiple_of(2) => p.tolerations.push(Toleration {
                key: "dedicated".into(),
                op: TolerationOp::Equal,
                value: "batch".into(),
                effect: Some(TaintEffect::NoSchedule),
            }),
            Variant::AntiAffinity => {
                let mut sel = LabelSelector::default();
                sel.match_labels.insert("job".into(), name.to_string());
                p.affinity.anti_required.push(PodAffinityTerm {
                    label_selector: Some(sel),
                    topology_key: "kubernetes.io/hostname".into(),
                    ..Default::default()
                });
            }
            _ => {}
        }
        out(Delta::Pod(p));
    }
}

/// The changes a live scheduler sees between two cycles on a [`generate`]d cluster, one batch
/// of [`Delta`]s per [`Churn::round`]. With `changed` pods per round (the benches use 1 % of
/// the pods), a round holds, a third of `changed` each:
///
/// - **created**: new gang jobs (PodGroup + pending pods, named `churn-NNNNNNN`);
/// - **deleted**: the oldest jobs, pods and PodGroup;
/// - **bound**: the pods the previous round assumed bound, now reported `Running` by the kubelet;
///
/// plus **the previous cycle's binds**, another third: pending pods of the oldest jobs given a
/// node (`nodeName` set, phase Pending: Volcano's Bound, as the scheduler's own assumed bind
/// delta), and a status update (phase Running) of every PodGroup with a pod bound this round.
/// Pending pods enter as fast as they are bound, so the shape holds over any number of rounds.
#[derive(Clone, Debug)]
pub struct Churn {
    spec: WorkloadSpec,
    rng: SeededRng,
    /// Live jobs, oldest first: (namespace, name).
    jobs: std::collections::VecDeque<(String, String)>,
    nodes: Vec<String>,
    next_node: usize,
    next_job: usize,
    /// Pods given a node by the previous round: (namespace, name).
    assumed: Vec<(String, String)>,
}

impl Churn {
    /// A churn over `cluster`, generated from `spec` (jobs are aged by creation time).
    pub fn new(cluster: &crate::Cluster, spec: &WorkloadSpec) -> Self {
        let mut jobs: Vec<_> =
            cluster.pod_groups().map(|(_, g)| (g.spec.creation_ms, g.spec.namespace.clone(), g.spec.name.clone())).collect();
        jobs.sort();
        Churn {
            spec: spec.clone(),
            rng: SeededRng::new(spec.seed ^ 0x636875726e),
            next_job: jobs.len(),
            jobs: jobs.into_iter().map(|(_, ns, n)| (ns, n)).collect(),
            nodes: cluster.nodes().map(|(_, n)| n.spec.name.clone()).collect(),
            next_node: 0,
            assumed: Vec::new(),
        }
    }

    /// The deltas of one round with `changed` pods created, deleted or bound (see [`Churn`]).
    pub fn round(&mut self, cluster: &crate::Cluster, changed: usize) -> Vec<Delta> {
        let third = changed.div_ceil(3).max(1);
        let mut out = Vec::new();
        let mut groups = std::collections::BTreeSet::new();
        // Bound: last round's assumed binds are now running.
        for (ns, name) in std::mem::take(&mut self.assumed) {
            if let Some(p) = cluster.pod_id(&ns, &name).and_then(|id| cluster.pod(id)) {
                let mut s = p.spec.clone();
                s.phase = PodPhase::Running;
                if let Some(g) = &s.group {
                    groups.insert((ns.clone(), g.clone()));
                }
                out.push(Delta::Pod(s));
            }
        }
        // Deleted: the oldest jobs.
        let mut deleted = 0;
        while deleted < third {
            let Some((ns, name)) = self.jobs.pop_front() else { break };
            for &id in cluster.pod_group_members(&ns, &name) {
                if let Some(p) = cluster.pod(id) {
                    out.push(Delta::PodDeleted { namespace: p.spec.namespace.clone(), name: p.spec.name.clone() });
                    deleted += 1;
                }
            }
            groups.remove(&(ns.clone(), name.clone()));
            out.push(Delta::PodGroupDeleted { namespace: ns, name });
        }
        // The previous cycle's binds: pending pods of the oldest jobs get a node.
        let mut assumed = Vec::new();
        'jobs: for (ns, name) in &self.jobs {
            let mut members: Vec<_> = cluster.pod_group_members(ns, name).iter().filter_map(|&id| cluster.pod(id)).collect();
            members.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
            for p in members {
                if assumed.len() >= third {
                    break 'jobs;
                }
                if p.spec.node_name.is_empty() && p.spec.phase == PodPhase::Pending && !self.nodes.is_empty() {
                    let mut s = p.spec.clone();
                    s.node_name = self.nodes[self.next_node % self.nodes.len()].clone();
                    self.next_node += 1;
                    groups.insert((ns.clone(), name.clone()));
                    assumed.push((s.namespace.clone(), s.name.clone()));
                    out.push(Delta::Pod(s));
                }
            }
        }
        self.assumed = assumed;
        // Created: new jobs of the generator's gang size.
        let gang = self.spec.gang.max(1);
        let mut created = 0;
        while created < third {
            let j = self.next_job;
            self.next_job += 1;
            let name = format!("churn-{j:07}");
            push_job(&mut |d| out.push(d), &mut self.rng, &self.spec, j, &name, gang);
            self.jobs.push_back((format!("ns{}", j % 16), name));
            created += gang;
        }
        // PodGroup status updates.
        for (ns, name) in groups {
            if let Some(g) = cluster.pod_group_id(&ns, &name).and_then(|id| cluster.pod_group(id)) {
                let mut s = g.spec.clone();
                s.phase = PodGroupPhase::Running;
                out.push(Delta::PodGroup(s));
            }
        }
        out
    }
}
