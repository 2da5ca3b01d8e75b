//! Judge access for assay: chat and embedding models behind object-safe
//! async traits, an OpenAI-compatible HTTP provider, request keys, an SQLite
//! response cache, concurrency and rate limits, retries, structured-output
//! parsing and repair, and token/cost usage.
//!
//! The usual wiring:
//!
//! ```no_run
//! use std::sync::Arc;
//! use assay_llm::{Cache, CacheLocation, ChatRequest, Judge, JudgeSpec, Limiter, Message, PromptRef, ProviderOptions};
//!
//! # async fn run() -> Result<(), assay_llm::Error> {
//! let spec: JudgeSpec = "ollama:llama3.1:8b".parse()?;
//! let opts = ProviderOptions::default();
//! let limiter = Arc::new(Limiter::from_options(&opts));
//! let cache = Cache::open_location(&CacheLocation::Default)?.map(Arc::new);
//! let judge = Judge::connect(&spec, &opts, cache, limiter)?;
//! let request = ChatRequest::new(
//!     PromptRef { id: "demo".into(), version: "1".into() },
//!     vec![Message::user("Is the sky blue? Answer {\"verdict\": 0 or 1}.")],
//! )
//! .with_schema(serde_json::json!({"type": "object", "required": ["verdict"]}));
//! let answer = judge.chat(&request).await?;
//! println!("{:?} from {}", answer.json, answer.source);
//! # Ok(()) }
//! ```
//!
//! Errors are [`Error`] values with a [`FailureKind`] (assay-core's, the
//! kind a failed outcome records, re-exported here); only `rate_limited`,
//! `timeout`, `server` and `connection` are retried (a connection that
//! cannot be made at all only once the endpoint has answered), `auth` is
//! run-fatal, and so is any fault of the endpoint itself before it has
//! answered anything ([`Error::is_run_fatal`]).

mod batch;
mod cache;
mod error;
mod http;
mod http1;
mod judge;
mod key;
mod limits;
mod model;
mod openai;
pub mod schema;
mod secret;
mod spec;
mod usage;

pub use assay_core::FailureKind;
pub use batch::{export_batch, import_batch, ImportReport};
pub use cache::{Cache, CacheStats, CACHE_FORMAT_VERSION, CATCH_UP_EVERY, FOLD_EVERY};
pub use error::{Error, JudgeHistory};
pub use judge::{CachedEmbedder, Judge};
pub use key::RequestKey;
pub use limits::Limiter;
pub use model::ChoicePoint;
pub use model::{
    normalize, BoxFuture, ChatModel, ChatRequest, ChatResponse, Embedder, Embeddings, FinishReason,
    Message, ModelIdentity, PromptRef, Role, Sampling, Source, TokenLogprob, Usage,
};
pub use openai::{parse_chat_body, OpenAiChat, OpenAiEmbedder};
pub use secret::Secret;
pub use spec::{
    default_cache_path, CacheLocation, EmbedderSpec, JudgeSpec, ModelSpec, ProviderKind,
    ProviderOptions, StructuredMode,
};
pub use usage::{
    Call, CallKind, Latency, Price, PriceTable, Scope, UsageLedger, UsageShare, UsageSummary,
};
