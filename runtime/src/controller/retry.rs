//! The worker loop the job, PodGroup and Queue controllers share (client-go's `processNextWorkItem`
//! as Volcano's controllers use it): take the next item of the worker's [`WorkQueue`], handle
//! it, then forget it, or re-add it after its backoff until it has failed `--max-requeue-num`
//! times (−1: forever), when it is dropped with a warning ([`drain`]) or handed to the caller
//! ([`drain_with`]: the job controller's workers terminate the job). Plus two small helpers.

use super::metrics::ControllerMetrics;
use super::queue::WorkQueue;
use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

/// Drains `q` forever with `handle`; `what` names the item kind in logs (`pod`, `queue`). An
/// item that failed `max_requeue` times is forgotten and dropped with a warning.
pub async fn drain<T, F, Fut, E>(q: WorkQueue<T>, max_requeue: i32, metrics: &ControllerMetrics, what: &'static str, handle: F)
where
    T: Clone + Eq + Hash + Send + Display + 'static,
    F: FnMut(T) -> Fut,
    Fut: Future<Output = Result<(), E>>,
    E: Display,
{
    let give_up = |item: T, e: E, n: u32| tracing::warn!("{what} {item}: {e}; retried {n} times (--max-requeue-num): dropped");
    drain_with(q, max_requeue, metrics, what, handle, give_up).await
}

/// [`drain`], with `give_up(item, error, failures)` called instead of the warning once an item
/// has failed `max_requeue` times (after it is forgotten): the job controller terminates the
/// job there (Volcano's `processNextReq`).
pub async fn drain_with<T, F, Fut, E, G>(
    q: WorkQueue<T>,
    max_requeue: i32,
    metrics: &ControllerMetrics,
    what: &'static str,
    mut handle: F,
    mut give_up: G,
) where
    T: Clone + Eq + Hash + Send + Display + 'static,
    F: FnMut(T) -> Fut,
    Fut: Future<Output = Result<(), E>>,
    E: Display,
    G: FnMut(T, E, u32),
{
    loop {
        let item = q.next().await;
        match handle(item.clone()).await {
            Ok(()) => q.forget(&item),
            Err(e) => {
                metrics.record_error();
                let n = q.failures(&item);
                if max_requeue >= 0 && n >= max_requeue as u32 {
                    q.forget(&item);
                    give_up(item, e, n);
                } else {
                    tracing::debug!("{what} {item}: {e}; retrying");
                    q.add_rate_limited(item);
                }
            }
        }
    }
}

/// Locks `m`, taking the data of a poisoned lock (the state is a cache the watches rewrite).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub use crate::plumbing::api_errors::api_code;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn retries_until_max_requeue_then_drops() {
        let q: WorkQueue<String> = WorkQueue::default();
        let metrics = Arc::new(ControllerMetrics::new());
        let calls = Arc::new(AtomicU32::new(0));
        q.add("a".to_string());
        let (q2, m2, c2) = (q.clone(), metrics.clone(), calls.clone());
        let task = tokio::spawn(async move {
            drain(q2, 2, &m2, "item", |_| {
                let c = c2.clone();
                async move {
                    c.fetch_add(1, Ordering::SeqCst);
                    Err("boom".to_string())
                }
            })
            .await
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        task.abort();
        // First try, then two retries (5 ms, 10 ms backoff); the third failure drops it.
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(q.failures(&"a".to_string()), 0, "forgotten once dropped");
        assert!(metrics.encode().contains("basalt_controller_request_errors_total 3"), "{}", metrics.encode());
    }
}
