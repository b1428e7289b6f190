//! `basalt explain --recording DIR --podgroup NS/NAME` and `--job NS/NAME`: for one PodGroup (or
//! the PodGroup `<job>-<uid>` of a Volcano Job), at each recorded cycle, its phase and why its
//! pods are pending: the session's verdict (left out, conditions, events, queue state, as
//! [`super::explain`] gives for a pod), how many of its pods exist, are bound and are pending, and
//! the reasons of the pending ones. A Job whose pods were never created is explained by its
//! PodGroup: Volcano's job controller creates the pods only once the PodGroup has left `Pending`
//! (volcano-behaviour.md §5.1), so a PodGroup enqueue does not admit keeps the Job without pods.

use super::explain::{group_lines, Span};
use super::named::ObjKey;
use super::reader::{walk, At, WalkSummary};
use super::rerun::show;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;

/// What to explain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A PodGroup `namespace/name`.
    PodGroup(ObjKey),
    /// A Volcano Job `namespace/name`: its PodGroup `<name>-<job UID>` (or the legacy `<name>`).
    Job(ObjKey),
}

/// Whether `group` is the PodGroup name Volcano's job controller gives Job `job`:
/// `<job>-<uid>` (a 36-character UID) or, from older controllers, `<job>`.
pub fn is_job_group(group: &str, job: &str) -> bool {
    group == job
        || group
            .strip_prefix(job)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(|uid| uid.len() == 36 && uid.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
}

/// Explains `target` over the recording in `dir`, folding consecutive cycles with the same
/// explanation. Errors: the recording cannot be read.
pub fn explain_group(dir: &Path, target: &Target) -> Result<(Vec<Span>, WalkSummary), String> {
    let mut spans: Vec<Span> = Vec::new();
    let summary = walk(dir, |at| {
        let (state, why) = describe(&at, target);
        let (cycle, seq) = (at.record.cycle, at.seq);
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

fn describe(at: &At<'_>, target: &Target) -> (&'static str, Vec<String>) {
    let c = &*at.cluster;
    let key: Option<ObjKey> = match target {
        Target::PodGroup(k) => c.pod_group_id(&k.0, &k.1).map(|_| k.clone()),
        Target::Job((ns, job)) => c
            .pod_groups()
            .map(|(_, g)| &g.spec)
            .filter(|g| g.namespace == *ns && is_job_group(&g.name, job))
            .max_by_key(|g| g.creation_ms)
            .map(|g| (g.namespace.clone(), g.name.clone())),
    };
    let Some(key) = key else {
        let why = match target {
            Target::PodGroup(_) => "not in the scheduler's copy: not created yet, or deleted".to_string(),
            Target::Job((ns, job)) => format!(
                "no PodGroup {ns}/{job}-<uid> of Job {ns}/{job}: the job controller has not created it (is vc-controller-manager or `basalt controller` running? a Job the controller refuses gets none: `kubectl describe vcjob -n {ns} {job}` shows why)"
            ),
        };
        return ("absent", vec![why]);
    };
    let Some(g) = c.pod_group_id(&key.0, &key.1).and_then(|id| c.pod_group(id)) else {
        return ("absent", vec![format!("PodGroup {} is gone", show(&key))]);
    };
    let mut why = Vec::new();
    if let Target::Job((_, job)) = target {
        why.push(format!("Job {}/{job}: PodGroup {}", key.0, show(&key)));
    }
    let (mut total, mut bound, mut finished) = (0usize, 0usize, 0usize);
    let mut pending: BTreeMap<String, usize> = BTreeMap::new();
    for (_, p) in c.pods() {
        let s = &p.spec;
        if s.namespace != key.0 || s.group.as_deref() != Some(key.1.as_str()) {
            continue;
        }
        total += 1;
        let pod_key = (s.namespace.clone(), s.name.clone());
        if matches!(s.phase, basalt_core::model::PodPhase::Succeeded | basalt_core::model::PodPhase::Failed) {
            finished += 1;
        } else if !s.node_name.is_empty() || at.recorded.binds.iter().any(|(k, _)| *k == pod_key) {
            bound += 1;
        } else {
            let reason = match at.recorded.unschedulable.get(&pod_key) {
                Some((r, m)) => format!("{r}: {m}"),
                None => "no condition this cycle".to_string(),
            };
            *pending.entry(reason).or_default() += 1;
        }
    }
    let waiting: usize = pending.values().sum();
    if total == 0 {
        why.push(match target {
            Target::Job(_) => "no pods: Volcano's job controller creates a Job's pods only once its PodGroup has left Pending (enqueue admitted it)".to_string(),
            Target::PodGroup(_) => "no pods name this PodGroup (annotation scheduling.k8s.io/group-name)".to_string(),
        });
    } else {
        why.push(format!("pods: {total} ({bound} bound, {waiting} pending, {finished} finished)"));
        for (reason, n) in &pending {
            why.push(format!("{n} pending: {reason}"));
        }
    }
    why.extend(group_lines(at, &key, Some(&key.1), waiting > 0 || total == 0));
    let state = at.recorded.pod_groups.get(&key).map(|s| s.phase).unwrap_or(g.spec.phase).as_str();
    (if state.is_empty() { "no phase" } else { state }, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_pod_group_is_found_by_volcanos_name() {
        assert!(is_job_group("train-0b2c7a5e-1f0e-4b8e-9d7c-3a2b1c0d9e8f", "train"));
        assert!(is_job_group("train", "train"), "legacy name");
        assert!(!is_job_group("train-2-0b2c7a5e-1f0e-4b8e-9d7c-3a2b1c0d9e8f", "train"), "another job's");
        assert!(!is_job_group("trainer", "train"));
    }
}
