//! Interner compaction for the cluster copy. Under pod churn every new pod brings names (its
//! own, its labels' values) that stay interned after it is gone; without compaction the table
//! grows with every pod ever seen.
//!
//! Policy: [`Cluster::apply`] compacts when the interner holds more than twice the names that
//! were live at the previous compaction (and at least
//! [`crate::limits::MIN_INTERNER_COMPACT`]). Compaction marks every id held by a record (nodes,
//! pods with their compiled constraints, PodGroups) and by the kept session layout, keeps those
//! strings in their old order ([`crate::intern::Interner::retain`]) and remaps every held id.
//! Sessions borrow the cluster, so none is open while ids change; nothing outside the cluster
//! may keep a [`Sym`] across an `apply`.

use super::compile::HoldsSyms;
use super::{Cluster, NodeRec, PodGroupRec, PodRec};
use crate::intern::Sym;

fn node_syms(n: &mut NodeRec, f: &mut dyn FnMut(&mut Sym)) {
    f(&mut n.name);
    n.labels.syms_mut(f);
    for t in n.taints.iter_mut() {
        f(&mut t.key);
        f(&mut t.value);
    }
}

fn pod_syms(p: &mut PodRec, f: &mut dyn FnMut(&mut Sym)) {
    p.c.syms_mut(f);
}

fn group_syms(g: &mut PodGroupRec, f: &mut dyn FnMut(&mut Sym)) {
    f(&mut g.uid);
    for (role, _) in g.min_task_member.iter_mut() {
        f(role);
    }
}

impl Cluster {
    /// Calls `f` on every interned id the cluster copy holds.
    fn all_syms(&mut self, f: &mut dyn FnMut(&mut Sym)) {
        self.nodes.iter_mut().flatten().for_each(|n| node_syms(n, f));
        self.pods.iter_mut().flatten().for_each(|p| pod_syms(p, f));
        self.groups.iter_mut().flatten().for_each(|g| group_syms(g, f));
        if let Some(l) = &mut self.prepared.0 {
            l.syms(&mut *f);
        }
    }

    /// Drops every interned string no record holds and renumbers the rest (order kept), then
    /// remaps every id held. Called by [`Cluster::apply`] when the interner has doubled since
    /// the last compaction; callable directly (e.g. after a mass deletion). Ids taken from the
    /// interner before the call are invalid after it.
    pub fn compact_names(&mut self) {
        let mut live = vec![false; self.names.len()];
        self.all_syms(&mut |s| {
            if let Some(x) = live.get_mut(s.0 as usize) {
                *x = true;
            }
        });
        let remap = self.names.retain(&live);
        self.all_syms(&mut |s| remap.apply(s));
        self.names_limit = 2 * self.names.len();
    }
}
