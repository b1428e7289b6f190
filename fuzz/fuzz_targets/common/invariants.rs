//! The invariants checked after every cycle, against the independent [`Before`] reading:
//! binds are well-formed; no node gets more than its allocatable; gangs are bound
//! all-or-nothing; a queue stays within its capability; every pending pod gets a bind or a
//! reason; predicates (when configured) hold on every bind. Each failure panics with a message
//! naming the object.

use super::conf::{entries, has};
use super::model::{amount, best_effort, Before, Status};
use basalt_core::cluster::{NodeId, PodGroupId, PodId};
use basalt_core::conf::Flag;
use basalt_core::model::{HostPort, NodeSpec, PodSpec, Requirement, SelectorOp, Taint, TaintEffect, TolerationOp};
use basalt_core::{Cluster, Decisions, SchedulerConf};
use std::collections::{BTreeMap, BTreeSet};

/// Runs every invariant on the decisions `d` of one cycle over `c`.
pub fn check(c: &Cluster, conf: &SchedulerConf, b: &Before, d: &Decisions) {
    binds_are_well_formed(c, b, d);
    no_node_over_allocatable(c, b, d);
    if has(conf, "gang", Flag::JobReady) {
        gangs_all_or_nothing(c, b, d);
    }
    if has(conf, "proportion", Flag::Allocatable) {
        queues_within_capability(c, b, d);
    }
    every_pending_pod_answered(c, b, d);
    if has(conf, "predicates", Flag::Predicate) {
        predicates_hold(c, conf, b, d);
    }
}

fn name(c: &Cluster, p: PodId) -> String {
    c.pod(p).map(|p| format!("{}/{}", p.spec.namespace, p.spec.name)).unwrap_or_else(|| format!("{p:?}"))
}

fn binds_are_well_formed(c: &Cluster, b: &Before, d: &Decisions) {
    let mut seen = BTreeSet::new();
    for x in &d.binds {
        let pod = c.pod(x.pod).unwrap_or_else(|| panic!("bind of unknown pod {:?}", x.pod));
        assert!(c.node(x.node).is_some(), "bind of {} to unknown node {:?}", name(c, x.pod), x.node);
        assert!(seen.insert(x.pod), "{} bound twice in one cycle", name(c, x.pod));
        assert!(b.ready_nodes.contains(&x.node), "{} bound to a node that is not Ready", name(c, x.pod));
        assert!(b.job_of.contains_key(&x.pod), "{} bound but it is not a task of a session job", name(c, x.pod));
        assert_eq!(b.status[&x.pod], Status::Pending, "{} bound but it was not Pending", name(c, x.pod));
        assert!(!pod.spec.scheduling_gated, "{} bound despite its scheduling gates", name(c, x.pod));
    }
}

/// Σ requests (by name) of the pods bound this cycle, per node.
fn added(c: &Cluster, d: &Decisions) -> BTreeMap<NodeId, BTreeMap<String, i128>> {
    let mut out: BTreeMap<NodeId, BTreeMap<String, i128>> = BTreeMap::new();
    for x in &d.binds {
        let add = out.entry(x.node).or_default();
        for (k, &v) in &c.pod(x.pod).expect("checked").spec.resreq {
            *add.entry(k.clone()).or_default() += amount(v);
        }
    }
    out
}

fn no_node_over_allocatable(c: &Cluster, b: &Before, d: &Decisions) {
    for (n, add) in added(c, d) {
        let node = &c.node(n).expect("checked").spec;
        let used = b.used.get(&n);
        for (k, &a) in add.iter().filter(|(_, &a)| a > 0) {
            let before = used.and_then(|u| u.get(k)).copied().unwrap_or(0);
            let alloc = amount(node.allocatable.get(k).copied().unwrap_or(0));
            assert!(before + a <= alloc, "node {}: {k} in use {before} + bound this cycle {a} > allocatable {alloc}", node.name);
        }
    }
}

fn gangs_all_or_nothing(c: &Cluster, b: &Before, d: &Decisions) {
    let bound: BTreeSet<PodId> = d.binds.iter().map(|x| x.pod).collect();
    let groups: BTreeSet<PodGroupId> = d.binds.iter().filter_map(|x| b.job_of.get(&x.pod).copied()).collect();
    for g in groups {
        let rec = c.pod_group(g).expect("session job");
        // Per role: (bound now, ready before, best-effort still pending). Volcano counts pending
        // BestEffort tasks as ready (`IsReady`), so they count here too.
        let mut roles: BTreeMap<&str, (i32, i32, i32)> = BTreeMap::new();
        for (&p, _) in b.job_of.iter().filter(|(_, &j)| j == g) {
            let spec = &c.pod(p).expect("pod").spec;
            let e = roles.entry(spec.role.as_str()).or_default();
            if bound.contains(&p) {
                e.0 += 1;
            } else if b.status[&p].ready() {
                e.1 += 1;
            } else if b.status[&p] == Status::Pending && best_effort(spec) {
                e.2 += 1;
            }
        }
        let total: i32 = roles.values().map(|(x, y, z)| x + y + z).sum();
        let key = format!("{}/{}", rec.spec.namespace, rec.spec.name);
        assert!(
            total >= rec.spec.min_member,
            "gang {key} got binds but only {total} of minMember {} ready: {roles:?}",
            rec.spec.min_member
        );
        let role_total: i32 = rec.spec.min_task_member.values().sum();
        if rec.spec.min_member >= role_total {
            for (role, &min) in &rec.spec.min_task_member {
                let (x, y, z) = roles.get(role.as_str()).copied().unwrap_or_default();
                assert!(
                    x + y + z >= min,
                    "gang {key} got binds but role {role:?} has {} ready of minTaskMember {min}",
                    x + y + z
                );
            }
        }
    }
}

fn queues_within_capability(c: &Cluster, b: &Before, d: &Decisions) {
    for q in &d.queues {
        let Some(rec) = c.queue(&q.name) else { continue };
        let spec = &rec.spec;
        let mut before: BTreeMap<&str, i128> = BTreeMap::new();
        for (&p, &g) in &b.job_of {
            let g = &c.pod_group(g).expect("job").spec;
            let gq = if g.queue.is_empty() { "default" } else { g.queue.as_str() };
            if gq == spec.name && b.status[&p].allocated() {
                for (k, &v) in &c.pod(p).expect("pod").spec.resreq {
                    *before.entry(k.as_str()).or_default() += amount(v);
                }
            }
        }
        let over_before = spec.capability.iter().any(|(k, &cap)| before.get(k.as_str()).copied().unwrap_or(0) > amount(cap));
        if over_before {
            continue;
        }
        for (k, &cap) in &spec.capability {
            // pods: backfill places BestEffort pods without asking the queue (Volcano too).
            // cpu/memory 0: unlimited (proportion). Guarantee above capability raises deserved.
            let (cap, guarantee) = (amount(cap), amount(spec.guarantee.get(k).copied().unwrap_or(0)));
            if k == "pods" || ((k == "cpu" || k == "memory") && cap == 0) || guarantee > cap {
                continue;
            }
            let after = i128::from(q.allocated.get(k).copied().unwrap_or(0));
            assert!(after <= cap, "queue {}: {k} allocated {after} exceeds capability {cap}", spec.name);
        }
    }
}

fn every_pending_pod_answered(c: &Cluster, b: &Before, d: &Decisions) {
    let bound: BTreeSet<PodId> = d.binds.iter().map(|x| x.pod).collect();
    let mut answered = BTreeSet::new();
    for u in &d.unschedulable {
        assert!(answered.insert(u.pod), "{} has two unschedulable entries", name(c, u.pod));
        assert!(!bound.contains(&u.pod), "{} is bound and unschedulable at once", name(c, u.pod));
        assert!(!u.message.is_empty(), "{} has an empty reason", name(c, u.pod));
    }
    for (&p, _) in &b.job_of {
        let spec = &c.pod(p).expect("pod").spec;
        if b.status[&p] == Status::Pending && !spec.scheduling_gated {
            assert!(bound.contains(&p) || answered.contains(&p), "pending pod {} has neither a bind nor a reason", name(c, p));
        }
    }
    let statuses: BTreeSet<PodGroupId> = d.pod_groups.iter().map(|s| s.group).collect();
    assert_eq!(statuses.len(), d.pod_groups.len(), "a PodGroup has two statuses");
    assert_eq!(statuses, b.jobs, "PodGroup statuses are not exactly the session jobs");
    let skipped: BTreeSet<PodGroupId> = d.skipped.iter().map(|(g, _)| *g).collect();
    assert_eq!(skipped, b.skipped, "skipped PodGroups are not exactly those without a queue");
}

fn matches(r: &Requirement, labels: &basalt_core::model::Labels) -> bool {
    let v = labels.get(&r.key);
    let int = |s: &str| s.parse::<i64>().ok();
    match r.op {
        SelectorOp::In => v.is_some_and(|v| r.values.contains(v)),
        SelectorOp::NotIn => v.is_none_or(|v| !r.values.contains(v)),
        SelectorOp::Exists => v.is_some(),
        SelectorOp::DoesNotExist => v.is_none(),
        SelectorOp::Gt | SelectorOp::Lt => match (v.and_then(|v| int(v)), r.values.first().and_then(|b| int(b))) {
            (Some(x), Some(bound)) => (r.op == SelectorOp::Gt && x > bound) || (r.op == SelectorOp::Lt && x < bound),
            _ => false,
        },
    }
}

fn node_affinity_ok(pod: &PodSpec, node: &NodeSpec) -> bool {
    let selector = pod.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v));
    let required = match &pod.affinity.node_required {
        None => true,
        Some(terms) => terms.iter().any(|t| {
            !(t.match_expressions.is_empty() && t.match_fields.is_empty())
                && t.match_expressions.iter().all(|r| matches(r, &node.labels))
                && t.match_fields.iter().all(|r| {
                    r.key == "metadata.name"
                        && matches(&Requirement { key: String::new(), ..r.clone() }, &[(String::new(), node.name.clone())].into())
                })
        }),
    };
    selector && required
}

fn tolerated(pod: &PodSpec, t: &Taint) -> bool {
    pod.tolerations.iter().any(|x| {
        x.effect.is_none_or(|e| e == t.effect)
            && (x.key.is_empty() || x.key == t.key)
            && match x.op {
                TolerationOp::Exists => true,
                TolerationOp::Equal => !x.key.is_empty() && x.value == t.value,
            }
    })
}

fn conflict(a: &HostPort, b: &HostPort) -> bool {
    let all = |ip: &str| ip.is_empty() || ip == "0.0.0.0";
    a.port == b.port && a.protocol == b.protocol && (a.host_ip == b.host_ip || all(&a.host_ip) || all(&b.host_ip))
}

fn predicates_hold(c: &Cluster, conf: &SchedulerConf, b: &Before, d: &Decisions) {
    let on = |key: &str| {
        entries(conf, "predicates").filter(|p| p.flags.on(Flag::Predicate)).any(|p| p.arguments.bool(key).unwrap_or(true))
    };
    let (affinity, taints, ports) =
        (on("predicate.NodeAffinityEnable"), on("predicate.TaintTolerationEnable"), on("predicate.NodePortsEnable"));
    let unschedulable =
        Taint { key: "node.kubernetes.io/unschedulable".into(), value: String::new(), effect: TaintEffect::NoSchedule };
    let mut placed: BTreeMap<NodeId, Vec<PodId>> = BTreeMap::new();
    for x in &d.binds {
        let pod = &c.pod(x.pod).expect("checked").spec;
        let node = &c.node(x.node).expect("checked").spec;
        let who = format!("{} on node {}", name(c, x.pod), node.name);
        assert!(!node.unschedulable || tolerated(pod, &unschedulable), "{who}: the node is unschedulable");
        assert!(!affinity || node_affinity_ok(pod, node), "{who}: nodeSelector/required node affinity not met");
        if taints {
            let bad = node.taints.iter().find(|t| t.effect != TaintEffect::PreferNoSchedule && !tolerated(pod, t));
            assert!(bad.is_none(), "{who}: untolerated taint {bad:?}");
        }
        if ports {
            let others = b.on_node.get(&x.node).into_iter().flatten().chain(placed.get(&x.node).into_iter().flatten());
            for o in others {
                let other = &c.pod(*o).expect("pod").spec;
                let clash = pod.host_ports.iter().any(|p| other.host_ports.iter().any(|q| conflict(p, q)));
                assert!(!clash, "{who}: host port conflict with {}", name(c, *o));
            }
        }
        placed.entry(x.node).or_default().push(x.pod);
    }
}
