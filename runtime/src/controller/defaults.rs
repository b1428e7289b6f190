//! Volcano's `jobs/mutate` webhook defaults (volcano-behaviour.md §6), applied by the controller
//! when it reads a Job so that a Job created without Volcano's webhook behaves as one created
//! through it: queue `default`, schedulerName `volcano`, maxRetry 0 ⇒ 3, task name "" ⇒
//! `default<i>`, task minAvailable unset ⇒ replicas, job minAvailable unset/0 ⇒ Σ task
//! minAvailable, task maxRetry 0 ⇒ 3.

use crate::crd::{Job, TaskSpec};

/// The default queue.
pub const DEFAULT_QUEUE: &str = "default";
/// The default scheduler name.
pub const DEFAULT_SCHEDULER: &str = "volcano";
/// `maxRetry` when unset or 0.
pub const DEFAULT_MAX_RETRY: i32 = 3;

/// One task with its defaults resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskFacts {
    /// The task name (`default<i>` when unset).
    pub name: String,
    /// `replicas` (unset = 0; negative = 0).
    pub replicas: i32,
    /// `minAvailable` (unset = replicas).
    pub min_available: i32,
    /// `maxRetry` for `TaskFailed` (0 ⇒ 3; −1 = off).
    pub max_retry: i32,
}

/// The job's numbers the state machine reads, defaults resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFacts {
    /// Tasks in spec order.
    pub tasks: Vec<TaskFacts>,
    /// Σ replicas.
    pub total_replicas: i32,
    /// Σ task minAvailable.
    pub total_task_min_available: i32,
    /// The job's minAvailable (unset/0 ⇒ Σ task minAvailable).
    pub min_available: i32,
    /// `minSuccess`.
    pub min_success: Option<i32>,
    /// `maxRetry` (0/unset ⇒ 3).
    pub max_retry: i32,
    /// Queue (unset ⇒ `default`).
    pub queue: String,
}

/// The name of task `i` (`default<i>` when unset or empty).
pub fn task_name(task: &TaskSpec, i: usize) -> String {
    match task.name.as_deref() {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!("default{i}"),
    }
}

impl JobFacts {
    /// Resolves `job`'s defaults.
    pub fn of(job: &Job) -> JobFacts {
        let tasks: Vec<TaskFacts> = job
            .spec
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let replicas = t.replicas.unwrap_or(0).max(0);
                TaskFacts {
                    name: task_name(t, i),
                    replicas,
                    // Volcano's getMinTaskMember: the task's minAvailable, else minPartitions ×
                    // partitionSize, else its replicas.
                    min_available: t.min_available.unwrap_or_else(|| {
                        t.partition()
                            .filter(|p| p.min_partitions != 0 && p.partition_size != 0)
                            .map_or(replicas, |p| p.min_partitions.saturating_mul(p.partition_size))
                    }),
                    max_retry: match t.max_retry {
                        None | Some(0) => DEFAULT_MAX_RETRY,
                        Some(n) => n,
                    },
                }
            })
            .collect();
        let total_replicas = tasks.iter().map(|t| t.replicas).sum();
        let total_task_min_available = tasks.iter().map(|t| t.min_available).sum();
        JobFacts {
            total_replicas,
            total_task_min_available,
            min_available: match job.spec.min_available {
                None | Some(0) => total_task_min_available,
                Some(n) => n,
            },
            min_success: job.spec.min_success,
            max_retry: match job.spec.max_retry {
                None | Some(0) => DEFAULT_MAX_RETRY,
                Some(n) => n,
            },
            queue: job.spec.queue.clone().filter(|q| !q.is_empty()).unwrap_or_else(|| DEFAULT_QUEUE.to_string()),
            tasks,
        }
    }

    /// The task named `name`.
    pub fn task(&self, name: &str) -> Option<&TaskFacts> {
        self.tasks.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::JobSpec;

    #[test]
    fn webhook_defaults_apply() {
        let job = Job::new(
            "j",
            JobSpec {
                tasks: vec![
                    TaskSpec { replicas: Some(2), ..Default::default() },
                    TaskSpec {
                        name: Some("w".into()),
                        replicas: Some(3),
                        min_available: Some(1),
                        max_retry: Some(-1),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            },
        );
        let f = JobFacts::of(&job);
        assert_eq!(f.tasks[0].name, "default0");
        assert_eq!(f.tasks[0].min_available, 2);
        assert_eq!(f.tasks[0].max_retry, 3);
        assert_eq!(f.tasks[1].max_retry, -1);
        assert_eq!((f.total_replicas, f.total_task_min_available, f.min_available), (5, 3, 3));
        assert_eq!((f.max_retry, f.queue.as_str()), (3, "default"));
    }
}
