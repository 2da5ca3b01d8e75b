//! What users type: `--judge openai:MODEL`, `--embedder ollama:MODEL`, and
//! the options that go with them.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::{Error, FailureKind};

/// An OpenAI-compatible provider. All speak the same protocol; the presets
/// differ only in their default base URL and structured-output mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// The OpenAI API (`https://api.openai.com/v1`).
    OpenAi,
    /// Ollama's OpenAI-compatible endpoint (`http://localhost:11434/v1`).
    Ollama,
    /// A vLLM server (`http://localhost:8000/v1`).
    Vllm,
    /// A llama.cpp server (`http://localhost:8080/v1`).
    LlamaCpp,
}

impl ProviderKind {
    /// Every provider, in declaration order.
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::OpenAi,
        ProviderKind::Ollama,
        ProviderKind::Vllm,
        ProviderKind::LlamaCpp,
    ];

    /// The id used in specs (`openai`, `ollama`, `vllm`, `llamacpp`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Vllm => "vllm",
            ProviderKind::LlamaCpp => "llamacpp",
        }
    }

    /// The base URL used when none is given (it ends in `/v1`).
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Ollama => "http://localhost:11434/v1",
            ProviderKind::Vllm => "http://localhost:8000/v1",
            ProviderKind::LlamaCpp => "http://localhost:8080/v1",
        }
    }

    /// How structured output is requested when not overridden.
    ///
    /// OpenAI, vLLM and llama.cpp enforce a strict `json_schema` response
    /// format; Ollama's compatibility layer is only relied on for `json_object`.
    pub fn default_structured_mode(self) -> StructuredMode {
        match self {
            ProviderKind::Ollama => StructuredMode::JsonObject,
            _ => StructuredMode::JsonSchema,
        }
    }

    /// Whether requests need an API key (hosted) or may go without (local servers).
    pub fn requires_key(self) -> bool {
        matches!(self, ProviderKind::OpenAi)
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        ProviderKind::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                Error::new(
                    FailureKind::Config,
                    format!("unknown provider {s:?} (expected openai, ollama, vllm or llamacpp)"),
                )
            })
    }
}

/// A model named as `PROVIDER:MODEL`, e.g. `openai:gpt-4o-mini`.
///
/// ```
/// use assay_llm::{JudgeSpec, ProviderKind};
/// let spec: JudgeSpec = "ollama:llama3.1:8b".parse().unwrap();
/// assert_eq!(spec.provider, ProviderKind::Ollama);
/// assert_eq!(spec.model, "llama3.1:8b");
/// assert_eq!(spec.to_string(), "ollama:llama3.1:8b");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelSpec {
    /// The provider.
    pub provider: ProviderKind,
    /// The model name as the provider knows it (may itself contain `:`).
    pub model: String,
}

/// The `--judge` value: a chat model.
pub type JudgeSpec = ModelSpec;
/// The `--embedder` value: an embedding model.
pub type EmbedderSpec = ModelSpec;

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.model)
    }
}

impl FromStr for ModelSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let (provider, model) = s.split_once(':').ok_or_else(|| {
            Error::new(
                FailureKind::Config,
                format!("model spec {s:?} must look like PROVIDER:MODEL"),
            )
        })?;
        if model.trim().is_empty() {
            return Err(Error::new(
                FailureKind::Config,
                format!("model spec {s:?} names no model"),
            ));
        }
        Ok(ModelSpec {
            provider: provider.parse()?,
            model: model.to_owned(),
        })
    }
}

/// How the output schema is conveyed to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StructuredMode {
    /// `response_format: {type: json_schema, strict: true}`.
    JsonSchema,
    /// `response_format: {type: json_object}` plus the schema in the prompt.
    JsonObject,
    /// The schema in the prompt only.
    Prompt,
}

impl StructuredMode {
    /// Every mode, in declaration order.
    pub const ALL: [StructuredMode; 3] = [
        StructuredMode::JsonSchema,
        StructuredMode::JsonObject,
        StructuredMode::Prompt,
    ];

    /// The id (`json_schema`, `json_object`, `prompt`).
    pub fn as_str(self) -> &'static str {
        match self {
            StructuredMode::JsonSchema => "json_schema",
            StructuredMode::JsonObject => "json_object",
            StructuredMode::Prompt => "prompt",
        }
    }
}

impl fmt::Display for StructuredMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StructuredMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        StructuredMode::ALL.into_iter().find(|m| m.as_str() == s).ok_or_else(|| {
            Error::new(
                FailureKind::Config,
                format!("unknown structured-output mode {s:?} (expected json_schema, json_object or prompt)"),
            )
        })
    }
}

/// Where the response cache lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheLocation {
    /// `$ASSAY_HOME/cache.sqlite`, else `~/.cache/assay/cache.sqlite`.
    Default,
    /// An explicit file (`--cache PATH`).
    Path(PathBuf),
    /// No cache (`--no-cache`).
    Disabled,
}

impl CacheLocation {
    /// The file this location resolves to, or `None` when disabled.
    pub fn resolve(&self) -> Result<Option<PathBuf>, Error> {
        match self {
            CacheLocation::Disabled => Ok(None),
            CacheLocation::Path(p) => Ok(Some(p.clone())),
            CacheLocation::Default => default_cache_path().map(Some),
        }
    }
}

/// `$ASSAY_HOME/cache.sqlite`, else `$HOME/.cache/assay/cache.sqlite`.
pub fn default_cache_path() -> Result<PathBuf, Error> {
    if let Some(home) = std::env::var_os("ASSAY_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home).join("cache.sqlite"));
    }
    let home = std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            Error::new(
                FailureKind::Config,
                "neither ASSAY_HOME nor HOME is set; pass a cache path",
            )
        })?;
    Ok(PathBuf::from(home)
        .join(".cache")
        .join("assay")
        .join("cache.sqlite"))
}

/// Options of the HTTP provider, with the documented defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderOptions {
    /// `--base-url`; `None` uses the provider's default.
    pub base_url: Option<String>,
    /// An API key given explicitly (Python's `api_key=`); tried before
    /// `api_key_env`. Never written anywhere: [`Secret`](crate::Secret) prints `****`.
    pub api_key: Option<crate::Secret>,
    /// Environment variables tried in order for the API key.
    pub api_key_env: Vec<String>,
    /// `--concurrency`: requests in flight at once, over all callers (default 16).
    pub concurrency: usize,
    /// `--rpm`: requests per minute, when limited.
    pub rpm: Option<u32>,
    /// `--tpm`: tokens per minute, when limited (an estimate is debited
    /// before sending, then settled with the usage the answer reports).
    pub tpm: Option<u32>,
    /// Retries after the first attempt for retryable failures (default 6).
    pub max_retries: u32,
    /// Timeout of one attempt, from sending to the last body byte (default 60 s).
    pub attempt_timeout: Duration,
    /// Timeout of establishing a connection (default 10 s).
    pub connect_timeout: Duration,
    /// First backoff ceiling; doubles per retry (default 500 ms).
    pub backoff_base: Duration,
    /// Largest backoff ceiling (default 30 s).
    pub backoff_max: Duration,
    /// Longest `Retry-After` honoured; a longer one fails as `rate_limited` (default 120 s).
    pub max_retry_after: Duration,
    /// Largest response body accepted (default 8 MiB).
    pub max_response_bytes: usize,
    /// Structured-output mode; `None` uses the provider's default.
    pub structured_mode: Option<StructuredMode>,
    /// Re-asks showing the model its invalid output (default 1).
    pub repair_attempts: u32,
    /// `--max-tokens`: the most tokens of a judge answer, set on every
    /// request that sets none (and so part of its key); `None` leaves it
    /// to the model (default).
    pub max_tokens: Option<u32>,
    /// Texts per embeddings request (default 128).
    pub embed_batch: usize,
}

impl Default for ProviderOptions {
    fn default() -> Self {
        ProviderOptions {
            base_url: None,
            api_key: None,
            api_key_env: vec!["OPENAI_API_KEY".into(), "ASSAY_API_KEY".into()],
            concurrency: 16,
            rpm: None,
            tpm: None,
            max_retries: 6,
            attempt_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            max_response_bytes: 8 << 20,
            structured_mode: None,
            repair_attempts: 1,
            max_tokens: None,
            embed_batch: 128,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_keep_colons_in_model_names() {
        for s in [
            "openai:gpt-4o-mini",
            "ollama:llama3.1:8b",
            "vllm:Qwen/Qwen2.5-7B",
            "llamacpp:x",
        ] {
            let spec: ModelSpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
        }
        assert_eq!(
            "vllm:m"
                .parse::<ModelSpec>()
                .unwrap()
                .provider
                .default_base_url(),
            "http://localhost:8000/v1"
        );
    }

    #[test]
    fn bad_specs_are_config_errors() {
        for s in ["gpt-4o", "openai:", "anthropic:claude", ""] {
            let err = s.parse::<ModelSpec>().unwrap_err();
            assert_eq!(err.kind(), FailureKind::Config, "{s}");
        }
    }

    #[test]
    fn cache_locations_resolve_with_assay_home_first() {
        // The only test in this binary that touches these variables.
        std::env::set_var("ASSAY_HOME", "/tmp/assay-home-test");
        assert_eq!(
            CacheLocation::Default.resolve().unwrap(),
            Some(PathBuf::from("/tmp/assay-home-test/cache.sqlite"))
        );
        std::env::remove_var("ASSAY_HOME");
        std::env::set_var("HOME", "/home/someone");
        assert_eq!(
            CacheLocation::Default.resolve().unwrap(),
            Some(PathBuf::from("/home/someone/.cache/assay/cache.sqlite"))
        );
        assert_eq!(CacheLocation::Disabled.resolve().unwrap(), None);
        let p = PathBuf::from("x/c.sqlite");
        assert_eq!(CacheLocation::Path(p.clone()).resolve().unwrap(), Some(p));
    }

    #[test]
    fn modes_and_providers_round_trip() {
        for m in StructuredMode::ALL {
            assert_eq!(m.to_string().parse::<StructuredMode>().unwrap(), m);
        }
        for p in ProviderKind::ALL {
            assert_eq!(p.to_string().parse::<ProviderKind>().unwrap(), p);
        }
    }
}
