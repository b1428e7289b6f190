//! The `mpi` job plugin (Volcano's `plugins/distributed-framework/mpi`,
//! volcano-behaviour.md §5.1 "Job plugins"): the master (launcher) pod's containers and init
//! containers get `MPI_HOST`, the worker task's pods' DNS names comma-separated (the hostfile
//! `mpirun --host $MPI_HOST` reads); every container and init container of every pod gets
//! container port `mpijob-port` = `--port` (ssh's) unless it has it already. The svc plugin
//! (names) and the ssh plugin (keys) come with it. A job without the worker task gets no
//! `MPI_HOST` (reported by `check`; Volcano's plugin would index out of range).
//!
//! Flags: `--master` (`master`), `--worker` (`worker`), `--port` (22).

use super::flags::{self, FlagKind};
use super::{env, open_port, parse_warning, pod_task, task_hosts, task_index, JobPlugin};
use crate::crd::Job;
use k8s_openapi::api::core::v1::Pod;

/// The `mpi` plugin with its flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mpi {
    /// `--master`: the launcher task's name.
    pub master: String,
    /// `--worker`: the worker task's name.
    pub worker: String,
    /// `--port`: the port opened in containers (ssh).
    pub port: i32,
}

impl Mpi {
    /// Parses `args`; the warnings name a bad flag, a port out of range, or a worker task the
    /// job does not have.
    pub fn new(args: &[String], job: &Job) -> (Mpi, Vec<String>) {
        let (f, err) = flags::parse(&[("master", FlagKind::String), ("worker", FlagKind::String), ("port", FlagKind::Int)], args);
        let mut w = parse_warning(args, err);
        let mut port = f.int("port", 22);
        if !(1..=65535).contains(&port) {
            w.push(format!("--port={port} is not a port (1-65535); using 22"));
            port = 22;
        }
        let p = Mpi { master: f.string("master", "master"), worker: f.string("worker", "worker"), port: port as i32 };
        if task_index(job, &p.worker).is_none() {
            w.push(format!("--worker task {:?} is not a task of the job; the master gets no MPI_HOST", p.worker));
        }
        (p, w)
    }

    /// `MPI_HOST`: the worker pods' names, or `None` without the worker task.
    pub fn mpi_host(&self, job: &Job) -> Option<String> {
        let ti = task_index(job, &self.worker)?;
        Some(task_hosts(job, ti, &job.spec.tasks[ti]).join(","))
    }
}

impl JobPlugin for Mpi {
    fn name(&self) -> &'static str {
        "mpi"
    }

    fn on_pod_create(&self, pod: &mut Pod, job: &Job) {
        let host = (pod_task(pod) == self.master).then(|| self.mpi_host(job)).flatten();
        let Some(spec) = pod.spec.as_mut() else { return };
        for c in spec.init_containers.iter_mut().flatten().chain(spec.containers.iter_mut()) {
            open_port(c, "mpijob-port", self.port);
            if let Some(h) = &host {
                c.env.get_or_insert_with(Vec::new).push(env("MPI_HOST", h.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{env_of, job, pod};
    use super::*;

    #[test]
    fn master_gets_the_worker_hosts_and_everyone_the_port() {
        let j = job(&[("mpimaster", 1), ("mpiworker", 3)], &[("mpi", &[])]);
        let args: Vec<String> =
            ["--master=mpimaster", "--worker=mpiworker", "--port=2222"].iter().map(|s| s.to_string()).collect();
        let (p, w) = Mpi::new(&args, &j);
        assert!(w.is_empty(), "{w:?}");
        let mut m = pod(&j, "mpimaster", 0);
        p.on_pod_create(&mut m, &j);
        let spec = m.spec.unwrap();
        let want = vec![("MPI_HOST".to_string(), "tj-mpiworker-0.tj,tj-mpiworker-1.tj,tj-mpiworker-2.tj".to_string())];
        assert_eq!(env_of(&spec.containers[0]), want);
        assert_eq!(env_of(&spec.init_containers.clone().unwrap()[0]), want);
        for c in spec.containers.iter().chain(spec.init_containers.iter().flatten()) {
            let port = &c.ports.as_ref().unwrap()[0];
            assert_eq!((port.name.as_deref(), port.container_port), (Some("mpijob-port"), 2222), "{}", c.name);
        }
        let mut wk = pod(&j, "mpiworker", 1);
        p.on_pod_create(&mut wk, &j);
        let spec = wk.spec.unwrap();
        assert!(env_of(&spec.containers[0]).is_empty(), "workers get no MPI_HOST");
        assert_eq!(spec.containers[0].ports.as_ref().unwrap()[0].container_port, 2222);
    }

    #[test]
    fn defaults_and_a_missing_worker_task() {
        let j = job(&[("master", 1)], &[]);
        let (p, w) = Mpi::new(&[], &j);
        assert_eq!((p.master.as_str(), p.worker.as_str(), p.port), ("master", "worker", 22));
        assert_eq!(w.len(), 1, "{w:?}");
        let mut m = pod(&j, "master", 0);
        p.on_pod_create(&mut m, &j);
        assert!(env_of(&m.spec.unwrap().containers[0]).is_empty());
    }
}
