//! The one retry policy of every API write loop (the binder, the status writer, the Event
//! recorder, the gate-removal workers, the controllers): the kube client retries nothing
//! ([`crate::plumbing::client::api_client`] turns kube-rs's own retry layer off, which would
//! otherwise retry 429/503/504 up to 15 times inside a single call, unseen by these loops and
//! past the QPS limiter), and each loop makes at most its stated number of calls per object,
//! every call taking a token of the shared [`crate::plumbing::limiter::RateLimiter`], waiting
//! between calls [`Backoff::delay`]: the loop's own backoff (doubling, capped), or the server's
//! `Retry-After` (`details.retryAfterSeconds` of a 429/5xx Status, which the API server sends
//! with its `Retry-After` header) when that is longer, capped at [`MAX_RETRY_AFTER`].
//!
//! The bound, per object write: during a fault of `F` seconds in which every call fails, a loop
//! of at most `A` calls whose waits are at least `w` each sends at most `min(A, 1 + ⌊F / w⌋)`
//! calls for that write; with `Retry-After: R` every wait is at least `R` (`w ≥ R`). The binder
//! also waits `R` before it reports a bind that ended on such an answer, so the next cycle's
//! bind of the same pod follows at least `R` after its last call and one pod's binding calls
//! stay at most `1 + ⌊F / R⌋` during the fault (docs/live-scheduler.md "One retry policy").

use std::time::Duration;

/// The longest server `Retry-After` a loop honours (a larger value is cut to this, so a
/// misbehaving server cannot park a write for hours).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The server's `Retry-After` of a failed call (`details.retryAfterSeconds` of its Status,
/// capped at [`MAX_RETRY_AFTER`]); `None` when the server named none or did not answer.
pub fn retry_after(e: &kube::Error) -> Option<Duration> {
    match e {
        kube::Error::Api(s) => s
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|&s| s > 0)
            .map(|s| Duration::from_secs(u64::from(s)).min(MAX_RETRY_AFTER)),
        _ => None,
    }
}

/// A loop's waits between its calls for one object: `first`, doubling up to `cap`, or the
/// server's `Retry-After` when longer.
#[derive(Clone, Debug)]
pub struct Backoff {
    next: Duration,
    cap: Duration,
}

impl Backoff {
    /// Waits starting at `first`, doubling, never above `cap` (unless the server asks for
    /// longer).
    pub fn new(first: Duration, cap: Duration) -> Self {
        Backoff { next: first.min(cap), cap }
    }

    /// The wait before the next call after the failure `e` (`None`: a failure without an API
    /// answer, such as a timeout): the loop's own step, or the server's `Retry-After` if longer.
    pub fn delay(&mut self, e: Option<&kube::Error>) -> Duration {
        let own = self.next;
        self.next = (self.next * 2).min(self.cap);
        own.max(e.and_then(retry_after).unwrap_or(Duration::ZERO))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::response::StatusDetails;
    use kube::core::Status;

    fn api(code: u16, retry_after: u32) -> kube::Error {
        let mut s = Status::failure("x", "");
        s.code = code;
        if retry_after > 0 {
            s.details = Some(StatusDetails {
                name: String::new(),
                group: String::new(),
                kind: String::new(),
                uid: String::new(),
                causes: Vec::new(),
                retry_after_seconds: retry_after,
            });
        }
        kube::Error::Api(Box::new(s))
    }

    #[test]
    fn own_backoff_doubles_up_to_its_cap() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(350));
        let got: Vec<u128> = (0..4).map(|_| b.delay(Some(&api(500, 0))).as_millis()).collect();
        assert_eq!(got, vec![100, 200, 350, 350]);
    }

    #[test]
    fn retry_after_wins_when_longer_and_is_capped() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
        assert_eq!(b.delay(Some(&api(429, 2))), Duration::from_secs(2));
        assert_eq!(b.delay(None), Duration::from_millis(200), "no answer: the own step");
        assert_eq!(retry_after(&api(429, 3600)), Some(MAX_RETRY_AFTER));
        assert_eq!(retry_after(&api(503, 0)), None);
        let io = kube::Error::Service(Box::new(std::io::Error::other("reset")));
        assert_eq!(retry_after(&io), None);
    }
}
