//! The checks of Volcano's `jobs/validate` admission webhook (`validateJobCreate`,
//! volcano-behaviour.md §6) that a Job created without that webhook would otherwise slip past,
//! silently: duplicate task names (pods would share names), `minAvailable` above the replicas
//! (the gang could never be ready), partition arithmetic that does not add up (`partitionPolicy`:
//! the sub-groups could never fill), a queue that does not exist (the scheduler never takes the
//! PodGroup). The job controller runs them before it creates anything for a Job still `Pending`
//! (or without a phase) and, when one fails, records a `Warning` `FailedValidation` Event on the
//! Job with Volcano's messages and holds the Job (no PodGroup, no pods, no retries) until it
//! changes or a Queue is added. Task names the API server refuses (`Worker_1` is not a DNS-1123
//! label) are left to the server: its refusal is the `FailedCreate` Event ([`super::execute`]).
//! Pure: the caller gives the queues it knows.

use super::defaults::{task_name, DEFAULT_QUEUE};
use crate::crd::Job;
use std::collections::BTreeSet;

/// The Event reason of a Job that fails [`validate`] (Basalt's: Volcano's webhook refuses such
/// a Job at CREATE instead, so it never reaches the controller).
pub const FAILED_VALIDATION: &str = "FailedValidation";

/// What the controller knows of the Queues: `None` until the Queue watch has listed (the
/// queue check is skipped then), else the names.
pub type KnownQueues<'a> = Option<&'a BTreeSet<String>>;

/// Volcano's webhook messages for what is wrong with `job`, in its order (empty: valid):
/// `'minAvailable' is greater than 'replicas' in task: <t>, job: <j>`, `duplicated task name
/// <t>`, `job 'minAvailable' should not be greater than total replicas in tasks`, `unable to
/// find job queue: queues.scheduling.volcano.sh "<q>" not found`.
pub fn validate(job: &Job, queues: KnownQueues<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let job_name = job.metadata.name.as_deref().unwrap_or_default();
    let mut names = BTreeSet::new();
    let mut total: i64 = 0;
    for (i, t) in job.spec.tasks.iter().enumerate() {
        let name = task_name(t, i);
        let replicas = t.replicas.unwrap_or(0);
        if t.min_available.is_some_and(|m| m > replicas) {
            out.push(format!("'minAvailable' is greater than 'replicas' in task: {name}, job: {job_name}"));
        }
        out.extend(t.partition_problem(job_name));
        total += i64::from(replicas);
        if !names.insert(name.clone()) {
            out.push(format!("duplicated task name {name}"));
            break;
        }
    }
    if job.spec.min_available.is_some_and(|m| i64::from(m) > total) {
        out.push("job 'minAvailable' should not be greater than total replicas in tasks".to_string());
    }
    if let Some(known) = queues {
        let q = job.spec.queue.as_deref().filter(|q| !q.is_empty()).unwrap_or(DEFAULT_QUEUE);
        if !known.contains(q) {
            out.push(format!("unable to find job queue: queues.scheduling.volcano.sh \"{q}\" not found"));
        }
    }
    out
}

/// The `FailedValidation` Event's message for `problems` ([`validate`]'s, not empty).
pub fn message(problems: &[String]) -> String {
    format!(
        "Volcano's admission webhook would refuse this Job: {}; no PodGroup or pods are created (checked again when the Job changes or a Queue is added)",
        problems.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{JobSpec, TaskSpec};

    fn job(tasks: &[(&str, i32, Option<i32>)], min: Option<i32>, queue: Option<&str>) -> Job {
        let tasks = tasks
            .iter()
            .map(|(n, r, m)| TaskSpec { name: Some(n.to_string()), replicas: Some(*r), min_available: *m, ..Default::default() })
            .collect();
        let mut j = Job::new("j", JobSpec { tasks, min_available: min, queue: queue.map(str::to_string), ..Default::default() });
        j.metadata.namespace = Some("ns".into());
        j
    }

    fn queues(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_valid_job_passes() {
        let q = queues(&["default", "q1"]);
        assert!(validate(&job(&[("ps", 1, None), ("worker", 2, Some(1))], Some(3), None), Some(&q)).is_empty());
        assert!(validate(&job(&[("w", 2, None)], None, Some("q1")), Some(&q)).is_empty());
    }

    #[test]
    fn duplicate_task_names_are_refused() {
        let p = validate(&job(&[("w", 1, None), ("w", 1, None)], None, None), None);
        assert_eq!(p, vec!["duplicated task name w".to_string()]);
    }

    #[test]
    fn min_available_above_the_replicas_is_refused() {
        let p = validate(&job(&[("w", 2, None)], Some(3), None), None);
        assert_eq!(p, vec!["job 'minAvailable' should not be greater than total replicas in tasks".to_string()]);
        let p = validate(&job(&[("w", 2, Some(3))], None, None), None);
        assert_eq!(p, vec!["'minAvailable' is greater than 'replicas' in task: w, job: j".to_string()]);
    }

    #[test]
    fn an_unknown_queue_is_refused_once_the_queues_are_known() {
        let q = queues(&["default"]);
        let p = validate(&job(&[("w", 1, None)], None, Some("nope")), Some(&q));
        assert_eq!(p, vec!["unable to find job queue: queues.scheduling.volcano.sh \"nope\" not found".to_string()]);
        assert!(validate(&job(&[("w", 1, None)], None, Some("nope")), None).is_empty(), "queues not listed yet");
        let none = queues(&[]);
        assert_eq!(validate(&job(&[("w", 1, None)], None, None), Some(&none)).len(), 1, "even `default` must exist");
    }

    #[test]
    fn the_message_lists_every_problem() {
        let p = validate(&job(&[("w", 1, None), ("w", 1, None)], Some(5), Some("nope")), Some(&queues(&[])));
        assert_eq!(p.len(), 3, "{p:?}");
        let m = message(&p);
        assert!(m.contains("duplicated task name w; job 'minAvailable'"), "{m}");
        assert!(m.ends_with("when the Job changes or a Queue is added)"), "{m}");
    }

    #[test]
    fn partition_arithmetic_that_does_not_add_up_is_named() {
        let mut j = job(&[("w", 4, None)], None, None);
        j.spec.tasks[0].partition_policy = Some(serde_json::json!({"totalPartitions": 3, "partitionSize": 2}));
        assert_eq!(validate(&j, None), ["'Replicas' are not equal to TotalPartitions*PartitionSize in task: w, job: j"]);
        j.spec.tasks[0].partition_policy =
            Some(serde_json::json!({"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1}));
        assert!(validate(&j, None).is_empty());
        j.spec.tasks[0].min_available = Some(4);
        assert_eq!(validate(&j, None), ["'MinAvailable' is not equal to MinPartitions*PartitionSize in task: w, job: j"]);
    }
}
