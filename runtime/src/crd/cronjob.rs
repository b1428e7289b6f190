//! `CronJob` (`batch.volcano.sh/v1alpha1`, namespaced, short names `cronvcjob`/`cronvj`, status
//! subresource): a Volcano Job made from `spec.jobTemplate` on a cron schedule
//! (volcano-behaviour.md §5; Volcano's `batch/v1alpha1` `CronJobSpec`). The `/cronjobs/validate`
//! admission rule checks its schedule, time zone and name (`admission::cronjobs`).
//!
//! Field names are Volcano's exactly; defaults (`concurrencyPolicy` Allow, `suspend` false, history
//! limits 3 successful / 1 failed) are Volcano's and applied by whoever reads the object, not
//! written into the schema (kube-apiserver 1.20 refuses some schema defaults).

use super::{schema, JobSpec};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `CronJob.spec`.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "batch.volcano.sh",
    version = "v1alpha1",
    kind = "CronJob",
    namespaced,
    shortname = "cronvcjob",
    shortname = "cronvj",
    status = "CronJobStatus",
    derive = "Default",
    derive = "PartialEq",
    label("app.kubernetes.io/part-of", "basalt"),
    doc = "A Volcano CronJob: a Volcano Job made from a template on a cron schedule."
)]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    /// `schedule`: five cron fields or a descriptor (`@hourly`), as robfig/cron's `ParseStandard`
    /// reads it (`convert::cron::Schedule`).
    #[serde(default)]
    pub schedule: String,
    /// `timeZone`: an IANA zone name for the schedule; unset = the controller's zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// `startingDeadlineSeconds`: a run more than this late is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,
    /// `concurrencyPolicy`: `Allow` (unset), `Forbid` or `Replace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_policy: Option<String>,
    /// `suspend`: no new runs while true; unset = false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// `jobTemplate`: the Job each run creates.
    #[serde(default)]
    pub job_template: JobTemplateSpec,
    /// `successfulJobsHistoryLimit`: finished successful Jobs kept; unset = 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_jobs_history_limit: Option<i32>,
    /// `failedJobsHistoryLimit`: failed Jobs kept; unset = 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_jobs_history_limit: Option<i32>,
}

/// `spec.jobTemplate`: the metadata and spec of the Jobs a CronJob creates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobTemplateSpec {
    /// `metadata`: labels and annotations copied onto each Job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::opaque_object")]
    pub metadata: Option<ObjectMeta>,
    /// `spec`: a Volcano Job spec.
    #[serde(default)]
    pub spec: JobSpec,
}

/// `CronJob.status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobStatus {
    /// `active[]`: references to the Jobs of this CronJob still running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "schema::opaque_list")]
    pub active: Vec<ObjectReference>,
    /// `lastScheduleTime`: when a Job was last created (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::date_time")]
    pub last_schedule_time: Option<Time>,
    /// `lastSuccessfulTime`: when a Job of this CronJob last completed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schema::date_time")]
    pub last_successful_time: Option<Time>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volcano_cronjob_yaml_round_trips() {
        let yaml = r#"
apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata: {name: nightly, namespace: ml}
spec:
  schedule: "0 2 * * *"
  timeZone: Europe/Berlin
  concurrencyPolicy: Forbid
  startingDeadlineSeconds: 300
  successfulJobsHistoryLimit: 5
  jobTemplate:
    metadata: {labels: {team: a}}
    spec:
      minAvailable: 1
      tasks:
        - name: w
          replicas: 1
          template: {spec: {containers: [{name: c, image: busybox}]}}
status:
  lastScheduleTime: "2026-12-05T02:00:00Z"
"#;
        let c: CronJob = serde_yaml::from_str(yaml).unwrap();
        assert_eq!(c.spec.schedule, "0 2 * * *");
        assert_eq!(c.spec.time_zone.as_deref(), Some("Europe/Berlin"));
        assert_eq!(c.spec.concurrency_policy.as_deref(), Some("Forbid"));
        assert_eq!(c.spec.job_template.spec.tasks[0].replicas, Some(1));
        assert!(c.status.as_ref().unwrap().last_schedule_time.is_some());
        let back: CronJob = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
}
