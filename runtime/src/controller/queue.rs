//! One worker's rate-limited work queue (client-go's workqueue as Volcano's job controller uses
//! it): a request already waiting is not queued twice; a failed request is re-added after an
//! exponential backoff (5 ms × 2^failures, at most 1000 s, client-go's item limiter) and its
//! failure count is kept until [`WorkQueue::forget`].

use super::request::Request;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// First backoff.
pub const BASE_DELAY: Duration = Duration::from_millis(5);
/// Largest backoff.
pub const MAX_DELAY: Duration = Duration::from_secs(1000);

struct Inner<T> {
    items: VecDeque<T>,
    queued: HashSet<T>,
    failures: HashMap<T, u32>,
}

impl<T> Default for Inner<T> {
    fn default() -> Self {
        Inner { items: VecDeque::new(), queued: HashSet::new(), failures: HashMap::new() }
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

    /// Adds `r` unless an equal request is already waiting.
    pub fn add(&self, r: T) {
        let mut g = self.lock();
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

    /// Re-adds a failed `r` after its backoff; returns how many times it has failed.
    pub fn add_rate_limited(&self, r: T) -> u32 {
        let n = {
            let mut g = self.lock();
            let n = g.failures.entry(r.clone()).or_insert(0);
            *n += 1;
            *n
        };
        self.add_after(r, backoff(n));
        n
    }

    /// How many times `r` has failed since it was last forgotten.
    pub fn failures(&self, r: &T) -> u32 {
        self.lock().failures.get(r).copied().unwrap_or(0)
    }

    /// Clears `r`'s failure count.
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
    fn keys_hash_to_a_stable_worker() {
        assert_eq!(worker_of("ns/a", 3), worker_of("ns/a", 3));
        assert!(worker_of("ns/a", 3) < 3);
        assert_eq!(worker_of("ns/a", 1), 0);
        let spread: HashSet<usize> = (0..50).map(|i| worker_of(&format!("ns/j{i}"), 3)).collect();
        assert_eq!(spread.len(), 3, "50 keys reach every worker");
    }
}
