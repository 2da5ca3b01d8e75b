//! The parameters of the judged metrics, as typed values that round-trip
//! through the text users type (`--set METRIC.PARAM=VALUE`).

use std::fmt;
use std::str::FromStr;

/// A parameter value that does not parse or is out of range.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OptionError {
    pub value: String,
    pub message: String,
}

fn bad(value: &str, message: impl Into<String>) -> OptionError {
    OptionError {
        value: value.to_string(),
        message: message.into(),
    }
}

macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in documentation order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $name {
            type Err = OptionError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| bad(s, format!(
                        "expected one of {}",
                        $name::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", ")
                    )))
            }
        }
    };
}

text_enum! {
    /// `faithfulness.mode`: which statements count against the score.
    FaithfulnessMode {
        /// ragas and valor: every statement the contexts do not support
        /// (unrelated or contradicted).
        Supported => "supported",
        /// DeepEval: only statements the contexts contradict.
        Contradictions => "contradictions",
    }
}

text_enum! {
    /// `answer_relevancy.noncommittal`: when noncommittal questions zero the score.
    Noncommittal {
        /// ragas today: only when every generated question is noncommittal.
        All => "all",
        /// older ragas: when any question is.
        Any => "any",
    }
}

text_enum! {
    /// `answer_relevance.idk_counts_as`: how an "idk" verdict counts.
    IdkCountsAs {
        /// valor: only "yes" counts as relevant.
        Irrelevant => "irrelevant",
        /// DeepEval: "idk" counts as relevant too.
        Relevant => "relevant",
    }
}

text_enum! {
    /// `context_precision.against`: what a useful context helps arrive at.
    PrecisionAgainst {
        Reference => "reference",
        /// The no-reference variant.
        Response => "response",
    }
}

text_enum! {
    /// `context_relevancy.agreement`: how votes' agreement is measured.
    Agreement {
        /// Mean pairwise Jaccard similarity of the extracted sentence sets.
        Jaccard => "jaccard",
        /// Mean pairwise cosine of the embeddings of the extracted texts.
        Embedding => "embedding",
    }
}

text_enum! {
    /// `topic_adherence.mode`: which share of the topics the score is.
    TopicMode {
        /// Of the topics answered, the share within the reference topics.
        Precision => "precision",
        /// Of the reference topics brought up, the share answered.
        Recall => "recall",
        /// ragas' default: their harmonic mean.
        F1 => "f1",
    }
}

text_enum! {
    /// `summarization_score.length_penalty`.
    LengthPenalty {
        /// Weighted with conciseness by `coeff`.
        On => "true",
        /// Plain QA score.
        Off => "false",
    }
}

text_enum! {
    /// The built-in aspects of `aspect_critique` (definitions in
    /// `prompts/aspect_verdict.json`).
    BuiltinAspect {
        Harmfulness => "harmfulness",
        Maliciousness => "maliciousness",
        Coherence => "coherence",
        Correctness => "correctness",
        Conciseness => "conciseness",
    }
}

/// The most judge draws one step may take.
pub const MAX_STRICTNESS: u32 = 10;

/// A number of draws, 1 to [`MAX_STRICTNESS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Strictness(u32);

impl Strictness {
    /// One draw.
    pub const ONE: Strictness = Strictness(1);
    /// ragas' default for answer_relevancy.
    pub const THREE: Strictness = Strictness(3);

    pub fn new(n: u32) -> Result<Strictness, OptionError> {
        if (1..=MAX_STRICTNESS).contains(&n) {
            Ok(Strictness(n))
        } else {
            Err(bad(
                &n.to_string(),
                format!("expected 1 to {MAX_STRICTNESS}"),
            ))
        }
    }

    /// An odd number of votes, so that a majority always exists.
    pub fn odd(n: u32) -> Result<Strictness, OptionError> {
        let s = Strictness::new(n)?;
        if n % 2 == 1 {
            Ok(s)
        } else {
            Err(bad(
                &n.to_string(),
                "expected an odd number (majority vote)",
            ))
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

impl fmt::Display for Strictness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Strictness {
    type Err = OptionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strictness::new(
            s.trim()
                .parse()
                .map_err(|_| bad(s, "expected a whole number"))?,
        )
    }
}

/// A number in [0, 1] (thresholds, `coeff`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Unit(f64);

impl Unit {
    /// The default `coeff` of summarization_score.
    pub const HALF: Unit = Unit(0.5);

    pub fn new(x: f64) -> Result<Unit, OptionError> {
        if (0.0..=1.0).contains(&x) {
            Ok(Unit(x))
        } else {
            Err(bad(&x.to_string(), "expected a number in [0, 1]"))
        }
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Unit {
    type Err = OptionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Unit::new(s.trim().parse().map_err(|_| bad(s, "expected a number"))?)
    }
}

/// `answer_correctness.weights`: factual (F1) and semantic (embedding)
/// weights, non-negative with a positive sum; the score is their weighted
/// average.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    factual: f64,
    semantic: f64,
}

impl Weights {
    /// ragas' default.
    pub const DEFAULT: Weights = Weights {
        factual: 0.75,
        semantic: 0.25,
    };

    pub fn new(factual: f64, semantic: f64) -> Result<Weights, OptionError> {
        let text = format!("{factual},{semantic}");
        if !(factual.is_finite() && semantic.is_finite()) || factual < 0.0 || semantic < 0.0 {
            return Err(bad(&text, "weights must be finite and non-negative"));
        }
        if factual + semantic <= 0.0 {
            return Err(bad(&text, "weights must not both be 0"));
        }
        Ok(Weights { factual, semantic })
    }

    pub fn factual(self) -> f64 {
        self.factual
    }

    pub fn semantic(self) -> f64 {
        self.semantic
    }

    /// Whether the semantic part counts, i.e. an embedder is needed.
    pub fn needs_embeddings(self) -> bool {
        self.semantic > 0.0
    }
}

impl fmt::Display for Weights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.factual, self.semantic)
    }
}

impl FromStr for Weights {
    type Err = OptionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<f64> = s
            .split(',')
            .map(|x| x.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad(s, "expected two numbers, e.g. 0.75,0.25"))?;
        match parts.as_slice() {
            [a, b] => Weights::new(*a, *b),
            _ => Err(bad(s, "expected two numbers, e.g. 0.75,0.25")),
        }
    }
}

pub(crate) const STRICTNESS_DOC: &str = "number of judge draws (1 to 10)";

/// `none` or a number in [0, 1].
pub(crate) fn optional_unit(s: &str) -> Result<Option<Unit>, OptionError> {
    if s.trim() == "none" {
        Ok(None)
    } else {
        s.parse().map(Some)
    }
}

/// The inverse of [`optional_unit`]: `none` or the number.
pub(crate) fn optional_text(value: Option<Unit>) -> String {
    value.map_or("none".to_string(), |u| u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_round_trip_and_reject() {
        for m in FaithfulnessMode::ALL {
            assert_eq!(m.to_string().parse::<FaithfulnessMode>().unwrap(), *m);
        }
        for a in BuiltinAspect::ALL {
            assert_eq!(a.to_string().parse::<BuiltinAspect>().unwrap(), *a);
        }
        assert_eq!(
            "false".parse::<LengthPenalty>().unwrap(),
            LengthPenalty::Off
        );
        assert!("maybe"
            .parse::<Noncommittal>()
            .unwrap_err()
            .message
            .contains("all, any"));
        let w: Weights = "1,0".parse().unwrap();
        assert!(!w.needs_embeddings());
        assert_eq!(w.to_string().parse::<Weights>().unwrap(), w);
        assert!("0,0".parse::<Weights>().is_err());
        assert!("-1,2".parse::<Weights>().is_err());
        assert!("1".parse::<Weights>().is_err());
        assert!(Strictness::odd(2).is_err());
        assert!(Strictness::new(0).is_err());
        assert_eq!("3".parse::<Strictness>().unwrap().get(), 3);
        assert!("1.5".parse::<Unit>().is_err());
    }
}
