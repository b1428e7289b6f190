//! Pods of the scheduler that name no PodGroup: Volcano's scheduler leaves them out of every
//! session until the PodGroup controller gives them one (`podgroup-<owner UID>`,
//! volcano-behaviour.md §5.2), and so does `basalt scheduler`; it says so once per PodGroup
//! such pods would get, at the default verbosity, so that a cluster without the controller does
//! not leave pods Pending without a word.

use k8s_openapi::api::core::v1::Pod;
use std::collections::HashSet;

/// The PodGroups already reported as missing, by `namespace/podgroup-<uid>`.
#[derive(Debug, Default)]
pub struct Ungrouped {
    reported: HashSet<String>,
}

/// The PodGroup name Volcano's PodGroup controller gives `pod`: `podgroup-<UID>` of its
/// controller owner (a ReplicaSet, a Job…), else of the pod itself.
pub fn controller_group_name(pod: &Pod) -> String {
    let owner = pod.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true)).map(|o| o.uid.as_str());
    format!("podgroup-{}", owner.or(pod.metadata.uid.as_deref()).unwrap_or_default())
}

impl Ungrouped {
    /// Notes that pending `pod` names no PodGroup; returns the warning the first time its
    /// PodGroup-to-be is met (and logs it), `None` after.
    pub fn note(&mut self, pod: &Pod) -> Option<String> {
        let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
        let group = controller_group_name(pod);
        if !self.reported.insert(format!("{ns}/{group}")) {
            return None;
        }
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let msg = format!(
            "pod {ns}/{name} names no PodGroup (annotation scheduling.k8s.io/group-name) and is not scheduled until a PodGroup controller creates PodGroup {ns}/{group} for it, as in Volcano: run vc-controller-manager or `basalt controller` (deploy/controller.yaml); said once for all pods of that PodGroup"
        );
        tracing::warn!(pod = %format!("{ns}/{name}"), podgroup = %format!("{ns}/{group}"), "{msg}");
        Some(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn pod(name: &str, uid: &str, owner: Option<&str>) -> Pod {
        let mut p = Pod::default();
        p.metadata.namespace = Some("ns".into());
        p.metadata.name = Some(name.into());
        p.metadata.uid = Some(uid.into());
        p.metadata.owner_references = owner.map(|o| {
            vec![OwnerReference { uid: o.into(), controller: Some(true), kind: "ReplicaSet".into(), ..Default::default() }]
        });
        p
    }

    #[test]
    fn pods_without_a_pod_group_are_reported_once_per_pod_group() {
        let mut u = Ungrouped::default();
        let first = u.note(&pod("web-1", "u1", Some("rs1"))).expect("the first pod of the ReplicaSet is reported");
        assert!(
            first.contains("ns/web-1") && first.contains("PodGroup ns/podgroup-rs1") && first.contains("basalt controller"),
            "{first}"
        );
        assert_eq!(u.note(&pod("web-2", "u2", Some("rs1"))), None, "same PodGroup-to-be: said once");
        assert_eq!(u.note(&pod("web-1", "u1", Some("rs1"))), None, "the same pod again: said once");
        let bare = u.note(&pod("lone", "u3", None)).expect("a pod without owner gets its own PodGroup");
        assert!(bare.contains("ns/podgroup-u3"), "{bare}");
    }
}
