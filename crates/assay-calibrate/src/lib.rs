//! How far to trust a judge, as library calls: [`calibrate::calibrate`]
//! runs a judged metric over human-labelled rows (a built-in set or your
//! own) and measures its agreement with the labels beside the trivial
//! baselines, each figure with a bootstrap interval ([`agreement`]);
//! [`align::align`] refits the grounding verdict on such rows and writes
//! the alignment file `eval --alignment` reads;
//! [`correct::Calibration`] corrects a later run's raw rate of a binary
//! judgement by the sensitivity and specificity measured. The `assay`
//! command line and the Python package call these; nothing here prints.

pub mod agreement;
pub mod align;
pub mod calibrate;
pub mod correct;

use std::path::{Path, PathBuf};

/// Why a calibration or correction could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What the caller gave is wrong (an unknown set or metric, a label
    /// that is not there, a run that was interrupted): the command line's
    /// usage error.
    #[error("{0}")]
    Usage(String),
    /// A bad judge, limit or option, naming the field at fault.
    #[error(transparent)]
    Config(assay_config::UsageError),
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
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
            Error::Usage(_) | Error::Config(_) => true,
            Error::Engine(e) => e.is_usage(),
            Error::Io { .. } | Error::Results(_) => false,
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
