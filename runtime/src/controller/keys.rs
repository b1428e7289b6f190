//! Volcano's label and annotation keys on the objects the job controller creates
//! (volcano-behaviour.md §4 "Keys", §5.1 "Pod").

/// Pod/PodGroup annotation: the PodGroup a pod belongs to.
pub const GROUP_NAME: &str = "scheduling.k8s.io/group-name";
/// Pod label and annotation: the job's name.
pub const JOB_NAME: &str = "volcano.sh/job-name";
/// Pod label: the job's namespace.
pub const JOB_NAMESPACE: &str = "volcano.sh/job-namespace";
/// Pod label and annotation: the job's queue.
pub const QUEUE_NAME: &str = "volcano.sh/queue-name";
/// Pod annotation: `status.version` of the job when the pod was created.
pub const JOB_VERSION: &str = "volcano.sh/job-version";
/// Pod label and annotation: the task.
pub const TASK_SPEC: &str = "volcano.sh/task-spec";
/// Pod label and annotation: the pod's index in its task.
pub const TASK_INDEX: &str = "volcano.sh/task-index";
/// Pod label: the pod's partition of its task (`index / partitionSize`), for a task with a
/// `partitionPolicy`.
pub const PARTITION_ID: &str = "volcano.sh/partition-id";
/// Pod annotation: `<job>-<task>`.
pub const TEMPLATE_UID: &str = "volcano.sh/template-uid";
/// Pod annotation: `status.retryCount` when the pod was created.
pub const JOB_RETRY_COUNT: &str = "volcano.sh/job-retry-count";
/// Pod annotation: the task's `topologyPolicy`.
pub const NUMA_POLICY: &str = "volcano.sh/numa-topology-policy";
/// Pod annotation set before the controller deletes a pod: its deletion is not an eviction.
pub const OUT_OF_SYNC: &str = "volcano.sh/controller-out-of-sync";
/// Job annotations copied to pods (and labels for the first two).
pub const COPIED_FROM_JOB: [&str; 5] = [
    "volcano.sh/preemptable",
    "volcano.sh/cooldown-time",
    "volcano.sh/revocable-zone",
    "volcano.sh/jdb-min-available",
    "volcano.sh/jdb-max-unavailable",
];
