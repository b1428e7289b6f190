//! The `env` job plugin (Volcano's `plugins/env`, volcano-behaviour.md §5.1 "Job plugins"):
//! every container and init container of a pod gets `VK_TASK_INDEX` and `VC_TASK_INDEX`, the
//! pod's index in its task (`0..replicas`). No arguments, no objects.

use super::{env, parse_warning, pod_index, push_env, JobPlugin};
use crate::crd::Job;
use k8s_openapi::api::core::v1::Pod;

/// The legacy (Volcano `vk`) name of the task index variable.
pub const TASK_VK_INDEX: &str = "VK_TASK_INDEX";
/// The task index variable.
pub const TASK_INDEX: &str = "VC_TASK_INDEX";

/// The `env` plugin.
#[derive(Clone, Debug, Default)]
pub struct Env;

impl Env {
    /// Builds the plugin; it declares no flag, so any argument is reported (and ignored).
    pub fn new(args: &[String]) -> (Env, Vec<String>) {
        let (_, err) = super::flags::parse(&[], args);
        (Env, parse_warning(args, err))
    }
}

impl JobPlugin for Env {
    fn name(&self) -> &'static str {
        "env"
    }

    fn on_pod_create(&self, pod: &mut Pod, _job: &Job) {
        let index = pod_index(pod);
        push_env(pod, &[env(TASK_VK_INDEX, index.clone()), env(TASK_INDEX, index)], true);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{env_of, job, pod};
    use super::*;

    #[test]
    fn every_container_gets_the_task_index() {
        let j = job(&[("worker", 3)], &[("env", &[])]);
        let mut p = pod(&j, "worker", 2);
        Env.on_pod_create(&mut p, &j);
        let spec = p.spec.unwrap();
        let want = vec![("VK_TASK_INDEX".to_string(), "2".to_string()), ("VC_TASK_INDEX".to_string(), "2".to_string())];
        assert_eq!(env_of(&spec.containers[0]), want);
        assert_eq!(env_of(&spec.init_containers.unwrap()[0]), want);
    }

    #[test]
    fn arguments_are_reported() {
        assert!(Env::new(&[]).1.is_empty());
        assert_eq!(Env::new(&["--x".into()]).1.len(), 1);
    }
}
