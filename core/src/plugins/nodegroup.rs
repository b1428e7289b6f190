//! `nodegroup` (volcano-behaviour.md §3 nodegroup; Volcano `plugins/nodegroup/nodegroup.go`):
//! a queue's jobs run only in the node groups its `spec.affinity` allows, node groups being the
//! values of the node label `volcano.sh/nodegroup-name`.
//!
//! Predicate (kube `UnschedulableAndUnresolvable`, so preemption skips the node too), for a task
//! of a job in queue `q` on node `n` of group `g`:
//! - `n` has no group label: fails with "node group label not found", unless `strict` is false
//!   and `q` has no rules at all;
//! - `q` has no rules (no `spec.affinity`, or all four lists empty): "node group affinity not
//!   specified";
//! - allowed when `g` is in required or preferred affinity, except that required
//!   anti-affinity forbids it, and preferred anti-affinity allows it again (Volcano's order of
//!   checks); else "node does not satisfy the node group affinity".
//!
//! NodeOrder: 0 on a node without the label or for a queue without `spec.affinity`; else +100
//! when `g` is required, +50 when preferred (with `enablePreferredOrder`, 50 × (n − i) / n for
//! the `i`-th of the `n` preferred groups instead), and exactly −1 when `g` is in preferred
//! anti-affinity.
//!
//! With `enableHierarchy`, a queue without `spec.affinity` takes its nearest ancestor's
//! (`spec.parent`, default `root`). Arguments: `strict` (true), `enablePreferredOrder` (false).
//! Not done: the queue annotation `volcano.sh/nodegroup-resource-limits` (per-group caps of a
//! queue's allocation in Volcano's newest plugin) is not read.

use super::k8s::PodCtx;
use crate::conf::{ArgKind, ArgSpec, Arguments};
use crate::model::NodeGroupAffinity;
use crate::session::fit::Reason;
use crate::session::tables::{NodeIdx, TaskIdx, NONE};
use crate::session::State;

/// The node label naming a node's group.
pub const NODE_GROUP_LABEL: &str = "volcano.sh/nodegroup-name";

/// The `arguments` keys nodegroup reads.
pub const ARGS: &[ArgSpec] =
    &[ArgSpec::new("strict", ArgKind::Bool, "true"), ArgSpec::new("enablePreferredOrder", ArgKind::Bool, "false")];

/// Volcano's `BaseScore`.
const BASE_SCORE: f64 = 100.0;

const REQUIRED: u8 = 1;
const PREFERRED: u8 = 2;
const ANTI_REQUIRED: u8 = 4;
const ANTI_PREFERRED: u8 = 8;

/// One queue's rules over the session's node groups.
struct Rules {
    /// Whether all four lists are empty (Volcano's "unset affinity").
    unset: bool,
    /// Per group index: the lists naming it ([`REQUIRED`], …).
    bits: Vec<u8>,
    /// Per group index: its position in the preferred list (the last when repeated), or
    /// `u32::MAX`.
    preferred_at: Vec<u32>,
    /// Number of distinct preferred groups.
    preferred_len: usize,
}

/// The nodegroup plugin: each node's group and each queue's rules, resolved at open.
pub struct NodeGroup {
    strict: bool,
    preferred_order: bool,
    /// Per node row: its group index, or [`NONE`] without the label.
    node_group: Vec<u32>,
    /// Per queue row: its rules (own or inherited) as an index into `rules`, or [`NONE`] when
    /// it has no `spec.affinity`.
    queue_rules: Vec<u32>,
    rules: Vec<Rules>,
}

impl NodeGroup {
    /// Reads `strict` (true) and `enablePreferredOrder` (false); `hierarchy` is the plugin's
    /// `enableHierarchy` flag.
    pub fn open(s: &State<'_>, a: &Arguments, hierarchy: bool) -> Self {
        let mut groups: Vec<&str> =
            (0..s.nodes.len).filter_map(|n| s.nodes.rec[n].spec.labels.get(NODE_GROUP_LABEL).map(String::as_str)).collect();
        groups.sort_unstable();
        groups.dedup();
        let index = |g: &str| groups.binary_search(&g).ok();
        let node_group = (0..s.nodes.len)
            .map(|n| s.nodes.rec[n].spec.labels.get(NODE_GROUP_LABEL).and_then(|g| index(g)).map_or(NONE, |i| i as u32))
            .collect();
        let mut rules = Vec::new();
        let queue_rules = (0..s.queues.len)
            .map(|q| match affinity_of(s, &s.queues.rec[q].spec.name, hierarchy) {
                Some(aff) => {
                    rules.push(Rules::new(aff, groups.len(), &index));
                    (rules.len() - 1) as u32
                }
                None => NONE,
            })
            .collect();
        NodeGroup {
            strict: a.bool("strict").unwrap_or(true),
            preferred_order: a.bool("enablePreferredOrder").unwrap_or(false),
            node_group,
            queue_rules,
            rules,
        }
    }

    /// The rules of task `t`'s job's queue; `Err(())` when `t` has no job.
    fn rules_of(&self, s: &State<'_>, t: TaskIdx) -> Result<Option<&Rules>, ()> {
        let j = s.tasks.job[t.ix()];
        if j == NONE {
            return Err(());
        }
        let q = s.jobs.queue[j as usize] as usize;
        Ok(self.queue_rules.get(q).filter(|&&r| r != NONE).map(|&r| &self.rules[r as usize]))
    }

    /// The predicate of task `t` on node `n`.
    pub fn check(&self, s: &State<'_>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
        // Volcano fails every node for a task whose job is not in the session.
        let rules = self.rules_of(s, t).map_err(|()| Reason::NodeGroupAffinityNotFound)?;
        let unset = rules.is_none_or(|r| r.unset);
        let g = self.node_group[n.ix()];
        if g == NONE {
            return if !self.strict && unset { Ok(()) } else { Err(Reason::NodeGroupLabelNotFound) };
        }
        let Some(r) = rules.filter(|_| !unset) else {
            return Err(Reason::NodeGroupAffinityNotFound);
        };
        let b = r.bits[g as usize];
        let mut allowed = b & (REQUIRED | PREFERRED) != 0;
        if b & ANTI_REQUIRED != 0 {
            allowed = false;
        }
        if b & ANTI_PREFERRED != 0 {
            allowed = true;
        }
        if allowed {
            Ok(())
        } else {
            Err(Reason::NodeGroupUnsatisfied)
        }
    }

    /// The node score of task `t` on node `n`.
    pub fn score(&self, s: &State<'_>, t: TaskIdx, n: NodeIdx) -> f64 {
        let g = self.node_group[n.ix()];
        let Ok(Some(r)) = self.rules_of(s, t) else { return 0.0 };
        if g == NONE {
            return 0.0;
        }
        let (g, b) = (g as usize, r.bits[g as usize]);
        let mut score = 0.0;
        if b & REQUIRED != 0 {
            score += BASE_SCORE;
        }
        if self.preferred_order {
            if r.preferred_at[g] != u32::MAX {
                let len = r.preferred_len as f64;
                score += 0.5 * BASE_SCORE * (len - r.preferred_at[g] as f64) / len;
            }
        } else if b & PREFERRED != 0 {
            score += 0.5 * BASE_SCORE;
        }
        if b & ANTI_PREFERRED != 0 {
            score = -1.0;
        }
        score
    }
}

impl Rules {
    fn new(aff: &NodeGroupAffinity, groups: usize, index: &impl Fn(&str) -> Option<usize>) -> Self {
        let mut r = Rules {
            unset: aff.required.is_empty()
                && aff.preferred.is_empty()
                && aff.anti_required.is_empty()
                && aff.anti_preferred.is_empty(),
            bits: vec![0; groups],
            preferred_at: vec![u32::MAX; groups],
            preferred_len: 0,
        };
        let lists = [
            (&aff.required, REQUIRED),
            (&aff.preferred, PREFERRED),
            (&aff.anti_required, ANTI_REQUIRED),
            (&aff.anti_preferred, ANTI_PREFERRED),
        ];
        for (list, bit) in lists {
            for g in list.iter().filter_map(|g| index(g)) {
                r.bits[g] |= bit;
            }
        }
        let mut distinct: Vec<&str> = aff.preferred.iter().map(String::as_str).collect();
        distinct.sort_unstable();
        distinct.dedup();
        r.preferred_len = distinct.len();
        for (i, g) in aff.preferred.iter().enumerate() {
            if let Some(g) = index(g) {
                r.preferred_at[g] = i as u32;
            }
        }
        r
    }
}

/// The node group rules of queue `name`: its own `spec.affinity`, else with `hierarchy` the
/// nearest ancestor's (Volcano `updateAffinityFromAncestor`; a cycle or a missing parent ends
/// the walk).
fn affinity_of<'c>(s: &State<'c>, name: &str, hierarchy: bool) -> Option<&'c NodeGroupAffinity> {
    let mut q = s.cluster.queue(name)?;
    if q.spec.node_group_affinity.is_some() || !hierarchy {
        return q.spec.node_group_affinity.as_ref();
    }
    let mut seen = vec![q.spec.name.as_str()];
    while q.spec.name != "root" {
        let parent = if q.spec.parent.is_empty() { "root" } else { q.spec.parent.as_str() };
        if seen.contains(&parent) {
            return None;
        }
        q = s.cluster.queue(parent)?;
        if let Some(a) = &q.spec.node_group_affinity {
            return Some(a);
        }
        seen.push(parent);
    }
    None
}

plugin_impl! {
    impl<'a> for NodeGroup {
        fn name(&self) -> &'static str {
            "nodegroup"
        }
        fn predicate(&self, s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.check(s, t, n)
        }
        fn predicate_static(&self, s: &State<'a>, t: TaskIdx, n: NodeIdx) -> Result<(), Reason> {
            self.check(s, t, n)
        }
        fn predicate_dynamic(&self, _s: &State<'a>, _ctx: &PodCtx, _t: TaskIdx, _n: NodeIdx) -> Result<(), Reason> {
            Ok(())
        }
        fn node_order(&self, s: &State<'a>, _ctx: &PodCtx, t: TaskIdx, n: NodeIdx) -> f64 {
            self.score(s, t, n)
        }
        fn class_key(&self, s: &State<'a>, t: TaskIdx) -> Option<u64> {
            // The result depends on the task only through its queue's rules.
            let j = s.tasks.job[t.ix()];
            Some(if j == NONE { u64::MAX } else { self.queue_rules.get(s.jobs.queue[j as usize] as usize).copied().unwrap_or(NONE) as u64 })
        }
    }
}

impl NodeGroup {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::Predicate.bit() | F::NodeOrder.bit()
    };
}
