//! `answer_relevancy`, ragas' "Answer Relevancy" (seed 002): how directly
//! the response answers the question, measured by the questions it
//! answers. Not valor-lite's [`crate::judged::answer_relevance`], which
//! counts the response's statements relevant to the question; each keeps
//! its library's name.
//!
//! Steps: [`steps::generated_questions`] (`prompts/generated_questions.json`):
//! in ONE call, `strictness` (default 3) questions the response answers,
//! each with a noncommittal flag; then embeddings of the question
//! ([`EmbedText::UserInput`]) and of the generated questions.
//!
//! Score = mean cosine between the user input's embedding and each
//! question's, clamped to [0, 1] (the raw mean is in details); 0 when all
//! questions are noncommittal (`noncommittal=any`: when any is, the older
//! ragas rule).
//!
//! Empty inputs: an empty response still gets questions (usually
//! noncommittal, hence 0); a zero embedding vector -> failed (undefined).

use crate::judged::common::{cosine, first, misaligned, scored, undefined};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::{Noncommittal, Strictness};
use crate::judged::prompt::PromptId;
use crate::judged::prompt::PromptSet;
use crate::judged::step::{EmbedText, GeneratedQuestion, InputError, Inputs, StepKey};
use crate::judged::steps;
use crate::params::param;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;

pub const PROMPTS: &[PromptId] = &[steps::GENERATED_QUESTIONS];

pub const EMPTY_INPUTS: &str = "an empty response yields noncommittal questions, hence 0; \
                                 a zero embedding vector fails (undefined)";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "answer_relevancy",
    summary: "mean cosine between the question and questions generated from the response (ragas; needs --embedder)",
    direction: Direction::HigherIsBetter,
    required: &[Field::UserInput, Field::Response],
    needs_contexts: false,
    prompts: PROMPTS,
    params: &[
                param("strictness", "3", "number of questions generated in the one call"),
                param(
                    "noncommittal",
                    "all",
                    "all: 0 when every question is noncommittal; any: when any is (older ragas)",
                ),
            ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(AnswerRelevancy {
                strictness: Strictness::THREE,
                noncommittal: Noncommittal::All,
            }),
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(AnswerRelevancy {
        strictness: values.parse("strictness")?,
        noncommittal: values.parse("noncommittal")?,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct AnswerRelevancy {
    pub strictness: Strictness,
    pub noncommittal: Noncommittal,
}

impl MetricUnit for AnswerRelevancy {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn needs_embedder(&self) -> bool {
        true
    }

    fn steps(&self, _: &Sample) -> Vec<StepKey> {
        let count = self.strictness.get();
        vec![
            steps::generated_questions(count),
            StepKey::Embed(EmbedText::UserInput),
            StepKey::Embed(EmbedText::GeneratedQuestions { count }),
        ]
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        let count = self.strictness.get();
        single(
            ID,
            score(
                inputs.questions(&steps::generated_questions(count))?,
                first(inputs.embeddings(&StepKey::Embed(EmbedText::UserInput))?),
                inputs.embeddings(&StepKey::Embed(EmbedText::GeneratedQuestions { count }))?,
                self.noncommittal,
            ),
        )
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![
            ("strictness".into(), self.strictness.to_string()),
            ("noncommittal".into(), self.noncommittal.to_string()),
        ]
    }
}

pub fn score(
    questions: &[GeneratedQuestion],
    user_input: &[f64],
    question_embeddings: &[Vec<f64>],
    rule: Noncommittal,
) -> Outcome {
    if questions.is_empty() {
        return Outcome::Skipped(SkipReason::NoQuestions);
    }
    if questions.len() != question_embeddings.len() {
        return misaligned("questions", questions.len(), question_embeddings.len());
    }
    let mut similarities = Vec::with_capacity(questions.len());
    for (i, e) in question_embeddings.iter().enumerate() {
        match cosine(user_input, e) {
            Some(c) => similarities.push(c),
            None => {
                return undefined(format!(
                    "cosine of the user input and question {} is undefined (zero vector or dimensions {} vs {})",
                    i + 1,
                    user_input.len(),
                    e.len()
                ))
            }
        }
    }
    let raw = similarities.iter().sum::<f64>() / similarities.len() as f64;
    let noncommittal = questions.iter().filter(|q| q.noncommittal).count();
    let zeroed = match rule {
        Noncommittal::All => noncommittal == questions.len(),
        Noncommittal::Any => noncommittal > 0,
    };
    let value = if zeroed { 0.0 } else { raw.clamp(0.0, 1.0) };
    let reason = if zeroed {
        format!(
            "the response is noncommittal ({noncommittal} of {} generated questions flagged, rule '{rule}')",
            questions.len()
        )
    } else {
        let best = similarities
            .iter()
            .zip(questions)
            .max_by(|a, b| a.0.total_cmp(b.0))
            .map(|(s, q)| format!("; closest: \"{}\" ({s:.3})", q.question))
            .unwrap_or_default();
        format!(
            "mean cosine {raw:.3} between the question and {} questions the response answers{best}",
            questions.len()
        )
    };
    scored(
        value,
        reason,
        json!({
            "questions": questions.iter().zip(&similarities).map(|(q, s)| json!({"question": q.question, "noncommittal": q.noncommittal, "cosine": s})).collect::<Vec<_>>(),
            "raw_mean_cosine": raw,
            "noncommittal_rule": rule.name(),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str, noncommittal: bool) -> GeneratedQuestion {
        GeneratedQuestion {
            question: text.into(),
            noncommittal,
        }
    }

    #[test]
    fn mean_cosine_clamped_and_noncommittal_rules() {
        let input = [1.0, 0.0];
        let embeddings = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![1.0, 1.0]];
        let qs = [q("a", false), q("b", true), q("c", false)];
        let expected = (1.0 + 0.0 + std::f64::consts::FRAC_1_SQRT_2) / 3.0;
        let Outcome::Scored { value, details, .. } =
            score(&qs, &input, &embeddings, Noncommittal::All)
        else {
            panic!()
        };
        assert!((value - expected).abs() < 1e-12);
        assert!((details.to_json()["raw_mean_cosine"].as_f64().unwrap() - expected).abs() < 1e-12);
        let Outcome::Scored { value, .. } = score(&qs, &input, &embeddings, Noncommittal::Any)
        else {
            panic!()
        };
        assert_eq!(value, 0.0);
        let all = [q("a", true), q("b", true), q("c", true)];
        let Outcome::Scored { value, .. } = score(&all, &input, &embeddings, Noncommittal::All)
        else {
            panic!()
        };
        assert_eq!(value, 0.0);
        let negative = vec![vec![-1.0, 0.0]; 3];
        let Outcome::Scored { value, details, .. } =
            score(&qs, &input, &negative, Noncommittal::All)
        else {
            panic!()
        };
        assert_eq!(
            (value, details.to_json()["raw_mean_cosine"].as_f64()),
            (0.0, Some(-1.0))
        );
        assert!(matches!(
            score(&qs, &[0.0, 0.0], &embeddings, Noncommittal::All),
            Outcome::Failed(_)
        ));
    }
}
