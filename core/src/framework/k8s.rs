//! kube-scheduler's filter and score logic that the `predicates`, `nodeorder` and `binpack`
//! plugins share (Volcano calls kube-scheduler's plugins; Basalt computes the same answers on
//! interned data): node affinity, taints, host ports, inter-pod affinity, pod topology spread,
//! and the per-task precomputation ([`PodCtx`], kube's PreFilter/PreScore state).

use crate::cluster::compile::{label, tolerated, CPod, CPodTerm};
use crate::intern::Sym;
use crate::model::TaintEffect;
use crate::session::tables::{NodeIdx, TaskIdx};
use crate::session::State;
use hashbrown::{HashMap, HashSet};

/// Whether node `n` satisfies the pod's `nodeSelector` and required node affinity
/// (kube NodeAffinity Filter).
pub fn node_affinity_ok(s: &State<'_>, pod: &CPod, n: NodeIdx) -> bool {
    let node = s.nodes.rec[n.ix()];
    let names = &s.cluster.names;
    if !pod.node_selector.iter().all(|r| r.matches(&node.labels, names)) {
        return false;
    }
    match &pod.node_required {
        None => true,
        Some(terms) => terms.iter().any(|t| t.matches(&node.labels, node.name, names)),
    }
}

/// The first NoSchedule/NoExecute taint of `n` that the pod does not tolerate.
pub fn untolerated_taint(s: &State<'_>, pod: &CPod, n: NodeIdx) -> Option<(Sym, Sym)> {
    s.nodes.rec[n.ix()]
        .taints
        .iter()
        .find(|t| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute) && !tolerated(&pod.tolerations, t))
        .map(|t| (t.key, t.value))
}

/// Whether the pod's host ports conflict with ports in use on `n` (kube NodePorts).
pub fn ports_conflict(s: &State<'_>, pod: &CPod, n: NodeIdx) -> bool {
    if pod.host_ports.is_empty() {
        return false;
    }
    s.tasks_on(n).filter(|&o| s.in_view(o)).any(|o| {
        s.tasks.rec[o.ix()].c.host_ports.iter().any(|&(ip2, proto2, port2)| {
            pod.host_ports.iter().any(|&(ip, proto, port)| {
                port == port2 && proto == proto2 && (ip == ip2 || ip == Sym::EMPTY || ip2 == Sym::EMPTY)
            })
        })
    })
}

/// Whether a task counts as an existing pod for inter-pod affinity: it is in the shared node
/// view ([`crate::session::node_view`]), Releasing pods included.
fn existing(s: &State<'_>, t: TaskIdx) -> bool {
    s.in_view(t)
}

/// One topology spread constraint's counts for the task being placed.
#[derive(Debug, Default)]
pub struct SpreadState {
    /// Index of the constraint in the pod.
    pub index: usize,
    /// Matching pods per topology value (eligible nodes only).
    pub counts: HashMap<Sym, i64>,
    /// Minimum count over the domains (0 when fewer domains than minDomains).
    pub min: i64,
    /// Whether the pod matches its own selector.
    pub self_match: i64,
    /// Normalising weight for scoring: ln(domains + 2).
    pub weight: f64,
}

/// Per-task precomputation shared by predicates and node scoring (kube PreFilter/PreScore).
#[derive(Debug, Default)]
pub struct PodCtx {
    /// Whether any inter-pod affinity state was computed.
    pub interpod: bool,
    /// Per required affinity term: topology values holding a matching pod.
    pub affinity_values: Vec<HashSet<Sym>>,
    /// Whether some existing pod matches all required affinity terms (else a pod matching its
    /// own terms may go anywhere: the first pod of a group).
    pub affinity_any: bool,
    /// Whether the pod matches all of its own required affinity terms.
    pub affinity_self: bool,
    /// Per required anti-affinity term: topology values holding a matching pod.
    pub anti_values: Vec<HashSet<Sym>>,
    /// (topology key, value) pairs forbidden by existing pods' required anti-affinity.
    pub existing_anti: HashSet<(Sym, Sym)>,
    /// Preferred inter-pod affinity score per (topology key, value).
    pub pref_scores: HashMap<(Sym, Sym), i64>,
    /// Whether preferred inter-pod scoring applies (kube PreScore not skipped).
    pub pref_active: bool,
    /// Hard (DoNotSchedule) spread constraints.
    pub spread_hard: Vec<SpreadState>,
    /// Soft (ScheduleAnyway) spread constraints.
    pub spread_soft: Vec<SpreadState>,
}

/// Existing pods (other than `t`) that `term` matches, through the session's label index when
/// the term has an equality requirement, else by scanning every task.
fn for_matching(s: &State<'_>, term: &CPodTerm, t: TaskIdx, mut f: impl FnMut(TaskIdx)) {
    let names = &s.cluster.names;
    let mut visit = |o: TaskIdx| {
        if o == t || !existing(s, o) {
            return;
        }
        let oc = &s.tasks.rec[o.ix()].c;
        if term.matches_pod(oc.namespace, &oc.labels, names) {
            f(o);
        }
    };
    match s.affinity_index.as_ref().and_then(|ix| ix.term_candidates(term)) {
        Some(cands) => cands.for_each(&mut visit),
        None => (0..s.tasks.len).map(|i| TaskIdx(i as u32)).for_each(&mut visit),
    }
}

fn term_values(s: &State<'_>, term: &CPodTerm, out: &mut HashSet<Sym>, t: TaskIdx) {
    for_matching(s, term, t, |o| {
        let n = s.tasks.node()[o.ix()] as usize;
        if let Some(v) = label(&s.nodes.rec[n].labels, term.topology_key) {
            out.insert(v);
        }
    });
}

/// Whether some pod other than `t` with inter-pod terms exists on a node.
fn others_with_terms(s: &State<'_>, t: TaskIdx) -> bool {
    let ix = s.affinity_index.as_ref();
    if ix.and_then(|ix| ix.hint()).is_some_and(|o| o != t && existing(s, o)) {
        return true;
    }
    match s.affinity_tasks().iter().copied().find(|&o| o != t && existing(s, o)) {
        Some(o) => {
            if let Some(ix) = ix {
                ix.set_hint(o);
            }
            true
        }
        None => false,
    }
}

/// Existing pods with inter-pod terms of which some term may match `pod` (all of them when the
/// session has no index).
fn term_holders(s: &State<'_>, pod: &CPod, t: TaskIdx) -> Vec<TaskIdx> {
    let mut v = Vec::new();
    match s.affinity_index.as_ref() {
        Some(ix) => ix.terms_matching(&pod.labels, &mut v),
        None => v.extend_from_slice(s.affinity_tasks()),
    }
    v.retain(|&o| o != t && existing(s, o));
    v
}

impl PodCtx {
    /// Computes the state for placing task `t` (cheap when the pod has no inter-pod terms, no
    /// spread constraints and no existing pod has inter-pod terms).
    pub fn build(s: &State<'_>, t: TaskIdx, with_scores: bool) -> PodCtx {
        let pod = &s.tasks.rec[t.ix()].c;
        let names = &s.cluster.names;
        let mut ctx = PodCtx::default();
        if pod.has_pod_affinity() || others_with_terms(s, t) {
            ctx.interpod = true;
            for term in pod.pod_required.iter() {
                let mut set = HashSet::new();
                term_values(s, term, &mut set, t);
                ctx.affinity_values.push(set);
            }
            ctx.affinity_any = !pod.pod_required.is_empty() && ctx.affinity_values.iter().all(|v| !v.is_empty());
            ctx.affinity_self = pod.pod_required.iter().all(|term| term.matches_pod(pod.namespace, &pod.labels, names));
            for term in pod.anti_required.iter() {
                let mut set = HashSet::new();
                term_values(s, term, &mut set, t);
                ctx.anti_values.push(set);
            }
            let holders = term_holders(s, pod, t);
            for &o in &holders {
                let oc = &s.tasks.rec[o.ix()].c;
                let onode = s.nodes.rec[s.tasks.node()[o.ix()] as usize];
                for term in oc.anti_required.iter() {
                    if term.matches_pod(pod.namespace, &pod.labels, names) {
                        if let Some(v) = label(&onode.labels, term.topology_key) {
                            ctx.existing_anti.insert((term.topology_key, v));
                        }
                    }
                }
            }
            if with_scores {
                ctx.pref_scores(s, t, &holders);
            }
        }
        for (i, c) in pod.spread.iter().enumerate() {
            if !c.hard && !with_scores {
                continue;
            }
            let mut st = SpreadState { index: i, self_match: 0, ..Default::default() };
            if c.selector.as_ref().is_some_and(|sel| sel.matches(&pod.labels, names)) {
                st.self_match = 1;
            }
            for n in (0..s.nodes.len).map(|i| NodeIdx(i as u32)) {
                if !spread_eligible(s, pod, c.key, c.ignore_node_affinity, c.honor_node_taints, n) {
                    continue;
                }
                let v = label(&s.nodes.rec[n.ix()].labels, c.key).expect("eligible node has the key");
                let cnt = st.counts.entry(v).or_insert(0);
                for o in s.tasks_on(n) {
                    if o == t || !s.in_view_spread(o) {
                        continue;
                    }
                    let oc = &s.tasks.rec[o.ix()].c;
                    if oc.namespace == pod.namespace && c.selector.as_ref().is_some_and(|sel| sel.matches(&oc.labels, names)) {
                        *cnt += 1;
                    }
                }
            }
            st.min = if (st.counts.len() as i32) < c.min_domains { 0 } else { st.counts.values().copied().min().unwrap_or(0) };
            st.weight = ((st.counts.len() + 2) as f64).ln();
            if c.hard {
                ctx.spread_hard.push(st);
            } else {
                ctx.spread_soft.push(st);
            }
        }
        ctx
    }

    /// kube InterPodAffinity PreScore: per (topology key, value), the pod's preferred terms
    /// over existing pods, plus existing pods' (`holders`) required affinity (hard weight),
    /// preferred affinity and preferred anti-affinity terms that match the pod.
    fn pref_scores(&mut self, s: &State<'_>, t: TaskIdx, holders: &[TaskIdx]) {
        let pod = &s.tasks.rec[t.ix()].c;
        let names = &s.cluster.names;
        let hard_weight = 1i64; // kube's default hardPodAffinityWeight
        let has_pref = !pod.pod_preferred.is_empty() || !pod.anti_preferred.is_empty();
        let scores = &mut self.pref_scores;
        let mut add = |key: Sym, o: TaskIdx, w: i64| {
            let labels = &s.nodes.rec[s.tasks.node()[o.ix()] as usize].labels;
            if let Some(v) = label(labels, key) {
                *scores.entry((key, v)).or_insert(0) += w;
            }
        };
        for term in pod.pod_preferred.iter() {
            for_matching(s, term, t, |o| add(term.topology_key, o, term.weight as i64));
        }
        for term in pod.anti_preferred.iter() {
            for_matching(s, term, t, |o| add(term.topology_key, o, -(term.weight as i64)));
        }
        for &o in holders {
            let oc = &s.tasks.rec[o.ix()].c;
            for term in oc.pod_required.iter() {
                if term.matches_pod(pod.namespace, &pod.labels, names) {
                    add(term.topology_key, o, hard_weight);
                }
            }
            for term in oc.pod_preferred.iter() {
                if term.matches_pod(pod.namespace, &pod.labels, names) {
                    add(term.topology_key, o, term.weight as i64);
                }
            }
            for term in oc.anti_preferred.iter() {
                if term.matches_pod(pod.namespace, &pod.labels, names) {
                    add(term.topology_key, o, -(term.weight as i64));
                }
            }
        }
        self.pref_active = has_pref || !self.pref_scores.is_empty();
    }

    /// kube InterPodAffinity Filter on node `n`: affinity, then anti-affinity, then existing
    /// pods' anti-affinity.
    pub fn interpod_filter(&self, s: &State<'_>, pod: &CPod, n: NodeIdx) -> Result<(), crate::session::fit::Reason> {
        use crate::session::fit::Reason;
        if !self.interpod {
            return Ok(());
        }
        let nl = &s.nodes.rec[n.ix()].labels;
        if !pod.pod_required.is_empty() {
            let ok = pod
                .pod_required
                .iter()
                .zip(&self.affinity_values)
                .all(|(term, vals)| label(nl, term.topology_key).is_some_and(|v| vals.contains(&v)));
            // The first pod of a group may go anywhere its own terms' topology keys exist.
            let first = !self.affinity_any
                && self.affinity_self
                && pod.pod_required.iter().all(|term| label(nl, term.topology_key).is_some());
            if !ok && !first {
                return Err(Reason::PodAffinity);
            }
        }
        for (term, vals) in pod.anti_required.iter().zip(&self.anti_values) {
            if label(nl, term.topology_key).is_some_and(|v| vals.contains(&v)) {
                return Err(Reason::PodAntiAffinity);
            }
        }
        if !self.existing_anti.is_empty() && self.existing_anti.iter().any(|&(k, v)| label(nl, k) == Some(v)) {
            return Err(Reason::ExistingAntiAffinity);
        }
        Ok(())
    }

    /// kube PodTopologySpread Filter on node `n`.
    pub fn spread_filter(&self, s: &State<'_>, pod: &CPod, n: NodeIdx) -> Result<(), crate::session::fit::Reason> {
        use crate::session::fit::Reason;
        let nl = &s.nodes.rec[n.ix()].labels;
        for st in &self.spread_hard {
            let c = &pod.spread[st.index];
            let Some(v) = label(nl, c.key) else {
                return Err(Reason::SpreadMissingLabel);
            };
            let cnt = st.counts.get(&v).copied().unwrap_or(0);
            if cnt + st.self_match - st.min > c.max_skew as i64 {
                return Err(Reason::Spread);
            }
        }
        Ok(())
    }
}

fn spread_eligible(s: &State<'_>, pod: &CPod, key: Sym, ignore_affinity: bool, honor_taints: bool, n: NodeIdx) -> bool {
    if label(&s.nodes.rec[n.ix()].labels, key).is_none() {
        return false;
    }
    if !ignore_affinity && !node_affinity_ok(s, pod, n) {
        return false;
    }
    if honor_taints && untolerated_taint(s, pod, n).is_some() {
        return false;
    }
    true
}

/// kube's `DefaultNormalizeScore(100, reverse)` over raw scores.
pub fn default_normalize(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().max().unwrap_or(0).max(0);
    if max == 0 {
        if reverse {
            scores.iter_mut().for_each(|x| *x = crate::limits::MAX_NODE_SCORE);
        }
        return;
    }
    for x in scores.iter_mut() {
        let mut v = crate::limits::MAX_NODE_SCORE * *x / max;
        if reverse {
            v = crate::limits::MAX_NODE_SCORE - v;
        }
        *x = v;
    }
}
