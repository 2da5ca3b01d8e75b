//! The OpenAI-compatible provider: `/chat/completions` and `/embeddings`.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::http::Transport;
use crate::limits::Limiter;
use crate::model::{
    normalize, BoxFuture, ChatModel, ChatRequest, ChatResponse, Embedder, Embeddings, FinishReason,
    ModelIdentity, Role, Source, TokenLogprob, Usage,
};
use crate::spec::{ModelSpec, ProviderOptions, StructuredMode};
use crate::{Error, FailureKind, Secret};

/// A chat model behind an OpenAI-compatible HTTP API.
#[derive(Debug)]
pub struct OpenAiChat {
    transport: Arc<Transport>,
    identity: ModelIdentity,
    model: String,
    mode: StructuredMode,
}

/// An embedding model behind an OpenAI-compatible HTTP API.
#[derive(Debug)]
pub struct OpenAiEmbedder {
    transport: Arc<Transport>,
    identity: ModelIdentity,
    model: String,
}

fn api_key(opts: &ProviderOptions) -> Option<Secret> {
    let names: Vec<&str> = opts.api_key_env.iter().map(String::as_str).collect();
    opts.api_key.clone().or_else(|| Secret::from_env(&names))
}

impl OpenAiChat {
    /// A client for `spec`, with the API key `opts.api_key` or else from
    /// `opts.api_key_env`.
    ///
    /// Fails with [`FailureKind::Auth`] when the provider needs a key and none is set.
    pub fn new(
        spec: &ModelSpec,
        opts: &ProviderOptions,
        limiter: Arc<Limiter>,
    ) -> Result<Self, Error> {
        Self::with_key(spec, opts, api_key(opts), limiter)
    }

    /// A client for `spec` with an explicit key (`None` for keyless local servers).
    pub fn with_key(
        spec: &ModelSpec,
        opts: &ProviderOptions,
        key: Option<Secret>,
        limiter: Arc<Limiter>,
    ) -> Result<Self, Error> {
        let transport = Transport::new(spec.provider, opts, key, limiter)?;
        let mode = opts
            .structured_mode
            .unwrap_or(spec.provider.default_structured_mode());
        let identity = ModelIdentity {
            provider: spec.provider.to_string(),
            endpoint: transport.base_url().to_owned(),
            model: spec.model.clone(),
            settings: format!("structured={mode}"),
        };
        Ok(OpenAiChat {
            transport: Arc::new(transport),
            identity,
            model: spec.model.clone(),
            mode,
        })
    }

    /// The structured-output mode in use.
    pub fn structured_mode(&self) -> StructuredMode {
        self.mode
    }

    /// The `/chat/completions` request body for `request` (also the `body`
    /// of a batch line).
    pub fn request_body(&self, request: &ChatRequest) -> Value {
        serde_json::to_value(self.body(request)).unwrap_or(Value::Null)
    }

    /// The body as a borrowing, serialisable struct: no copies of the
    /// messages or the schema on the hot path.
    fn body<'a>(&'a self, request: &'a ChatRequest) -> Body<'a> {
        let s = &request.sampling;
        let mut body = Body {
            model: &self.model,
            messages: request
                .messages
                .iter()
                .map(|m| WireMessage {
                    role: m.role,
                    content: Cow::Borrowed(&m.content),
                })
                .collect(),
            temperature: s.temperature,
            top_p: s.top_p,
            seed: s.seed,
            max_tokens: s.max_tokens,
            stop: &s.stop,
            logprobs: request.top_logprobs.map(|_| true),
            top_logprobs: request.top_logprobs,
            response_format: None,
        };
        if let Some(schema) = &request.schema {
            if self.mode == StructuredMode::JsonSchema {
                body.response_format = Some(ResponseFormat::JsonSchema {
                    json_schema: NamedSchema {
                        name: schema_name(&request.prompt.id),
                        schema,
                        strict: true,
                    },
                });
            } else {
                if self.mode == StructuredMode::JsonObject {
                    body.response_format = Some(ResponseFormat::JsonObject);
                }
                body.messages.push(WireMessage {
                    role: Role::System,
                    content: Cow::Owned(format!(
                        "Answer with one JSON value, and nothing else, that satisfies this JSON Schema:\n{schema}"
                    )),
                });
            }
        }
        body
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    temperature: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    logprobs: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_logprobs: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: Role,
    content: Cow<'a, str>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResponseFormat<'a> {
    JsonSchema { json_schema: NamedSchema<'a> },
    JsonObject,
}

#[derive(Serialize)]
struct NamedSchema<'a> {
    name: String,
    schema: &'a Value,
    strict: bool,
}

/// OpenAI allows `[a-zA-Z0-9_-]{1,64}` as a schema name.
fn schema_name(prompt_id: &str) -> String {
    let name: String = prompt_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "output".to_owned()
    } else {
        name
    }
}

/// Completion tokens reserved for a request that sets no `max_tokens`:
/// providers count the completion budget against the tokens-per-minute
/// limit, and judge answers (statement lists, verdicts with reasons) rarely
/// run longer. The real count replaces it when the answer arrives.
const DEFAULT_COMPLETION_ESTIMATE: u64 = 512;

/// What a chat request is debited from the tokens-per-minute bucket before
/// it is sent: about four bytes per prompt token over the encoded body
/// (messages, and the schema, which providers count too), plus the
/// completion budget.
fn estimate_tokens(request: &ChatRequest, body_bytes: usize) -> u64 {
    let completion = request
        .sampling
        .max_tokens
        .map_or(DEFAULT_COMPLETION_ESTIMATE, u64::from);
    (body_bytes / 4) as u64 + completion
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<ChoiceMessage>,
    finish_reason: Option<String>,
    logprobs: Option<ChoiceLogprobs>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    content: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

#[derive(Deserialize)]
struct ChoiceLogprobs {
    #[serde(default)]
    content: Vec<WireToken>,
}

#[derive(Deserialize)]
struct WireToken {
    token: String,
    logprob: f64,
    #[serde(default)]
    top_logprobs: Vec<WireAlternative>,
}

#[derive(Deserialize)]
struct WireAlternative {
    token: String,
    logprob: f64,
}

/// Reads a `/chat/completions` response body into a [`ChatResponse`];
/// `length` and `content_filter` endings become typed errors carrying the text.
pub fn parse_chat_body(body: &[u8]) -> Result<ChatResponse, Error> {
    let completion: Completion = serde_json::from_slice(body).map_err(|e| {
        Error::new(
            FailureKind::InvalidResponse,
            format!("body is not a chat completion: {e}"),
        )
    })?;
    let choice = completion
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| Error::new(FailureKind::InvalidResponse, "response has no choices"))?;
    let text = choice.message.and_then(|m| m.content).unwrap_or_default();
    let finish_reason =
        FinishReason::from_protocol(choice.finish_reason.as_deref().unwrap_or("stop"));
    match finish_reason {
        FinishReason::Length => {
            return Err(
                Error::new(FailureKind::Truncated, "the answer hit the token limit")
                    .with_raw_output(text),
            )
        }
        FinishReason::ContentFilter => {
            return Err(Error::new(
                FailureKind::ContentFilter,
                "the provider's filter withheld the answer",
            )
            .with_raw_output(text))
        }
        _ => {}
    }
    let usage = completion.usage.unwrap_or_default();
    let logprobs = choice.logprobs.map(|lp| {
        lp.content
            .into_iter()
            .map(|t| TokenLogprob {
                token: t.token,
                logprob: t.logprob,
                top: t
                    .top_logprobs
                    .into_iter()
                    .map(|a| (a.token, a.logprob))
                    .collect(),
            })
            .collect()
    });
    Ok(ChatResponse {
        text,
        json: None,
        finish_reason,
        usage: Usage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
        },
        latency: Duration::ZERO,
        source: Source::Upstream,
        logprobs,
        choice_probabilities: None,
    })
}

impl ChatModel for OpenAiChat {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, Error>> {
        Box::pin(async move {
            if request.continuation.is_some() {
                return Err(Error::new(
                    FailureKind::Config,
                    "scoring a given reply needs an in-process judge; \
                     the chat completions protocol cannot",
                ));
            }
            let body = serde_json::to_vec(&self.body(request)).map_err(|e| {
                Error::new(FailureKind::Config, format!("cannot encode request: {e}"))
            })?;
            let estimate = estimate_tokens(request, body.len());
            let start = Instant::now();
            let (mut resp, debit) = self
                .transport
                .post_metered("/chat/completions", body, estimate, |bytes| {
                    parse_chat_body(&bytes)
                })
                .await?;
            // The body's bytes were masked; a key spelt with JSON escapes
            // is masked once parsed.
            if let Cow::Owned(text) = self.transport.redact(&resp.text) {
                resp.text = text;
            }
            resp.latency = start.elapsed();
            // A body without usage reads as zero tokens: keep the estimate then.
            let used = resp.usage.prompt_tokens + resp.usage.completion_tokens;
            if used > 0 {
                debit.settle(used);
            }
            Ok(resp)
        })
    }
}

impl OpenAiEmbedder {
    /// A client for `spec`, with the API key `opts.api_key` or else from
    /// `opts.api_key_env`.
    pub fn new(
        spec: &ModelSpec,
        opts: &ProviderOptions,
        limiter: Arc<Limiter>,
    ) -> Result<Self, Error> {
        Self::with_key(spec, opts, api_key(opts), limiter)
    }

    /// A client for `spec` with an explicit key (`None` for keyless local servers).
    pub fn with_key(
        spec: &ModelSpec,
        opts: &ProviderOptions,
        key: Option<Secret>,
        limiter: Arc<Limiter>,
    ) -> Result<Self, Error> {
        let transport = Transport::new(spec.provider, opts, key, limiter)?;
        let identity = ModelIdentity {
            provider: spec.provider.to_string(),
            endpoint: transport.base_url().to_owned(),
            model: spec.model.clone(),
            settings: String::new(),
        };
        Ok(OpenAiEmbedder {
            transport: Arc::new(transport),
            identity,
            model: spec.model.clone(),
        })
    }

    async fn embed_chunk(&self, texts: &[String], out: &mut Embeddings) -> Result<(), Error> {
        let body = serde_json::to_vec(&json!({"model": self.model, "input": texts}))
            .map_err(|e| Error::new(FailureKind::Config, format!("cannot encode request: {e}")))?;
        let estimate = texts.iter().map(|t| t.len() as u64 / 4 + 1).sum();
        // The whole answer is read inside the exchange, so that a 200 with
        // an error object or the wrong vectors is asked again like a 5xx.
        let n = texts.len();
        let ((vectors, prompt_tokens), _) = self
            .transport
            .post_metered("/embeddings", body, estimate, |bytes| {
                parse_embeddings_body(&bytes, n)
            })
            .await?;
        out.vectors.extend(vectors);
        out.usage.prompt_tokens += prompt_tokens;
        Ok(())
    }
}

/// Reads an `/embeddings` response body holding `n` vectors: the vectors
/// (normalised) in input order, and the prompt tokens it reports.
fn parse_embeddings_body(bytes: &[u8], n: usize) -> Result<(Vec<Vec<f32>>, u64), Error> {
    let v = serde_json::from_slice::<Value>(bytes).map_err(|e| {
        Error::new(
            FailureKind::InvalidResponse,
            format!("body is not JSON: {e}"),
        )
    })?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .filter(|d| d.len() == n)
        .ok_or_else(|| {
            Error::new(
                FailureKind::InvalidResponse,
                "embeddings response has the wrong number of vectors",
            )
        })?;
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(pos, |i| i as usize);
        let vector: Vec<f32> = item
            .get("embedding")
            .and_then(Value::as_array)
            .and_then(|xs| {
                xs.iter()
                    .map(|x| x.as_f64().map(|f| f as f32))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| {
                Error::new(
                    FailureKind::InvalidResponse,
                    "an embedding is not an array of numbers",
                )
            })?;
        let slot = vectors.get_mut(index).ok_or_else(|| {
            Error::new(FailureKind::InvalidResponse, "embedding index out of range")
        })?;
        *slot = Some(normalize(vector)?);
    }
    let vectors = vectors
        .into_iter()
        .map(|v| {
            v.ok_or_else(|| {
                Error::new(
                    FailureKind::InvalidResponse,
                    "an embedding index is missing",
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let prompt_tokens = v
        .pointer("/usage/prompt_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok((vectors, prompt_tokens))
}

impl Embedder for OpenAiEmbedder {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    /// Sends the texts in chunks of `embed_batch`, one after another (each
    /// chunk is one request under the shared limits).
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Embeddings, Error>> {
        Box::pin(async move {
            let mut out = Embeddings {
                vectors: Vec::with_capacity(texts.len()),
                usage: Usage::default(),
            };
            for chunk in texts.chunks(self.transport.options().embed_batch.max(1)) {
                self.embed_chunk(chunk, &mut out).await?;
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, PromptRef};

    #[test]
    fn the_estimate_counts_the_body_and_the_completion_budget() {
        let mut request = ChatRequest::new(
            PromptRef {
                id: "p".into(),
                version: "1".into(),
            },
            vec![Message::user("x".repeat(400))],
        );
        assert_eq!(
            estimate_tokens(&request, 440),
            110 + DEFAULT_COMPLETION_ESTIMATE
        );
        request.sampling.max_tokens = Some(30);
        assert_eq!(estimate_tokens(&request, 440), 140);
    }
}
