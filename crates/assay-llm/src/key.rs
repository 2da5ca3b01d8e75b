//! Request keys: sha256 over a canonical encoding of everything that can
//! change an answer, and nothing secret.
//!
//! The key is the cache key, the single-flight key and the batch
//! `custom_id`. It covers the model identity (provider, endpoint, model,
//! answer-changing settings), the prompt id and version, the rendered
//! messages, every sampling parameter, the output schema and the logprobs
//! request. API keys and headers are not inputs, so they cannot leak into it.

use std::fmt;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::model::{ChatRequest, ModelIdentity};

/// Bumped when the encoding changes, so old cache rows are simply not found.
const KEY_FORMAT: &str = "assay-llm-key/1";

/// A 64-hex-digit request key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestKey(String);

impl RequestKey {
    /// The hex digest.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Key of a chat request to a model.
    pub fn chat(identity: &ModelIdentity, request: &ChatRequest) -> Self {
        let s = &request.sampling;
        let doc = json!({
            "kind": "chat",
            "identity": identity,
            "prompt": {"id": request.prompt.id, "version": request.prompt.version},
            "messages": request.messages,
            "sampling": {
                "temperature": s.temperature,
                "top_p": s.top_p,
                "seed": s.seed,
                "max_tokens": s.max_tokens,
                "stop": s.stop,
            },
            "schema": request.schema,
            "top_logprobs": request.top_logprobs,
        });
        RequestKey::of(&doc)
    }

    /// Key of one text's embedding.
    pub fn embedding(identity: &ModelIdentity, text: &str) -> Self {
        RequestKey::of(&json!({"kind": "embedding", "identity": identity, "text": text}))
    }

    /// Wraps a stored key (e.g. a batch `custom_id`) if it is well formed.
    pub fn parse(s: &str) -> Option<Self> {
        (s.len() == 64
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .then(|| RequestKey(s.to_owned()))
    }

    fn of(doc: &Value) -> Self {
        let mut canonical = String::from(KEY_FORMAT);
        canonical.push('\n');
        write_canonical(doc, &mut canonical);
        let digest = Sha256::digest(canonical.as_bytes());
        let mut hex = String::with_capacity(64);
        for b in digest {
            hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            hex.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
        }
        RequestKey(hex)
    }
}

impl fmt::Display for RequestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// JSON with object keys sorted, whatever map order serde_json was built
/// with (feature unification could turn on `preserve_order`).
fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, PromptRef};

    fn identity() -> ModelIdentity {
        ModelIdentity {
            provider: "openai".into(),
            endpoint: "http://127.0.0.1:1/v1".into(),
            model: "m".into(),
            settings: "json_schema".into(),
        }
    }

    fn request() -> ChatRequest {
        ChatRequest::new(
            PromptRef {
                id: "p".into(),
                version: "1".into(),
            },
            vec![Message::user("hi")],
        )
        .with_schema(json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {}}}))
    }

    #[test]
    fn key_is_stable_and_hex() {
        let k = RequestKey::chat(&identity(), &request());
        assert_eq!(k, RequestKey::chat(&identity(), &request()));
        assert!(RequestKey::parse(k.as_str()).is_some());
        assert!(RequestKey::parse("xyz").is_none());
    }

    #[test]
    fn schema_key_order_does_not_matter() {
        let a = request();
        let mut b = request();
        b.schema = Some(
            serde_json::from_str(
                r#"{"properties": {"b": {}, "a": {"type": "string"}}, "type": "object"}"#,
            )
            .unwrap(),
        );
        assert_eq!(
            RequestKey::chat(&identity(), &a),
            RequestKey::chat(&identity(), &b)
        );
    }

    #[test]
    fn every_input_changes_the_key() {
        let base = RequestKey::chat(&identity(), &request());
        let mut variants: Vec<(ModelIdentity, ChatRequest)> = Vec::new();
        let edits: [fn(&mut ModelIdentity, &mut ChatRequest); 13] = [
            |i, _| i.provider = "vllm".into(),
            |i, _| i.endpoint = "http://other/v1".into(),
            |i, _| i.model = "m2".into(),
            |i, _| i.settings = "prompt".into(),
            |_, r| r.prompt.id = "q".into(),
            |_, r| r.prompt.version = "2".into(),
            |_, r| r.messages[0].content = "hi!".into(),
            |_, r| r.sampling.temperature = 0.5,
            |_, r| r.sampling.top_p = Some(0.9),
            |_, r| r.sampling.seed = Some(1),
            |_, r| r.sampling.max_tokens = Some(10),
            |_, r| r.sampling.stop = vec!["\n".into()],
            |_, r| r.schema = None,
        ];
        for edit in edits {
            let (mut i, mut r) = (identity(), request());
            edit(&mut i, &mut r);
            variants.push((i, r));
        }
        let mut r = request();
        r.top_logprobs = Some(5);
        variants.push((identity(), r));
        let mut seen = std::collections::HashSet::new();
        seen.insert(base);
        for (i, r) in &variants {
            assert!(
                seen.insert(RequestKey::chat(i, r)),
                "an edit did not change the key"
            );
        }
    }
}
