//! In-process models for assay: the default judge and embedder, offline.
//!
//! - [`LocalJudge`]: a GGUF chat model run by llama.cpp (through the
//!   `llama-cpp-2` crate) with schema-constrained decoding (greedy, or a
//!   seeded draw when the request sets a temperature)
//!   ([`grammar`]), choice probabilities for closed choices, and reuse of
//!   the KV cache of the longest common prompt prefix between calls.
//! - [`LocalEmbedder`]: all-MiniLM-L6-v2 (BERT) with a small hand-written
//!   forward pass over `safetensors` weights, mean pooling and L2
//!   normalisation.
//!
//! [`Offloaded`] puts either behind the `assay-llm` traits, running each
//! call on tokio's blocking pool. Models live under
//! `$ASSAY_HOME/models` (default `~/.cache/assay/models`), put there by
//! `scripts/fetch-models.sh`; [`LocalSpec`] parses what users type after
//! `--judge` / `--embedder`.

mod bert;
mod error;
mod fingerprint;
pub mod grammar;
mod judge;
mod offload;
mod spec;
mod wordpiece;

pub use assay_llm::ChoicePoint;
pub use bert::LocalEmbedder;
pub use error::Error;
pub use judge::{JudgeOptions, LocalAnswer, LocalJudge, PrefixCaching};
pub use llama_cpp_2::token::LlamaToken;
pub use offload::{BlockingEmbedder, Offloaded};
pub use spec::{models_dir, KnownEmbedder, KnownJudge, LocalSpec};
