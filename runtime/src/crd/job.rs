//! `Job` (`batch.volcano.sh/v1alpha1`, namespaced, short names `vcjob`/`vj`, status
//! subresource): Volcano's batch job of tasks, each a pod template with a replica count
//! (volcano-behaviour.md §4). The [`crate::controller`] turns it into a PodGroup and pods.
//!
//! Field names are Volcano's exactly. Spec fields Volcano defaults in its admission webhook
//! (`queue`, `maxRetry`, `minAvailable`, task `minAvailable`/`maxRetry`) are `Option`s here and
//! defaulted by the controller the same way (`controller::defaults`), so a Job created without the
//! webhook behaves as one created through it. Status counters are plain integers, omitted when
//! zero, as Volcano's `omitempty` tags do.

use super::schema;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn is_zero(v: &i32) -> bool {
    *v == 0
}

/// `Job.spec`.
// kube's derive takes one `printcolumn(..)` per column; clippy reads the repeated keys as duplicates.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "batch.volcano.sh",
    version = "v1alpha1",
    kind = "Job",
    namespaced,
    shortname = "vcjob",
    shortname = "vj",
    status = "JobStatus",
    derive = "Default",
    derive = "PartialEq",
    label("app.kubernetes.io/part-of", "basalt"),
    doc = "A Volcano batch job: tasks of pod templates run as one gang-scheduled job.",
    printcolumn(name = "STATUS", type_ = "string", json_path = ".status.state.phase"),
    printcolumn(name = "MINAVAILABLE", type_ = "integer", json_path = ".status.minAvailable"),
    printcolumn(name = "RUNNINGS", type_ = "integer", json_path = ".status.running"),
    printcolumn(name = "AGE", type_ = "date", json_path = ".metadata.creationTimestamp"),
    printcolumn(name = "QUEUE", type_ = "string", json_path = ".spec.queue", priority = "1")
)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    /// `schedulerName`: written into pods that name none; unset = `volcano`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    /// `minAvailable`: pods that must run together (the PodGroup's `minMember`); unset = Σ task
    /// `minAvailable` (each defaulting to its replicas).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<i32>,
    /// `volumes[]`: claims mounted in every container of every pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<VolumeSpec>,
    /// `tasks[]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskSpec>,
    /// `policies[]`: job-level lifecycle policies, applied after the task's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<LifecyclePolicy>,
    /// `plugins`: job plugin name (`env`, `svc`, `ssh`, `pytorch`, `mpi`, …) → its arguments
    /// (Go-style flags such as `--publish-not-ready-addresses`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub plugins: BTreeMap<String, Vec<String>>,
    /// `runningEstimate`: a Go duration, e.g. `2h`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_estimate: Option<String>,
    /// `queue`: the Queue the PodGroup is submitted to; unset = `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// `maxRetry`: restarts before the job is Failed; unset or 0 = 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry: Option<i32>,
    /// `ttlSecondsAfterFinished`: seconds after Completed/Failed/Terminated before the job is
    /// deleted; unset = never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
    /// `priorityClassName`: written into the PodGroup and into pods that name none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// `minSuccess`: succeeded pods that complete the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_success: Option<i32>,
    /// `networkTopology` (`mode`, `highestTierAllowed`, `highestTierName`), kept opaque and
    /// copied to the PodGroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::opaque_object")]
    pub network_topology: Option<serde_json::Value>,
}

/// One `Job.spec.volumes[]` entry: a claim by name, or a claim spec the controller creates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeSpec {
    /// `mountPath` in every container.
    #[serde(default)]
    pub mount_path: String,
    /// `volumeClaimName`: an existing PersistentVolumeClaim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_claim_name: Option<String>,
    /// `volumeClaim`: a PersistentVolumeClaimSpec, kept opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::opaque_object")]
    pub volume_claim: Option<serde_json::Value>,
}

/// One `Job.spec.tasks[]` entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskSpec {
    /// `name`; unset = `default<i>` (its index), as Volcano's webhook names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `replicas`: pods of this task, named `<job>-<task>-<0..replicas>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// `minAvailable`: pods of this task the gang needs; unset = `replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<i32>,
    /// `template`: the pods' PodTemplateSpec (the apiserver validates it when pods are created).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::opaque_object")]
    pub template: Option<PodTemplateSpec>,
    /// `policies[]`: task-level lifecycle policies, applied before the job's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<LifecyclePolicy>,
    /// `topologyPolicy`: `none`, `best-effort`, `restricted` or `single-numa-node`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_policy: Option<String>,
    /// `maxRetry`: Σ container restarts of the task's pods that raise `TaskFailed`; unset or
    /// 0 = 3, −1 = never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry: Option<i32>,
    /// `dependsOn`: tasks that must be ready before this task's pods are created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depends_on: Option<DependsOn>,
    /// `partitionPolicy` (`totalPartitions`, `partitionSize`, `minPartitions`,
    /// `networkTopology`), kept opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::opaque_object")]
    pub partition_policy: Option<serde_json::Value>,
}

/// `tasks[].partitionPolicy` read from its opaque value ([`TaskSpec::partition`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartitionPolicy {
    /// `totalPartitions`.
    pub total_partitions: i32,
    /// `partitionSize`: pods per partition.
    pub partition_size: i32,
    /// `minPartitions`: partitions that must be scheduled together (0: unset).
    pub min_partitions: i32,
    /// `networkTopology` of each partition, as given.
    pub network_topology: Option<serde_json::Value>,
}

impl TaskSpec {
    /// The task's `partitionPolicy`, numbers that are missing or not integers read as 0 (the
    /// `/jobs/validate` webhook refuses such a policy).
    pub fn partition(&self) -> Option<PartitionPolicy> {
        let v = self.partition_policy.as_ref()?;
        let int = |k: &str| v.get(k).and_then(serde_json::Value::as_i64).unwrap_or(0).clamp(0, i64::from(i32::MAX)) as i32;
        Some(PartitionPolicy {
            total_partitions: int("totalPartitions"),
            partition_size: int("partitionSize"),
            min_partitions: int("minPartitions"),
            network_topology: v.get("networkTopology").filter(|t| !t.is_null()).cloned(),
        })
    }

    /// What is wrong with the task's partition arithmetic, in the words of Volcano's
    /// `jobs/validate` webhook (`validatePartitionPolicy`), `job` being the Job's name: no
    /// partitions, no size, replicas ≠ totalPartitions × partitionSize, or minAvailable ≠
    /// minPartitions × partitionSize. `None` without a policy or when it adds up.
    pub fn partition_problem(&self, job: &str) -> Option<String> {
        let p = self.partition()?;
        let name = self.name.as_deref().unwrap_or("");
        let (total, size, min) = (i64::from(p.total_partitions), i64::from(p.partition_size), i64::from(p.min_partitions));
        if total <= 0 {
            Some(format!("'TotalPartitions' must be greater than 0 in task: {name}, job: {job}"))
        } else if size <= 0 {
            Some(format!("'PartitionSize' must be greater than 0 in task: {name}, job: {job}"))
        } else if i64::from(self.replicas.unwrap_or(0)) != total * size {
            Some(format!("'Replicas' are not equal to TotalPartitions*PartitionSize in task: {name}, job: {job}"))
        } else if self.min_available.is_some_and(|m| min > 0 && min * size != i64::from(m)) {
            Some(format!("'MinAvailable' is not equal to MinPartitions*PartitionSize in task: {name}, job: {job}"))
        } else {
            None
        }
    }
}

/// `tasks[].dependsOn`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DependsOn {
    /// `name[]`: the tasks depended on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub name: Vec<String>,
    /// `iteration`: `any` (one of them ready is enough) or `all`; unset = `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<String>,
}

/// One lifecycle policy (`spec.policies[]` or `tasks[].policies[]`): on `event`/`events` (or a
/// container `exitCode`), take `action`, after `timeout` when set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecyclePolicy {
    /// `action`: `AbortJob`, `RestartJob`, `RestartTask`, `RestartPod`, `TerminateJob`,
    /// `CompleteJob` or `ResumeJob`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// `event`: `*`, `PodFailed`, `PodEvicted`, `PodPending`, `PodRunning`, `Unknown`,
    /// `TaskCompleted`, `TaskFailed` or `JobUpdated`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// `events[]`: several events for one action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// `exitCode`: the first container's exit code of a failed pod (exclusive with events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// `timeout`: a Go duration (`30s`, `1m30s`); the action runs that long after the event
    /// unless cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

/// `Job.status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    /// `state`: phase and why.
    #[serde(default)]
    pub state: JobState,
    /// `minAvailable`: the job's effective minAvailable.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_available: i32,
    /// `taskStatusCount`: task → pod phase → pods.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub task_status_count: BTreeMap<String, TaskState>,
    /// `pending`: pods Pending.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pending: i32,
    /// `running`: pods Running.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub running: i32,
    /// `succeeded`: pods Succeeded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub succeeded: i32,
    /// `failed`: pods Failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: i32,
    /// `terminating`: pods being deleted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub terminating: i32,
    /// `unknown`: pods in phase Unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unknown: i32,
    /// `version`: bumped by every whole-job kill; pods carry it as `volcano.sh/job-version`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub version: i32,
    /// `retryCount`: restarts so far.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_count: i32,
    /// `runningDuration`: a Go duration (`1h2m3s`) from creation to now or to the finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_duration: Option<String>,
    /// `controlledResources`: resources the job's plugins created (`plugin-svc` → `svc`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub controlled_resources: BTreeMap<String, String>,
    /// `conditions[]`: one per phase the job entered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<JobCondition>,
}

/// `Job.status.state`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobState {
    /// `phase`: `Pending`, `Aborting`, `Aborted`, `Running`, `Restarting`, `Completing`,
    /// `Completed`, `Terminating`, `Terminated` or `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// `lastTransitionTime`, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

/// `Job.status.taskStatusCount[task]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskState {
    /// `phase`: pod phase (`Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`) → pods.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub phase: BTreeMap<String, i32>,
}

/// One `Job.status.conditions[]` entry: `status` is the phase entered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobCondition {
    /// `status`: the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `lastTransitionTime`, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::{CustomResourceExt, Resource};

    #[test]
    fn identity_matches_volcano() {
        assert_eq!(Job::api_version(&()), "batch.volcano.sh/v1alpha1");
        assert_eq!(Job::kind(&()), "Job");
        assert_eq!(Job::plural(&()), "jobs");
        let crd = Job::crd();
        assert_eq!(crd.spec.scope, "Namespaced");
        assert_eq!(crd.spec.names.short_names, Some(vec!["vcjob".to_string(), "vj".to_string()]));
        assert!(crd.spec.versions[0].subresources.as_ref().and_then(|s| s.status.as_ref()).is_some());
    }

    #[test]
    fn volcano_documentation_job_round_trips() {
        let yaml = r#"
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: tf, namespace: ns}
spec:
  minAvailable: 3
  schedulerName: volcano
  queue: default
  maxRetry: 5
  ttlSecondsAfterFinished: 60
  plugins: {env: [], svc: ["--publish-not-ready-addresses"]}
  policies:
  - {event: PodEvicted, action: RestartJob}
  tasks:
  - replicas: 1
    name: ps
    template:
      spec:
        containers: [{name: tf, image: tf:1, resources: {requests: {cpu: "1"}}}]
        restartPolicy: Never
  - replicas: 2
    name: worker
    minAvailable: 2
    policies: [{exitCode: 3, action: RestartTask, timeout: 10s}]
    dependsOn: {name: [ps], iteration: any}
    template:
      spec:
        containers: [{name: tf, image: tf:1}]
status:
  state: {phase: Running}
  minAvailable: 3
  running: 3
  taskStatusCount: {ps: {phase: {Running: 1}}}
  conditions: [{status: Running, lastTransitionTime: "2025-01-01T00:00:00Z"}]
"#;
        let job: Job = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(job.spec.tasks.len(), 2);
        assert_eq!(job.spec.tasks[1].policies[0].exit_code, Some(3));
        assert_eq!(job.spec.tasks[1].depends_on.as_ref().unwrap().iteration.as_deref(), Some("any"));
        let tpl = job.spec.tasks[0].template.as_ref().unwrap();
        assert_eq!(tpl.spec.as_ref().unwrap().containers[0].name, "tf");
        let st = job.status.as_ref().unwrap();
        assert_eq!(st.task_status_count["ps"].phase["Running"], 1);
        let json = serde_json::to_value(&job).unwrap();
        assert_eq!(json["spec"]["ttlSecondsAfterFinished"], 60);
        assert_eq!(json["spec"]["tasks"][1]["dependsOn"]["name"][0], "ps");
        assert!(json["status"].get("failed").is_none(), "zero counters are omitted as Volcano's omitempty");
        let back: Job = serde_json::from_value(json).unwrap();
        assert_eq!(back, job);
    }
}
