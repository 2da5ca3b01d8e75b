//! Signatures in the sacreBLEU spirit: one line that says how a number was
//! made, and changes whenever anything that can change the number changes.

use std::fmt;

/// A metric's signature, rendered `name|vN|key:value|...|assay:VERSION`.
///
/// ```
/// use assay_core::Signature;
/// let sig = Signature::new("rouge", 1).with("stem", "no").with("multiref", "max");
/// assert_eq!(sig.to_string(), format!("rouge|v1|stem:no|multiref:max|assay:{}", env!("CARGO_PKG_VERSION")));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    name: String,
    version: u32,
    parts: Vec<(String, String)>,
}

impl Signature {
    /// `version` is the metric implementation's version: bump it whenever
    /// a change in the code can change a number.
    pub fn new(name: &str, version: u32) -> Signature {
        Signature {
            name: name.to_string(),
            version,
            parts: Vec::new(),
        }
    }

    /// Adds a `key:value` part; order is kept as given.
    pub fn with(mut self, key: &str, value: impl fmt::Display) -> Signature {
        self.parts.push((key.to_string(), value.to_string()));
        self
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}|v{}", self.name, self.version)?;
        for (k, v) in &self.parts {
            write!(f, "|{k}:{v}")?;
        }
        write!(f, "|assay:{}", env!("CARGO_PKG_VERSION"))
    }
}
