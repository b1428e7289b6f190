//! The node lock of `deviceshare.NodeLockEnable` (Volcano `plugins/util/nodelock`): before a
//! bind that takes device cards, the node gets the lock annotation (`hamivgpu` for vGPU, `gpu`
//! for GPU share; value = now in RFC 3339), which the device plugin removes once it has given the
//! pod its cards. A node whose lock is younger than 5 minutes, or whose lock value is not RFC
//! 3339 (Volcano's `LockNode` returns the parse error), is not locked again: the bind fails and
//! the pod is retried; an older lock is taken over. Volcano writes the lock from the session's allocate; Basalt's binder writes it just
//! before the Binding and removes it again when the Binding fails, so no lock outlives a bind
//! that did not happen.
//!
//! The lock is written with a merge patch that carries the node's `resourceVersion`, so a
//! concurrent writer makes it fail with 409 and the lock is read again (at most
//! [`MAX_LOCK_RETRY`] times, Volcano's `MaxLockRetry`).

use basalt_core::model::NODE_LOCK_EXPIRY_MS;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams};
use kube::Client;

/// Attempts to write a lock (Volcano `MaxLockRetry`).
pub const MAX_LOCK_RETRY: u32 = 5;

/// Whether a lock annotation value still holds at `now_ms` (Volcano `LockNode`): younger than
/// 5 minutes, or not RFC 3339 (`Err` with the parse error: Volcano refuses to lock then).
pub fn lock_holds(value: &str, now_ms: i64) -> Result<bool, String> {
    let t = value.parse::<jiff::Timestamp>().map_err(|e| format!("lock time {value:?} is not RFC 3339: {e}"))?;
    Ok(now_ms.saturating_sub(t.as_millisecond()) <= NODE_LOCK_EXPIRY_MS)
}

/// Takes lock `name` on `node`; `Err` says why not (locked within 5 minutes, a bad lock value,
/// or the API's error after the retries).
pub async fn lock(client: &Client, node: &str, name: &str) -> Result<(), String> {
    let api: Api<Node> = Api::all(client.clone());
    let mut last = String::new();
    for _ in 0..MAX_LOCK_RETRY {
        let n = api.get(node).await.map_err(|e| format!("get node {node}: {e}"))?;
        let now = jiff::Timestamp::now();
        if let Some(v) = n.metadata.annotations.as_ref().and_then(|a| a.get(name)) {
            if lock_holds(v, now.as_millisecond())? {
                return Err(format!("node {node} has been locked within 5 minutes"));
            }
        }
        let body = serde_json::json!({"metadata": {
            "resourceVersion": n.metadata.resource_version,
            "annotations": {name: now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()},
        }});
        match api.patch(node, &PatchParams::default(), &Patch::Merge(&body)).await {
            Ok(_) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Err(format!("failed to lock node {node}, exceeded retry count {MAX_LOCK_RETRY}: {last}"))
}

/// Removes lock `name` from `node` (Volcano `ReleaseNodeLock`); a missing lock is fine.
pub async fn release(client: &Client, node: &str, name: &str) -> Result<(), String> {
    let api: Api<Node> = Api::all(client.clone());
    let body = serde_json::json!({"metadata": {"annotations": {name: null}}});
    api.patch(node, &PatchParams::default(), &Patch::Merge(&body)).await.map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_holds_for_five_minutes_and_a_bad_value_is_refused() {
        let t = "2026-01-01T00:00:00Z".parse::<jiff::Timestamp>().unwrap().as_millisecond();
        assert_eq!(lock_holds("2026-01-01T00:00:00Z", t + 299_000), Ok(true));
        assert_eq!(lock_holds("2026-01-01T00:00:00Z", t + 301_000), Ok(false));
        assert_eq!(lock_holds("2026-01-01T08:00:00+08:00", t + 1000), Ok(true), "offsets are RFC 3339 too");
        assert!(lock_holds("yesterday", t).is_err());
    }
}
