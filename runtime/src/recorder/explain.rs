//! `basalt explain --recording DIR --pod NS/NAME`: for one pod, at each recorded cycle, whether
//! it was pending or bound and why, from the recorded decisions and the cluster the cycle read:
//! the pod's `PodScheduled` condition (the per-node fit errors aggregated as Volcano's
//! `FitErrors.Error()` writes them, volcano-behaviour.md §1.6), its PodGroup's phase,
//! conditions and events (gang: `x/y tasks in gang unschedulable`; enqueue's queue reasons:
//! `queue resource quota insufficient`, `resource in cluster is overused`), a PodGroup left out
//! of the session (e.g. its queue does not exist), the queue's state, and for a PodGroup with a
//! network topology its `networkTopology` and the HyperNode allocate last tried
//! (`network topology: …`) and, from recordings that hold them, the tiers and HyperNodes the
//! gradient search tried and why each did not hold the gang (`topology search …`). Consecutive cycles with the same explanation are folded into one
//! line.

use super::named::ObjKey;
use super::reader::{walk, WalkSummary};
use super::rerun::show;
use basalt_core::model::{PodGroupPhase, PodPhase};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;

/// One explanation, valid over consecutive cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// First cycle (session number).
    pub first: u64,
    /// Last cycle.
    pub last: u64,
    /// Position of the first cycle in the recording (`#N`, from 1).
    pub first_seq: u64,
    /// Position of the last cycle.
    pub last_seq: u64,
    /// Cycles folded.
    pub cycles: usize,
    /// `pending`, `bound`, `bound earlier`, `absent` (a pod); the PodGroup phase or `absent`
    /// ([`super::explain_group`]).
    pub state: &'static str,
    /// Why, one line each.
    pub why: Vec<String>,
}

/// Explains `pod` over the recording in `dir`. Errors: the recording cannot be read.
pub fn explain(dir: &Path, pod: &ObjKey) -> Result<(Vec<Span>, WalkSummary), String> {
    let mut spans: Vec<Span> = Vec::new();
    let mut bound_at: BTreeMap<String, u64> = BTreeMap::new();
    let summary = walk(dir, |at| {
        let (cycle, seq) = (at.record.cycle, at.seq);
        let (state, why) = describe(&at, pod, &mut bound_at);
        match spans.last_mut() {
            Some(s) if s.state == state && s.why == why => {
                s.last = cycle;
                s.last_seq = seq;
                s.cycles += 1;
            }
            _ => spans.push(Span { first: cycle, last: cycle, first_seq: seq, last_seq: seq, cycles: 1, state, why }),
        }
        ControlFlow::Continue(())
    })?;
    Ok((spans, summary))
}

fn describe(at: &super::reader::At<'_>, pod: &ObjKey, bound_at: &mut BTreeMap<String, u64>) -> (&'static str, Vec<String>) {
    let d = at.recorded;
    let c = &*at.cluster;
    let Some(rec) = c.pod_id(&pod.0, &pod.1).and_then(|id| c.pod(id)) else {
        return (
            "absent",
            vec!["not in the scheduler's copy: not created yet, deleted, or another scheduler's pod not bound to a node".into()],
        );
    };
    let s = &rec.spec;
    if let Some((_, node)) = d.binds.iter().find(|(p, _)| p == pod) {
        bound_at.insert(s.uid.clone(), at.record.cycle);
        let mut why = vec![format!("this cycle bound it to node {node}")];
        why.extend(group_lines(at, pod, s.group.as_deref(), false));
        return ("bound", why);
    }
    if !s.node_name.is_empty() {
        let by = match bound_at.get(&s.uid) {
            Some(c) => format!("bound to node {} by cycle {c}", s.node_name),
            None => format!("on node {} (bound before the recording starts, or by another scheduler)", s.node_name),
        };
        return ("bound earlier", vec![format!("{by}; phase {:?}", s.phase)]);
    }
    let mut why = Vec::new();
    if let Some((reason, message)) = d.unschedulable.get(pod) {
        why.push(format!("PodScheduled=False reason {reason}: {message}"));
    } else if s.scheduling_gated {
        why.push("spec.schedulingGates is not empty: the scheduler waits until the gates are removed".into());
    } else if s.deleting {
        why.push("being deleted (metadata.deletionTimestamp is set)".into());
    } else if matches!(s.phase, PodPhase::Succeeded | PodPhase::Failed) {
        why.push(format!("finished (phase {:?})", s.phase));
    } else {
        why.push("no condition this cycle: its job was not allocated to (see the PodGroup)".into());
    }
    why.extend(group_lines(at, pod, s.group.as_deref(), true));
    ("pending", why)
}

/// A pending PodGroup's network topology as one line: its `networkTopology` (and sub-group
/// policies) as the spec states them, and the HyperNode allocate last tried when the
/// `Unschedulable` condition names one (Volcano's `In hyperNode <name>: …` fit error).
fn topology_line(
    spec: &basalt_core::model::PodGroupSpec,
    conditions: &[basalt_core::model::PodGroupCondition],
) -> Option<String> {
    use basalt_core::model::TopologyMode;
    if spec.network_topology.is_none() && spec.sub_group_policy.is_empty() {
        return None;
    }
    let mut line = match &spec.network_topology {
        Some(nt) => {
            let mode = if nt.mode == TopologyMode::Hard { "hard" } else { "soft" };
            match (nt.highest_tier_allowed, nt.highest_tier_name.as_str()) {
                (Some(t), _) => format!("network topology: {mode}, highestTierAllowed {t}"),
                (None, "") => format!("network topology: {mode}"),
                (None, name) => format!("network topology: {mode}, highestTierName {name}"),
            }
        }
        None => "network topology: none for the job".to_string(),
    };
    if !spec.sub_group_policy.is_empty() {
        line.push_str(&format!("; {} subGroupPolicy entries", spec.sub_group_policy.len()));
    }
    let tried = conditions
        .iter()
        .filter(|c| c.kind == "Unschedulable" && c.status == "True")
        .find_map(|c| c.message.split("In hyperNode ").nth(1).and_then(|r| r.split(':').next()).map(str::to_string));
    if let Some(h) = tried {
        line.push_str(&format!("; the last HyperNode tried was {h}"));
    }
    Some(line)
}

/// The PodGroup's and queue's part of the explanation (`pod` gives the namespace).
pub(super) fn group_lines(at: &super::reader::At<'_>, pod: &ObjKey, group: Option<&str>, pending: bool) -> Vec<String> {
    let c = &*at.cluster;
    let d = at.recorded;
    let Some(g) = group else {
        return vec!["no scheduling.k8s.io/group-name annotation: Volcano's controller has not given it a PodGroup yet".into()];
    };
    let key: ObjKey = (pod.0.clone(), g.to_string());
    let Some(rec) = c.pod_group_id(&key.0, &key.1).and_then(|id| c.pod_group(id)) else {
        return vec![format!("PodGroup {} does not exist: the pod waits for it", show(&key))];
    };
    let mut out = Vec::new();
    let queue = if rec.spec.queue.is_empty() { at.conf.options.default_queue.clone() } else { rec.spec.queue.clone() };
    if let Some(reason) = d.skipped.get(&key) {
        out.push(format!("PodGroup {} left out of the session: {reason}", show(&key)));
    }
    if let Some(st) = d.pod_groups.get(&key) {
        out.push(format!(
            "PodGroup {} (minMember {}, queue {queue}): phase {}",
            show(&key),
            rec.spec.min_member,
            st.phase.as_str()
        ));
        if pending {
            if st.phase == PodGroupPhase::Pending {
                out.push(
                    "the PodGroup is Pending: enqueue has not admitted it (its pods are not allocated until it is Inqueue)"
                        .into(),
                );
            }
            for cond in &st.conditions {
                if !(cond.kind == "Scheduled" && cond.status == "True") {
                    out.push(format!("PodGroup condition {}={} {}: {}", cond.kind, cond.status, cond.reason, cond.message));
                }
            }
            out.extend(topology_line(&rec.spec, &st.conditions));
            if let Some(search) = at.topology.iter().find(|t| t.group == key) {
                out.extend(search.lines());
            }
        }
    }
    if pending {
        for e in d.events.get(&key).into_iter().flatten() {
            out.push(format!("PodGroup event {} {}: {}", e.kind, e.reason, e.message));
        }
        match c.queue(&queue) {
            None => out.push(format!("Queue {queue} does not exist")),
            Some(q) if q.spec.state != basalt_core::model::QueueState::Open => {
                out.push(format!("Queue {queue} is {:?}: it admits no new job", q.spec.state))
            }
            Some(_) => {}
        }
    }
    out
}
