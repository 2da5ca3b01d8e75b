//! `faithfulness`: the share of the response's statements that the
//! retrieved contexts support (ragas, valor-lite; seed 004, "Faithfulness").
//!
//! Steps: [`steps::response_statements`] (prompt `prompts/statements.json`),
//! then [`steps::statement_verdicts`] (`prompts/faithfulness_verdicts.json`):
//! per statement yes (inferable from the contexts), no (contradicted) or
//! idk (neither). Under the per-item protocol the statements are the
//! response's sentences and each is asked alone with
//! `prompts/statement_support.json`, its verdict read with the judge's
//! probabilities; under the likelihood protocol (the local judges'
//! default) each sentence's verdict is read from how much likelier the
//! contexts make its words ([`crate::judged::likelihood`]). Score = supported / statements: unrelated claims count
//! against, as in ragas and valor. `mode=contradictions` counts only
//! contradicted statements against (DeepEval).
//!
//! Details carry `soft_score`, the expected score under the judge's
//! probabilities, when it gave them (in-process judges do).
//!
//! Empty inputs: no statements (e.g. an empty response) -> skipped,
//! `no_statements`. Empty contexts are judged as they are: nothing can be
//! inferred, so every statement is unsupported (0 in the default mode).

use crate::judged::common::{
    itemized, misaligned, quote, scored, soft_share, with_quotes, with_soft_score,
};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::FaithfulnessMode;
use crate::judged::per_turn;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::PromptSet;
use crate::judged::step::{InputError, Inputs, Label, StepKey, Verdict};
use crate::judged::steps;
use crate::params::param;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;

/// The prompt files this metric uses.
pub const PROMPTS: &[PromptId] = &[steps::STATEMENTS, steps::FAITHFULNESS_VERDICTS];

pub const EMPTY_INPUTS: &str =
    "skipped (no_statements) when the response has no statements; empty contexts support nothing";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "faithfulness",
    summary: "share of the response's statements the retrieved contexts support",
    direction: Direction::HigherIsBetter,
    required: &[Field::Response, Field::RetrievedContexts],
    needs_contexts: false,
    prompts: PROMPTS,
    params: &[
        param(
            "mode",
            "supported",
            "supported: unsupported statements count against (ragas, valor); \
                 contradictions: only contradicted ones (DeepEval)",
        ),
        per_turn::PARAM,
    ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || {
        JudgedMetric::new(Faithfulness {
            mode: FaithfulnessMode::Supported,
        })
    },
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(Faithfulness {
        mode: values.parse("mode")?,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct Faithfulness {
    pub mode: FaithfulnessMode,
}

impl MetricUnit for Faithfulness {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, _: &Sample) -> Vec<StepKey> {
        vec![steps::response_statements(), steps::statement_verdicts()]
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        single(
            ID,
            score(
                inputs.texts(&steps::response_statements())?,
                inputs.verdicts(&steps::statement_verdicts())?,
                self.mode,
            ),
        )
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![("mode".into(), self.mode.to_string())]
    }
}

/// The score from the statements and their verdicts.
pub fn score(statements: &[String], verdicts: &[Verdict], mode: FaithfulnessMode) -> Outcome {
    if statements.is_empty() {
        return Outcome::Skipped(SkipReason::NoStatements);
    }
    if verdicts.len() != statements.len() {
        return misaligned("statements", statements.len(), verdicts.len());
    }
    let against = |l: Label| match mode {
        FaithfulnessMode::Supported => l != Label::Yes,
        FaithfulnessMode::Contradictions => l == Label::No,
    };
    let n = statements.len();
    let bad = verdicts.iter().filter(|v| against(v.verdict)).count();
    let base = match mode {
        FaithfulnessMode::Supported => {
            format!(
                "{} of {n} statements can be inferred from the contexts",
                n - bad
            )
        }
        FaithfulnessMode::Contradictions => {
            format!("{bad} of {n} statements contradict the contexts")
        }
    };
    let label = match mode {
        FaithfulnessMode::Supported => "not supported",
        FaithfulnessMode::Contradictions => "contradicted",
    };
    let soft = match mode {
        FaithfulnessMode::Supported => soft_share(verdicts, Label::Yes),
        FaithfulnessMode::Contradictions => soft_share(verdicts, Label::No).map(|p| 1.0 - p),
    };
    scored(
        (n - bad) as f64 / n as f64,
        with_quotes(base, label, quote(statements, verdicts, against)),
        with_soft_score(
            json!({"mode": mode.name(), "statements": itemized("statement", statements, verdicts)}),
            soft,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(l: Label) -> Verdict {
        Verdict {
            verdict: l,
            reason: format!("because {l}"),
            probabilities: None,
        }
    }

    fn texts(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("statement {i}")).collect()
    }

    #[test]
    fn unrelated_claims_count_against_by_default_not_in_contradictions_mode() {
        let verdicts = [v(Label::Yes), v(Label::Idk), v(Label::No), v(Label::Yes)];
        let Outcome::Scored { value, reason, .. } =
            score(&texts(4), &verdicts, FaithfulnessMode::Supported)
        else {
            panic!()
        };
        assert_eq!(value, 0.5);
        let reason = reason.unwrap();
        assert!(reason.starts_with("2 of 4 statements"), "{reason}");
        assert!(
            reason.contains("[2] \"statement 2\" (because idk)") && reason.contains("[3]"),
            "{reason}"
        );
        let Outcome::Scored { value, .. } =
            score(&texts(4), &verdicts, FaithfulnessMode::Contradictions)
        else {
            panic!()
        };
        assert_eq!(value, 0.75);
    }

    #[test]
    fn soft_score_is_the_mean_probability_of_the_counted_label() {
        let p = |l: Label, yes: f64, no: f64| Verdict {
            probabilities: Some(vec![
                (Label::Yes, yes),
                (Label::No, no),
                (Label::Idk, 1.0 - yes - no),
            ]),
            ..v(l)
        };
        let verdicts = [p(Label::Yes, 0.9, 0.1), p(Label::Idk, 0.3, 0.2)];
        let soft = |mode| match score(&texts(2), &verdicts, mode) {
            Outcome::Scored { details, .. } => details.to_json()["soft_score"].as_f64().unwrap(),
            other => panic!("{other:?}"),
        };
        assert!((soft(FaithfulnessMode::Supported) - 0.6).abs() < 1e-12);
        assert!((soft(FaithfulnessMode::Contradictions) - 0.85).abs() < 1e-12);
        // Without probabilities there is no soft score.
        let Outcome::Scored { details, .. } =
            score(&texts(1), &[v(Label::Yes)], FaithfulnessMode::Supported)
        else {
            panic!()
        };
        assert!(details.to_json().get("soft_score").is_none());
    }

    #[test]
    fn no_statements_is_skipped() {
        assert_eq!(
            score(&[], &[], FaithfulnessMode::Supported),
            Outcome::Skipped(SkipReason::NoStatements)
        );
        assert!(matches!(
            score(&texts(2), &[v(Label::Yes)], FaithfulnessMode::Supported),
            Outcome::Failed(_)
        ));
    }
}
