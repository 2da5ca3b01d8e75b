//! Typed errors of the judge layer.
//!
//! Every failure is an [`Error`] value carrying a [`FailureKind`], the
//! same kind that a metric's `Failed { kind }` outcome records, so a
//! timeout or an unparseable judge answer is recorded, never turned into NaN.

use std::time::Duration;

use assay_core::FailureKind;

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

/// A failed judge call, cache access or configuration step.
///
/// Cloneable because one upstream failure is shared by every caller that
/// was waiting on the same (single-flight) request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{kind}: {detail}")]
pub struct Error {
    kind: FailureKind,
    detail: String,
    raw_output: Option<String>,
    retry_after: Option<Duration>,
    endpoint_fault: bool,
}

impl Error {
    /// A new error of `kind` with a human-readable detail.
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> Self {
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
        self.kind == FailureKind::Auth || self.endpoint_fault
    }

    /// Whether a request failing this way is worth sending again: only
    /// transient conditions (`rate_limited`, `timeout`, `server`,
    /// `connection`) are. Retrying a bad key, a refused request or a
    /// content-filtered answer would just spend money.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind,
            FailureKind::RateLimited
                | FailureKind::Timeout
                | FailureKind::Server
                | FailureKind::Connection
        )
    }

    /// Whether this failure should end the whole run rather than fail one
    /// sample's outcomes: refused credentials always; any other fault of
    /// the endpoint ([`Error::is_endpoint_fault`]) while the judge has
    /// answered nothing yet, when it is a wrong URL, model or a server
    /// that is not up. Once the judge has answered, the same failure is
    /// an outage in the middle of the run, and fails the calls it hits.
    pub fn is_run_fatal(&self, history: JudgeHistory) -> bool {
        self.kind == FailureKind::Auth
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
    pub fn kind(&self) -> FailureKind {
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
        Error::new(FailureKind::Cache, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_transient_kinds_are_retried_and_only_auth_is_always_fatal() {
        let retried: Vec<_> = FailureKind::ALL
            .into_iter()
            .filter(|k| Error::new(*k, "x").is_retryable())
            .collect();
        assert_eq!(
            retried,
            [
                FailureKind::RateLimited,
                FailureKind::Timeout,
                FailureKind::Server,
                FailureKind::Connection
            ]
        );
        for history in [JudgeHistory::NothingAnswered, JudgeHistory::Answered] {
            let fatal: Vec<_> = FailureKind::ALL
                .into_iter()
                .filter(|k| Error::new(*k, "x").is_run_fatal(history))
                .collect();
            assert_eq!(fatal, [FailureKind::Auth]);
        }
    }

    #[test]
    fn an_endpoint_fault_is_fatal_only_before_the_first_answer() {
        let refused = Error::new(FailureKind::Connection, "refused").at_endpoint();
        assert!(refused.is_endpoint_fault());
        assert!(refused.is_run_fatal(JudgeHistory::NothingAnswered));
        assert!(!refused.is_run_fatal(JudgeHistory::Answered));
        let reset = Error::new(FailureKind::Connection, "reset");
        assert!(!reset.is_endpoint_fault());
        assert!(!reset.is_run_fatal(JudgeHistory::NothingAnswered));
    }
}
