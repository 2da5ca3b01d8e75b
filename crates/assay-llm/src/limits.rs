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

    /// The limiter `opts` asks for (`concurrency`, `rpm`, `tpm`).
    pub fn from_options(opts: &crate::ProviderOptions) -> Self {
        Limiter::new(opts.concurrency, opts.rpm, opts.tpm)
    }

    /// Waits for the rate buckets and a free slot, debiting `estimated_tokens`
    /// from the tokens-per-minute bucket. The slot is held until the
    /// returned permit drops, i.e. for one attempt, not across backoff; the
    /// debit stays until settled with [`Debit::settle`].
    pub(crate) async fn acquire(
        &self,
        estimated_tokens: u64,
    ) -> (Option<SemaphorePermit<'_>>, Debit<'_>) {
        if let Some(rpm) = &self.rpm {
            rpm.take(1.0).await;
        }
        let debit = match &self.tpm {
            Some(tpm) => Debit {
                bucket: Some(tpm),
                amount: tpm.take(estimated_tokens as f64).await,
            },
            None => Debit {
                bucket: None,
                amount: 0.0,
            },
        };
        // The semaphore is never closed, so this only fails if it were.
        (self.in_flight.acquire().await.ok(), debit)
    }
}

/// Tokens taken from the tokens-per-minute bucket for one request on an
/// estimate. Dropped unsettled (the answer said nothing of its usage, or
/// the attempt failed and what the provider counted is unknown), the
/// estimate stays debited: erring towards staying under the limit.
#[derive(Debug)]
#[must_use = "settle the debit with the real usage, or drop it to keep the estimate"]
pub(crate) struct Debit<'a> {
    bucket: Option<&'a TokenBucket>,
    amount: f64,
}

impl Debit<'_> {
    /// Replaces the estimate with the tokens the provider reports it
    /// counted: the difference is refunded, or charged (the bucket may go
    /// below zero, and later requests wait until it refills).
    pub(crate) fn settle(self, used_tokens: u64) {
        if let Some(bucket) = self.bucket {
            bucket.give_back(self.amount - used_tokens as f64);
        }
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

    /// The tokens in the bucket now, after refilling since the last change.
    fn refilled(&self, state: (f64, Instant), now: Instant) -> f64 {
        let (tokens, last) = state;
        (tokens + now.duration_since(last).as_secs_f64() * self.per_sec).min(self.capacity)
    }

    /// Takes `amount` (capped at the capacity, so a huge request still
    /// passes once the bucket is full), sleeping until it is available.
    /// Returns what was taken.
    async fn take(&self, amount: f64) -> f64 {
        let amount = amount.min(self.capacity);
        loop {
            let wait = {
                let Ok(mut state) = self.state.lock() else {
                    return 0.0;
                };
                let now = Instant::now();
                let tokens = self.refilled(*state, now);
                if tokens >= amount {
                    *state = (tokens - amount, now);
                    return amount;
                }
                *state = (tokens, now);
                Duration::from_secs_f64((amount - tokens) / self.per_sec)
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// Adds `tokens` back (a negative amount charges more), never above the
    /// capacity.
    fn give_back(&self, tokens: f64) {
        if let Ok(mut state) = self.state.lock() {
            let now = Instant::now();
            *state = (
                (self.refilled(*state, now) + tokens).min(self.capacity),
                now,
            );
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

    #[tokio::test(start_paused = true)]
    async fn settling_refunds_what_the_estimate_took_too_much() {
        // 600 tokens per minute: 10 per second.
        let limiter = Limiter::new(4, None, Some(600));
        let start = tokio::time::Instant::now();
        let (_, debit) = limiter.acquire(600).await;
        debit.settle(100);
        // The 500 tokens not used are back at once.
        drop(limiter.acquire(500).await);
        assert_eq!(start.elapsed(), Duration::ZERO);
        // The bucket is empty now: 10 tokens take one second.
        drop(limiter.acquire(10).await);
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(990) && waited <= Duration::from_millis(1010),
            "{waited:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn settling_charges_what_the_estimate_missed() {
        let limiter = Limiter::new(4, None, Some(600));
        let start = tokio::time::Instant::now();
        let (_, debit) = limiter.acquire(100).await;
        // 700 used where 100 were estimated: the bucket owes 100.
        debit.settle(700);
        drop(limiter.acquire(50).await);
        let waited = start.elapsed();
        // 150 tokens at 10 per second.
        assert!(
            waited >= Duration::from_millis(14_990) && waited <= Duration::from_millis(15_010),
            "{waited:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_refund_never_fills_the_bucket_beyond_a_minute() {
        let limiter = Limiter::new(4, None, Some(600));
        let start = tokio::time::Instant::now();
        let (_, debit) = limiter.acquire(10).await;
        tokio::time::sleep(Duration::from_secs(60)).await;
        // Refilled to capacity meanwhile; the refund must not add to it.
        debit.settle(0);
        drop(limiter.acquire(600).await);
        drop(limiter.acquire(10).await);
        let waited = start.elapsed() - Duration::from_secs(60);
        assert!(
            waited >= Duration::from_millis(990) && waited <= Duration::from_millis(1010),
            "{waited:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_tpm_limit_settling_changes_nothing() {
        let limiter = Limiter::new(1, None, None);
        let (permit, debit) = limiter.acquire(1_000_000).await;
        assert!(permit.is_some());
        debit.settle(5);
        drop(permit);
        let start = tokio::time::Instant::now();
        drop(limiter.acquire(1_000_000).await);
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
