//! What a Volcano user tripped on (issue 25), against the real test apiserver v1.20.2 with the
//! scheduler's identity and `deploy/`'s ClusterRole:
//! * a PodGroup's `status.running`/`succeeded` follow its pods (Volcano writes the PodGroup when
//!   any status field it maintains changes, volcano-behaviour.md §1.7), and an unchanged status
//!   is not rewritten;
//! * a pod of the scheduler that names no PodGroup stays Pending and the scheduler says so once,
//!   naming the controller it waits for;
//! * the scheduler's log, with stderr redirected to a file, carries no ANSI escape codes.

use crate::{e2e, support};

use basalt_runtime::crd::PodGroup;
use e2e::rig::{Rig, Server};
use e2e::SCHEDULER_USER;
use kube::Api;
use std::time::Duration;
use support::{create_pod_group, create_pods, pod_group, wait_for, Kubelet, TestApiserver, TestPod};

/// `(running, succeeded, failed)` of the PodGroup's status.
async fn counts(api: &Api<PodGroup>, name: &str) -> support::Result<(i64, i64, i64)> {
    let v = serde_json::to_value(api.get(name).await?)?;
    let n = |f: &str| v.pointer(&format!("/status/{f}")).and_then(serde_json::Value::as_i64).unwrap_or(0);
    Ok((n("running"), n("succeeded"), n("failed")))
}

/// Successful PodGroup updates of `name` by the scheduler so far (audit log).
fn pod_group_writes(server: &TestApiserver, ns: &str, name: &str) -> support::Result<usize> {
    let audit = server.audit()?.by_user(SCHEDULER_USER);
    Ok(audit
        .events()
        .iter()
        .filter(|e| e.resource == "podgroups" && e.verb == "update" && e.namespace == ns && e.name == name && e.succeeded())
        .count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pod_group_counts_update_and_ungrouped_pods_are_reported() -> support::Result<()> {
    let mut rig = Rig::new(Server::Shared(TestApiserver::shared()?), "trips", 1, "8").await?;
    rig.start_single(&[])?;
    let kubelet = Kubelet::start(rig.admin.clone(), Some(&rig.ns));
    let ns = rig.ns.clone();
    let sched = rig.scheduler_name();
    create_pod_group(&rig.admin, &pod_group(&ns, "counts", 2, None)).await?;
    let pods = vec![
        TestPod::new(&ns, "counts-0").scheduler(&sched).group("counts").requests(&[("cpu", "1")]).duration_seconds(3).build(),
        TestPod::new(&ns, "counts-1").scheduler(&sched).group("counts").requests(&[("cpu", "1")]).build(),
        TestPod::new(&ns, "lonely").scheduler(&sched).requests(&[("cpu", "1")]).build(),
    ];
    create_pods(&rig.admin, &pods).await?;

    let api: Api<PodGroup> = Api::namespaced(rig.admin.clone(), &ns);
    let wait = |want: (i64, i64, i64), what: &'static str| {
        let api = api.clone();
        async move {
            wait_for(what, Duration::from_secs(60), || {
                let api = api.clone();
                async move { Ok((counts(&api, "counts").await? == want).then_some(())) }
            })
            .await
        }
    };
    if let Err(e) = wait((2, 0, 0), "RUNNINGS 2: both pods run").await {
        return Err(format!("{e}\n{}", rig.log_tails(20)).into());
    }
    if let Err(e) = wait((1, 1, 0), "one pod succeeded: running 1, succeeded 1").await {
        return Err(format!("{e}\n{}", rig.log_tails(20)).into());
    }
    // Settled: the next cycles compute the same status and write nothing.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = pod_group_writes(&rig.server, &ns, "counts")?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let after = pod_group_writes(&rig.server, &ns, "counts")?;
    assert_eq!(before, after, "an unchanged status is not rewritten");
    assert!(before >= 2, "the counts were written: {before} updates");

    let lonely = e2e::pods(&rig.admin, &ns).await?.remove("lonely").ok_or("the pod without PodGroup")?;
    assert_eq!(e2e::node_of(&lonely), "", "a pod without PodGroup is not scheduled, as in Volcano");
    let log = rig.schedulers[0].log_text();
    let said = log.matches(&format!("pod {ns}/lonely names no PodGroup")).count();
    assert_eq!(said, 1, "said once, naming the pod:\n{log}");
    assert!(log.contains("basalt controller"), "and the controller it waits for");
    assert!(!log.contains('\u{1b}'), "stderr is a file: no ANSI escape codes");
    let errors = kubelet.stop().await;
    assert!(errors.is_empty(), "{errors:?}");
    rig.assert_running();
    Ok(())
}
