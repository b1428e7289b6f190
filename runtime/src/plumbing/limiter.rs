//! Client-side request rate limit shared by every API write (client-go's token bucket behind
//! `--kube-api-qps` / `--kube-api-burst`): `burst` tokens at most, refilled at `qps` per second;
//! a request waits for a token.

use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// A token bucket. `qps <= 0` means unlimited.
#[derive(Debug)]
pub struct RateLimiter {
    qps: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl RateLimiter {
    /// A bucket of `burst` tokens (at least 1) refilled at `qps` per second, starting full.
    pub fn new(qps: f64, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        RateLimiter { qps, burst, state: Mutex::new((burst, Instant::now())) }
    }

    /// How long the caller must wait before its request may go (0 when a token is free); the
    /// token is taken either way, so waiting callers queue in order.
    fn reserve(&self) -> Duration {
        if self.qps <= 0.0 {
            return Duration::ZERO;
        }
        // Poisoning needs a panic inside this tiny critical section, which cannot happen.
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let (tokens, last) = *st;
        let refilled = (tokens + now.duration_since(last).as_secs_f64() * self.qps).min(self.burst);
        let left = refilled - 1.0;
        *st = (left, now);
        if left >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-left / self.qps)
        }
    }

    /// Waits for a token.
    pub async fn acquire(&self) {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_is_free_then_requests_wait_their_share() {
        let l = RateLimiter::new(10.0, 3);
        for _ in 0..3 {
            assert_eq!(l.reserve(), Duration::ZERO);
        }
        let w = l.reserve();
        assert!(w > Duration::from_millis(90) && w <= Duration::from_millis(100), "{w:?}");
        let w2 = l.reserve();
        assert!(w2 > Duration::from_millis(190) && w2 <= Duration::from_millis(200), "queued callers wait in turn: {w2:?}");
    }

    #[test]
    fn zero_qps_is_unlimited() {
        let l = RateLimiter::new(0.0, 1);
        for _ in 0..100 {
            assert_eq!(l.reserve(), Duration::ZERO);
        }
    }
}
