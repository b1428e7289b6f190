//! The worker loop the job, PodGroup, Queue, CronJob and sharding controllers share (client-go's
//! `processNextWorkItem` as Volcano's controllers use it): take the next item of the worker's
//! [`WorkQueue`], handle it, then forget it, or re-add it after its backoff until it has failed
//! `--max-requeue-num` times (−1: forever), when it is dropped with a warning ([`drain`]) or
//! handed to the caller ([`drain_with`]: the job controller's workers terminate the job). Plus
//! the [`Failure`] a handler returns and two small helpers.
//!
//! This is the controllers' one retry layer: their kube client retries nothing (it is
//! [`crate::plumbing::client::api_client`], kube-rs's retry layer off, as the scheduler's) and
//! each attempt makes each of its calls once, behind the `--kube-api-qps` limiter. A handler's
//! [`Failure`] carries the longest `Retry-After` the server named among the attempt's failed
//! calls ([`crate::plumbing::retry::retry_after`], at most 60 s), and the item is not handled
//! again before it has passed ([`WorkQueue::add_rate_limited`]).
//!
//! The bound (docs/controller.md "Retries"): while every call of an item fails for `F` seconds,
//! the item is attempted, and each of its calls sent, at most
//! `min(1 + ⌊F / R⌋, 1 + ⌊log2(1 + F / 5 ms)⌋, --max-requeue-num + 1)` times, `R` the server's
//! `Retry-After` (that term only when it sends one; 5 ms doubling is the queue's own backoff).

use super::metrics::ControllerMetrics;
use super::queue::WorkQueue;
use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Why an attempt at a work item failed: the message (logged; Events quote it) and the longest
/// `Retry-After` the server named among the attempt's failed calls (`None`: it named none, and
/// the queue's own backoff applies).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Failure {
    /// What failed, naming the object and the call.
    pub message: String,
    /// The server's `Retry-After`, at most [`crate::plumbing::retry::MAX_RETRY_AFTER`].
    pub retry_after: Option<Duration>,
}

impl Failure {
    /// The failed API call `e`, described by `what` (`"Job ns/j: creating PodGroup p"`): the
    /// message `"{what}: {e}"` and the server's `Retry-After` of `e`.
    pub fn api(what: impl Display, e: &kube::Error) -> Failure {
        Failure { message: format!("{what}: {e}"), retry_after: crate::plumbing::retry::retry_after(e) }
    }

    /// The same failure, its message prefixed with `what` (`"{what}: {message}"`).
    pub fn context(self, what: impl Display) -> Failure {
        Failure { message: format!("{what}: {}", self.message), ..self }
    }

    /// The failure an attempt returns for `failures`: the first's message, the longest
    /// `Retry-After` of all (so no call the server asked to wait is repeated early); `None` for
    /// none.
    pub fn first_of(failures: impl IntoIterator<Item = Failure>) -> Option<Failure> {
        let mut it = failures.into_iter();
        let mut first = it.next()?;
        for f in it {
            first.retry_after = first.retry_after.max(f.retry_after);
        }
        Some(first)
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure { message, retry_after: None }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::from(message.to_string())
    }
}

impl Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Drains `q` forever with `handle`; `what` names the item kind in logs (`pod`, `queue`). A
/// failed item is re-added after the queue's backoff or the failure's `Retry-After`, whichever
/// is longer; one that failed `max_requeue` times is forgotten and dropped with a warning.
pub async fn drain<T, F, Fut>(q: WorkQueue<T>, max_requeue: i32, metrics: &ControllerMetrics, what: &'static str, handle: F)
where
    T: Clone + Eq + Hash + Send + Display + 'static,
    F: FnMut(T) -> Fut,
    Fut: Future<Output = Result<(), Failure>>,
{
    let give_up =
        |item: T, e: Failure, n: u32| tracing::warn!("{what} {item}: {e}; retried {n} times (--max-requeue-num): dropped");
    drain_with(q, max_requeue, metrics, what, handle, give_up).await
}

/// [`drain`], with `give_up(item, failure, failures)` called instead of the warning once an item
/// has failed `max_requeue` times (after it is forgotten): the job controller terminates the
/// job there (Volcano's `processNextReq`).
pub async fn drain_with<T, F, Fut, G>(
    q: WorkQueue<T>,
    max_requeue: i32,
    metrics: &ControllerMetrics,
    what: &'static str,
    mut handle: F,
    mut give_up: G,
) where
    T: Clone + Eq + Hash + Send + Display + 'static,
    F: FnMut(T) -> Fut,
    Fut: Future<Output = Result<(), Failure>>,
    G: FnMut(T, Failure, u32),
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
                    match e.retry_after {
                        Some(r) => tracing::debug!("{what} {item}: {e}; retrying in at least {r:?} (Retry-After)"),
                        None => tracing::debug!("{what} {item}: {e}; retrying"),
                    }
                    q.add_rate_limited(item, e.retry_after);
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
                    Err(Failure::from("boom"))
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

    /// A handler failing with `Retry-After` (400 ms here; the server's are whole seconds) for
    /// 1 s: each attempt follows the previous one's failure by at least 400 ms, so there are at
    /// most `1 + ⌊1000 / 400⌋ = 3` (the queue's own 5 ms backoff would allow 8).
    #[tokio::test]
    async fn waits_out_the_servers_retry_after_between_attempts() {
        let r = Duration::from_millis(400);
        let q: WorkQueue<String> = WorkQueue::default();
        let metrics = Arc::new(ControllerMetrics::new());
        let times: Arc<Mutex<Vec<tokio::time::Instant>>> = Arc::default();
        q.add("a".to_string());
        let (q2, m2, t2) = (q.clone(), metrics.clone(), times.clone());
        let task = tokio::spawn(async move {
            drain(q2, -1, &m2, "item", |_| {
                let t = t2.clone();
                async move {
                    lock(&t).push(tokio::time::Instant::now());
                    Err(Failure { message: "429".into(), retry_after: Some(r) })
                }
            })
            .await
        });
        tokio::time::sleep(Duration::from_millis(1000)).await;
        task.abort();
        let times = lock(&times).clone();
        assert!((2..=3).contains(&times.len()), "{} attempts in 1 s with Retry-After {r:?}", times.len());
        for w in times.windows(2) {
            assert!(w[1] - w[0] >= r, "attempts {:?} apart, Retry-After {r:?}", w[1] - w[0]);
        }
    }

    #[test]
    fn a_failure_keeps_the_first_message_and_the_longest_retry_after() {
        let f = |m: &str, r: Option<u64>| Failure { message: m.into(), retry_after: r.map(Duration::from_secs) };
        let all = Failure::first_of([f("a", None), f("b", Some(3)), f("c", Some(1))]);
        assert_eq!(all, Some(f("a", Some(3))));
        assert_eq!(Failure::first_of(Vec::new()), None);
        assert_eq!(f("x", Some(2)).context("Job ns/j"), f("Job ns/j: x", Some(2)));
        let mut s = kube::core::Status::failure("slow down", "TooManyRequests");
        s.code = 429;
        s.details = Some(kube::core::response::StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes: Vec::new(),
            retry_after_seconds: 2,
        });
        let e = Failure::api("Job ns/j: creating PodGroup p", &kube::Error::Api(Box::new(s)));
        assert_eq!(e.retry_after, Some(Duration::from_secs(2)));
        assert!(e.message.starts_with("Job ns/j: creating PodGroup p: "), "{}", e.message);
        assert_eq!(Failure::from("no API call").retry_after, None);
    }
}
