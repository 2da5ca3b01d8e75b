//! `context_precision` (ragas, valor-lite, DeepEval; seed 004, "Context
//! Precision"): are the useful contexts ranked first.
//!
//! Steps: [`steps::context_usefulness`] (`prompts/context_usefulness.json`)
//! per reference, a yes/no verdict per retrieved context, in order: useful
//! for arriving at that reference. With several references a context is
//! useful if useful for any (valor). `against=response` judges usefulness
//! for the response instead (no reference needed). Under the per-item
//! protocol each context is asked alone (`prompts/context_useful.json`).
//!
//! Score = sum over k of precision@k x v_k, divided by the number of useful
//! contexts, exactly (no epsilon); none useful: 0. Worked examples (valor
//! docs): `[y,n,n,y]` = 0.75, `[n,y,n,y]` = 0.5; `[y,n,y]` = 5/6.
//!
//! Empty inputs: no retrieved contexts -> skipped, `no_contexts`.

use crate::judged::common::{misaligned, n_refs, quote, scored, with_quotes};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::PrecisionAgainst;
use crate::judged::per_turn;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::PromptSet;
use crate::judged::step::{InputError, Inputs, Label, StepKey, UsefulFor, Verdict};
use crate::judged::steps;
use crate::params::param;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;

pub const PROMPTS: &[PromptId] = &[steps::CONTEXT_USEFULNESS];

pub const EMPTY_INPUTS: &str =
    "skipped (no_contexts) when there are no retrieved contexts; 0 when none is useful";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "context_precision",
    summary: "mean precision@k of the contexts useful for the reference (ragas)",
    direction: Direction::HigherIsBetter,
    required: &[
        Field::UserInput,
        Field::RetrievedContexts,
        Field::References,
    ],
    needs_contexts: true,
    prompts: PROMPTS,
    params: &[
        param(
            "against",
            "reference",
            "reference, or response for the no-reference variant",
        ),
        per_turn::PARAM,
    ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || {
        JudgedMetric::new(ContextPrecision {
            against: PrecisionAgainst::Reference,
        })
    },
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(ContextPrecision {
        against: values.parse("against")?,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct ContextPrecision {
    pub against: PrecisionAgainst,
}

impl ContextPrecision {
    /// One usefulness step per reference (or one against the response).
    fn targets(&self, sample: &Sample) -> Vec<StepKey> {
        match self.against {
            PrecisionAgainst::Response => vec![steps::context_usefulness(UsefulFor::Response)],
            PrecisionAgainst::Reference => (0..n_refs(sample))
                .map(|i| steps::context_usefulness(UsefulFor::Reference(i)))
                .collect(),
        }
    }
}

impl MetricUnit for ContextPrecision {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    /// Against the reference, it needs [`Field::References`] (`reference`
    /// or `references`).
    fn required(&self) -> Vec<Field> {
        use Field::{References, Response, RetrievedContexts, UserInput};
        match self.against {
            PrecisionAgainst::Reference => vec![UserInput, RetrievedContexts, References],
            PrecisionAgainst::Response => vec![UserInput, RetrievedContexts, Response],
        }
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        self.targets(sample)
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        let verdicts = self
            .targets(inputs.sample)
            .iter()
            .map(|t| inputs.verdicts(t))
            .collect::<Result<Vec<_>, _>>()?;
        single(ID, score(inputs.contexts()?, &verdicts))
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![("against".into(), self.against.to_string())]
    }
}

/// Average precision of the 0/1 usefulness list; 0 when none is useful.
pub fn average_precision(useful: &[bool]) -> f64 {
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (k, &u) in useful.iter().enumerate() {
        if u {
            hits += 1;
            sum += hits as f64 / (k + 1) as f64;
        }
    }
    if hits == 0 {
        0.0
    } else {
        sum / hits as f64
    }
}

/// The score from the verdicts of each target (reference), each one per
/// context in retrieval order.
pub fn score(contexts: &[String], per_target: &[&[Verdict]]) -> Outcome {
    if contexts.is_empty() {
        return Outcome::Skipped(SkipReason::NoContexts);
    }
    if let Some(bad) = per_target.iter().find(|v| v.len() != contexts.len()) {
        return misaligned("contexts", contexts.len(), bad.len());
    }
    let useful: Vec<bool> = (0..contexts.len())
        .map(|k| per_target.iter().any(|v| v[k].verdict == Label::Yes))
        .collect();
    let value = average_precision(&useful);
    let positions: Vec<String> = useful
        .iter()
        .enumerate()
        .filter(|(_, u)| **u)
        .map(|(k, _)| (k + 1).to_string())
        .collect();
    let base = if positions.is_empty() {
        format!("none of the {} contexts is useful", contexts.len())
    } else {
        format!(
            "useful contexts at ranks {} of {}",
            positions.join(", "),
            contexts.len()
        )
    };
    // The reasons quoted are those of the first target's verdicts on the
    // contexts no target found useful.
    let merged: Vec<Verdict> = (0..contexts.len())
        .map(|k| Verdict {
            verdict: if useful[k] { Label::Yes } else { Label::No },
            reason: per_target
                .first()
                .map_or(String::new(), |v| v[k].reason.clone()),
            probabilities: None,
        })
        .collect();
    scored(
        value,
        with_quotes(
            base,
            "not useful",
            quote(contexts, &merged, |l| l == Label::No),
        ),
        json!({
            "useful": useful,
            "verdicts": per_target.iter().map(|v| v.iter().map(|x| json!(x)).collect::<Vec<_>>()).collect::<Vec<_>>(),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yn(s: &str) -> Vec<bool> {
        s.chars().map(|c| c == 'y').collect()
    }

    #[test]
    fn valor_worked_examples() {
        assert_eq!(average_precision(&yn("ynny")), 0.75);
        assert_eq!(average_precision(&yn("nyny")), 0.5);
        // (1 + 2/3) / 2: 5/6 up to the last bit, as in Python's loop.
        assert!((average_precision(&yn("yny")) - 5.0 / 6.0).abs() < 1e-15);
        assert_eq!(average_precision(&yn("nnn")), 0.0);
    }

    #[test]
    fn useful_for_any_reference() {
        let contexts: Vec<String> = ["c1", "c2", "c3", "c4"].map(String::from).to_vec();
        let v = |s: &str| -> Vec<Verdict> {
            s.chars()
                .map(|c| Verdict {
                    verdict: if c == 'y' { Label::Yes } else { Label::No },
                    reason: format!("r{c}"),
                    probabilities: None,
                })
                .collect()
        };
        let (a, b) = (v("ynnn"), v("nnny"));
        let Outcome::Scored { value, reason, .. } = score(&contexts, &[&a, &b]) else {
            panic!()
        };
        assert_eq!(value, 0.75);
        assert!(reason
            .unwrap()
            .starts_with("useful contexts at ranks 1, 4 of 4"));
        assert_eq!(score(&[], &[]), Outcome::Skipped(SkipReason::NoContexts));
    }
}
