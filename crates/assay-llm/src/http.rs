//! The HTTP transport shared by the chat and embeddings clients: limits,
//! per-attempt timeout, bounded body reads, error classification and
//! retries with exponential backoff, full jitter and `Retry-After`.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{HeaderMap, CONTENT_TYPE};

use crate::http1::{self, Http1};
use crate::limits::{Debit, Limiter};
use crate::spec::{ProviderKind, ProviderOptions};
use crate::{Error, FailureKind, Secret};

/// Longest error body excerpt kept in an error's detail.
const DETAIL_CHARS: usize = 400;

/// One provider endpoint: client, base URL, key, limits and retry policy.
#[derive(Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    base_url: String,
    /// `base_url` parsed once: parsing a URL per request (host validation
    /// included) cost several microseconds of client CPU.
    base: reqwest::Url,
    /// The lean HTTP/1.1 client, for a plain-`http` endpoint reached
    /// without a proxy; otherwise requests go through `client`.
    direct: Option<Http1>,
    key: Option<Secret>,
    limiter: Arc<Limiter>,
    opts: ProviderOptions,
    jitter: AtomicU64,
    /// Whether the endpoint has sent an HTTP answer (any status) yet.
    reached: AtomicBool,
}

/// Which HTTP client carries a transport's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// The lean HTTP/1.1 client, where it applies (plain `http`).
    Lean,
    /// reqwest: TLS, proxies.
    Reqwest,
}

impl Route {
    /// Lean unless the environment names a proxy for plain-http requests
    /// (reqwest honours these, and `NO_PROXY`, so such endpoints stay with it).
    fn from_env() -> Route {
        let proxied = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            .iter()
            .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
        if proxied {
            Route::Reqwest
        } else {
            Route::Lean
        }
    }
}

impl Transport {
    pub(crate) fn new(
        provider: ProviderKind,
        opts: &ProviderOptions,
        key: Option<Secret>,
        limiter: Arc<Limiter>,
    ) -> Result<Self, Error> {
        Self::routed(provider, opts, key, limiter, Route::from_env())
    }

    fn routed(
        provider: ProviderKind,
        opts: &ProviderOptions,
        key: Option<Secret>,
        limiter: Arc<Limiter>,
        route: Route,
    ) -> Result<Self, Error> {
        if key.is_none() && provider.requires_key() {
            return Err(Error::new(
                FailureKind::Auth,
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
            // An API endpoint answers where it is asked; not following
            // redirects also spares the per-request policy check.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                Error::new(
                    FailureKind::Config,
                    format!("cannot build HTTP client: {e}"),
                )
            })?;
        let base_url = opts
            .base_url
            .as_deref()
            .unwrap_or(provider.default_base_url())
            .trim_end_matches('/')
            .to_owned();
        let base = reqwest::Url::parse(&base_url)
            .map_err(|e| e.to_string())
            .and_then(|url| match url.scheme() {
                "http" | "https" => Ok(url),
                _ => Err("the scheme must be http or https".to_owned()),
            })
            .map_err(|e| {
                Error::new(
                    FailureKind::Config,
                    format!("bad base URL {:?}: {e}", masked_authority(&base_url)),
                )
            })?;
        // Credentials in the URL are sent, never shown: the URL that
        // identities, errors and logs name has them masked.
        let base_url = if has_userinfo(&base) {
            shown(&base).trim_end_matches('/').to_owned()
        } else {
            base_url
        };
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        let direct = match route {
            // Userinfo is basic auth, which only reqwest sends.
            Route::Lean if !has_userinfo(&base) => {
                Http1::new(&base, opts.concurrency, opts.connect_timeout)
            }
            Route::Lean | Route::Reqwest => None,
        };
        Ok(Transport {
            client,
            base_url,
            base,
            direct,
            key,
            limiter,
            opts: opts.clone(),
            jitter: AtomicU64::new(seed | 1),
            reached: AtomicBool::new(false),
        })
    }

    pub(crate) fn base_url(&self) -> &str {
        &self.base_url
    }

    pub(crate) fn options(&self) -> &ProviderOptions {
        &self.opts
    }

    /// POSTs `body` to `path` until it succeeds, fails for good, or the
    /// retry budget is spent; returns the response body read by `parse`
    /// and the tokens-per-minute debit of the attempt that succeeded, to
    /// settle against the usage the answer reports. Failed attempts keep
    /// their estimate: what the provider counted for them is unknown.
    ///
    /// A success whose body `parse` finds unusable (cut JSON, an error
    /// object, no choices: [`FailureKind::InvalidResponse`]) is sent again
    /// within the same retry budget as a 5xx: gateways and loaded servers
    /// answer 200 with such bodies, and a second attempt is answered.
    ///
    /// A connection that cannot be made at all (refused, unknown host,
    /// TLS) is not retried until the endpoint has answered once: before
    /// that it is a wrong URL or a server that is not up, and the caller
    /// is told at once (see [`Error::is_run_fatal`]); after, it is a
    /// restart or an outage, retried as any transient failure.
    ///
    /// Whatever a server sends is read with the key masked (see
    /// [`Transport::redact`]): a body before it is parsed, and the detail
    /// and raw answer of every error this returns.
    pub(crate) async fn post_metered<T>(
        &self,
        path: &str,
        body: Vec<u8>,
        estimated_tokens: u64,
        parse: impl Fn(Vec<u8>) -> Result<T, Error>,
    ) -> Result<(T, Debit<'_>), Error> {
        self.post_retried(path, body, estimated_tokens, parse)
            .await
            .map_err(|e| self.redact_error(e))
    }

    async fn post_retried<T>(
        &self,
        path: &str,
        body: Vec<u8>,
        estimated_tokens: u64,
        parse: impl Fn(Vec<u8>) -> Result<T, Error>,
    ) -> Result<(T, Debit<'_>), Error> {
        let mut url = self.base.clone();
        url.set_path(&format!("{}{path}", self.base.path().trim_end_matches('/')));
        let mut retries = 0u32;
        loop {
            let (outcome, debit) = {
                let (_slot, debit) = self.limiter.acquire(estimated_tokens).await;
                let outcome = match tokio::time::timeout(
                    self.opts.attempt_timeout,
                    self.attempt(&url, body.clone()),
                )
                .await
                {
                    Ok(r) => r,
                    Err(_) => Err(Error::new(
                        FailureKind::Timeout,
                        format!("no complete answer within {:?}", self.opts.attempt_timeout),
                    )),
                };
                (outcome, debit)
            };
            let (err, retryable) = match outcome.map(&parse) {
                Ok(Ok(parsed)) => return Ok((parsed, debit)),
                // An answer that ended on the token limit or in the
                // provider's filter is an answer: it goes back as it is.
                Ok(Err(e)) if e.kind() != FailureKind::InvalidResponse => return Err(e),
                Ok(Err(e)) => (e, true),
                Err(e) if e.is_endpoint_fault() && !self.reached.load(Ordering::Relaxed) => {
                    (e, false)
                }
                Err(e) => {
                    let transient = e.is_retryable();
                    (e, transient)
                }
            };
            if !retryable || retries >= self.opts.max_retries {
                let detail = format!("{} (after {} attempt(s))", err.detail(), retries + 1);
                return Err(err.with_detail(detail));
            }
            let wait = match err.retry_after() {
                Some(w) if w > self.opts.max_retry_after => {
                    let detail = format!(
                        "{}; server asked to wait {w:?}, more than allowed",
                        err.detail()
                    );
                    return Err(err.with_detail(detail));
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

    async fn attempt(&self, url: &reqwest::Url, body: Vec<u8>) -> Result<Vec<u8>, Error> {
        let (status, retry_after, bytes) = match &self.direct {
            Some(direct) => self.attempt_direct(direct, url, &body).await?,
            None => self.attempt_reqwest(url, body).await?,
        };
        self.reached.store(true, Ordering::Relaxed);
        let bytes = match &self.key {
            Some(key) => key.redact_bytes(bytes),
            None => bytes,
        };
        if (200..300).contains(&status) {
            return Ok(bytes);
        }
        let kind = match status {
            401 | 403 => FailureKind::Auth,
            429 => FailureKind::RateLimited,
            408 => FailureKind::Timeout,
            500..=599 => FailureKind::Server,
            _ if is_content_filter(&bytes) => FailureKind::ContentFilter,
            _ => FailureKind::Rejected,
        };
        // Masked before it is cut, so that no part of the key is left
        // at the cut (the body's bytes are masked already; the message may
        // have spelt the key with JSON escapes).
        let message = error_message(&bytes);
        let message = self.redact(&message);
        let detail = format!("HTTP {status} from {}: {}", shown(url), excerpt(&message));
        let err = Error::new(kind, detail).with_retry_after(retry_after);
        // An unknown model or path: every call of the run names the same.
        Err(if status == 404 {
            err.at_endpoint()
        } else {
            err
        })
    }

    /// One exchange through the lean client: status, `Retry-After`, body.
    async fn attempt_direct(
        &self,
        direct: &Http1,
        url: &reqwest::Url,
        body: &[u8],
    ) -> Result<(u16, Option<Duration>, Vec<u8>), Error> {
        let auth = self.key.as_ref().map(|k| format!("Bearer {}", k.expose()));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|a| ("authorization", a))
            .into_iter()
            .collect();
        // The request target keeps the base URL's query (e.g. Azure's `api-version`).
        let target = match url.query() {
            Some(query) => Cow::Owned(format!("{}?{query}", url.path())),
            None => Cow::Borrowed(url.path()),
        };
        match direct
            .post(&target, &headers, body, self.opts.max_response_bytes)
            .await
        {
            Ok(resp) => {
                let retry_after = retry_after_in(|name| resp.header(name), SystemTime::now());
                Ok((resp.status, retry_after, resp.body))
            }
            Err(http1::Failure::TooLarge) => Err(self.too_large()),
            Err(http1::Failure::Connection(detail)) => Err(Error::new(
                FailureKind::Connection,
                format!("request to {} failed: {detail}", shown(url)),
            )),
            Err(http1::Failure::Connect(detail)) => Err(Error::new(
                FailureKind::Connection,
                format!("request to {} failed: {detail}", shown(url)),
            )
            .at_endpoint()),
        }
    }

    /// One exchange through reqwest: status, `Retry-After`, body.
    async fn attempt_reqwest(
        &self,
        url: &reqwest::Url,
        body: Vec<u8>,
    ) -> Result<(u16, Option<Duration>, Vec<u8>), Error> {
        let mut req = self
            .client
            .post(url.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &self.key {
            req = req.bearer_auth(key.expose());
        }
        let mut resp = req.send().await.map_err(|e| self.transport_error(&e))?;
        let status = resp.status().as_u16();
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
        Ok((status, retry_after, bytes))
    }

    fn too_large(&self) -> Error {
        Error::new(
            FailureKind::InvalidResponse,
            format!(
                "response larger than {} bytes",
                self.opts.max_response_bytes
            ),
        )
    }

    fn transport_error(&self, e: &reqwest::Error) -> Error {
        let kind = if e.is_timeout() {
            FailureKind::Timeout
        } else {
            FailureKind::Connection
        };
        // The source chain says what actually happened (reset, refused ...).
        let mut detail = e.to_string();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            detail.push_str(": ");
            detail.push_str(&s.to_string());
            source = s.source();
        }
        if let Some(url) = e.url().filter(|u| has_userinfo(u)) {
            detail = detail.replace(url.as_str(), &shown(url));
        }
        let err = Error::new(kind, detail);
        // Refused, unknown host, TLS: reqwest's connector failed.
        if e.is_connect() {
            err.at_endpoint()
        } else {
            err
        }
    }

    /// `text` with the key masked, should a server quote it back (as
    /// OpenAI's 401 and proxies echoing the `Authorization` header do).
    pub(crate) fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.key {
            Some(key) => key.redact(text),
            None => Cow::Borrowed(text),
        }
    }

    /// `e` with the key masked in its detail and raw answer.
    fn redact_error(&self, e: Error) -> Error {
        match &self.key {
            Some(key) => e.redacted(key),
            None => e,
        }
    }
}

/// Whether `url` carries a user name or password.
fn has_userinfo(url: &reqwest::Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

/// `url` as errors and identities show it: a user name and password
/// masked as `****`.
fn shown(url: &reqwest::Url) -> Cow<'_, str> {
    if !has_userinfo(url) {
        return Cow::Borrowed(url.as_str());
    }
    let mut masked = url.clone();
    // Both succeed on the http(s) URLs a transport holds.
    let _ = masked.set_username("****");
    let _ = masked.set_password(url.password().map(|_| "****"));
    Cow::Owned(masked.to_string())
}

/// A URL that did not parse, with whatever sits before an `@` in its
/// authority masked.
fn masked_authority(text: &str) -> Cow<'_, str> {
    let start = text.find("://").map_or(0, |i| i + 3);
    let authority_end = text[start..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |i| start + i);
    match text[start..authority_end].rfind('@') {
        Some(at) => Cow::Owned(format!("{}****{}", &text[..start], &text[start + at..])),
        None => Cow::Borrowed(text),
    }
}

/// `retry-after-ms` (OpenAI), or `Retry-After` in seconds or as an
/// HTTP-date (the wait until then; a date in the past means now).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    retry_after_at(headers, SystemTime::now())
}

fn retry_after_at(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    retry_after_in(|name| headers.get(name)?.to_str().ok(), now)
}

/// [`retry_after`] over any header lookup.
fn retry_after_in<'a>(
    header: impl Fn(&str) -> Option<&'a str>,
    now: SystemTime,
) -> Option<Duration> {
    let text = |name: &str| Some(header(name)?.trim());
    let valid = |x: &f64| x.is_finite() && *x >= 0.0;
    if let Some(ms) = text("retry-after-ms")
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|x| valid(x) && *x < 1e12)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (valid(&secs) && secs < 1e9).then(|| Duration::from_secs_f64(secs));
    }
    let at = http_date(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the Unix epoch of an HTTP-date (RFC 9110 section 5.6.7):
/// IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete RFC 850
/// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`
/// forms that recipients must also accept.
fn http_date(text: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = |m: &str| MONTHS.iter().position(|x| *x == m).map(|i| i as u32 + 1);
    let words: Vec<&str> = text.split_whitespace().collect();
    let (day, mon, year, time) = match words.as_slice() {
        [_, day, mon, year, time, "GMT"] => {
            (day.parse().ok()?, month(mon)?, year.parse().ok()?, *time)
        }
        [_, date, time, "GMT"] => {
            let mut parts = date.split('-');
            let (day, mon, yy) = (parts.next()?, parts.next()?, parts.next()?);
            let yy: i64 = yy.parse().ok()?;
            // RFC 9110: a two-digit year more than 50 years ahead is in the past century.
            let year = if yy < 70 { 2000 + yy } else { 1900 + yy };
            (day.parse().ok()?, month(mon)?, year, *time)
        }
        [_, mon, day, time, year] => (day.parse().ok()?, month(mon)?, year.parse().ok()?, *time),
        _ => return None,
    };
    let mut hms = time.split(':').map(|x| x.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 || hms.next().is_some() {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, mon, day)).ok()?;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    message.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned())
}

/// The first `DETAIL_CHARS` characters of an error message.
fn excerpt(message: &str) -> &str {
    match message.char_indices().nth(DETAIL_CHARS) {
        Some((cut, _)) => &message[..cut],
        None => message,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_full_jitter_under_a_doubling_ceiling() {
        let opts = ProviderOptions {
            backoff_base: Duration::from_millis(100),
            backoff_max: Duration::from_millis(1000),
            ..ProviderOptions::default()
        };
        let limiter = Arc::new(Limiter::new(1, None, None));
        let t = Transport::new(ProviderKind::Vllm, &opts, None, limiter).unwrap();
        for (retry, ceiling) in [
            (0, 100),
            (1, 200),
            (2, 400),
            (3, 800),
            (4, 1000),
            (30, 1000),
        ] {
            let waits: Vec<Duration> = (0..200).map(|_| t.backoff(retry)).collect();
            let ceiling = Duration::from_millis(ceiling);
            assert!(waits.iter().all(|w| *w <= ceiling), "retry {retry}");
            // Full jitter spreads over the whole range, not just near the top.
            assert!(waits.iter().any(|w| *w < ceiling / 4), "retry {retry}");
            assert!(waits.iter().any(|w| *w > ceiling * 3 / 4), "retry {retry}");
        }
    }

    #[test]
    fn retry_after_headers_are_read_in_seconds_or_milliseconds() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(
            retry_after(&h),
            None,
            "unreadable values fall back to backoff"
        );
        h.insert("retry-after-ms", "-5".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn retry_after_dates_wait_until_then() {
        // 1445412480 is 2015-10-21T07:28:00Z (`date -u -d @1445412480`).
        let at = std::time::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let mut h = HeaderMap::new();
        for form in [
            "Wed, 21 Oct 2015 07:28:00 GMT",
            "Wednesday, 21-Oct-15 07:28:00 GMT",
            "Wed Oct 21 07:28:00 2015",
        ] {
            h.insert("retry-after", form.parse().unwrap());
            let now = at - Duration::from_secs(90);
            assert_eq!(
                retry_after_at(&h, now),
                Some(Duration::from_secs(90)),
                "{form}"
            );
            let later = at + Duration::from_secs(5);
            assert_eq!(retry_after_at(&h, later), Some(Duration::ZERO), "{form}");
        }
        for bad in [
            "Wed, 32 Oct 2015 07:28:00 GMT",
            "Wed, 21 Foo 2015 07:28:00 GMT",
            "Wed, 21 Oct 2015 07:28 GMT",
        ] {
            h.insert("retry-after", bad.parse().unwrap());
            assert_eq!(retry_after_at(&h, at), None, "{bad}");
        }
        // The Unix epoch and a leap day, against the civil calendar.
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(
            days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28),
            2
        );
    }

    #[test]
    fn hosted_providers_need_a_key_and_local_ones_do_not() {
        let opts = ProviderOptions::default();
        let limiter = Arc::new(Limiter::new(1, None, None));
        let err =
            Transport::new(ProviderKind::OpenAi, &opts, None, Arc::clone(&limiter)).unwrap_err();
        assert_eq!(err.kind(), FailureKind::Auth);
        assert!(err.detail().contains("OPENAI_API_KEY"), "{}", err.detail());
        for local in [
            ProviderKind::Ollama,
            ProviderKind::Vllm,
            ProviderKind::LlamaCpp,
        ] {
            let t = Transport::new(local, &opts, None, Arc::clone(&limiter)).unwrap();
            assert_eq!(t.base_url(), local.default_base_url());
        }
    }

    #[test]
    fn a_base_url_that_does_not_parse_is_a_config_error_at_once() {
        let opts = ProviderOptions::default();
        let limiter = Arc::new(Limiter::new(1, None, None));
        for bad in ["localhost:8000/v1", "http://:80", "/v1"] {
            let opts = ProviderOptions {
                base_url: Some(bad.into()),
                ..opts.clone()
            };
            let err =
                Transport::new(ProviderKind::Vllm, &opts, None, Arc::clone(&limiter)).unwrap_err();
            assert_eq!(err.kind(), FailureKind::Config);
            assert!(err.detail().contains(bad), "{}", err.detail());
        }
    }

    /// Credentials in the base URL are sent as basic auth and shown
    /// nowhere: not in the URL the transport names, nor in its errors,
    /// whether the server answers, the port is closed or the URL is bad.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn credentials_in_the_base_url_are_sent_and_never_shown() {
        use assay_test_server::{error, Server};
        const PASSWORD: &str = "pw-in-the-url-42";
        let server = Server::start(|_, _| error(500, "down")).await;
        let limiter = Arc::new(Limiter::new(1, None, None));
        let transport = |base: String| {
            let opts = ProviderOptions {
                base_url: Some(base),
                max_retries: 0,
                ..ProviderOptions::default()
            };
            Transport::new(ProviderKind::Vllm, &opts, None, Arc::clone(&limiter))
        };
        let with_userinfo =
            |url: &str| url.replacen("http://", &format!("http://alice:{PASSWORD}@"), 1);

        let t = transport(with_userinfo(&server.base_url())).unwrap();
        assert!(t.direct.is_none(), "basic auth goes through reqwest");
        let shown = server
            .base_url()
            .replacen("http://", "http://****:****@", 1);
        assert_eq!(t.base_url(), shown);
        let err = t
            .post_metered("/chat/completions", b"{}".to_vec(), 1, Ok)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), FailureKind::Server);
        assert!(
            err.detail().contains("from http://****:****@"),
            "{}",
            err.detail()
        );
        let seen = server.requests().last().unwrap().clone();
        assert_eq!(
            seen.header("authorization"),
            Some("Basic YWxpY2U6cHctaW4tdGhlLXVybC00Mg==")
        );

        let closed = transport(with_userinfo("http://127.0.0.1:1/v1")).unwrap();
        let err = closed
            .post_metered("/chat/completions", b"{}".to_vec(), 1, Ok)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), FailureKind::Connection);

        let bad = transport(format!("http://alice:{PASSWORD}@/v1")).unwrap_err();
        assert_eq!(bad.kind(), FailureKind::Config);
        assert!(bad.detail().contains("http://****@/v1"), "{}", bad.detail());

        for detail in [err.detail(), bad.detail()] {
            assert!(
                !detail.contains(PASSWORD) && !detail.contains("alice"),
                "{detail}"
            );
        }
    }

    /// Both clients read answers and faults alike: the lean one serves
    /// plain-http endpoints, reqwest the https and proxied ones.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn both_routes_read_answers_and_faults_alike() {
        use assay_test_server::{chat, error, Reply, Server};
        let server = Server::start(|request, _| match request.last_message() {
            "busy" => error(429, "slow down").with_header("Retry-After", "7"),
            "reset" => Reply::Reset,
            "big" => chat(&"x".repeat(5000)),
            _ => chat("fine"),
        })
        .await;
        for route in [Route::Lean, Route::Reqwest] {
            let opts = ProviderOptions {
                base_url: Some(format!("{}?api-version=2024-06-01", server.base_url())),
                max_retries: 0,
                max_response_bytes: 4000,
                ..ProviderOptions::default()
            };
            let limiter = Arc::new(Limiter::new(4, None, None));
            let key = Some(Secret::new("sk-route-test"));
            let t = Transport::routed(ProviderKind::Vllm, &opts, key, limiter, route).unwrap();
            assert_eq!(t.direct.is_some(), route == Route::Lean);
            let ask = |text: &str| {
                serde_json::to_vec(
                    &serde_json::json!({"messages": [{"role": "user", "content": text}]}),
                )
                .unwrap()
            };
            let body = t
                .post_metered("/chat/completions", ask("hello"), 1, Ok)
                .await
                .unwrap()
                .0;
            let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(
                answer["choices"][0]["message"]["content"], "fine",
                "{route:?}"
            );
            let seen = server.requests().last().unwrap().clone();
            let target = "/v1/chat/completions?api-version=2024-06-01";
            assert_eq!(seen.path, target, "{route:?}");
            let auth = seen.header("authorization").map(str::to_owned);
            assert_eq!(auth.as_deref(), Some("Bearer sk-route-test"), "{route:?}");

            let err = t
                .post_metered("/chat/completions", ask("busy"), 1, Ok)
                .await
                .unwrap_err();
            assert_eq!(err.kind(), FailureKind::RateLimited, "{route:?}");
            assert_eq!(err.retry_after(), Some(Duration::from_secs(7)), "{route:?}");
            let err = t
                .post_metered("/chat/completions", ask("reset"), 1, Ok)
                .await
                .unwrap_err();
            assert_eq!(err.kind(), FailureKind::Connection, "{route:?}");
            let err = t
                .post_metered("/chat/completions", ask("big"), 1, Ok)
                .await
                .unwrap_err();
            assert_eq!(err.kind(), FailureKind::InvalidResponse, "{route:?}");
        }
    }
    /// A 200 whose body is not a usable completion (cut JSON, an error
    /// object, no choices) is sent again within the retry budget; a body
    /// over the size limit is not (the same request gets the same body),
    /// and a budget of no retries gives the typed failure at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_unusable_success_is_retried_within_the_budget() {
        use assay_test_server::{chat, Reply};
        let cut = || Reply::Http {
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: "{\"choices\": [{\"message\": {\"co".into(),
            delay: Duration::ZERO,
        };
        let server =
            assay_test_server::Server::start(move |request, n| match (request.last_message(), n) {
                ("flaky", 0) => cut(),
                ("flaky", 1) => Reply::json(
                    200,
                    serde_json::json!({"error": {"message": "upstream overloaded"}}),
                ),
                ("flaky", 2) => Reply::json(200, serde_json::json!({"choices": []})),
                ("big", _) => chat(&"x".repeat(5000)),
                ("cut", _) => cut(),
                _ => chat("fine"),
            })
            .await;
        let opts = ProviderOptions {
            base_url: Some(server.base_url()),
            max_retries: 3,
            max_response_bytes: 4000,
            backoff_base: Duration::from_millis(1),
            backoff_max: Duration::from_millis(5),
            ..ProviderOptions::default()
        };
        let limiter = Arc::new(Limiter::new(4, None, None));
        let t = Transport::new(ProviderKind::Vllm, &opts, None, Arc::clone(&limiter)).unwrap();
        let ask = |text: &str| {
            serde_json::to_vec(
                &serde_json::json!({"messages": [{"role": "user", "content": text}]}),
            )
            .unwrap()
        };
        let parse = |b: Vec<u8>| crate::openai::parse_chat_body(&b);
        let (answer, _) = t
            .post_metered("/chat/completions", ask("flaky"), 1, parse)
            .await
            .unwrap();
        assert_eq!(answer.text, "fine");
        assert_eq!(
            server.count(),
            4,
            "three unusable answers, then the good one"
        );

        let err = t
            .post_metered("/chat/completions", ask("big"), 1, parse)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), FailureKind::InvalidResponse);
        assert_eq!(server.count(), 5, "an oversized body is not asked again");

        let err = t
            .post_metered("/chat/completions", ask("cut"), 1, parse)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), FailureKind::InvalidResponse);
        assert!(
            err.detail().contains("after 4 attempt(s)"),
            "{}",
            err.detail()
        );
        assert_eq!(
            server.count(),
            9,
            "the budget: one attempt and three retries"
        );

        let none = ProviderOptions {
            max_retries: 0,
            ..opts
        };
        let t = Transport::new(ProviderKind::Vllm, &none, None, limiter).unwrap();
        let err = t
            .post_metered("/chat/completions", ask("cut"), 1, parse)
            .await
            .unwrap_err();
        assert!(
            err.detail().contains("after 1 attempt(s)"),
            "{}",
            err.detail()
        );
        assert_eq!(server.count(), 10);
    }
}
