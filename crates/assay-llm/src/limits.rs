//! Bounds on outgoing requests: an in-flight limit and optional
//! requests-per-minute and tokens-per-minute buckets, shared by every
//! caller of a provider (chat and embeddings alike).

use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

/// The limits of one provider; hold it in an `Arc` to share it.
#[derive(Debug)]
pub struct Limiter {
    in_flight: Semaphore,
    rpm: Option<TokenBucket>,
    tpm: Option<TokenBucket>,
}

impl Limiter {
    /// A limiter allowing `concurrency` requests in flight (at least one)
    /// and, when given, `rpm` requests and `tpm` tokens per minute.
    pub fn new(concurrency: usize, rpm: Option<u32>, tpm: Option<u32>) -> Self {
        Limiter {
            in_flight: Semaphore::new(concurrency.max(1)),
            rpm: rpm.map(TokenBucket::per_minute),
            tpm: tpm.map(TokenBucket::per_minute),
        }
    }

    /// Waits for the rate buckets and a free slot. The slot is held until
    /// the returned permit drops, i.e. for one attempt, not across backoff.
    pub(crate) async fn acquire(&self, estimated_tokens: u64) -> Option<SemaphorePermit<'_>> {
        if let Some(rpm) = &self.rpm {
            rpm.take(1.0).await;
        }
        if let Some(tpm) = &self.tpm {
            tpm.take(estimated_tokens as f64).await;
        }
        // The semaphore is never closed, so this only fails if it were.
        self.in_flight.acquire().await.ok()
    }
}

/// A bucket holding up to one minute's allowance, refilled continuously.
#[derive(Debug)]
struct TokenBucket {
    capacity: f64,
    per_sec: f64,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    fn per_minute(n: u32) -> Self {
        let capacity = f64::from(n.max(1));
        TokenBucket {
            capacity,
            per_sec: capacity / 60.0,
            state: Mutex::new((capacity, Instant::now())),
        }
    }

    /// Takes `amount` (capped at the capacity, so a huge request still
    /// passes once the bucket is full), sleeping until it is available.
    async fn take(&self, amount: f64) {
        let amount = amount.min(self.capacity);
        loop {
            let wait = {
                let Ok(mut state) = self.state.lock() else {
                    return;
                };
                let now = Instant::now();
                let (tokens, last) = *state;
                let tokens = (tokens + now.duration_since(last).as_secs_f64() * self.per_sec)
                    .min(self.capacity);
                if tokens >= amount {
                    *state = (tokens - amount, now);
                    return;
                }
                *state = (tokens, now);
                Duration::from_secs_f64((amount - tokens) / self.per_sec)
            };
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn rpm_bucket_spaces_requests_after_the_burst() {
        let limiter = Limiter::new(4, Some(60), None);
        let start = tokio::time::Instant::now();
        for _ in 0..60 {
            drop(limiter.acquire(0).await);
        }
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "a full minute's allowance is available at once"
        );
        drop(limiter.acquire(0).await);
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(990) && waited <= Duration::from_millis(1010),
            "{waited:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn tpm_bucket_waits_for_enough_tokens() {
        let limiter = Limiter::new(4, None, Some(600));
        let start = tokio::time::Instant::now();
        drop(limiter.acquire(600).await);
        drop(limiter.acquire(100).await);
        let waited = start.elapsed();
        // 100 tokens at 10 tokens per second.
        assert!(
            waited >= Duration::from_millis(9990) && waited <= Duration::from_millis(10010),
            "{waited:?}"
        );
    }
}
