//! Waiting for something the server or a process under test does asynchronously. The deadline
//! only bounds a failing test; it is never the thing asserted.

use super::Result;
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client};
use std::future::Future;
use std::time::Duration;

/// Polls `check` every 50 ms until it returns `Ok(Some(value))`, and returns that value.
/// Errors: `check`'s own error at once, or a timeout after `timeout` naming `what`.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>>>,
{
    wait_for_every(what, timeout, Duration::from_millis(50), check).await
}

/// As [`wait_for`], polling every `period`: for checks that list many objects (a list of
/// thousands of pods is itself load on the server), poll every second rather than every 50 ms.
pub async fn wait_for_every<T, F, Fut>(what: &str, timeout: Duration, period: Duration, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await? {
            return Ok(value);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(format!("timed out after {timeout:?} waiting for {what}").into());
        }
        tokio::time::sleep(period).await;
    }
}

/// Polls pod `namespace/name` until `done(&pod)` holds and returns it. A pod that does not
/// exist (yet) counts as not done. Errors: an API error other than 404, or the timeout (with the
/// pod's last phase and node).
pub async fn wait_for_pod(
    client: &Client,
    namespace: &str,
    name: &str,
    timeout: Duration,
    done: impl Fn(&Pod) -> bool,
) -> Result<Pod> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let last = std::cell::RefCell::new(String::from("not found"));
    let (last_ref, done_ref, api_ref) = (&last, &done, &api);
    let found = wait_for(&format!("Pod {namespace}/{name}"), timeout, move || async move {
        match api_ref.get_opt(name).await? {
            Some(pod) if done_ref(&pod) => Ok(Some(pod)),
            Some(pod) => {
                let phase = pod.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default();
                let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
                *last_ref.borrow_mut() = format!("phase {phase:?}, node {node:?}");
                Ok(None)
            }
            None => Ok(None),
        }
    })
    .await;
    found.map_err(|e| format!("{e} (last seen: {})", last.borrow()).into())
}
