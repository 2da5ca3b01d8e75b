//! `summary_coherence` (valor-lite, after G-Eval; seed 004, "Summary
//! Coherence"): a 1-5 rating of the summary (the response) against the
//! source (the retrieved contexts joined by newlines).
//!
//! Steps: [`steps::coherence_rating`] (`prompts/coherence_rating.json`).
//! Value = (rating - 1) / 4, the rating in details; when the judge gives
//! probabilities of the five ratings (in-process judges decode the rating
//! as a closed choice), the probability-weighted rating is used instead
//! (G-Eval), and details carry `probabilities` (of ratings 1..=5) and
//! `expected_rating`.
//!
//! Empty inputs: empty contexts -> skipped, `no_contexts`; an empty
//! summary is rated as it is.

use crate::judged::common::rated;
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::PromptId;
use crate::judged::step::{InputError, Inputs, Rating, StepKey, StepOutput};
use crate::judged::steps;
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample};

pub const PROMPTS: &[PromptId] = &[steps::COHERENCE_RATING];

pub const EMPTY_INPUTS: &str =
    "skipped (no_contexts) without source text; an empty summary is rated as it is";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "summary_coherence",
    summary: "G-Eval coherence rating of the summary, scaled to [0, 1]",
    direction: Direction::HigherIsBetter,
    required: &[Field::Response, Field::RetrievedContexts],
    needs_contexts: true,
    prompts: PROMPTS,
    params: &[],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(SummaryCoherence),
    configure: None,
    named_params: None,
    per_output: None,
};

/// The metric (it has no parameters).
#[derive(Debug)]
pub struct SummaryCoherence;

impl MetricUnit for SummaryCoherence {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, _: &Sample) -> Vec<StepKey> {
        vec![steps::coherence_rating()]
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        match inputs.output(&steps::coherence_rating())? {
            StepOutput::Rating(r) => single(ID, score(r)),
            _ => Err(InputError::WrongOutput(steps::coherence_rating())),
        }
    }
}

pub fn score(rating: &Rating) -> Outcome {
    rated(rating, steps::COHERENCE_SCALE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rating_maps_to_unit_interval_and_probabilities_weight_it() {
        let r = |rating, probabilities| Rating {
            rating,
            reason: "clear".into(),
            probabilities,
        };
        let value = |x: &Rating| match score(x) {
            Outcome::Scored { value, .. } => value,
            other => panic!("{other:?}"),
        };
        assert_eq!(value(&r(1, None)), 0.0);
        assert_eq!(value(&r(4, None)), 0.75);
        assert_eq!(value(&r(5, None)), 1.0);
        // expected rating 0.5 x 4 + 0.5 x 5 = 4.5 -> 0.875
        assert_eq!(value(&r(4, Some(vec![0.0, 0.0, 0.0, 0.5, 0.5]))), 0.875);
    }
}
