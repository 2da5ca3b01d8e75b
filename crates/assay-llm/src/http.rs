//! The HTTP transport shared by the chat and embeddings clients: limits,
//! per-attempt timeout, bounded body reads, error classification and
//! retries with exponential backoff, full jitter and `Retry-After`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{HeaderMap, CONTENT_TYPE};
use reqwest::StatusCode;

use crate::limits::Limiter;
use crate::spec::{ProviderKind, ProviderOptions};
use crate::{Error, ErrorKind, Secret};

/// Longest error body excerpt kept in an error's detail.
const DETAIL_CHARS: usize = 400;

/// One provider endpoint: client, base URL, key, limits and retry policy.
#[derive(Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    base_url: String,
    key: Option<Secret>,
    limiter: Arc<Limiter>,
    opts: ProviderOptions,
    jitter: AtomicU64,
}

impl Transport {
    pub(crate) fn new(
        provider: ProviderKind,
        opts: &ProviderOptions,
        key: Option<Secret>,
        limiter: Arc<Limiter>,
    ) -> Result<Self, Error> {
        if key.is_none() && provider.requires_key() {
            return Err(Error::new(
                ErrorKind::Auth,
                format!(
                    "no API key for {provider}: set one of {}",
                    opts.api_key_env.join(", ")
                ),
            ));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(opts.connect_timeout)
            .pool_max_idle_per_host(opts.concurrency.max(1))
            .tcp_nodelay(true)
            .build()
            .map_err(|e| Error::new(ErrorKind::Config, format!("cannot build HTTP client: {e}")))?;
        let base_url = opts
            .base_url
            .as_deref()
            .unwrap_or(provider.default_base_url())
            .trim_end_matches('/')
            .to_owned();
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Ok(Transport {
            client,
            base_url,
            key,
            limiter,
            opts: opts.clone(),
            jitter: AtomicU64::new(seed | 1),
        })
    }

    pub(crate) fn base_url(&self) -> &str {
        &self.base_url
    }

    pub(crate) fn options(&self) -> &ProviderOptions {
        &self.opts
    }

    /// POSTs `body` to `path` until it succeeds, fails for good, or the
    /// retry budget is spent. Returns the response body.
    pub(crate) async fn post(
        &self,
        path: &str,
        body: Vec<u8>,
        estimated_tokens: u64,
    ) -> Result<Vec<u8>, Error> {
        let url = format!("{}{path}", self.base_url);
        let mut retries = 0u32;
        loop {
            let outcome = {
                let _slot = self.limiter.acquire(estimated_tokens).await;
                match tokio::time::timeout(
                    self.opts.attempt_timeout,
                    self.attempt(&url, body.clone()),
                )
                .await
                {
                    Ok(r) => r,
                    Err(_) => Err(Error::new(
                        ErrorKind::Timeout,
                        format!("no complete answer within {:?}", self.opts.attempt_timeout),
                    )),
                }
            };
            let err = match outcome {
                Ok(bytes) => return Ok(bytes),
                Err(e) => e,
            };
            if !err.kind().is_retryable() || retries >= self.opts.max_retries {
                let detail = format!("{} (after {} attempt(s))", err.detail(), retries + 1);
                return Err(Error::new(err.kind(), detail).with_retry_after(err.retry_after()));
            }
            let wait = match err.retry_after() {
                Some(w) if w > self.opts.max_retry_after => {
                    let detail = format!(
                        "{}; server asked to wait {w:?}, more than allowed",
                        err.detail()
                    );
                    return Err(Error::new(err.kind(), detail).with_retry_after(Some(w)));
                }
                Some(w) => w,
                None => self.backoff(retries),
            };
            tokio::time::sleep(wait).await;
            retries += 1;
        }
    }

    /// Full jitter: uniform in [0, min(max, base * 2^retry)].
    fn backoff(&self, retry: u32) -> Duration {
        let ceiling = self
            .opts
            .backoff_base
            .saturating_mul(1u32 << retry.min(20))
            .min(self.opts.backoff_max);
        // xorshift64: jitter needs spread, not cryptographic quality.
        let mut x = self.jitter.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.jitter.store(x, Ordering::Relaxed);
        ceiling.mul_f64((x >> 11) as f64 / (1u64 << 53) as f64)
    }

    async fn attempt(&self, url: &str, body: Vec<u8>) -> Result<Vec<u8>, Error> {
        let mut req = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &self.key {
            req = req.bearer_auth(key.expose());
        }
        let mut resp = req.send().await.map_err(|e| self.transport_error(&e))?;
        let status = resp.status();
        let retry_after = retry_after(resp.headers());
        if resp
            .content_length()
            .is_some_and(|n| n > self.opts.max_response_bytes as u64)
        {
            return Err(self.too_large());
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.transport_error(&e))? {
            if bytes.len() + chunk.len() > self.opts.max_response_bytes {
                return Err(self.too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        if status.is_success() {
            return Ok(bytes);
        }
        let kind = match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ErrorKind::Auth,
            StatusCode::TOO_MANY_REQUESTS => ErrorKind::RateLimited,
            StatusCode::REQUEST_TIMEOUT => ErrorKind::Timeout,
            s if s.is_server_error() => ErrorKind::Server,
            _ if is_content_filter(&bytes) => ErrorKind::ContentFilter,
            _ => ErrorKind::Rejected,
        };
        let detail = format!(
            "HTTP {} from {url}: {}",
            status.as_u16(),
            self.scrub(&error_message(&bytes))
        );
        Err(Error::new(kind, detail).with_retry_after(retry_after))
    }

    fn too_large(&self) -> Error {
        Error::new(
            ErrorKind::InvalidResponse,
            format!(
                "response larger than {} bytes",
                self.opts.max_response_bytes
            ),
        )
    }

    fn transport_error(&self, e: &reqwest::Error) -> Error {
        let kind = if e.is_timeout() {
            ErrorKind::Timeout
        } else {
            ErrorKind::Connection
        };
        // The source chain says what actually happened (reset, refused ...).
        let mut detail = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            detail.push_str(": ");
            detail.push_str(&s.to_string());
            source = s.source();
        }
        Error::new(kind, self.scrub(&detail))
    }

    /// Masks the key should a server echo it back in an error message.
    fn scrub(&self, text: &str) -> String {
        match &self.key {
            Some(k) if !k.expose().is_empty() => text.replace(k.expose(), "****"),
            _ => text.to_owned(),
        }
    }
}

/// `retry-after-ms` (OpenAI) or `Retry-After` in seconds; the HTTP-date
/// form is not honoured (backoff applies instead).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    let valid = |x: f64| x.is_finite() && x >= 0.0;
    if let Some(ms) = number("retry-after-ms").filter(|x| valid(*x)) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    number("retry-after")
        .filter(|x| valid(*x) && *x < 1e9)
        .map(Duration::from_secs_f64)
}

fn error_message(body: &[u8]) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error"))
                .or_else(|| v.get("message"))
        })
        .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_owned));
    let text = message.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    text.chars().take(DETAIL_CHARS).collect()
}

fn is_content_filter(body: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    let code = v
        .pointer("/error/code")
        .and_then(|c| c.as_str())
        .unwrap_or("");
    matches!(code, "content_filter" | "content_policy_violation")
}
