//! One worker's rate-limited work queue (client-go's workqueue as Volcano's job controller uses
//! it): a request already waiting is not queued twice; a failed request is re-added after an
//! exponential backoff (5 ms × 2^failures, at most 1000 s, client-go's item limiter) and its
//! failure count is kept until [`WorkQueue::forget`].
//!
//! The controllers' one retry layer (docs/controller.md "Retries"): when the failure carried the
//! server's `Retry-After: R` (read by [`crate::plumbing::retry::retry_after`], at most
//! [`MAX_RETRY_AFTER`]), the item waits `max(backoff, R)` instead, and an equal item added
//! meanwhile (a watch event) joins the waiting one rather than being handled before `R` has
//! passed. [`super::retry`] states the bound on calls this gives.

use super::request::Request;
pub use crate::plumbing::retry::MAX_RETRY_AFTER;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// First backoff.
pub const BASE_DELAY: Duration = Duration::from_millis(5);
/// Largest backoff.
pub const MAX_DELAY: Duration = Duration::from_secs(1000);

struct Inner<T> {
    items: VecDeque<T>,
    queued: HashSet<T>,
    failures: HashMap<T, u32>,
    /// Items waiting out the server's `Retry-After`, with the time they may be handled again
    /// (tokio time): an [`WorkQueue::add`] before then is absorbed by the waiting re-add.
    held: HashMap<T, Instant>,
}

impl<T> Default for Inner<T> {
    fn default() -> Self {
        Inner { items: VecDeque::new(), queued: HashSet::new(), failures: HashMap::new(), held: HashMap::new() }
    }
}

/// A deduplicating FIFO with per-item backoff. Cheap to clone (shared). Items are the job
/// controller's [`Request`]s unless said otherwise (the PodGroup and Queue controllers queue
/// their own keys).
pub struct WorkQueue<T = Request> {
    inner: Arc<Mutex<Inner<T>>>,
    notify: Arc<Notify>,
}

impl<T> Clone for WorkQueue<T> {
    fn clone(&self) -> Self {
        WorkQueue { inner: self.inner.clone(), notify: self.notify.clone() }
    }
}

impl<T> Default for WorkQueue<T> {
    fn default() -> Self {
        WorkQueue { inner: Arc::default(), notify: Arc::default() }
    }
}

impl<T: Clone + Eq + Hash + Send + 'static> WorkQueue<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<T>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds `r` unless an equal request is already waiting, in the queue or for the end of a
    /// server's `Retry-After` ([`WorkQueue::add_rate_limited`]; it is queued then).
    pub fn add(&self, r: T) {
        let mut g = self.lock();
        if let Some(&until) = g.held.get(&r) {
            if Instant::now() < until {
                return;
            }
            g.held.remove(&r);
        }
        if g.queued.insert(r.clone()) {
            g.items.push_back(r);
            drop(g);
            self.notify.notify_one();
        }
    }

    /// Adds `r` after `delay` (needs a tokio runtime).
    pub fn add_after(&self, r: T, delay: Duration) {
        let q = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            q.add(r);
        });
    }

    /// Re-adds a failed `r` after its backoff, or after `retry_after` (the server's
    /// `Retry-After` of the failure, cut to [`MAX_RETRY_AFTER`]) when that is longer, and holds
    /// it until then: equal items [`WorkQueue::add`]ed meanwhile wait with it. Returns how many
    /// times `r` has failed.
    pub fn add_rate_limited(&self, r: T, retry_after: Option<Duration>) -> u32 {
        let (n, delay) = {
            let mut g = self.lock();
            let n = g.failures.entry(r.clone()).or_insert(0);
            *n += 1;
            let n = *n;
            let delay = retry_delay(n, retry_after);
            if delay > backoff(n) {
                let until = Instant::now() + delay;
                let at = g.held.entry(r.clone()).or_insert(until);
                *at = (*at).max(until);
            }
            (n, delay)
        };
        let q = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            q.release(r);
        });
        n
    }

    /// The end of a [`WorkQueue::add_rate_limited`] wait: `r` is queued unless a longer hold
    /// (a later failure's `Retry-After`) still runs, whose own re-add will queue it.
    fn release(&self, r: T) {
        {
            let mut g = self.lock();
            match g.held.get(&r) {
                Some(&until) if Instant::now() < until => return,
                Some(_) => {
                    g.held.remove(&r);
                }
                None => {}
            }
        }
        self.add(r);
    }

    /// How many times `r` has failed since it was last forgotten.
    pub fn failures(&self, r: &T) -> u32 {
        self.lock().failures.get(r).copied().unwrap_or(0)
    }

    /// Clears `r`'s failure count (a `Retry-After` hold still runs to its end).
    pub fn forget(&self, r: &T) {
        self.lock().failures.remove(r);
    }

    /// Requests waiting.
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next request, waiting for one.
    pub async fn next(&self) -> T {
        loop {
            let notified = self.notify.notified();
            {
                let mut g = self.lock();
                if let Some(r) = g.items.pop_front() {
                    g.queued.remove(&r);
                    return r;
                }
            }
            notified.await;
        }
    }
}

/// The backoff after the `n`th failure (n ≥ 1).
pub fn backoff(n: u32) -> Duration {
    let exp = n.saturating_sub(1).min(30);
    BASE_DELAY.saturating_mul(1u32 << exp).min(MAX_DELAY)
}

/// The wait before an item that failed for the `n`th time (n ≥ 1) is handled again: its
/// [`backoff`], or the server's `retry_after` (cut to [`MAX_RETRY_AFTER`]) when longer.
pub fn retry_delay(n: u32, retry_after: Option<Duration>) -> Duration {
    backoff(n).max(retry_after.unwrap_or(Duration::ZERO).min(MAX_RETRY_AFTER))
}

/// The worker of job `key` among `workers` (FNV-1a 32 of the key, as Volcano's `genHash`).
pub fn worker_of(key: &str, workers: usize) -> usize {
    let mut h: u32 = 0x811c_9dc5;
    for b in key.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (h as usize) % workers.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::request::Event;

    #[tokio::test]
    async fn dedups_and_orders() {
        let q = WorkQueue::default();
        let a = Request::job("ns", "a", Event::OutOfSync);
        let b = Request::job("ns", "b", Event::OutOfSync);
        q.add(a.clone());
        q.add(b.clone());
        q.add(a.clone());
        assert_eq!(q.len(), 2);
        assert_eq!(q.next().await, a);
        q.add(a.clone());
        assert_eq!(q.next().await, b);
        assert_eq!(q.next().await, a);
        assert!(q.is_empty());
    }

    #[test]
    fn backoff_doubles_to_the_cap() {
        assert_eq!(backoff(1), Duration::from_millis(5));
        assert_eq!(backoff(2), Duration::from_millis(10));
        assert_eq!(backoff(5), Duration::from_millis(80));
        assert_eq!(backoff(40), MAX_DELAY);
    }

    #[test]
    fn retry_after_wins_when_longer_and_is_capped() {
        let ms = Duration::from_millis;
        assert_eq!(retry_delay(1, None), ms(5), "no Retry-After: the backoff");
        assert_eq!(retry_delay(1, Some(Duration::from_secs(2))), Duration::from_secs(2));
        assert_eq!(retry_delay(5, Some(ms(10))), ms(80), "a shorter Retry-After: the backoff");
        assert_eq!(retry_delay(1, Some(Duration::from_secs(3600))), MAX_RETRY_AFTER);
        assert_eq!(retry_delay(40, Some(Duration::from_secs(3600))), MAX_DELAY, "the backoff's own cap is longer");
    }

    /// Waits for the next item, at most `within`.
    async fn next_within<T: Clone + Eq + Hash + Send + 'static>(q: &WorkQueue<T>, within: Duration) -> Option<T> {
        tokio::time::timeout(within, q.next()).await.ok()
    }

    // Real tokio time (the crate's tokio has no `test-util` for paused time): the lower bounds
    // hold by `sleep`'s guarantee; the upper bounds are generous.
    #[tokio::test]
    async fn an_item_that_failed_with_retry_after_is_not_handled_before_it() {
        let q: WorkQueue<String> = WorkQueue::default();
        let r = Duration::from_millis(300);
        let t0 = Instant::now();
        assert_eq!(q.add_rate_limited("a".into(), Some(r)), 1);
        // A watch event queues the same item meanwhile: it waits with the held one.
        q.add("a".into());
        assert!(q.is_empty(), "an equal item added during the Retry-After joins the waiting one");
        q.add("b".into());
        assert_eq!(next_within(&q, Duration::from_secs(5)).await.as_deref(), Some("b"), "other items are not held");
        assert_eq!(next_within(&q, Duration::from_secs(5)).await.as_deref(), Some("a"));
        assert!(t0.elapsed() >= r, "re-added after {:?}, before the server's {r:?}", t0.elapsed());
        assert_eq!(next_within(&q, Duration::from_millis(500)).await, None, "handled once, not once per add");
        assert_eq!(q.failures(&"a".to_string()), 1);
        // The hold is over: an add queues at once.
        q.add("a".into());
        assert_eq!(q.len(), 1);
    }

    #[tokio::test]
    async fn without_retry_after_the_backoff_applies() {
        let q: WorkQueue<String> = WorkQueue::default();
        let t0 = Instant::now();
        q.add_rate_limited("a".into(), None);
        assert_eq!(next_within(&q, Duration::from_millis(250)).await.as_deref(), Some("a"), "5 ms backoff");
        assert!(t0.elapsed() >= backoff(1));
        q.add_rate_limited("a".into(), None);
        q.add("a".into());
        assert_eq!(q.len(), 1, "without Retry-After an add queues at once (client-go's queue)");
        assert_eq!(q.failures(&"a".to_string()), 2);
    }

    #[tokio::test]
    async fn a_later_longer_retry_after_extends_the_hold() {
        let q: WorkQueue<String> = WorkQueue::default();
        let t0 = Instant::now();
        q.add_rate_limited("a".into(), Some(Duration::from_millis(100)));
        q.add_rate_limited("a".into(), Some(Duration::from_millis(400)));
        assert_eq!(next_within(&q, Duration::from_secs(5)).await.as_deref(), Some("a"));
        assert!(t0.elapsed() >= Duration::from_millis(400), "released after {:?}", t0.elapsed());
        assert_eq!(next_within(&q, Duration::from_millis(300)).await, None, "one re-add for both");
    }

    #[test]
    fn keys_hash_to_a_stable_worker() {
        assert_eq!(worker_of("ns/a", 3), worker_of("ns/a", 3));
        assert!(worker_of("ns/a", 3) < 3);
        assert_eq!(worker_of("ns/a", 1), 0);
        let spread: HashSet<usize> = (0..50).map(|i| worker_of(&format!("ns/j{i}"), 3)).collect();
        assert_eq!(spread.len(), 3, "50 keys reach every worker");
    }
}
