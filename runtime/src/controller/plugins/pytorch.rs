//! The `pytorch` job plugin (Volcano's `plugins/distributed-framework/pytorch`,
//! volcano-behaviour.md §5.1 "Job plugins"): the env of `torch.distributed`'s `env://` setup.
//! Every container of every pod gets:
//! * `MASTER_ADDR`: the master task's first pod, `<job>-<master>-0.<job>` (the template's
//!   hostname/subdomain when set);
//! * `MASTER_PORT`: `--port`;
//! * `WORLD_SIZE`: Σ replicas of all tasks;
//! * `RANK`: 0 in master pods, pod index + 1 in worker pods (none in other tasks);
//!
//! and container port `pytorchjob-port` = `--port` unless it has that port already. With
//! `--wait-master-enabled`, worker pods get a first init container `wait-for-master`
//! (`--wait-master-image`) that polls the master's port with `nc -z` every 2 s for up to
//! `--wait-master-timeout` seconds and fails the pod when it never opens. A job without the
//! master task is left unchanged (reported by `check`). The svc plugin comes with it.
//!
//! Flags: `--master` (`master`), `--worker` (`worker`), `--port` (23456),
//! `--wait-master-enabled` (false), `--wait-master-timeout` (300), `--wait-master-image`
//! (`busybox:1.36.1`).

use super::flags::{self, FlagKind};
use super::{env, open_port, parse_warning, pod_index, pod_task, task_hosts, task_index, JobPlugin};
use crate::crd::Job;
use k8s_openapi::api::core::v1::{Container, Pod};

/// The init container's name.
pub const WAIT_CONTAINER: &str = "wait-for-master";

/// The `pytorch` plugin with its flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pytorch {
    /// `--master`: the master task's name.
    pub master: String,
    /// `--worker`: the worker task's name.
    pub worker: String,
    /// `--port`: the rendezvous port.
    pub port: i32,
    /// `--wait-master-enabled`.
    pub wait_master: bool,
    /// `--wait-master-timeout`, seconds.
    pub wait_timeout: i64,
    /// `--wait-master-image`.
    pub wait_image: String,
}

impl Pytorch {
    /// Parses `args`; the warnings name a bad flag, a port out of range, or a master task the
    /// job does not have.
    pub fn new(args: &[String], job: &Job) -> (Pytorch, Vec<String>) {
        let (f, err) = flags::parse(
            &[
                ("master", FlagKind::String),
                ("worker", FlagKind::String),
                ("port", FlagKind::Int),
                ("wait-master-enabled", FlagKind::Bool),
                ("wait-master-timeout", FlagKind::Int),
                ("wait-master-image", FlagKind::String),
            ],
            args,
        );
        let mut w = parse_warning(args, err);
        let mut port = f.int("port", 23456);
        if !(1..=65535).contains(&port) {
            w.push(format!("--port={port} is not a port (1-65535); using 23456"));
            port = 23456;
        }
        let p = Pytorch {
            master: f.string("master", "master"),
            worker: f.string("worker", "worker"),
            port: port as i32,
            wait_master: f.bool("wait-master-enabled", false),
            wait_timeout: f.int("wait-master-timeout", 300),
            wait_image: f.string("wait-master-image", "busybox:1.36.1"),
        };
        if task_index(job, &p.master).is_none() {
            w.push(format!("--master task {:?} is not a task of the job; pods get no pytorch env", p.master));
        }
        (p, w)
    }

    /// `MASTER_ADDR`, or `None` without a master task.
    pub fn master_addr(&self, job: &Job) -> Option<String> {
        let ti = task_index(job, &self.master)?;
        let t = &job.spec.tasks[ti];
        let mut one = t.clone();
        one.replicas = Some(1);
        task_hosts(job, ti, &one).into_iter().next()
    }

    /// The wait-for-master shell script.
    pub fn wait_script(&self, addr: &str) -> String {
        format!(
            "echo \"waiting for the master {addr}:{port} (up to {t}s)\"; end=$(( $(date +%s) + {t} )); \
             until nc -z -w 2 {addr} {port}; do \
             if [ \"$(date +%s)\" -ge \"$end\" ]; then echo \"master {addr}:{port} not reachable after {t}s\" >&2; exit 1; fi; \
             sleep 2; done; echo \"master {addr}:{port} is up\"",
            port = self.port,
            t = self.wait_timeout,
        )
    }
}

impl JobPlugin for Pytorch {
    fn name(&self) -> &'static str {
        "pytorch"
    }

    fn on_pod_create(&self, pod: &mut Pod, job: &Job) {
        let Some(addr) = self.master_addr(job) else { return };
        let task = pod_task(pod);
        let world: i32 = job.spec.tasks.iter().map(|t| t.replicas.unwrap_or(0).max(0)).sum();
        let rank = if task == self.worker {
            pod_index(pod).parse::<i32>().ok().map(|i| i + 1)
        } else if task == self.master {
            Some(0)
        } else {
            None
        };
        let mut vars = vec![env("MASTER_ADDR", addr.clone()), env("MASTER_PORT", self.port.to_string())];
        vars.push(env("WORLD_SIZE", world.to_string()));
        if let Some(r) = rank {
            vars.push(env("RANK", r.to_string()));
        }
        let script = self.wait_script(&addr);
        let Some(spec) = pod.spec.as_mut() else { return };
        for c in &mut spec.containers {
            open_port(c, "pytorchjob-port", self.port);
            c.env.get_or_insert_with(Vec::new).extend(vars.iter().cloned());
        }
        if self.wait_master && task == self.worker {
            let init = spec.init_containers.get_or_insert_with(Vec::new);
            if !init.iter().any(|c| c.name == WAIT_CONTAINER) {
                init.insert(
                    0,
                    Container {
                        name: WAIT_CONTAINER.into(),
                        image: Some(self.wait_image.clone()),
                        command: Some(vec!["sh".into(), "-c".into(), script]),
                        ..Default::default()
                    },
                );
            }
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
        let j = job(&[("master", 1), ("worker", 2)], &[]);
        let (p, w) = Pytorch::new(&[], &j);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((p.master.as_str(), p.worker.as_str(), p.port), ("master", "worker", 23456));
        assert_eq!((p.wait_master, p.wait_timeout, p.wait_image.as_str()), (false, 300, "busybox:1.36.1"));
        let (p, w) = Pytorch::new(&args(&["--master=chief", "--port=99999"]), &j);
        assert_eq!(p.port, 23456);
        assert_eq!(w.len(), 2, "bad port and missing master task: {w:?}");
    }

    #[test]
    fn env_ranks_and_ports() {
        let j = job(&[("master", 1), ("worker", 2), ("eval", 1)], &[("pytorch", &[])]);
        let (p, _) = Pytorch::new(&args(&["--port=29500"]), &j);
        let base = |rank: Option<&str>| {
            let mut v = vec![
                ("MASTER_ADDR".to_string(), "tj-master-0.tj".to_string()),
                ("MASTER_PORT".into(), "29500".into()),
                ("WORLD_SIZE".into(), "4".into()),
            ];
            if let Some(r) = rank {
                v.push(("RANK".into(), r.into()));
            }
            v
        };
        for (task, i, rank) in [("master", 0, Some("0")), ("worker", 0, Some("1")), ("worker", 1, Some("2")), ("eval", 0, None)] {
            let mut pd = pod(&j, task, i);
            p.on_pod_create(&mut pd, &j);
            let spec = pd.spec.unwrap();
            assert_eq!(env_of(&spec.containers[0]), base(rank), "{task}-{i}");
            let ports = spec.containers[0].ports.clone().unwrap();
            assert_eq!((ports[0].name.as_deref(), ports[0].container_port), (Some("pytorchjob-port"), 29500));
            assert!(env_of(&spec.init_containers.unwrap()[0]).is_empty(), "init containers get no pytorch env");
        }
    }

    #[test]
    fn existing_port_is_not_added_twice_and_no_master_means_no_change() {
        let j = job(&[("master", 1), ("worker", 1)], &[]);
        let (p, _) = Pytorch::new(&[], &j);
        let mut pd = pod(&j, "worker", 0);
        pd.spec.as_mut().unwrap().containers[0].ports =
            Some(vec![k8s_openapi::api::core::v1::ContainerPort { container_port: 23456, ..Default::default() }]);
        p.on_pod_create(&mut pd, &j);
        assert_eq!(pd.spec.unwrap().containers[0].ports.as_ref().unwrap().len(), 1);
        let lone = job(&[("worker", 2)], &[]);
        let mut pd = pod(&lone, "worker", 0);
        let before = pd.clone();
        Pytorch::new(&[], &lone).0.on_pod_create(&mut pd, &lone);
        assert_eq!(pd, before);
    }

    #[test]
    fn wait_for_master_init_container_on_workers_only() {
        let j = job(&[("master", 1), ("worker", 2)], &[]);
        let (p, _) =
            Pytorch::new(&args(&["--wait-master-enabled", "--wait-master-timeout=600", "--wait-master-image=alpine:3"]), &j);
        let mut w = pod(&j, "worker", 1);
        p.on_pod_create(&mut w, &j);
        let init = w.spec.as_ref().unwrap().init_containers.clone().unwrap();
        assert_eq!(init.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), [WAIT_CONTAINER, "init"], "it runs first");
        assert_eq!(init[0].image.as_deref(), Some("alpine:3"));
        let cmd = init[0].command.clone().unwrap();
        assert_eq!(&cmd[..2], ["sh", "-c"]);
        assert!(cmd[2].contains("nc -z -w 2 tj-master-0.tj 23456") && cmd[2].contains("+ 600"), "{}", cmd[2]);
        p.on_pod_create(&mut w, &j);
        assert_eq!(w.spec.unwrap().init_containers.unwrap().len(), 2, "not added twice");
        let mut m = pod(&j, "master", 0);
        p.on_pod_create(&mut m, &j);
        assert_eq!(m.spec.unwrap().init_containers.unwrap().len(), 1, "the master does not wait for itself");
    }
}
