//! The PodGroup controller's pure part (volcano-behaviour.md §5.2, Volcano's
//! `pkg/controllers/podgroup`): which plain pods get a PodGroup, and the PodGroup
//! `podgroup-<owner UID | pod UID>` built for one, as Volcano's `buildPodGroupFromPod` builds it.

use super::keys::GROUP_NAME;
use super::pod_usage::{pod_usage, quantities, times, UsageError};
use crate::crd::{PodGroup, PodGroupSpec, PodGroupStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use std::collections::BTreeMap;

/// Prefix of a plain pod's PodGroup name (Volcano's `PodgroupNamePrefix`).
pub const GROUP_PREFIX: &str = "podgroup-";
/// Owner annotation: the PodGroup's `minMember` (Volcano's `VolcanoGroupMinMemberAnnotationKey`).
pub const GROUP_MIN_MEMBER: &str = "scheduling.volcano.sh/group-min-member";
/// Pod annotation: the PodGroup's queue (Volcano's `QueueNameAnnotationKey`).
pub const QUEUE_NAME: &str = "scheduling.volcano.sh/queue-name";
/// Annotations with this prefix are copied from the owner and the pod onto the PodGroup
/// (Volcano's `AnnotationPrefix`): `volcano.sh/preemptable`, `cooldown-time`, `revocable-zone`,
/// `jdb-min-available`, `jdb-max-unavailable`, …
pub const INHERITED_PREFIX: &str = "volcano.sh/";
/// Pod annotation: `networkTopology.mode` (`hard` or `soft`).
pub const TOPOLOGY_MODE: &str = "volcano.sh/network-topology-mode";
/// Pod annotation: `networkTopology.highestTierAllowed`.
pub const TOPOLOGY_HIGHEST_TIER: &str = "volcano.sh/network-topology-highest-tier";
/// The queue of a pod that names none (the CRD's default of `spec.queue`).
pub const DEFAULT_QUEUE: &str = "default";

/// A pod the controller cannot build a PodGroup for, naming the object and field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlainPodError {
    /// The pod has no UID (not read from the API).
    #[error("Pod {0}: metadata.uid is not set")]
    NoUid(String),
    /// A resource quantity does not parse.
    #[error(transparent)]
    Usage(#[from] UsageError),
}

/// `namespace/name` of a pod.
pub fn pod_key(pod: &Pod) -> String {
    format!("{}/{}", pod.metadata.namespace.as_deref().unwrap_or_default(), pod.metadata.name.as_deref().unwrap_or_default())
}

/// Whether the controller gives `pod` a PodGroup: its `spec.schedulerName` is one of
/// `scheduler_names` and it has no (or an empty) `scheduling.k8s.io/group-name` annotation.
pub fn wants_group(pod: &Pod, scheduler_names: &[String]) -> bool {
    let scheduler = pod.spec.as_ref().and_then(|s| s.scheduler_name.as_deref()).unwrap_or("default-scheduler");
    let grouped = pod.metadata.annotations.as_ref().and_then(|a| a.get(GROUP_NAME)).is_some_and(|g| !g.is_empty());
    !grouped && scheduler_names.iter().any(|n| n == scheduler)
}

/// The pod's controller owner reference (`controller: true`), if any.
pub fn controller_owner(pod: &Pod) -> Option<&OwnerReference> {
    pod.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true))
}

/// `podgroup-<UID>`: the controller owner's UID, else the pod's (Volcano's
/// `GeneratePodgroupName`), so every pod of a ReplicaSet shares one PodGroup.
///
/// Errors: [`PlainPodError::NoUid`] when neither is known.
pub fn group_name(pod: &Pod) -> Result<String, PlainPodError> {
    if let Some(o) = controller_owner(pod).filter(|o| !o.uid.is_empty()) {
        return Ok(format!("{GROUP_PREFIX}{}", o.uid));
    }
    match pod.metadata.uid.as_deref().filter(|u| !u.is_empty()) {
        Some(uid) => Ok(format!("{GROUP_PREFIX}{uid}")),
        None => Err(PlainPodError::NoUid(pod_key(pod))),
    }
}

/// The PodGroup's owners (Volcano's `newPGOwnerReferences`): all of the pod's owner
/// references when one of them is its controller, else the pod itself as controller owner.
pub fn owner_references(pod: &Pod) -> Vec<OwnerReference> {
    if controller_owner(pod).is_some() {
        return pod.metadata.owner_references.clone().unwrap_or_default();
    }
    vec![OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]
}

/// `minMember` from the owners' `scheduling.volcano.sh/group-min-member` annotation: 1 when
/// absent; when it is not a non-negative 32-bit integer, 1 and a warning naming the pod and the
/// annotation (Volcano logs the same and keeps 1).
pub fn min_member(owner_annotations: &BTreeMap<String, String>, pod: &Pod) -> (i32, Option<String>) {
    let Some(text) = owner_annotations.get(GROUP_MIN_MEMBER) else { return (1, None) };
    match text.trim().parse::<i32>() {
        Ok(n) if n >= 0 => (n, None),
        _ => (
            1,
            Some(format!(
                "Pod {}: owner annotation {GROUP_MIN_MEMBER}={text:?} is not a non-negative integer; minMember stays 1",
                pod_key(pod)
            )),
        ),
    }
}

/// `networkTopology` from the pod's annotations, when either is set: mode `hard` unless the
/// annotation says `soft` (case-insensitive), `highestTierAllowed` when it is an integer. Values
/// Volcano ignores with a warning are returned as warnings.
pub fn network_topology(pod: &Pod) -> (Option<serde_json::Value>, Vec<String>) {
    let ann = pod.metadata.annotations.clone().unwrap_or_default();
    let (mode, tier) = (ann.get(TOPOLOGY_MODE), ann.get(TOPOLOGY_HIGHEST_TIER));
    if mode.is_none() && tier.is_none() {
        return (None, Vec::new());
    }
    let mut warnings = Vec::new();
    let mut nt = serde_json::json!({"mode": "hard"});
    if let Some(m) = mode {
        match m.to_ascii_lowercase().as_str() {
            v @ ("hard" | "soft") => nt["mode"] = v.into(),
            _ => warnings.push(format!("Pod {}: annotation {TOPOLOGY_MODE}={m:?} is not hard or soft; using hard", pod_key(pod))),
        }
    }
    if let Some(t) = tier {
        match t.trim().parse::<i64>() {
            Ok(n) => nt["highestTierAllowed"] = n.into(),
            Err(_) => warnings
                .push(format!("Pod {}: annotation {TOPOLOGY_HIGHEST_TIER}={t:?} is not an integer; ignored", pod_key(pod))),
        }
    }
    (Some(nt), warnings)
}

/// What [`build`] made, with the warnings to log.
#[derive(Clone, Debug, PartialEq)]
pub struct Built {
    /// The PodGroup to create.
    pub pod_group: PodGroup,
    /// Ignored annotation values, each naming the pod and annotation.
    pub warnings: Vec<String>,
}

/// The PodGroup for plain pod `pod`, as Volcano's `buildPodGroupFromPod`: name
/// [`group_name`], owners [`owner_references`], `minMember` from the owners' annotation
/// ([`min_member`], only with `inherit_owner_annotations`, else 1), `minResources` = the pod's
/// quota usage × minMember ([`super::pod_usage`]), the pod's `priorityClassName`, queue from the
/// pod's `scheduling.volcano.sh/queue-name` (else `default`), `volcano.sh/*` annotations of the
/// owners (with `inherit_owner_annotations`) then of the pod (the pod's win), `networkTopology`
/// from the pod's annotations, phase `Pending`.
///
/// `owner_annotations` are the annotations of the pod's owners (ReplicaSet, StatefulSet,
/// DaemonSet, batch Job), first owner first for a key several set.
///
/// Errors: no UID; a resource quantity that does not parse.
pub fn build(
    pod: &Pod,
    owner_annotations: &BTreeMap<String, String>,
    inherit_owner_annotations: bool,
) -> Result<Built, PlainPodError> {
    let name = group_name(pod)?;
    let mut warnings = Vec::new();
    let min = if inherit_owner_annotations {
        let (n, w) = min_member(owner_annotations, pod);
        warnings.extend(w);
        n
    } else {
        1
    };
    let min_resources = quantities(&times(&pod_usage(pod)?, min));
    let mut annotations = BTreeMap::new();
    if inherit_owner_annotations {
        annotations.extend(
            owner_annotations.iter().filter(|(k, _)| k.starts_with(INHERITED_PREFIX)).map(|(k, v)| (k.clone(), v.clone())),
        );
    }
    let pod_ann = pod.metadata.annotations.clone().unwrap_or_default();
    annotations.extend(pod_ann.iter().filter(|(k, _)| k.starts_with(INHERITED_PREFIX)).map(|(k, v)| (k.clone(), v.clone())));
    let queue = pod_ann.get(QUEUE_NAME).cloned().unwrap_or_else(|| DEFAULT_QUEUE.to_string());
    let (network_topology, w) = network_topology(pod);
    warnings.extend(w);
    let pod_group = PodGroup {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: pod.metadata.namespace.clone(),
            owner_references: Some(owner_references(pod)),
            annotations: Some(annotations).filter(|a| !a.is_empty()),
            ..Default::default()
        },
        spec: PodGroupSpec {
            min_member: Some(min),
            min_task_member: None,
            queue: Some(queue),
            priority_class_name: pod.spec.as_ref().and_then(|s| s.priority_class_name.clone()).filter(|p| !p.is_empty()),
            min_resources: Some(min_resources),
            network_topology,
            sub_group_policy: None,
        },
        status: Some(PodGroupStatus { phase: Some("Pending".into()), ..Default::default() }),
    };
    Ok(Built { pod_group, warnings })
}

/// The merge patch that annotates a pod with its PodGroup (`scheduling.k8s.io/group-name`).
pub fn group_annotation_patch(group: &str) -> serde_json::Value {
    serde_json::json!({"metadata": {"annotations": {GROUP_NAME: group}}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml: &str) -> Pod {
        serde_yaml::from_str(yaml).unwrap()
    }

    const RS_POD: &str = r#"
metadata:
  name: web-abc
  namespace: ns
  uid: pod-uid
  annotations: {scheduling.volcano.sh/queue-name: research, volcano.sh/preemptable: "true", other/x: "1"}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: rs-uid, controller: true, blockOwnerDeletion: true}
spec:
  schedulerName: volcano
  priorityClassName: high
  containers: [{name: c, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
"#;

    #[test]
    fn which_pods_get_a_group() {
        let names = vec!["volcano".to_string(), "other".to_string()];
        let cases = [
            ("spec: {schedulerName: volcano, containers: []}", true),
            ("spec: {schedulerName: other, containers: []}", true),
            ("spec: {schedulerName: default-scheduler, containers: []}", false),
            ("spec: {containers: []}", false),
            ("metadata: {annotations: {scheduling.k8s.io/group-name: g}}\nspec: {schedulerName: volcano, containers: []}", false),
            (
                "metadata: {annotations: {scheduling.k8s.io/group-name: \"\"}}\nspec: {schedulerName: volcano, containers: []}",
                true,
            ),
        ];
        for (yaml, want) in cases {
            assert_eq!(wants_group(&pod(yaml), &names), want, "{yaml}");
        }
    }

    #[test]
    fn names_and_owners_follow_the_controller_owner() {
        let p = pod(RS_POD);
        assert_eq!(group_name(&p).unwrap(), "podgroup-rs-uid");
        assert_eq!(owner_references(&p), p.metadata.owner_references.clone().unwrap());
        let bare = pod("metadata: {name: solo, namespace: ns, uid: u1}\nspec: {containers: []}");
        assert_eq!(group_name(&bare).unwrap(), "podgroup-u1");
        let own = owner_references(&bare);
        assert_eq!((own[0].kind.as_str(), own[0].name.as_str(), own[0].uid.as_str()), ("Pod", "solo", "u1"));
        assert_eq!((own[0].api_version.as_str(), own[0].controller), ("v1", Some(true)));
        // A non-controller owner does not name the group, nor become its only owner.
        let weak = pod("metadata: {name: w, namespace: ns, uid: u2, ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c, uid: cm}]}\nspec: {containers: []}");
        assert_eq!(group_name(&weak).unwrap(), "podgroup-u2");
        assert_eq!(owner_references(&weak)[0].kind, "Pod");
        let none = pod("metadata: {name: n, namespace: ns}\nspec: {containers: []}");
        assert_eq!(group_name(&none).unwrap_err().to_string(), "Pod ns/n: metadata.uid is not set");
    }

    #[test]
    fn min_member_from_the_owner_annotation() {
        let p = pod(RS_POD);
        let ann = |v: &str| BTreeMap::from([(GROUP_MIN_MEMBER.to_string(), v.to_string())]);
        assert_eq!(min_member(&BTreeMap::new(), &p), (1, None));
        assert_eq!(min_member(&ann("3"), &p), (3, None));
        assert_eq!(min_member(&ann("0"), &p), (0, None));
        for bad in ["-1", "two", "99999999999"] {
            let (n, w) = min_member(&ann(bad), &p);
            assert_eq!(n, 1, "{bad}");
            assert!(w.unwrap().contains("Pod ns/web-abc: owner annotation scheduling.volcano.sh/group-min-member"), "{bad}");
        }
    }

    #[test]
    fn pod_group_as_volcano_builds_it() {
        let p = pod(RS_POD);
        let owner = BTreeMap::from([
            (GROUP_MIN_MEMBER.to_string(), "2".to_string()),
            ("volcano.sh/preemptable".to_string(), "false".to_string()),
            ("volcano.sh/cooldown-time".to_string(), "60s".to_string()),
            ("deployment.kubernetes.io/revision".to_string(), "1".to_string()),
        ]);
        let b = build(&p, &owner, true).unwrap();
        assert!(b.warnings.is_empty());
        let pg = b.pod_group;
        assert_eq!(pg.metadata.name.as_deref(), Some("podgroup-rs-uid"));
        assert_eq!(pg.metadata.namespace.as_deref(), Some("ns"));
        assert_eq!(pg.metadata.owner_references.as_ref().unwrap()[0].kind, "ReplicaSet");
        let ann = pg.metadata.annotations.clone().unwrap();
        assert_eq!(ann["volcano.sh/preemptable"], "true", "the pod's annotation wins over the owner's");
        assert_eq!(ann["volcano.sh/cooldown-time"], "60s");
        assert!(!ann.contains_key("other/x") && !ann.contains_key("deployment.kubernetes.io/revision"));
        assert_eq!(pg.spec.min_member, Some(2));
        assert_eq!(pg.spec.queue.as_deref(), Some("research"));
        assert_eq!(pg.spec.priority_class_name.as_deref(), Some("high"));
        let min = pg.spec.min_resources.unwrap();
        assert_eq!(min["cpu"].0, "1");
        assert_eq!(min["requests.memory"].0, "2Gi");
        assert_eq!(min["count/pods"].0, "2");
        assert_eq!(pg.status.unwrap().phase.as_deref(), Some("Pending"));
        // Without --inherit-owner-annotations: minMember 1, no owner annotations.
        let b = build(&p, &owner, false).unwrap().pod_group;
        assert_eq!(b.spec.min_member, Some(1));
        assert_eq!(b.spec.min_resources.unwrap()["cpu"].0, "500m");
        assert!(!b.metadata.annotations.unwrap().contains_key("volcano.sh/cooldown-time"));
    }

    #[test]
    fn defaults_queue_and_reads_network_topology() {
        let p = pod(r#"
metadata: {name: p, namespace: ns, uid: u, annotations: {volcano.sh/network-topology-mode: Soft, volcano.sh/network-topology-highest-tier: "2"}}
spec: {schedulerName: volcano, containers: []}
"#);
        let b = build(&p, &BTreeMap::new(), true).unwrap();
        assert_eq!(b.pod_group.spec.queue.as_deref(), Some("default"));
        assert_eq!(b.pod_group.spec.priority_class_name, None);
        assert_eq!(b.pod_group.spec.network_topology, Some(serde_json::json!({"mode": "soft", "highestTierAllowed": 2})));
        let bad = pod("metadata: {name: p, namespace: ns, uid: u, annotations: {volcano.sh/network-topology-mode: loose}}\nspec: {containers: []}");
        let (nt, w) = network_topology(&bad);
        assert_eq!(nt, Some(serde_json::json!({"mode": "hard"})));
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("volcano.sh/network-topology-mode=\"loose\""));
    }

    #[test]
    fn bad_requests_are_errors_naming_the_field() {
        let p = pod("metadata: {name: p, namespace: ns, uid: u}\nspec: {containers: [{name: c, image: x, resources: {requests: {memory: 1Q}}}]}");
        let e = build(&p, &BTreeMap::new(), true).unwrap_err();
        assert!(e.to_string().contains("spec.containers[0].resources.requests.memory"), "{e}");
    }

    #[test]
    fn annotation_patch() {
        assert_eq!(
            group_annotation_patch("podgroup-u"),
            serde_json::json!({"metadata": {"annotations": {"scheduling.k8s.io/group-name": "podgroup-u"}}})
        );
    }
}
