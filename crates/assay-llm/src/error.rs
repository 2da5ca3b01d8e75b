//! Typed errors of the judge layer.
//!
//! Every failure is an [`Error`] value carrying an [`ErrorKind`]; the kinds
//! map one to one onto the `Failed { kind }` outcomes of a metric, so a
//! timeout or an unparseable judge answer is recorded, never turned into NaN.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// What went wrong, as a stable snake_case id (`Display`/`FromStr` round-trip).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The provider refused the credentials (HTTP 401/403).
    ///
    /// Run-fatal: every later request would fail the same way, so a caller
    /// should stop the whole run at once (see [`Error::is_run_fatal`]).
    Auth,
    /// HTTP 429 after all retries, or a `Retry-After` longer than allowed.
    RateLimited,
    /// The per-attempt timeout elapsed (or HTTP 408) after all retries.
    Timeout,
    /// HTTP 5xx after all retries.
    Server,
    /// The connection failed or was reset, after all retries.
    Connection,
    /// The provider rejected the request itself (other 4xx, e.g. unknown model).
    Rejected,
    /// The body was not the protocol's JSON, was too large, or lacked fields.
    InvalidResponse,
    /// The model stopped at the token limit (`finish_reason: length`).
    Truncated,
    /// The provider's content filter withheld the answer.
    ContentFilter,
    /// The answer did not yield JSON valid against the output schema, even
    /// after the repair re-asks; the error carries the raw text.
    Parse,
    /// The response cache could not be read or written.
    Cache,
    /// A model spec, option or batch file was not understood.
    Config,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::Auth,
        ErrorKind::RateLimited,
        ErrorKind::Timeout,
        ErrorKind::Server,
        ErrorKind::Connection,
        ErrorKind::Rejected,
        ErrorKind::InvalidResponse,
        ErrorKind::Truncated,
        ErrorKind::ContentFilter,
        ErrorKind::Parse,
        ErrorKind::Cache,
        ErrorKind::Config,
    ];

    /// The stable snake_case id.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Auth => "auth",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Server => "server",
            ErrorKind::Connection => "connection",
            ErrorKind::Rejected => "rejected",
            ErrorKind::InvalidResponse => "invalid_response",
            ErrorKind::Truncated => "truncated",
            ErrorKind::ContentFilter => "content_filter",
            ErrorKind::Parse => "parse",
            ErrorKind::Cache => "cache",
            ErrorKind::Config => "config",
        }
    }

    /// Whether a request failing this way is worth sending again.
    ///
    /// Only transient conditions are: retrying a bad key, a refused request
    /// or a content-filtered answer would just spend money.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimited | ErrorKind::Timeout | ErrorKind::Server | ErrorKind::Connection
        )
    }
}

/// What a judge has done so far in a run: whether a failure of its
/// endpoint is a wrong setting (nothing answered yet) or an outage in the
/// middle of a run that worked (see [`Error::is_run_fatal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeHistory {
    /// No call of this run has been answered by the endpoint yet (answers
    /// from the cache do not count).
    NothingAnswered,
    /// At least one call was answered.
    Answered,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown error-kind id was given to [`ErrorKind::from_str`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown error kind {0:?}")]
pub struct UnknownErrorKind(pub String);

impl FromStr for ErrorKind {
    type Err = UnknownErrorKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownErrorKind(s.to_owned()))
    }
}

/// A failed judge call, cache access or configuration step.
///
/// Cloneable because one upstream failure is shared by every caller that
/// was waiting on the same (single-flight) request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct Error {
    kind: ErrorKind,
    detail: String,
    raw_output: Option<String>,
    retry_after: Option<Duration>,
    endpoint_fault: bool,
}

impl Error {
    /// A new error of `kind` with a human-readable detail.
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        Error {
            kind,
            detail: detail.into(),
            raw_output: None,
            retry_after: None,
            endpoint_fault: false,
        }
    }

    /// Marks the failure as the endpoint's own (see [`Error::is_endpoint_fault`]).
    pub(crate) fn at_endpoint(mut self) -> Self {
        self.endpoint_fault = true;
        self
    }

    /// Whether the failure says the endpoint fails every call the same
    /// way, so that no retry fixes it: the credentials were refused
    /// (401/403), no connection could be made (refused, unknown host, a
    /// TLS failure, no answer to the connect), or the model or path is
    /// unknown (404).
    pub fn is_endpoint_fault(&self) -> bool {
        self.kind == ErrorKind::Auth || self.endpoint_fault
    }

    /// Whether this failure should end the whole run rather than fail one
    /// sample's outcomes: refused credentials always; any other fault of
    /// the endpoint ([`Error::is_endpoint_fault`]) while the judge has
    /// answered nothing yet, when it is a wrong URL, model or a server
    /// that is not up. Once the judge has answered, the same failure is
    /// an outage in the middle of the run, and fails the calls it hits.
    pub fn is_run_fatal(&self, history: JudgeHistory) -> bool {
        self.kind == ErrorKind::Auth
            || (self.endpoint_fault && history == JudgeHistory::NothingAnswered)
    }

    /// Attaches the model's raw answer (kept as evidence for `parse` failures).
    pub fn with_raw_output(mut self, raw: impl Into<String>) -> Self {
        self.raw_output = Some(raw.into());
        self
    }

    pub(crate) fn with_retry_after(mut self, wait: Option<Duration>) -> Self {
        self.retry_after = wait;
        self
    }

    /// The same failure with another detail, its evidence kept.
    pub(crate) fn with_detail(mut self, detail: String) -> Self {
        self.detail = detail;
        self
    }

    /// The same failure with `secret` masked in its detail and raw answer.
    pub(crate) fn redacted(mut self, secret: &crate::Secret) -> Self {
        if let std::borrow::Cow::Owned(detail) = secret.redact(&self.detail) {
            self.detail = detail;
        }
        if let Some(std::borrow::Cow::Owned(raw)) =
            self.raw_output.as_deref().map(|raw| secret.redact(raw))
        {
            self.raw_output = Some(raw);
        }
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable detail (never contains the API key).
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The model's raw answer, when the failure concerns its content.
    pub fn raw_output(&self) -> Option<&str> {
        self.raw_output.as_deref()
    }

    /// The wait the server asked for (`Retry-After`), if any.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::new(ErrorKind::Cache, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_their_ids() {
        for kind in ErrorKind::ALL {
            assert_eq!(kind.as_str().parse::<ErrorKind>(), Ok(kind));
        }
        assert!("nope".parse::<ErrorKind>().is_err());
    }

    #[test]
    fn only_transient_kinds_are_retried_and_only_auth_is_always_fatal() {
        let retried: Vec<_> = ErrorKind::ALL
            .into_iter()
            .filter(|k| k.is_retryable())
            .collect();
        assert_eq!(
            retried,
            [
                ErrorKind::RateLimited,
                ErrorKind::Timeout,
                ErrorKind::Server,
                ErrorKind::Connection
            ]
        );
        for history in [JudgeHistory::NothingAnswered, JudgeHistory::Answered] {
            let fatal: Vec<_> = ErrorKind::ALL
                .into_iter()
                .filter(|k| Error::new(*k, "x").is_run_fatal(history))
                .collect();
            assert_eq!(fatal, [ErrorKind::Auth]);
        }
    }

    #[test]
    fn an_endpoint_fault_is_fatal_only_before_the_first_answer() {
        let refused = Error::new(ErrorKind::Connection, "refused").at_endpoint();
        assert!(refused.is_endpoint_fault());
        assert!(refused.is_run_fatal(JudgeHistory::NothingAnswered));
        assert!(!refused.is_run_fatal(JudgeHistory::Answered));
        let reset = Error::new(ErrorKind::Connection, "reset");
        assert!(!reset.is_endpoint_fault());
        assert!(!reset.is_run_fatal(JudgeHistory::NothingAnswered));
    }
}
