//! `context_recall` (ragas, valor-lite; seeds 002 and 004, "Context
//! Recall"): the share of the reference's statements attributable to the
//! retrieved contexts.
//!
//! Steps per reference i: ONE call [`steps::reference_recall`]
//! (`prompts/reference_recall.json`) that states the reference's statements
//! and judges each attributable to the contexts or not. When another metric
//! of the sample needs the reference's statements anyway
//! (`answer_correctness`), [`crate::judged::plan()`] replaces it with the
//! shared [`steps::reference_statements`] (`prompts/statements.json`) and
//! [`steps::reference_attribution`] (`prompts/reference_attribution.json`),
//! whose verdict count is fixed. Score = attributed / statements; several
//! references: the maximum (valor).
//!
//! Under the per-item protocol the plan always takes the split form, and
//! each statement (a sentence of the reference) is asked alone
//! (`prompts/reference_support.json`); details then carry `soft_score`,
//! the mean probability of yes over the best reference's statements.
//!
//! Empty inputs: references without statements are left out of the
//! maximum; if none has statements -> skipped, `no_statements`. Empty
//! contexts attribute nothing (0).

use crate::judged::common::{
    itemized, misaligned, n_refs, quote, scored, soft_share, with_quotes, with_soft_score,
};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::per_turn;
use crate::judged::prompt::PromptId;
use crate::judged::step::{InputError, Inputs, Label, StepKey, StepOutput, Verdict};
use crate::judged::steps;
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;

pub const PROMPTS: &[PromptId] = &[
    steps::REFERENCE_RECALL,
    steps::STATEMENTS,
    steps::REFERENCE_ATTRIBUTION,
];

pub const EMPTY_INPUTS: &str =
    "skipped (no_statements) when no reference has statements; 0 when the contexts are empty";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "context_recall",
    summary: "share of the reference's statements attributable to the contexts",
    direction: Direction::HigherIsBetter,
    required: &[Field::RetrievedContexts, Field::References],
    needs_contexts: false,
    prompts: PROMPTS,
    params: &[per_turn::PARAM],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(ContextRecall),
    configure: None,
    named_params: None,
    per_output: None,
};

/// The metric (its one parameter, `per_turn`, wraps it).
#[derive(Debug)]
pub struct ContextRecall;

impl MetricUnit for ContextRecall {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    /// One call per reference; the plan may split it into shared
    /// statements plus attribution verdicts.
    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        (0..n_refs(sample)).map(steps::reference_recall).collect()
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        // Either form the plan chose: one call, or shared statements plus
        // attribution verdicts.
        let per_ref = (0..n_refs(inputs.sample))
            .map(|i| {
                let attribution = steps::reference_attribution(i);
                if inputs.outputs.contains_key(&attribution) {
                    return Ok((
                        inputs.texts(&steps::reference_statements(i))?,
                        inputs.verdicts(&attribution)?,
                    ));
                }
                let key = steps::reference_recall(i);
                match inputs.output(&key)? {
                    StepOutput::Attributed {
                        statements,
                        verdicts,
                    } => Ok((statements.as_slice(), verdicts.as_slice())),
                    _ => Err(InputError::WrongOutput(key)),
                }
            })
            .collect::<Result<Vec<_>, InputError>>()?;
        single(ID, score(&per_ref))
    }
}

/// The score from each reference's statements and verdicts.
pub fn score(per_reference: &[(&[String], &[Verdict])]) -> Outcome {
    let mut best: Option<(usize, f64)> = None;
    for (i, (statements, verdicts)) in per_reference.iter().enumerate() {
        if statements.is_empty() {
            continue;
        }
        if statements.len() != verdicts.len() {
            return misaligned("reference statements", statements.len(), verdicts.len());
        }
        let yes = verdicts.iter().filter(|v| v.verdict == Label::Yes).count();
        let value = yes as f64 / statements.len() as f64;
        if best.is_none_or(|(_, b)| value > b) {
            best = Some((i, value));
        }
    }
    let Some((i, value)) = best else {
        return Outcome::Skipped(SkipReason::NoStatements);
    };
    let (statements, verdicts) = per_reference[i];
    let yes = verdicts.iter().filter(|v| v.verdict == Label::Yes).count();
    let mut base = format!(
        "{yes} of {} reference statements are attributable to the contexts",
        statements.len()
    );
    if per_reference.len() > 1 {
        base.push_str(&format!(
            " (reference {}, the best of {})",
            i + 1,
            per_reference.len()
        ));
    }
    scored(
        value,
        with_quotes(
            base,
            "not attributable",
            quote(statements, verdicts, |l| l == Label::No),
        ),
        with_soft_score(
            json!({
                "best_reference": i,
                "references": per_reference.iter().map(|(s, v)| itemized("statement", s, v)).collect::<Vec<_>>(),
            }),
            soft_share(verdicts, Label::Yes),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vs(s: &str) -> Vec<Verdict> {
        s.chars()
            .map(|c| Verdict {
                verdict: if c == 'y' { Label::Yes } else { Label::No },
                reason: String::new(),
                probabilities: None,
            })
            .collect()
    }

    #[test]
    fn maximum_over_references() {
        let a: Vec<String> = ["born 1879", "published 4 papers in 1905"]
            .map(String::from)
            .to_vec();
        let b: Vec<String> = ["physicist", "Nobel 1921", "born in Ulm"]
            .map(String::from)
            .to_vec();
        let (va, vb) = (vs("yn"), vs("yyn"));
        let Outcome::Scored { value, details, .. } = score(&[(&a, &va), (&b, &vb)]) else {
            panic!()
        };
        assert_eq!(value, 2.0 / 3.0);
        assert_eq!(details.to_json()["best_reference"], 1);
        let empty: Vec<String> = Vec::new();
        assert_eq!(
            score(&[(&empty, &[])]),
            Outcome::Skipped(SkipReason::NoStatements)
        );
    }
}
