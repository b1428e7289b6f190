//! The volume filters' assumptions (issue 22): a PV chosen for a `WaitForFirstConsumer` claim
//! is held only through the Statement (allocate assumes it, discard releases it exactly), two
//! pods never assume the same PV, and committed binds carry their volume bindings.

use basalt_core::framework::k8s::PodCtx;
use basalt_core::framework::Session;
use basalt_core::model::*;
use basalt_core::resource::ResourceList;
use basalt_core::session::fit::Reason;
use basalt_core::session::tables::{NodeIdx, TaskIdx};
use basalt_core::{Cluster, CycleOptions, Delta, SchedulerConf};

mod support;

fn res(cpu: i64, pods: i64) -> ResourceList {
    [("cpu".to_string(), cpu), ("memory".to_string(), 8 << 30), ("pods".to_string(), pods)].into_iter().collect()
}

fn hostname_term(node: &str) -> Vec<NodeSelectorTerm> {
    vec![NodeSelectorTerm {
        match_expressions: vec![Requirement {
            key: "kubernetes.io/hostname".into(),
            op: SelectorOp::In,
            values: vec![node.into()],
        }],
        match_fields: vec![],
    }]
}

/// Nodes n1, n2; class `local` (no provisioner, WFFC); one local PV on n1; pods p0, p1 with
/// unbound claims c0, c1 in one job.
fn cluster() -> Cluster {
    let mut c = Cluster::new();
    c.apply(support::default_queue()).unwrap();
    for n in ["n1", "n2"] {
        let Delta::Node(mut node) = support::ready_node(n, res(8000, 110)) else { unreachable!("ready_node builds a Node") };
        node.labels = [("kubernetes.io/hostname".to_string(), n.to_string())].into_iter().collect();
        c.apply(Delta::Node(node)).unwrap();
    }
    c.apply(Delta::StorageClass(StorageClassSpec {
        name: "local".into(),
        provisioner: NO_PROVISIONER.into(),
        binding_mode: Some(VolumeBindingMode::WaitForFirstConsumer),
        allowed_topologies: vec![],
    }))
    .unwrap();
    c.apply(Delta::PersistentVolume(PersistentVolumeSpec {
        name: "local-n1".into(),
        storage_class_name: "local".into(),
        capacity_bytes: 10 << 30,
        access_modes: vec![AccessMode::ReadWriteOnce],
        node_affinity: Some(hostname_term("n1")),
        ..Default::default()
    }))
    .unwrap();
    c.apply(Delta::PodGroup(PodGroupSpec {
        namespace: "ns".into(),
        name: "pg".into(),
        uid: "ns/pg".into(),
        min_member: 1,
        queue: "default".into(),
        phase: PodGroupPhase::Inqueue,
        ..Default::default()
    }))
    .unwrap();
    for i in 0..2 {
        c.apply(Delta::PersistentVolumeClaim(PersistentVolumeClaimSpec {
            namespace: "ns".into(),
            name: format!("c{i}"),
            storage_class_name: Some("local".into()),
            access_modes: vec![AccessMode::ReadWriteOnce],
            request_bytes: 1 << 30,
            ..Default::default()
        }))
        .unwrap();
        c.apply(Delta::Pod(PodSpec {
            namespace: "ns".into(),
            name: format!("p{i}"),
            uid: format!("ns/p{i}"),
            group: Some("pg".into()),
            scheduler_name: "volcano".into(),
            resreq: res(1000, 1),
            volume_claims: vec![PodVolumeClaim { volume: "data".into(), claim: format!("c{i}"), ephemeral: false }],
            ..Default::default()
        }))
        .unwrap();
    }
    c
}

fn task(ssn: &Session<'_>, name: &str) -> TaskIdx {
    (0..ssn.state.tasks.len).map(|i| TaskIdx(i as u32)).find(|&t| ssn.state.tasks.rec[t.ix()].spec.name == name).unwrap()
}

fn check(ssn: &Session<'_>, t: TaskIdx, n: u32) -> Result<(), Reason> {
    let ctx = PodCtx::build(&ssn.state, t, false);
    ssn.plugins.predicate(&ssn.state, &ctx, t, NodeIdx(n))
}

#[test]
fn an_assumed_pv_is_held_by_the_statement_and_released_by_discard() {
    let c = cluster();
    let conf = SchedulerConf::default();
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let (p0, p1) = (task(&ssn, "p0"), task(&ssn, "p1"));
    assert_eq!(check(&ssn, p0, 0), Ok(()), "local-n1 fits p0 on n1");
    assert_eq!(check(&ssn, p0, 1), Err(Reason::VolumeBindConflict), "no PV reaches n2 and nothing provisions");
    assert_eq!(check(&ssn, p1, 0), Ok(()));

    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, p0, NodeIdx(0)));
    assert_eq!(check(&ssn, p1, 0), Err(Reason::VolumeBindConflict), "p0 assumed the only PV");
    ssn.discard(st);
    assert_eq!(check(&ssn, p1, 0), Ok(()), "discard released it");

    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, p1, NodeIdx(0)));
    assert_eq!(check(&ssn, p0, 0), Err(Reason::VolumeBindConflict));
    ssn.commit(st);
    let d = ssn.close();
    assert_eq!(d.binds.len(), 1);
    assert_eq!(
        d.volume_bindings,
        vec![VolumeBinding {
            namespace: "ns".into(),
            pod: "p1".into(),
            node: "n1".into(),
            bind: vec![("c1".into(), "local-n1".into())],
            provision: vec![],
        }]
    );
}

#[test]
fn pods_without_claims_build_no_volume_tables_and_bind_without_bindings() {
    let mut c = cluster();
    for i in 0..2 {
        let id = c.pod_id("ns", &format!("p{i}")).unwrap();
        let mut spec = c.pod(id).unwrap().spec.clone();
        spec.volume_claims.clear();
        c.apply(Delta::Pod(spec)).unwrap();
    }
    let conf = SchedulerConf::default();
    let arena = bumpalo::Bump::new();
    let mut ssn = Session::open(&arena, &c, &conf, &CycleOptions::default(), &basalt_core::plugins::REGISTRY);
    let p0 = task(&ssn, "p0");
    assert_eq!(check(&ssn, p0, 1), Ok(()));
    let mut st = ssn.statement();
    assert!(ssn.allocate(&mut st, p0, NodeIdx(1)));
    ssn.commit(st);
    assert!(ssn.close().volume_bindings.is_empty());
}
