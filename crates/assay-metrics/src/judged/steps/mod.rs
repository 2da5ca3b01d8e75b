//! The built-in judge steps, each one unit ([`StepUnit`]): its key, the
//! steps it waits for, its prompt, the slots it fills, its answer when
//! there is nothing to ask, its labels and the check of its answer. A
//! module holds one step or a family of closely related ones.
//!
//! Metrics name steps through the constructors here, which return the
//! [`StepKey`] of the work: equal work gives equal keys, so two metrics
//! asking it of a sample share one call.

use crate::judged::answer::verdicts;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotValue;
use crate::judged::step::Problem;
use crate::judged::step::{text, Filled};
use crate::judged::step::{InputError, Inputs, Label, StepKey, StepOutput, StepUnit, UnitStep};
use serde_json::Value;
use std::sync::Arc;

mod agent;
mod aspect;
mod contexts;
mod correctness;
mod embed;
mod opinions;
mod questions;
mod recall;
mod sentences;
mod statement_verdicts;
mod statements;
mod summary;

pub use agent::{goal_outcome, AGENT_PARTS, GOAL_OUTCOME};
pub use aspect::{aspect_verdict, ASPECT_VERDICT};
pub use contexts::{
    context_relevance, context_usefulness, contradictions, CONTEXT_CONTRADICTION,
    CONTEXT_RELEVANCE, CONTEXT_USEFUL, CONTEXT_USEFULNESS, CONTRADICTIONS,
};
pub use correctness::{
    correctness_classification, CORRECTNESS_CLASSIFICATION, STATEMENT_IN_REFERENCE,
    STATEMENT_IN_RESPONSE,
};
pub use embed::{embed_deps, embed_request};
pub use opinions::{
    bias_verdicts, opinion_share, opinions, toxicity_verdicts, BIAS_VERDICTS, OPINIONS,
    TOXICITY_VERDICTS,
};
pub use questions::{generated_questions, GENERATED_QUESTIONS};
pub use recall::{reference_recall, REFERENCE_RECALL};
pub use sentences::{sentence_extraction, SENTENCE_EXTRACTION};
pub use statement_verdicts::{
    reference_attribution, relevance_verdicts, statement_verdicts, FAITHFULNESS_VERDICTS,
    REFERENCE_ATTRIBUTION, REFERENCE_SUPPORT, RELEVANCE_VERDICTS, STATEMENT_SUPPORT,
};
pub use statements::{reference_statements, response_statements, STATEMENTS};
pub use summary::{
    closed_questions, coherence_rating, keyphrases, summary_answers, CLOSED_QUESTIONS,
    COHERENCE_RATING, COHERENCE_SCALE, KEYPHRASES, SUMMARY_ANSWER, SUMMARY_ANSWERS,
};

/// The prompts of the built-in steps, per-item forms included, in the
/// order run manifests list them.
pub const PROMPTS: [PromptId; 27] = [
    STATEMENTS,
    OPINIONS,
    FAITHFULNESS_VERDICTS,
    RELEVANCE_VERDICTS,
    CONTEXT_USEFULNESS,
    REFERENCE_ATTRIBUTION,
    REFERENCE_RECALL,
    CONTEXT_RELEVANCE,
    CONTRADICTIONS,
    GENERATED_QUESTIONS,
    CORRECTNESS_CLASSIFICATION,
    KEYPHRASES,
    CLOSED_QUESTIONS,
    SUMMARY_ANSWERS,
    COHERENCE_RATING,
    BIAS_VERDICTS,
    TOXICITY_VERDICTS,
    ASPECT_VERDICT,
    SENTENCE_EXTRACTION,
    STATEMENT_SUPPORT,
    CONTEXT_CONTRADICTION,
    CONTEXT_USEFUL,
    REFERENCE_SUPPORT,
    SUMMARY_ANSWER,
    STATEMENT_IN_REFERENCE,
    STATEMENT_IN_RESPONSE,
    GOAL_OUTCOME,
];

/// The key of a step written as a unit.
fn unit(step: impl StepUnit + 'static) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(step)))
}

/// Slots drawing one answer, with the answer lists whose length they fix.
fn filled(slots: Vec<(&'static str, SlotValue)>, counts: Vec<(&'static str, usize)>) -> Filled {
    Filled {
        slots: slots.into_iter().collect(),
        counts,
        votes: 1,
    }
}

/// The question, or "not given" when the sample has none.
fn question(inputs: &Inputs<'_>) -> SlotValue {
    inputs
        .sample
        .user_input
        .as_deref()
        .map_or(SlotValue::Absent, text)
}

/// Whether slot `name` holds nothing to ask about: a blank text or an
/// empty list.
fn blank(filled: &Filled, name: &str) -> bool {
    match filled.slots.get(name) {
        Some(SlotValue::Text(t)) => t.trim().is_empty(),
        Some(SlotValue::List(l)) => l.is_empty(),
        _ => false,
    }
}

/// A step that judges each item of a list (statements, contexts,
/// opinions, questions): one verdict per item under `verdicts`, in order,
/// and no call when there are no items. Its [`StepUnit`] follows from this.
pub(crate) trait ItemVerdicts: std::fmt::Debug + Send + Sync {
    fn key(&self) -> String;
    fn deps(&self) -> Vec<StepKey> {
        Vec::new()
    }
    fn prompt(&self) -> PromptId;
    /// The slots, with the item count under `verdicts` first.
    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError>;
    fn labels(&self) -> &'static [Label] {
        &[Label::Yes, Label::No]
    }
}

impl<T: ItemVerdicts> StepUnit for T {
    fn key(&self) -> String {
        ItemVerdicts::key(self)
    }

    fn deps(&self) -> Vec<StepKey> {
        ItemVerdicts::deps(self)
    }

    fn prompt(&self) -> PromptId {
        ItemVerdicts::prompt(self)
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        ItemVerdicts::fill(self, inputs)
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        filled
            .counts
            .first()
            .is_some_and(|(_, n)| *n == 0)
            .then(|| StepOutput::Verdicts(Vec::new()))
    }

    fn labels(&self) -> &'static [Label] {
        ItemVerdicts::labels(self)
    }

    fn check(
        &self,
        _: &Inputs<'_>,
        filled: &Filled,
        answer: &Value,
    ) -> Result<StepOutput, Problem> {
        let count = filled.count("verdicts");
        verdicts(answer, "verdicts", count, ItemVerdicts::labels(self)).map(StepOutput::Verdicts)
    }
}
