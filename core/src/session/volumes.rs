//! The session's volume tables and kube-scheduler's volume filters on them (volcano-behaviour.md
//! §3 predicates: NodeVolumeLimits, VolumeZone, VolumeBinding; kube-scheduler v1.20
//! `plugins/volumebinding`, `volumezone`, `nodevolumelimits`), run by the predicates plugin.
//!
//! Built once per session from the cluster copy's storage objects, only for tasks whose pods
//! mount claims: a pod without claims costs one table read. Claims a pod of this cycle assumed
//! (a static PV chosen for a `WaitForFirstConsumer` claim, or the node its provisioner is told)
//! change only through the predicates plugin's event handlers, which the
//! [`super::statement::Statement`] fires on allocate and again, in reverse, when it discards:
//! undo is exact, two pods of one cycle never assume the same PV, and a discarded gang
//! releases what it assumed. Committed binds carry their assumptions as
//! [`crate::model::VolumeBinding`]s.
//!
//! It refuses I/O; PV node-affinity masks are computed at open for the constraints pending
//! pods' bound claims name, so the per-node check of a bound claim is one bit.

use crate::cluster::Cluster;
use crate::kernels::masked_max::NodeMask;
use crate::model::Labels;
use crate::model::{
    AccessMode, LabelSelector, NodeSelectorTerm, PersistentVolumeSpec, Requirement, SelectorOp, StorageClassSpec, VolumeBinding,
    VolumeBindingMode, NO_PROVISIONER, ZONE_LABELS,
};
use crate::session::fit::Reason;
use crate::session::tables::{NodeIdx, TaskIdx, TaskStatus, NONE};
use crate::session::State;
use hashbrown::HashMap;
use std::collections::BTreeMap;

/// kube-scheduler's PreFilter message for a pod with an unbound `Immediate` claim.
pub const UNBOUND_IMMEDIATE: &str = "pod has unbound immediate PersistentVolumeClaims";

/// What a claim stands for in this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Assumed {
    /// Nothing assumed (bound, or not yet placed).
    None,
    /// Assumed bound to PV row `0`.
    Pv(u32),
    /// Assumed provisioned for node `0`.
    Provision(u32),
}

/// A claim a session pod mounts.
struct ClaimRow {
    namespace: String,
    name: String,
    /// Only `ReadWriteOnce` (neither `ReadOnlyMany` nor `ReadWriteMany`): its volume follows one
    /// node at a time.
    rwo: bool,
    access: Vec<AccessMode>,
    request_bytes: i64,
    block: bool,
    selector: Option<LabelSelector>,
    /// StorageClass name (empty for none).
    class: String,
    /// The provisioner of its class (empty when unknown).
    provisioner: String,
    /// Allowed topologies of its class.
    allowed: Vec<Vec<Requirement>>,
    /// Nodes where pods using it are (node row, pod count).
    users: Vec<(u32, u32)>,
    /// This cycle's assumption and the task that made it.
    assumed: Assumed,
    assumed_by: u32,
}

/// A PersistentVolume.
struct PvRow {
    name: String,
    class: String,
    capacity_bytes: i64,
    access: Vec<AccessMode>,
    block: bool,
    labels: Labels,
    node_affinity: Option<Vec<NodeSelectorTerm>>,
    /// `claimRef` namespace/name.
    claim_ref: Option<(String, String)>,
    available: bool,
    deleting: bool,
    /// CSI driver row with a node limit (NONE: not counted).
    driver: u32,
    /// Claim row that assumed it this cycle (NONE: free).
    assumed_by: u32,
}

/// One task's volumes.
#[derive(Default)]
struct PodVols {
    /// A PreFilter failure (missing claim, unbound immediate claim, …): fails every node.
    pre_error: Option<String>,
    /// The pod has `spec.resourceClaims`, which Basalt does not allocate.
    dra_error: Option<String>,
    /// Node masks the pod's bound claims' PVs impose (VolumeBinding `checkBoundClaims`).
    bound_masks: Vec<u32>,
    /// Node masks of the bound PVs' zone labels (VolumeZone).
    zone_masks: Vec<u32>,
    /// Every claim row the pod mounts (deduplicated).
    claims: Vec<u32>,
    /// Unbound `WaitForFirstConsumer` claim rows, smallest request first (kube's
    /// `byPVCSize`).
    unbound: Vec<u32>,
    /// Counted volumes: (driver row, volume key) for CSI attach limits.
    csi: Vec<(u32, u32)>,
    /// Whether the class path may serve the pod: its volume filters depend only on the node's
    /// labels (bound claims no other pod mounts, no counted attachments, no unbound claims), so
    /// they are its [`PodVols::mask`] and it shares the class of pods without claims.
    classable: bool,
    /// The enabled static filters' masks intersected (row in `masks`; NONE: none restricts).
    mask: u32,
    /// Node the pod's volumes are counted on (NONE: not placed by this session).
    placed: u32,
    /// Claims whose assumption this pod made.
    assumed: Vec<u32>,
}

/// The session's volume tables (owned by the predicates plugin).
pub struct Volumes {
    /// Per task: row in `pods`, or NONE for a pod without claims.
    task_vols: Vec<u32>,
    pods: Vec<PodVols>,
    claims: Vec<ClaimRow>,
    pvs: Vec<PvRow>,
    /// PV rows by class, smallest capacity first, then name (kube's `FindMatchingVolume` picks
    /// the smallest that fits).
    by_class: BTreeMap<String, Vec<u32>>,
    /// Node masks, one bit per node row.
    masks: Vec<Box<[u64]>>,
    /// CSI drivers with a limit on some node, and per node × driver the limit
    /// (u32::MAX: none) and the volumes counted.
    drivers: Vec<String>,
    limit: Vec<u32>,
    used: Vec<u32>,
    /// (volume key, node row) → pods using it there: a volume counts once per node.
    on_node: HashMap<(u32, u32), u32>,
    nodes: usize,
}

fn label_req_ok(r: &Requirement, labels: &Labels) -> bool {
    let v = labels.get(&r.key);
    match r.op {
        SelectorOp::In => v.is_some_and(|v| r.values.contains(v)),
        SelectorOp::NotIn => v.is_none_or(|v| !r.values.contains(v)),
        SelectorOp::Exists => v.is_some(),
        SelectorOp::DoesNotExist => v.is_none(),
        SelectorOp::Gt | SelectorOp::Lt => {
            let (Some(x), Some(b)) =
                (v.and_then(|v| v.parse::<i64>().ok()), r.values.first().and_then(|b| b.parse::<i64>().ok()))
            else {
                return false;
            };
            if r.op == SelectorOp::Gt {
                x > b
            } else {
                x < b
            }
        }
    }
}

fn selector_ok(s: &LabelSelector, labels: &Labels) -> bool {
    s.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v)) && s.match_expressions.iter().all(|r| label_req_ok(r, labels))
}

/// kube's `NodeSelectorTerm` match on node labels and name (an empty term matches nothing).
fn term_ok(t: &NodeSelectorTerm, labels: &Labels, name: &str) -> bool {
    if t.match_expressions.is_empty() && t.match_fields.is_empty() {
        return false;
    }
    let mut name_labels = Labels::new();
    name_labels.insert("metadata.name".to_string(), name.to_string());
    t.match_expressions.iter().all(|r| label_req_ok(r, labels)) && t.match_fields.iter().all(|r| label_req_ok(r, &name_labels))
}

fn affinity_ok(terms: &Option<Vec<NodeSelectorTerm>>, labels: &Labels, name: &str) -> bool {
    terms.as_ref().is_none_or(|ts| ts.iter().any(|t| term_ok(t, labels, name)))
}

/// VolumeZone (v1.20): a node without any zone label passes; otherwise every zone label of the
/// PV must be on the node with a value in the PV's `__`-separated set.
fn zone_ok(pv_labels: &Labels, node_labels: &Labels) -> bool {
    if !ZONE_LABELS.iter().any(|k| node_labels.contains_key(*k)) {
        return true;
    }
    ZONE_LABELS.iter().all(|k| match pv_labels.get(*k) {
        None => true,
        Some(v) => node_labels.get(*k).is_some_and(|nv| v.split("__").any(|z| z == nv)),
    })
}

fn modes_ok(want: &[AccessMode], have: &[AccessMode]) -> bool {
    want.iter().all(|m| have.contains(m))
}

impl Volumes {
    /// Builds the tables, or `None` when no session task mounts a claim or has resource claims
    /// (the filters then cost nothing). `zone` and `binding` say whether VolumeZone and
    /// VolumeBinding are on: the class masks ([`Volumes::class_mask`]) hold the filters that are.
    pub fn open(s: &State<'_>, zone: bool, binding: bool) -> Option<Self> {
        let c: &Cluster = s.cluster;
        let with_claims = (0..s.tasks.len)
            .filter(|&t| {
                let p = &s.tasks.rec[t].spec;
                !p.volume_claims.is_empty() || !p.resource_claims.is_empty()
            })
            .count();
        if with_claims == 0 {
            return None;
        }
        let store = c.volumes();
        let nodes = s.nodes.len;
        let mut v = Volumes {
            task_vols: vec![NONE; s.tasks.len],
            pods: Vec::with_capacity(with_claims),
            claims: Vec::with_capacity(with_claims),
            pvs: Vec::new(),
            by_class: BTreeMap::new(),
            masks: Vec::new(),
            drivers: Vec::new(),
            limit: Vec::new(),
            used: Vec::new(),
            on_node: HashMap::new(),
            nodes,
        };
        // CSI drivers with a limit, and the limits per node.
        let mut drivers: Vec<String> = store
            .csi_nodes
            .values()
            .flat_map(|n| n.drivers.iter().filter(|(_, l)| l.is_some()).map(|(d, _)| d.clone()))
            .collect();
        drivers.sort();
        drivers.dedup();
        v.limit = vec![u32::MAX; nodes * drivers.len()];
        v.used = vec![0; nodes * drivers.len()];
        for n in 0..nodes {
            if let Some(cn) = store.csi_nodes.get(&s.nodes.rec[n].spec.name) {
                for (d, l) in &cn.drivers {
                    if let (Some(l), Ok(di)) = (l, drivers.binary_search(d)) {
                        v.limit[di * nodes + n] = (*l).max(0) as u32;
                    }
                }
            }
        }
        v.drivers = drivers;
        // PV rows, in name order.
        let mut pv_index: BTreeMap<&str, u32> = BTreeMap::new();
        v.pvs.reserve_exact(store.volumes.len());
        for pv in store.volumes.values() {
            pv_index.insert(&pv.name, v.pvs.len() as u32);
            let row = v.pv_row(pv);
            v.pvs.push(row);
        }
        for (i, pv) in v.pvs.iter().enumerate() {
            match v.by_class.get_mut(&pv.class) {
                Some(list) => list.push(i as u32),
                None => {
                    v.by_class.insert(pv.class.clone(), vec![i as u32]);
                }
            }
        }
        for list in v.by_class.values_mut() {
            list.sort_by(|&a, &b| {
                let (a, b) = (&v.pvs[a as usize], &v.pvs[b as usize]);
                a.capacity_bytes.cmp(&b.capacity_bytes).then_with(|| a.name.cmp(&b.name))
            });
        }
        let mut claim_index: HashMap<(String, String), u32> = HashMap::new();
        let mut mask_index: HashMap<String, u32> = HashMap::new();
        let mut intersections: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut key_parts: Vec<u32> = Vec::new();
        let mut zone_key = String::new();
        for t in 0..s.tasks.len {
            let p = &s.tasks.rec[t].spec;
            if p.volume_claims.is_empty() && p.resource_claims.is_empty() {
                continue;
            }
            let status = s.tasks.status[t];
            let pending = status == TaskStatus::Pending;
            let mut pv = PodVols { placed: NONE, classable: true, mask: NONE, ..PodVols::default() };
            if !p.resource_claims.is_empty() && pending {
                pv.dra_error = Some(format!(
                    "pod {}/{} has spec.resourceClaims ({}): dynamic resource allocation is not implemented by Basalt, so the pod stays pending",
                    p.namespace,
                    p.name,
                    p.resource_claims.join(", ")
                ));
            }
            key_parts.clear();
            for vc in &p.volume_claims {
                let Some(claim) = store.claim(&p.namespace, &vc.claim) else {
                    if pending && pv.pre_error.is_none() {
                        pv.pre_error = Some(format!("persistentvolumeclaim \"{}\" not found", vc.claim));
                    }
                    continue;
                };
                let ci = *claim_index.entry((p.namespace.clone(), vc.claim.clone())).or_insert_with(|| {
                    let class_name = claim.storage_class_name.clone().unwrap_or_default();
                    let class: Option<&StorageClassSpec> = store.classes.get(&class_name);
                    let rwo = claim.access_modes.contains(&AccessMode::ReadWriteOnce)
                        && !claim.access_modes.iter().any(|m| matches!(m, AccessMode::ReadOnlyMany | AccessMode::ReadWriteMany));
                    v.claims.push(ClaimRow {
                        namespace: p.namespace.clone(),
                        name: vc.claim.clone(),
                        rwo,
                        access: claim.access_modes.clone(),
                        request_bytes: claim.request_bytes,
                        block: claim.block,
                        selector: claim.selector.clone(),
                        class: class_name,
                        provisioner: class.map(|c| c.provisioner.clone()).unwrap_or_default(),
                        allowed: class.map(|c| c.allowed_topologies.clone()).unwrap_or_default(),
                        users: Vec::new(),
                        assumed: Assumed::None,
                        assumed_by: NONE,
                    });
                    (v.claims.len() - 1) as u32
                });
                if pv.claims.contains(&ci) {
                    continue;
                }
                pv.claims.push(ci);
                if !pending {
                    continue;
                }
                if claim.deleting && pv.pre_error.is_none() {
                    pv.pre_error = Some(format!("persistentvolumeclaim \"{}\" is being deleted", claim.name));
                }
                let bound_pv = (!claim.volume_name.is_empty()).then(|| pv_index.get(claim.volume_name.as_str()).copied());
                if claim.fully_bound() {
                    match bound_pv.flatten() {
                        Some(r) => {
                            let row = &v.pvs[r as usize];
                            let (aff, driver) = (row.node_affinity.clone(), row.driver);
                            // The zone labels as the mask's key ("z" then `key=value;` in
                            // ZONE_LABELS order; neither character occurs in label keys or
                            // values), written into a reused buffer: thousands of claims share a
                            // few zones.
                            zone_key.clear();
                            zone_key.push('z');
                            for k in ZONE_LABELS {
                                if let Some(x) = row.labels.get(k) {
                                    zone_key.extend([k, "=", x.as_str(), ";"]);
                                }
                            }
                            if aff.is_some() {
                                let key = format!("a{aff:?}");
                                pv.bound_masks.push(v.mask(s, &mut mask_index, &key, |l, n| affinity_ok(&aff, l, n)));
                            }
                            if zone_key.len() > 1 {
                                let m = match mask_index.get(zone_key.as_str()) {
                                    Some(&m) => m,
                                    None => {
                                        let labels = &v.pvs[r as usize].labels;
                                        let zl: Labels = ZONE_LABELS
                                            .iter()
                                            .filter_map(|k| labels.get(*k).map(|x| (k.to_string(), x.clone())))
                                            .collect();
                                        v.mask(s, &mut mask_index, &zone_key, |l, _| zone_ok(&zl, l))
                                    }
                                };
                                pv.zone_masks.push(m);
                            }
                            if driver != NONE {
                                pv.csi.push((driver, r));
                                pv.classable = false;
                            }
                        }
                        None => {
                            if pv.pre_error.is_none() {
                                pv.pre_error = Some(format!("PersistentVolume \"{}\" not found", claim.volume_name));
                            }
                        }
                    }
                    continue;
                }
                // Not fully bound: kube-scheduler's GetPodVolumes.
                let class_name = claim.storage_class_name.clone().unwrap_or_default();
                let delayed = if class_name.is_empty() {
                    Ok(false)
                } else {
                    match store.classes.get(&class_name) {
                        None => Err(format!("storageclass.storage.k8s.io \"{class_name}\" not found")),
                        Some(sc) => match sc.binding_mode {
                            None => Err(format!("VolumeBindingMode not set for StorageClass \"{class_name}\"")),
                            Some(m) => Ok(m == VolumeBindingMode::WaitForFirstConsumer),
                        },
                    }
                };
                match delayed {
                    Ok(true) if claim.volume_name.is_empty() => {
                        pv.unbound.push(ci);
                        pv.classable = false;
                        if let Ok(di) = v.drivers.binary_search(&v.claims[ci as usize].provisioner) {
                            pv.csi.push((di as u32, v.pvs.len() as u32 + ci));
                        }
                    }
                    Ok(_) => {
                        if pv.pre_error.is_none() {
                            pv.pre_error = Some(UNBOUND_IMMEDIATE.to_string());
                        }
                    }
                    Err(e) => {
                        if pv.pre_error.is_none() {
                            pv.pre_error = Some(e);
                        }
                    }
                }
            }
            let mut unbound = std::mem::take(&mut pv.unbound);
            unbound.sort_by_key(|&c| (v.claims[c as usize].request_bytes, c));
            pv.unbound = unbound;
            // A pod failing its PrePredicate never reaches a node scan.
            pv.classable &= pv.pre_error.is_none() && pv.dra_error.is_none();
            if zone {
                key_parts.extend(&pv.zone_masks);
            }
            if binding {
                key_parts.extend(&pv.bound_masks);
            }
            key_parts.sort_unstable();
            key_parts.dedup();
            pv.mask = v.intersection(&mut intersections, &key_parts);
            v.task_vols[t] = v.pods.len() as u32;
            v.pods.push(pv);
        }
        // A ReadWriteOnce claim another task also mounts makes the result depend on where that
        // task is (`predicate_dynamic`'s in-use check); a claim only this task mounts never
        // fails it (the task is not placed while it is being placed), so such pods keep their
        // class.
        let mut mounts = vec![0u32; v.claims.len()];
        for p in &v.pods {
            for &c in &p.claims {
                mounts[c as usize] += 1;
            }
        }
        for p in &mut v.pods {
            if p.claims.iter().any(|&c| v.claims[c as usize].rwo && mounts[c as usize] > 1) {
                p.classable = false;
            }
        }
        // Pods already on nodes: claim users and counted volumes.
        for t in 0..s.tasks.len {
            let row = v.task_vols[t];
            if row == NONE {
                continue;
            }
            let n = s.tasks.node[t];
            let st = s.tasks.status[t];
            if n == NONE || matches!(st, TaskStatus::Succeeded | TaskStatus::Failed) {
                continue;
            }
            // Counted volumes of a running pod: its bound CSI PVs.
            let p = &s.tasks.rec[t].spec;
            let mut vols: Vec<(u32, u32)> = Vec::new();
            for vc in &p.volume_claims {
                if let Some(cl) = store.claim(&p.namespace, &vc.claim) {
                    if let Some(&r) = pv_index.get(cl.volume_name.as_str()) {
                        let d = v.pvs[r as usize].driver;
                        if d != NONE {
                            vols.push((d, r));
                        }
                    }
                }
            }
            v.pods[row as usize].csi = vols;
            v.place(TaskIdx(t as u32), n);
        }
        Some(v)
    }

    fn pv_row(&self, pv: &PersistentVolumeSpec) -> PvRow {
        PvRow {
            name: pv.name.clone(),
            class: pv.storage_class_name.clone(),
            capacity_bytes: pv.capacity_bytes,
            access: pv.access_modes.clone(),
            block: pv.block,
            labels: pv.labels.clone(),
            node_affinity: pv.node_affinity.clone(),
            claim_ref: pv.claim_ref.as_ref().map(|r| (r.namespace.clone(), r.name.clone())),
            available: pv.phase == crate::model::VolumePhase::Available,
            deleting: pv.deleting,
            driver: NONE,
            assumed_by: NONE,
        }
        .with_driver(pv, &self.drivers)
    }

    /// The mask of nodes passing `f` (memoized by `key`).
    fn mask(&mut self, s: &State<'_>, index: &mut HashMap<String, u32>, key: &str, f: impl Fn(&Labels, &str) -> bool) -> u32 {
        if let Some(&m) = index.get(key) {
            return m;
        }
        let mut bits = vec![0u64; self.nodes.div_ceil(64)].into_boxed_slice();
        for n in 0..self.nodes {
            let spec = &s.nodes.rec[n].spec;
            if f(&spec.labels, &spec.name) {
                bits[n / 64] |= 1 << (n % 64);
            }
        }
        self.masks.push(bits);
        let m = (self.masks.len() - 1) as u32;
        index.insert(key.to_string(), m);
        m
    }

    fn bit(&self, m: u32, n: NodeIdx) -> bool {
        self.masks[m as usize][n.ix() / 64] & (1 << (n.ix() % 64)) != 0
    }

    #[inline]
    fn pod(&self, t: TaskIdx) -> Option<&PodVols> {
        let r = *self.task_vols.get(t.ix())?;
        (r != NONE).then(|| &self.pods[r as usize])
    }

    /// VolumeBinding's PreFilter and the DRA refusal: the message that fails the pod on every
    /// node (kube-scheduler's texts: `persistentvolumeclaim "x" not found`,
    /// [`UNBOUND_IMMEDIATE`], `storageclass.storage.k8s.io "x" not found`, …).
    /// `binding` says whether VolumeBinding is on (the DRA refusal holds either way).
    pub fn pre_predicate(&self, t: TaskIdx, binding: bool) -> Result<(), String> {
        let Some(p) = self.pod(t) else { return Ok(()) };
        if let Some(e) = &p.dra_error {
            return Err(e.clone());
        }
        match &p.pre_error {
            Some(e) if binding => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// The static volume filters: the node must match the node affinity of every bound PV
    /// (VolumeBinding, `node(s) had volume node affinity conflict`) and its zone labels
    /// (VolumeZone, `node(s) had no available volume zone`).
    /// `zone` and `binding` say which of the two filters are on.
    pub fn predicate_static(&self, t: TaskIdx, n: NodeIdx, zone: bool, binding: bool) -> Result<(), Reason> {
        let Some(p) = self.pod(t) else { return Ok(()) };
        if zone && p.zone_masks.iter().any(|&m| !self.bit(m, n)) {
            return Err(Reason::VolumeZoneConflict);
        }
        if binding && p.bound_masks.iter().any(|&m| !self.bit(m, n)) {
            return Err(Reason::VolumeNodeConflict);
        }
        Ok(())
    }

    /// The filters that depend on this cycle's placements: CSI attach limits
    /// (NodeVolumeLimits, `node(s) exceed max volume count`), ReadWriteOnce claims in use on
    /// another node, and unbound `WaitForFirstConsumer` claims (VolumeBinding: an available PV
    /// that fits, or a provisioner whose `allowedTopologies` admit the node; `node(s) didn't find
    /// available persistent volumes to bind`).
    #[inline]
    pub fn predicate_dynamic(&self, s: &State<'_>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        // Inlined so that the class path's many evaluations of tasks without claims cost one
        // table read, not a call.
        match self.pod(t) {
            None => Ok(()),
            // Bound claims no other pod mounts, nothing counted, not placed: nothing below can
            // fail (the class path evaluates such pods' leaves many times).
            Some(p) if p.classable && p.placed == NONE && p.csi.is_empty() => Ok(()),
            Some(p) => self.pod_dynamic(s, p, n),
        }
    }

    fn pod_dynamic(&self, s: &State<'_>, p: &PodVols, n: NodeIdx) -> Result<(), Reason> {
        for &c in &p.claims {
            let cl = &self.claims[c as usize];
            if cl.rwo && cl.users.iter().any(|&(m, k)| k > 0 && m != n.0) {
                return Err(Reason::VolumeRwoInUse);
            }
        }
        if !self.csi_fits(p, n) {
            return Err(Reason::VolumeLimitExceeded);
        }
        let mut chosen: Vec<u32> = Vec::new();
        for &c in &p.unbound {
            match self.claims[c as usize].assumed {
                Assumed::Pv(r) => {
                    let pv = &self.pvs[r as usize];
                    let spec = &s.nodes.rec[n.ix()].spec;
                    if !affinity_ok(&pv.node_affinity, &spec.labels, &spec.name) {
                        return Err(Reason::VolumeNodeConflict);
                    }
                }
                Assumed::Provision(m) => {
                    if m != n.0 {
                        return Err(Reason::VolumeBindConflict);
                    }
                }
                Assumed::None => match self.find_pv(s, c, n, &chosen) {
                    Some(r) => chosen.push(r),
                    None if self.provisionable(s, c, n) => {}
                    None => return Err(Reason::VolumeBindConflict),
                },
            }
        }
        Ok(())
    }

    fn csi_fits(&self, p: &PodVols, n: NodeIdx) -> bool {
        if self.drivers.is_empty() || p.csi.is_empty() {
            return true;
        }
        let mut new: Vec<(u32, u32)> = Vec::new();
        for &(d, k) in &p.csi {
            if !self.on_node.contains_key(&(k, n.0)) && !new.contains(&(d, k)) {
                new.push((d, k));
            }
        }
        for d in 0..self.drivers.len() as u32 {
            let add = new.iter().filter(|x| x.0 == d).count() as u32;
            let i = d as usize * self.nodes + n.ix();
            if add > 0 && self.used[i].saturating_add(add) > self.limit[i] {
                return false;
            }
        }
        true
    }

    /// kube's `FindMatchingVolume` for claim row `c` on node `n`: the smallest PV of the claim's
    /// class, pre-bound to the claim first, that is not taken (bound to another claim, assumed
    /// this cycle, or in `chosen`), available, large enough, with the claim's access modes,
    /// volume mode and selector, reachable from `n`.
    fn find_pv(&self, s: &State<'_>, c: u32, n: NodeIdx, chosen: &[u32]) -> Option<u32> {
        let cl = &self.claims[c as usize];
        let list = self.by_class.get(&cl.class)?;
        let spec = &s.nodes.rec[n.ix()].spec;
        let mut best: Option<u32> = None;
        for &r in list {
            let pv = &self.pvs[r as usize];
            let prebound = pv.claim_ref.as_ref().is_some_and(|(ns, name)| *ns == cl.namespace && *name == cl.name);
            if pv.deleting || (pv.claim_ref.is_some() && !prebound) || (!prebound && !pv.available) {
                continue;
            }
            if (pv.assumed_by != NONE && pv.assumed_by != c) || chosen.contains(&r) {
                continue;
            }
            if pv.capacity_bytes < cl.request_bytes || !modes_ok(&cl.access, &pv.access) || pv.block != cl.block {
                continue;
            }
            if cl.selector.as_ref().is_some_and(|sel| !selector_ok(sel, &pv.labels)) {
                continue;
            }
            if !affinity_ok(&pv.node_affinity, &spec.labels, &spec.name) {
                continue;
            }
            if prebound {
                return Some(r);
            }
            if best.is_none() {
                best = Some(r);
            }
        }
        best
    }

    /// kube's `checkVolumeProvisions`: the class has a provisioner other than
    /// `kubernetes.io/no-provisioner` and its `allowedTopologies` (if any) admit `n`.
    fn provisionable(&self, s: &State<'_>, c: u32, n: NodeIdx) -> bool {
        let cl = &self.claims[c as usize];
        if cl.provisioner.is_empty() || cl.provisioner == NO_PROVISIONER {
            return false;
        }
        let labels = &s.nodes.rec[n.ix()].spec.labels;
        cl.allowed.is_empty() || cl.allowed.iter().any(|term| term.iter().all(|r| label_req_ok(r, labels)))
    }

    /// The class-path key of `t`'s volumes: `Some(0)` when they restrict `t` only through its
    /// [`Volumes::class_mask`] (then `t` shares the class of pods without claims), `None` when
    /// they depend on this cycle's placements (shared ReadWriteOnce claims, counted
    /// attachments, unbound claims) or fail its PrePredicate.
    pub fn class_key(&self, t: TaskIdx) -> Option<u64> {
        match self.pod(t) {
            Some(p) if !p.classable => None,
            _ => Some(0),
        }
    }

    /// The nodes `t`'s bound claims allow (their PVs' node affinity and zone labels, for the
    /// filters that are on): what [`Volumes::predicate_static`] checks, as one mask (bit
    /// `n % 64` of word `n / 64` for node row `n`), its id the mask's row (one per distinct
    /// constraint); `None` when they allow every node.
    pub fn class_mask(&self, t: TaskIdx) -> Option<NodeMask<'_>> {
        let p = self.pod(t)?;
        (p.mask != NONE).then(|| NodeMask { id: u64::from(p.mask), bits: &self.masks[p.mask as usize] })
    }

    /// The intersection of masks `parts` (sorted, deduplicated), memoized by them; NONE for
    /// none.
    fn intersection(&mut self, index: &mut HashMap<Vec<u32>, u32>, parts: &[u32]) -> u32 {
        match parts {
            [] => NONE,
            [m] => *m,
            _ => {
                if let Some(&m) = index.get(parts) {
                    return m;
                }
                let mut bits = self.masks[parts[0] as usize].clone();
                for &p in &parts[1..] {
                    for (b, x) in bits.iter_mut().zip(self.masks[p as usize].iter()) {
                        *b &= x;
                    }
                }
                self.masks.push(bits);
                let m = (self.masks.len() - 1) as u32;
                index.insert(parts.to_vec(), m);
                m
            }
        }
    }

    /// Counts `t`'s volumes and claim use on node row `n`.
    fn place(&mut self, t: TaskIdx, n: u32) {
        let row = self.task_vols[t.ix()] as usize;
        let p = &mut self.pods[row];
        p.placed = n;
        for &c in &p.claims {
            let users = &mut self.claims[c as usize].users;
            match users.iter_mut().find(|(m, _)| *m == n) {
                Some((_, k)) => *k += 1,
                None => users.push((n, 1)),
            }
        }
        for &(d, k) in &p.csi {
            let e = self.on_node.entry((k, n)).or_insert(0);
            *e += 1;
            if *e == 1 {
                self.used[d as usize * self.nodes + n as usize] += 1;
            }
        }
    }

    fn unplace(&mut self, t: TaskIdx) {
        let row = self.task_vols[t.ix()] as usize;
        let p = &mut self.pods[row];
        let n = std::mem::replace(&mut p.placed, NONE);
        for &c in &p.claims {
            if let Some((_, k)) = self.claims[c as usize].users.iter_mut().find(|(m, _)| *m == n) {
                *k -= 1;
            }
        }
        for &(d, k) in &p.csi {
            if let Some(e) = self.on_node.get_mut(&(k, n)) {
                *e -= 1;
                if *e == 0 {
                    self.on_node.remove(&(k, n));
                    self.used[d as usize * self.nodes + n as usize] -= 1;
                }
            }
        }
    }

    /// Volcano's predicates `AllocateFunc` (kube `Reserve`/`AssumePodVolumes`): `t` was placed
    /// on its node; its volumes count there and its unbound claims assume a PV (or the node
    /// for their provisioner).
    pub fn on_allocate(&mut self, s: &State<'_>, t: TaskIdx) {
        let (Some(row), Some(n)) = (self.task_vols.get(t.ix()).copied().filter(|&r| r != NONE), s.tasks.node_of(t)) else {
            return;
        };
        if self.pods[row as usize].placed != NONE {
            return;
        }
        self.place(t, n.0);
        let unbound = self.pods[row as usize].unbound.clone();
        let mut made = Vec::new();
        for c in unbound {
            if self.claims[c as usize].assumed != Assumed::None {
                continue;
            }
            let a = match self.find_pv(s, c, n, &[]) {
                Some(r) => {
                    self.pvs[r as usize].assumed_by = c;
                    Assumed::Pv(r)
                }
                None => Assumed::Provision(n.0),
            };
            let cl = &mut self.claims[c as usize];
            cl.assumed = a;
            cl.assumed_by = t.0;
            made.push(c);
        }
        self.pods[row as usize].assumed = made;
    }

    /// Volcano's predicates `DeallocateFunc` (kube `Unreserve`): releases what
    /// [`Volumes::on_allocate`] assumed and counted for `t`.
    pub fn on_deallocate(&mut self, t: TaskIdx) {
        let Some(row) = self.task_vols.get(t.ix()).copied().filter(|&r| r != NONE) else {
            return;
        };
        if self.pods[row as usize].placed == NONE {
            return;
        }
        self.unplace(t);
        for c in std::mem::take(&mut self.pods[row as usize].assumed) {
            let cl = &mut self.claims[c as usize];
            if let Assumed::Pv(r) = cl.assumed {
                self.pvs[r as usize].assumed_by = NONE;
            }
            cl.assumed = Assumed::None;
            cl.assumed_by = NONE;
        }
    }

    /// The volume bindings of the session's committed binds (tasks now Binding whose claims it
    /// assumed), in task order.
    pub fn bindings(&self, s: &State<'_>) -> Vec<VolumeBinding> {
        let mut out = Vec::new();
        for t in 0..s.tasks.len {
            let Some(p) = self.pod(TaskIdx(t as u32)) else { continue };
            if s.tasks.status[t] != TaskStatus::Binding || p.unbound.is_empty() {
                continue;
            }
            let spec = &s.tasks.rec[t].spec;
            let node = s.tasks.node_of(TaskIdx(t as u32)).map(|n| s.nodes.rec[n.ix()].spec.name.clone()).unwrap_or_default();
            let mut b = VolumeBinding { namespace: spec.namespace.clone(), pod: spec.name.clone(), node, ..Default::default() };
            for &c in &p.unbound {
                let cl = &self.claims[c as usize];
                match cl.assumed {
                    Assumed::Pv(r) => b.bind.push((cl.name.clone(), self.pvs[r as usize].name.clone())),
                    Assumed::Provision(_) => b.provision.push(cl.name.clone()),
                    Assumed::None => {}
                }
            }
            if !b.is_empty() {
                out.push(b);
            }
        }
        out
    }
}

impl PvRow {
    fn with_driver(mut self, pv: &PersistentVolumeSpec, drivers: &[String]) -> Self {
        if let Some(d) = &pv.csi_driver {
            if let Ok(i) = drivers.binary_search(d) {
                self.driver = i as u32;
            }
        }
        self
    }
}
