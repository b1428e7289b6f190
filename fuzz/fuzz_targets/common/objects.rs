//! The fuzz input turned into core model objects and [`Delta`]s, in the order a runtime would
//! deliver them: queues, PriorityClasses, nodes, PodGroups, pods, then deletions. Pod requests
//! are folded as the runtime folds them (`pods: 1` in every request, init containers folded into the one request).

use super::input::*;
use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::Delta;

fn list(entries: &[(u8, Amount)]) -> ResourceList {
    let mut out = ResourceList::new();
    for &(name, amount) in entries {
        let name = pick(RESOURCES, name);
        out.insert(name.to_string(), amount.value(unit_of(name)));
    }
    out
}

fn queue(q: &QueueIn) -> QueueSpec {
    QueueSpec {
        name: pick(&QUEUES[..4], q.name).to_string(),
        weight: match q.weight % 8 {
            6 => 0,
            7 | -1 => i32::from(q.weight),
            _ => 1 + i32::from(q.weight.unsigned_abs() % 9),
        },
        capability: list(&q.capability),
        guarantee: list(&q.guarantee),
        deserved: list(&q.deserved),
        reclaimable: q.reclaimable,
        priority: i32::from(q.priority % 4),
        state: match q.state % 8 {
            5 => QueueState::Closed,
            6 => QueueState::Closing,
            7 => QueueState::Unknown,
            _ => QueueState::Open,
        },
        ..Default::default()
    }
}

fn class(c: &ClassIn) -> PriorityClassSpec {
    let value = if c.value % 5 == 0 { c.value } else { c.value % 1000 };
    PriorityClassSpec { name: pick(&CLASSES[1..], c.name).to_string(), value, global_default: c.global_default }
}

fn node(i: usize, n: &NodeIn) -> NodeSpec {
    let name = format!("n{i}");
    let mut allocatable = list(&n.scalars);
    allocatable.insert("cpu".into(), n.cpu.value(8000));
    allocatable.insert("memory".into(), n.memory.value(16 << 30));
    let pods = match n.pods % 8 {
        1 => 0,
        2 => 1,
        3 => 2,
        4 => 3,
        5 => 5,
        6 => i64::MAX,
        _ => 110,
    };
    allocatable.insert("pods".into(), pods);
    match n.missing % 16 {
        13 => allocatable.remove("cpu"),
        14 => allocatable.remove("memory"),
        15 => allocatable.remove("pods"),
        _ => None,
    };
    let mut labels = Labels::new();
    labels.insert("kubernetes.io/hostname".into(), name.clone());
    for &(k, v) in &n.labels {
        labels.insert(pick(LABEL_KEYS, k).into(), pick(LABEL_VALUES, v).into());
    }
    let taints = n
        .taints
        .iter()
        .take(3)
        .map(|t| Taint {
            key: pick(TAINT_KEYS, t.key).into(),
            value: pick(TAINT_VALUES, t.value).into(),
            effect: effect(t.effect),
        })
        .collect();
    NodeSpec {
        name,
        labels,
        taints,
        unschedulable: n.unschedulable % 4 == 3,
        capacity: allocatable.clone(),
        allocatable,
        ready: n.not_ready % 8 != 7,
        gpu_share: None,
        devices: Default::default(),
    }
}

fn effect(e: u8) -> TaintEffect {
    match e % 3 {
        0 => TaintEffect::NoSchedule,
        1 => TaintEffect::PreferNoSchedule,
        _ => TaintEffect::NoExecute,
    }
}

fn group(i: usize, g: &GroupIn) -> PodGroupSpec {
    let ns = pick(NAMESPACES, g.ns).to_string();
    let name = format!("pg{i}");
    PodGroupSpec {
        network_topology: None,
        sub_group_policy: Vec::new(),
        uid: format!("{ns}/{name}"),
        namespace: ns,
        name,
        creation_ms: i64::from(g.created % 4),
        min_member: match g.min_member % 16 {
            14 => 0,
            15 | -15 => i32::from(g.min_member),
            _ => 1 + i32::from(g.min_member.unsigned_abs() % 5),
        },
        min_task_member: g.min_task.iter().take(3).map(|&(r, m)| (pick(ROLES, r).to_string(), i32::from(m % 4))).collect(),
        queue: pick(QUEUES, g.queue).to_string(),
        priority_class_name: pick(CLASSES, g.class).to_string(),
        min_resources: g.min_resources.as_deref().map(list),
        phase: match g.phase % 8 {
            0 | 1 => PodGroupPhase::Pending,
            2 | 3 => PodGroupPhase::Inqueue,
            4 => PodGroupPhase::Running,
            5 => PodGroupPhase::Empty,
            6 => PodGroupPhase::Unknown,
            _ => PodGroupPhase::Completed,
        },
        conditions: Vec::new(),
        preemptable: Some(g.preemptable),
        // sla waiting time and task-topology buckets: not generated (their plugins have
        // scenario and property tests).
        ..PodGroupSpec::default()
    }
}

fn requirement(r: &ReqIn, keys: &[&str]) -> Requirement {
    let op = match r.op % 6 {
        0 => SelectorOp::In,
        1 => SelectorOp::NotIn,
        2 => SelectorOp::Exists,
        3 => SelectorOp::DoesNotExist,
        4 => SelectorOp::Gt,
        _ => SelectorOp::Lt,
    };
    let values = match op {
        SelectorOp::Exists | SelectorOp::DoesNotExist => Vec::new(),
        _ => r.values.iter().take(3).map(|&v| pick(LABEL_VALUES, v).to_string()).collect(),
    };
    Requirement { key: pick(keys, r.key).to_string(), op, values }
}

const NODE_KEYS: &[&str] = &["zone", "group", "disk", "rank", "kubernetes.io/hostname"];
const POD_KEYS: &[&str] = &["app", "tier"];

fn pod_term(t: &PodTermIn) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: t.app.map(|a| {
            let mut s = LabelSelector::default();
            s.match_labels.insert("app".into(), pick(APPS, a).into());
            s.match_expressions = t.exprs.iter().take(2).map(|r| requirement(r, POD_KEYS)).collect();
            s
        }),
        namespaces: t.namespaces.iter().take(2).map(|&n| pick(NAMESPACES, n).to_string()).collect(),
        namespace_selector: match t.ns_selector % 4 {
            2 => Some(LabelSelector::default()),
            3 => {
                let mut s = LabelSelector::default();
                s.match_labels.insert("team".into(), "x".into());
                Some(s)
            }
            _ => None,
        },
        topology_key: pick(TOPOLOGY_KEYS, t.topology).to_string(),
    }
}

fn weighted(v: &[PodTermIn]) -> Vec<WeightedPodAffinityTerm> {
    v.iter().take(2).map(|t| WeightedPodAffinityTerm { weight: i32::from(t.weight % 100) + 1, term: pod_term(t) }).collect()
}

fn node_term(reqs: &[ReqIn]) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: reqs.iter().take(3).map(|r| requirement(r, NODE_KEYS)).collect(),
        match_fields: Vec::new(),
    }
}

fn affinity(a: &AffinityIn) -> Affinity {
    Affinity {
        node_required: a.node_required.as_ref().map(|terms| terms.iter().take(2).map(|t| node_term(t)).collect()),
        node_preferred: a
            .node_preferred
            .iter()
            .take(2)
            .map(|(w, t)| PreferredSchedulingTerm { weight: i32::from(*w % 100) + 1, preference: node_term(t) })
            .collect(),
        pod_required: a.pod_required.iter().take(2).map(pod_term).collect(),
        pod_preferred: weighted(&a.pod_preferred),
        anti_required: a.anti_required.iter().take(2).map(pod_term).collect(),
        anti_preferred: weighted(&a.anti_preferred),
    }
}

fn spread(s: &SpreadIn) -> TopologySpreadConstraint {
    TopologySpreadConstraint {
        max_skew: i32::from(s.max_skew % 3) + 1,
        topology_key: pick(TOPOLOGY_KEYS, s.topology).to_string(),
        when_unsatisfiable: if s.hard { WhenUnsatisfiable::DoNotSchedule } else { WhenUnsatisfiable::ScheduleAnyway },
        label_selector: s.app.map(|a| {
            let mut sel = LabelSelector::default();
            sel.match_labels.insert("app".into(), pick(APPS, a).into());
            sel
        }),
        min_domains: if s.hard { i32::from(s.min_domains % 4) + 1 } else { 1 },
        ignore_node_affinity: s.ignore_node_affinity,
        honor_node_taints: s.honor_node_taints,
        match_label_keys: s.match_label_keys.iter().take(2).map(|&k| pick(POD_KEYS, k).to_string()).collect(),
    }
}

fn pod(i: usize, p: &PodIn, groups: &[PodGroupSpec], nodes: usize) -> PodSpec {
    let g = p.group as usize % (groups.len() + 2);
    let (namespace, group) = if g < groups.len() {
        (groups[g].namespace.clone(), Some(groups[g].name.clone()))
    } else if g == groups.len() {
        (pick(NAMESPACES, p.ns).to_string(), None)
    } else {
        (pick(NAMESPACES, p.ns).to_string(), Some("pg-missing".to_string()))
    };
    let name = format!("p-{i}");
    let mut resreq = list(&p.scalars);
    let cpu = p.cpu.value(1000);
    let memory = p.memory.value(1 << 30);
    resreq.insert("cpu".into(), cpu);
    resreq.insert("memory".into(), memory);
    resreq.insert("pods".into(), 1);
    // An init container larger than the app containers raises the one request.
    if let Some((c, m)) = p.init_extra {
        for (k, extra) in [("cpu", c.value(1000)), ("memory", m.value(1 << 30))] {
            let v = resreq.get(k).copied().unwrap_or(0).saturating_add(extra);
            resreq.insert(k.into(), v);
        }
    }
    let node_name = match (p.node % 4 == 3, p.node as usize / 4 % (nodes + 1)) {
        (false, _) => String::new(),
        (true, n) if n < nodes => format!("n{n}"),
        (true, _) => "ghost".into(),
    };
    let mut labels = Labels::new();
    labels.insert("app".into(), pick(APPS, p.app).into());
    labels.insert("tier".into(), pick(&["front", "back"], p.created).into());
    let tolerations = p
        .tolerations
        .iter()
        .take(3)
        .map(|t| Toleration {
            key: pick(TAINT_KEYS, t.key).into(),
            op: if t.exists { TolerationOp::Exists } else { TolerationOp::Equal },
            value: if t.exists { String::new() } else { pick(TAINT_VALUES, t.value).into() },
            effect: if t.effect % 4 == 0 { None } else { Some(effect(t.effect % 4 - 1)) },
        })
        .collect();
    PodSpec {
        uid: format!("{namespace}/{name}"),
        namespace,
        name,
        creation_ms: i64::from(p.created % 4),
        labels,
        group,
        role: pick(ROLES, p.role).to_string(),
        queue_name: String::new(),
        scheduler_name: "volcano".into(),
        node_name,
        phase: match p.phase % 8 {
            0..=3 => PodPhase::Pending,
            4 => PodPhase::Running,
            5 => PodPhase::Succeeded,
            6 => PodPhase::Failed,
            _ => PodPhase::Unknown,
        },
        deleting: p.deleting % 6 == 5,
        priority: p.priority.map(|v| if v % 7 == 0 { v } else { v % 100 }),
        priority_class_name: pick(CLASSES, p.class).to_string(),
        preemption_never: p.preemption_never,
        nonzero_cpu_milli: if cpu == 0 { 100 } else { cpu },
        nonzero_memory_bytes: if memory == 0 { 200 << 20 } else { memory },
        resreq,
        node_selector: p
            .selector
            .iter()
            .take(2)
            .map(|&(k, v)| (pick(LABEL_KEYS, k).into(), pick(LABEL_VALUES, v).into()))
            .collect(),
        affinity: p.affinity.as_deref().map(affinity).unwrap_or_default().into(),
        tolerations,
        host_ports: p
            .ports
            .iter()
            .take(2)
            .map(|&(ip, proto, port)| HostPort {
                host_ip: pick(HOST_IPS, ip).into(),
                protocol: pick(PROTOCOLS, proto).into(),
                port: 8000 + i32::from(port % 3),
            })
            .collect(),
        topology_spread: p.spread.iter().take(2).map(spread).collect(),
        scheduling_gated: p.gated % 10 == 9,
        preemptable: true,
        images: Vec::new(),
        // start time, cooldown, nominated node and the DisruptionTarget condition: not generated.
        ..PodSpec::default()
    }
}

/// Every delta of the input, in delivery order.
pub fn deltas(input: &Input) -> Vec<Delta> {
    let nodes: Vec<NodeSpec> = input.nodes.iter().enumerate().map(|(i, n)| node(i, n)).collect();
    let groups: Vec<PodGroupSpec> = input.groups.iter().enumerate().map(|(i, g)| group(i, g)).collect();
    let pods: Vec<PodSpec> = input.pods.iter().enumerate().map(|(i, p)| pod(i, p, &groups, nodes.len())).collect();
    let deletions: Vec<Delta> = input.deletions.iter().map(|d| deletion(d, &nodes, &groups, &pods)).collect();
    let mut out = Vec::new();
    out.extend(input.queues.iter().map(|q| Delta::Queue(queue(q))));
    out.extend(input.classes.iter().map(|c| Delta::PriorityClass(class(c))));
    out.extend(nodes.into_iter().map(Delta::Node));
    out.extend(groups.into_iter().map(Delta::PodGroup));
    out.extend(pods.into_iter().map(Delta::Pod));
    out.extend(deletions);
    out
}

fn deletion(d: &DeleteIn, nodes: &[NodeSpec], groups: &[PodGroupSpec], pods: &[PodSpec]) -> Delta {
    let i = d.index as usize;
    match d.kind % 5 {
        0 if !nodes.is_empty() => Delta::NodeDeleted(nodes[i % nodes.len()].name.clone()),
        1 if !pods.is_empty() => {
            let p = &pods[i % pods.len()];
            Delta::PodDeleted { namespace: p.namespace.clone(), name: p.name.clone() }
        }
        2 if !groups.is_empty() => {
            let g = &groups[i % groups.len()];
            Delta::PodGroupDeleted { namespace: g.namespace.clone(), name: g.name.clone() }
        }
        3 => Delta::QueueDeleted(pick(&QUEUES[..4], d.index).to_string()),
        _ => Delta::PriorityClassDeleted(pick(&CLASSES[1..], d.index).to_string()),
    }
}
