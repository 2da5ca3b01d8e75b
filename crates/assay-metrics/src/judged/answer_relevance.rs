//! `answer_relevance`, valor-lite's "Answer Relevance" (seed 004): the
//! share of the response's statements that are relevant to the question.
//! Not ragas' [`crate::judged::answer_relevancy`], which embeds questions
//! generated from the response; each keeps its library's name.
//!
//! Steps: [`steps::response_statements`] (`prompts/statements.json`), then
//! [`steps::relevance_verdicts`] (`prompts/relevance_verdicts.json`), yes /
//! no / idk per statement. Score = yes / statements; with
//! `idk_counts_as=relevant`, (yes + idk) / statements (DeepEval).
//!
//! Empty inputs: no statements -> skipped, `no_statements`.

use crate::judged::common::{itemized, misaligned, quote, scored, with_quotes};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::IdkCountsAs;
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

pub const PROMPTS: &[PromptId] = &[steps::STATEMENTS, steps::RELEVANCE_VERDICTS];

pub const EMPTY_INPUTS: &str = "skipped (no_statements) when the response has no statements";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "answer_relevance",
    summary: "share of the response's statements relevant to the question (valor)",
    direction: Direction::HigherIsBetter,
    required: &[Field::UserInput, Field::Response],
    needs_contexts: false,
    prompts: PROMPTS,
    params: &[
        param(
            "idk_counts_as",
            "irrelevant",
            "irrelevant (valor) or relevant (DeepEval)",
        ),
        per_turn::PARAM,
    ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || {
        JudgedMetric::new(AnswerRelevance {
            idk_counts_as: IdkCountsAs::Irrelevant,
        })
    },
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

/// The metric from its parameters' values.
fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(AnswerRelevance {
        idk_counts_as: values.parse("idk_counts_as")?,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct AnswerRelevance {
    pub idk_counts_as: IdkCountsAs,
}

impl MetricUnit for AnswerRelevance {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, _: &Sample) -> Vec<StepKey> {
        vec![steps::response_statements(), steps::relevance_verdicts()]
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        single(
            ID,
            score(
                inputs.texts(&steps::response_statements())?,
                inputs.verdicts(&steps::relevance_verdicts())?,
                self.idk_counts_as,
            ),
        )
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![("idk_counts_as".into(), self.idk_counts_as.to_string())]
    }
}

pub fn score(statements: &[String], verdicts: &[Verdict], idk: IdkCountsAs) -> Outcome {
    if statements.is_empty() {
        return Outcome::Skipped(SkipReason::NoStatements);
    }
    if verdicts.len() != statements.len() {
        return misaligned("statements", statements.len(), verdicts.len());
    }
    let relevant = |l: Label| l == Label::Yes || (l == Label::Idk && idk == IdkCountsAs::Relevant);
    let n = statements.len();
    let yes = verdicts.iter().filter(|v| relevant(v.verdict)).count();
    scored(
        yes as f64 / n as f64,
        with_quotes(
            format!("{yes} of {n} statements are relevant to the question"),
            "not relevant",
            quote(statements, verdicts, |l| !relevant(l)),
        ),
        json!({"idk_counts_as": idk.name(), "statements": itemized("statement", statements, verdicts)}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idk_rule_changes_the_count() {
        let statements: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let verdicts: Vec<Verdict> = [Label::Yes, Label::Idk, Label::No, Label::Yes]
            .map(|l| Verdict {
                verdict: l,
                reason: String::new(),
                probabilities: None,
            })
            .to_vec();
        let value = |idk| match score(&statements, &verdicts, idk) {
            Outcome::Scored { value, .. } => value,
            other => panic!("{other:?}"),
        };
        assert_eq!(value(IdkCountsAs::Irrelevant), 0.5);
        assert_eq!(value(IdkCountsAs::Relevant), 0.75);
        assert_eq!(
            score(&[], &[], IdkCountsAs::Relevant),
            Outcome::Skipped(SkipReason::NoStatements)
        );
    }
}
