//! The Job commands (Volcano's `pkg/cli/job`, and the shorthand binaries `vsub`, `vjobs`,
//! `vcancel`, `vsuspend`, `vresume`): each takes plain options and an API client and returns
//! what Volcano prints on success (often nothing).

use super::api_error;
use super::job_table::jobs_table;
use super::job_view::{events_table, job_events, job_info};
use super::resources::parse_resource_list;
use crate::crd::{Command, Job, JobSpec, TaskSpec};
use k8s_openapi::api::core::v1::{Container, Event, PodSpec, PodTemplateSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::Client;
use std::collections::BTreeMap;

/// The label `vcctl job run` puts on the pod template: `job.volcano.sh: <job>`.
pub const RUN_LABEL: &str = "job.volcano.sh";

/// What `vcctl job run` / `vsub` submit (their flags; defaults are the caller's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOptions {
    /// `--name`: the Job's name (also its pod template's and container's name).
    pub name: String,
    /// `--namespace`: where the Job is created.
    pub namespace: String,
    /// `--image`.
    pub image: String,
    /// `--min`: the Job's `minAvailable`.
    pub min_available: i32,
    /// `--replicas`: the one task's replicas.
    pub replicas: i32,
    /// `--requests`: `cpu=1000m,memory=100Mi`.
    pub requests: String,
    /// `--limits`: as `requests`.
    pub limits: String,
    /// `--scheduler`: the Job's `schedulerName`.
    pub scheduler_name: String,
    /// `--filename`: a YAML file holding the whole Job instead (`job run` only); empty: none.
    pub filename: String,
    /// `--command` (`vsub` only): the container's command, split as a shell splits words.
    pub command: String,
}

/// The Job `o` describes: the file's Job when `--filename` is set, else one task of
/// `--replicas` pods of one container (`--image`, `--requests`, `--limits`, `--command`,
/// `imagePullPolicy: IfNotPresent`, `restartPolicy: Never`), as Volcano's
/// `constructLaunchJobFlagsJob` builds it.
///
/// Errors (Volcano's words): no `--name` and no `--filename` (`job name cannot be left blank`);
/// a bad resource list; a file that is not `.yaml`/`.yml`, unreadable or no Job; an
/// unterminated quote in `--command`.
pub fn build_job(o: &RunOptions) -> Result<Job, String> {
    if o.name.is_empty() && o.filename.is_empty() {
        return Err("job name cannot be left blank".into());
    }
    let requests = parse_resource_list(&o.requests)?;
    let limits = parse_resource_list(&o.limits)?;
    if !o.filename.is_empty() {
        if !o.filename.contains(".yaml") && !o.filename.contains(".yml") {
            return Err("only support yaml file".into());
        }
        let text = std::fs::read_to_string(&o.filename).map_err(|e| format!("failed to read file, err: {e}"))?;
        return serde_yaml::from_str(&text).map_err(|e| format!("failed to unmarshal file, err:  {e}"));
    }
    let command = if o.command.is_empty() { None } else { Some(super::shell_words::split(&o.command)?) };
    let container = Container {
        name: o.name.clone(),
        image: Some(o.image.clone()),
        image_pull_policy: Some("IfNotPresent".into()),
        command,
        resources: Some(ResourceRequirements { limits, requests, ..Default::default() }),
        ..Default::default()
    };
    let template = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            name: Some(o.name.clone()),
            labels: Some(BTreeMap::from([(RUN_LABEL.to_string(), o.name.clone())])),
            ..Default::default()
        }),
        spec: Some(PodSpec { restart_policy: Some("Never".into()), containers: vec![container], ..Default::default() }),
    };
    let spec = JobSpec {
        min_available: Some(o.min_available),
        scheduler_name: Some(o.scheduler_name.clone()),
        tasks: vec![TaskSpec { replicas: Some(o.replicas), template: Some(template), ..Default::default() }],
        ..Default::default()
    };
    let mut job = Job::new(&o.name, spec);
    job.metadata.namespace = Some(o.namespace.clone());
    Ok(job)
}

/// `vcctl job run` / `vsub`: creates [`build_job`]'s Job in `--namespace`; prints `run job
/// <name> successfully`.
///
/// Errors: as [`build_job`], or the API server's refusal (e.g. the Job exists).
pub async fn run(client: &Client, o: &RunOptions) -> Result<String, String> {
    let job = build_job(o)?;
    let created =
        Api::<Job>::namespaced(client.clone(), &o.namespace).create(&PostParams::default(), &job).await.map_err(api_error)?;
    Ok(format!("run job {} successfully\n", created.metadata.name.unwrap_or_default()))
}

/// Which Jobs `vcctl job list` / `vjobs` print.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListOptions {
    /// `--namespace` (ignored with `all_namespaces`).
    pub namespace: String,
    /// `--all-namespaces`: every namespace, with a `Namespace` column.
    pub all_namespaces: bool,
    /// `--queue`: only Jobs whose `spec.queue` is this (empty: any).
    pub queue: String,
    /// `--scheduler`: only Jobs whose `spec.schedulerName` is this (empty: any).
    pub scheduler_name: String,
    /// `--selector`: only Jobs whose name contains this.
    pub selector: String,
}

/// Whether `job` passes `o`'s filters (queue, scheduler name, name substring).
pub fn matches(job: &Job, o: &ListOptions) -> bool {
    (o.queue.is_empty() || job.spec.queue.as_deref().unwrap_or("") == o.queue)
        && (o.scheduler_name.is_empty() || job.spec.scheduler_name.as_deref().unwrap_or("") == o.scheduler_name)
        && job.metadata.name.as_deref().unwrap_or("").contains(&o.selector)
}

async fn list_jobs(client: &Client, o: &ListOptions) -> Result<Vec<Job>, String> {
    let api: Api<Job> = if o.all_namespaces { Api::all(client.clone()) } else { Api::namespaced(client.clone(), &o.namespace) };
    Ok(api.list(&ListParams::default()).await.map_err(api_error)?.items)
}

/// `vcctl job list`: the table of the Jobs that pass the filters ([`jobs_table`]), or `No
/// resources found` when none does.
///
/// Errors: the API server's.
pub async fn list(client: &Client, o: &ListOptions) -> Result<String, String> {
    let jobs: Vec<Job> = list_jobs(client, o).await?.into_iter().filter(|j| matches(j, o)).collect();
    if jobs.is_empty() {
        return Ok("No resources found\n".into());
    }
    Ok(jobs_table(&jobs, o.all_namespaces))
}

/// `vjobs` without `--name`: as [`list`], except that `No resources found` is printed only when
/// the namespace has no Job at all (Volcano's `vjobs` filters while printing; `--queue` is not
/// one of its flags).
///
/// Errors: the API server's.
pub async fn vjobs_list(client: &Client, o: &ListOptions) -> Result<String, String> {
    let jobs = list_jobs(client, o).await?;
    if jobs.is_empty() {
        return Ok("No resources found\n".into());
    }
    let shown: Vec<Job> = jobs.into_iter().filter(|j| matches(j, o)).collect();
    Ok(jobs_table(&shown, o.all_namespaces))
}

/// `vcctl job view` (`conditions`) and `vjobs --name`: Job `namespace/name` ([`job_info`]) and
/// its Events ([`events_table`]). Events that cannot be listed are left out with a note on
/// stderr, as Volcano's.
///
/// Errors: the API server's (`jobs.batch.volcano.sh "<name>" not found`).
pub async fn view(client: &Client, namespace: &str, name: &str, conditions: bool) -> Result<String, String> {
    let job = Api::<Job>::namespaced(client.clone(), namespace).get(name).await.map_err(api_error)?;
    let mut out = job_info(&job, conditions);
    let events = match Api::<Event>::namespaced(client.clone(), namespace).list(&ListParams::default()).await {
        Ok(l) => l.items,
        Err(e) => {
            eprintln!("Failed to list events: {}", api_error(e));
            Vec::new()
        }
    };
    let now = k8s_openapi::jiff::Timestamp::now().as_second();
    out.push_str(&events_table(&job_events(&events, name), now));
    Ok(out)
}

/// `vcctl job suspend` (`AbortJob`) / `resume` (`ResumeJob`), `vsuspend`, `vresume`: reads Job
/// `namespace/name` and creates Command `action` targeting it in its namespace (generateName
/// `<job>-<action>-`, owned by the Job; Volcano's `util.CreateJobCommand`). The job controller
/// acts on it. Prints nothing, as Volcano's.
///
/// Errors: the API server's (`jobs.batch.volcano.sh "<name>" not found`, Command refused).
pub async fn command(client: &Client, namespace: &str, name: &str, action: &str) -> Result<String, String> {
    let job = Api::<Job>::namespaced(client.clone(), namespace).get(name).await.map_err(api_error)?;
    let cmd = Command::for_object(namespace, &job, action);
    Api::<Command>::namespaced(client.clone(), namespace).create(&PostParams::default(), &cmd).await.map_err(api_error)?;
    Ok(String::new())
}

/// `vcctl job delete` (`verb` `delete`) / `vcancel` (`cancel`): deletes Job `namespace/name`;
/// prints `<verb> job <name> successfully`.
///
/// Errors: the API server's (`jobs.batch.volcano.sh "<name>" not found`).
pub async fn delete(client: &Client, namespace: &str, name: &str, verb: &str) -> Result<String, String> {
    Api::<Job>::namespaced(client.clone(), namespace).delete(name, &DeleteParams::default()).await.map_err(api_error)?;
    Ok(format!("{verb} job {name} successfully\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_opts() -> RunOptions {
        RunOptions {
            name: "demo".into(),
            namespace: "ns".into(),
            image: "busybox".into(),
            min_available: 2,
            replicas: 3,
            requests: "cpu=1000m,memory=100Mi".into(),
            limits: "cpu=2".into(),
            scheduler_name: "volcano".into(),
            ..Default::default()
        }
    }

    #[test]
    fn run_builds_volcanos_job() {
        let job = build_job(&RunOptions { command: "sh -c 'sleep 5'".into(), ..run_opts() }).unwrap();
        let json = serde_json::to_value(&job).unwrap();
        assert_eq!(json["apiVersion"], "batch.volcano.sh/v1alpha1");
        assert_eq!(json["metadata"]["name"], "demo");
        assert_eq!(json["metadata"]["namespace"], "ns");
        assert_eq!(json["spec"]["minAvailable"], 2);
        assert_eq!(json["spec"]["schedulerName"], "volcano");
        let task = &json["spec"]["tasks"][0];
        assert_eq!(task["replicas"], 3);
        assert!(task.get("name").is_none(), "no task name, as Volcano's vcctl (the webhook names it default0)");
        assert_eq!(task["template"]["metadata"]["labels"]["job.volcano.sh"], "demo");
        assert_eq!(task["template"]["spec"]["restartPolicy"], "Never");
        let c = &task["template"]["spec"]["containers"][0];
        assert_eq!((&c["name"], &c["image"], &c["imagePullPolicy"]), (&"demo".into(), &"busybox".into(), &"IfNotPresent".into()));
        assert_eq!(c["command"], serde_json::json!(["sh", "-c", "sleep 5"]));
        assert_eq!(c["resources"]["requests"], serde_json::json!({"cpu": "1000m", "memory": "100Mi"}));
        assert_eq!(c["resources"]["limits"], serde_json::json!({"cpu": "2"}));
    }

    #[test]
    fn run_refuses_bad_input_in_volcanos_words() {
        let no_name = RunOptions { name: String::new(), ..run_opts() };
        assert_eq!(build_job(&no_name).unwrap_err(), "job name cannot be left blank");
        let bad = RunOptions { requests: "cpu".into(), ..run_opts() };
        assert_eq!(build_job(&bad).unwrap_err(), "invalid argument syntax cpu, expected <resource>=<value>");
        let json = RunOptions { filename: "job.json".into(), ..run_opts() };
        assert_eq!(build_job(&json).unwrap_err(), "only support yaml file");
        let missing = RunOptions { filename: "/nonexistent/job.yaml".into(), ..run_opts() };
        assert!(build_job(&missing).unwrap_err().starts_with("failed to read file, err: "));
    }

    #[test]
    fn run_reads_a_job_file() {
        let path = std::env::temp_dir().join(format!("vcctl-run-{}.yaml", std::process::id()));
        std::fs::write(&path, "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: from-file}\nspec: {queue: q1, tasks: [{replicas: 1}]}\n").unwrap();
        let o = RunOptions { name: String::new(), filename: path.display().to_string(), ..run_opts() };
        let job = build_job(&o).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(job.metadata.name.as_deref(), Some("from-file"));
        assert_eq!(job.spec.queue.as_deref(), Some("q1"));
    }

    #[test]
    fn list_filters_by_queue_scheduler_and_name() {
        let job: Job = serde_yaml::from_str("metadata: {name: train-a}\nspec: {queue: q1, schedulerName: volcano}\n").unwrap();
        let o = |q: &str, s: &str, sel: &str| ListOptions {
            queue: q.into(),
            scheduler_name: s.into(),
            selector: sel.into(),
            ..Default::default()
        };
        assert!(matches(&job, &o("", "", "")));
        assert!(matches(&job, &o("q1", "volcano", "train")));
        assert!(!matches(&job, &o("q2", "", "")));
        assert!(!matches(&job, &o("", "other", "")));
        assert!(!matches(&job, &o("", "", "infer")));
    }
}
