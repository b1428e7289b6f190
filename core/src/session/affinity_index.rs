//! Indexes that let inter-pod affinity and anti-affinity look at the few pods a term can match
//! instead of every task (kube-scheduler keeps similar per-node lists of pods with affinity).
//! Built into the arena at session open, only when some pod carries inter-pod terms; static
//! for the session (labels and terms do not change), so the caller still filters for pods that
//! exist on a node at the time of the query.

use crate::cluster::compile::{CPodTerm, CSelector};
use crate::intern::Sym;
use crate::model::SelectorOp;
use crate::session::tables::{NodeIdx, NodeTable, TaskIdx, TaskTable};
use bumpalo::Bump;
use std::sync::atomic::{AtomicU32, Ordering};

/// Label and term indexes of one session.
pub struct AffinityIndex<'a> {
    /// `(label key, value, task)` for every label of every task, sorted.
    labels: &'a [(Sym, Sym, u32)],
    /// `(key, value, task)`: task's pod has an inter-pod term whose selector requires
    /// `key = value` (the term's first equality requirement), sorted, one entry per pair.
    terms: &'a [(Sym, Sym, u32)],
    /// Tasks with a term whose selector has no equality requirement (it may match any pod).
    unindexed: &'a [u32],
    /// `(label key, value, node)` for every label of every node, sorted.
    node_labels: &'a [(Sym, Sym, u32)],
    /// A task with inter-pod terms last seen on a node (`u32::MAX`: none yet).
    hint: AtomicU32,
}

/// The first `key = value` requirement of a selector (matchLabels, or `In` with one value):
/// every pod the selector matches carries that label.
fn equality(sel: &CSelector) -> Option<(Sym, Sym)> {
    sel.reqs.iter().find(|r| r.op == SelectorOp::In && r.values.len() == 1).map(|r| (r.key, r.values[0]))
}

fn range(v: &[(Sym, Sym, u32)], key: Sym, value: Sym) -> &[(Sym, Sym, u32)] {
    let lo = v.partition_point(|&(k, x, _)| (k, x) < (key, value));
    let hi = v.partition_point(|&(k, x, _)| (k, x) <= (key, value));
    &v[lo..hi]
}

impl<'a> AffinityIndex<'a> {
    /// Builds the indexes of `tasks`; `affinity` lists the tasks whose pods have inter-pod terms.
    pub fn build(arena: &'a Bump, nodes: &NodeTable<'a>, tasks: &TaskTable<'a>, affinity: &[TaskIdx]) -> Self {
        let mut node_labels = bumpalo::collections::Vec::new_in(arena);
        for (i, rec) in nodes.rec.iter().enumerate() {
            node_labels.extend(rec.labels.iter().map(|&(k, v)| (k, v, i as u32)));
        }
        node_labels.sort_unstable();
        let mut labels = bumpalo::collections::Vec::new_in(arena);
        for (i, rec) in tasks.rec.iter().enumerate() {
            labels.extend(rec.c.labels.iter().map(|&(k, v)| (k, v, i as u32)));
        }
        labels.sort_unstable();
        let mut terms = bumpalo::collections::Vec::new_in(arena);
        let mut unindexed = bumpalo::collections::Vec::new_in(arena);
        for &t in affinity {
            let c = &tasks.rec[t.ix()].c;
            let all =
                c.pod_required.iter().chain(c.pod_preferred.iter()).chain(c.anti_required.iter()).chain(c.anti_preferred.iter());
            let mut wide = false;
            for term in all {
                match term.selector.as_ref().map(equality) {
                    None => {} // no selector: matches no pod
                    Some(Some((k, v))) => terms.push((k, v, t.0)),
                    Some(None) => wide = true,
                }
            }
            if wide {
                unindexed.push(t.0);
            }
        }
        terms.sort_unstable();
        terms.dedup();
        AffinityIndex {
            labels: labels.into_bump_slice(),
            terms: terms.into_bump_slice(),
            unindexed: unindexed.into_bump_slice(),
            node_labels: node_labels.into_bump_slice(),
            hint: AtomicU32::new(u32::MAX),
        }
    }

    /// The tasks a term's selector can match (a superset; `None` = any task may match, scan
    /// them all).
    pub fn term_candidates(&self, term: &CPodTerm) -> Option<impl Iterator<Item = TaskIdx> + '_> {
        let sel = term.selector.as_ref()?;
        let (k, v) = equality(sel)?;
        Some(range(self.labels, k, v).iter().map(|&(_, _, t)| TaskIdx(t)))
    }

    /// Into `out` (cleared, sorted, deduplicated): the tasks with inter-pod terms of which
    /// some term may match a pod with `labels` (a superset).
    pub fn terms_matching(&self, labels: &[(Sym, Sym)], out: &mut Vec<TaskIdx>) {
        out.clear();
        for &(k, v) in labels {
            out.extend(range(self.terms, k, v).iter().map(|&(_, _, t)| TaskIdx(t)));
        }
        out.extend(self.unindexed.iter().map(|&t| TaskIdx(t)));
        out.sort_unstable();
        out.dedup();
    }

    /// The nodes labelled `key = value`, in node order.
    pub fn nodes_with(&self, key: Sym, value: Sym) -> impl Iterator<Item = NodeIdx> + '_ {
        range(self.node_labels, key, value).iter().map(|&(_, _, n)| NodeIdx(n))
    }

    /// A task with inter-pod terms last seen existing, to try first.
    pub fn hint(&self) -> Option<TaskIdx> {
        match self.hint.load(Ordering::Relaxed) {
            u32::MAX => None,
            t => Some(TaskIdx(t)),
        }
    }

    /// Remembers `t` as existing.
    pub fn set_hint(&self, t: TaskIdx) {
        self.hint.store(t.0, Ordering::Relaxed);
    }
}
