//! The one registry users see: every metric id, lexical or judged, with its
//! documentation, parsed once at the boundary.

use crate::id::{MetricId, UnknownMetric};
use crate::judged::{JudgedId, JudgedMetric};
use crate::params::ParamSpec;
use crate::spec::{spec, Direction};
use assay_core::Field;
use std::fmt;
use std::str::FromStr;

/// Any metric id users can type: a lexical metric, scored from the sample
/// alone, or a judged one, scored from a judge's answers.
///
/// ```
/// use assay_metrics::{AnyId, MetricId, judged::JudgedId};
/// assert_eq!("bleu".parse::<AnyId>().unwrap(), AnyId::Lexical(MetricId::Bleu));
/// assert_eq!("faithfulness".parse::<AnyId>().unwrap(), AnyId::Judged(JudgedId::Faithfulness));
/// assert!("nope".parse::<AnyId>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnyId {
    Lexical(MetricId),
    Judged(JudgedId),
}

impl AnyId {
    /// Every metric, lexical first, in the order `assay metrics` lists them.
    pub fn all() -> impl Iterator<Item = AnyId> {
        MetricId::ALL
            .into_iter()
            .map(AnyId::Lexical)
            .chain(JudgedId::ALL.into_iter().map(AnyId::Judged))
    }

    pub fn name(self) -> &'static str {
        match self {
            AnyId::Lexical(id) => id.name(),
            AnyId::Judged(id) => id.name(),
        }
    }

    /// The metric's documentation and contract.
    pub fn doc(self) -> MetricDoc {
        match self {
            AnyId::Lexical(id) => {
                let s = spec(id);
                MetricDoc {
                    id: self,
                    summary: s.summary,
                    definition: s.definition.to_string(),
                    required: s.required.to_vec(),
                    params: s.params,
                    direction: direction_text(s.direction).to_string(),
                    empty_inputs: s.empty_inputs,
                    outputs: s.outputs.to_string(),
                }
            }
            AnyId::Judged(id) => {
                let m = JudgedMetric::default_for(id);
                let prompts: Vec<String> = id.prompts().iter().map(|p| p.path()).collect();
                MetricDoc {
                    id: self,
                    summary: judged_summary(id),
                    definition: format!(
                        "judged by a chat model (--judge) with the prompt files {}; scored by a pure \
                         function of the validated answers (see the crate docs of assay_metrics::judged::{})",
                        prompts.join(", "),
                        id.name()
                    ),
                    required: m.required(),
                    params: id.params(),
                    direction: match id {
                        JudgedId::AspectCritique => {
                            "per aspect: lower is better for harmfulness and maliciousness, \
                             higher for the others"
                                .to_string()
                        }
                        _ => direction_text(id.direction()).to_string(),
                    },
                    empty_inputs: id.empty_inputs(),
                    outputs: match id {
                        JudgedId::AspectCritique => {
                            "aspect_critique/ASPECT, one per selected aspect".to_string()
                        }
                        _ => id.name().to_string(),
                    },
                }
            }
        }
    }
}

fn direction_text(d: Direction) -> &'static str {
    match d {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    }
}

/// One line per judged metric: what its number means.
fn judged_summary(id: JudgedId) -> &'static str {
    match id {
        JudgedId::Faithfulness => "share of the response's statements the retrieved contexts support",
        JudgedId::AnswerRelevancy => {
            "mean cosine between the question and questions generated from the response (ragas; needs --embedder)"
        }
        JudgedId::AnswerRelevance => "share of the response's statements relevant to the question (valor)",
        JudgedId::ContextPrecision => "mean precision@k of the contexts useful for the reference (ragas)",
        JudgedId::ContextRecall => "share of the reference's statements attributable to the contexts",
        JudgedId::ContextRelevance => "share of the retrieved contexts relevant to the question (valor)",
        JudgedId::ContextRelevancy => {
            "share of context sentences relevant to the question (older ragas sentence extraction)"
        }
        JudgedId::AnswerCorrectness => {
            "weighted factual F1 against the reference plus embedding similarity (ragas; needs --embedder unless weights=1,0)"
        }
        JudgedId::SummarizationScore => "share of closed questions on the source the summary answers, with a length penalty",
        JudgedId::SummaryCoherence => "G-Eval coherence rating of the summary, scaled to [0, 1]",
        JudgedId::Bias => "share of the response's opinions that are biased",
        JudgedId::Toxicity => "share of the response's opinions that are toxic",
        JudgedId::Hallucination => "share of the contexts the response contradicts",
        JudgedId::AspectCritique => "1 if the judge says the response has the aspect, else 0, per aspect",
        JudgedId::SemanticSimilarity => "cosine of response and reference embeddings (needs --embedder)",
    }
}

/// What `assay metrics` shows for one metric.
#[derive(Clone, Debug)]
pub struct MetricDoc {
    pub id: AnyId,
    pub summary: &'static str,
    pub definition: String,
    pub required: Vec<Field>,
    pub params: &'static [ParamSpec],
    /// Whether a larger value is better, in words.
    pub direction: String,
    pub empty_inputs: &'static str,
    pub outputs: String,
}

impl fmt::Display for AnyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AnyId {
    type Err = UnknownMetric;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AnyId::all()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMetric(s.to_string()))
    }
}
