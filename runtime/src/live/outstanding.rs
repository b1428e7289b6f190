//! The count of binds queued or in flight, which events and reporting PodGroup updates wait for
//! ([`crate::live::status::WriterConfig::binds_outstanding`]): a counter with a wake-up when it
//! reaches 0, so a waiting write sleeps until the binds are done (or its deadline passes)
//! instead of polling.

use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;
use tokio::time::Instant;

/// Binds queued or in flight: the runner counts one up before it sends a bind to the binder
/// and down when the binder reports it.
#[derive(Debug, Default)]
pub struct BindsOutstanding {
    count: AtomicUsize,
    idle: Notify,
}

impl BindsOutstanding {
    /// A count of 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// One more bind queued.
    pub fn add(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    /// One bind done (bound, refused or dropped); wakes every waiter when none remains. A call
    /// without a matching [`BindsOutstanding::add`] leaves the count at 0.
    pub fn done(&self) {
        let before = self.count.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| Some(c.saturating_sub(1)));
        if matches!(before, Ok(1) | Ok(0)) {
            self.idle.notify_waiters();
        }
    }

    /// Sets the count (tests and resets); waking the waiters when it is 0.
    pub fn set(&self, n: usize) {
        self.count.store(n, Ordering::Release);
        if n == 0 {
            self.idle.notify_waiters();
        }
    }

    /// Binds queued or in flight now.
    pub fn get(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Waits until no bind is outstanding or `until` passes; true when none is outstanding.
    pub async fn wait_idle_until(&self, until: Instant) -> bool {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            // Registered before the check, so a count-down to 0 between the check and the
            // await still wakes this waiter.
            idle.as_mut().enable();
            if self.get() == 0 {
                return true;
            }
            if tokio::time::timeout_at(until, idle).await.is_err() {
                return self.get() == 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn a_waiter_wakes_when_the_last_bind_is_done() {
        let b = Arc::new(BindsOutstanding::new());
        b.add();
        b.add();
        let waiter = tokio::spawn({
            let b = b.clone();
            async move { b.wait_idle_until(Instant::now() + Duration::from_secs(30)).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        b.done();
        assert!(!waiter.is_finished(), "one bind remains");
        b.done();
        let idle = tokio::time::timeout(Duration::from_secs(5), waiter).await.expect("woken").expect("joined");
        assert!(idle, "no bind outstanding");
        assert_eq!(b.get(), 0);
    }

    #[tokio::test]
    async fn a_waiter_gives_up_at_its_deadline() {
        let b = BindsOutstanding::new();
        b.add();
        assert!(!b.wait_idle_until(Instant::now() + Duration::from_millis(30)).await, "the bind is still outstanding");
        b.done();
        b.done();
        assert_eq!(b.get(), 0, "an extra count-down stays at 0");
        assert!(b.wait_idle_until(Instant::now()).await, "idle at once");
    }
}
