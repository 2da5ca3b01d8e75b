//! The OpenAI-compatible provider: `/chat/completions` and `/embeddings`.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};

use crate::http::Transport;
use crate::limits::Limiter;
use crate::model::{
    normalize, BoxFuture, ChatModel, ChatRequest, ChatResponse, Embedder, Embeddings, FinishReason,
    ModelIdentity, Role, Source, TokenLogprob, Usage,
};
use crate::spec::{ModelSpec, ProviderOptions, StructuredMode};
use crate::{Error, ErrorKind, Secret};

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
    Secret::from_env(&names)
}

impl OpenAiChat {
    /// A client for `spec`, reading the API key from `opts.api_key_env`.
    ///
    /// Fails with [`ErrorKind::Auth`] when the provider needs a key and none is set.
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
        let mut messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect();
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        let s = &request.sampling;
        body.insert("temperature".into(), json!(s.temperature));
        if let Some(p) = s.top_p {
            body.insert("top_p".into(), json!(p));
        }
        if let Some(seed) = s.seed {
            body.insert("seed".into(), json!(seed));
        }
        if let Some(n) = s.max_tokens {
            body.insert("max_tokens".into(), json!(n));
        }
        if !s.stop.is_empty() {
            body.insert("stop".into(), json!(s.stop));
        }
        if let Some(n) = request.top_logprobs {
            body.insert("logprobs".into(), json!(true));
            body.insert("top_logprobs".into(), json!(n));
        }
        if let Some(schema) = &request.schema {
            match self.mode {
                StructuredMode::JsonSchema => {
                    body.insert(
                        "response_format".into(),
                        json!({"type": "json_schema", "json_schema": {
                            "name": schema_name(&request.prompt.id), "schema": schema, "strict": true}}),
                    );
                }
                StructuredMode::JsonObject => {
                    body.insert("response_format".into(), json!({"type": "json_object"}));
                    messages.push(schema_instruction(schema));
                }
                StructuredMode::Prompt => messages.push(schema_instruction(schema)),
            }
        }
        body.insert("messages".into(), Value::Array(messages));
        Value::Object(body)
    }
}

/// The schema spelled out for modes where the server does not enforce it.
fn schema_instruction(schema: &Value) -> Value {
    json!({"role": Role::System, "content": format!(
        "Answer with one JSON value, and nothing else, that satisfies this JSON Schema:\n{schema}")})
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

/// Rough token count used only for the tokens-per-minute bucket: about four
/// characters per token, plus the completion budget when one is set.
fn estimate_tokens(request: &ChatRequest) -> u64 {
    let chars: usize = request.messages.iter().map(|m| m.content.len()).sum();
    (chars / 4) as u64 + u64::from(request.sampling.max_tokens.unwrap_or(0))
}

/// Reads a `/chat/completions` response body into a [`ChatResponse`];
/// `length` and `content_filter` endings become typed errors carrying the text.
pub fn parse_chat_body(body: &[u8]) -> Result<ChatResponse, Error> {
    let invalid = |what: &str| Error::new(ErrorKind::InvalidResponse, what.to_owned());
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| Error::new(ErrorKind::InvalidResponse, format!("body is not JSON: {e}")))?;
    let choice = v
        .pointer("/choices/0")
        .ok_or_else(|| invalid("response has no choices"))?;
    let text = match choice.pointer("/message/content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(_) => return Err(invalid("message content is not a string")),
    };
    let finish_reason = FinishReason::from_protocol(
        choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .unwrap_or("stop"),
    );
    match finish_reason {
        FinishReason::Length => {
            return Err(
                Error::new(ErrorKind::Truncated, "the answer hit the token limit")
                    .with_raw_output(text),
            )
        }
        FinishReason::ContentFilter => {
            return Err(Error::new(
                ErrorKind::ContentFilter,
                "the provider's filter withheld the answer",
            )
            .with_raw_output(text))
        }
        _ => {}
    }
    let tokens = |name: &str| {
        v.pointer(&format!("/usage/{name}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let usage = Usage {
        prompt_tokens: tokens("prompt_tokens"),
        completion_tokens: tokens("completion_tokens"),
    };
    let logprobs = choice
        .pointer("/logprobs/content")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|t| TokenLogprob {
                    token: t
                        .get("token")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    logprob: t
                        .get("logprob")
                        .and_then(Value::as_f64)
                        .unwrap_or(f64::NEG_INFINITY),
                    top: t
                        .get("top_logprobs")
                        .and_then(Value::as_array)
                        .map(|alts| {
                            alts.iter()
                                .filter_map(|a| {
                                    Some((
                                        a.get("token")?.as_str()?.to_owned(),
                                        a.get("logprob")?.as_f64()?,
                                    ))
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        });
    Ok(ChatResponse {
        text,
        json: None,
        finish_reason,
        usage,
        latency: std::time::Duration::ZERO,
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
            let body = serde_json::to_vec(&self.request_body(request)).map_err(|e| {
                Error::new(ErrorKind::Config, format!("cannot encode request: {e}"))
            })?;
            let start = Instant::now();
            let bytes = self
                .transport
                .post("/chat/completions", body, estimate_tokens(request))
                .await?;
            let mut resp = parse_chat_body(&bytes)?;
            resp.latency = start.elapsed();
            Ok(resp)
        })
    }
}

impl OpenAiEmbedder {
    /// A client for `spec`, reading the API key from `opts.api_key_env`.
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
            .map_err(|e| Error::new(ErrorKind::Config, format!("cannot encode request: {e}")))?;
        let estimate = texts.iter().map(|t| t.len() as u64 / 4 + 1).sum();
        let bytes = self.transport.post("/embeddings", body, estimate).await?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(ErrorKind::InvalidResponse, format!("body is not JSON: {e}"))
        })?;
        let data = v
            .get("data")
            .and_then(Value::as_array)
            .filter(|d| d.len() == texts.len())
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidResponse,
                    "embeddings response has the wrong number of vectors",
                )
            })?;
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
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
                        ErrorKind::InvalidResponse,
                        "an embedding is not an array of numbers",
                    )
                })?;
            let slot = vectors.get_mut(index).ok_or_else(|| {
                Error::new(ErrorKind::InvalidResponse, "embedding index out of range")
            })?;
            *slot = Some(normalize(vector)?);
        }
        for v in vectors {
            out.vectors.push(v.ok_or_else(|| {
                Error::new(ErrorKind::InvalidResponse, "an embedding index is missing")
            })?);
        }
        out.usage.prompt_tokens += v
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Ok(())
    }
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
