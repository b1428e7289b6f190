//! The network-topology parts of the synthetic workloads ([`crate::workload::Variant::Topology`]
//! and [`crate::workload::Variant::SubGroups`]): a HyperNode tree over generated nodes, and
//! Volcano's sub-group allocate benchmark as deltas.

use crate::cluster::Delta;
use crate::model::*;
use crate::resource::ResourceList;

/// HyperNodes over nodes `0..nodes` (named by `node_name`): tier 1 groups `fanout[0]`
/// consecutive nodes (`leaf-NNNNN`), tier k+1 groups `fanout[k]` consecutive HyperNodes of tier
/// k (`t<k+1>-NNNNN`); members by `exactMatch`. One tier per entry of `fanout`; a tier of one
/// HyperNode ends the tree early.
pub fn tree(nodes: usize, fanout: &[usize], node_name: impl Fn(usize) -> String) -> Vec<Delta> {
    let mut out = Vec::new();
    let member = |kind: MemberType, name: String| HyperNodeMember { kind, selector: MemberSelector::Exact(name) };
    let mut below: Vec<String> = Vec::new();
    for (k, &f) in fanout.iter().enumerate() {
        let f = f.max(1);
        let tier = k as i32 + 1;
        let count = if k == 0 { nodes } else { below.len() };
        let mut names = Vec::new();
        for (h, start) in (0..count).step_by(f).enumerate() {
            let name = if k == 0 { format!("leaf-{h:05}") } else { format!("t{tier}-{h:05}") };
            let members = (start..(start + f).min(count))
                .map(|i| {
                    if k == 0 {
                        member(MemberType::Node, node_name(i))
                    } else {
                        member(MemberType::HyperNode, below[i].clone())
                    }
                })
                .collect();
            out.push(Delta::HyperNode(HyperNodeSpec { name: name.clone(), tier, tier_name: String::new(), members }));
            names.push(name);
        }
        let done = names.len() <= 1;
        below = names;
        if done {
            break;
        }
    }
    out
}

fn res(cpu_milli: i64, mem: i64, pods: i64) -> ResourceList {
    let mut r = ResourceList::new();
    r.insert("cpu".into(), cpu_milli);
    r.insert("memory".into(), mem);
    if pods > 0 {
        r.insert("pods".into(), pods);
    }
    r
}

/// Pods per sub-group of [`sub_groups`] (Volcano's `podsPerSubGroup`).
pub const PODS_PER_SUB_GROUP: usize = 10;

/// Volcano's `BenchmarkAllocateSubGroups` (pkg/scheduler/actions/allocate/allocate_test.go):
/// `nodes` nodes `n-<i>` (4 cpu, 8Gi, 10 pods), 10 per tier-1 HyperNode `hn-tier1-<i>`, all
/// under `hn-tier2-0`; one Queue `q1`; one PodGroup `c1/pg1` (Inqueue, hard topology up to tier
/// 2, minMember `pods`, minResources the pods' sum) whose `pods` pods `p<i>` (4 cpu, 8Gi) carry
/// `volcano.sh/task-spec: subgroup-<i / 10>`, grouped by a `subGroupPolicy` `task1` (hard, tier
/// 1, `subGroupSize` 10, `minSubGroups` pods / 10).
pub fn sub_groups(nodes: usize, pods: usize) -> Vec<Delta> {
    const GIB: i64 = 1 << 30;
    let mut out = vec![Delta::Queue(QueueSpec { name: "q1".into(), weight: 1, reclaimable: true, ..Default::default() })];
    for n in 0..nodes {
        let mut labels = Labels::new();
        labels.insert("kubernetes.io/hostname".into(), format!("n-{n}"));
        out.push(Delta::Node(NodeSpec {
            name: format!("n-{n}"),
            labels,
            allocatable: res(4000, 8 * GIB, 10),
            capacity: res(4000, 8 * GIB, 10),
            ready: true,
            ..Default::default()
        }));
    }
    let leaves = nodes.div_ceil(10);
    for h in 0..leaves {
        let members = (h * 10..(h * 10 + 10).min(nodes))
            .map(|n| HyperNodeMember { kind: MemberType::Node, selector: MemberSelector::Exact(format!("n-{n}")) })
            .collect();
        out.push(Delta::HyperNode(HyperNodeSpec { name: format!("hn-tier1-{h}"), tier: 1, tier_name: String::new(), members }));
    }
    let members = (0..leaves)
        .map(|h| HyperNodeMember { kind: MemberType::HyperNode, selector: MemberSelector::Exact(format!("hn-tier1-{h}")) })
        .collect();
    out.push(Delta::HyperNode(HyperNodeSpec { name: "hn-tier2-0".into(), tier: 2, tier_name: String::new(), members }));
    let hard = |tier: i32| NetworkTopologySpec {
        mode: TopologyMode::Hard,
        highest_tier_allowed: Some(tier),
        highest_tier_name: String::new(),
    };
    out.push(Delta::PodGroup(PodGroupSpec {
        namespace: "c1".into(),
        name: "pg1".into(),
        uid: "c1/pg1".into(),
        min_member: pods as i32,
        queue: "q1".into(),
        phase: PodGroupPhase::Inqueue,
        min_resources: Some(res(4000 * pods as i64, 8 * GIB * pods as i64, 0)),
        network_topology: Some(hard(2)),
        sub_group_policy: vec![SubGroupPolicySpec {
            name: "task1".into(),
            network_topology: Some(hard(1)),
            sub_group_size: Some(PODS_PER_SUB_GROUP as i32),
            min_sub_groups: Some(pods.div_ceil(PODS_PER_SUB_GROUP) as i32),
            label_selector: None,
            match_label_keys: vec!["volcano.sh/task-spec".into()],
        }],
        ..Default::default()
    }));
    for i in 0..pods {
        let mut labels = Labels::new();
        labels.insert("volcano.sh/task-spec".into(), format!("subgroup-{}", i / PODS_PER_SUB_GROUP));
        out.push(Delta::Pod(PodSpec {
            namespace: "c1".into(),
            name: format!("p{i}"),
            uid: format!("c1/p{i}"),
            labels,
            group: Some("pg1".into()),
            scheduler_name: "volcano".into(),
            resreq: res(4000, 8 * GIB, 1),
            nonzero_cpu_milli: 4000,
            nonzero_memory_bytes: 8 * GIB,
            preemptable: true,
            ..Default::default()
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conf::SchedulerConf;
    use crate::{run_cycle, Cluster, CycleOptions};

    /// The tree has the fan-out asked for and holds every node once; the topology bench's
    /// gangs each bind inside one leaf, and Volcano's sub-group case binds every sub-group
    /// inside one tier-1 HyperNode.
    #[test]
    fn trees_and_the_topology_workloads_bind_inside_their_hypernodes() {
        let t = tree(40, &[16, 2, 8], |n| format!("node-{n:05}"));
        let tiers: Vec<(i32, usize)> = t
            .iter()
            .map(|d| match d {
                Delta::HyperNode(h) => (h.tier, h.members.len()),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(tiers, [(1, 16), (1, 16), (1, 8), (2, 2), (2, 1), (3, 2)]);

        use crate::workload::{generate, Variant, WorkloadSpec};
        let spec = WorkloadSpec { nodes: 64, pods: 120, gang: 8, queues: 2, variant: Variant::Topology, seed: 3 };
        // `tree` gives the leaves (the plain workload has none of its own).
        let check = |deltas: Vec<Delta>, tree: &[Delta], group_key: &dyn Fn(&PodSpec) -> String| {
            let mut c = Cluster::new();
            for d in deltas {
                c.apply(d).unwrap();
            }
            let leaf_of: std::collections::HashMap<String, String> = tree
                .iter()
                .filter_map(|d| match d {
                    Delta::HyperNode(h) => Some(h),
                    _ => None,
                })
                .filter(|h| h.tier == 1)
                .flat_map(|h| {
                    h.members.iter().map(move |m| match &m.selector {
                        MemberSelector::Exact(n) => (n.clone(), h.name.clone()),
                        _ => unreachable!(),
                    })
                })
                .collect();
            let conf = SchedulerConf::default();
            let d = run_cycle(&c, &conf, &CycleOptions { seed: 1, cycle: 1, now_ms: 0 });
            let mut leaves: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
            for b in &d.binds {
                let p = &c.pod(b.pod).unwrap().spec;
                let n = &c.node(b.node).unwrap().spec.name;
                leaves.entry(group_key(p)).or_default().insert(leaf_of[n].clone());
            }
            (d.binds.len(), leaves)
        };
        let topo = generate(&spec);
        let (bound, leaves) = check(topo.clone(), &topo, &|p| p.group.clone().unwrap());
        assert_eq!(bound, 120);
        assert!(leaves.values().all(|l| l.len() == 1), "{leaves:?}");
        let (_, plain) = check(crate::workload::without_topology(&topo), &topo, &|p| p.group.clone().unwrap());
        assert!(plain.values().any(|l| l.len() > 1), "without the tree some gang spans leaves: {plain:?}");

        let sg = sub_groups(60, 60);
        let (bound, leaves) = check(sg.clone(), &sg, &|p| p.labels["volcano.sh/task-spec"].clone());
        assert_eq!(bound, 60);
        assert_eq!(leaves.len(), 6);
        assert!(leaves.values().all(|l| l.len() == 1), "{leaves:?}");
    }
}
