//! What happens to a cluster before Volcano's scheduler runs its first cycle, done to the
//! simulated cluster: the scheduler cache creates the default queue when it is missing
//! (volcano-behaviour.md §1.3), and the PodGroup controller gives every pending pod of the
//! scheduler that names no PodGroup one of its own, `podgroup-<pod UID>` with `minMember: 1`,
//! in the queue of the pod's annotation `scheduling.volcano.sh/queue-name` (else the default
//! queue) (§5.2). Also reports the references that leave a pod outside every session: a PodGroup or
//! node that does not exist.

use basalt_core::cluster::{Cluster, Delta};
use basalt_core::model::{PodGroupPhase, PodGroupSpec, QueueSpec};

/// Whether a plugin of `conf` reads the queue tree of `spec.parent`: `capacity` or `drf` with
/// `enableHierarchy: true` (volcano-behaviour.md §3).
pub fn hierarchical(conf: &basalt_core::SchedulerConf) -> bool {
    conf.tiers
        .iter()
        .flat_map(|t| &t.plugins)
        .any(|p| matches!(p.name.as_str(), "capacity" | "drf") && p.flags.on(basalt_core::conf::Flag::Hierarchy))
}

/// Prepares `cluster` as Volcano's startup would and returns one note per change or problem.
/// `hierarchical` ([`hierarchical`]) says whether the conf reads `spec.parent`; when not, each
/// queue naming a parent other than `root` is noted as flat.
pub fn prepare(cluster: &mut Cluster, default_queue: &str, scheduler_name: &str, hierarchical: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if cluster.queue(default_queue).is_none() {
        let q = QueueSpec { name: default_queue.to_string(), weight: 1, reclaimable: true, ..Default::default() };
        match cluster.apply(Delta::Queue(q)) {
            Ok(()) => notes.push(format!("note: Queue {default_queue:?} created (weight 1), as Volcano's scheduler does at startup: the input defines none")),
            Err(e) => notes.push(format!("Queue {default_queue:?} could not be created: {e}")),
        }
    }
    for q in cluster.queues() {
        let parent = &q.spec.parent;
        if !hierarchical && !parent.is_empty() && parent != "root" {
            notes.push(format!(
                "Queue {:?}: spec.parent {parent:?} is accepted but ignored: no plugin of the conf is hierarchical (capacity or drf with enableHierarchy: true), so queues are flat",
                q.spec.name
            ));
        }
    }
    let mut changes = Vec::new();
    for (_, p) in cluster.pods() {
        let s = &p.spec;
        let key = format!("{}/{}", s.namespace, s.name);
        match &s.group {
            None if s.node_name.is_empty() && !s.deleting && s.scheduler_name == scheduler_name => {
                let name = format!("podgroup-{}", s.uid.replace('/', "-"));
                let mut min = s.resreq.clone();
                min.remove("pods");
                let pg = PodGroupSpec {
                    namespace: s.namespace.clone(),
                    name: name.clone(),
                    uid: format!("{}/{name}", s.namespace),
                    creation_ms: s.creation_ms,
                    min_member: 1,
                    queue: s.queue_name.clone(),
                    priority_class_name: s.priority_class_name.clone(),
                    min_resources: Some(min),
                    phase: PodGroupPhase::Pending,
                    ..Default::default()
                };
                let mut pod = s.clone();
                pod.group = Some(name.clone());
                notes.push(format!(
                    "note: Pod {key} names no PodGroup (annotation scheduling.k8s.io/group-name): PodGroup {}/{name} created for it (minMember 1, queue {:?}), as Volcano's PodGroup controller does; the live scheduler does not create it: without a PodGroup controller running (vc-controller-manager or `basalt controller`) such a pod stays Pending",
                    s.namespace,
                    if s.queue_name.is_empty() { default_queue } else { s.queue_name.as_str() }
                ));
                changes.push(Delta::PodGroup(pg));
                changes.push(Delta::Pod(pod));
            }
            Some(g) if cluster.pod_group_id(&s.namespace, g).is_none() => notes.push(format!(
                "Pod {key}: annotation scheduling.k8s.io/group-name: PodGroup {}/{g} does not exist; the pod is not scheduled",
                s.namespace
            )),
            _ => {}
        }
        if !s.node_name.is_empty() && cluster.node_id(&s.node_name).is_none() {
            notes.push(format!("Pod {key}: spec.nodeName: node {:?} does not exist; its requests count on no node", s.node_name));
        }
    }
    for d in changes {
        if let Err(e) = cluster.apply(d) {
            notes.push(e.to_string());
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::model::PodSpec;

    #[test]
    fn default_queue_and_podgroup_are_created_and_dangling_references_reported() {
        let mut c = Cluster::new();
        let pod = |name: &str, group: Option<&str>, node: &str| PodSpec {
            namespace: "ns".into(),
            name: name.into(),
            uid: format!("ns/{name}"),
            group: group.map(Into::into),
            node_name: node.into(),
            scheduler_name: "volcano".into(),
            ..Default::default()
        };
        for p in [pod("bare", None, ""), pod("lost", Some("nosuch"), ""), pod("away", Some("nosuch"), "gone")] {
            c.apply(Delta::Pod(p)).unwrap();
        }
        let notes = prepare(&mut c, "default", "volcano", false);
        assert!(c.queue("default").is_some());
        let pg = c.pod_group_id("ns", "podgroup-ns-bare").expect("PodGroup created");
        assert_eq!(c.pod_group(pg).unwrap().spec.min_member, 1);
        assert_eq!(c.pod(c.pod_id("ns", "bare").unwrap()).unwrap().spec.group.as_deref(), Some("podgroup-ns-bare"));
        let bare: Vec<&String> = notes.iter().filter(|n| n.contains("Pod ns/bare names no PodGroup")).collect();
        assert_eq!(bare.len(), 1, "{notes:?}");
        assert!(
            bare[0].contains("the live scheduler does not create it") && bare[0].contains("`basalt controller`"),
            "simulate says that the live scheduler waits for a PodGroup controller: {}",
            bare[0]
        );
        assert!(notes.iter().any(|n| n.contains("Pod ns/lost") && n.contains("does not exist")), "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("spec.nodeName") && n.contains("gone")), "{notes:?}");
        assert_eq!(notes.len(), 5, "{notes:?}");
    }
}
