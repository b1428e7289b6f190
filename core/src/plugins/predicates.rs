//! `predicates` (volcano-behaviour.md §3): kube-scheduler's filters on interned data, in
//! Volcano's order: pod count, NodeUnschedulable, NodeAffinity, TaintToleration, NodePorts,
//! InterPodAffinity, PodTopologySpread. The first failing filter is the node's reason.
//!
//! The volume filters (NodeVolumeLimits, VolumeZone, VolumeBinding) run on the session's volume
//! tables ([`crate::session::volumes`]): the bound-claim and zone checks with the static
//! filters, the attach limits and unbound `WaitForFirstConsumer` claims after the others. A pod
//! with `spec.resourceClaims` (DRA) fails its PrePredicate: Basalt allocates no claims.

use super::k8s::{self, PodCtx};
use crate::cluster::compile::{tolerated, CTaint};
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::intern::Sym;
use crate::kernels::masked_max::NodeMask;
use crate::model::TaintEffect;
use crate::resource::PODS;
use crate::session::fit::Reason;
use crate::session::node_view::NodeView;
use crate::session::notes::CloseNotes;
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::volumes::Volumes;
use crate::session::State;

const NO_SHAPE: &str = "storage capacity scoring is not modelled";

/// The `arguments` keys predicates reads (Volcano's keys and defaults).
pub const ARGS: &[ArgSpec] = &[
    ArgSpec::new("predicate.NodeAffinityEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.NodePortsEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.TaintTolerationEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.PodAffinityEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.PodTopologySpreadEnable", ArgKind::Bool, "true"),
    // A cache of predicate results: it changes no decision.
    ArgSpec::new("predicate.CacheEnable", ArgKind::Bool, "false"),
    ArgSpec::new("predicate.NodeVolumeLimitsEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.VolumeZoneEnable", ArgKind::Bool, "true"),
    ArgSpec::new("predicate.VolumeBindingEnable", ArgKind::Bool, "true"),
    // The live binder's wait for claims to bind; no decision depends on it.
    ArgSpec::new("volumebinding.bindTimeoutSeconds", ArgKind::Int, "600"),
    // VolumeBinding scores only with StorageCapacityScoring (`shape`): without it every node
    // scores the same, so the weight changes no decision.
    ArgSpec::new("volumebinding.weight", ArgKind::Int, "1"),
    ArgSpec::new("volumebinding.shape", ArgKind::Str, "\"\"").ignored(NO_SHAPE),
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
    /// The volume tables (`None` when no session pod mounts a claim or has resource claims).
    volumes: Option<Volumes>,
    /// `predicate.VolumeBindingEnable`, `predicate.VolumeZoneEnable`,
    /// `predicate.NodeVolumeLimitsEnable`.
    volume_binding: bool,
    volume_zone: bool,
    volume_limits: bool,
}

impl Predicates {
    /// Reads `predicate.NodeAffinityEnable`, `predicate.NodePortsEnable`,
    /// `predicate.TaintTolerationEnable`, `predicate.PodAffinityEnable`,
    /// `predicate.PodTopologySpreadEnable`, `predicate.NodeVolumeLimitsEnable`,
    /// `predicate.VolumeZoneEnable`, `predicate.VolumeBindingEnable` (all default true), and
    /// builds the volume tables; `predicate.CacheEnable` is accepted and has no effect.
    pub fn open(s: &State<'_>, a: &Arguments) -> Self {
        let on = |k: &str| a.bool(k).unwrap_or(true);
        let (volume_zone, volume_binding) = (on("predicate.VolumeZoneEnable"), on("predicate.VolumeBindingEnable"));
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
            volumes: Volumes::open(s, volume_zone, volume_binding),
            volume_binding,
            volume_zone,
            volume_limits: on("predicate.NodeVolumeLimitsEnable"),
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
        if s.view.pods(n) >= s.at(s.nodes.allocatable, n, PODS) {
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
        self.volumes_dynamic(s, t, n)
    }

    /// NodeUnschedulable, NodeAffinity, TaintToleration (the static filters on the node alone).
    fn node_static(&self, s: &State<'_>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
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

    /// VolumeZone and VolumeBinding's bound claims (static: the PVs' labels and node affinity).
    fn volumes_static(&self, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        match &self.volumes {
            Some(v) => v.predicate_static(t, n, self.volume_zone, self.volume_binding),
            None => Ok(()),
        }
    }

    /// NodeVolumeLimits, shared ReadWriteOnce claims and VolumeBinding's unbound claims.
    fn volumes_dynamic(&self, s: &State<'_>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        let Some(v) = &self.volumes else { return Ok(()) };
        match v.predicate_dynamic(s, t, n) {
            Err(Reason::VolumeLimitExceeded) if !self.volume_limits => Ok(()),
            Err(_) if !self.volume_binding => Ok(()),
            r => r,
        }
    }
}

plugin_impl! {
    impl<'a> for Predicates {
        fn name(&self) -> &'static str {
            "predicates"
        }
        /// VolumeBinding's PreFilter (missing, deleting or unbound `Immediate` claims, unknown
        /// StorageClass) and the DRA refusal.
        fn pre_predicate(&self, _s: &State<'a>, t: TaskIdx) -> Result<(), String> {
            match &self.volumes {
                Some(v) => v.pre_predicate(t, self.volume_binding),
                None => Ok(()),
            }
        }
        fn predicate(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.pod_number(s, n)?;
            self.predicate_static(s, t, n)?;
            self.predicate_rest(s, ctx, t, n)
        }
        fn predicate_static(&self, s: &State<'a>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.node_static(s, t, n)?;
            self.volumes_static(t, n)
        }
        /// The node filters without the volume ones, which [`Predicates::class_mask`] holds.
        fn predicate_static_unmasked(&self, s: &State<'a>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.node_static(s, t, n)
        }
        fn predicate_dynamic(&self, s: &State<'a>, ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.pod_number(s, n)?;
            self.predicate_rest(s, ctx, t, n)
        }
        /// Volcano's predicates `AllocateFunc`: the pod joins the shared node view
        /// ([`crate::session::node_view`]).
        /// It also reserves the pod's volumes (kube `Reserve`: assumed PVs, counted attachments).
        fn on_allocate(&mut self, s: &State<'a>, view: &mut NodeView<'a>, t: TaskIdx) {
            view.add_task(s, t);
            if let Some(v) = &mut self.volumes {
                v.on_allocate(s, t);
            }
        }
        /// Volcano's predicates `DeallocateFunc`: the pod leaves the node view and releases
        /// what it reserved (kube `Unreserve`).
        fn on_deallocate(&mut self, s: &State<'a>, view: &mut NodeView<'a>, t: TaskIdx) {
            view.remove_task(s, t);
            if let Some(v) = &mut self.volumes {
                v.on_deallocate(t);
            }
        }
        /// The volume bindings of the committed binds become part of the decisions.
        fn on_close(&mut self, s: &State<'a>, notes: &mut CloseNotes) {
            if let Some(v) = &self.volumes {
                notes.volume_bindings = v.bindings(s);
            }
        }
        /// Pods whose volumes depend on this cycle's placements take the plain scan; pods with
        /// only bound claims share a class with pods whose PVs impose the same constraints.
        fn class_key(&self, _s: &State<'a>, t: TaskIdx) -> Option<u64> {
            match &self.volumes {
                Some(v) => v.class_key(t),
                None => Some(0),
            }
        }
        /// The nodes a pod's bound claims allow (VolumeZone and VolumeBinding's bound-claim
        /// check, [`Volumes::class_mask`]): pods with bound zonal or local claims share the class
        /// of pods without claims and pick inside their mask.
        fn class_mask(&self, _s: &State<'a>, t: TaskIdx) -> Option<NodeMask<'_>> {
            self.volumes.as_ref()?.class_mask(t)
        }
    }
}

impl Predicates {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::PrePredicate.bit() | F::Predicate.bit() | F::EventHandler.bit()
    };
}
