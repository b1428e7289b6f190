//! `pdb` (volcano-behaviour.md §3 pdb; Volcano `plugins/pdb/pdb.go`): keeps evictions within
//! the namespace's PodDisruptionBudgets. Registered as Preemptable, Reclaimable and
//! VictimTasks, all the same filter: walking the candidates in order, each PodDisruptionBudget
//! of the candidate's namespace whose selector matches its labels (and that does not list it in
//! `status.disruptedPods`) gives up one allowed disruption; a candidate that takes any of its
//! budgets below zero is not a victim. Arguments: none.
//!
//! A budget's allowance is `status.disruptionsAllowed` when the disruption controller has
//! written it, as Volcano reads it. For a budget without a status (hand-written manifests, a
//! server without that controller), it is computed from the spec as the disruption controller
//! does: `currentHealthy − desiredHealthy`, at least 0, where the expected pods are the
//! non-terminated pods of the namespace the selector matches, `currentHealthy` those of them
//! Running and not terminating, and `desiredHealthy` is `minAvailable` (a count, or the
//! percentage of the expected pods rounded up), else expected − `maxUnavailable` (likewise),
//! else 1 (the API's default `minAvailable`). The controller scales a percentage by the
//! owning controller's replicas; without controllers Basalt takes the matching pods.
//!
//! Differences from Volcano, both on the side of keeping budgets:
//! * evictions already taken this session count against the budgets (the event handler notes
//!   each eviction and an undone one gives it back), so two preemptions in one cycle cannot
//!   both spend the last allowed disruption; Volcano re-reads the unchanged status per call;
//! * a candidate without labels is a victim (it matches no budget); Volcano's filter skips
//!   such pods without adding them, contrary to its own comment, which would make unlabelled
//!   pods unevictable whenever `pdb` is on.
//!
//! As in Volcano, a budget with an empty selector matches no pod. The VictimTasks function
//! (shuffle) offers every candidate the budgets allow, exactly as Volcano registers it.

use super::Verdict;
use crate::model::{IntOrPercent, LabelSelector, Labels, PodDisruptionBudgetSpec, PodPhase, PodSpec, SelectorOp};
use crate::session::node_view::NodeView;
use crate::session::tables::{TaskIdx, TaskStatus};
use crate::session::State;

/// One budget in the session: the object and what it still allows.
struct Budget<'a> {
    spec: &'a PodDisruptionBudgetSpec,
    /// Disruptions allowed at session open, less this session's counted evictions.
    allowed: i32,
}

/// The pdb plugin: the budgets with a non-empty selector and the evictions counted so far.
pub struct Pdb<'a> {
    budgets: Vec<Budget<'a>>,
    /// Tasks whose eviction in this session was counted against the budgets they match.
    counted: Vec<TaskIdx>,
}

/// Whether `labels` satisfy a label selector (Kubernetes `labels.Selector.Matches`):
/// `matchLabels` and every `matchExpressions` requirement. The cluster refuses budgets whose
/// requirements are not valid label-selector requirements, so `Gt`/`Lt` never reach here.
pub fn selector_matches(sel: &LabelSelector, labels: &Labels) -> bool {
    sel.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
        && sel.match_expressions.iter().all(|r| {
            let v = labels.get(&r.key);
            match r.op {
                SelectorOp::In => v.is_some_and(|v| r.values.contains(v)),
                SelectorOp::NotIn => v.is_none_or(|v| !r.values.contains(v)),
                SelectorOp::Exists => v.is_some(),
                SelectorOp::DoesNotExist => v.is_none(),
                SelectorOp::Gt | SelectorOp::Lt => false,
            }
        })
}

/// Whether budget `b` counts pod `p`: same namespace, a non-empty selector matching its labels,
/// and the pod not already in `status.disruptedPods`.
fn counts(b: &PodDisruptionBudgetSpec, p: &PodSpec) -> bool {
    b.namespace == p.namespace
        && !p.labels.is_empty()
        && selector_matches(&b.selector, &p.labels)
        && !b.status.as_ref().is_some_and(|st| st.disrupted_pods.contains(&p.name))
}

/// The allowance of a budget without a status (module docs): from its spec and the pods of
/// `pods` it selects.
pub fn allowed_from_spec<'p>(b: &PodDisruptionBudgetSpec, pods: impl Iterator<Item = &'p PodSpec>) -> i32 {
    let (mut expected, mut healthy) = (0i32, 0i32);
    for p in pods {
        if p.namespace != b.namespace
            || matches!(p.phase, PodPhase::Succeeded | PodPhase::Failed)
            || !selector_matches(&b.selector, &p.labels)
        {
            continue;
        }
        expected = expected.saturating_add(1);
        if p.phase == PodPhase::Running && !p.deleting {
            healthy = healthy.saturating_add(1);
        }
    }
    let desired = match (b.min_available, b.max_unavailable) {
        (Some(min), _) => min.scaled_up(expected),
        (None, Some(max)) => expected.saturating_sub(max.scaled_up(expected)),
        (None, None) => IntOrPercent::Int(1).scaled_up(expected),
    };
    healthy.saturating_sub(desired).max(0)
}

impl<'a> Pdb<'a> {
    /// Session open: every budget with a non-empty selector and its allowance.
    pub fn open(s: &State<'a>) -> Self {
        let cluster = s.cluster;
        let budgets = cluster
            .disruption_budgets()
            .filter(|b| !(b.selector.match_labels.is_empty() && b.selector.match_expressions.is_empty()))
            .map(|spec| {
                let allowed = match &spec.status {
                    Some(st) => st.disruptions_allowed,
                    None => allowed_from_spec(spec, cluster.pods().map(|(_, p)| &p.spec)),
                };
                Budget { spec, allowed }
            })
            .collect();
        Pdb { budgets, counted: Vec::new() }
    }

    /// The filter: candidates in order, each spending one disruption of every budget that
    /// counts it; those that leave no budget below zero go into `out`.
    fn filter(&self, s: &State<'a>, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) {
        if self.budgets.is_empty() {
            out.extend_from_slice(candidates);
            return;
        }
        let mut allowed: Vec<i32> = self.budgets.iter().map(|b| b.allowed).collect();
        for &t in candidates {
            let p = &s.tasks.rec[t.ix()].spec;
            let mut violated = false;
            for (b, left) in self.budgets.iter().zip(allowed.iter_mut()) {
                if counts(b.spec, p) {
                    *left -= 1;
                    violated |= *left < 0;
                }
            }
            if !violated {
                out.push(t);
            }
        }
    }

    /// Adds `delta` to the allowance of every budget that counts task `t`.
    fn spend(&mut self, s: &State<'a>, t: TaskIdx, delta: i32) {
        let p = &s.tasks.rec[t.ix()].spec;
        for b in self.budgets.iter_mut().filter(|b| counts(b.spec, p)) {
            b.allowed += delta;
        }
    }
}

plugin_impl! {
    impl<'a> for Pdb<'a> {
        fn name(&self) -> &'static str {
            "pdb"
        }
        fn preemptable(&self, s: &State<'a>, _preemptor: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            self.filter(s, candidates, out);
            Verdict::Decided
        }
        fn reclaimable(&self, s: &State<'a>, _reclaimer: TaskIdx, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) -> Verdict {
            self.filter(s, candidates, out);
            Verdict::Decided
        }
        fn victim_tasks(&self, s: &State<'a>, candidates: &[TaskIdx], out: &mut Vec<TaskIdx>) {
            self.filter(s, candidates, out);
        }
        fn on_deallocate(&mut self, s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            // An eviction (the task is Releasing now); deallocating a pipelined or allocated
            // task changes no budget.
            if self.budgets.is_empty() || s.tasks.status()[t.ix()] != TaskStatus::Releasing || self.counted.contains(&t) {
                return;
            }
            self.counted.push(t);
            self.spend(s, t, -1);
        }
        fn on_allocate(&mut self, s: &State<'a>, _view: &mut NodeView<'a>, t: TaskIdx) {
            // An undone eviction (Statement discard) gives the disruption back.
            if s.tasks.status()[t.ix()] == TaskStatus::Releasing {
                return;
            }
            if let Some(i) = self.counted.iter().position(|&x| x == t) {
                self.counted.swap_remove(i);
                self.spend(s, t, 1);
            }
        }
    }
}

impl Pdb<'_> {
    /// The functions this plugin registers (its capability set, Volcano's `Add…Fn` calls in its
    /// `OnSessionOpen`); `core/tests/plugin_fns.rs` checks it against the methods its
    /// `plugin_impl!` block writes.
    pub const FNS: u32 = {
        use crate::framework::Fn as F;
        F::Preemptable.bit() | F::Reclaimable.bit() | F::EventHandler.bit() | F::VictimTasks.bit()
    };
}
