//! The model traits and their request/response types.
//!
//! Both traits are object-safe (methods return boxed futures), so the HTTP
//! provider of this crate and the in-process models of `assay-local` can sit
//! behind the same `Arc<dyn ChatModel>` / `Arc<dyn Embedder>`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Error;

/// A boxed, sendable future: what the trait methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub use assay_core::chat::{Message, Role};

/// Sampling parameters. The default is deterministic: temperature 0, seed 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// Sampling temperature (default 0).
    pub temperature: f64,
    /// Nucleus sampling mass, when set.
    pub top_p: Option<f64>,
    /// Seed for providers that honour one (default 0).
    pub seed: Option<u64>,
    /// Upper bound on completion tokens.
    pub max_tokens: Option<u32>,
    /// Stop sequences.
    pub stop: Vec<String>,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.0,
            top_p: None,
            seed: Some(0),
            max_tokens: None,
            stop: Vec::new(),
        }
    }
}

/// Which prompt (and which version of it) produced a request; part of the
/// cache key, so editing a prompt file never serves answers of the old one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PromptRef {
    /// Prompt id, e.g. `faithfulness.statements`.
    pub id: String,
    /// Prompt version, e.g. `2`.
    pub version: String,
}

/// A chat request: rendered messages plus everything that shapes the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The prompt that was rendered.
    pub prompt: PromptRef,
    /// The rendered messages.
    pub messages: Vec<Message>,
    /// Sampling parameters.
    pub sampling: Sampling,
    /// The output contract: a JSON Schema the answer must satisfy (the
    /// subset documented in [`crate::schema`]).
    pub schema: Option<serde_json::Value>,
    /// Ask for this many top log-probabilities per token, when set.
    pub top_logprobs: Option<u8>,
    /// A reply to score instead of one to write: the model reads it as its
    /// own answer to the messages and reports each of its tokens'
    /// log-probability in [`ChatResponse::logprobs`] (in-process models
    /// only; an HTTP provider refuses it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation: Option<String>,
}

impl ChatRequest {
    /// A request with default sampling, no schema and no logprobs.
    pub fn new(prompt: PromptRef, messages: Vec<Message>) -> Self {
        ChatRequest {
            prompt,
            messages,
            sampling: Sampling::default(),
            schema: None,
            top_logprobs: None,
            continuation: None,
        }
    }

    /// The same request with an output schema.
    pub fn with_schema(mut self, schema: serde_json::Value) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The same request asking for the log-probabilities of `reply` as the
    /// answer, see [`ChatRequest::continuation`].
    pub fn with_continuation(mut self, reply: impl Into<String>) -> Self {
        self.continuation = Some(reply.into());
        self
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural stop or a stop sequence.
    Stop,
    /// The token limit.
    Length,
    /// The content filter.
    ContentFilter,
    /// A tool call (not used by assay, kept for completeness).
    ToolCalls,
    /// Anything else the provider said.
    Other(String),
}

impl FinishReason {
    /// Maps the protocol's `finish_reason` string.
    pub fn from_protocol(s: &str) -> Self {
        match s {
            "stop" | "eos" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "content_filter" => FinishReason::ContentFilter,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

/// Token counts of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
    }
}

/// One generated token with its log-probability and the top alternatives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    /// The token text.
    pub token: String,
    /// Its natural-log probability.
    pub logprob: f64,
    /// The most likely alternatives at this position, best first.
    pub top: Vec<(String, f64)>,
}

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A call to the model made for this request.
    Upstream,
    /// An identical request already in flight; its one call was shared.
    Coalesced,
    /// The response cache; no call was made.
    Cache,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Upstream => "upstream",
            Source::Coalesced => "coalesced",
            Source::Cache => "cache",
        })
    }
}

impl FromStr for Source {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "upstream" => Ok(Source::Upstream),
            "coalesced" => Ok(Source::Coalesced),
            "cache" => Ok(Source::Cache),
            other => Err(Error::new(
                crate::FailureKind::Config,
                format!("unknown source {other:?}"),
            )),
        }
    }
}

/// A chat answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The answer text as the model wrote it.
    pub text: String,
    /// The validated JSON value, when the request had a schema.
    pub json: Option<serde_json::Value>,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// Tokens of every call that produced this answer (repair re-asks included).
    pub usage: Usage,
    /// Wall time of the call that produced the answer (for a cache hit: of
    /// the original call).
    pub latency: Duration,
    /// Where this answer came from.
    pub source: Source,
    /// Per-token log-probabilities, when asked for and provided; for a
    /// request with a [`ChatRequest::continuation`], those of its tokens,
    /// whose texts put together are the continuation.
    pub logprobs: Option<Vec<TokenLogprob>>,
    /// Probabilities of the allowed values at each closed choice of the
    /// answer, for models that decode under a constraint and can report
    /// them (in-process models); `None` otherwise (and in cache rows
    /// written before they were kept).
    #[serde(default)]
    pub choice_probabilities: Option<Vec<ChoicePoint>>,
}

/// The probabilities of a closed choice (an `enum`, a boolean, a small
/// integer range) at one place of a constrained answer.
///
/// They are read where the greedy path commits to one value: a softmax
/// over the tokens the constraint allows there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoicePoint {
    /// JSON Pointer of the value in the answer, e.g. `/statements/0/verdict`.
    pub pointer: String,
    /// Each allowed value as compact JSON text (e.g. `"yes"` with its
    /// quotes, or `1`) with its probability; they sum to 1.
    pub probabilities: Vec<(String, f64)>,
}

/// What identifies a model for the cache key: everything except secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// Provider kind, e.g. `openai` (or a local backend's name).
    pub provider: String,
    /// The endpoint: the base URL; for a local model, its file name and
    /// SHA-256 (never its path, which differs between machines).
    pub endpoint: String,
    /// Model name.
    pub model: String,
    /// Any backend setting that changes the answer (e.g. the structured-output mode).
    pub settings: String,
}

/// An async chat-completion model.
pub trait ChatModel: Send + Sync {
    /// What identifies this model in cache keys.
    fn identity(&self) -> &ModelIdentity;

    /// One chat completion. Implementations return the raw answer text; the
    /// [`crate::Judge`] layer extracts, validates and repairs structured output.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, Error>>;
}

/// Embeddings of a batch of texts.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One unit-length vector per input text, in input order.
    pub vectors: Vec<Vec<f32>>,
    /// Tokens spent (zero for cached vectors).
    pub usage: Usage,
}

/// An async, batched text embedder returning unit-normalised vectors.
pub trait Embedder: Send + Sync {
    /// What identifies this embedder in cache keys.
    fn identity(&self) -> &ModelIdentity;

    /// Embeds `texts`, one unit vector each, in order.
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Embeddings, Error>>;
}

/// Scales `v` to unit length; a zero or non-finite vector is an invalid response.
pub fn normalize(mut v: Vec<f32>) -> Result<Vec<f32>, Error> {
    let norm = v
        .iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return Err(Error::new(
            crate::FailureKind::InvalidResponse,
            "embedding has zero or non-finite norm",
        ));
    }
    for x in &mut v {
        *x = (f64::from(*x) / norm) as f32;
    }
    Ok(v)
}
