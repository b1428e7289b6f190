//! How terminating pods end in the simulator (the conformance contract,
//! `../shared/conformance/README.md`): a pod that starts terminating during the run — evicted by
//! the scheduler, or deleted by the job controller while bound — is gone once its termination
//! grace (`--termination-grace`, virtual seconds, default 0) is over; a pod that arrives
//! terminating (it has a `deletionTimestamp` in the input) stays terminating (Releasing, its
//! resources held on its node) for the whole run, since nothing in the input says when its
//! kubelet finishes it.
//!
//! Timing, on the simulation's virtual time (step `i`, 0-based, at `i ×` the schedule period):
//! a pod that starts terminating in step `i` (the cycle's evictions, the controller's deletions
//! before the cycle) at time `T` is deleted at the end of the last step before a cycle later than
//! `T + grace`. With grace 0 an evicted pod is gone in the next cycle; with a grace of one period
//! the next cycle still sees it terminating and the one after does not.

use basalt_core::cluster::{Cluster, Delta};
use std::collections::{BTreeMap, BTreeSet};

/// `(namespace, name)` of a pod.
type PodKey = (String, String);

/// The terminating pods of a simulation and when each began (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Lifecycle {
    /// Termination grace, ms of virtual time (≥ 0).
    grace_ms: i64,
    /// Pods that arrived terminating and stay so.
    arrived: BTreeSet<PodKey>,
    /// Pods that began terminating during the run → virtual time it began, ms.
    since: BTreeMap<PodKey, i64>,
}

impl Lifecycle {
    /// The lifecycle of `cluster` as loaded: its terminating pods arrived so; `grace_ms` is the
    /// termination grace of pods that start terminating later (negative counts as 0).
    pub fn new(cluster: &Cluster, grace_ms: i64) -> Self {
        let arrived = cluster
            .pods()
            .filter(|(_, p)| p.spec.deleting)
            .map(|(_, p)| (p.spec.namespace.clone(), p.spec.name.clone()))
            .collect();
        Lifecycle { grace_ms: grace_ms.max(0), arrived, since: BTreeMap::new() }
    }

    /// At the end of a step at virtual time `t_ms`, with the next cycle at `next_ms`: notes the
    /// pods that began terminating in this step and returns the deletions of those whose grace
    /// is over by the next cycle (`next_ms > began + grace`), in pod order.
    pub fn finish_step(&mut self, cluster: &Cluster, t_ms: i64, next_ms: i64) -> Vec<Delta> {
        let mut out = Vec::new();
        let mut live: BTreeSet<PodKey> = BTreeSet::new();
        for (_, p) in cluster.pods() {
            let key = (p.spec.namespace.clone(), p.spec.name.clone());
            if !p.spec.deleting {
                // A pod of that name that is not terminating (re-created): a later deletion is new.
                self.arrived.remove(&key);
                self.since.remove(&key);
                continue;
            }
            if self.arrived.contains(&key) {
                live.insert(key);
                continue;
            }
            let began = *self.since.entry(key.clone()).or_insert(t_ms);
            if next_ms > began.saturating_add(self.grace_ms) {
                self.since.remove(&key);
                out.push(Delta::PodDeleted { namespace: key.0, name: key.1 });
            } else {
                live.insert(key);
            }
        }
        // Forget pods that are gone by other means (deleted by the controller at once).
        self.arrived.retain(|k| live.contains(k));
        self.since.retain(|k, _| live.contains(k));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::model::{NodeSpec, PodSpec};

    fn cluster(terminating_a: bool) -> Cluster {
        let mut c = Cluster::new();
        c.apply(Delta::Node(NodeSpec { name: "n1".into(), ready: true, ..Default::default() })).unwrap();
        for (name, deleting) in [("a", terminating_a), ("b", false)] {
            let spec =
                PodSpec { namespace: "ns".into(), name: name.into(), node_name: "n1".into(), deleting, ..Default::default() };
            c.apply(Delta::Pod(spec)).unwrap();
        }
        c
    }

    fn start_terminating(c: &mut Cluster, name: &str) {
        let mut spec = c.pod(c.pod_id("ns", name).unwrap()).unwrap().spec.clone();
        spec.deleting = true;
        c.apply(Delta::Pod(spec)).unwrap();
    }

    fn step(l: &mut Lifecycle, c: &mut Cluster, i: i64, period: i64) {
        for d in l.finish_step(c, i * period, (i + 1) * period) {
            c.apply(d).unwrap();
        }
    }

    #[test]
    fn a_pod_arriving_terminating_stays_for_the_whole_run() {
        let mut c = cluster(true);
        let mut l = Lifecycle::new(&c, 0);
        for i in 0..5 {
            step(&mut l, &mut c, i, 1000);
        }
        assert!(c.pod(c.pod_id("ns", "a").unwrap()).unwrap().spec.deleting, "still terminating after 5 steps");
    }

    #[test]
    fn without_grace_an_evicted_pod_is_gone_in_the_next_cycle() {
        let mut c = cluster(false);
        let mut l = Lifecycle::new(&c, 0);
        step(&mut l, &mut c, 0, 1000);
        assert!(c.pod_id("ns", "b").is_some());
        start_terminating(&mut c, "b");
        step(&mut l, &mut c, 1, 1000);
        assert!(c.pod_id("ns", "b").is_none(), "deleted before the next cycle");
    }

    #[test]
    fn a_grace_keeps_it_terminating_for_that_virtual_time() {
        let mut c = cluster(false);
        // 2.5 s of grace at 1 s per cycle: evicted in step 0 (t = 0), seen terminating by the
        // cycles at 1 s and 2 s, gone before the one at 3 s.
        let mut l = Lifecycle::new(&c, 2500);
        start_terminating(&mut c, "b");
        step(&mut l, &mut c, 0, 1000);
        assert!(c.pod_id("ns", "b").is_some());
        step(&mut l, &mut c, 1, 1000);
        assert!(c.pod_id("ns", "b").is_some());
        step(&mut l, &mut c, 2, 1000);
        assert!(c.pod_id("ns", "b").is_none());
    }
}
