//! Secrets as a type: an API key can be used but never shown.

use std::fmt;

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
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(****)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("****")
    }
}
