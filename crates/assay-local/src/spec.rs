//! What users type after `--judge local` / `--embedder local`, and where
//! the models live.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::fingerprint::file_name;
use crate::Error;

/// The chat models `scripts/fetch-models.sh` installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KnownJudge {
    /// Qwen2.5-Coder-0.5B-Instruct, the default judge.
    Qwen25Coder05b,
    /// SmolLM2-135M-Instruct (Q4_1): fast, for tests; too weak to judge.
    Smollm2135m,
    /// Qwen2.5-Coder-1.5B-Instruct (Q4_K_M): the stronger, slower option,
    /// fetched on demand (`scripts/fetch-models.sh --with qwen2.5-coder-1.5b`).
    Qwen25Coder15b,
}

impl KnownJudge {
    /// Every known judge.
    pub const ALL: [KnownJudge; 3] = [
        KnownJudge::Qwen25Coder05b,
        KnownJudge::Smollm2135m,
        KnownJudge::Qwen25Coder15b,
    ];

    /// The name users type after `local:`.
    pub fn as_str(self) -> &'static str {
        match self {
            KnownJudge::Qwen25Coder05b => "qwen2.5-coder-0.5b",
            KnownJudge::Smollm2135m => "smollm2-135m",
            KnownJudge::Qwen25Coder15b => "qwen2.5-coder-1.5b",
        }
    }

    /// The file name under the models directory.
    pub fn file_name(self) -> &'static str {
        match self {
            KnownJudge::Qwen25Coder05b => "qwen2.5-coder-0.5b-instruct.gguf",
            KnownJudge::Smollm2135m => "smollm2-135m-instruct-q4_1.gguf",
            KnownJudge::Qwen25Coder15b => "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        }
    }

    /// Whether the fetch script gets it only when asked (`--with NAME`).
    pub fn fetched_on_demand(self) -> bool {
        self == KnownJudge::Qwen25Coder15b
    }

    /// Where the fetch script puts it.
    pub fn path(self) -> PathBuf {
        models_dir().join(self.file_name())
    }
}

/// The embedders `scripts/fetch-models.sh` installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KnownEmbedder {
    /// sentence-transformers all-MiniLM-L6-v2, the default embedder.
    AllMiniLmL6V2,
}

impl KnownEmbedder {
    /// The name users type after `local:`.
    pub fn as_str(self) -> &'static str {
        match self {
            KnownEmbedder::AllMiniLmL6V2 => "all-minilm-l6-v2",
        }
    }

    /// The directory (safetensors, tokenizer.json, config.json).
    pub fn path(self) -> PathBuf {
        models_dir().join(self.as_str())
    }
}

/// A local model as given on the command line: `local` (the default judge
/// or embedder), `local:NAME` (a known model) or `local:PATH` (a GGUF file
/// for a judge; a directory with `model.safetensors`, `tokenizer.json` and
/// `config.json` for an embedder).
///
/// ```
/// use assay_local::{KnownJudge, LocalSpec};
/// let s: LocalSpec = "local:smollm2-135m".parse().unwrap();
/// assert_eq!(s, LocalSpec::Judge(KnownJudge::Smollm2135m));
/// assert_eq!(s.to_string(), "local:smollm2-135m");
/// assert_eq!("local".parse::<LocalSpec>().unwrap(), LocalSpec::Default);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LocalSpec {
    /// The default model of the role it is used for.
    Default,
    /// A known chat model.
    Judge(KnownJudge),
    /// A known embedder.
    Embedder(KnownEmbedder),
    /// A model file or directory.
    File(PathBuf),
}

impl FromStr for LocalSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s.strip_prefix("local") {
            Some("") => Ok(LocalSpec::Default),
            Some(r) => match r.strip_prefix(':') {
                Some(name) => LocalSpec::named(Some(name)),
                None => Err(Error::Spec {
                    spec: s.to_owned(),
                    detail: "expected `local` or `local:MODEL`".to_owned(),
                }),
            },
            None => Err(Error::Spec {
                spec: s.to_owned(),
                detail: "local model specs start with `local`".to_owned(),
            }),
        }
    }
}

impl fmt::Display for LocalSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            None => f.write_str("local"),
            Some(name) => write!(f, "local:{name}"),
        }
    }
}

impl LocalSpec {
    /// The model `name` stands for, the part after `local:` (`None`: the
    /// default model).
    ///
    /// ```
    /// use assay_local::{KnownJudge, LocalSpec};
    /// assert_eq!(LocalSpec::named(None).unwrap(), LocalSpec::Default);
    /// assert_eq!(
    ///     LocalSpec::named(Some("smollm2-135m")).unwrap(),
    ///     LocalSpec::Judge(KnownJudge::Smollm2135m)
    /// );
    /// assert!(LocalSpec::named(Some("gpt-4o")).is_err());
    /// ```
    pub fn named(name: Option<&str>) -> Result<LocalSpec, Error> {
        let Some(name) = name else {
            return Ok(LocalSpec::Default);
        };
        let bad = |detail: String| Error::Spec {
            spec: format!("local:{name}"),
            detail,
        };
        if name.is_empty() {
            return Err(bad("no model after `local:`".to_owned()));
        }
        if let Some(j) = KnownJudge::ALL.into_iter().find(|j| j.as_str() == name) {
            return Ok(LocalSpec::Judge(j));
        }
        if name == KnownEmbedder::AllMiniLmL6V2.as_str() {
            return Ok(LocalSpec::Embedder(KnownEmbedder::AllMiniLmL6V2));
        }
        if name.contains('/') || name.ends_with(".gguf") {
            return Ok(LocalSpec::File(PathBuf::from(name)));
        }
        let known: Vec<&str> = KnownJudge::ALL
            .iter()
            .map(|j| j.as_str())
            .chain([KnownEmbedder::AllMiniLmL6V2.as_str()])
            .collect();
        Err(bad(format!(
            "unknown model; known: {}, or a path to a model file",
            known.join(", ")
        )))
    }

    /// The part after `local:` ([`LocalSpec::named`]'s argument).
    pub fn name(&self) -> Option<String> {
        match self {
            LocalSpec::Default => None,
            LocalSpec::Judge(j) => Some(j.as_str().to_owned()),
            LocalSpec::Embedder(e) => Some(e.as_str().to_owned()),
            LocalSpec::File(p) => Some(p.display().to_string()),
        }
    }

    /// The spec as manifests and run signatures record it: a model file or
    /// directory by its name alone, since its path differs between
    /// machines (the model's identity carries its SHA-256).
    ///
    /// ```
    /// use assay_local::LocalSpec;
    /// let s: LocalSpec = "local:/home/me/models/x.gguf".parse().unwrap();
    /// assert_eq!(s.portable().to_string(), "local:x.gguf");
    /// assert_eq!(LocalSpec::Default.portable(), LocalSpec::Default);
    /// let known: LocalSpec = "local:smollm2-135m".parse().unwrap();
    /// assert_eq!(known.portable(), known);
    /// ```
    pub fn portable(&self) -> LocalSpec {
        match self {
            LocalSpec::File(p) => LocalSpec::File(PathBuf::from(file_name(p))),
            other => other.clone(),
        }
    }
}

/// `$ASSAY_HOME/models`, or `~/.cache/assay/models` when `ASSAY_HOME` is unset.
pub fn models_dir() -> PathBuf {
    let home = std::env::var_os("ASSAY_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default()
                .join(".cache")
                .join("assay")
        });
    home.join("models")
}

/// Fails with [`Error::ModelMissing`] unless `path` exists.
pub(crate) fn require(path: &Path, what: &str) -> Result<(), Error> {
    if path.exists() {
        Ok(())
    } else {
        Err(Error::ModelMissing {
            what: what.to_owned(),
            path: path.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip() {
        for s in [
            "local",
            "local:qwen2.5-coder-0.5b",
            "local:smollm2-135m",
            "local:qwen2.5-coder-1.5b",
            "local:all-minilm-l6-v2",
            "local:/models/x.gguf",
            "local:my.gguf",
        ] {
            let spec: LocalSpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
        }
    }

    #[test]
    fn bad_specs_say_why() {
        for s in ["", "locall", "local:", "local:gpt-4", "openai:x"] {
            let e = s.parse::<LocalSpec>().unwrap_err();
            assert!(matches!(e, Error::Spec { .. }), "{s}: {e}");
        }
    }
}
