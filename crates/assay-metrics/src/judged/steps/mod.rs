//! The built-in judge steps, each one unit ([`StepUnit`]): its key, the
//! steps it waits for, its prompt, the slots it fills, its answer when
//! there is nothing to ask, its labels and the check of its answer. A
//! module holds one step or a family of closely related ones.
//!
//! Metrics name steps through the constructors here, which return the
//! [`StepKey`] of the work: equal work gives equal keys, so two metrics
//! asking it of a sample share one call.

use crate::judged::prompt::SlotValue;
use crate::judged::render::{text, Filled};
use crate::judged::step::{Inputs, StepKey, StepOutput, StepUnit, UnitStep};
use crate::judged::validate::{verdicts, Problem};
use std::sync::Arc;

mod aspect;
mod contexts;
mod correctness;
mod opinions;
mod questions;
mod recall;
mod sentences;
mod statement_verdicts;
mod statements;
mod summary;

pub use aspect::aspect_verdict;
pub use contexts::{context_relevance, context_usefulness, contradictions};
pub use correctness::correctness_classification;
pub use opinions::{bias_verdicts, opinions, toxicity_verdicts};
pub use questions::generated_questions;
pub use recall::reference_recall;
pub use sentences::sentence_extraction;
pub use statement_verdicts::{reference_attribution, relevance_verdicts, statement_verdicts};
pub use statements::{reference_statements, response_statements};
pub use summary::{closed_questions, coherence_rating, keyphrases, summary_answers};

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

/// For a step judging each item of a list: no items, no verdicts.
fn no_items(filled: &Filled) -> Option<StepOutput> {
    filled
        .counts
        .first()
        .is_some_and(|(_, n)| *n == 0)
        .then(|| StepOutput::Verdicts(Vec::new()))
}

/// The answer of a step judging each item of a list: one verdict per item
/// under `verdicts`, in order.
fn item_verdicts(
    step: &dyn StepUnit,
    filled: &Filled,
    answer: &serde_json::Value,
) -> Result<StepOutput, Problem> {
    let count = filled
        .counts
        .iter()
        .find(|(p, _)| *p == "verdicts")
        .map(|(_, n)| *n);
    verdicts(answer, "verdicts", count, step.labels()).map(StepOutput::Verdicts)
}
