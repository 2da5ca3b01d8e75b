//! Request keys: sha256 over a canonical encoding of everything that can
//! change an answer, and nothing secret.
//!
//! The key is the cache key, the single-flight key and the batch
//! `custom_id`. It covers the model identity (provider, endpoint, model,
//! answer-changing settings), the prompt id and version, the rendered
//! messages, every sampling parameter, the output schema and the logprobs
//! request. API keys and headers are not inputs, so they cannot leak into it.

use std::fmt;
use std::io;

use serde::Serialize;
use serde_json::Value;
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

    /// The 32 bytes the hex digits spell (how the cache stores the key).
    ///
    /// ```
    /// let key = assay_llm::RequestKey::parse(&"0a".repeat(32)).unwrap();
    /// assert_eq!(key.digest(), [10u8; 32]);
    /// ```
    pub fn digest(&self) -> [u8; 32] {
        let nibble = |c: u8| {
            if c.is_ascii_digit() {
                c - b'0'
            } else {
                c - b'a' + 10
            }
        };
        let mut out = [0u8; 32];
        for (byte, pair) in out.iter_mut().zip(self.0.as_bytes().chunks_exact(2)) {
            *byte = nibble(pair[0]) << 4 | nibble(pair[1]);
        }
        out
    }

    /// Key of a chat request to a model.
    pub fn chat(identity: &ModelIdentity, request: &ChatRequest) -> Self {
        let s = &request.sampling;
        let mut h = Canonical::new("chat", identity);
        h.field("prompt_id", &request.prompt.id);
        h.field("prompt_version", &request.prompt.version);
        h.field("messages", &request.messages);
        h.field("temperature", &s.temperature);
        h.field("top_p", &s.top_p);
        h.field("seed", &s.seed);
        h.field("max_tokens", &s.max_tokens);
        h.field("stop", &s.stop);
        h.name("schema");
        match &request.schema {
            Some(schema) => h.value(schema),
            None => h.put(&()),
        }
        h.field("top_logprobs", &request.top_logprobs);
        // Only when set, so that the keys of every other request stay as
        // they were.
        if let Some(reply) = &request.continuation {
            h.field("continuation", reply);
        }
        h.finish()
    }

    /// Key of one text's embedding.
    pub fn embedding(identity: &ModelIdentity, text: &str) -> Self {
        let mut h = Canonical::new("embedding", identity);
        h.field("text", text);
        h.finish()
    }

    /// Wraps a stored key (e.g. a batch `custom_id`) if it is well formed.
    pub fn parse(s: &str) -> Option<Self> {
        (s.len() == 64
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .then(|| RequestKey(s.to_owned()))
    }
}

/// Builds the canonical encoding, then hashes it in one go: one
/// `name=JSON` line per input in a fixed order, JSON objects of the schema
/// with their keys sorted (whatever map order serde_json was built with;
/// feature unification could turn on `preserve_order`). Buffered because
/// serde_json writes a token at a time, and a hasher update per token made
/// each key about a third slower.
struct Canonical(Vec<u8>);

impl io::Write for Canonical {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Canonical {
    fn new(kind: &str, identity: &ModelIdentity) -> Self {
        let mut h = Canonical(Vec::with_capacity(1024));
        h.0.extend_from_slice(KEY_FORMAT.as_bytes());
        h.field("kind", kind);
        h.field("provider", &identity.provider);
        h.field("endpoint", &identity.endpoint);
        h.field("model", &identity.model);
        h.field("settings", &identity.settings);
        h
    }

    fn name(&mut self, name: &str) {
        self.0.push(b'\n');
        self.0.extend_from_slice(name.as_bytes());
        self.0.push(b'=');
    }

    fn field<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) {
        self.name(name);
        self.put(value);
    }

    /// Serialising plain data into a hasher cannot fail.
    fn put<T: Serialize + ?Sized>(&mut self, value: &T) {
        let _ = serde_json::to_writer(&mut *self, value);
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Object(map) => {
                self.0.push(b'{');
                if map.keys().is_sorted() {
                    self.entries(map.iter());
                } else {
                    let mut entries: Vec<_> = map.iter().collect();
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                    self.entries(entries.into_iter());
                }
                self.0.push(b'}');
            }
            Value::Array(items) => {
                self.0.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.0.push(b',');
                    }
                    self.value(item);
                }
                self.0.push(b']');
            }
            scalar => self.put(scalar),
        }
    }

    fn entries<'a>(&mut self, entries: impl Iterator<Item = (&'a String, &'a Value)>) {
        for (i, (k, v)) in entries.enumerate() {
            if i > 0 {
                self.0.push(b',');
            }
            self.put(k);
            self.0.push(b':');
            self.value(v);
        }
    }

    fn finish(self) -> RequestKey {
        let digest = Sha256::digest(&self.0);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, PromptRef};
    use serde_json::json;

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

    /// Keys index users' caches: a change of encoding would silently turn
    /// every stored answer into a miss (and must bump `KEY_FORMAT`).
    #[test]
    fn key_is_the_sha256_of_the_documented_canonical_text() {
        let text = concat!(
            "assay-llm-key/1",
            "\nkind=\"chat\"",
            "\nprovider=\"openai\"",
            "\nendpoint=\"http://127.0.0.1:1/v1\"",
            "\nmodel=\"m\"",
            "\nsettings=\"json_schema\"",
            "\nprompt_id=\"p\"",
            "\nprompt_version=\"1\"",
            "\nmessages=[{\"role\":\"user\",\"content\":\"hi\"}]",
            "\ntemperature=0.0",
            "\ntop_p=null",
            "\nseed=0",
            "\nmax_tokens=null",
            "\nstop=[]",
            "\nschema={\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{}},\"type\":\"object\"}",
            "\ntop_logprobs=null",
        );
        let expected: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(RequestKey::chat(&identity(), &request()).as_str(), expected);
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
        let edits: [fn(&mut ModelIdentity, &mut ChatRequest); 14] = [
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
            |_, r| r.continuation = Some("Rome.".into()),
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
