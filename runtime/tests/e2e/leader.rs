//! Leader election between two `basalt scheduler` processes on the real test apiserver: only
//! the holder of the `volcano-system/volcano` Lease ever binds (the audit log's User-Agent names
//! each process's identity), and after the leader is killed with SIGKILL the other takes over
//! within the lease duration plus three retry periods (4 s + 3 × 1 s: the standby notes the
//! leader's last renewal up to one jittered retry period late, client-go's jitter adds up to 1.2
//! periods to each wait, and it tries again one jittered period after the lease ran out) and binds
//! the rest.

use crate::{e2e, support};

use e2e::process::SchedulerProcess;
use e2e::{bound_count, create_queues, nodes, Gangs, SCHEDULER_USER};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use std::time::{Duration, Instant};
use support::{apply_scheduler_rbac, fresh_namespace, install_volcano_crds, wait_for, TestApiserver};

const LEASE: Duration = Duration::from_secs(4);
const RETRY: Duration = Duration::from_secs(1);

async fn holder(client: &kube::Client) -> support::Result<Option<String>> {
    let lease = Api::<Lease>::namespaced(client.clone(), "volcano-system").get_opt("volcano").await?;
    Ok(lease.and_then(|l| l.spec).and_then(|s| s.holder_identity).filter(|h| !h.is_empty()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_binds_and_the_standby_takes_over_after_sigkill() -> support::Result<()> {
    let server = TestApiserver::start()?;
    let admin = server.admin_client().await?;
    install_volcano_crds(&admin).await?;
    apply_scheduler_rbac(&admin).await?;
    let ns = fresh_namespace(&admin, "leader").await?;
    nodes(&admin, "node", 20, "16", "64Gi").await?;
    let queues = vec!["q0".to_string()];
    create_queues(&admin, &queues).await?;
    let args = [
        "--leader-elect=true",
        "--leader-elect-lease-duration=4s",
        "--leader-elect-renew-deadline=3s",
        "--leader-elect-retry-period=1s",
    ];
    let mut a = SchedulerProcess::start(server.dir(), "a", &server.scheduler_kubeconfig(), &args)?;
    let first = wait_for("a leader", Duration::from_secs(30), || async { holder(&admin).await }).await?;
    let mut b = SchedulerProcess::start(server.dir(), "b", &server.scheduler_kubeconfig(), &args)?;

    let batch1 = Gangs { namespace: &ns, prefix: "one", groups: 5, gang: 10, queues: &queues, cpu: "500m", memory: "1Gi" }
        .create(&admin)
        .await?;
    wait_for("batch 1 bound", Duration::from_secs(60), || async {
        Ok((bound_count(&admin, &ns).await? == batch1.len()).then_some(()))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(holder(&admin).await?.as_deref(), Some(first.as_str()), "the first leader kept the lease");

    let audit = server.audit()?.by_user(SCHEDULER_USER);
    let binds = audit.filter(|e| e.is_binding() && e.succeeded());
    assert_eq!(binds.events().len(), batch1.len());
    for e in binds.events() {
        assert!(e.user_agent.contains(&first), "binding of {} by a process that is not the leader: {}", e.name, e.user_agent);
    }

    // Kill the leader; the standby must take over within the lease duration, then bind batch 2.
    let (leader, standby) = if a.log_text().contains(&first) { (&mut a, &mut b) } else { (&mut b, &mut a) };
    leader.kill();
    let killed = Instant::now();
    let second = wait_for("a new leader", LEASE + RETRY * 3 + Duration::from_secs(5), || async {
        Ok(holder(&admin).await?.filter(|h| *h != first))
    })
    .await?;
    let takeover = killed.elapsed();
    assert!(takeover <= LEASE + RETRY * 3, "takeover took {takeover:?}");
    let batch2 = Gangs { namespace: &ns, prefix: "two", groups: 5, gang: 10, queues: &queues, cpu: "500m", memory: "1Gi" }
        .create(&admin)
        .await?;
    wait_for("batch 2 bound", Duration::from_secs(60), || async {
        Ok((bound_count(&admin, &ns).await? == batch1.len() + batch2.len()).then_some(()))
    })
    .await?;
    let audit = server.audit()?.by_user(SCHEDULER_USER);
    let counts = audit.binding_counts();
    for name in batch1.iter().chain(&batch2) {
        let c = counts.get(&(ns.clone(), name.clone())).copied().unwrap_or_default();
        assert_eq!(c.succeeded, 1, "pod {name}: {c:?}");
    }
    for e in audit.filter(|e| e.is_binding() && e.succeeded() && e.name.starts_with("two-")).events() {
        assert!(e.user_agent.contains(&second), "batch 2 bound by {} instead of the new leader", e.user_agent);
    }
    assert!(standby.log_text().contains(&second), "the standby is the new leader");
    assert_eq!(standby.terminate(), Some(0));
    Ok(())
}
