//! NUMA on the real apiserver (issue 26): the Numatopology CRD from `deploy/crds/` installed,
//! one Numatopology per node as Volcano's resource exporter writes them, and `basalt scheduler`
//! with `numa-aware` in its conf: a Guaranteed pod asking `volcano.sh/numa-topology-policy:
//! single-numa-node` is bound only to the node one of whose NUMA nodes holds its CPUs (not to a
//! node whose total holds them but no NUMA node does, nor to one without NUMA information); a
//! pod no NUMA node holds stays pending with Volcano's reasons; pods bound in successive cycles
//! never share CPUs although the Numatopology is not updated (the CPUs numa-aware gave a bound
//! pod stay taken until the exporter lists it); a Numatopology that does not
//! convert is logged naming object and field, and its node counts as one without NUMA
//! information.

use crate::{e2e, support};

use basalt_runtime::crd::{CpuInfo, NumatopoSpec, Numatopology, ResourceInfo};
use e2e::rig::{Rig, Server};
use e2e::{node_of, pod_scheduled, pods};
use kube::api::PostParams;
use kube::Api;
use std::collections::BTreeMap;
use std::time::Duration;
use support::{create_pod_group, create_pods, pod_group, wait_for, TestApiserver, TestPod};

const CONF: &str = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n  - name: numa-aware\n  - name: proportion\n  - name: nodeorder\n";

/// A Numatopology of `numa` NUMA nodes of `per` CPUs each (one socket per NUMA node, core ids
/// per socket as the exporter reports them), every CPU free, kubelet policies static and
/// single-numa-node.
fn topology(node: &str, numa: i64, per: i64) -> Numatopology {
    let mut detail = BTreeMap::new();
    for k in 0..numa {
        for j in 0..per {
            detail.insert((k * per + j).to_string(), CpuInfo { numa: Some(k), socket: Some(k), core: Some(j) });
        }
    }
    let spec = NumatopoSpec {
        policies: Some(
            [("CPUManagerPolicy", "static"), ("TopologyManagerPolicy", "single-numa-node")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        numa_res_map: Some(
            [(
                "cpu".to_string(),
                ResourceInfo { allocatable: Some(format!("0-{}", numa * per - 1)), capacity: Some(numa * per) },
            )]
            .into(),
        ),
        cpu_detail: Some(detail),
        ..Default::default()
    };
    let mut t = Numatopology::new(node, spec);
    t.metadata.name = Some(node.to_string());
    t
}

/// One single-member PodGroup and its Guaranteed pod asking `cpus` whole CPUs under
/// single-numa-node.
async fn numa_pod(rig: &Rig, name: &str, cpus: &str) -> support::Result<String> {
    create_pod_group(&rig.admin, &pod_group(&rig.ns, name, 1, None)).await?;
    let pod = TestPod::new(&rig.ns, name)
        .scheduler(&rig.scheduler_name())
        .group(name)
        .annotation("volcano.sh/numa-topology-policy", "single-numa-node")
        .requests(&[("cpu", cpus), ("memory", "256Mi")])
        .build();
    create_pods(&rig.admin, &[pod]).await?;
    Ok(name.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_numa_node_pods_bind_only_where_one_numa_node_holds_them() -> support::Result<()> {
    // Three nodes of 16 CPUs: `-0` has two NUMA nodes of 4 exclusive CPUs, `-1` two of 8, and
    // `-2` a Numatopology that does not convert (a cpuDetail key that is not a CPU id).
    let mut rig = Rig::new(Server::Shared(TestApiserver::shared()?), "numa", 3, "16").await?;
    let api: Api<Numatopology> = Api::all(rig.admin.clone());
    let pool = rig.name.clone();
    let node = |i: usize| format!("{pool}-{i}");
    for t in [topology(&node(0), 2, 4), topology(&node(1), 2, 8)] {
        api.create(&PostParams::default(), &t).await?;
    }
    let mut bad = topology(&node(2), 2, 8);
    bad.spec.cpu_detail.get_or_insert_with(Default::default).insert("x".into(), CpuInfo::default());
    api.create(&PostParams::default(), &bad).await?;
    let conf = rig.server.dir().join("numa.conf");
    std::fs::write(&conf, CONF)?;
    let conf_arg = format!("--scheduler-conf={}", conf.display());
    rig.start_single(&[conf_arg.as_str()])?;

    // 6 CPUs: `-0`'s 8 free CPUs hold it in total but no NUMA node does; `-2` has no NUMA
    // information (its object was refused); only `-1` takes it.
    let six = numa_pod(&rig, "six", "6").await?;
    rig.wait_bound(std::slice::from_ref(&six), Duration::from_secs(60)).await?;
    let all = pods(&rig.admin, &rig.ns).await?;
    assert_eq!(node_of(&all[&six]), node(1), "{}", rig.log_tails(20));

    // 10 CPUs fit no NUMA node anywhere: pending, with Volcano's reasons.
    let ten = numa_pod(&rig, "ten", "10").await?;
    let (admin, ns) = (rig.admin.clone(), rig.ns.clone());
    let message = wait_for("the 10-CPU pod's PodScheduled message", Duration::from_secs(30), || async {
        let all = pods(&admin, &ns).await?;
        Ok(all.get(&ten).and_then(pod_scheduled).map(|(_, _, m)| m).filter(|m| m.contains("numa")))
    })
    .await
    .map_err(|e| format!("{e}\n{}", rig.log_tails(20)))?;
    assert!(message.contains("2 container 0 cannot be assigned by numa"), "{message}");
    assert!(message.contains("1 numa info is empty"), "{message}");
    assert_eq!(rig.bound(&[ten]).await?, 0);

    // Successive cycles do not share CPUs (Volcano AddUnassignedNumaPods): the exporter never
    // updates these Numatopologies, so `-1` still lists all 16 CPUs as free, but `six` holds 6
    // of one NUMA node. A 5-CPU pod takes the other NUMA node; a second one, created once the
    // first is bound, finds 2 and 3 free CPUs on `-1`'s NUMA nodes and stays pending although
    // `-1` has 5 CPUs left (without the kept CPUs it would be bound onto CPUs `six` or the
    // first holds).
    let five = numa_pod(&rig, "five", "5").await?;
    rig.wait_bound(std::slice::from_ref(&five), Duration::from_secs(60)).await?;
    let all = pods(&rig.admin, &rig.ns).await?;
    assert_eq!(node_of(&all[&five]), node(1), "{}", rig.log_tails(20));
    let again = numa_pod(&rig, "five-again", "5").await?;
    let message = wait_for("the second 5-CPU pod's PodScheduled message", Duration::from_secs(30), || async {
        let all = pods(&admin, &ns).await?;
        Ok(all.get(&again).and_then(pod_scheduled).map(|(_, _, m)| m).filter(|m| m.contains("numa")))
    })
    .await
    .map_err(|e| format!("{e}\n{}", rig.log_tails(20)))?;
    assert!(message.contains("2 container 0 cannot be assigned by numa"), "{message}");
    assert_eq!(rig.bound(&[again]).await?, 0);

    // The refused object was logged naming it and the field.
    let log = rig.log_tails(400);
    assert!(
        log.contains(&format!("Numatopology {}: field spec.cpuDetail[x]", node(2))),
        "no refusal naming the object and field:\n{log}"
    );
    rig.assert_bound_once(&[six, five]).await?;
    rig.assert_running();
    Ok(())
}
