//! The `ray` job plugin (Volcano's `plugins/distributed-framework/ray`, volcano-behaviour.md
//! §5.1 "Job plugins"): a Ray cluster from a head task and a worker task.
//! * `OnPodCreate`: in a head pod, the container named `--headContainer` runs
//!   `sh -c "ray start --head --block --dashboard-host=0.0.0.0 --port=<port>
//!   --dashboard-port=<dashboardPort> --ray-client-server-port=<clientPort>"` and gets container
//!   ports `gcs`, `dashboard` and `client-server` (each unless it has that port number already);
//!   in a worker pod, the container named `--workerContainer` runs
//!   `sh -c "ray start --block --address=<head>:<port>"`, `<head>` the head task's first pod,
//!   `<job>-<head>-0.<job>` (the template's hostname/subdomain when set). A job without the head
//!   task is left unchanged (Volcano fails the pod's creation; Basalt reports it in `check`).
//! * `OnJobAdd`: the Service `<job>-head-svc` (owned by the Job) selecting the head pods
//!   (`volcano.sh/job-name`, `volcano.sh/job-namespace`, `volcano.sh/task-spec`), with the three
//!   ports by name, TCP.
//! * `OnJobDelete`: that Service deleted.
//!
//! Flags: `--head` (`head`), `--headContainer` (`head`), `--worker` (`worker`),
//! `--workerContainer` (`worker`), `--port` (6379), `--dashboardPort` (8265), `--clientPort`
//! (10001). The svc plugin comes with it.

use super::flags::{self, FlagKind};
use super::{open_port, parse_warning, pod_task, task_hosts, task_index, JobPlugin, ObjectKey, ObjectKind, PluginObject};
use crate::controller::build::owner_reference;
use crate::controller::keys;
use crate::crd::Job;
use k8s_openapi::api::core::v1::{Pod, Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

/// The GCS port's name.
pub const GCS_PORT: &str = "gcs";
/// The dashboard port's name.
pub const DASHBOARD_PORT: &str = "dashboard";
/// The client server port's name.
pub const CLIENT_PORT: &str = "client-server";

/// The `ray` plugin with its flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ray {
    /// `--head`: the head task's name.
    pub head: String,
    /// `--headContainer`: the container of a head pod that runs Ray.
    pub head_container: String,
    /// `--worker`: the worker task's name.
    pub worker: String,
    /// `--workerContainer`: the container of a worker pod that runs Ray.
    pub worker_container: String,
    /// `--port`: the GCS port.
    pub port: i32,
    /// `--dashboardPort`.
    pub dashboard_port: i32,
    /// `--clientPort`: the Ray client server's port.
    pub client_port: i32,
}

impl Ray {
    /// Parses `args`; the warnings name a bad flag, a port out of range (its default is used),
    /// or a head task the job does not have.
    pub fn new(args: &[String], job: &Job) -> (Ray, Vec<String>) {
        let (f, err) = flags::parse(
            &[
                ("head", FlagKind::String),
                ("headContainer", FlagKind::String),
                ("worker", FlagKind::String),
                ("workerContainer", FlagKind::String),
                ("port", FlagKind::Int),
                ("dashboardPort", FlagKind::Int),
                ("clientPort", FlagKind::Int),
            ],
            args,
        );
        let mut w = parse_warning(args, err);
        let mut port = |name: &str, default: i64| {
            let v = f.int(name, default);
            if (1..=65535).contains(&v) {
                v as i32
            } else {
                w.push(format!("--{name}={v} is not a port (1-65535); using {default}"));
                default as i32
            }
        };
        let (port, dashboard_port, client_port) = (port("port", 6379), port("dashboardPort", 8265), port("clientPort", 10001));
        let p = Ray {
            head: f.string("head", "head"),
            head_container: f.string("headContainer", "head"),
            worker: f.string("worker", "worker"),
            worker_container: f.string("workerContainer", "worker"),
            port,
            dashboard_port,
            client_port,
        };
        if task_index(job, &p.head).is_none() {
            w.push(format!("--head task {:?} is not a task of the job; its pods run without the ray plugin", p.head));
        }
        (p, w)
    }

    /// The head's DNS name, `None` without a head task.
    pub fn head_addr(&self, job: &Job) -> Option<String> {
        let ti = task_index(job, &self.head)?;
        let mut one = job.spec.tasks[ti].clone();
        one.replicas = Some(1);
        task_hosts(job, ti, &one).into_iter().next()
    }

    /// `<job>-head-svc`.
    pub fn service_name(job: &Job) -> String {
        format!("{}-head-svc", job.metadata.name.as_deref().unwrap_or_default())
    }

    /// The head Service.
    pub fn service(&self, job: &Job) -> Service {
        let port = |name: &str, port: i32| ServicePort {
            name: Some(name.into()),
            port,
            target_port: Some(IntOrString::String(name.into())),
            protocol: Some("TCP".into()),
            ..Default::default()
        };
        Service {
            metadata: ObjectMeta {
                name: Some(Self::service_name(job)),
                namespace: job.metadata.namespace.clone(),
                owner_references: Some(vec![owner_reference(job)]),
                ..Default::default()
            },
            spec: Some(ServiceSpec {
                selector: Some(BTreeMap::from([
                    (keys::JOB_NAME.to_string(), job.metadata.name.clone().unwrap_or_default()),
                    (keys::JOB_NAMESPACE.to_string(), job.metadata.namespace.clone().unwrap_or_default()),
                    (keys::TASK_SPEC.to_string(), self.head.clone()),
                ])),
                ports: Some(vec![
                    port(GCS_PORT, self.port),
                    port(DASHBOARD_PORT, self.dashboard_port),
                    port(CLIENT_PORT, self.client_port),
                ]),
                ..Default::default()
            }),
            status: None,
        }
    }
}

impl JobPlugin for Ray {
    fn name(&self) -> &'static str {
        "ray"
    }

    fn on_pod_create(&self, pod: &mut Pod, job: &Job) {
        let Some(head) = self.head_addr(job) else { return };
        let task = pod_task(pod);
        let Some(spec) = pod.spec.as_mut() else { return };
        for c in &mut spec.containers {
            if task == self.head && c.name == self.head_container {
                open_port(c, GCS_PORT, self.port);
                open_port(c, DASHBOARD_PORT, self.dashboard_port);
                open_port(c, CLIENT_PORT, self.client_port);
                let cmd = format!(
                    "ray start --head --block --dashboard-host=0.0.0.0 --port={} --dashboard-port={} --ray-client-server-port={}",
                    self.port, self.dashboard_port, self.client_port
                );
                c.command = Some(vec!["sh".into(), "-c".into(), cmd]);
            }
            if task == self.worker && c.name == self.worker_container {
                c.command = Some(vec!["sh".into(), "-c".into(), format!("ray start --block --address={head}:{}", self.port)]);
            }
        }
    }

    fn on_job_add(&self, job: &Job) -> Result<Vec<PluginObject>, String> {
        Ok(vec![PluginObject::Service(self.service(job))])
    }

    fn on_job_delete(&self, job: &Job) -> Vec<ObjectKey> {
        vec![ObjectKey { kind: ObjectKind::Service, name: Self::service_name(job) }]
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{job, pod};
    use super::*;
    use k8s_openapi::api::core::v1::Container;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// A ray job whose pods have containers named after their task.
    fn ray_job() -> Job {
        let mut j = job(&[("head", 1), ("worker", 2)], &[("ray", &[])]);
        for t in &mut j.spec.tasks {
            let name = t.name.clone().unwrap();
            t.template.as_mut().unwrap().spec.as_mut().unwrap().containers =
                vec![Container { name, ..Default::default() }, Container { name: "sidecar".into(), ..Default::default() }];
        }
        j
    }

    #[test]
    fn flags_defaults_and_warnings() {
        let j = ray_job();
        let (p, w) = Ray::new(&[], &j);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((p.port, p.dashboard_port, p.client_port), (6379, 8265, 10001));
        assert_eq!((p.head_container.as_str(), p.worker_container.as_str()), ("head", "worker"));
        let (p, w) = Ray::new(&args(&["--head=boss", "--port=0"]), &j);
        assert_eq!(p.port, 6379);
        assert_eq!(w.len(), 2, "bad port and missing head task: {w:?}");
    }

    #[test]
    fn head_and_worker_commands_and_ports() {
        let j = ray_job();
        let (p, _) = Ray::new(&args(&["--port=7000"]), &j);
        let mut h = pod(&j, "head", 0);
        p.on_pod_create(&mut h, &j);
        let spec = h.spec.unwrap();
        let head = &spec.containers[0];
        assert_eq!(
            head.command.clone().unwrap(),
            [
                "sh",
                "-c",
                "ray start --head --block --dashboard-host=0.0.0.0 --port=7000 --dashboard-port=8265 --ray-client-server-port=10001"
            ]
        );
        let ports: Vec<(String, i32)> =
            head.ports.iter().flatten().map(|p| (p.name.clone().unwrap_or_default(), p.container_port)).collect();
        assert_eq!(ports, [("gcs".to_string(), 7000), ("dashboard".into(), 8265), ("client-server".into(), 10001)]);
        assert!(spec.containers[1].command.is_none() && spec.containers[1].ports.is_none(), "other containers are left");
        let mut w = pod(&j, "worker", 1);
        p.on_pod_create(&mut w, &j);
        let spec = w.spec.unwrap();
        assert_eq!(spec.containers[0].command.clone().unwrap(), ["sh", "-c", "ray start --block --address=tj-head-0.tj:7000"]);
        assert!(spec.containers[0].ports.is_none(), "workers open no port");
    }

    #[test]
    fn head_service_and_its_deletion() {
        let j = ray_job();
        let (p, _) = Ray::new(&[], &j);
        let objs = p.on_job_add(&j).unwrap();
        let [PluginObject::Service(s)] = objs.as_slice() else { panic!("{objs:?}") };
        assert_eq!(s.metadata.name.as_deref(), Some("tj-head-svc"));
        assert_eq!(s.metadata.owner_references.as_ref().unwrap()[0].name, "tj");
        let spec = s.spec.as_ref().unwrap();
        assert_eq!(spec.selector.as_ref().unwrap()["volcano.sh/task-spec"], "head");
        let ports: Vec<(&str, i32)> = spec.ports.iter().flatten().map(|p| (p.name.as_deref().unwrap(), p.port)).collect();
        assert_eq!(ports, [("gcs", 6379), ("dashboard", 8265), ("client-server", 10001)]);
        assert_eq!(p.on_job_delete(&j), [ObjectKey { kind: ObjectKind::Service, name: "tj-head-svc".into() }]);
    }

    #[test]
    fn no_head_task_no_change() {
        let j = job(&[("worker", 2)], &[]);
        let (p, _) = Ray::new(&[], &j);
        let mut w = pod(&j, "worker", 0);
        let before = w.clone();
        p.on_pod_create(&mut w, &j);
        assert_eq!(w, before);
    }
}
