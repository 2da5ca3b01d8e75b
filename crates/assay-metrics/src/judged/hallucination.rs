//! `hallucination` (valor-lite, DeepEval; seed 004, "Hallucination"): the
//! share of retrieved contexts that the response contradicts. Lower is
//! better.
//!
//! Steps: [`steps::contradictions`] (`prompts/contradictions.json`), per
//! context yes (the response contradicts it) or no; under the per-item
//! protocol each context is asked alone (`prompts/context_contradiction.json`);
//! under the likelihood protocol (the local judges' default) each context
//! is read alone, by its mutual information with the response
//! ([`crate::judged::likelihood`]).
//! Score = contradicted / contexts; details carry `soft_score`, the mean
//! probability of yes, when the judge gave probabilities.
//!
//! Empty inputs: no retrieved contexts -> skipped, `no_contexts`. An empty
//! response contradicts nothing (0).

use crate::judged::common::context_share;
use crate::judged::metric::{JudgedDef, JudgedId, JudgedMetric};
use crate::judged::per_turn;
use crate::judged::prompt::PromptId;
use crate::judged::share::{Items, Share};
use crate::judged::step::{Label, Verdict};
use crate::judged::steps;
use crate::spec::Direction;
use assay_core::{Field, Outcome};

pub const PROMPTS: &[PromptId] = &[steps::CONTRADICTIONS];

pub const EMPTY_INPUTS: &str =
    "skipped (no_contexts) when there are no retrieved contexts; an empty response contradicts nothing (0)";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "hallucination",
    summary: "share of the contexts the response contradicts",
    direction: Direction::LowerIsBetter,
    required: &[Field::Response, Field::RetrievedContexts],
    needs_contexts: true,
    prompts: PROMPTS,
    params: &[per_turn::PARAM],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || {
        JudgedMetric::new(Share {
            def: &DEF,
            items: Items::Contexts,
            verdicts: steps::contradictions,
            score,
        })
    },
    configure: None,
    named_params: None,
    per_output: None,
};

pub fn score(contexts: &[String], verdicts: &[Verdict]) -> Outcome {
    context_share(
        contexts,
        verdicts,
        |yes, n| format!("the response contradicts {yes} of {n} contexts"),
        Label::Yes,
        "contradicted",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_of_contradicted_contexts() {
        let contexts: Vec<String> = ["Paris is in France.", "The Seine flows through Paris."]
            .map(String::from)
            .to_vec();
        let verdicts = vec![
            Verdict {
                verdict: Label::Yes,
                reason: "the response puts Paris in Spain".into(),
                probabilities: None,
            },
            Verdict {
                verdict: Label::No,
                reason: "not addressed".into(),
                probabilities: None,
            },
        ];
        let Outcome::Scored { value, reason, .. } = score(&contexts, &verdicts) else {
            panic!()
        };
        assert_eq!(value, 0.5);
        assert!(reason
            .unwrap()
            .contains("[1] \"Paris is in France.\" (the response puts Paris in Spain)"));
    }
}
