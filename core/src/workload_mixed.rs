//! A seeded, production-like cluster for the fast-path property tests (issue 10): what the
//! plain [`crate::workload`] leaves out. Mixed GPU and CPU nodes in zones, PreferNoSchedule
//! and NoSchedule taints, an unschedulable node; running pods already on the nodes, some of
//! them terminating (Releasing), a GPU training pod on every GPU node; tasks pipelined in an
//! earlier cycle onto the releasing GPUs of a node; several queues with capability and
//! guarantee; pending gang jobs with required and preferred node affinity, tolerations,
//! inter-pod affinity and anti-affinity, topology spread (hard and soft), GPU requests, and
//! best-effort pods. [`next_cycle`] turns a cycle's decisions into the next cycle's cluster
//! (binds run, PodGroups take their status, some running pods start terminating, most
//! terminating pods go), so several cycles can be compared.
//!
//! Pipelined is a session state only (volcano-behaviour.md §1 Statement: a pipelined task is
//! not committed, it returns to Pending when the session ends), so a task pipelined in an
//! earlier cycle is, in the cluster, a Pending pod of an Inqueue PodGroup whose `Unschedulable`
//! condition that cycle wrote, waiting for a node whose pods are still terminating: its request
//! exceeds that node's idle resources and every node's idle GPUs (else it would have been
//! allocated), and fits the node's FutureIdle (idle + releasing, §1 NodeInfo).
//!
//! Same spec and seed ⇒ same deltas.

use crate::cluster::{Cluster, Delta};
use crate::decision::Decisions;
use crate::model::*;
use crate::resource::ResourceList;
use crate::rng::SeededRng;

const GIB: i64 = 1 << 30;

/// What to generate.
#[derive(Clone, Debug)]
pub struct MixedSpec {
    /// Nodes (a quarter of them with 8 GPUs).
    pub nodes: usize,
    /// Pending jobs (1 to 6 pods each).
    pub jobs: usize,
    /// Running pods per node at the start (some Releasing).
    pub running_per_node: usize,
    /// Seed.
    pub seed: u64,
}

fn res(cpu: i64, mem: i64, gpu: i64) -> ResourceList {
    let mut r: ResourceList = [("cpu".to_string(), cpu), ("memory".to_string(), mem), ("pods".to_string(), 1)].into();
    if gpu > 0 {
        r.insert("nvidia.com/gpu".into(), gpu);
    }
    r
}

fn req(key: &str, op: SelectorOp, values: &[&str]) -> Requirement {
    Requirement { key: key.into(), op, values: values.iter().map(|v| v.to_string()).collect() }
}

fn selector(key: &str, value: &str) -> LabelSelector {
    let mut s = LabelSelector::default();
    s.match_labels.insert(key.into(), value.into());
    s
}

fn pod(ns: &str, name: &str, group: &str, cpu: i64, mem: i64, gpu: i64, created: i64) -> PodSpec {
    PodSpec {
        namespace: ns.into(),
        name: name.into(),
        uid: format!("{ns}/{name}"),
        creation_ms: created,
        group: Some(group.into()),
        scheduler_name: "volcano".into(),
        resreq: res(cpu, mem, gpu),
        nonzero_cpu_milli: if cpu == 0 { 100 } else { cpu },
        nonzero_memory_bytes: if mem == 0 { 200 << 20 } else { mem },
        preemptable: true,
        ..Default::default()
    }
}

fn group(ns: &str, name: &str, queue: &str, min: i32, phase: PodGroupPhase, created: i64) -> PodGroupSpec {
    PodGroupSpec {
        namespace: ns.into(),
        name: name.into(),
        uid: format!("{ns}/{name}"),
        creation_ms: created,
        min_member: min,
        queue: queue.into(),
        phase,
        ..Default::default()
    }
}

/// The cluster of `spec` as deltas: queues, nodes, running pods with their PodGroups, then
/// the pending jobs.
pub fn generate(spec: &MixedSpec) -> Vec<Delta> {
    let mut rng = SeededRng::new(spec.seed);
    let mut out = Vec::new();
    let queues = ["prod", "batch", "dev", "gpu"];
    for (i, q) in queues.iter().enumerate() {
        let mut qs = QueueSpec { name: (*q).into(), weight: [4, 2, 1, 3][i], reclaimable: true, ..Default::default() };
        let n = spec.nodes as i64;
        match *q {
            "prod" => qs.guarantee = res(n * 2000, n * 4 * GIB, 0),
            "dev" => qs.capability = res(n * 4000, n * 16 * GIB, 0),
            "gpu" => qs.capability = res(n * 16_000, n * 64 * GIB, n * 2000),
            _ => {}
        }
        qs.capability.remove("pods");
        qs.guarantee.remove("pods");
        out.push(Delta::Queue(qs));
    }
    for n in 0..spec.nodes {
        let gpu_node = n % 4 == 0;
        let mut labels = Labels::new();
        labels.insert("kubernetes.io/hostname".into(), format!("node-{n:05}"));
        labels.insert("topology.kubernetes.io/zone".into(), format!("zone-{}", n % 3));
        labels.insert("disk".into(), if n % 5 < 2 { "ssd" } else { "hdd" }.into());
        if gpu_node {
            labels.insert("accelerator".into(), "a100".into());
        }
        let mut taints = Vec::new();
        if gpu_node && n % 8 == 0 {
            taints.push(Taint { key: "nvidia.com/gpu".into(), value: "present".into(), effect: TaintEffect::NoSchedule });
        }
        if n % 7 == 3 {
            taints.push(Taint { key: "spot".into(), value: "true".into(), effect: TaintEffect::PreferNoSchedule });
        }
        let alloc = if gpu_node { res(64_000, 256 * GIB, 8000) } else { res(16_000 + 16_000 * (n % 2) as i64, 64 * GIB, 0) };
        let mut alloc = alloc;
        alloc.insert("pods".into(), if n % 11 == 5 { 8 } else { 110 });
        out.push(Delta::Node(NodeSpec {
            name: format!("node-{n:05}"),
            labels,
            taints,
            unschedulable: unschedulable(n),
            capacity: alloc.clone(),
            allocatable: alloc,
            ready: true,
            gpu_share: None,
            devices: Default::default(),
        }));
    }
    // Running pods, a few of them terminating.
    for n in 0..spec.nodes {
        for k in 0..spec.running_per_node {
            let ns = format!("run{}", n % 4);
            let name = format!("run-{n:05}-{k}");
            let q = queues[(n + k) % 3];
            out.push(Delta::PodGroup(group(&ns, &name, q, 1, PodGroupPhase::Running, 0)));
            let mut p = pod(&ns, &name, &name, 1000 * (1 + rng.below(3) as i64), GIB * (1 + rng.below(4) as i64), 0, 0);
            p.labels.insert("app".into(), format!("svc-{}", rng.below(6)));
            p.node_name = format!("node-{n:05}");
            p.phase = PodPhase::Running;
            p.deleting = rng.below(6) == 0;
            out.push(Delta::Pod(p));
        }
    }
    out.extend(pipelined_from_earlier_cycle(&mut rng, spec));
    for j in 0..spec.jobs {
        out.extend(job(&mut rng, j, 1 + j as i64));
    }
    out
}

/// Whether node `n` is cordoned (`spec.unschedulable`).
fn unschedulable(n: usize) -> bool {
    n % 53 == 52
}

/// GPUs (in milli-units, as node allocatable counts them) of a GPU node.
const NODE_GPUS: i64 = 8000;

fn gpu_toleration() -> Toleration {
    Toleration {
        key: "nvidia.com/gpu".into(),
        op: TolerationOp::Exists,
        value: String::new(),
        effect: Some(TaintEffect::NoSchedule),
    }
}

/// A training pod of 4–8 GPUs on every GPU node (a third of them terminating, so their GPUs
/// are Releasing), then the tasks an earlier cycle pipelined onto those releasing GPUs: one per
/// draining node that is not cordoned, in jobs of one or two tasks (queue `gpu`, PodGroup Inqueue with the
/// `Unschedulable` condition that cycle wrote). Each asks more GPUs than any GPU node has idle
/// and at most its node's FutureIdle (all its GPUs: idle + releasing).
fn pipelined_from_earlier_cycle(rng: &mut SeededRng, spec: &MixedSpec) -> Vec<Delta> {
    let mut out = Vec::new();
    let mut draining = Vec::new();
    let mut max_idle = 0;
    for n in (0..spec.nodes).filter(|n| n % 4 == 0) {
        let gpus = 4000 + 1000 * rng.below(5) as i64;
        let name = format!("train-{n:05}");
        out.push(Delta::PodGroup(group("train", &name, "gpu", 1, PodGroupPhase::Running, 0)));
        let mut p = pod("train", &name, &name, 8000, 32 * GIB, gpus, 0);
        p.tolerations.push(gpu_toleration());
        p.labels.insert("app".into(), "train".into());
        p.node_name = format!("node-{n:05}");
        p.phase = PodPhase::Running;
        p.deleting = rng.below(3) == 0;
        if p.deleting && !unschedulable(n) {
            draining.push(n);
        }
        max_idle = max_idle.max(NODE_GPUS - gpus);
        out.push(Delta::Pod(p));
    }
    // A Releasing pod's GPUs are not idle yet (§1 NodeInfo AddTask), so every GPU node has
    // 0–4 GPUs idle; the pipelined task asks more than the most of them, so no node fitted it
    // idle in the earlier cycle, and at most all 8 of its node, which its FutureIdle holds.
    let mut i = 0;
    while i < draining.len() {
        let size = (1 + rng.below(2)).min(draining.len() - i);
        let name = format!("pipe-{i:05}");
        let mut g = group("team-p", &name, "gpu", size as i32, PodGroupPhase::Inqueue, 0);
        g.conditions.push(PodGroupCondition {
            kind: "Unschedulable".into(),
            status: "True".into(),
            transition_id: "earlier-cycle".into(),
            reason: "NotEnoughResources".into(),
            message: format!(
                "{size}/{size} tasks in gang unschedulable: pod group is not ready, {size} Pipelined, {size} minAvailable"
            ),
        });
        out.push(Delta::PodGroup(g));
        for k in 0..size {
            let steps = (NODE_GPUS - max_idle) / 1000;
            let gpus = max_idle + 1000 * (1 + rng.below(steps.max(1) as usize) as i64);
            let mut p = pod("team-p", &format!("{name}-{k}"), &name, 4000, 16 * GIB, gpus.min(NODE_GPUS), 0);
            p.tolerations.push(gpu_toleration());
            p.labels.insert("job".into(), name.clone());
            p.labels.insert("app".into(), "train".into());
            out.push(Delta::Pod(p));
        }
        i += size;
    }
    out
}

/// One pending job `j` created at `created`.
fn job(rng: &mut SeededRng, j: usize, created: i64) -> Vec<Delta> {
    let mut out = Vec::new();
    let ns = format!("team{}", j % 5);
    let name = format!("job-{j:05}");
    let kind = rng.below(10);
    let size = 1 + rng.below(6);
    let queue = ["prod", "batch", "dev", "gpu"][if kind == 0 { 3 } else { rng.below(3) }];
    let min = if rng.below(3) == 0 { 1 } else { size as i32 };
    out.push(Delta::PodGroup(group(&ns, &name, queue, min, PodGroupPhase::Inqueue, created)));
    let cpu = 250 * (1 + rng.below(12) as i64);
    let mem = GIB / 2 * (1 + rng.below(8) as i64);
    for i in 0..size {
        let best_effort = kind == 9;
        let (c, m, g) = match kind {
            0 => (4000, 16 * GIB, 1000 * (1 + rng.below(4) as i64)),
            9 => (0, 0, 0),
            _ => (cpu, mem, 0),
        };
        let mut p = pod(&ns, &format!("{name}-{i}"), &name, c, m, g, created);
        if best_effort {
            p.resreq = [("pods".to_string(), 1)].into();
        }
        p.labels.insert("job".into(), name.clone());
        p.labels.insert("app".into(), format!("svc-{}", rng.below(6)));
        if kind == 0 && rng.below(2) == 0 {
            p.tolerations.push(gpu_toleration());
        }
        match rng.below(9) {
            0 => {
                p.affinity.node_required = Some(vec![NodeSelectorTerm {
                    match_expressions: vec![req("disk", SelectorOp::In, &["ssd"])],
                    ..Default::default()
                }])
            }
            1 => p.affinity.node_preferred.push(PreferredSchedulingTerm {
                weight: 1 + rng.below(50) as i32,
                preference: NodeSelectorTerm {
                    match_expressions: vec![req("topology.kubernetes.io/zone", SelectorOp::In, &["zone-1"])],
                    ..Default::default()
                },
            }),
            2 => p.affinity.anti_required.push(PodAffinityTerm {
                label_selector: Some(selector("job", &name)),
                topology_key: "kubernetes.io/hostname".into(),
                ..Default::default()
            }),
            3 => p.affinity.pod_preferred.push(WeightedPodAffinityTerm {
                weight: 10,
                term: PodAffinityTerm {
                    label_selector: Some(selector("app", "svc-1")),
                    topology_key: "topology.kubernetes.io/zone".into(),
                    ..Default::default()
                },
            }),
            4 => p.topology_spread.push(TopologySpreadConstraint {
                max_skew: 1,
                topology_key: "topology.kubernetes.io/zone".into(),
                when_unsatisfiable: if rng.below(2) == 0 {
                    WhenUnsatisfiable::DoNotSchedule
                } else {
                    WhenUnsatisfiable::ScheduleAnyway
                },
                label_selector: Some(selector("job", &name)),
                min_domains: 1,
                ignore_node_affinity: false,
                honor_node_taints: false,
                match_label_keys: Vec::new(),
            }),
            5 => p.tolerations.push(Toleration {
                key: "spot".into(),
                op: TolerationOp::Equal,
                value: "true".into(),
                effect: Some(TaintEffect::PreferNoSchedule),
            }),
            6 => p.affinity.anti_required.push(PodAffinityTerm {
                label_selector: Some(selector("app", "svc-2")),
                topology_key: "kubernetes.io/hostname".into(),
                ..Default::default()
            }),
            _ => {}
        }
        out.push(Delta::Pod(p));
    }
    out
}

/// The cluster after `d`, for the next cycle: bound pods run on their node, PodGroups take
/// their new phase and conditions, two thirds of the terminating pods are gone (the others have
/// a longer grace period, so tasks pipelined onto them this cycle still wait for them in the
/// next), every 5th running pod starts terminating, and `new_jobs` more pending jobs arrive
/// (numbered from `first_job`). Pipelined tasks stay Pending pods: Volcano does not persist the
/// Pipelined state.
pub fn next_cycle(c: &Cluster, d: &Decisions, rng_seed: u64, first_job: usize, new_jobs: usize) -> Vec<Delta> {
    let mut rng = SeededRng::new(rng_seed);
    let mut out = Vec::new();
    let bound: std::collections::HashMap<_, _> = d.binds.iter().map(|b| (b.pod, b.node)).collect();
    for (id, p) in c.pods() {
        let s = &p.spec;
        if let Some(&n) = bound.get(&id) {
            let mut s = s.clone();
            s.node_name = c.node(n).map(|n| n.spec.name.clone()).unwrap_or_default();
            s.phase = PodPhase::Running;
            out.push(Delta::Pod(s));
        } else if s.deleting && rng.below(3) != 0 {
            out.push(Delta::PodDeleted { namespace: s.namespace.clone(), name: s.name.clone() });
        } else if s.phase == PodPhase::Running && !s.deleting && rng.below(5) == 0 {
            let mut s = s.clone();
            s.deleting = true;
            out.push(Delta::Pod(s));
        }
    }
    for st in &d.pod_groups {
        if let Some(g) = c.pod_group(st.group) {
            let mut g = g.spec.clone();
            g.phase = st.phase;
            g.conditions = st.conditions.clone();
            out.push(Delta::PodGroup(g));
        }
    }
    for j in first_job..first_job + new_jobs {
        out.extend(job(&mut rng, j, 1_000_000 + j as i64));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::SchedulerConf;
    use crate::{run_cycle, CycleOptions};

    /// The tasks pipelined in an earlier cycle are what that cycle would have left: with no
    /// other pending work, the plain scan (class path off) pipelines every one of them again,
    /// each onto a node whose training pod is terminating, none is allocated (no node has
    /// their GPUs idle), and their PodGroups stay Inqueue.
    #[test]
    fn earlier_pipelined_tasks_wait_for_releasing_gpus_again() {
        for seed in 1..=4 {
            let spec = MixedSpec { nodes: 120, jobs: 0, running_per_node: 2, seed };
            let mut c = Cluster::new();
            for d in generate(&spec) {
                c.apply(d).expect("generated objects are valid");
            }
            let pipe: Vec<_> = c.pods().filter(|(_, p)| p.spec.namespace == "team-p").map(|(id, _)| id).collect();
            assert!(pipe.len() >= 3, "seed {seed}: only {} pipelined tasks generated", pipe.len());
            let mut conf = SchedulerConf::default();
            conf.options.class_cache = false;
            let d = run_cycle(&c, &conf, &CycleOptions { seed, cycle: 1, now_ms: 0 });
            assert!(d.binds.iter().all(|b| !pipe.contains(&b.pod)), "seed {seed}: a pipelined task fitted idle GPUs");
            for id in &pipe {
                let name = &c.pod(*id).expect("pod").spec.name;
                let on = d.pipelined.iter().find(|x| x.pod == *id).map(|x| x.node);
                let Some(n) = on else { panic!("seed {seed}: {name} was not pipelined again") };
                let node = &c.node(n).expect("node").spec.name;
                let draining = c.pods().any(|(_, p)| p.spec.node_name == *node && p.spec.deleting && p.spec.namespace == "train");
                assert!(draining, "seed {seed}: {name} pipelined onto {node}, which releases no GPUs");
            }
            for st in d.pod_groups.iter().filter(|st| c.pod_group(st.group).is_some_and(|g| g.spec.namespace == "team-p")) {
                assert_eq!(st.phase, PodGroupPhase::Inqueue, "seed {seed}");
            }
        }
    }
}
