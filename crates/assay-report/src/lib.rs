//! What follows a run, as library calls: the HTML report of a run
//! directory ([`html::write`]), the paired comparison of two runs
//! ([`compare::compare`]) and CI gates on a run's summary
//! ([`gates::Gates`]). The `assay` command line and the Python package
//! call these; nothing here prints.

pub mod compare;
pub mod gates;
pub mod html;

use std::path::{Path, PathBuf};

/// Why a report, comparison or gate could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What the caller gave is wrong (not a run directory, a gate on an
    /// output the run lacks): the command line's usage error.
    #[error("{0}")]
    Usage(String),
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not valid JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    Engine(#[from] assay_engine::EngineError),
    #[error(transparent)]
    Results(#[from] assay_core::results::ResultsError),
}

impl Error {
    /// Whether the caller's input is at fault (exit code 2 on the command
    /// line) rather than the machine.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Usage(_) => true,
            Error::Engine(e) => e.is_usage(),
            Error::Io { .. } | Error::Json { .. } | Error::Results(_) => false,
        }
    }

    fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.to_path_buf();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
