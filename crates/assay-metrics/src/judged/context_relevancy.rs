//! `context_relevancy` (the older ragas metric of seed 002, "Context
//! Relevancy"): how much of the retrieved context is needed to answer.
//!
//! Steps: [`StepKey::SentenceExtraction`] (`prompts/sentence_extraction.json`)
//! over the contexts joined by newlines: the sentences needed to answer,
//! verbatim, or "insufficient information"; `strictness` > 1 draws that
//! many votes (temperature > 0, distinct seeds). With
//! `agreement=embedding`, also [`EmbedText::Extractions`].
//!
//! Per vote, overlap = min(extracted sentences found verbatim in the
//! context / context sentences, 1); insufficient information: 0. Score =
//! mean overlap x agreement, where agreement is 1 for one vote, else the
//! mean pairwise Jaccard similarity of the votes' sentence sets (or the
//! mean pairwise cosine of their embeddings, clamped to [0, 1]).
//!
//! Sentences are split at `.`, `!` or `?` followed by white space, and at
//! line breaks (a simple rule, not NLTK's punkt, which seed 002 used).
//!
//! Empty inputs: contexts without any sentence -> skipped, `no_contexts`.

use crate::judged::common::{cosine, misaligned, scored};
use crate::judged::options::{Agreement, Strictness};
use crate::judged::prompt::PromptId;
use crate::judged::step::{EmbedText, Extraction, StepKey};
use assay_core::{Outcome, SkipReason};
use serde_json::json;
use std::collections::BTreeSet;

pub const PROMPTS: &[PromptId] = &[PromptId::SentenceExtraction];

pub const EMPTY_INPUTS: &str = "skipped (no_contexts) when the contexts have no sentence";

pub fn steps(strictness: Strictness, agreement: Agreement) -> Vec<StepKey> {
    let votes = strictness.get();
    let mut steps = vec![StepKey::SentenceExtraction { votes }];
    if votes > 1 && agreement == Agreement::Embedding {
        steps.push(StepKey::Embed(EmbedText::Extractions { votes }));
    }
    steps
}

/// Sentences of `text`: split after `.`, `!`, `?` followed by white space,
/// and at line breaks; trimmed, blank ones dropped.
pub fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\n' => Some(i),
            '.' | '!' | '?' if chars.peek().is_none_or(|(_, n)| n.is_whitespace()) => {
                Some(i + c.len_utf8())
            }
            _ => None,
        };
        if let Some(end) = end {
            out.push(&text[start..end]);
            start = end;
        }
    }
    out.push(&text[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

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
    fn sentences_split_on_terminators_and_lines() {
        assert_eq!(
            split_sentences(CONTEXT),
            [
                "Albert Einstein was born in Ulm.",
                "He developed relativity.",
                "He liked sailing!",
                "Did he play violin?",
                "Yes."
            ]
        );
        assert_eq!(split_sentences("v1.2 is out"), ["v1.2 is out"]);
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
        assert_eq!(details["agreement"], 0.5);
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
