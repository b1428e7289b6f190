//! `basalt scheduler --feature-gates=SchedulingGatesQueueAdmission=true` on the v1.20.2 test
//! server. That server has no `spec.schedulingGates` (the field came in Kubernetes 1.26) and drops
//! it from a pod it stores, so a gated pod cannot exist here and the release of gated pods by
//! their queue cannot be shown live (it is shown by `core/tests/queue_allocation_gate.rs` and
//! `runtime/tests/sim_queue_gate.rs`). What this test shows: with the feature gate on, pods that
//! opted in (annotation `scheduling.volcano.sh/queue-allocation-gate: "true"`) and were sent with
//! Volcano's gate are stored without it, are scheduled as any pod, each bound once, no gate
//! removal is sent for them (no pod PATCH), and the scheduler keeps running.

use crate::{e2e, support};

use e2e::rig::{Rig, Server};
use k8s_openapi::api::core::v1::{Pod, PodSchedulingGate};
use kube::api::Api;
use std::time::Duration;
use support::{create_pod_group, create_pods, pod_group, TestApiserver, TestPod};

const GATE: &str = "scheduling.volcano.sh/queue-allocation-gate";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opted_in_pods_on_a_1_20_server_are_scheduled_and_nothing_is_patched() -> support::Result<()> {
    let mut rig = Rig::new(Server::Shared(TestApiserver::shared()?), "qgate", 2, "4").await?;
    rig.start_single(&["--feature-gates=SchedulingGatesQueueAdmission=true", "--gate-removal-worker-num=2"])?;
    let mut pods = Vec::new();
    for g in 0..2 {
        let group = format!("gated-{g}");
        create_pod_group(&rig.admin, &pod_group(&rig.ns, &group, 2, None)).await?;
        for i in 0..2 {
            let mut p = TestPod::new(&rig.ns, &format!("{group}-{i}"))
                .scheduler(&rig.scheduler_name())
                .group(&group)
                .annotation(GATE, "true")
                .requests(&[("cpu", "1"), ("memory", "64Mi")])
                .build();
            if let Some(spec) = p.spec.as_mut() {
                spec.scheduling_gates = Some(vec![PodSchedulingGate { name: GATE.into() }]);
            }
            pods.push(p);
        }
    }
    create_pods(&rig.admin, &pods).await?;
    let names: Vec<String> = pods.iter().filter_map(|p| p.metadata.name.clone()).collect();
    let api: Api<Pod> = Api::namespaced(rig.admin.clone(), &rig.ns);
    let stored = api.get(&names[0]).await?;
    assert!(
        stored.spec.as_ref().and_then(|s| s.scheduling_gates.as_ref()).is_none_or(|g| g.is_empty()),
        "the v1.20 server drops spec.schedulingGates (if it kept it, this test would have to wait for the gate's removal): {:?}",
        stored.spec.as_ref().map(|s| &s.scheduling_gates)
    );
    rig.wait_bound(&names, Duration::from_secs(60)).await?;
    rig.assert_bound_once(&names).await?;
    rig.assert_running();
    let patches =
        rig.proxy.requests().iter().filter(|r| r.verb == "patch" && r.resource == "pods" && r.subresource.is_empty()).count();
    assert_eq!(patches, 0, "no gate removal for pods that carry no gate");
    Ok(())
}
