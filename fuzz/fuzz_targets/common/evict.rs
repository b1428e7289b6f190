//! The eviction driver shared by `session_preempt`, `session_reclaim` and
//! `session_capacity_hierarchy` (issue 11): production-like clusters from
//! `basalt_core::workload_mixed` (full nodes of Running and Releasing pods, pending gangs, four
//! queues with capability and guarantee), sized and seeded by the input, each PodGroup and its
//! pods given one of four PriorityClasses, nodes cut to 8 CPUs so the pending jobs must take room.
//! The capacity target also turns the queues into a tree (`root`, two team queues, the four
//! generated queues as leaves under either) with limits from the input.
//!
//! Each input runs one to three cycles; each cycle opens a session, runs the conf's actions one by
//! one, checks the session against the invariants below, closes it, compares the decisions with a
//! second run on an independent copy (same input and seed, same decisions), and applies them the
//! way a cluster reacts: bound pods run, pipelined preemptors carry their nominated node, an evicted
//! pod is gone in the next cycle (the simulator's default lifecycle, the conformance contract),
//! while the workload's own Releasing pods stay terminating for the whole run. Before the cycles a
//! Statement takes allocate, pipeline, un-pipeline and evict operations and is discarded: the
//! session must be exactly as before.
//!
//! Invariants (every family):
//! - no pod is evicted twice in a cycle, nor again in a later cycle once it was evicted;
//! - every victim was Bound or Running and preemptable when the session opened;
//! - every eviction has a preemptor pipelined on the victim's node with `eviction_occurred`;
//! - the decisions' `preemption` counters agree with the evictions (a committed transaction per
//!   action with evictions, no more transactions than evictions).
//!
//! preempt (drf's Preemptable off: with Volcano's tier rule drf may take a victim of equal
//! priority by share, see `core/tests/preempt_properties.rs`): the preemptor is of the victim's
//! queue; and, when priority is the last deciding plugin of the first tier
//! ([`priority_decides`]), of a job of higher priority, or of the same job with a higher task
//! priority. With Volcano's default order (priority first) master's tier rule can legally take
//! a victim of equal or higher priority, so only the queue is checked then.
//!
//! reclaim (proportion): the preemptor is of another queue; the victim was Running, of a
//! reclaimable queue that, just before the eviction, held more than its deserved share on some
//! dimension other than `pods` (deserved read from proportion at open, allocated as reclaim
//! started, Pipelined tasks included as proportion counts them, minus the earlier victims).
//!
//! reclaim, every family that runs it (Volcano master checks the reclaimer's fit before each
//! eviction, so a node that already fits evicts nothing, and evicts no more than it needs): on
//! every node where reclaim evicted, the last victim there was needed — some dimension that a
//! task reclaim pipelined on the node asks for has less FutureIdle at the end of the session than
//! that victim's request. (Had the last reclaimer fitted without that victim, the node's
//! FutureIdle would still hold the victim's request on every dimension the reclaimer asks for;
//! later reclaimers pipelined there without evicting only lower it.) Nodes where reclaim
//! pipelined without evicting are allowed: an empty victim list is valid (`ValidateVictims`).
//!
//! capacity hierarchy: reclaim never takes a queue below min(guarantee, what it held) on a
//! guaranteed dimension, where what a queue holds counts its Pipelined tasks as the plugin's
//! `allocated` does (checked at the end of the session); a queue whose subtree allocation was
//! within its `spec.capability` on a dimension when the session opened is still within it when
//! reclaim starts (allocate and preempt check the queue and every ancestor), and a leaf queue
//! within it then is still within it at the end (reclaim's `Preemptive` checks only the
//! reclaimer's own queue, in Volcano master too, so a parent can go over its capability there
//! when its children share the room above their guarantees); when a job sits in a queue that
//! has children, the plugin refuses
//! everything: no bind, no pipeline, no eviction.

use arbitrary::Arbitrary;
use basalt_core::framework::fingerprint::NodeTasks;
use basalt_core::framework::Session;
use basalt_core::model::{PriorityClassSpec, QueueSpec};
use basalt_core::resource::PODS;
use basalt_core::session::tables::{NodeIdx, QueueIdx, TaskIdx, TaskStatus};
use basalt_core::workload_mixed::{generate, MixedSpec};
use basalt_core::{Cluster, CycleOptions, Decisions, Delta, SchedulerConf};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Which action family a target fuzzes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvictFamily {
    /// `enqueue, allocate, preempt` with priority, gang, conformance, drf (Preemptable off),
    /// predicates, proportion, nodeorder, binpack; topology-aware preemption from the input.
    Preempt,
    /// `enqueue, allocate, reclaim` with proportion in the first tier.
    Reclaim,
    /// `enqueue, allocate, preempt, reclaim` with `capacity` (`enableHierarchy: true`,
    /// `ancestorReclaimLevel` from the input) on a queue tree, in the first tier: with Volcano's
    /// tier rule a tier whose plugins agree on victims decides alone, so with `capacity` in the
    /// second tier gang and conformance would choose reclaim's victims and the guarantee would
    /// not be consulted (the first finding of this target, as Volcano behaves).
    CapacityHierarchy,
}

/// One fuzz case of the eviction targets.
#[derive(Arbitrary, Debug)]
pub struct EvictInput {
    /// Nodes: 2 + this % 14.
    pub nodes: u8,
    /// Pending jobs: 2 + this % 28.
    pub jobs: u8,
    /// Running pods per node at the start: 2 + this % 5.
    pub running_per_node: u8,
    /// Seed of the generator and of the cycles.
    pub seed: u64,
    /// Seed of the PriorityClass each PodGroup gets.
    pub class_seed: u64,
    /// Cycles: 1 + this % 3.
    pub cycles: u8,
    /// Running pods' single-pod PodGroups get `minMember: 0` (gang lets them go) instead of 1.
    pub running_min_zero: bool,
    /// preempt: `enableTopologyAwarePreemption`.
    pub topology_aware: bool,
    /// capacity: per generated queue (prod, batch, dev, gpu): parent (root, team-a, team-b by
    /// this % 3), guarantee, deserved and capability cpu (each % 9 eighths of the cluster's cpu;
    /// 0 = unset).
    pub leaves: [(u8, u8, u8, u8); 4],
    /// capacity: team-a and team-b: guarantee, deserved and capability cpu, as above.
    pub teams: [(u8, u8, u8); 2],
    /// capacity: `ancestorReclaimLevel` = this % 3.
    pub ancestor_reclaim_level: u8,
    /// capacity: put the first pending job into team-a (a parent queue when a leaf chose it).
    pub job_in_team: bool,
    /// preempt and capacity: the first tier's order. `false`: Volcano's default, priority, gang,
    /// conformance (then capacity). `true`: gang, conformance (capacity), then priority. See
    /// [`priority_decides`] for what the order changes in the checks.
    pub priority_last: bool,
    /// Statement operations before the cycles: (task, node, op % 4 = allocate, pipeline with
    /// eviction, un-pipeline, evict).
    pub picks: Vec<(u16, u16, u8)>,
}

const CLASSES: [(&str, i32); 4] = [("p0", 0), ("p1", 100), ("p2", 1000), ("p3", 10000)];
const GIB: i64 = 1 << 30;
const NODE_CPU: i64 = 8000;

/// Whether every preempt victim is, by Volcano's tier rule alone, in the priority plugin's list
/// (a lower-priority job, or within a job a lower task priority), so the driver can check it.
///
/// Volcano master's `Preemptable` (`framework/session_plugins.go`, volcano-behaviour.md §1.5)
/// intersects the lists of a tier's plugins in order, and an intersection that two plugins empty
/// is taken as "not started" by the next plugin, whose list is then taken whole. With priority
/// first (Volcano's default order) and its list disjoint from gang's, conformance's list decides,
/// and a victim of equal or higher priority is legal: Basalt follows that rule
/// (`Plugins::victims`), so the driver checks only the queue then. With priority the last
/// deciding plugin of the first tier, every non-empty result is its list or a subset of it
/// (a plugin that returns no victims ends the tier; the second tier has no Preemptable function
/// on: drf's is off).
pub fn priority_decides(family: EvictFamily, input: &EvictInput) -> bool {
    family != EvictFamily::Reclaim && input.priority_last
}

fn first_tier(input: &EvictInput, rest: &str) -> String {
    if input.priority_last {
        format!("  - name: gang\n  - name: conformance\n{rest}  - name: priority\n")
    } else {
        format!("  - name: priority\n  - name: gang\n  - name: conformance\n{rest}")
    }
}

fn conf_text(family: EvictFamily, input: &EvictInput) -> String {
    match family {
        EvictFamily::Preempt => format!(
            "actions: \"enqueue, allocate, preempt\"\nconfigurations:\n- name: preempt\n  arguments:\n    enableTopologyAwarePreemption: {}\ntiers:\n- plugins:\n{}- plugins:\n  - name: overcommit\n  - name: drf\n    enablePreemptable: false\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n",
            input.topology_aware,
            first_tier(input, "")
        ),
        EvictFamily::Reclaim => "actions: \"enqueue, allocate, reclaim\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n  - name: proportion\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: nodeorder\n  - name: binpack\n".into(),
        EvictFamily::CapacityHierarchy => format!(
            "actions: \"enqueue, allocate, preempt, reclaim\"\ntiers:\n- plugins:\n{}- plugins:\n  - name: drf\n    enablePreemptable: false\n  - name: predicates\n  - name: nodeorder\n",
            first_tier(
                input,
                &format!(
                    "  - name: capacity\n    enableHierarchy: true\n    arguments:\n      ancestorReclaimLevel: {}\n",
                    input.ancestor_reclaim_level % 3
                )
            )
        ),
    }
}

fn cpu(v: u8, total: i64) -> basalt_core::resource::ResourceList {
    let v = (v % 9) as i64;
    if v == 0 {
        Default::default()
    } else {
        [("cpu".to_string(), v * total / 8)].into()
    }
}

/// The cluster of the input as deltas.
fn deltas(family: EvictFamily, input: &EvictInput) -> Vec<Delta> {
    let spec = MixedSpec {
        nodes: 2 + (input.nodes % 14) as usize,
        jobs: 2 + (input.jobs % 28) as usize,
        running_per_node: 2 + (input.running_per_node % 5) as usize,
        seed: input.seed,
    };
    let total = spec.nodes as i64 * NODE_CPU;
    let mut out: Vec<Delta> = CLASSES
        .iter()
        .map(|&(name, value)| Delta::PriorityClass(PriorityClassSpec { name: name.into(), value, global_default: false }))
        .collect();
    let class = |group: &str| {
        let h = group.bytes().fold(input.class_seed, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
        CLASSES[(h >> 7) as usize % CLASSES.len()].0.to_string()
    };
    let hierarchy = family == EvictFamily::CapacityHierarchy;
    if hierarchy {
        out.push(Delta::Queue(QueueSpec { name: "root".into(), weight: 1, reclaimable: true, ..Default::default() }));
        for (i, &(g, d, c)) in input.teams.iter().enumerate() {
            out.push(Delta::Queue(QueueSpec {
                name: ["team-a", "team-b"][i].into(),
                weight: 1,
                reclaimable: true,
                parent: "root".into(),
                guarantee: cpu(g, total),
                deserved: cpu(d, total),
                capability: cpu(c, total),
                ..Default::default()
            }));
        }
    }
    let mut first_pending = true;
    let mut leaf = 0;
    for mut d in generate(&spec) {
        match &mut d {
            Delta::PodGroup(g) => {
                g.priority_class_name = class(&g.name);
                if g.name.starts_with("run-") {
                    g.min_member = if input.running_min_zero { 0 } else { 1 };
                } else if hierarchy && input.job_in_team && first_pending {
                    g.queue = "team-a".into();
                    first_pending = false;
                }
            }
            Delta::Node(n) => {
                for r in [&mut n.allocatable, &mut n.capacity] {
                    r.insert("cpu".into(), NODE_CPU);
                    r.insert("memory".into(), 32 * GIB);
                }
            }
            Delta::Pod(p) => {
                if let Some(g) = &p.group {
                    p.priority_class_name = class(g);
                }
            }
            Delta::Queue(q) if hierarchy => {
                let (parent, g, de, c) = input.leaves[leaf % 4];
                leaf += 1;
                q.parent = ["root", "team-a", "team-b"][(parent % 3) as usize].into();
                q.guarantee = cpu(g, total);
                q.deserved = cpu(de, total);
                q.capability = cpu(c, total);
            }
            _ => {}
        }
        out.push(d);
    }
    out
}

fn apply_all(c: &mut Cluster, ds: &[Delta]) {
    for d in ds {
        // Refused objects are part of the input space.
        let _ = c.apply(d.clone());
    }
}

/// What the cluster does in answer to `d` (the simulator's default lifecycle,
/// `runtime/src/sim/lifecycle.rs`): bound pods run; pipelined preemptors carry their nominated
/// node; pods evicted now are gone in the next cycle; pods that arrived terminating stay so.
fn reactions(c: &Cluster, d: &Decisions) -> Vec<Delta> {
    let mut out = Vec::new();
    for b in &d.binds {
        if let (Some(p), Some(n)) = (c.pod(b.pod), c.node(b.node)) {
            let mut spec = p.spec.clone();
            spec.node_name = n.spec.name.clone();
            spec.phase = basalt_core::model::PodPhase::Running;
            out.push(Delta::Pod(spec));
        }
    }
    for x in d.pipelined.iter().filter(|x| x.nominated) {
        if let (Some(p), Some(n)) = (c.pod(x.pod), c.node(x.node)) {
            let mut spec = p.spec.clone();
            spec.nominated_node_name = n.spec.name.clone();
            out.push(Delta::Pod(spec));
        }
    }
    for e in &d.evictions {
        if let Some(p) = c.pod(e.pod) {
            out.push(Delta::PodDeleted { namespace: p.spec.namespace.clone(), name: p.spec.name.clone() });
        }
    }
    for s in &d.pod_groups {
        if let Some(g) = c.pod_group(s.group) {
            let mut spec = g.spec.clone();
            spec.phase = s.phase;
            spec.conditions = s.conditions.clone();
            out.push(Delta::PodGroup(spec));
        }
    }
    out
}

/// Runs one fuzz case of `family`.
pub fn run(input: &EvictInput, family: EvictFamily) {
    let text = conf_text(family, input);
    let conf = SchedulerConf::parse(&text).expect("the driver's conf parses").0;
    let initial = deltas(family, input);
    if std::env::var_os("BASALT_FUZZ_DUMP").is_some() {
        eprintln!("conf:\n{text}\ndeltas: {initial:#?}");
    }
    let (mut a, mut b) = (Cluster::new(), Cluster::new());
    apply_all(&mut a, &initial);
    apply_all(&mut b, &initial);
    discard_restores(&a, &conf, &input.picks);
    let mut evicted_before: HashSet<(String, String)> = HashSet::new();
    let stats = std::env::var_os("BASALT_FUZZ_STATS").is_some();
    for i in 0..(1 + input.cycles % 3) as u64 {
        let opts = CycleOptions { seed: input.seed.wrapping_add(i), cycle: i + 1, now_ms: 0 };
        let d = checked_cycle(&a, &conf, &opts, family, priority_decides(family, input), &evicted_before);
        assert_eq!(d, basalt_core::run_cycle(&b, &conf, &opts), "cycle {}: same input and seed, different decisions", i + 1);
        if stats {
            eprintln!(
                "stats cycle={} binds={} evictions={} pipelined={} attempts={}",
                i + 1,
                d.binds.len(),
                d.evictions.len(),
                d.pipelined.len(),
                d.preemption.attempts
            );
        }
        for e in &d.evictions {
            let p = &a.pod(e.pod).expect("victims exist").spec;
            evicted_before.insert((p.namespace.clone(), p.name.clone()));
        }
        let ra = reactions(&a, &d);
        let rb = reactions(&b, &d);
        apply_all(&mut a, &ra);
        apply_all(&mut b, &rb);
    }
}

/// Per-queue sums of `req` over the allocated-status and Pipelined tasks: the queue plugins'
/// `attr.allocated` (Volcano's proportion and capacity add a task's request on every
/// AllocateFunc, which a Statement Pipeline calls too, so a pipelined preemptor counts in its
/// queue's allocated and in the guarantee and deserved checks of reclaim).
fn queue_allocated(ssn: &Session<'_>) -> Vec<Vec<i64>> {
    let s = &ssn.state;
    let dims = s.dims;
    let mut out = vec![vec![0i64; dims]; s.queues.len];
    for t in (0..s.tasks.len).map(|i| TaskIdx(i as u32)) {
        let st = s.tasks.status()[t.ix()];
        if let (Some(j), true) = (s.tasks.job_of(t), st.allocated() || st == TaskStatus::Pipelined) {
            let q = s.jobs.queue[j.ix()] as usize;
            for (d, &r) in s.tasks.req(t, dims).iter().enumerate() {
                out[q][d] += r;
            }
        }
    }
    out
}

/// One cycle, action by action, with the invariants checked on the session; returns its
/// decisions.
fn checked_cycle(
    c: &Cluster,
    conf: &SchedulerConf,
    opts: &CycleOptions,
    family: EvictFamily,
    priority_decides: bool,
    evicted_before: &HashSet<(String, String)>,
) -> Decisions {
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, c, conf, opts, &basalt_core::plugins::REGISTRY);
    let dims = ssn.state.dims;
    let start_status: Vec<TaskStatus> = ssn.state.tasks.status().to_vec();
    let start_tree: Vec<i64> = ssn.state.queues.acct.tree_allocated().to_vec();
    let deserved: Vec<Vec<f64>> = if family == EvictFamily::Reclaim {
        let p = basalt_core::plugins::proportion::Proportion::open(&ssn.state);
        (0..ssn.state.queues.len).map(|q| p.deserved(QueueIdx(q as u32)).to_vec()).collect()
    } else {
        Vec::new()
    };
    // Evictions per action: (index in state.evictions where the action started, allocated then).
    let mut reclaim_start: Option<(usize, Vec<Vec<i64>>)> = None;
    // The queues' subtree allocation as reclaim started (see the capability check below).
    let mut reclaim_tree: Option<Vec<i64>> = None;
    // Task statuses as reclaim started (which tasks reclaim pipelined).
    let mut reclaim_status: Option<Vec<TaskStatus>> = None;
    for action in &conf.actions {
        if *action == basalt_core::conf::ActionKind::Reclaim {
            reclaim_start = Some((ssn.state.evictions.len(), queue_allocated(&ssn)));
            reclaim_tree = Some(ssn.state.queues.acct.tree_allocated().to_vec());
            reclaim_status = Some(ssn.state.tasks.status().to_vec());
        }
        basalt_core::actions::execute(*action, &mut ssn);
    }
    let s = &ssn.state;
    let mut seen = HashSet::new();
    for (v, reason) in &s.evictions {
        let key = s.task_key(*v);
        assert!(seen.insert(*v), "{key} evicted twice in one cycle");
        let spec = &s.tasks.rec[v.ix()].spec;
        assert!(
            !evicted_before.contains(&(spec.namespace.clone(), spec.name.clone())),
            "{key} evicted again after an earlier cycle evicted it"
        );
        assert!(
            matches!(start_status[v.ix()], TaskStatus::Running | TaskStatus::Bound),
            "victim {key} was {:?}",
            start_status[v.ix()]
        );
        assert!(spec.preemptable, "victim {key} is not preemptable");
        let n = s.tasks.node_of(*v).expect("a victim stays on its node while Releasing");
        let vj = s.tasks.job_of(*v).expect("victims have a job");
        let vq = s.jobs.queue[vj.ix()];
        let preemptors: Vec<TaskIdx> = s
            .tasks_on(n)
            .filter(|&p| s.tasks.status()[p.ix()] == TaskStatus::Pipelined && s.tasks.eviction_occurred()[p.ix()])
            .collect();
        assert!(!preemptors.is_empty(), "no preemptor pipelined on the node of victim {key}");
        // Topology-aware preemption names its preemptor (`preempt by <ns>/<name>`, Volcano's
        // PrepareCandidate); that one must be among the pipelined preemptors.
        let named = reason.strip_prefix("preempt by ");
        if let Some(name) = named {
            assert!(
                preemptors.iter().any(|&p| s.task_key(p) == name),
                "victim {key} names preemptor {name}, which is not pipelined on its node"
            );
        }
        match if named.is_some() { "preempt" } else { reason.as_str() } {
            "preempt" => {
                let ok = preemptors.iter().any(|&p| {
                    let Some(pj) = s.tasks.job_of(p) else { return false };
                    s.jobs.queue[pj.ix()] == vq
                        && (!priority_decides
                            || if pj == vj {
                                s.tasks.priority[p.ix()] > s.tasks.priority[v.ix()]
                            } else {
                                s.jobs.priority[pj.ix()] > s.jobs.priority[vj.ix()]
                            })
                });
                if priority_decides {
                    assert!(ok, "no higher-priority preemptor of the same queue pipelined on the node of {key}");
                } else {
                    assert!(ok, "no preemptor of the same queue pipelined on the node of {key}");
                }
            }
            "reclaim" => {
                assert_eq!(start_status[v.ix()], TaskStatus::Running, "reclaim victim {key}");
                assert!(s.queues.rec[vq as usize].spec.reclaimable, "reclaim victim {key} of a queue that is not reclaimable");
                let ok = preemptors.iter().any(|&p| s.tasks.job_of(p).is_some_and(|pj| s.jobs.queue[pj.ix()] != vq));
                assert!(ok, "no reclaimer of another queue pipelined on the node of {key}");
            }
            other => panic!("eviction of {key} with reason {other:?} from {family:?}"),
        }
    }
    if let (Some((from, _)), Some(before)) = (&reclaim_start, &reclaim_status) {
        last_reclaim_victims_needed(&ssn, &s.evictions[*from..], before);
    }
    if let Some((from, allocated)) = &reclaim_start {
        let mut left = allocated.clone();
        for (v, _) in &s.evictions[*from..] {
            let vq = s.jobs.queue[s.tasks.job_of(*v).unwrap().ix()] as usize;
            let req = s.tasks.req(*v, dims);
            if family == EvictFamily::Reclaim {
                let over = (0..dims).any(|d| d != PODS && left[vq][d] as f64 > deserved[vq][d] + 0.1);
                assert!(over, "queue {vq} was within its deserved share when reclaim took {}", s.task_key(*v));
            }
            for d in 0..dims {
                left[vq][d] -= req[d];
            }
        }
        if family == EvictFamily::CapacityHierarchy {
            // At the end of the session rather than start − victims: reclaim's own pipelined
            // reclaimers may raise a victim queue's allocated between its evictions, and
            // capacity checks each eviction against the allocated of that moment.
            let end = queue_allocated(&ssn);
            let s = &ssn.state;
            for q in 0..s.queues.len {
                let g = &s.queues.rec[q].spec.guarantee;
                for d in 0..dims {
                    let name = c.resources.name(d);
                    let Some(&floor) = g.get(name) else { continue };
                    let floor = floor.min(allocated[q][d]);
                    assert!(
                        end[q][d] >= floor,
                        "reclaim took queue {} below its guarantee on {name}: {} < {floor}",
                        s.queues.rec[q].spec.name,
                        end[q][d]
                    );
                }
            }
        }
    }
    if family == EvictFamily::CapacityHierarchy {
        let a = &s.queues.acct;
        let job_in_parent = (0..s.jobs.len).any(|j| !a.leaf[s.jobs.queue[j] as usize]);
        let pipelined =
            (0..s.tasks.len).any(|t| s.tasks.status()[t] == TaskStatus::Pipelined && start_status[t] != TaskStatus::Pipelined);
        if job_in_parent || a.tree_error.is_some() {
            assert!(s.binds.is_empty() && s.evictions.is_empty() && !pipelined, "capacity is not ready, yet the session acted");
        }
        for q in 0..s.queues.len {
            let spec = &s.queues.rec[q].spec;
            for d in 0..dims {
                let name = c.resources.name(d);
                let Some(&cap) = spec.capability.get(name) else { continue };
                if d == PODS || cap <= 0 || spec.guarantee.get(name).is_some_and(|&g| g > cap) {
                    continue;
                }
                // Allocate and preempt check a queue and all its ancestors (capacity's
                // Allocatable); reclaim checks only the reclaimer's own queue (Volcano master's
                // Preemptive: within its real capability), so a parent whose children share the
                // room above their guarantees can go over its capability there, as in Volcano.
                let i = q * dims + d;
                let (before, after) = (start_tree[i], a.tree_allocated()[i]);
                let (mid, leaf) = (reclaim_tree.as_ref().map_or(after, |t| t[i]), a.leaf[q]);
                if before <= cap {
                    assert!(
                        mid <= cap,
                        "queue {} exceeds its capability on {name} before reclaim: {before} → {mid} > {cap}",
                        spec.name
                    );
                }
                if leaf && mid <= cap {
                    assert!(after <= cap, "leaf queue {} exceeds its capability on {name}: {mid} → {after} > {cap}", spec.name);
                }
            }
        }
    }
    let d = ssn.close();
    let victims: HashSet<_> = d.evictions.iter().map(|e| e.pod).collect();
    assert_eq!(victims.len(), d.evictions.len(), "a pod evicted twice in the decisions");
    let mut by_reason: HashMap<&str, u32> = HashMap::new();
    for e in &d.evictions {
        // The action of a topology-aware `preempt by <ns>/<name>` is `preempt`.
        let action = if e.reason.starts_with("preempt by ") { "preempt" } else { e.reason.as_str() };
        *by_reason.entry(action).or_default() += 1;
    }
    for (action, n) in &d.preemption.eviction_transactions {
        assert!(*n <= by_reason.get(action).copied().unwrap_or(0), "{action}: {n} transactions for {by_reason:?}");
    }
    for (reason, _) in by_reason {
        assert!(
            d.preemption.eviction_transactions.iter().any(|(a, n)| *a == reason && *n > 0),
            "{reason} evictions without a transaction"
        );
    }
    d
}

/// Reclaim evicts only what its reclaimer needs (see the module docs): on each node where
/// `victims` (reclaim's evictions, in order) took something, the last victim's request exceeds
/// the node's final FutureIdle on a dimension that a task reclaim pipelined there (`Pipelined`
/// now, not in `before`) asks for.
fn last_reclaim_victims_needed(ssn: &Session<'_>, victims: &[(TaskIdx, String)], before: &[TaskStatus]) {
    let s = &ssn.state;
    let dims = s.dims;
    let mut last: BTreeMap<u32, TaskIdx> = BTreeMap::new();
    for (v, _) in victims {
        let n = s.tasks.node_of(*v).expect("a victim stays on its node while Releasing");
        last.insert(n.0, *v);
    }
    for (&n, &v) in &last {
        let n = NodeIdx(n);
        let asked: Vec<bool> = (0..dims)
            .map(|d| {
                s.tasks_on(n).any(|p| {
                    s.tasks.status()[p.ix()] == TaskStatus::Pipelined
                        && before[p.ix()] != TaskStatus::Pipelined
                        && s.tasks.req(p, dims)[d] > 0
                })
            })
            .collect();
        let vreq = s.tasks.req(v, dims);
        let needed = (0..dims).any(|d| asked[d] && s.future_idle(n, d) < vreq[d]);
        assert!(
            needed,
            "reclaim evicted {} on node {} although its reclaimer fitted without it (FutureIdle at the end holds its request)",
            s.task_key(v),
            s.nodes.rec[n.ix()].spec.name
        );
    }
}

/// Statement discard restores exactly: allocate, pipeline (with or without eviction),
/// un-pipeline and evict inside one Statement, discard, compare.
fn discard_restores(c: &Cluster, conf: &SchedulerConf, picks: &[(u16, u16, u8)]) {
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, c, conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let (nt, nn) = (ssn.state.tasks.len as u32, ssn.state.nodes.len as u32);
    if nt == 0 || nn == 0 || picks.is_empty() {
        return;
    }
    let before = ssn.fingerprint(NodeTasks::InOrder);
    let mut st = ssn.statement();
    for &(t, n, op) in picks.iter().take(40) {
        let t = TaskIdx(t as u32 % nt);
        let n = NodeIdx(n as u32 % nn);
        let status = ssn.state.tasks.status()[t.ix()];
        match op % 4 {
            0 if status == TaskStatus::Pending => {
                ssn.allocate(&mut st, t, n);
            }
            1 if status == TaskStatus::Pending => ssn.pipeline_evicted(&mut st, t, n, op & 4 != 0),
            2 if status == TaskStatus::Pipelined => ssn.unpipeline(&mut st, t),
            3 if matches!(status, TaskStatus::Running | TaskStatus::Bound) => ssn.evict(&mut st, t, "preempt"),
            _ => {}
        }
    }
    ssn.discard(st);
    assert_eq!(before, ssn.fingerprint(NodeTasks::InOrder), "Statement discard did not restore the session");
    assert!(ssn.state.evictions.is_empty());
}
