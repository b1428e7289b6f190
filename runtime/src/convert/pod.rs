//! `v1.Pod` → [`PodSpec`], folding container requests as Volcano does
//! (`pkg/scheduler/api/pod_info.go`; volcano-behaviour.md §1.3).
//!
//! Request folding, per resource dimension:
//! * `sum` = Σ regular containers + Σ sidecar init containers (`restartPolicy: Always`);
//! * `initMax` = max over init containers of (the container + the sidecars declared before it);
//!   a sidecar's own candidate is the running total of sidecars up to and including it;
//! * the request = max(`sum`, `initMax`): one value, used for node accounting, the fit check
//!   and every queue and job sum (Volcano master has no second, smaller "running" request);
//! * pod-level `spec.resources.requests` replace the container total for `cpu`, `memory` and
//!   `hugepages-*` (Kubernetes pod-level resources);
//! * `spec.overhead` is added, then `pods: 1`.
//!
//! As the API server would for a hand-written pod, a container limit without a request
//! becomes the request. The non-zero requests kube-scheduler scores with use the same folding
//! with 100m CPU / 200 MiB memory for each container that lacks that request.

use super::affinity;
use super::resources::{resource_list, K8sResourceList};
use super::{creation_ms, namespace, preemptable, required_name, ConvertError, ObjRef};
use basalt_core::model::{HostPort, Labels, PodPhase, PodSpec};
use basalt_core::resource::ResourceList;
use k8s_openapi::api::core::v1 as k8s;

/// Annotation naming the PodGroup of a pod (same namespace).
pub const GROUP_NAME_ANNOTATION: &str = "scheduling.k8s.io/group-name";
/// Annotation naming the queue of the PodGroup created for a pod without one (Volcano's
/// PodGroup controller reads it).
pub const QUEUE_NAME_ANNOTATION: &str = "scheduling.volcano.sh/queue-name";
/// Annotation (else label) naming the task role of a pod.
pub const TASK_SPEC_KEY: &str = "volcano.sh/task-spec";
/// Annotation overriding the pod priority for task ordering inside a job.
pub const TASK_PRIORITY_ANNOTATION: &str = "volcano.sh/task-priority";
/// Label, else annotation, with a pod's cooldown time (a Go duration) for the `cdp` plugin.
pub const COOLDOWN_TIME_KEY: &str = "volcano.sh/cooldown-time";
/// The scheduler name Kubernetes gives a pod that names none.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";
/// kube-scheduler's CPU request for a container without one, millicores.
pub const DEFAULT_NONZERO_CPU_MILLI: i64 = 100;
/// kube-scheduler's memory request for a container without one, bytes (200 MiB).
pub const DEFAULT_NONZERO_MEMORY_BYTES: i64 = 200 * 1024 * 1024;

/// A pod's folded requests, in core units.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldedRequests {
    /// The pod's request: max(containers + sidecars, each init container + preceding
    /// sidecars) (or the pod-level override) + overhead + `pods: 1`.
    pub resreq: ResourceList,
    /// kube-scheduler non-zero CPU request, millicores.
    pub nonzero_cpu_milli: i64,
    /// kube-scheduler non-zero memory request, bytes.
    pub nonzero_memory_bytes: i64,
}

fn add(into: &mut ResourceList, other: &ResourceList) {
    for (k, &v) in other {
        let e = into.entry(k.clone()).or_insert(0);
        *e = e.saturating_add(v);
    }
}

fn max_into(into: &mut ResourceList, other: &ResourceList) {
    for (k, &v) in other {
        let e = into.entry(k.clone()).or_insert(v);
        *e = (*e).max(v);
    }
}

/// Requests of a `ResourceRequirements` at `field`, limits filling missing requests.
fn requirements(obj: ObjRef<'_>, field: &str, r: Option<&k8s::ResourceRequirements>) -> Result<ResourceList, ConvertError> {
    let requests: Option<&K8sResourceList> = r.and_then(|r| r.requests.as_ref());
    let limits: Option<&K8sResourceList> = r.and_then(|r| r.limits.as_ref());
    let mut out = resource_list(obj, &format!("{field}.requests"), requests)?;
    for (k, v) in resource_list(obj, &format!("{field}.limits"), limits)? {
        out.entry(k).or_insert(v);
    }
    Ok(out)
}

fn is_sidecar(c: &k8s::Container) -> bool {
    c.restart_policy.as_deref() == Some("Always")
}

/// Folds per-container lists (already mapped by the caller) into max(sum, initMax).
fn fold(containers: &[ResourceList], inits: &[(bool, ResourceList)]) -> ResourceList {
    let mut sum = ResourceList::new();
    for c in containers {
        add(&mut sum, c);
    }
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for (sidecar, r) in inits {
        if *sidecar {
            add(&mut sum, r);
            add(&mut sidecars, r);
            max_into(&mut init_max, &sidecars);
        } else {
            let mut candidate = r.clone();
            add(&mut candidate, &sidecars);
            max_into(&mut init_max, &candidate);
        }
    }
    max_into(&mut sum, &init_max);
    sum
}

/// Whether a pod-level request of `name` replaces the container total.
fn pod_level_supported(name: &str) -> bool {
    name == "cpu" || name == "memory" || name.starts_with("hugepages-")
}

/// Folds the requests of `spec` (see the module docs). Errors name the malformed quantity.
pub fn fold_requests(obj: ObjRef<'_>, spec: &k8s::PodSpec) -> Result<FoldedRequests, ConvertError> {
    let containers = spec
        .containers
        .iter()
        .enumerate()
        .map(|(i, c)| requirements(obj, &format!("spec.containers[{i}].resources"), c.resources.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let inits = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            Ok((is_sidecar(c), requirements(obj, &format!("spec.initContainers[{i}].resources"), c.resources.as_ref())?))
        })
        .collect::<Result<Vec<_>, ConvertError>>()?;
    let pod_level: ResourceList = requirements(obj, "spec.resources", spec.resources.as_ref())?
        .into_iter()
        .filter(|(k, _)| pod_level_supported(k))
        .collect();
    let overhead = resource_list(obj, "spec.overhead", spec.overhead.as_ref())?;

    let finish = |mut a: ResourceList| {
        for (k, &v) in &pod_level {
            a.insert(k.clone(), v);
        }
        add(&mut a, &overhead);
        a
    };
    let mut resreq = finish(fold(&containers, &inits));
    resreq.insert("pods".into(), 1);

    let nonzero = |r: &ResourceList| -> ResourceList {
        [("cpu", DEFAULT_NONZERO_CPU_MILLI), ("memory", DEFAULT_NONZERO_MEMORY_BYTES)]
            .into_iter()
            .map(|(k, default)| (k.to_string(), r.get(k).copied().unwrap_or(default)))
            .collect()
    };
    let nz_containers: Vec<ResourceList> = containers.iter().map(nonzero).collect();
    let nz_inits: Vec<(bool, ResourceList)> = inits.iter().map(|(s, r)| (*s, nonzero(r))).collect();
    let nz = finish(fold(&nz_containers, &nz_inits));
    Ok(FoldedRequests {
        resreq,
        nonzero_cpu_milli: nz.get("cpu").copied().unwrap_or(0),
        nonzero_memory_bytes: nz.get("memory").copied().unwrap_or(0),
    })
}

fn phase(obj: ObjRef<'_>, s: Option<&str>) -> Result<PodPhase, ConvertError> {
    Ok(match s.unwrap_or("") {
        "" | "Pending" => PodPhase::Pending,
        "Running" => PodPhase::Running,
        "Succeeded" => PodPhase::Succeeded,
        "Failed" => PodPhase::Failed,
        "Unknown" => PodPhase::Unknown,
        other => return Err(obj.error("status.phase", format!("unknown pod phase {other:?}"))),
    })
}

fn host_ports(containers: &[k8s::Container], inits: &[k8s::Container]) -> Vec<HostPort> {
    containers
        .iter()
        .chain(inits)
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| match p.host_port {
            Some(port) if port > 0 => Some(HostPort {
                host_ip: p.host_ip.clone().unwrap_or_default(),
                protocol: p.protocol.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| "TCP".into()),
                port,
            }),
            _ => None,
        })
        .collect()
}

/// When the pod was scheduled, ms since the Unix epoch: the `lastTransitionTime` of its
/// `PodScheduled=True` condition (what Volcano's `cdp` reads), else `status.startTime`, else 0.
fn start_ms(pod: &k8s::Pod) -> i64 {
    let status = pod.status.as_ref();
    let scheduled = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "PodScheduled" && c.status == "True"))
        .and_then(|c| c.last_transition_time.as_ref());
    scheduled.or_else(|| status.and_then(|s| s.start_time.as_ref())).map(|t| t.0.as_millisecond()).unwrap_or(0)
}

/// The `volcano.sh/cooldown-time` label, else annotation, in ms. A value that is not a Go
/// duration disables the protection, as in Volcano, and is reported as a warning naming the pod
/// and the field (the pod itself is kept).
fn cooldown_ms(key: &str, labels: &Labels, annotations: &std::collections::BTreeMap<String, String>) -> Option<i64> {
    let (field, v) = match labels.get(COOLDOWN_TIME_KEY) {
        Some(v) => ("metadata.labels", v),
        None => ("metadata.annotations", annotations.get(COOLDOWN_TIME_KEY)?),
    };
    match crate::convert::duration::parse_go_duration(v) {
        Ok(d) => Some(d.as_millis().min(i64::MAX as u128) as i64),
        Err(e) => {
            tracing::warn!(pod = key, field = %format!("{field}[{COOLDOWN_TIME_KEY}]"), "{e}; cooldown protection off for this pod");
            None
        }
    }
}

/// Converts a `v1.Pod` into the core [`PodSpec`].
///
/// Namespace defaults to `default`, `uid` to `<ns>/<name>`, `spec.schedulerName` to
/// `default-scheduler` (as the API server defaults it). Errors: missing `metadata.name`, a
/// malformed quantity, an unknown phase, or a constraint the API server would refuse, each
/// naming the field.
pub fn convert_pod(pod: &k8s::Pod) -> Result<PodSpec, ConvertError> {
    let meta = &pod.metadata;
    let name = required_name("Pod", meta)?;
    let ns = namespace(meta);
    let key = format!("{ns}/{name}");
    let obj = ObjRef { kind: "Pod", name: &key };
    let default_spec = k8s::PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&default_spec);
    let annotations = meta.annotations.clone().unwrap_or_default();
    let labels: Labels = meta.labels.clone().unwrap_or_default().into();

    let folded = fold_requests(obj, spec)?;
    let mut priority = spec.priority;
    if let Some(p) = annotations.get(TASK_PRIORITY_ANNOTATION).and_then(|v| v.trim().parse::<i32>().ok()) {
        priority = Some(p);
    }
    let inits: &[k8s::Container] = spec.init_containers.as_deref().unwrap_or(&[]);
    let images = spec.containers.iter().chain(inits).filter_map(|c| c.image.clone()).filter(|i| !i.is_empty()).collect();
    let group = annotations.get(GROUP_NAME_ANNOTATION).filter(|g| !g.is_empty()).cloned();
    let role = annotations.get(TASK_SPEC_KEY).or_else(|| labels.get(TASK_SPEC_KEY)).cloned().unwrap_or_default();

    Ok(PodSpec {
        uid: meta.uid.clone().filter(|u| !u.is_empty()).unwrap_or_else(|| key.clone()),
        creation_ms: creation_ms(meta),
        start_ms: start_ms(pod),
        cooldown_ms: cooldown_ms(&key, &labels, &annotations),
        group,
        role,
        queue_name: annotations.get(QUEUE_NAME_ANNOTATION).cloned().unwrap_or_default(),
        scheduler_name: spec.scheduler_name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| DEFAULT_SCHEDULER_NAME.into()),
        node_name: spec.node_name.clone().unwrap_or_default(),
        phase: phase(obj, pod.status.as_ref().and_then(|s| s.phase.as_deref()))?,
        deleting: meta.deletion_timestamp.is_some(),
        priority,
        priority_class_name: spec.priority_class_name.clone().unwrap_or_default(),
        preemption_never: spec.preemption_policy.as_deref() == Some("Never"),
        resreq: folded.resreq,
        nonzero_cpu_milli: folded.nonzero_cpu_milli,
        nonzero_memory_bytes: folded.nonzero_memory_bytes,
        node_selector: spec.node_selector.clone().unwrap_or_default().into(),
        affinity: spec.affinity.as_ref().map(|a| affinity::affinity(obj, a)).transpose()?.unwrap_or_default().into(),
        tolerations: affinity::tolerations(obj, &spec.tolerations)?,
        host_ports: host_ports(&spec.containers, inits),
        topology_spread: affinity::topology_spread(obj, &spec.topology_spread_constraints)?,
        scheduling_gated: spec.scheduling_gates.as_ref().is_some_and(|g| !g.is_empty()),
        preemptable: preemptable(meta, true),
        nominated_node_name: pod.status.as_ref().and_then(|s| s.nominated_node_name.clone()).unwrap_or_default(),
        disruption_target: pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "DisruptionTarget" && c.status == "True")),
        images,
        volume_claims: super::volume::pod_volume_claims(&name, spec),
        resource_claims: spec.resource_claims.iter().flatten().map(|c| c.name.clone()).collect(),
        gpu: super::device::pod_gpu(&key, spec, &annotations).into(),
        vgpu: super::vgpu::pod_vgpu(&key, spec, &annotations).into(),
        volcano_gate_only: spec
            .scheduling_gates
            .as_deref()
            .is_some_and(|g| g.len() == 1 && g[0].name == basalt_core::model::QUEUE_ALLOCATION_GATE),
        queue_allocation_gate: annotations.get(basalt_core::model::QUEUE_ALLOCATION_GATE).is_some_and(|v| v == "true"),
        labels,
        namespace: ns,
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

    fn rl(pairs: &[(&str, i64)]) -> ResourceList {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn container(requests: &[(&str, &str)], sidecar: bool) -> k8s::Container {
        k8s::Container {
            name: "c".into(),
            restart_policy: sidecar.then(|| "Always".to_string()),
            resources: Some(k8s::ResourceRequirements {
                requests: Some(requests.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn pod(spec: k8s::PodSpec) -> k8s::Pod {
        k8s::Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta { name: Some("p".into()), ..Default::default() },
            spec: Some(spec),
            status: None,
        }
    }

    #[test]
    fn folding_table() {
        struct Case {
            name: &'static str,
            containers: Vec<k8s::Container>,
            inits: Vec<k8s::Container>,
            overhead: &'static [(&'static str, &'static str)],
            resreq: ResourceList,
        }
        let cases = vec![
            Case {
                name: "containers are summed",
                containers: vec![
                    container(&[("cpu", "1"), ("memory", "1Gi")], false),
                    container(&[("cpu", "500m"), ("nvidia.com/gpu", "2")], false),
                ],
                inits: vec![],
                overhead: &[],
                resreq: rl(&[("cpu", 1500), ("memory", 1 << 30), ("nvidia.com/gpu", 2000), ("pods", 1)]),
            },
            Case {
                name: "a large regular init container raises the request",
                containers: vec![container(&[("cpu", "1")], false)],
                inits: vec![container(&[("cpu", "3"), ("memory", "100")], false)],
                overhead: &[],
                resreq: rl(&[("cpu", 3000), ("memory", 100), ("pods", 1)]),
            },
            Case {
                name: "sidecars add to the sum and to later init containers",
                containers: vec![container(&[("cpu", "1")], false)],
                inits: vec![
                    container(&[("cpu", "2")], false),   // candidate 2
                    container(&[("cpu", "500m")], true), // sidecar: sum += 0.5
                    container(&[("cpu", "3")], false),   // candidate 3 + 0.5
                ],
                overhead: &[],
                resreq: rl(&[("cpu", 3500), ("pods", 1)]),
            },
            Case {
                name: "init containers before a sidecar do not count it",
                containers: vec![container(&[("cpu", "1")], false)],
                inits: vec![container(&[("cpu", "2")], false), container(&[("cpu", "1")], true)],
                overhead: &[],
                resreq: rl(&[("cpu", 2000), ("pods", 1)]),
            },
            Case {
                name: "overhead is added after the init maximum",
                containers: vec![container(&[("cpu", "1")], false)],
                inits: vec![container(&[("cpu", "2")], false)],
                overhead: &[("cpu", "250m"), ("memory", "64Mi")],
                resreq: rl(&[("cpu", 2250), ("memory", 64 << 20), ("pods", 1)]),
            },
            Case {
                name: "no requests at all is best-effort plus one pod",
                containers: vec![k8s::Container { name: "c".into(), ..Default::default() }],
                inits: vec![],
                overhead: &[],
                resreq: rl(&[("pods", 1)]),
            },
        ];
        for c in cases {
            let spec = k8s::PodSpec {
                containers: c.containers,
                init_containers: Some(c.inits),
                overhead: if c.overhead.is_empty() {
                    None
                } else {
                    Some(c.overhead.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect())
                },
                ..Default::default()
            };
            let got = convert_pod(&pod(spec)).unwrap();
            assert_eq!(got.resreq, c.resreq, "{}: resreq", c.name);
        }
    }

    #[test]
    fn nonzero_defaults_per_container_lacking_the_request() {
        let spec = k8s::PodSpec {
            containers: vec![
                container(&[("cpu", "1")], false),
                container(&[("memory", "1Gi")], false),
                k8s::Container::default(),
            ],
            ..Default::default()
        };
        let got = convert_pod(&pod(spec)).unwrap();
        assert_eq!(got.nonzero_cpu_milli, 1000 + 100 + 100);
        assert_eq!(got.nonzero_memory_bytes, DEFAULT_NONZERO_MEMORY_BYTES + (1 << 30) + DEFAULT_NONZERO_MEMORY_BYTES);
        let explicit_zero =
            k8s::PodSpec { containers: vec![container(&[("cpu", "0"), ("memory", "0")], false)], ..Default::default() };
        let got = convert_pod(&pod(explicit_zero)).unwrap();
        assert_eq!((got.nonzero_cpu_milli, got.nonzero_memory_bytes), (0, 0), "an explicit zero is kept");
    }

    #[test]
    fn limits_default_requests_and_pod_level_overrides() {
        let mut c = container(&[("cpu", "1")], false);
        c.resources.as_mut().unwrap().limits =
            Some([("cpu".to_string(), Quantity("2".into())), ("memory".to_string(), Quantity("1Gi".into()))].into());
        let spec = k8s::PodSpec {
            containers: vec![c],
            resources: Some(k8s::ResourceRequirements {
                requests: Some([("cpu".to_string(), Quantity("4".into()))].into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let got = convert_pod(&pod(spec)).unwrap();
        assert_eq!(got.resreq, rl(&[("cpu", 4000), ("memory", 1 << 30), ("pods", 1)]));
    }

    #[test]
    fn metadata_annotations_and_defaults() {
        let mut p = pod(k8s::PodSpec {
            containers: vec![k8s::Container {
                name: "c".into(),
                image: Some("train:1".into()),
                ports: Some(vec![k8s::ContainerPort { container_port: 80, host_port: Some(8080), ..Default::default() }]),
                ..Default::default()
            }],
            priority: Some(5),
            preemption_policy: Some("Never".into()),
            scheduling_gates: Some(vec![k8s::PodSchedulingGate { name: "g".into() }]),
            ..Default::default()
        });
        p.metadata.annotations = Some(
            [
                (GROUP_NAME_ANNOTATION.to_string(), "pg1".to_string()),
                (TASK_PRIORITY_ANNOTATION.to_string(), "9".to_string()),
                ("volcano.sh/preemptable".to_string(), "false".to_string()),
            ]
            .into(),
        );
        p.metadata.labels = Some([(TASK_SPEC_KEY.to_string(), "worker".to_string())].into());
        let got = convert_pod(&p).unwrap();
        assert_eq!((got.namespace.as_str(), got.name.as_str(), got.uid.as_str()), ("default", "p", "default/p"));
        assert_eq!(got.group.as_deref(), Some("pg1"));
        assert_eq!(got.role, "worker");
        assert_eq!(got.priority, Some(9));
        assert!(got.preemption_never && got.scheduling_gated && !got.preemptable);
        assert_eq!(got.scheduler_name, DEFAULT_SCHEDULER_NAME);
        assert_eq!(got.host_ports, vec![HostPort { host_ip: String::new(), protocol: "TCP".into(), port: 8080 }]);
        assert_eq!(got.images, vec!["train:1".to_string()]);
        assert_eq!(got.phase, PodPhase::Pending);

        p.metadata.annotations.as_mut().unwrap().insert(TASK_PRIORITY_ANNOTATION.into(), "high".into());
        assert_eq!(convert_pod(&p).unwrap().priority, Some(5), "an unparsable task priority is ignored");
    }

    #[test]
    fn malformed_quantity_names_the_field() {
        let mut p = pod(k8s::PodSpec {
            containers: vec![container(&[("cpu", "1")], false), container(&[("cpu", "abc")], false)],
            ..Default::default()
        });
        p.metadata.namespace = Some("ns".into());
        let e = convert_pod(&p).unwrap_err();
        assert_eq!(e.to_string(), "Pod ns/p: field spec.containers[1].resources.requests.cpu: invalid quantity \"abc\"");
        let unnamed = k8s::Pod::default();
        assert_eq!(convert_pod(&unnamed).unwrap_err().field, "metadata.name");
    }
}
