//! `context_relevancy`, the older ragas "Context Relevancy" (seed 002):
//! how much of the retrieved context is needed to answer, as the share of
//! its sentences extracted as needed. Not valor-lite's
//! [`crate::judged::context_relevance`], which counts the contexts relevant
//! to the question; each keeps its library's name.
//!
//! Steps: [`steps::sentence_extraction`] (`prompts/sentence_extraction.json`)
//! over the contexts joined by newlines: the sentences needed to answer,
//! verbatim, or "insufficient information"; `strictness` > 1 draws that
//! many votes (temperature > 0, distinct seeds). With
//! `agreement=embedding` and more than one vote, also
//! [`EmbedText::Extractions`].
//!
//! Per vote, overlap = min(extracted sentences found verbatim in the
//! context / context sentences, 1); insufficient information: 0. Score =
//! mean overlap x agreement, where agreement is 1 for one vote, else the
//! mean pairwise Jaccard similarity of the votes' sentence sets (or the
//! mean pairwise cosine of their embeddings, clamped to [0, 1]).
//!
//! Sentences come from [`split_sentences`] (`assay_text::sentences`), a
//! rule-based splitter in the spirit of NLTK's punkt (which seed 002
//! used); line breaks always end a sentence (they separate the joined
//! contexts).
//! Extracted sentences are split the same way before they are looked up
//! verbatim in the context. The splitter is part of the signature's
//! version ([`SIGNATURE_VERSION`]): it sets the score's denominator.
//!
//! Empty inputs: contexts without any sentence -> skipped, `no_contexts`.

use crate::judged::common::{cosine, misaligned, scored};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::STRICTNESS_DOC;
use crate::judged::options::{Agreement, Strictness};
use crate::judged::per_turn;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::PromptSet;
use crate::judged::step::{EmbedText, Extraction, InputError, Inputs, StepKey};
use crate::judged::steps;
use crate::params::param;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use assay_text::sentences::split_sentences;
use serde_json::json;
use std::collections::BTreeSet;

pub const PROMPTS: &[PromptId] = &[steps::SENTENCE_EXTRACTION];

pub const EMPTY_INPUTS: &str = "skipped (no_contexts) when the contexts have no sentence";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "context_relevancy",
    summary:
        "share of context sentences relevant to the question (older ragas sentence extraction)",
    direction: Direction::HigherIsBetter,
    required: &[Field::UserInput, Field::RetrievedContexts],
    needs_contexts: true,
    prompts: PROMPTS,
    params: &[
        param("strictness", "1", STRICTNESS_DOC),
        param(
            "agreement",
            "jaccard",
            "how votes agree: jaccard of sentence sets, or embedding cosine",
        ),
        per_turn::PARAM,
    ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: SIGNATURE_VERSION,
    default: || {
        JudgedMetric::new(ContextRelevancy {
            strictness: Strictness::ONE,
            agreement: Agreement::Jaccard,
        })
    },
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(ContextRelevancy {
        strictness: values.parse("strictness")?,
        agreement: values.parse("agreement")?,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct ContextRelevancy {
    pub strictness: Strictness,
    pub agreement: Agreement,
}

impl ContextRelevancy {
    /// Whether the draws' agreement is measured on embeddings.
    fn embeds(&self) -> bool {
        self.agreement == Agreement::Embedding && self.strictness.get() > 1
    }
}

impl MetricUnit for ContextRelevancy {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn needs_embedder(&self) -> bool {
        self.embeds()
    }

    fn steps(&self, _: &Sample) -> Vec<StepKey> {
        let votes = self.strictness.get();
        let mut steps = vec![steps::sentence_extraction(votes)];
        if self.embeds() {
            steps.push(StepKey::Embed(EmbedText::Extractions { votes }));
        }
        steps
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        let votes = self.strictness.get();
        let extractions = inputs.extractions(&steps::sentence_extraction(votes))?;
        let embeddings = if self.embeds() {
            Some(inputs.embeddings(&StepKey::Embed(EmbedText::Extractions { votes }))?)
        } else {
            None
        };
        single(ID, score(&inputs.source()?, extractions, embeddings))
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![
            ("strictness".into(), self.strictness.to_string()),
            ("agreement".into(), self.agreement.to_string()),
        ]
    }
}

/// Version of the metric's signature: 2 since [`split_sentences`] knows
/// abbreviations, initials and quotes (version 1 split after every `.`
/// followed by white space, so its scores differ).
pub const SIGNATURE_VERSION: u32 = 2;

/// The distinct extracted sentences of a vote (empty when insufficient).
fn sentence_set(vote: &Extraction) -> BTreeSet<&str> {
    match vote {
        Extraction::InsufficientInformation => BTreeSet::new(),
        Extraction::Sentences(items) => items.iter().flat_map(|s| split_sentences(s)).collect(),
    }
}

fn jaccard(a: &BTreeSet<&str>, b: &BTreeSet<&str>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        1.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

/// `embeddings`: one vector per vote, for `agreement=embedding`.
pub fn score(context: &str, votes: &[Extraction], embeddings: Option<&[Vec<f64>]>) -> Outcome {
    let context_sentences = split_sentences(context);
    if context_sentences.is_empty() {
        return Outcome::Skipped(SkipReason::NoContexts);
    }
    if votes.is_empty() {
        return misaligned("votes", 1, 0);
    }
    let sets: Vec<BTreeSet<&str>> = votes.iter().map(sentence_set).collect();
    let overlaps: Vec<f64> = sets
        .iter()
        .map(|set| {
            let found = set.iter().filter(|s| context.contains(**s)).count();
            (found as f64 / context_sentences.len() as f64).min(1.0)
        })
        .collect();
    let mean = overlaps.iter().sum::<f64>() / overlaps.len() as f64;
    let mut pairs = Vec::new();
    for i in 0..votes.len() {
        for j in i + 1..votes.len() {
            pairs.push(match embeddings {
                None => jaccard(&sets[i], &sets[j]),
                Some(e) => match (sets[i].is_empty(), sets[j].is_empty()) {
                    (true, true) => 1.0,
                    (true, false) | (false, true) => 0.0,
                    _ => match (e.get(i), e.get(j)) {
                        (Some(a), Some(b)) => cosine(a, b).unwrap_or(0.0).clamp(0.0, 1.0),
                        _ => return misaligned("votes", votes.len(), e.len()),
                    },
                },
            });
        }
    }
    let agreement = if pairs.is_empty() {
        1.0
    } else {
        pairs.iter().sum::<f64>() / pairs.len() as f64
    };
    let value = mean * agreement;
    let insufficient = votes
        .iter()
        .filter(|v| matches!(v, Extraction::InsufficientInformation))
        .count();
    let mut reason = format!(
        "{:.3} of the context's {} sentences needed (mean of {} vote{})",
        mean,
        context_sentences.len(),
        votes.len(),
        if votes.len() == 1 { "" } else { "s" }
    );
    if votes.len() > 1 {
        reason.push_str(&format!(", agreement {agreement:.3}"));
    }
    if insufficient > 0 {
        reason.push_str(&format!(
            "; {insufficient} vote(s) found the information insufficient"
        ));
    }
    scored(
        value,
        reason,
        json!({
            "context_sentences": context_sentences.len(),
            "votes": votes.iter().zip(&overlaps).map(|(v, o)| json!({"extraction": v, "overlap": o})).collect::<Vec<_>>(),
            "mean_overlap": mean,
            "agreement": agreement,
            "agreement_measure": if embeddings.is_some() { "embedding" } else { "jaccard" },
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTEXT: &str = "Albert Einstein was born in Ulm. He developed relativity.\nHe liked sailing! Did he play violin? Yes.";

    fn pick(s: &[&str]) -> Extraction {
        Extraction::Sentences(s.iter().map(|x| x.to_string()).collect())
    }

    #[test]
    fn extracted_sentences_with_abbreviations_are_found_verbatim() {
        let context = "Dr. Smith lives in the U.S. capital.\nHe was born at 3 p.m. on Jan. 5. His son, J. R. Smith, is a doctor.";
        assert_eq!(split_sentences(context).len(), 3);
        let vote = pick(&[
            "He was born at 3 p.m. on Jan. 5.",
            "Dr. Smith lives in the U.S. capital.",
        ]);
        let Outcome::Scored { value, details, .. } = score(context, &[vote], None) else {
            panic!()
        };
        assert_eq!(value, 2.0 / 3.0);
        assert_eq!(details.to_json()["context_sentences"], 3);
    }

    #[test]
    fn overlap_counts_only_verbatim_sentences() {
        let one = [pick(&[
            "Albert Einstein was born in Ulm.",
            "He invented the bicycle.",
        ])];
        let Outcome::Scored { value, .. } = score(CONTEXT, &one, None) else {
            panic!()
        };
        assert_eq!(value, 1.0 / 5.0);
        let Outcome::Scored { value, .. } =
            score(CONTEXT, &[Extraction::InsufficientInformation], None)
        else {
            panic!()
        };
        assert_eq!(value, 0.0);
        assert_eq!(
            score(" \n", &one, None),
            Outcome::Skipped(SkipReason::NoContexts)
        );
    }

    #[test]
    fn votes_multiply_mean_overlap_by_agreement() {
        let a = pick(&["Albert Einstein was born in Ulm. He developed relativity."]);
        let b = pick(&["Albert Einstein was born in Ulm."]);
        // overlaps 2/5 and 1/5, Jaccard {2 sentences} vs {1} = 1/2.
        let Outcome::Scored { value, details, .. } = score(CONTEXT, &[a.clone(), b.clone()], None)
        else {
            panic!()
        };
        assert!((value - 0.3 * 0.5).abs() < 1e-12, "{value}");
        assert_eq!(details.to_json()["agreement"], 0.5);
        let e = vec![vec![1.0, 0.0], vec![1.0, 1.0]];
        let Outcome::Scored { value, .. } = score(CONTEXT, &[a, b], Some(&e)) else {
            panic!()
        };
        assert!(
            (value - 0.3 * std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12,
            "{value}"
        );
    }
}
