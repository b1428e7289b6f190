//! `numa-aware` (Volcano `plugins/numaaware`, volcano-behaviour.md §3): places Guaranteed pods
//! where the kubelet's topology manager will admit them. A node takes part when its
//! Numatopology (`nodeinfo.volcano.sh/v1alpha1`, [`crate::model::NumatopologySpec`]) says the
//! CPU manager policy is `static`.
//!
//! Predicate (Volcano `predicateFn`), for Guaranteed pods only:
//! - a pod whose `volcano.sh/numa-topology-policy` is set and not `none` needs a node with a
//!   Numatopology (`numa info is empty`), a static CPU manager (`cpu manager policy isn't
//!   static`), the same topology manager policy (`task topology policy[..] is different with
//!   node[..]`) and free CPUs (`cpu allocatable map is empty`);
//! - any other pod is checked only on nodes with a Numatopology, a static CPU manager and a
//!   topology manager policy other than `none`;
//! - then container by container, Volcano's cpumanager hint provider gives the NUMA nodes
//!   that could hold its whole CPUs and the node's policy decides
//!   ([`super::numa_cpus::Policy`]); a container refused fails the node
//!   (`container .. cannot be assigned by numa`, unresolvable). Each admitted container's CPUs
//!   are taken from a copy of the node's free CPUs before the next container is checked.
//!
//! Node order (Volcano `batchNodeOrderFn`), for pods with a policy other than `none`: the
//! number of NUMA nodes the pod's CPUs would span on each node, normalized to 0..100 with fewer
//! NUMA nodes scoring higher (`util.NormalizeScore(100, reverse)`), times `weight` (default 1).
//!
//! Session state (Volcano `nodeResSets`): each node's free CPUs start from its
//! Numatopology's `numares.cpu.allocatable`; the event handler takes the CPUs a task is given
//! when it is allocated or pipelined and gives them back when it is deallocated or evicted. The
//! Statement fires these handlers for every operation and for every undo, so a discarded
//! statement leaves the free CPUs exactly as they were.
//!
//! Across sessions (Volcano `AddUnassignedNumaPods` at session close): the CPUs given to the
//! session's binds go into the decisions ([`crate::decision::Decisions::numa_assignments`]);
//! the driver applies them to the cluster ([`crate::cluster::Delta::PodNumaAssumed`]), which
//! keeps them on the node until the node's Numatopology lists the pod
//! (`spec.podAllocations`), or the pod is deleted, ends or leaves the node
//! ([`crate::cluster::numa_assumed`]). At session open the plugin takes them from the node's
//! free CPUs ([`crate::cluster::Cluster::numa_pre_occupied`]), so a later cycle does not give
//! them out again before the exporter has caught up. Volcano also hands over pipelined tasks'
//! CPUs; Basalt only binds' (a pipelined pod is not on the node, and Volcano's entry for it
//! stays until the pod is deleted).
//!
//! The topology decision annotation (`volcano.sh/topology-decision`) is not written: Volcano's
//! plugin does not write it either.

use super::k8s::PodCtx;
use super::numa_cpus::{CpuSet, Policy, Topology};
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::decision::NumaAssignment;
use crate::model::{NumaPolicyName, NumatopologySpec, PodNuma};
use crate::session::fit::Reason;
use crate::session::node_view::NodeView;
use crate::session::notes::CloseNotes;
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;
use std::collections::HashMap;

/// The plugin's name (Volcano `numaaware.PluginName`).
pub const NAME: &str = "numa-aware";

/// The `arguments` keys numa-aware reads.
pub const ARGS: &[ArgSpec] = &[ArgSpec::new("weight", ArgKind::Int, "1")];

/// One node's NUMA state in the session.
struct NodeNuma<'a> {
    spec: &'a NumatopologySpec,
    topo: Topology,
    /// Free CPUs (`None`: the Numatopology has no `cpu` entry in `numares`).
    free: Option<CpuSet>,
    policy: Policy,
}

/// The numa-aware plugin.
pub struct NumaAware<'a> {
    weight: i64,
    /// Per node row.
    nodes: Vec<Option<NodeNuma<'a>>>,
    /// Per task row: what the plugin reads of its pod.
    tasks: Vec<Option<&'a PodNuma>>,
    /// CPUs each task allocated or pipelined in this session holds, and on which node.
    held: HashMap<u32, (NodeIdx, CpuSet)>,
}

/// What the predicate decided for a task on a node.
enum Fit {
    /// The plugin does not check this pair (Volcano returns nil without an assignment).
    Skip,
    /// Admitted with these CPUs.
    Cpus(CpuSet),
}

impl<'a> NumaAware<'a> {
    /// Reads `weight` (Volcano `numaaware.NumaTopoWeight`, default 1) and each node's
    /// Numatopology.
    pub fn open(s: &State<'a>, a: &Arguments) -> Self {
        let weight = a.int("weight").unwrap_or(1);
        if !s.cluster.has_numa() {
            return NumaAware { weight, nodes: Vec::new(), tasks: Vec::new(), held: HashMap::new() };
        }
        let nodes = s
            .nodes
            .rec
            .iter()
            .map(|r| {
                let spec = s.cluster.numatopology(&r.spec.name)?;
                let topo = Topology::new(spec);
                let mut free = spec.cpu_allocatable.as_deref().map(|ids| topo.set_of(ids));
                // Volcano `RefreshNumaSchedulerInfoByCrd`: CPUs of pods bound in earlier
                // cycles that the exporter does not list yet are not free.
                if let Some(f) = &mut free {
                    f.remove_all(&topo.set_of(&s.cluster.numa_pre_occupied(&r.spec.name)));
                }
                Some(NodeNuma { policy: Policy::parse(&spec.topology_manager_policy), spec, topo, free })
            })
            .collect();
        let tasks = s.tasks.rec.iter().map(|r| s.cluster.pod_numa(&r.spec.namespace, &r.spec.name)).collect();
        NumaAware { weight, nodes, tasks, held: HashMap::new() }
    }

    fn pod(&self, t: TaskIdx) -> Option<&'a PodNuma> {
        self.tasks.get(t.ix()).copied().flatten()
    }

    fn node(&self, n: NodeIdx) -> Option<&NodeNuma<'a>> {
        self.nodes.get(n.ix()).and_then(Option::as_ref)
    }

    /// Volcano `predicateFn` with the CPUs it would assign.
    fn fit(&self, t: TaskIdx, n: NodeIdx) -> Result<Fit, Reason> {
        let Some(pod) = self.pod(t).filter(|p| p.guaranteed) else { return Ok(Fit::Skip) };
        let node = self.node(n);
        let with_policy = !(pod.policy.is_empty() || pod.policy == "none");
        // filterNodeByPolicy
        if with_policy {
            let node = node.ok_or(Reason::NumaInfoEmpty)?;
            if node.spec.cpu_manager_policy != "static" {
                return Err(Reason::NumaCpuPolicyNotStatic);
            }
            if pod.policy != node.spec.topology_manager_policy {
                return Err(Reason::NumaPolicyMismatch(
                    NumaPolicyName::parse(&pod.policy),
                    NumaPolicyName::parse(&node.spec.topology_manager_policy),
                ));
            }
            if node.free.as_ref().is_none_or(CpuSet::is_empty) {
                return Err(Reason::NumaCpuAllocatableEmpty);
            }
        }
        let Some(node) = node else { return Ok(Fit::Skip) };
        let tm = node.spec.topology_manager_policy.as_str();
        if node.spec.cpu_manager_policy != "static" || (!with_policy && (tm == "none" || tm.is_empty())) {
            return Ok(Fit::Skip);
        }
        let n_cpus = node.topo.cpus.len();
        let mut free = node.free.clone();
        let mut all = CpuSet::empty(n_cpus);
        let numa_nodes = node.topo.all_numa();
        for (i, c) in pod.containers.iter().enumerate() {
            // The cpumanager provider: no preference without a whole-CPU request or a cpu entry.
            let hints = match (&free, c.cpus) {
                (Some(f), req) if req > 0 => {
                    let mut avail = f.clone();
                    avail.remove_all(&node.topo.reserved);
                    Some(node.topo.cpu_hints(&avail, req as usize))
                }
                _ => None,
            };
            let (best, admit) = node.policy.predicate(numa_nodes, hints.as_deref());
            if !admit {
                return Err(Reason::NumaContainer(i.min(u16::MAX as usize) as u16));
            }
            let empty = CpuSet::empty(n_cpus);
            let got = node.topo.allocate(free.as_ref().unwrap_or(&empty), c.cpus as usize, best);
            if let Some(f) = &mut free {
                f.remove_all(&got);
            }
            all.union_with(&got);
        }
        Ok(Fit::Cpus(all))
    }

    /// Whether the pod asks for a topology policy other than `none` (Volcano scores only those).
    fn scored(&self, t: TaskIdx) -> bool {
        self.pod(t).is_some_and(|p| !(p.policy.is_empty() || p.policy == "none"))
    }
}

plugin_impl! {
    impl<'a> for NumaAware<'a> {
        fn name(&self) -> &'static str {
            NAME
        }
        fn predicate(&self, _s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.fit(t, n).map(|_| ())
        }
        fn batch_node_order(&self, _s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, nodes: &[NodeIdx], out: &mut [f64]) {
            if !self.scored(t) {
                return;
            }
            // Volcano scores only tasks with an assignment on some node.
            let spans: Vec<Option<i64>> = nodes
                .iter()
                .map(|&n| match (self.fit(t, n), self.node(n)) {
                    (Ok(Fit::Cpus(c)), Some(node)) => Some(i64::from(node.topo.numa_of(&c).count_ones())),
                    _ => None,
                })
                .collect();
            if spans.iter().all(Option::is_none) {
                return;
            }
            let max = spans.iter().map(|s| s.unwrap_or(0)).max().unwrap_or(0);
            for (o, s) in out.iter_mut().zip(&spans) {
                let score = if max == 0 { 100 } else { 100 - 100 * s.unwrap_or(0) / max };
                *o += (score * self.weight) as f64;
            }
        }
        fn on_allocate(&mut self, s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            let Some(n) = s.tasks.node_of(t) else { return };
            // Already holding CPUs there (a pipelined task allocated): keep them, as Volcano's
            // set difference with the same assignment changes nothing.
            if self.held.get(&t.0).is_some_and(|(at, _)| *at == n) {
                return;
            }
            let Ok(Fit::Cpus(cpus)) = self.fit(t, n) else { return };
            if let Some(free) = self.nodes.get_mut(n.ix()).and_then(Option::as_mut).and_then(|x| x.free.as_mut()) {
                free.remove_all(&cpus);
            }
            self.held.insert(t.0, (n, cpus));
        }
        fn on_deallocate(&mut self, _s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            let Some((n, cpus)) = self.held.remove(&t.0) else { return };
            if let Some(free) = self.nodes.get_mut(n.ix()).and_then(Option::as_mut).and_then(|x| x.free.as_mut()) {
                free.union_with(&cpus);
            }
        }
        fn on_close(&mut self, s: &State<'a>, notes: &mut CloseNotes) {
            // Volcano `OnSessionClose` → `AddUnassignedNumaPods`, for the committed binds.
            for &(t, n) in &s.binds {
                let Some((at, cpus)) = self.held.get(&t.0) else { continue };
                let Some(node) = self.node(n).filter(|_| *at == n && !cpus.is_empty()) else { continue };
                notes.numa_assignments.push(NumaAssignment {
                    pod: s.tasks.pod[t.ix()],
                    node: s.nodes.id[n.ix()],
                    cpus: node.topo.ids(cpus),
                });
            }
        }
        fn class_key(&self, _s: &State<'a>, t: TaskIdx) -> Option<u64> {
            // A checked pod's result depends on the free CPUs, which the class path does not
            // track; other pods pass everywhere.
            if self.nodes.iter().any(Option::is_some) && self.pod(t).is_some_and(|p| p.guaranteed) {
                None
            } else {
                Some(0)
            }
        }
    }
}

impl NumaAware<'_> {
    /// The functions this plugin registers (Volcano's `AddPredicateFn`, `AddBatchNodeOrderFn`
    /// and `AddEventHandler`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::Predicate.bit() | F::BatchNodeOrder.bit() | F::EventHandler.bit()
    };
}
