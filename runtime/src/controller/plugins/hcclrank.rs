//! The `hcclrank` job plugin (Volcano's `plugins/distributed-framework/hcclrank`,
//! volcano-behaviour.md §5.1 "Job plugins"): the pod annotation `hccl/rankIndex` that Ascend's
//! HCCL reads as the pod's rank.
//! * a pod that has the annotation already keeps it;
//! * else a container's `RANK` env (the first found, e.g. set by another plugin that ran
//!   before) is copied into it;
//! * else a master pod's rank is its task index and a worker pod's the master task's replicas +
//!   its task index (the `volcano.sh/task-index` label); other tasks get nothing.
//!
//! Plugins run in name order, so `hcclrank` runs before `pytorch` and sees no `RANK` of it;
//! with one master replica both give the same ranks. As in Volcano it makes no objects and does
//! not mark `status.controlledResources`.
//!
//! Flags: `--master` (`master`), `--worker` (`worker`).

use super::flags::{self, FlagKind};
use super::{parse_warning, pod_task, JobPlugin};
use crate::controller::defaults::task_name;
use crate::controller::keys;
use crate::crd::Job;
use k8s_openapi::api::core::v1::Pod;

/// The pod annotation.
pub const RANK_ANNOTATION: &str = "hccl/rankIndex";

/// The `hcclrank` plugin with its flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HcclRank {
    /// `--master`: the master task's name.
    pub master: String,
    /// `--worker`: the worker task's name.
    pub worker: String,
}

impl HcclRank {
    /// Parses `args`; the warning names a flag that does not parse.
    pub fn new(args: &[String]) -> (HcclRank, Vec<String>) {
        let (f, err) = flags::parse(&[("master", FlagKind::String), ("worker", FlagKind::String)], args);
        (HcclRank { master: f.string("master", "master"), worker: f.string("worker", "worker") }, parse_warning(args, err))
    }

    /// The rank of `pod` by the rules above, `None` when it gets none.
    pub fn rank(&self, pod: &Pod, job: &Job) -> Option<String> {
        let from_env =
            pod.spec.iter().flat_map(|s| &s.containers).flat_map(|c| c.env.iter().flatten()).find(|e| e.name == "RANK");
        if let Some(e) = from_env.and_then(|e| e.value.clone()).filter(|v| !v.is_empty()) {
            return Some(e);
        }
        let task = pod_task(pod);
        if task != self.master && task != self.worker {
            return None;
        }
        let index: i64 = pod.metadata.labels.as_ref()?.get(keys::TASK_INDEX)?.parse().ok()?;
        if task == self.master {
            return Some(index.to_string());
        }
        let masters = job
            .spec
            .tasks
            .iter()
            .enumerate()
            .find(|(i, t)| task_name(t, *i) == self.master)
            .map_or(0, |(_, t)| i64::from(t.replicas.unwrap_or(0)));
        Some((masters + index).to_string())
    }
}

impl JobPlugin for HcclRank {
    fn name(&self) -> &'static str {
        "hcclrank"
    }

    fn marks_controlled(&self) -> bool {
        false
    }

    fn on_pod_create(&self, pod: &mut Pod, job: &Job) {
        if pod.metadata.annotations.as_ref().and_then(|a| a.get(RANK_ANNOTATION)).is_some_and(|v| !v.is_empty()) {
            return;
        }
        if let Some(rank) = self.rank(pod, job) {
            pod.metadata.annotations.get_or_insert_with(Default::default).insert(RANK_ANNOTATION.into(), rank);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{job, pod};
    use super::*;
    use k8s_openapi::api::core::v1::EnvVar;

    fn rank_of(p: &Pod) -> Option<&str> {
        p.metadata.annotations.as_ref()?.get(RANK_ANNOTATION).map(String::as_str)
    }

    #[test]
    fn masters_then_workers() {
        let j = job(&[("master", 2), ("worker", 3), ("eval", 1)], &[("hcclrank", &[])]);
        let (h, w) = HcclRank::new(&[]);
        assert!(w.is_empty());
        for (task, i, want) in [
            ("master", 0, Some("0")),
            ("master", 1, Some("1")),
            ("worker", 0, Some("2")),
            ("worker", 2, Some("4")),
            ("eval", 0, None),
        ] {
            let mut p = pod(&j, task, i);
            h.on_pod_create(&mut p, &j);
            assert_eq!(rank_of(&p), want, "{task}-{i}");
        }
    }

    #[test]
    fn rank_env_and_existing_annotation_win() {
        let j = job(&[("master", 1), ("worker", 2), ("eval", 1)], &[]);
        let (h, _) = HcclRank::new(&["--worker=w".into()]);
        let mut p = pod(&j, "eval", 0);
        p.spec.as_mut().unwrap().containers[0].env =
            Some(vec![EnvVar { name: "RANK".into(), value: Some("7".into()), value_from: None }]);
        h.on_pod_create(&mut p, &j);
        assert_eq!(rank_of(&p), Some("7"), "RANK env is copied whatever the task");
        let mut p = pod(&j, "master", 0);
        p.metadata.annotations.as_mut().unwrap().insert(RANK_ANNOTATION.into(), "9".into());
        h.on_pod_create(&mut p, &j);
        assert_eq!(rank_of(&p), Some("9"), "an existing rank is kept");
        let mut p = pod(&j, "worker", 1);
        h.on_pod_create(&mut p, &j);
        assert_eq!(rank_of(&p), None, "--worker=w: task worker has no role");
        assert!(!h.marks_controlled());
    }
}
