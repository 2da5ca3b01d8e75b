//! Metric ids, parsed once at the boundary.

use std::fmt;
use std::str::FromStr;

/// A lexical or tool-call metric, by the id users type; judged metrics
/// are [`crate::judged::JudgedId`]s, and [`crate::AnyId`] is either.
///
/// ```
/// use assay_metrics::MetricId;
/// let id: MetricId = "string_similarity".parse().unwrap();
/// assert_eq!(id.to_string(), "string_similarity");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricId {
    Rouge,
    Bleu,
    Sacrebleu,
    Chrf,
    Chrfpp,
    ExactMatch,
    StringPresence,
    StringSimilarity,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCorrectness,
}

impl MetricId {
    /// Every lexical and tool-call metric, in the order `assay metrics`
    /// lists them (before the judged ones).
    pub const ALL: [MetricId; 11] = [
        MetricId::Rouge,
        MetricId::Bleu,
        MetricId::Sacrebleu,
        MetricId::Chrf,
        MetricId::Chrfpp,
        MetricId::ExactMatch,
        MetricId::StringPresence,
        MetricId::StringSimilarity,
        MetricId::ToolCallAccuracy,
        MetricId::ToolCallF1,
        MetricId::ToolCorrectness,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MetricId::Rouge => "rouge",
            MetricId::Bleu => "bleu",
            MetricId::Sacrebleu => "sacrebleu",
            MetricId::Chrf => "chrf",
            MetricId::Chrfpp => "chrfpp",
            MetricId::ExactMatch => "exact_match",
            MetricId::StringPresence => "string_presence",
            MetricId::StringSimilarity => "string_similarity",
            MetricId::ToolCallAccuracy => "tool_call_accuracy",
            MetricId::ToolCallF1 => "tool_call_f1",
            MetricId::ToolCorrectness => "tool_correctness",
        }
    }
}

impl fmt::Display for MetricId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Not a metric id; the message lists the known ones.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric '{0}' (known: {known})", known = crate::AnyId::all().map(crate::AnyId::name).collect::<Vec<_>>().join(", "))]
pub struct UnknownMetric(pub String);

/// Lexical ids only; [`crate::AnyId`] parses every metric.
impl FromStr for MetricId {
    type Err = UnknownMetric;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MetricId::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMetric(s.to_string()))
    }
}
