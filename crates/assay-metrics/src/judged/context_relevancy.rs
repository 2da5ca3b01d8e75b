//! `context_relevancy` (the older ragas metric of seed 002, "Context
//! Relevancy"): how much of the retrieved context is needed to answer.
//!
//! Steps: [`steps::sentence_extraction`] (`prompts/sentence_extraction.json`)
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
//! Sentences come from [`split_sentences`], a rule-based splitter in the
//! spirit of NLTK's punkt (which seed 002 used) without its trained
//! model: line breaks always end a sentence (they separate the joined
//! contexts); `.`, `!`, `?` and ellipses end one when white space follows,
//! except after titles and abbreviations (`Dr.`, `e.g.`), initials
//! (`J. R. R. Tolkien`), a list number opening a line (`1.`), and, before
//! a word in lower case, after dotted acronyms and abbreviations that may
//! end a sentence (`U.S. law`, `3 p.m. today`, `etc. and`) or an
//! ellipsis. Closing quotes and brackets stay with their sentence.
//! Extracted sentences are split the same way before they are looked up
//! verbatim in the context. The splitter is part of the signature's
//! version ([`SIGNATURE_VERSION`]): it sets the score's denominator.
//!
//! Empty inputs: contexts without any sentence -> skipped, `no_contexts`.

use crate::judged::common::{cosine, misaligned, scored};
use crate::judged::configure::{param, STRICTNESS_DOC};
use crate::judged::configure::{ConfigError, Values};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::{Agreement, Strictness};
use crate::judged::prompt::PromptId;
use crate::judged::prompt::PromptSet;
use crate::judged::step::{EmbedText, Extraction, InputError, Inputs, StepKey};
use crate::judged::steps;
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;
use std::collections::BTreeSet;

pub const PROMPTS: &[PromptId] = &[PromptId::SentenceExtraction];

pub const EMPTY_INPUTS: &str = "skipped (no_contexts) when the contexts have no sentence";

/// The id users type.
pub const ID: JudgedId = JudgedId::new("context_relevancy");

/// The metric's entry in [`crate::judged::metric::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    id: ID,
    summary:
        "share of context sentences relevant to the question (older ragas sentence extraction)",
    direction: Direction::HigherIsBetter,
    required: &[Field::UserInput, Field::RetrievedContexts],
    needs_contexts: true,
    prompts: PROMPTS,
    declared_prompts: &[],
    params: &[
        param("strictness", "1", STRICTNESS_DOC),
        param(
            "agreement",
            "jaccard",
            "how votes agree: jaccard of sentence sets, or embedding cosine",
        ),
    ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: SIGNATURE_VERSION,
    default: || {
        JudgedMetric::new(ContextRelevancy {
            strictness: Strictness::ONE,
            agreement: Agreement::Jaccard,
        })
    },
    configure,
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values<'_>, _: &PromptSet) -> Result<JudgedMetric, ConfigError> {
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

/// Abbreviations that never end a sentence: titles and Latin short forms
/// are always followed by what they introduce. Lower case, without the
/// final period.
const NEVER_FINAL: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "rev", "hon", "st", "mt", "gen", "col", "capt", "lt", "sgt",
    "sen", "rep", "gov", "pres", "messrs", "mme", "mlle", "e.g", "i.e", "cf", "vs", "viz",
    "approx", "ca", "fig", "figs", "eq", "vol", "vols", "pp",
];

/// Abbreviations that may end a sentence: they end one only before a word
/// in upper case (`... Jan. 5` goes on, `... in 1999 etc. The` ends).
const MAYBE_FINAL: &[&str] = &[
    "etc", "inc", "ltd", "co", "corp", "llc", "plc", "bros", "jr", "sr", "al", "dept", "est",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
];

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '\u{2026}')
}

fn is_closing(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | ')' | ']' | '}' | '\u{201d}' | '\u{2019}' | '\u{bb}'
    )
}

fn is_opening(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | '(' | '[' | '{' | '\u{201c}' | '\u{2018}' | '\u{ab}'
    )
}

/// Sentences of `text`, trimmed, blank ones dropped: see the module
/// documentation for the rules. Pure, and every sentence is a slice of
/// `text`, so a sentence copied verbatim is found in it.
///
/// ```
/// use assay_metrics::judged::context_relevancy::split_sentences;
/// assert_eq!(
///     split_sentences("Dr. Smith met J. R. R. Tolkien at 3 p.m. today. He said \"Hi.\" Then left."),
///     ["Dr. Smith met J. R. R. Tolkien at 3 p.m. today.", "He said \"Hi.\"", "Then left."]
/// );
/// ```
pub fn split_sentences(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte = |i: usize| chars.get(i).map_or(text.len(), |(b, _)| *b);
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if c == '\n' {
            out.push(&text[start..byte(i)]);
            start = byte(i + 1);
            i += 1;
            continue;
        }
        if !is_terminator(c) {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < chars.len() && is_terminator(chars[end].1) {
            end += 1;
        }
        let terminators = &text[byte(i)..byte(end)];
        let closed = end;
        while end < chars.len() && is_closing(chars[end].1) {
            end += 1;
        }
        let spaced = chars.get(end).is_none_or(|(_, n)| n.is_whitespace());
        if spaced
            && ends_here(
                &text[start..byte(i)],
                terminators,
                end > closed,
                next_word_start(&chars[end..]),
            )
        {
            out.push(&text[start..byte(end)]);
            start = byte(end);
        }
        i = end;
    }
    out.push(&text[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The first letter or digit after the white space and opening marks that
/// follow a terminator; `None` at the end of the text or of the line.
fn next_word_start(rest: &[(usize, char)]) -> Option<char> {
    rest.iter()
        .map(|(_, c)| *c)
        .take_while(|c| *c != '\n')
        .find(|c| !c.is_whitespace() && !is_opening(*c))
}

/// Whether `terminators` (after the sentence so far, `before`, and
/// followed by closing marks when `closed`) end the sentence.
fn ends_here(before: &str, terminators: &str, closed: bool, next: Option<char>) -> bool {
    // What may follow the end of a sentence: nothing, or a word that is
    // neither in lower case nor a number (`Jan. 5`, `etc. and`).
    let new_start = next.is_none_or(|c| !c.is_lowercase() && !c.is_ascii_digit());
    if terminators.contains(['!', '?']) {
        // `"Why?" she asked.` is one sentence.
        return !(closed && next.is_some_and(char::is_lowercase));
    }
    if terminators != "." {
        // An ellipsis trails off inside a sentence unless a new one starts.
        return new_start;
    }
    let word = before
        .rsplit(char::is_whitespace)
        .next()
        .unwrap_or("")
        .trim_start_matches(is_opening);
    if word.is_empty() {
        return true;
    }
    let lower = word.to_lowercase();
    let mut letters = word.chars();
    let initial = matches!((letters.next(), letters.next()), (Some(c), None) if c.is_uppercase());
    let list_number =
        word.chars().all(|c| c.is_ascii_digit()) && before.trim_start().len() == word.len();
    if NEVER_FINAL.contains(&lower.as_str()) || initial || list_number {
        return false;
    }
    if MAYBE_FINAL.contains(&lower.as_str()) || word.contains('.') {
        return new_start;
    }
    true
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
    fn abbreviations_initials_and_numbers_do_not_end_sentences() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Dr. Smith arrived. He sat.",
                &["Dr. Smith arrived.", "He sat."],
            ),
            (
                "Use a fruit, e.g. this one. Or not.",
                &["Use a fruit, e.g. this one.", "Or not."],
            ),
            (
                "Under U.S. law it is legal.",
                &["Under U.S. law it is legal."],
            ),
            (
                "He moved to the U.S. His wife stayed.",
                &["He moved to the U.S.", "His wife stayed."],
            ),
            (
                "We meet at 3 p.m. today. Bring tea.",
                &["We meet at 3 p.m. today.", "Bring tea."],
            ),
            (
                "J. R. R. Tolkien wrote it.",
                &["J. R. R. Tolkien wrote it."],
            ),
            (
                "Pi is 3.14159 roughly. It never ends.",
                &["Pi is 3.14159 roughly.", "It never ends."],
            ),
            (
                "It opened in 1889. It is tall.",
                &["It opened in 1889.", "It is tall."],
            ),
            (
                "1. Mix the flour.\n2. Bake it.",
                &["1. Mix the flour.", "2. Bake it."],
            ),
            (
                "Apples, pears etc. and plums. Fine.",
                &["Apples, pears etc. and plums.", "Fine."],
            ),
            ("Smith et al. Found it.", &["Smith et al.", "Found it."]),
            (
                "It rose on Jan. 5 in Rome.",
                &["It rose on Jan. 5 in Rome."],
            ),
            ("(See Fig. 2.) Then stop.", &["(See Fig. 2.)", "Then stop."]),
        ];
        for (text, expected) in cases {
            assert_eq!(&split_sentences(text), expected, "{text}");
        }
    }

    #[test]
    fn quotes_brackets_and_ellipses_stay_with_their_sentence() {
        let cases: &[(&str, &[&str])] = &[
            (
                "He said \"Stop.\" Then he left.",
                &["He said \"Stop.\"", "Then he left."],
            ),
            (
                "\u{201c}Why?\u{201d} she asked. No answer.",
                &["\u{201c}Why?\u{201d} she asked.", "No answer."],
            ),
            ("Really?! Yes.", &["Really?!", "Yes."]),
            (
                "Wait... what was that? Nothing.",
                &["Wait... what was that?", "Nothing."],
            ),
            (
                "He paused... Then he spoke.",
                &["He paused...", "Then he spoke."],
            ),
            (
                "It trailed off\u{2026} and came back.",
                &["It trailed off\u{2026} and came back."],
            ),
            ("Done (finally.) Next!", &["Done (finally.)", "Next!"]),
            ("Ends without a stop", &["Ends without a stop"]),
        ];
        for (text, expected) in cases {
            assert_eq!(&split_sentences(text), expected, "{text}");
        }
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
        assert_eq!(details["context_sentences"], 3);
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
