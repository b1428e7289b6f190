//! Volumes on the real apiserver (issue 22): `basalt scheduler` watches PVCs, PVs and
//! StorageClasses, keeps a pod with a bound claim on its volume's zone, binds a
//! `WaitForFirstConsumer` claim's static PV (`claimRef`) before the pod and sends the Binding
//! only after the claim is bound (the test plays the PV controller: no controller-manager
//! runs here), and when a claim never binds leaves the pod pending with its condition and
//! releases the PV it wrote.

use crate::{e2e, support};

use e2e::process::SchedulerProcess;
use e2e::{create_queues, node_of, pod_scheduled};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, Volume};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use std::time::Duration;
use support::{
    apply_scheduler_rbac, create_node, create_pod, create_pod_group, fresh_namespace, install_volcano_crds, pod_group, wait_for,
    TestApiserver, TestNode, TestPod,
};

const ZONE: &str = "topology.kubernetes.io/zone";

async fn create<K>(api: &Api<K>, v: serde_json::Value) -> support::Result<K>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let obj: K = serde_json::from_value(v)?;
    Ok(api.create(&PostParams::default(), &obj).await?)
}

fn pv(name: &str, class: &str, zone: &str, claim: Option<(&str, &str)>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {ZONE: zone}},
        "spec": {
            "storageClassName": class, "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": format!("/tmp/{name}")},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}},
        },
    });
    if let Some((ns, c)) = claim {
        v["spec"]["claimRef"] = serde_json::json!({"namespace": ns, "name": c});
    }
    v
}

fn pvc(ns: &str, name: &str, class: &str, volume: Option<&str>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    });
    if let Some(pv) = volume {
        v["spec"]["volumeName"] = pv.into();
        v["metadata"]["annotations"] = serde_json::json!({"pv.kubernetes.io/bind-completed": "yes"});
    }
    v
}

async fn pod_with_claim(client: &Client, ns: &str, name: &str, claim: &str) -> support::Result<()> {
    create_pod_group(client, &pod_group(ns, name, 1, Some("q0"))).await?;
    let mut p = TestPod::new(ns, name).group(name).requests(&[("cpu", "1"), ("memory", "1Gi")]).build();
    p.spec.as_mut().unwrap().volumes = Some(vec![Volume {
        name: "data".into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource { claim_name: claim.into(), read_only: None }),
        ..Default::default()
    }]);
    create_pod(client, &p).await?;
    Ok(())
}

async fn pod(client: &Client, ns: &str, name: &str) -> support::Result<Pod> {
    Ok(Api::<Pod>::namespaced(client.clone(), ns).get(name).await?)
}

fn claim_ref(v: &PersistentVolume) -> Option<String> {
    v.spec.as_ref()?.claim_ref.as_ref().and_then(|r| r.name.clone())
}

/// The PV controller's part (none runs beside the test apiserver): the server creates every PV in
/// phase `Pending`, and only an `Available` PV is offered to a WaitForFirstConsumer claim (as
/// kube-scheduler's volume binder ignores PVs in any other phase).
async fn set_phase(pvs: &Api<PersistentVolume>, name: &str, phase: &str) -> support::Result<()> {
    let body = serde_json::json!({"status": {"phase": phase}});
    pvs.patch_status(name, &PatchParams::default(), &Patch::Merge(&body)).await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_pin_pods_and_bind_before_the_pod() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "volumes").await?;
    create_queues(&admin, &["q0".to_string()]).await?;
    // zone b has the larger node: least-requested alone would put every pod there.
    create_node(&admin, &TestNode::new("node-a").label(ZONE, "a")).await?;
    create_node(&admin, &TestNode::new("node-b").label(ZONE, "b").allocatable("cpu", "32")).await?;
    let classes: Api<StorageClass> = Api::all(admin.clone());
    for (name, mode) in [("zonal", "Immediate"), ("local", "WaitForFirstConsumer")] {
        create(
            &classes,
            serde_json::json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": mode}),
        )
        .await?;
    }
    let pvs: Api<PersistentVolume> = Api::all(admin.clone());
    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(admin.clone(), &ns);
    // A claim already bound to a zone-a disk.
    create(&pvs, pv("disk-a", "zonal", "a", Some((&ns, "bound")))).await?;
    set_phase(&pvs, "disk-a", "Bound").await?;
    create(&pvcs, pvc(&ns, "bound", "zonal", Some("disk-a"))).await?;
    // WaitForFirstConsumer: one static PV in zone b, one in zone a for a claim nobody binds.
    create(&pvs, pv("local-b", "local", "b", None)).await?;
    set_phase(&pvs, "local-b", "Available").await?;
    create(&pvcs, pvc(&ns, "wffc", "local", None)).await?;

    let dir = server.dir().to_path_buf();
    let conf = dir.join("volumes.conf");
    std::fs::write(
        &conf,
        "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: predicates\n    arguments:\n      volumebinding.bindTimeoutSeconds: 3\n  - name: proportion\n  - name: nodeorder\n",
    )?;
    let conf_arg = format!("--scheduler-conf={}", conf.display());
    let args = ["--leader-elect=false", "--schedule-period=1s", conf_arg.as_str()];
    let mut sched = SchedulerProcess::start(&dir, "volumes", &server.scheduler_kubeconfig(), &args)?;

    // 1. A bound claim pins its pod to the disk's zone.
    pod_with_claim(&admin, &ns, "p-bound", "bound").await?;
    let node = wait_for("p-bound bound", Duration::from_secs(60), || async {
        let p = pod(&admin, &ns, "p-bound").await?;
        Ok((!node_of(&p).is_empty()).then(|| node_of(&p).to_string()))
    })
    .await?;
    assert_eq!(node, "node-a", "disk-a is in zone a");

    // 2. WaitForFirstConsumer with a static PV: claimRef first, the pod only once bound.
    pod_with_claim(&admin, &ns, "p-wffc", "wffc").await?;
    let written = wait_for("local-b's claimRef written", Duration::from_secs(60), || async {
        Ok((claim_ref(&pvs.get("local-b").await?).as_deref() == Some("wffc")).then_some(()))
    })
    .await;
    if let Err(e) = written {
        return Err(format!("{e}; scheduler log:\n{}", sched.log_text()).into());
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(node_of(&pod(&admin, &ns, "p-wffc").await?), "", "no Binding before the claim is bound");
    // The PV controller's part.
    let body = serde_json::json!({"metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}}, "spec": {"volumeName": "local-b"}});
    pvcs.patch("wffc", &PatchParams::default(), &Patch::Merge(&body)).await?;
    let node = wait_for("p-wffc bound", Duration::from_secs(30), || async {
        let p = pod(&admin, &ns, "p-wffc").await?;
        Ok((!node_of(&p).is_empty()).then(|| node_of(&p).to_string()))
    })
    .await?;
    assert_eq!(node, "node-b", "local-b is in zone b");

    // 3. A claim that never binds: the pod stays pending with its condition, the PV is released.
    create(&pvs, pv("local-a", "local", "a", None)).await?;
    set_phase(&pvs, "local-a", "Available").await?;
    create(&pvcs, pvc(&ns, "never", "local", None)).await?;
    pod_with_claim(&admin, &ns, "p-never", "never").await?;
    let (_, reason, message) = wait_for("p-never's failed prebind condition", Duration::from_secs(60), || async {
        let p = pod(&admin, &ns, "p-never").await?;
        Ok(pod_scheduled(&p).filter(|(s, _, m)| s == "False" && m.contains("preBind")))
    })
    .await?;
    assert!(message.contains("\"never\" was not bound within 3s"), "{reason}: {message}");
    assert_eq!(node_of(&pod(&admin, &ns, "p-never").await?), "");
    Api::<Pod>::namespaced(admin.clone(), &ns).delete("p-never", &Default::default()).await?;
    wait_for("local-a released", Duration::from_secs(30), || async {
        Ok(claim_ref(&pvs.get("local-a").await?).is_none().then_some(()))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(claim_ref(&pvs.get("local-a").await?), None, "nothing written after the pod is gone");
    assert_eq!(sched.terminate(), Some(0), "log:\n{}", sched.log_text());
    Ok(())
}
