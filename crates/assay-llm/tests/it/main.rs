//! Integration tests of assay-llm against a real loopback HTTP server.

mod batch;
mod cache;
mod embeddings;
mod faults;
mod limits;
mod props;
mod structured;
mod wire;

pub use assay_test_server as server;

use std::sync::Arc;
use std::time::Duration;

use assay_llm::{
    ChatRequest, Judge, Limiter, Message, ModelSpec, OpenAiChat, PromptRef, ProviderKind,
    ProviderOptions, Secret,
};
use serde_json::{json, Value};

/// Options pointing at `server`, with short waits so fault tests run fast.
pub fn options(server: &server::Server) -> ProviderOptions {
    ProviderOptions {
        base_url: Some(server.base_url()),
        backoff_base: Duration::from_millis(5),
        backoff_max: Duration::from_millis(20),
        attempt_timeout: Duration::from_secs(5),
        ..ProviderOptions::default()
    }
}

pub fn spec(model: &str) -> ModelSpec {
    ModelSpec {
        provider: ProviderKind::OpenAi,
        model: model.to_owned(),
    }
}

pub const KEY: &str = "sk-test-7f3a9c1e5b2d4f6a8c0e";

pub fn client(opts: &ProviderOptions, model: &str) -> OpenAiChat {
    let limiter = Arc::new(Limiter::new(opts.concurrency, opts.rpm, opts.tpm));
    OpenAiChat::with_key(&spec(model), opts, Some(Secret::new(KEY)), limiter).expect("client")
}

pub fn judge(opts: &ProviderOptions, cache: Option<Arc<assay_llm::Cache>>) -> Judge {
    Judge::new(
        Arc::new(client(opts, "judge-model")),
        cache,
        opts.repair_attempts,
    )
}

pub fn request(text: &str) -> ChatRequest {
    ChatRequest::new(
        PromptRef {
            id: "test.prompt".into(),
            version: "1".into(),
        },
        vec![Message::user(text)],
    )
}

pub fn verdict_schema() -> Value {
    json!({
        "type": "object", "required": ["verdict"], "additionalProperties": false,
        "properties": {"verdict": {"type": "integer", "enum": [0, 1]}}
    })
}

/// A fresh, empty folder under the system temp dir for one test, removed
/// with everything in it when dropped.
pub fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("assay-llm-it-{name}-"))
        .tempdir()
        .expect("temp dir")
}
