//! Volcano's job plugins (`pkg/controllers/job/plugins`, volcano-behaviour.md §5.1 "Job
//! plugins"): each Job names plugins in `spec.plugins` (`name → [Go-style flags]`), and the
//! controller calls each at four points, as Volcano's `PluginInterface`:
//! * `OnPodCreate` ([`JobPlugin::on_pod_create`]): mutates every pod before it is created;
//! * `OnJobAdd` ([`JobPlugin::on_job_add`]): while the job is not initiated (phase `""` or
//!   `Pending`), the objects the plugin needs (Service, ConfigMap, Secret, …), created once:
//!   the controller then marks `status.controlledResources["plugin-<name>"] = <name>` and skips
//!   the plugin while the mark is there;
//! * `OnJobDelete` ([`JobPlugin::on_job_delete`]): on a whole-job kill, the objects to delete
//!   (only when marked; the mark is removed);
//! * `OnJobUpdate` ([`JobPlugin::on_job_update`]): on a sync of an initiated job, objects to
//!   create or update (the svc plugin's hosts ConfigMap).
//!
//! The plugins here are pure: they return what to create or delete and [`apply`] carries it
//! out against the API. Plugins: [`env`], [`svc`], [`ssh`], [`pytorch`], [`mpi`],
//! [`tensorflow`], [`ray`], [`hcclrank`]. As Volcano's `jobs/mutate` webhook does, `pytorch`,
//! `mpi`, `tensorflow` and `ray` bring `svc` with them and
//! `mpi` brings `ssh` ([`with_dependencies`]). Plugins run in name order (Volcano iterates a Go
//! map, in no fixed order).
//!
//! Bad input: an unknown plugin name is skipped with a warning naming the job and plugin (in
//! Volcano the admission webhook rejects such a job; its controller would fail every sync); a
//! bad argument stops that plugin's flag parse, the flags before it keep their values and the
//! rest their defaults, with a warning ([`check`]), as Volcano's plugins log and go on.

pub mod apply;
pub mod env;
pub mod flags;
pub mod hcclrank;
pub mod mpi;
pub mod pytorch;
pub mod ray;
pub mod rsa_key;
pub mod ssh;
pub mod svc;
pub mod tensorflow;

use super::build::job_key;
use super::defaults::task_name;
use super::keys;
use crate::crd::{Job, TaskSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Container, ContainerPort, EnvVar, Pod, Secret, Service};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use std::collections::BTreeMap;

/// The plugins Basalt implements, by Volcano name.
pub const KNOWN: [&str; 8] = ["env", "hcclrank", "mpi", "pytorch", "ray", "ssh", "svc", "tensorflow"];

/// An object a plugin wants created, and how.
// A handful per job, built once: boxing the larger variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum PluginObject {
    /// A ConfigMap, created or updated to this content (`helpers.CreateOrUpdateConfigMap`).
    ConfigMap(ConfigMap),
    /// A Secret, created or updated to this content (`helpers.CreateOrUpdateSecret`).
    Secret(Secret),
    /// A Service, created when missing (an existing one is left as it is).
    Service(Service),
    /// A NetworkPolicy, created when missing.
    NetworkPolicy(NetworkPolicy),
}

/// The kind of an object a plugin deletes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ObjectKind {
    /// `v1` ConfigMap.
    ConfigMap,
    /// `v1` Secret.
    Secret,
    /// `v1` Service.
    Service,
    /// `networking.k8s.io/v1` NetworkPolicy.
    NetworkPolicy,
}

/// An object in the job's namespace, by kind and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectKey {
    /// Its kind.
    pub kind: ObjectKind,
    /// Its name.
    pub name: String,
}

/// One of Volcano's job plugins, built from its arguments.
pub trait JobPlugin: Send + Sync {
    /// The plugin's name in `spec.plugins`.
    fn name(&self) -> &'static str;

    /// `OnPodCreate`: mutates `pod` (built by `build::pod`, annotated with its task and index)
    /// before it is created.
    fn on_pod_create(&self, pod: &mut Pod, job: &Job);

    /// Whether `OnJobAdd` marks `status.controlledResources["plugin-<name>"]` (and `OnJobDelete`
    /// runs only when marked). True for every plugin but `hcclrank`, as in Volcano.
    fn marks_controlled(&self) -> bool {
        true
    }

    /// `OnJobAdd`: the objects to create for `job`. The default is none (the plugin only marks
    /// `controlledResources`).
    ///
    /// Errors: the objects cannot be made (the ssh plugin's key generation failed).
    fn on_job_add(&self, _job: &Job) -> Result<Vec<PluginObject>, String> {
        Ok(Vec::new())
    }

    /// `OnJobDelete`: the objects to delete (a missing one counts as deleted).
    fn on_job_delete(&self, _job: &Job) -> Vec<ObjectKey> {
        Vec::new()
    }

    /// `OnJobUpdate`: the objects to create or update on a sync of an initiated job.
    fn on_job_update(&self, _job: &Job) -> Vec<PluginObject> {
        Vec::new()
    }
}

/// `spec.plugins` with the plugins Volcano's webhook adds: `svc` for `pytorch`, `mpi`,
/// `tensorflow` and `ray`; `ssh` for `mpi` (each with no arguments, unless named already).
pub fn with_dependencies(plugins: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, Vec<String>> {
    let mut out = plugins.clone();
    if ["pytorch", "mpi", "tensorflow", "ray"].iter().any(|p| plugins.contains_key(*p)) {
        out.entry("svc".into()).or_default();
    }
    if plugins.contains_key("mpi") {
        out.entry("ssh".into()).or_default();
    }
    out
}

/// Plugin `name` built from `args`, with the warnings of its arguments; `None` for a name
/// Basalt does not implement.
pub fn build(name: &str, args: &[String], job: &Job) -> Option<(Box<dyn JobPlugin>, Vec<String>)> {
    let (plugin, warnings): (Box<dyn JobPlugin>, Vec<String>) = match name {
        "env" => {
            let (p, w) = env::Env::new(args);
            (Box::new(p), w)
        }
        "svc" => {
            let (p, w) = svc::Svc::new(args);
            (Box::new(p), w)
        }
        "ssh" => {
            let (p, w) = ssh::Ssh::new(args);
            (Box::new(p), w)
        }
        "pytorch" => {
            let (p, w) = pytorch::Pytorch::new(args, job);
            (Box::new(p), w)
        }
        "mpi" => {
            let (p, w) = mpi::Mpi::new(args, job);
            (Box::new(p), w)
        }
        "tensorflow" => {
            let (p, w) = tensorflow::Tensorflow::new(args);
            (Box::new(p), w)
        }
        "ray" => {
            let (p, w) = ray::Ray::new(args, job);
            (Box::new(p), w)
        }
        "hcclrank" => {
            let (p, w) = hcclrank::HcclRank::new(args);
            (Box::new(p), w)
        }
        _ => return None,
    };
    Some((plugin, warnings))
}

/// The job's plugins (with [`with_dependencies`]) in name order; unknown names are left out
/// ([`check`] reports them).
pub fn of_job(job: &Job) -> Vec<Box<dyn JobPlugin>> {
    with_dependencies(&job.spec.plugins).iter().filter_map(|(n, a)| build(n, a, job).map(|(p, _)| p)).collect()
}

/// Warnings for `job`'s `spec.plugins`, each naming the job and plugin: unknown plugin names,
/// arguments that do not parse, `--master`/`--worker` tasks the job does not have.
pub fn check(job: &Job) -> Vec<String> {
    let key = job_key(job);
    let mut out = Vec::new();
    for (name, args) in with_dependencies(&job.spec.plugins) {
        match build(&name, &args, job) {
            None => out.push(format!(
                "Job {key}: spec.plugins.{name}: unknown job plugin (Basalt implements {}); the job runs without it",
                KNOWN.join(", ")
            )),
            Some((_, warnings)) => out.extend(warnings.into_iter().map(|w| format!("Job {key}: spec.plugins.{name}: {w}"))),
        }
    }
    out
}

/// Runs every plugin's `OnPodCreate` on `pod`.
pub fn on_pod_create(plugins: &[Box<dyn JobPlugin>], pod: &mut Pod, job: &Job) {
    for p in plugins {
        p.on_pod_create(pod, job);
    }
}

/// The `status.controlledResources` key of plugin `name`: `plugin-<name>`.
pub fn controlled_key(name: &str) -> String {
    format!("plugin-{name}")
}

/// The flag-parse warning of plugin arguments `args`, if the parse stopped at an error.
fn parse_warning(args: &[String], err: Option<flags::FlagError>) -> Vec<String> {
    err.map(|e| format!("arguments {args:?}: {e}; the flags after it keep their defaults")).into_iter().collect()
}

/// `<TASK>` of the svc plugin's env names: the task name upper-cased, `-` → `_`.
pub fn env_task_key(task: &str) -> String {
    task.replace('-', "_").to_uppercase()
}

/// The DNS names of task `ti`'s pods, `<hostname>.<subdomain>`: hostname the template's or the
/// pod name `<job>-<task>-<i>`, subdomain the template's or the job name. A template with a
/// fixed hostname gives one name (Volcano's `GenerateHosts`).
pub fn task_hosts(job: &Job, ti: usize, task: &TaskSpec) -> Vec<String> {
    let jname = job.metadata.name.clone().unwrap_or_default();
    let tname = task_name(task, ti);
    let spec = task.template.as_ref().and_then(|t| t.spec.as_ref());
    let fixed = spec.and_then(|s| s.hostname.clone()).filter(|h| !h.is_empty());
    let subdomain = spec.and_then(|s| s.subdomain.clone()).filter(|s| !s.is_empty()).unwrap_or_else(|| jname.clone());
    let replicas = task.replicas.unwrap_or(0).max(0);
    let mut hosts = Vec::new();
    for i in 0..replicas {
        let host = fixed.clone().unwrap_or_else(|| super::build::pod_name(&jname, &tname, i));
        hosts.push(format!("{host}.{subdomain}"));
        if fixed.is_some() {
            break;
        }
    }
    hosts
}

/// The index of the task named `name` in `job.spec.tasks`.
pub fn task_index(job: &Job, name: &str) -> Option<usize> {
    job.spec.tasks.iter().enumerate().position(|(i, t)| task_name(t, i) == name)
}

/// The pod's task (`volcano.sh/task-spec`; Volcano's `GetTaskKey`, `default` when unset).
pub fn pod_task(pod: &Pod) -> String {
    pod.metadata.annotations.as_ref().and_then(|a| a.get(keys::TASK_SPEC)).cloned().unwrap_or_else(|| "default".into())
}

/// The pod's index in its task: `volcano.sh/task-index`, else the last `-` part of its name.
pub fn pod_index(pod: &Pod) -> String {
    if let Some(i) = pod.metadata.annotations.as_ref().and_then(|a| a.get(keys::TASK_INDEX)) {
        return i.clone();
    }
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    name.rsplit('-').next().filter(|_| name.split('-').count() >= 3).unwrap_or_default().to_string()
}

/// Appends `vars` to every container (and init container when `init`).
fn push_env(pod: &mut Pod, vars: &[EnvVar], init: bool) {
    let Some(spec) = pod.spec.as_mut() else { return };
    let mut each = |c: &mut Container| c.env.get_or_insert_with(Vec::new).extend(vars.iter().cloned());
    spec.containers.iter_mut().for_each(&mut each);
    if init {
        spec.init_containers.iter_mut().flatten().for_each(each);
    }
}

/// Adds container port `port` named `name` to `c` unless it has that port number already.
fn open_port(c: &mut Container, name: &str, port: i32) {
    let ports = c.ports.get_or_insert_with(Vec::new);
    if !ports.iter().any(|p| p.container_port == port) {
        ports.push(ContainerPort { name: Some(name.into()), container_port: port, ..Default::default() });
    }
}

fn env(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar { name: name.into(), value: Some(value.into()), value_from: None }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::crd::JobSpec;
    use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};

    /// A job `tj` in `ns` with tasks `(name, replicas)`, each pod one container `c` and one init
    /// container `init`.
    pub(crate) fn job(tasks: &[(&str, i32)], plugins: &[(&str, &[&str])]) -> Job {
        let tpl = PodTemplateSpec {
            metadata: None,
            spec: Some(PodSpec {
                containers: vec![Container { name: "c".into(), ..Default::default() }],
                init_containers: Some(vec![Container { name: "init".into(), ..Default::default() }]),
                ..Default::default()
            }),
        };
        let mut j = Job::new(
            "tj",
            JobSpec {
                tasks: tasks
                    .iter()
                    .map(|(n, r)| TaskSpec {
                        name: Some(n.to_string()),
                        replicas: Some(*r),
                        template: Some(tpl.clone()),
                        ..Default::default()
                    })
                    .collect(),
                plugins: plugins.iter().map(|(n, a)| (n.to_string(), a.iter().map(|s| s.to_string()).collect())).collect(),
                ..Default::default()
            },
        );
        j.metadata.namespace = Some("ns".into());
        j.metadata.uid = Some("uid-1".into());
        j
    }

    /// Pod `index` of task `task` as the controller builds it.
    pub(crate) fn pod(job: &Job, task: &str, index: i32) -> Pod {
        super::super::build::pod(job, task_index(job, task).unwrap(), index).unwrap()
    }

    pub(crate) fn env_of(c: &Container) -> Vec<(String, String)> {
        c.env.iter().flatten().map(|e| (e.name.clone(), e.value.clone().unwrap_or_default())).collect()
    }

    #[test]
    fn dependencies_as_volcanos_webhook_adds_them() {
        let p = |names: &[&str]| -> BTreeMap<String, Vec<String>> { names.iter().map(|n| (n.to_string(), Vec::new())).collect() };
        let keys = |m: BTreeMap<String, Vec<String>>| m.into_keys().collect::<Vec<_>>();
        assert_eq!(keys(with_dependencies(&p(&["env"]))), ["env"]);
        assert_eq!(keys(with_dependencies(&p(&["pytorch"]))), ["pytorch", "svc"]);
        assert_eq!(keys(with_dependencies(&p(&["mpi"]))), ["mpi", "ssh", "svc"]);
        assert_eq!(keys(with_dependencies(&p(&["tensorflow"]))), ["svc", "tensorflow"]);
        assert_eq!(keys(with_dependencies(&p(&["ray"]))), ["ray", "svc"]);
        assert_eq!(keys(with_dependencies(&p(&["hcclrank"]))), ["hcclrank"]);
        let mut given = p(&["mpi"]);
        given.insert("svc".into(), vec!["--disable-network-policy".into()]);
        assert_eq!(with_dependencies(&given)["svc"], ["--disable-network-policy"], "a named svc keeps its arguments");
    }

    #[test]
    fn unknown_plugins_and_bad_arguments_are_named() {
        let j = job(&[("worker", 1)], &[("env", &[]), ("horovod", &[]), ("svc", &["--publish-not-ready-addresses=maybe"])]);
        let w = check(&j);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("Job ns/tj: spec.plugins.horovod: unknown job plugin"), "{}", w[0]);
        assert_eq!(
            w[1],
            "Job ns/tj: spec.plugins.svc: arguments [\"--publish-not-ready-addresses=maybe\"]: invalid value \"maybe\" for \
             flag -publish-not-ready-addresses: parse error; the flags after it keep their defaults"
        );
        let names: Vec<&str> = of_job(&j).iter().map(|p| p.name()).collect();
        assert_eq!(names, ["env", "svc"], "the unknown plugin is left out, the others run");
    }

    #[test]
    fn hosts_follow_template_hostname_and_subdomain() {
        let mut j = job(&[("ps", 2), ("worker", 3)], &[]);
        assert_eq!(task_hosts(&j, 0, &j.spec.tasks[0]), ["tj-ps-0.tj", "tj-ps-1.tj"]);
        let spec = j.spec.tasks[1].template.as_mut().unwrap().spec.as_mut().unwrap();
        spec.hostname = Some("lead".into());
        spec.subdomain = Some("grid".into());
        assert_eq!(task_hosts(&j, 1, &j.spec.tasks[1]), ["lead.grid"], "a fixed hostname is one host");
    }

    #[test]
    fn pod_index_from_annotation_or_name() {
        let j = job(&[("worker", 3)], &[]);
        let mut p = pod(&j, "worker", 2);
        assert_eq!(pod_index(&p), "2");
        p.metadata.annotations = None;
        assert_eq!(pod_index(&p), "2");
        assert_eq!(pod_task(&p), "default");
    }
}
