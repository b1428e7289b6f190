//! The `tensorflow` job plugin (Volcano's `plugins/distributed-framework/tensorflow`,
//! volcano-behaviour.md §5.1 "Job plugins"): every container of every pod gets `TF_CONFIG`,
//! the JSON cluster spec of `tf.distribute`:
//!
//! ```json
//! {"cluster":{"ps":["tj-ps-0.tj:2222"],"worker":["tj-worker-0.tj:2222","tj-worker-1.tj:2222"]},
//!  "task":{"type":"worker","index":1}}
//! ```
//!
//! `cluster` lists, for each task named by `--ps`, `--worker`, `--chief` or `--evaluator`, the
//! DNS names of its pods (`<hostname>.<subdomain>`, as the svc plugin makes them) with `:port`,
//! in that key order, a role without pods left out; `task.type` is the pod's role (`ps`,
//! `worker`, `chief`, `evaluator`, or the task's own name for any other task) and `task.index`
//! its index in its task. A stand-alone job (one task of one replica) gets no `TF_CONFIG`, as in
//! Volcano. Init containers get nothing. The svc plugin comes with it.
//!
//! Flags: `--ps` (`ps`), `--worker` (`worker`), `--chief` (`chief`), `--evaluator`
//! (`evaluator`), `--port` (2222).

use super::flags::{self, FlagKind};
use super::{env, parse_warning, pod_index, pod_task, task_hosts, JobPlugin};
use crate::controller::defaults::task_name;
use crate::crd::Job;
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

/// The env variable.
pub const TF_CONFIG: &str = "TF_CONFIG";

/// The `tensorflow` plugin with its flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensorflow {
    /// `--ps`: the parameter-server task's name.
    pub ps: String,
    /// `--worker`: the worker task's name.
    pub worker: String,
    /// `--chief`: the chief task's name.
    pub chief: String,
    /// `--evaluator`: the evaluator task's name.
    pub evaluator: String,
    /// `--port`: the port of every host in the cluster spec.
    pub port: i64,
}

/// `TF_CONFIG`'s shape, fields in the order Volcano's Go struct writes them.
#[derive(Serialize)]
struct ClusterSpec {
    cluster: Cluster,
    task: TaskInfo,
}

#[derive(Serialize)]
struct Cluster {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ps: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    worker: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    chief: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    evaluator: Vec<String>,
}

#[derive(Serialize)]
struct TaskInfo {
    #[serde(rename = "type")]
    kind: String,
    index: i64,
}

impl Tensorflow {
    /// Parses `args`; the warning names a flag that does not parse.
    pub fn new(args: &[String]) -> (Tensorflow, Vec<String>) {
        let (f, err) = flags::parse(
            &[
                ("ps", FlagKind::String),
                ("worker", FlagKind::String),
                ("chief", FlagKind::String),
                ("evaluator", FlagKind::String),
                ("port", FlagKind::Int),
            ],
            args,
        );
        let p = Tensorflow {
            ps: f.string("ps", "ps"),
            worker: f.string("worker", "worker"),
            chief: f.string("chief", "chief"),
            evaluator: f.string("evaluator", "evaluator"),
            port: f.int("port", 2222),
        };
        (p, parse_warning(args, err))
    }

    /// The role of task `task`: `chief`, `worker`, `ps`, `evaluator` (checked in Volcano's
    /// order), else the task's name.
    pub fn role(&self, task: &str) -> String {
        for (name, role) in [(&self.chief, "chief"), (&self.worker, "worker"), (&self.ps, "ps"), (&self.evaluator, "evaluator")] {
            if task == name {
                return role.into();
            }
        }
        task.into()
    }

    /// The `TF_CONFIG` value for the pod of task `task` with index `index`; `None` for a
    /// stand-alone job.
    pub fn config(&self, job: &Job, task: &str, index: i64) -> Option<String> {
        let tasks = &job.spec.tasks;
        if tasks.len() == 1 && tasks[0].replicas.unwrap_or(0) == 1 {
            return None;
        }
        let mut cluster = Cluster { ps: Vec::new(), worker: Vec::new(), chief: Vec::new(), evaluator: Vec::new() };
        for (ti, t) in tasks.iter().enumerate() {
            let hosts: Vec<String> = task_hosts_all(job, ti, t).into_iter().map(|h| format!("{h}:{}", self.port)).collect();
            let name = task_name(t, ti);
            // Volcano's switch: the first matching role takes the task.
            if name == self.ps {
                cluster.ps = hosts;
            } else if name == self.worker {
                cluster.worker = hosts;
            } else if name == self.chief {
                cluster.chief = hosts;
            } else if name == self.evaluator {
                cluster.evaluator = hosts;
            }
        }
        let spec = ClusterSpec { cluster, task: TaskInfo { kind: self.role(task), index } };
        serde_json::to_string(&spec).ok()
    }
}

/// Every pod's DNS name of task `ti`, one per replica even with a fixed template hostname (as
/// Volcano's `MakeDomainName` per index; the svc plugin's hosts list gives one name then).
fn task_hosts_all(job: &Job, ti: usize, task: &crate::crd::TaskSpec) -> Vec<String> {
    let replicas = task.replicas.unwrap_or(0).max(0) as usize;
    let mut hosts = task_hosts(job, ti, task);
    if let Some(first) = hosts.first().cloned() {
        hosts.resize(replicas, first);
    }
    hosts
}

impl JobPlugin for Tensorflow {
    fn name(&self) -> &'static str {
        "tensorflow"
    }

    fn on_pod_create(&self, pod: &mut Pod, job: &Job) {
        let Ok(index) = pod_index(pod).parse::<i64>() else { return };
        let Some(value) = self.config(job, &pod_task(pod), index) else { return };
        let Some(spec) = pod.spec.as_mut() else { return };
        for c in &mut spec.containers {
            c.env.get_or_insert_with(Vec::new).push(env(TF_CONFIG, value.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{env_of, job, pod};
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_and_defaults() {
        let (p, w) = Tensorflow::new(&[]);
        assert!(w.is_empty());
        assert_eq!(
            (p.ps.as_str(), p.worker.as_str(), p.chief.as_str(), p.evaluator.as_str(), p.port),
            ("ps", "worker", "chief", "evaluator", 2222)
        );
        let (p, w) = Tensorflow::new(&args(&["--ps=server", "--port=3333", "--bogus"]));
        assert_eq!((p.ps.as_str(), p.port), ("server", 3333));
        assert_eq!(w.len(), 1, "{w:?}");
    }

    #[test]
    fn tf_config_of_each_pod_is_volcanos_cluster_spec() {
        let j = job(&[("ps", 1), ("worker", 2), ("eval", 1)], &[("tensorflow", &[])]);
        let (p, _) = Tensorflow::new(&[]);
        let mut w1 = pod(&j, "worker", 1);
        p.on_pod_create(&mut w1, &j);
        let spec = w1.spec.unwrap();
        assert_eq!(
            env_of(&spec.containers[0]),
            [(
                "TF_CONFIG".to_string(),
                r#"{"cluster":{"ps":["tj-ps-0.tj:2222"],"worker":["tj-worker-0.tj:2222","tj-worker-1.tj:2222"]},"task":{"type":"worker","index":1}}"#
                    .to_string()
            )]
        );
        assert!(env_of(&spec.init_containers.unwrap()[0]).is_empty(), "init containers get no TF_CONFIG");
        let mut ps = pod(&j, "ps", 0);
        p.on_pod_create(&mut ps, &j);
        let v = env_of(&ps.spec.unwrap().containers[0])[0].1.clone();
        assert!(v.ends_with(r#""task":{"type":"ps","index":0}}"#), "{v}");
        let mut ev = pod(&j, "eval", 0);
        p.on_pod_create(&mut ev, &j);
        let v = env_of(&ev.spec.unwrap().containers[0])[0].1.clone();
        assert!(v.ends_with(r#""task":{"type":"eval","index":0}}"#), "a task of no role is typed by its name: {v}");
        assert!(!v.contains("tj-eval-0"), "a task of no role is not in the cluster: {v}");
    }

    #[test]
    fn renamed_roles_chief_and_evaluator_and_port() {
        let j = job(&[("lead", 1), ("w", 2), ("evaluator", 1)], &[]);
        let (p, _) = Tensorflow::new(&args(&["--chief=lead", "--worker=w", "--port=4000"]));
        let v = p.config(&j, "lead", 0).unwrap();
        assert_eq!(
            v,
            r#"{"cluster":{"worker":["tj-w-0.tj:4000","tj-w-1.tj:4000"],"chief":["tj-lead-0.tj:4000"],"evaluator":["tj-evaluator-0.tj:4000"]},"task":{"type":"chief","index":0}}"#
        );
    }

    #[test]
    fn stand_alone_job_gets_nothing() {
        let j = job(&[("worker", 1)], &[]);
        let mut pd = pod(&j, "worker", 0);
        let before = pd.clone();
        Tensorflow::new(&[]).0.on_pod_create(&mut pd, &j);
        assert_eq!(pd, before);
        let two = job(&[("worker", 2)], &[]);
        assert!(Tensorflow::new(&[]).0.config(&two, "worker", 0).is_some(), "two replicas are a cluster");
    }
}
