//! `predicates` (volcano-behaviour.md §3): kube-scheduler's filters on interned data, in
//! Volcano's order: pod count, NodeUnschedulable, NodeAffinity, TaintToleration, NodePorts,
//! InterPodAffinity, PodTopologySpread. The first failing filter is the node's reason.
//!
//! Volume filters (NodeVolumeLimits, VolumeZone, VolumeBinding) and DRA are not modelled: the
//! cluster copy has no PVC/PV/StorageClass objects, so they always pass here.

use super::k8s::{self, PodCtx};
use crate::cluster::compile::{tolerated, CTaint};
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::intern::Sym;
use crate::model::TaintEffect;
use crate::resource::PODS;
use crate::session::fit::Reason;
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;

const NO_VOLUMES: &str = "the cluster copy has no volumes: the volume filters always pass";

/// The `arguments` keys predicates reads (Volcano's keys and defaults).
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("predicate.NodeAffinityEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.NodePortsEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.TaintTolerationEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.PodAffinityEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.PodTopologySpreadEnable", ArgKind::Bool, "true"),
    // A cache of predicate results: it changes no decision.
    ArgSpec::new("predicate.CacheEnable", ArgKind::Bool, "false"),
    ArgSpec::new("predicate.NodeVolumeLimitsEnable", ArgKind::Bool, "true").ignored(NO_VOLUMES),
    ArgSpec::new("predicate.VolumeZoneEnable", ArgKind::Bool, "true").ignored(NO_VOLUMES),
    ArgSpec::new("predicate.VolumeBindingEnable", ArgKind::Bool, "true").ignored(NO_VOLUMES),
    ArgSpec::new("volumebinding.bindTimeoutSeconds", ArgKind::Int, "600").ignored(NO_VOLUMES),
    ArgSpec::new("volumebinding.weight", ArgKind::Int, "1").ignored(NO_VOLUMES),
    ArgSpec::new("volumebinding.shape", ArgKind::Str, "\"\"").ignored(NO_VOLUMES),
    ArgSpec::new("predicate.DynamicResourceAllocationEnable", ArgKind::Bool, "false")
        .ignored("dynamic resource allocation is not modelled"),
    ArgSpec::new("dynamicresources.filterTimeoutSeconds", ArgKind::Int, "10")
        .ignored("dynamic resource allocation is not modelled"),
];

/// The predicates plugin: which filters are on (`predicate.<Name>Enable`, default true).
pub struct Predicates {
    node_affinity: bool,
    node_ports: bool,
    taint_toleration: bool,
    pod_affinity: bool,
    topology_spread: bool,
    /// Per node: schedulable and without NoSchedule/NoExecute taints, so a pod without node
    /// selector and required node affinity passes the static filters without reading the node.
    open_node: Vec<bool>,
}

impl Predicates {
    /// Reads `predicate.NodeAffinityEnable`, `predicate.NodePortsEnable`,
    /// `predicate.TaintTolerationEnable`, `predicate.PodAffinityEnable`,
    /// `predicate.PodTopologySpreadEnable` (all default true). The volume keys
    /// (`predicate.NodeVolumeLimitsEnable`, `predicate.VolumeZoneEnable`,
    /// `predicate.VolumeBindingEnable`) and `predicate.CacheEnable` are accepted and have no
    /// effect.
    pub fn open(s: &State<'_>, a: &Arguments) -> Self {
        let on = |k: &str| a.bool(k).unwrap_or(true);
        let open_node = (0..s.nodes.len)
            .map(|n| {
                let rec = s.nodes.rec[n];
                !rec.spec.unschedulable
                    && rec.taints.iter().all(|t| !matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute))
            })
            .collect();
        Predicates {
            open_node,
            node_affinity: on("predicate.NodeAffinityEnable"),
            node_ports: on("predicate.NodePortsEnable"),
            taint_toleration: on("predicate.TaintTolerationEnable"),
            pod_affinity: on("predicate.PodAffinityEnable"),
            topology_spread: on("predicate.PodTopologySpreadEnable"),
        }
    }
}

/// Whether the pod tolerates `node.kubernetes.io/unschedulable:NoSchedule`.
fn tolerates_unschedulable(s: &State<'_>, t: TaskIdx) -> bool {
    let key = s.cluster.names.get("node.kubernetes.io/unschedulable").unwrap_or(Sym(u32::MAX));
    let taint = CTaint { key, value: Sym::EMPTY, effect: TaintEffect::NoSchedule };
    tolerated(&s.tasks.rec[t.ix()].c.tolerations, &taint)
}

impl Predicates {
    fn pod_number(&self, s: &State<'_>, n: NodeIdx) -> Result<(), Reason> {
        if s.view.pods[n.ix()] as i64 >= s.at(s.nodes.allocatable, n, PODS) {
            return Err(Reason::PodNumberExceeded);
        }
        Ok(())
    }

    /// NodePorts, InterPodAffinity, PodTopologySpread.
    fn predicate_rest(&self, s: &State<'_>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        let pod = &s.tasks.rec[t.ix()].c;
        if self.node_ports && !pod.host_ports.is_empty() && k8s::ports_conflict(s, pod, n) {
            return Err(Reason::NodePorts);
        }
        if self.pod_affinity && ctx.interpod {
            ctx.interpod_filter(s, pod, n)?;
        }
        if self.topology_spread && !ctx.spread_hard.is_empty() {
            ctx.spread_filter(s, pod, n)?;
        }
        Ok(())
    }
}

plugin_impl! {
    impl<'a> for Predicates {
        fn name(&self) -> &'static str {
            "predicates"
        }
        fn predicate(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.pod_number(s, n)?;
            self.predicate_static(s, t, n)?;
            self.predicate_rest(s, ctx, t, n)
        }
        fn predicate_static(&self, s: &State<'a>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            let pod = &s.tasks.rec[t.ix()].c;
            if self.open_node[n.ix()] && pod.node_selector.is_empty() && pod.node_required.is_none() {
                return Ok(());
            }
            if s.nodes.rec[n.ix()].spec.unschedulable && !tolerates_unschedulable(s, t) {
                return Err(Reason::NodeUnschedulable);
            }
            if self.node_affinity && !k8s::node_affinity_ok(s, pod, n) {
                return Err(Reason::NodeAffinity);
            }
            if self.taint_toleration {
                if let Some((k, v)) = k8s::untolerated_taint(s, pod, n) {
                    return Err(Reason::Taint(k, v));
                }
            }
            Ok(())
        }
        fn predicate_dynamic(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.pod_number(s, n)?;
            self.predicate_rest(s, ctx, t, n)
        }
        /// Volcano's predicates `AllocateFunc`: the pod joins the shared node view
        /// ([`crate::session::node_view`]).
        fn on_allocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
            s.view_add(t);
        }
        /// Volcano's predicates `DeallocateFunc`: the pod leaves the node view.
        fn on_deallocate(&mut self, s: &mut State<'a>, t: TaskIdx) {
            s.view_remove(t);
        }
    }
}
