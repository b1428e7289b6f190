//! The Lease store and election of `basalt_runtime::plumbing::leader` against the shared test
//! apiserver (formerly an ignored unit test that needed a `KUBECONFIG`): two candidates on one
//! Lease of their own (a random name in `volcano-system`, so no other test's Lease is touched),
//! a stale write refused with 409 and mapped to [`StoreError::Conflict`], a renewal that keeps
//! `acquireTime`, the standby waiting while the holder renews and taking over at once when it
//! releases (client-go's election, volcano-behaviour.md §7). Real time, about 6 s.

use crate::support::{self, ensure_namespace, TestApiserver};
use basalt_runtime::plumbing::leader::{acquire, KubeLeaseStore, LeaderConfig, LeaseStore, StoreError, DEFAULT_NAMESPACE};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use std::time::Duration;

fn spec_of(lease: &Lease) -> LeaseSpec {
    lease.spec.clone().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_candidates_elect_renew_and_hand_over_a_real_lease() -> support::Result<()> {
    let server = TestApiserver::shared()?;
    let client = server.admin_client().await?;
    ensure_namespace(&client, DEFAULT_NAMESPACE).await?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.subsec_nanos();
    let name = format!("basalt-live-test-{}-{nanos}", std::process::id());
    let mut a_cfg = LeaderConfig::volcano_defaults(name.clone(), "candidate-a");
    let mut b_cfg = LeaderConfig::volcano_defaults(name.clone(), "candidate-b");
    for c in [&mut a_cfg, &mut b_cfg] {
        c.lease_duration = Duration::from_secs(3);
        c.renew_deadline = Duration::from_secs(2);
        c.retry_period = Duration::from_millis(500);
    }
    let store = KubeLeaseStore::new(client.clone(), DEFAULT_NAMESPACE, &name);
    let a = tokio::time::timeout(Duration::from_secs(10), acquire(client.clone(), a_cfg)).await.map_err(|_| "A acquires")??;
    assert!(a.is_leading());
    let first = store.get().await?.ok_or("the Lease was created")?;
    assert_eq!(spec_of(&first).holder_identity.as_deref(), Some("candidate-a"));

    // A write against a stale resourceVersion is a 409, mapped to Conflict.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let mut stale = first.clone();
    stale.spec.get_or_insert_with(Default::default).holder_identity = Some("intruder".into());
    assert_eq!(store.replace(stale).await.err(), Some(StoreError::Conflict));
    let renewed = store.get().await?.ok_or("the Lease exists")?;
    assert_ne!(renewed.metadata.resource_version, first.metadata.resource_version, "A renewed");
    assert_eq!(spec_of(&renewed).acquire_time, spec_of(&first).acquire_time);

    // B waits while A renews; takes over at once after A releases.
    let b = tokio::spawn(acquire(client.clone(), b_cfg));
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(!b.is_finished(), "a fresh lease held by A is not taken");
    assert!(a.is_leading());
    a.release().await;
    let b = tokio::time::timeout(Duration::from_secs(5), b).await.map_err(|_| "B takes over within 5 s")???;
    assert!(b.is_leading());
    let now = spec_of(&store.get().await?.ok_or("the Lease exists")?);
    assert_eq!(now.holder_identity.as_deref(), Some("candidate-b"));
    assert_eq!(now.lease_transitions, Some(1));
    b.release().await;
    Ok(())
}
