//! `summarization_score` (ragas; seeds 000 and 001, "Summarization
//! Score"): does the summary (the response) answer the questions the
//! source answers, and is it short.
//!
//! The source text is the retrieved contexts joined by newlines. Steps:
//! [`steps::keyphrases`] (`prompts/keyphrases.json`), then
//! [`steps::closed_questions`] (`prompts/closed_questions.json`) whose
//! answer from the source is yes, then [`steps::summary_answers`]
//! (`prompts/summary_answers.json`), yes/no per question from the summary;
//! under the per-item protocol each question is asked alone
//! (`prompts/summary_answer.json`); with a grounding model given, it
//! answers them instead of the judge ([`crate::judged::grounding`]).
//!
//! QA = yes answers / questions; conciseness = 1 - min(len(summary),
//! len(text)) / (len(text) + 1e-10), lengths in Unicode characters; score
//! = QA x (1 - coeff) + conciseness x coeff, coeff default 0.5 (the
//! formula of seed 001 and of ragas' code; seed 000 swaps the weights).
//! `length_penalty=false` gives plain QA (ragas halves the score there;
//! we do not copy that bug).
//!
//! Empty inputs: no keyphrases or no questions -> skipped,
//! `no_questions`; empty contexts -> skipped, `no_contexts` (before any call).

use crate::judged::common::{itemized, misaligned, quote, scored, with_quotes};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::{LengthPenalty, Unit};
use crate::judged::prompt::PromptId;
use crate::judged::prompt::PromptSet;
use crate::judged::step::{InputError, Inputs, Label, StepKey, Verdict};
use crate::judged::steps;
use crate::params::param;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;

pub const PROMPTS: &[PromptId] = &[
    steps::KEYPHRASES,
    steps::CLOSED_QUESTIONS,
    steps::SUMMARY_ANSWERS,
];

pub const EMPTY_INPUTS: &str =
    "skipped (no_contexts) without source text; skipped (no_questions) when no question can be asked";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "summarization_score",
    summary: "share of closed questions on the source the summary answers, with a length penalty",
    direction: Direction::HigherIsBetter,
    required: &[Field::Response, Field::RetrievedContexts],
    needs_contexts: true,
    prompts: PROMPTS,
    params: &[
        param("length_penalty", "true", "false gives the plain QA score"),
        param("coeff", "0.5", "weight of conciseness against the QA score"),
    ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || {
        JudgedMetric::new(SummarizationScore {
            length_penalty: LengthPenalty::On,
            coeff: Unit::HALF,
        })
    },
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(SummarizationScore {
        length_penalty: values.parse("length_penalty")?,
        coeff: values.parse("coeff")?,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct SummarizationScore {
    pub length_penalty: LengthPenalty,
    pub coeff: Unit,
}

impl MetricUnit for SummarizationScore {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, _: &Sample) -> Vec<StepKey> {
        vec![
            steps::keyphrases(),
            steps::closed_questions(),
            steps::summary_answers(),
        ]
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        single(
            ID,
            score(
                &Texts {
                    source: &inputs.source()?,
                    summary: inputs.response()?,
                },
                inputs.texts(&steps::keyphrases())?,
                inputs.texts(&steps::closed_questions())?,
                inputs.verdicts(&steps::summary_answers())?,
                self.length_penalty,
                self.coeff,
            ),
        )
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![
            ("length_penalty".into(), self.length_penalty.to_string()),
            ("coeff".into(), self.coeff.to_string()),
        ]
    }
}

/// The source and the summary.
#[derive(Clone, Copy, Debug)]
pub struct Texts<'a> {
    pub source: &'a str,
    pub summary: &'a str,
}

/// 1 - min(len(summary), len(text)) / (len(text) + 1e-10), in chars.
pub fn conciseness(texts: &Texts<'_>) -> f64 {
    let text = texts.source.chars().count() as f64;
    let summary = texts.summary.chars().count() as f64;
    1.0 - summary.min(text) / (text + 1e-10)
}

pub fn score(
    texts: &Texts<'_>,
    keyphrases: &[String],
    questions: &[String],
    answers: &[Verdict],
    length_penalty: LengthPenalty,
    coeff: Unit,
) -> Outcome {
    if questions.is_empty() {
        return Outcome::Skipped(SkipReason::NoQuestions);
    }
    if questions.len() != answers.len() {
        return misaligned("questions", questions.len(), answers.len());
    }
    let yes = answers.iter().filter(|a| a.verdict == Label::Yes).count();
    let qa = yes as f64 / questions.len() as f64;
    let concise = conciseness(texts);
    let value = match length_penalty {
        LengthPenalty::On => qa * (1.0 - coeff.get()) + concise * coeff.get(),
        LengthPenalty::Off => qa,
    };
    let mut base = format!(
        "the summary answers {yes} of {} questions about the source (QA {qa:.3})",
        questions.len()
    );
    if length_penalty == LengthPenalty::On {
        base.push_str(&format!(", conciseness {concise:.3}, coeff {coeff}"));
    }
    scored(
        value,
        with_quotes(
            base,
            "not answered",
            quote(questions, answers, |l| l != Label::Yes),
        ),
        json!({
            "keyphrases": keyphrases,
            "questions": itemized("question", questions, answers),
            "qa_score": qa,
            "conciseness": concise,
            "length_penalty": length_penalty == LengthPenalty::On,
            "coeff": coeff.get(),
            "summary_chars": texts.summary.chars().count(),
            "source_chars": texts.source.chars().count(),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "A company is launching a new product, a smartphone app designed to help users track their fitness goals. The app allows users to set daily exercise targets, log their meals, and track their water intake. It also provides personalized workout recommendations and sends motivational reminders throughout the day.";
    const SUMMARY: &str = "A company is launching a fitness tracking app that helps users set exercise goals, log meals, and track water intake, with personalized workout suggestions and motivational reminders.";

    fn answers(pattern: &str) -> (Vec<String>, Vec<Verdict>) {
        pattern
            .chars()
            .enumerate()
            .map(|(i, c)| {
                (
                    format!("question {i}?"),
                    Verdict {
                        verdict: if c == 'y' { Label::Yes } else { Label::No },
                        reason: String::new(),
                        probabilities: None,
                    },
                )
            })
            .unzip()
    }

    /// The seeds' example (183 and 310 characters) with 4 of 5 questions
    /// answered; expected values computed with Python's formula.
    #[test]
    fn seed_example_formula() {
        let texts = Texts {
            source: SOURCE,
            summary: SUMMARY,
        };
        assert_eq!(conciseness(&texts), 0.4096774193550291);
        let (q, a) = answers("yyyny");
        let Outcome::Scored { value, details, .. } =
            score(&texts, &[], &q, &a, LengthPenalty::On, Unit::HALF)
        else {
            panic!()
        };
        assert!((value - 0.6048387096775145).abs() < 1e-15, "{value}");
        assert_eq!(details.to_json()["qa_score"], 0.8);
        let Outcome::Scored { value, .. } =
            score(&texts, &[], &q, &a, LengthPenalty::Off, Unit::HALF)
        else {
            panic!()
        };
        assert_eq!(value, 0.8);
        let w = Unit::new(0.25).unwrap();
        let Outcome::Scored { value, .. } = score(&texts, &[], &q, &a, LengthPenalty::On, w) else {
            panic!()
        };
        assert!((value - (0.8 * 0.75 + 0.4096774193550291 * 0.25)).abs() < 1e-15);
    }

    #[test]
    fn lengths_are_unicode_characters_and_empty_questions_skip() {
        let texts = Texts {
            source: "Café über naïve résumé déjà vu",
            summary: "Café über naïve",
        };
        assert_eq!(conciseness(&texts), 0.5000000000016667);
        assert_eq!(
            score(&texts, &[], &[], &[], LengthPenalty::On, Unit::HALF),
            Outcome::Skipped(SkipReason::NoQuestions)
        );
    }
}
