//! `context_relevance`, valor-lite's "Context Relevance" (seed 004, its
//! instruction adapted from DeepEval's): the share of retrieved contexts
//! relevant to the question, one verdict per context. Not ragas'
//! [`crate::judged::context_relevancy`], which measures how much of the
//! contexts' sentences is needed to answer; each keeps its library's name.
//!
//! Steps: [`steps::context_relevance`] (`prompts/context_relevance.json`),
//! yes/no per context. Score = relevant / contexts.
//!
//! Empty inputs: no retrieved contexts -> skipped, `no_contexts`.

use crate::judged::common::context_share;
use crate::judged::metric::{JudgedDef, JudgedId, JudgedMetric};
use crate::judged::per_turn;
use crate::judged::prompt::PromptId;
use crate::judged::share::{Items, Share};
use crate::judged::step::{Label, Verdict};
use crate::judged::steps;
use crate::spec::Direction;
use assay_core::{Field, Outcome};

pub const PROMPTS: &[PromptId] = &[steps::CONTEXT_RELEVANCE];

pub const EMPTY_INPUTS: &str = "skipped (no_contexts) when there are no retrieved contexts";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "context_relevance",
    summary: "share of the retrieved contexts relevant to the question (valor)",
    direction: Direction::HigherIsBetter,
    required: &[Field::UserInput, Field::RetrievedContexts],
    needs_contexts: true,
    prompts: PROMPTS,
    params: &[per_turn::PARAM],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || {
        JudgedMetric::new(Share {
            def: &DEF,
            items: Items::Contexts,
            verdicts: steps::context_relevance,
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
        |yes, n| format!("{yes} of {n} contexts are relevant to the question"),
        Label::No,
        "not relevant",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_of_relevant_contexts() {
        let contexts: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let verdicts: Vec<Verdict> = [Label::Yes, Label::No, Label::No]
            .map(|l| Verdict {
                verdict: l,
                reason: "x".into(),
                probabilities: None,
            })
            .to_vec();
        let Outcome::Scored { value, reason, .. } = score(&contexts, &verdicts) else {
            panic!()
        };
        assert_eq!(value, 1.0 / 3.0);
        assert!(reason.unwrap().contains("[2] \"b\" (x); [3] \"c\" (x)"));
        assert_eq!(
            score(&[], &[]),
            Outcome::Skipped(assay_core::SkipReason::NoContexts)
        );
    }
}
