//! `answer_correctness` (ragas; seed 003, "Answer Correctness"; valor-lite
//! with weights [1, 0]): factual overlap with the reference, optionally
//! blended with semantic similarity.
//!
//! Steps: [`steps::response_statements`] and, per reference i,
//! [`steps::reference_statements`] (`prompts/statements.json`), then ONE
//! call [`steps::correctness_classification`]
//! (`prompts/correctness_classification.json`) marking each response
//! statement supported by the reference (TP) or not (FP) and each
//! reference statement present in the response or missing (FN). With a
//! semantic weight, embeddings of the response and each reference.
//!
//! F1 = TP / (TP + 0.5 (FP + FN)), 0 without TP; similarity = cosine of
//! the embeddings (negative values count as 0); score = weighted average
//! with `weights` (default [0.75, 0.25]); `threshold` turns it into 1 if
//! score >= threshold else 0. Several references: the maximum.
//!
//! Under the per-item protocol the statements are sentences and each is
//! asked alone: a response sentence against the reference's
//! (`prompts/statement_in_reference.json`), a reference sentence against
//! the response's (`prompts/statement_in_response.json`). When the judge
//! gave probabilities, details carry `soft_score`: the best reference's
//! score with F1 of the expected counts (a response statement adds P(yes)
//! to TP and P(no) to FP, a reference statement P(no) to FN).
//!
//! Empty inputs: neither side has statements -> skipped, `no_statements`;
//! one side without statements gives F1 = 0.

use crate::judged::common::{
    cosine, first, itemized, misaligned, n_refs, quote, scored, undefined, with_soft_score,
};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::{optional_text, optional_unit};
use crate::judged::options::{Unit, Weights};
use crate::judged::prompt::PromptId;
use crate::judged::prompt::PromptSet;
use crate::judged::step::{EmbedText, InputError, Inputs, Label, StepKey, StepOutput, Verdict};
use crate::judged::steps;
use crate::params::param;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;

pub const PROMPTS: &[PromptId] = &[steps::STATEMENTS, steps::CORRECTNESS_CLASSIFICATION];

pub const EMPTY_INPUTS: &str =
    "skipped (no_statements) when neither response nor reference has statements; F1 = 0 when one side has none";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "answer_correctness",
    summary: "weighted factual F1 against the reference plus embedding similarity (ragas; needs --embedder unless weights=1,0)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Response, Field::References],
    needs_contexts: false,
    prompts: PROMPTS,
    params: &[
                param(
                    "weights",
                    "0.75,0.25",
                    "factual (F1) and semantic (embedding) weights; 1,0 needs no embedder (valor)",
                ),
                param("threshold", "none", "a number in [0, 1] makes the score binary"),
            ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(AnswerCorrectness {
                weights: Weights::DEFAULT,
                threshold: None,
            }),
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(AnswerCorrectness {
        weights: values.parse("weights")?,
        threshold: values.get("threshold", optional_unit)?,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct AnswerCorrectness {
    pub weights: Weights,
    pub threshold: Option<Unit>,
}

impl MetricUnit for AnswerCorrectness {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn needs_embedder(&self) -> bool {
        self.weights.needs_embeddings()
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        let references = n_refs(sample);
        let mut steps = vec![steps::response_statements()];
        for i in 0..references {
            steps.push(steps::reference_statements(i));
            steps.push(steps::correctness_classification(i));
        }
        if self.weights.needs_embeddings() {
            steps.push(StepKey::Embed(EmbedText::Response));
            steps.extend((0..references).map(|i| StepKey::Embed(EmbedText::Reference(i))));
        }
        steps
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        let response = inputs.texts(&steps::response_statements())?;
        let response_embedding = if self.weights.needs_embeddings() {
            Some(first(
                inputs.embeddings(&StepKey::Embed(EmbedText::Response))?,
            ))
        } else {
            None
        };
        let per_ref = (0..n_refs(inputs.sample))
            .map(|i| {
                let key = steps::correctness_classification(i);
                let StepOutput::Classification {
                    response,
                    reference,
                } = inputs.output(&key)?
                else {
                    return Err(InputError::WrongOutput(key));
                };
                let similarity = match response_embedding {
                    Some(r) => match cosine(
                        r,
                        first(inputs.embeddings(&StepKey::Embed(EmbedText::Reference(i)))?),
                    ) {
                        Some(c) => Similarity::Cosine(c),
                        None => Similarity::Undefined,
                    },
                    None => Similarity::NotNeeded,
                };
                Ok(PerReference {
                    reference_statements: inputs.texts(&steps::reference_statements(i))?,
                    response_verdicts: response,
                    reference_verdicts: reference,
                    similarity,
                })
            })
            .collect::<Result<Vec<_>, InputError>>()?;
        single(ID, score(response, &per_ref, self.weights, self.threshold))
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![
            ("weights".into(), self.weights.to_string()),
            ("threshold".into(), optional_text(self.threshold)),
        ]
    }
}

/// The semantic part of one reference's score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Similarity {
    /// The semantic weight is 0: no embeddings were made.
    NotNeeded,
    Cosine(f64),
    /// A zero vector or differing dimensions.
    Undefined,
}

/// What one reference contributes.
#[derive(Clone, Copy, Debug)]
pub struct PerReference<'a> {
    pub reference_statements: &'a [String],
    /// Per response statement: yes = TP, no = FP.
    pub response_verdicts: &'a [Verdict],
    /// Per reference statement: yes = covered, no = FN.
    pub reference_verdicts: &'a [Verdict],
    pub similarity: Similarity,
}

/// F1 from counts: TP / (TP + 0.5 (FP + FN)), 0 without TP.
pub fn f1(tp: usize, fp: usize, fn_: usize) -> f64 {
    expected_f1(tp as f64, fp as f64, fn_ as f64)
}

/// [`f1`] of expected counts (sums of the judge's probabilities).
fn expected_f1(tp: f64, fp: f64, fn_: f64) -> f64 {
    if tp <= 0.0 {
        0.0
    } else {
        tp / (tp + 0.5 * (fp + fn_))
    }
}

/// F1 under the judge's probabilities: each response statement counts
/// P(yes) as TP and the rest as FP, each reference statement P(no) as FN.
/// `None` unless every verdict came with probabilities.
fn soft_f1(response: &[Verdict], reference: &[Verdict]) -> Option<f64> {
    let yes =
        |vs: &[Verdict]| -> Option<f64> { vs.iter().map(|v| v.probability(Label::Yes)).sum() };
    let tp = yes(response)?;
    let covered = yes(reference)?;
    Some(expected_f1(
        tp,
        response.len() as f64 - tp,
        reference.len() as f64 - covered,
    ))
}

pub fn score(
    response_statements: &[String],
    per_reference: &[PerReference<'_>],
    weights: Weights,
    threshold: Option<Unit>,
) -> Outcome {
    if response_statements.is_empty()
        && per_reference
            .iter()
            .all(|r| r.reference_statements.is_empty())
    {
        return Outcome::Skipped(SkipReason::NoStatements);
    }
    let mut best: Option<(usize, f64)> = None;
    let mut rows = Vec::with_capacity(per_reference.len());
    let mut softs = Vec::with_capacity(per_reference.len());
    for (i, r) in per_reference.iter().enumerate() {
        if r.response_verdicts.len() != response_statements.len() {
            return misaligned(
                "response statements",
                response_statements.len(),
                r.response_verdicts.len(),
            );
        }
        if r.reference_verdicts.len() != r.reference_statements.len() {
            return misaligned(
                "reference statements",
                r.reference_statements.len(),
                r.reference_verdicts.len(),
            );
        }
        let tp = r
            .response_verdicts
            .iter()
            .filter(|v| v.verdict == Label::Yes)
            .count();
        let fp = response_statements.len() - tp;
        let fn_ = r
            .reference_verdicts
            .iter()
            .filter(|v| v.verdict != Label::Yes)
            .count();
        let factual = f1(tp, fp, fn_);
        let soft_factual = soft_f1(r.response_verdicts, r.reference_verdicts);
        let similarity = match r.similarity {
            Similarity::NotNeeded => 0.0,
            Similarity::Cosine(c) => c.max(0.0),
            Similarity::Undefined => {
                return undefined(format!(
                    "cosine of the response and reference {} is undefined",
                    i + 1
                ))
            }
        };
        let blend = |factual: f64| {
            (weights.factual() * factual + weights.semantic() * similarity)
                / (weights.factual() + weights.semantic())
        };
        let value = blend(factual);
        if best.is_none_or(|(_, b)| value > b) {
            best = Some((i, value));
        }
        softs.push(soft_factual.map(blend));
        rows.push(json!({
            "tp": tp, "fp": fp, "fn": fn_, "f1": factual,
            "similarity": match r.similarity { Similarity::Cosine(c) => json!(c), _ => json!(null) },
            "score": value,
            "response_statements": itemized("statement", response_statements, r.response_verdicts),
            "reference_statements": itemized("statement", r.reference_statements, r.reference_verdicts),
        }));
    }
    let Some((i, raw)) = best else {
        return Outcome::Skipped(SkipReason::MissingField(assay_core::Field::References));
    };
    let value = match threshold {
        Some(t) if raw >= t.get() => 1.0,
        Some(_) => 0.0,
        None => raw,
    };
    let r = &per_reference[i];
    let row = &rows[i];
    let mut reason = format!(
        "TP {}, FP {}, FN {}: F1 {:.3}",
        row["tp"],
        row["fp"],
        row["fn"],
        row["f1"].as_f64().unwrap_or_default()
    );
    if let Similarity::Cosine(c) = r.similarity {
        reason.push_str(&format!(", similarity {c:.3}"));
    }
    if let Some(t) = threshold {
        reason.push_str(&format!(", score {raw:.3} against threshold {t}"));
    }
    let unsupported = quote(response_statements, r.response_verdicts, |l| {
        l != Label::Yes
    });
    if !unsupported.is_empty() {
        reason.push_str(&format!("; not in the reference: {unsupported}"));
    }
    let missing = quote(r.reference_statements, r.reference_verdicts, |l| {
        l != Label::Yes
    });
    if !missing.is_empty() {
        reason.push_str(&format!("; missing from the response: {missing}"));
    }
    scored(
        value,
        reason,
        with_soft_score(
            json!({"weights": [weights.factual(), weights.semantic()], "best_reference": i, "raw_score": raw, "references": rows}),
            softs[i],
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(l: Label) -> Verdict {
        Verdict {
            verdict: l,
            reason: String::new(),
            probabilities: None,
        }
    }

    /// Seed 003: reference "Einstein was born in 1879 in Germany.", answer
    /// "Einstein was born in Spain in 1879.": TP born in 1879, FP born in
    /// Spain, FN born in Germany; F1 = 1 / (1 + 0.5 x 2) = 0.5.
    #[test]
    fn seed_003_low_correctness_example() {
        let response: Vec<String> = ["Einstein was born in Spain.", "Einstein was born in 1879."]
            .map(String::from)
            .to_vec();
        let reference: Vec<String> = [
            "Einstein was born in 1879.",
            "Einstein was born in Germany.",
        ]
        .map(String::from)
        .to_vec();
        let (rv, fv) = ([v(Label::No), v(Label::Yes)], [v(Label::Yes), v(Label::No)]);
        let per = |similarity| PerReference {
            reference_statements: &reference,
            response_verdicts: &rv,
            reference_verdicts: &fv,
            similarity,
        };
        let f1_only = Weights::new(1.0, 0.0).unwrap();
        let Outcome::Scored { value, reason, .. } =
            score(&response, &[per(Similarity::NotNeeded)], f1_only, None)
        else {
            panic!()
        };
        assert_eq!(value, 0.5);
        let reason = reason.unwrap();
        assert!(reason.starts_with("TP 1, FP 1, FN 1: F1 0.500"), "{reason}");
        assert!(
            reason.contains("not in the reference: [1] \"Einstein was born in Spain.\""),
            "{reason}"
        );
        assert!(
            reason.contains("missing from the response: [2] \"Einstein was born in Germany.\""),
            "{reason}"
        );
        let Outcome::Scored { value, .. } = score(
            &response,
            &[per(Similarity::Cosine(0.9))],
            Weights::DEFAULT,
            None,
        ) else {
            panic!()
        };
        assert!((value - (0.75 * 0.5 + 0.25 * 0.9)).abs() < 1e-12);
        let t = Some(Unit::new(0.6).unwrap());
        let Outcome::Scored { value, .. } = score(
            &response,
            &[per(Similarity::Cosine(0.9))],
            Weights::DEFAULT,
            t,
        ) else {
            panic!()
        };
        assert_eq!(value, 1.0);
    }

    /// The seed 003 example with the judge's probabilities: expected TP
    /// 0.2 + 0.9 = 1.1, FP 0.8 + 0.1 = 0.9, FN 0.2 + 0.7 = 0.9, so the soft
    /// F1 is 1.1 / (1.1 + 0.5 x 1.8) = 0.55; the score stays the count's.
    #[test]
    fn soft_score_is_the_f1_of_expected_counts() {
        let sure = |l: Label, yes: f64| Verdict {
            probabilities: Some(vec![(Label::Yes, yes), (Label::No, 1.0 - yes)]),
            ..v(l)
        };
        let response: Vec<String> = vec!["born in Spain".into(), "born in 1879".into()];
        let reference: Vec<String> = vec!["born in 1879".into(), "born in Germany".into()];
        let rv = [sure(Label::No, 0.2), sure(Label::Yes, 0.9)];
        let fv = [sure(Label::Yes, 0.8), sure(Label::No, 0.3)];
        let per = PerReference {
            reference_statements: &reference,
            response_verdicts: &rv,
            reference_verdicts: &fv,
            similarity: Similarity::NotNeeded,
        };
        let f1_only = Weights::new(1.0, 0.0).unwrap();
        let Outcome::Scored { value, details, .. } = score(&response, &[per], f1_only, None) else {
            panic!()
        };
        assert_eq!(value, 0.5);
        let soft = details.to_json()["soft_score"].as_f64().unwrap();
        assert!((soft - 0.55).abs() < 1e-12, "{soft}");
        let plain = [v(Label::No), v(Label::Yes)];
        let without = PerReference {
            response_verdicts: &plain,
            ..per
        };
        let Outcome::Scored { details, .. } = score(&response, &[without], f1_only, None) else {
            panic!()
        };
        assert!(details.to_json().get("soft_score").is_none());
    }

    #[test]
    fn maximum_over_references_and_empty_rules() {
        let response: Vec<String> = vec!["a".into()];
        let r1: Vec<String> = vec!["x".into()];
        let (no, yes) = ([v(Label::No)], [v(Label::Yes)]);
        let refs = [
            PerReference {
                reference_statements: &r1,
                response_verdicts: &no,
                reference_verdicts: &no,
                similarity: Similarity::NotNeeded,
            },
            PerReference {
                reference_statements: &r1,
                response_verdicts: &yes,
                reference_verdicts: &yes,
                similarity: Similarity::NotNeeded,
            },
        ];
        let w = Weights::new(1.0, 0.0).unwrap();
        let Outcome::Scored { value, details, .. } = score(&response, &refs, w, None) else {
            panic!()
        };
        assert_eq!((value, details.to_json()["best_reference"].as_u64()), (1.0, Some(1)));
        let none = PerReference {
            reference_statements: &[],
            response_verdicts: &[],
            reference_verdicts: &[],
            similarity: Similarity::NotNeeded,
        };
        assert_eq!(
            score(&[], &[none], w, None),
            Outcome::Skipped(SkipReason::NoStatements)
        );
        assert_eq!(f1(0, 2, 1), 0.0);
    }
}
