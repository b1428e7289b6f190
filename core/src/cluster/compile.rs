//! Interned ("compiled") forms of labels, selectors, taints, tolerations and affinity terms, made
//! once when an object enters the cluster so predicates compare integers.

use crate::intern::{Interner, Sym};
use crate::model::*;

/// Labels as `(key, value)` pairs sorted by key.
pub type CLabels = Box<[(Sym, Sym)]>;

/// Value of `key` in sorted labels.
#[inline]
pub fn label(labels: &[(Sym, Sym)], key: Sym) -> Option<Sym> {
    labels.binary_search_by(|(k, _)| k.cmp(&key)).ok().map(|i| labels[i].1)
}

/// Interns a label map.
pub fn labels(i: &mut Interner, l: &Labels) -> CLabels {
    let mut v: Vec<(Sym, Sym)> = l.iter().map(|(k, v)| (i.intern(k), i.intern(v))).collect();
    v.sort_by_key(|p| p.0);
    v.into_boxed_slice()
}

/// A compiled selector requirement.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CReq {
    /// Label key.
    pub key: Sym,
    /// Operator.
    pub op: SelectorOp,
    /// Values for In/NotIn.
    pub values: Box<[Sym]>,
    /// The integer for Gt/Lt (None when it does not parse: the requirement never matches).
    pub int: Option<i64>,
}

impl CReq {
    fn new(i: &mut Interner, r: &Requirement) -> Self {
        CReq {
            key: i.intern(&r.key),
            op: r.op,
            values: r.values.iter().map(|v| i.intern(v)).collect(),
            int: r.values.first().and_then(|v| v.parse().ok()),
        }
    }

    /// Whether a label set satisfies this requirement (Kubernetes `labels.Requirement.Matches`).
    pub fn matches(&self, labels: &[(Sym, Sym)], names: &Interner) -> bool {
        let v = label(labels, self.key);
        match self.op {
            SelectorOp::In => v.is_some_and(|v| self.values.contains(&v)),
            SelectorOp::NotIn => v.is_none_or(|v| !self.values.contains(&v)),
            SelectorOp::Exists => v.is_some(),
            SelectorOp::DoesNotExist => v.is_none(),
            SelectorOp::Gt | SelectorOp::Lt => {
                let (Some(v), Some(bound)) = (v, self.int) else {
                    return false;
                };
                let Ok(x) = names.resolve(v).parse::<i64>() else {
                    return false;
                };
                if self.op == SelectorOp::Gt {
                    x > bound
                } else {
                    x < bound
                }
            }
        }
    }
}

/// A compiled label selector (`matchLabels` become `In` requirements).
#[derive(Clone, Debug, Default)]
pub struct CSelector {
    /// Requirements, ANDed.
    pub reqs: Box<[CReq]>,
}

impl CSelector {
    /// Compiles a label selector.
    pub fn new(i: &mut Interner, s: &LabelSelector) -> Self {
        let mut reqs: Vec<CReq> = s
            .match_labels
            .iter()
            .map(|(k, v)| CReq { key: i.intern(k), op: SelectorOp::In, values: vec![i.intern(v)].into(), int: None })
            .collect();
        reqs.extend(s.match_expressions.iter().map(|r| CReq::new(i, r)));
        CSelector { reqs: reqs.into() }
    }

    /// Whether `labels` match every requirement (an empty selector matches all).
    pub fn matches(&self, labels: &[(Sym, Sym)], names: &Interner) -> bool {
        self.reqs.iter().all(|r| r.matches(labels, names))
    }
}

/// A compiled node selector term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CNodeTerm {
    /// Label requirements.
    pub reqs: Box<[CReq]>,
    /// `metadata.name` field requirements.
    pub fields: Box<[CReq]>,
}

impl CNodeTerm {
    fn new(i: &mut Interner, t: &NodeSelectorTerm) -> Self {
        CNodeTerm {
            reqs: t.match_expressions.iter().map(|r| CReq::new(i, r)).collect(),
            fields: t.match_fields.iter().filter(|r| r.key == "metadata.name").map(|r| CReq::new(i, r)).collect(),
        }
    }

    /// kube's node selector term match: a term with no requirements matches nothing.
    pub fn matches(&self, labels: &[(Sym, Sym)], node_name: Sym, names: &Interner) -> bool {
        if self.reqs.is_empty() && self.fields.is_empty() {
            return false;
        }
        let name_label = [(Sym::EMPTY, node_name)];
        self.reqs.iter().all(|r| r.matches(labels, names))
            && self.fields.iter().all(|r| {
                let r2 = CReq { key: Sym::EMPTY, op: r.op, values: r.values.clone(), int: r.int };
                r2.matches(&name_label, names)
            })
    }
}

/// Namespaces a pod affinity term applies to.
#[derive(Clone, Debug)]
pub enum NsMatch {
    /// Every namespace (`namespaceSelector: {}`).
    All,
    /// These namespaces.
    List(Box<[Sym]>),
}

impl NsMatch {
    /// Whether namespace `ns` is covered.
    pub fn has(&self, ns: Sym) -> bool {
        match self {
            NsMatch::All => true,
            NsMatch::List(l) => l.contains(&ns),
        }
    }
}

/// A compiled pod affinity term.
#[derive(Clone, Debug)]
pub struct CPodTerm {
    /// Pod selector (None matches no pod).
    pub selector: Option<CSelector>,
    /// Namespaces.
    pub namespaces: NsMatch,
    /// Topology key.
    pub topology_key: Sym,
    /// Weight (preferred terms; 0 for required).
    pub weight: i32,
}

impl CPodTerm {
    fn new(i: &mut Interner, t: &PodAffinityTerm, own_ns: Sym, weight: i32) -> Self {
        let namespaces = match &t.namespace_selector {
            Some(s) if s.match_labels.is_empty() && s.match_expressions.is_empty() => NsMatch::All,
            _ if t.namespaces.is_empty() && t.namespace_selector.is_none() => NsMatch::List(vec![own_ns].into()),
            _ => NsMatch::List(t.namespaces.iter().map(|n| i.intern(n)).collect()),
        };
        CPodTerm {
            selector: t.label_selector.as_ref().map(|s| CSelector::new(i, s)),
            namespaces,
            topology_key: i.intern(&t.topology_key),
            weight,
        }
    }

    /// Whether a pod (namespace, labels) matches this term.
    pub fn matches_pod(&self, ns: Sym, labels: &[(Sym, Sym)], names: &Interner) -> bool {
        self.namespaces.has(ns) && self.selector.as_ref().is_some_and(|s| s.matches(labels, names))
    }
}

/// A compiled taint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CTaint {
    /// Key.
    pub key: Sym,
    /// Value.
    pub value: Sym,
    /// Effect.
    pub effect: TaintEffect,
}

/// A compiled toleration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CToleration {
    /// Key (EMPTY with Exists = all keys).
    pub key: Sym,
    /// Operator.
    pub op: TolerationOp,
    /// Value.
    pub value: Sym,
    /// Effect (None = all).
    pub effect: Option<TaintEffect>,
}

impl CToleration {
    /// kube's `Toleration.ToleratesTaint`.
    pub fn tolerates(&self, t: &CTaint) -> bool {
        if self.effect.is_some_and(|e| e != t.effect) {
            return false;
        }
        if self.key != Sym::EMPTY && self.key != t.key {
            return false;
        }
        match self.op {
            TolerationOp::Exists => true,
            TolerationOp::Equal => self.key != Sym::EMPTY && self.value == t.value,
        }
    }
}

/// Whether any toleration tolerates `t`.
pub fn tolerated(tols: &[CToleration], t: &CTaint) -> bool {
    tols.iter().any(|x| x.tolerates(t))
}

/// A compiled topology spread constraint.
#[derive(Clone, Debug)]
pub struct CSpread {
    /// maxSkew.
    pub max_skew: i32,
    /// Topology key.
    pub key: Sym,
    /// DoNotSchedule (true) or ScheduleAnyway.
    pub hard: bool,
    /// Selector, with matchLabelKeys folded in.
    pub selector: Option<CSelector>,
    /// minDomains.
    pub min_domains: i32,
    /// nodeAffinityPolicy Ignore.
    pub ignore_node_affinity: bool,
    /// nodeTaintsPolicy Honor.
    pub honor_node_taints: bool,
}

/// Everything about a pod the predicates and scores need, interned.
#[derive(Clone, Debug, Default)]
pub struct CPod {
    /// Namespace.
    pub namespace: Sym,
    /// Name.
    pub name: Sym,
    /// Labels.
    pub labels: CLabels,
    /// Role (`volcano.sh/task-spec`).
    pub role: Sym,
    /// nodeSelector as In requirements.
    pub node_selector: Box<[CReq]>,
    /// Required node affinity terms (None = unset).
    pub node_required: Option<Box<[CNodeTerm]>>,
    /// Preferred node affinity terms with weights.
    pub node_preferred: Box<[(i32, CNodeTerm)]>,
    /// Required pod affinity.
    pub pod_required: Box<[CPodTerm]>,
    /// Preferred pod affinity.
    pub pod_preferred: Box<[CPodTerm]>,
    /// Required pod anti-affinity.
    pub anti_required: Box<[CPodTerm]>,
    /// Preferred pod anti-affinity.
    pub anti_preferred: Box<[CPodTerm]>,
    /// Tolerations.
    pub tolerations: Box<[CToleration]>,
    /// Host ports: (ip, protocol, port); ip EMPTY = all addresses (`""` or `0.0.0.0`, not `::`).
    pub host_ports: Box<[(Sym, Sym, i32)]>,
    /// Topology spread constraints.
    pub spread: Box<[CSpread]>,
}

impl CPod {
    /// Whether the pod has any inter-pod affinity term (required or preferred).
    pub fn has_pod_affinity(&self) -> bool {
        !(self.pod_required.is_empty()
            && self.pod_preferred.is_empty()
            && self.anti_required.is_empty()
            && self.anti_preferred.is_empty())
    }
}

/// Compiles a pod's scheduling constraints.
pub fn pod(i: &mut Interner, p: &PodSpec) -> CPod {
    let ns = i.intern(&p.namespace);
    let a = &p.affinity;
    let terms =
        |i: &mut Interner, v: &[PodAffinityTerm]| -> Box<[CPodTerm]> { v.iter().map(|t| CPodTerm::new(i, t, ns, 0)).collect() };
    let weighted = |i: &mut Interner, v: &[WeightedPodAffinityTerm]| -> Box<[CPodTerm]> {
        v.iter().map(|t| CPodTerm::new(i, &t.term, ns, t.weight)).collect()
    };
    // kube NodePorts (`HostPortInfo`): only an empty host IP and `0.0.0.0` mean every address;
    // `::` is one address like any other.
    let host_ip_all = |ip: &str| ip.is_empty() || ip == "0.0.0.0";
    CPod {
        namespace: ns,
        name: i.intern(&p.name),
        labels: labels(i, &p.labels),
        role: i.intern(&p.role),
        node_selector: p
            .node_selector
            .iter()
            .map(|(k, v)| CReq { key: i.intern(k), op: SelectorOp::In, values: vec![i.intern(v)].into(), int: None })
            .collect(),
        node_required: a.node_required.as_ref().map(|ts| ts.iter().map(|t| CNodeTerm::new(i, t)).collect()),
        node_preferred: a.node_preferred.iter().map(|t| (t.weight, CNodeTerm::new(i, &t.preference))).collect(),
        pod_required: terms(i, &a.pod_required),
        pod_preferred: weighted(i, &a.pod_preferred),
        anti_required: terms(i, &a.anti_required),
        anti_preferred: weighted(i, &a.anti_preferred),
        tolerations: p
            .tolerations
            .iter()
            .map(|t| CToleration { key: i.intern(&t.key), op: t.op, value: i.intern(&t.value), effect: t.effect })
            .collect(),
        host_ports: p
            .host_ports
            .iter()
            .map(|h| {
                let ip = if host_ip_all(&h.host_ip) { Sym::EMPTY } else { i.intern(&h.host_ip) };
                let proto = if h.protocol.is_empty() { "TCP" } else { &h.protocol };
                (ip, i.intern(proto), h.port)
            })
            .collect(),
        spread: p
            .topology_spread
            .iter()
            .map(|c| {
                let mut sel = c.label_selector.clone();
                if let Some(s) = sel.as_mut() {
                    for k in &c.match_label_keys {
                        if let Some(v) = p.labels.get(k) {
                            s.match_expressions.push(Requirement { key: k.clone(), op: SelectorOp::In, values: vec![v.clone()] });
                        }
                    }
                }
                CSpread {
                    max_skew: c.max_skew.max(1),
                    key: i.intern(&c.topology_key),
                    hard: c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule,
                    selector: sel.as_ref().map(|s| CSelector::new(i, s)),
                    min_domains: c.min_domains.max(1),
                    ignore_node_affinity: c.ignore_node_affinity,
                    honor_node_taints: c.honor_node_taints,
                }
            })
            .collect(),
    }
}

/// Every [`Sym`] a compiled object holds, visited mutably (marking live names and remapping
/// them when the cluster compacts its interner, [`super::Cluster::compact_names`]).
pub trait HoldsSyms {
    /// Calls `f` on every id held.
    fn syms_mut(&mut self, f: &mut dyn FnMut(&mut Sym));
}

impl HoldsSyms for [(Sym, Sym)] {
    fn syms_mut(&mut self, f: &mut dyn FnMut(&mut Sym)) {
        for (k, v) in self {
            f(k);
            f(v);
        }
    }
}

impl HoldsSyms for CReq {
    fn syms_mut(&mut self, f: &mut dyn FnMut(&mut Sym)) {
        f(&mut self.key);
        self.values.iter_mut().for_each(&mut *f);
    }
}

impl HoldsSyms for CSelector {
    fn syms_mut(&mut self, f: &mut dyn FnMut(&mut Sym)) {
        self.reqs.iter_mut().for_each(|r| r.syms_mut(f));
    }
}

impl HoldsSyms for CNodeTerm {
    fn syms_mut(&mut self, f: &mut dyn FnMut(&mut Sym)) {
        self.reqs.iter_mut().chain(self.fields.iter_mut()).for_each(|r| r.syms_mut(f));
    }
}

impl HoldsSyms for CPodTerm {
    fn syms_mut(&mut self, f: &mut dyn FnMut(&mut Sym)) {
        if let Some(s) = &mut self.selector {
            s.syms_mut(f);
        }
        if let NsMatch::List(l) = &mut self.namespaces {
            l.iter_mut().for_each(&mut *f);
        }
        f(&mut self.topology_key);
    }
}

impl HoldsSyms for CPod {
    fn syms_mut(&mut self, f: &mut dyn FnMut(&mut Sym)) {
        f(&mut self.namespace);
        f(&mut self.name);
        self.labels.syms_mut(f);
        f(&mut self.role);
        self.node_selector.iter_mut().for_each(|r| r.syms_mut(f));
        if let Some(ts) = &mut self.node_required {
            ts.iter_mut().for_each(|t| t.syms_mut(f));
        }
        self.node_preferred.iter_mut().for_each(|(_, t)| t.syms_mut(f));
        for terms in [&mut self.pod_required, &mut self.pod_preferred, &mut self.anti_required, &mut self.anti_preferred] {
            terms.iter_mut().for_each(|t| t.syms_mut(f));
        }
        for t in self.tolerations.iter_mut() {
            f(&mut t.key);
            f(&mut t.value);
        }
        for (ip, proto, _) in self.host_ports.iter_mut() {
            f(ip);
            f(proto);
        }
        for s in self.spread.iter_mut() {
            f(&mut s.key);
            if let Some(sel) = &mut s.selector {
                sel.syms_mut(f);
            }
        }
    }
}
