//! The crate's error type.

use std::path::PathBuf;

use assay_llm::FailureKind;

/// Why a local model could not be loaded or could not answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A model file is not where it should be.
    #[error("{what} not found at {}: run scripts/fetch-models.sh to download the local models", path.display())]
    ModelMissing {
        /// Which model.
        what: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A model file is there but cannot be used (truncated, corrupted, or
    /// not the expected format).
    #[error("{} is not a usable model file ({detail}); delete it and run scripts/fetch-models.sh again", path.display())]
    ModelInvalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A `local:...` spec was not understood.
    #[error("bad local model spec {spec:?}: {detail}")]
    Spec {
        /// What the user typed.
        spec: String,
        /// Why it was refused.
        detail: String,
    },
    /// The output schema is outside the supported subset.
    #[error("output schema not supported: {0}")]
    Schema(String),
    /// The prompt does not fit in the model's context window.
    #[error("prompt of {tokens} tokens does not fit the context of {limit} tokens")]
    PromptTooLong {
        /// Prompt length in tokens.
        tokens: usize,
        /// The context size.
        limit: usize,
    },
    /// The inference engine failed during a call.
    #[error("local inference failed: {0}")]
    Engine(String),
}

impl Error {
    /// The failure kind this maps to (assay-core's, as `assay-llm` re-exports it).
    pub fn kind(&self) -> FailureKind {
        match self {
            Error::ModelMissing { .. } | Error::ModelInvalid { .. } | Error::Spec { .. } => {
                FailureKind::Config
            }
            Error::Schema(_) | Error::PromptTooLong { .. } => FailureKind::Rejected,
            Error::Engine(_) => FailureKind::Server,
        }
    }
}

impl From<Error> for assay_llm::Error {
    fn from(e: Error) -> Self {
        assay_llm::Error::new(e.kind(), e.to_string())
    }
}
