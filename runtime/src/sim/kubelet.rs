//! The simulated kubelet of Job pods: how long a bound pod runs and how it ends, read from its
//! annotations (the same names and meaning as the test kubelet of the end-to-end tests,
//! `runtime/tests/support/kubelet.rs`), and the pod status it writes when the pod starts and
//! ends. Pure: [`super::jobs`] calls it on the virtual clock.

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStatus, Pod, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// Pod annotation (on the Job's task template): seconds the pod runs once bound before it ends;
/// decimals allowed. Without it the pod runs until deleted.
pub const DURATION_ANNOTATION: &str = "basalt.dev/duration-seconds";

/// Pod annotation: the exit code (an integer) the pod's containers end with after
/// [`DURATION_ANNOTATION`] seconds: 0 (the default) ends it `Succeeded`, anything else `Failed`
/// (Volcano's `PodFailed` event then carries it as the first container's exit code).
pub const EXIT_CODE_ANNOTATION: &str = "basalt.dev/exit-code";

/// How a pod runs, from its annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// How long it runs once bound, ms of virtual time; `None`: until deleted.
    pub duration_ms: Option<i64>,
    /// The exit code it ends with.
    pub exit_code: i32,
}

/// Reads [`DURATION_ANNOTATION`] and [`EXIT_CODE_ANNOTATION`] of `pod`.
///
/// Errors: a duration that is not a number of seconds ≥ 0, or an exit code that is not an
/// integer, naming the pod and the annotation.
pub fn run_spec(pod: &Pod) -> Result<RunSpec, String> {
    let ann = pod.metadata.annotations.as_ref();
    let key =
        format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.metadata.name.as_deref().unwrap_or_default());
    let duration_ms = match ann.and_then(|a| a.get(DURATION_ANNOTATION)) {
        None => None,
        Some(v) => match v.trim().parse::<f64>() {
            Ok(s) if (0.0..1e12).contains(&s) => Some((s * 1000.0).round() as i64),
            _ => return Err(format!("Pod {key}: annotation {DURATION_ANNOTATION}: not a number of seconds >= 0: {v:?}")),
        },
    };
    let exit_code = match ann.and_then(|a| a.get(EXIT_CODE_ANNOTATION)) {
        None => 0,
        Some(v) => {
            v.trim().parse::<i32>().map_err(|_| format!("Pod {key}: annotation {EXIT_CODE_ANNOTATION}: not an integer: {v:?}"))?
        }
    };
    Ok(RunSpec { duration_ms, exit_code })
}

fn container_statuses(pod: &Pod, state: &ContainerState, ready: bool) -> Vec<ContainerStatus> {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| ContainerStatus {
            name: c.name.clone(),
            image: c.image.clone().unwrap_or_default(),
            ready,
            started: Some(ready),
            state: Some(state.clone()),
            ..Default::default()
        })
        .collect()
}

/// The pod bound to `node` starts at `at`: `spec.nodeName`, phase `Running`, `startTime`, each
/// container running.
pub fn start(pod: &mut Pod, node: &str, at: Timestamp) {
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_name = Some(node.to_string());
    }
    let running = ContainerState { running: Some(ContainerStateRunning { started_at: Some(Time(at)) }), ..Default::default() };
    pod.status = Some(PodStatus {
        phase: Some("Running".into()),
        start_time: Some(Time(at)),
        container_statuses: Some(container_statuses(pod, &running, true)),
        ..Default::default()
    });
}

/// The pod ends at `at` with `exit_code`: phase `Succeeded` (0) or `Failed`, each container
/// terminated with that code.
pub fn finish(pod: &mut Pod, exit_code: i32, at: Timestamp) {
    let reason = if exit_code == 0 { "Completed" } else { "Error" };
    let terminated = ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code,
            reason: Some(reason.into()),
            finished_at: Some(Time(at)),
            ..Default::default()
        }),
        ..Default::default()
    };
    let statuses = container_statuses(pod, &terminated, false);
    let status = pod.status.get_or_insert_with(Default::default);
    status.phase = Some(if exit_code == 0 { "Succeeded" } else { "Failed" }.into());
    status.container_statuses = Some(statuses);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::plan::PodView;
    use k8s_openapi::api::core::v1::{Container, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use std::collections::BTreeMap;

    fn pod(ann: &[(&str, &str)]) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("j-w-0".into()),
                namespace: Some("ns".into()),
                annotations: Some(ann.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>()),
                ..Default::default()
            },
            spec: Some(PodSpec { containers: vec![Container { name: "c".into(), ..Default::default() }], ..Default::default() }),
            status: None,
        }
    }

    type Case<'a> = (Vec<(&'a str, &'a str)>, Result<RunSpec, String>);

    #[test]
    fn annotations_give_run_time_and_exit_code() {
        let cases: Vec<Case> = vec![
            (vec![], Ok(RunSpec { duration_ms: None, exit_code: 0 })),
            (vec![(DURATION_ANNOTATION, "30")], Ok(RunSpec { duration_ms: Some(30_000), exit_code: 0 })),
            (
                vec![(DURATION_ANNOTATION, "1.5"), (EXIT_CODE_ANNOTATION, "3")],
                Ok(RunSpec { duration_ms: Some(1500), exit_code: 3 }),
            ),
            (
                vec![(DURATION_ANNOTATION, "-1")],
                Err("Pod ns/j-w-0: annotation basalt.dev/duration-seconds: not a number of seconds >= 0: \"-1\"".into()),
            ),
            (
                vec![(DURATION_ANNOTATION, "5"), (EXIT_CODE_ANNOTATION, "x")],
                Err("Pod ns/j-w-0: annotation basalt.dev/exit-code: not an integer: \"x\"".into()),
            ),
        ];
        for (ann, want) in cases {
            assert_eq!(run_spec(&pod(&ann)), want, "{ann:?}");
        }
    }

    #[test]
    fn start_and_finish_write_what_the_controller_reads() {
        let mut p = pod(&[]);
        start(&mut p, "n1", Timestamp::from_second(10).unwrap());
        assert_eq!(p.spec.as_ref().unwrap().node_name.as_deref(), Some("n1"));
        assert_eq!(PodView::of(&p).phase, "Running");
        finish(&mut p, 7, Timestamp::from_second(20).unwrap());
        let v = PodView::of(&p);
        assert_eq!((v.phase.as_str(), v.exit_code), ("Failed", Some(7)));
        finish(&mut p, 0, Timestamp::from_second(20).unwrap());
        assert_eq!(PodView::of(&p).phase, "Succeeded");
    }
}
