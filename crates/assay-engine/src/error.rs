//! The engine's one error type. Its kinds decide what a caller does: the
//! command line maps them to exit codes, the Python binding to exception
//! classes.

use std::fmt::Display;
use std::path::PathBuf;

/// Why a run, or a command over run directories, did not finish.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Bad options or input (an unreadable file, a run directory of
    /// another run, a bad row under [`crate::Strictness::StopAtFirst`]):
    /// the caller's to fix. Nothing was lost.
    #[error("{0}")]
    Usage(String),
    /// Another process holds the run directory.
    #[error("{} is in use by another assay process (pid {pid}); wait for it to end, or choose another run directory", dir.display())]
    Locked { dir: PathBuf, pid: String },
    /// The run directory or another output cannot be written.
    #[error("{0}")]
    Output(String),
    /// The judge cannot serve the run: it refused the credentials, or,
    /// before answering anything, failed in a way no retry fixes (no
    /// connection, unknown host, a TLS failure, an unknown model). Every
    /// later call would fail the same way, so the run stopped at once;
    /// what was done is kept and the same command resumes.
    #[error("{message}")]
    JudgeUnavailable {
        /// The endpoint that failed (its base URL).
        endpoint: String,
        /// Why: `auth`, `connection` or `rejected`.
        kind: assay_core::FailureKind,
        /// One line naming the endpoint, the cause and what is kept.
        message: String,
    },
    /// Anything else that should not happen (a poisoned lock, a value
    /// that does not serialise).
    #[error("{0}")]
    Internal(String),
}

impl EngineError {
    /// Whether the error is the caller's to fix (bad usage or input, or a
    /// directory held by another run) rather than a failure of the run.
    pub fn is_usage(&self) -> bool {
        matches!(self, EngineError::Usage(_) | EngineError::Locked { .. })
    }
}

impl From<std::io::Error> for EngineError {
    fn from(e: std::io::Error) -> Self {
        EngineError::Output(e.to_string())
    }
}

impl From<serde_json::Error> for EngineError {
    fn from(e: serde_json::Error) -> Self {
        EngineError::Internal(e.to_string())
    }
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// Names what could not be written (or read) when an I/O step fails: the
/// error becomes [`EngineError::Output`] with the message in front.
pub(crate) trait OutputContext<T> {
    fn context(self, what: &str) -> Result<T>;
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Display> OutputContext<T> for std::result::Result<T, E> {
    fn context(self, what: &str) -> Result<T> {
        self.map_err(|e| EngineError::Output(format!("{what}: {e}")))
    }

    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| EngineError::Output(format!("{}: {e}", what())))
    }
}
