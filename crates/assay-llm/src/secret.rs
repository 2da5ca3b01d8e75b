//! Secrets as a type: an API key can be used but never shown.

use std::borrow::Cow;
use std::fmt;

/// What a secret is replaced by wherever it would show.
const MASK: &str = "****";

/// Keys shorter than this are placeholders that keyless servers are
/// given (vLLM's `EMPTY`, `none`, `dummy`, `ollama`), not secrets: masking
/// them would rewrite ordinary words of the answers.
const SHORTEST_MASKED: usize = 8;

/// An API key or other credential. `Debug` and `Display` print `****`, so a
/// secret cannot leak through logs, error details or reports by accident.
///
/// ```
/// use assay_llm::Secret;
/// let key = Secret::new("sk-live-123");
/// assert_eq!(format!("{key} {key:?}"), "**** Secret(****)");
/// assert_eq!(key.expose(), "sk-live-123");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The first non-empty value among the named environment variables.
    pub fn from_env(names: &[&str]) -> Option<Self> {
        names
            .iter()
            .filter_map(|n| std::env::var(n).ok())
            .find(|v| !v.trim().is_empty())
            .map(Secret)
    }

    /// The secret itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The secret when it is long enough to be one (see `SHORTEST_MASKED`).
    fn maskable(&self) -> Option<&str> {
        (self.0.chars().count() >= SHORTEST_MASKED).then_some(self.0.as_str())
    }

    /// `text` with every occurrence of the secret replaced by `****`:
    /// for text that came from elsewhere (a server's error message, its
    /// answer) and may quote the key it was sent, before it is stored or
    /// shown.
    ///
    /// ```
    /// use assay_llm::Secret;
    /// let key = Secret::new("sk-live-1234567");
    /// assert_eq!(key.redact("Incorrect API key provided: sk-live-1234567."),
    ///            "Incorrect API key provided: ****.");
    /// // A placeholder key of a keyless server is no secret.
    /// assert_eq!(Secret::new("EMPTY").redact("EMPTY context"), "EMPTY context");
    /// ```
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.maskable() {
            Some(secret) if text.contains(secret) => Cow::Owned(text.replace(secret, MASK)),
            _ => Cow::Borrowed(text),
        }
    }

    /// [`Secret::redact`] of raw bytes, e.g. a response body before it is
    /// parsed, so that nothing parsed from it (texts, a parser's error
    /// quoting the body) can hold the secret.
    ///
    /// ```
    /// use assay_llm::Secret;
    /// let key = Secret::new("sk-live-1234567");
    /// let body = br#"{"error": "bad key sk-live-1234567"}"#.to_vec();
    /// assert_eq!(key.redact_bytes(body), br#"{"error": "bad key ****"}"#);
    /// ```
    pub fn redact_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        let Some(secret) = self.maskable() else {
            return bytes;
        };
        let mut found = memchr::memmem::find_iter(&bytes, secret.as_bytes()).peekable();
        if found.peek().is_none() {
            return bytes;
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut from = 0;
        for at in found {
            out.extend_from_slice(&bytes[from..at]);
            out.extend_from_slice(MASK.as_bytes());
            from = at + secret.len();
        }
        out.extend_from_slice(&bytes[from..]);
        out
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(****)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MASK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_is_masked_and_nothing_else_changes() {
        let key = Secret::new("sk-abc-12345678");
        let text = "sk-abc-12345678 and Bearer sk-abc-12345678; sk-abc-1234567 is not it";
        let masked = "**** and Bearer ****; sk-abc-1234567 is not it";
        assert_eq!(key.redact(text), masked);
        assert_eq!(
            key.redact_bytes(text.as_bytes().to_vec()),
            masked.as_bytes()
        );
        assert!(matches!(key.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn placeholder_keys_of_keyless_servers_are_left_alone() {
        for placeholder in ["", "x", "EMPTY", "none", "dummy", "ollama"] {
            let key = Secret::new(placeholder);
            let text = format!("{placeholder} is a word of the answer");
            assert_eq!(key.redact(&text), text);
            assert_eq!(key.redact_bytes(text.clone().into_bytes()), text.as_bytes());
        }
    }
}
