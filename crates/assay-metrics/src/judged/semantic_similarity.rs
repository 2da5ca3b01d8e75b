//! `semantic_similarity` (ragas): cosine of the embeddings of the response
//! and the reference.
//!
//! Steps: [`StepKey::Embed`] of the response and of each reference (no
//! judge prompt). Value = the cosine clamped to [0, 1] (raw value in
//! details); several references: the maximum; `threshold` turns it into 1
//! if value >= threshold else 0.
//!
//! Empty inputs: texts are embedded as they are; a zero embedding vector
//! -> failed (undefined).

use crate::judged::common::{cosine, first, n_refs, scored, undefined};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::Unit;
use crate::judged::options::{optional_text, optional_unit};
use crate::judged::prompt::PromptId;
use crate::judged::prompt::PromptSet;
use crate::judged::step::{EmbedText, InputError, Inputs, StepKey};
use crate::params::param;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;

pub const PROMPTS: &[PromptId] = &[];

pub const EMPTY_INPUTS: &str =
    "empty texts are embedded as they are; a zero embedding vector fails (undefined)";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "semantic_similarity",
    summary: "cosine of response and reference embeddings (needs --embedder)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Response, Field::References],
    needs_contexts: false,
    prompts: PROMPTS,
    params: &[param(
        "threshold",
        "none",
        "a number in [0, 1] makes the score binary",
    )],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(SemanticSimilarity { threshold: None }),
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(SemanticSimilarity {
        threshold: values.get("threshold", optional_unit)?,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct SemanticSimilarity {
    pub threshold: Option<Unit>,
}

impl MetricUnit for SemanticSimilarity {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn needs_embedder(&self) -> bool {
        true
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        let mut steps = vec![StepKey::Embed(EmbedText::Response)];
        steps.extend((0..n_refs(sample)).map(|i| StepKey::Embed(EmbedText::Reference(i))));
        steps
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        let response = first(inputs.embeddings(&StepKey::Embed(EmbedText::Response))?);
        let references = (0..n_refs(inputs.sample))
            .map(|i| {
                Ok(first(
                    inputs.embeddings(&StepKey::Embed(EmbedText::Reference(i)))?,
                ))
            })
            .collect::<Result<Vec<_>, InputError>>()?;
        single(ID, score(response, &references, self.threshold))
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![("threshold".into(), optional_text(self.threshold))]
    }
}

pub fn score(response: &[f64], references: &[&[f64]], threshold: Option<Unit>) -> Outcome {
    let mut cosines = Vec::with_capacity(references.len());
    for (i, r) in references.iter().enumerate() {
        match cosine(response, r) {
            Some(c) => cosines.push(c),
            None => {
                return undefined(format!(
                    "cosine of the response and reference {} is undefined",
                    i + 1
                ))
            }
        }
    }
    let Some((best, raw)) = cosines
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return Outcome::Skipped(SkipReason::MissingField(Field::References));
    };
    let clamped = raw.clamp(0.0, 1.0);
    let value = match threshold {
        Some(t) if clamped >= t.get() => 1.0,
        Some(_) => 0.0,
        None => clamped,
    };
    let mut reason = format!("cosine {raw:.3} with reference {}", best + 1);
    if let Some(t) = threshold {
        reason.push_str(&format!(" against threshold {t}"));
    }
    scored(
        value,
        reason,
        json!({"cosines": cosines, "best_reference": best}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_reference_and_threshold() {
        let response = [1.0, 0.0];
        let (a, b) = ([0.0, 1.0], [1.0, 1.0]);
        let Outcome::Scored { value, .. } = score(&response, &[&a, &b], None) else {
            panic!()
        };
        assert!((value - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
        let t = Some(Unit::new(0.8).unwrap());
        let Outcome::Scored { value, .. } = score(&response, &[&a, &b], t) else {
            panic!()
        };
        assert_eq!(value, 0.0);
        assert!(matches!(
            score(&[0.0, 0.0], &[&a], None),
            Outcome::Failed(_)
        ));
    }
}
