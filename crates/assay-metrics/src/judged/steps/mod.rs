//! The built-in judge steps, each one unit ([`StepUnit`]): its key, the
//! steps it waits for, its prompt, the slots it fills, its answer when
//! there is nothing to ask, its labels and the check of its answer. A
//! module holds one step or a family of closely related ones.
//!
//! Metrics name steps through the constructors here, which return the
//! [`StepKey`] of the work: equal work gives equal keys, so two metrics
//! asking it of a sample share one call.

use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotValue;
use crate::judged::render::{text, Filled};
use crate::judged::step::{InputError, Inputs, Label, StepKey, StepOutput, StepUnit, UnitStep};
use crate::judged::validate::{verdicts, Problem};
use serde_json::Value;
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
pub use opinions::{bias_verdicts, opinion_share, opinions, toxicity_verdicts};
pub use questions::generated_questions;
pub use recall::reference_recall;
pub use sentences::sentence_extraction;
pub use statement_verdicts::{reference_attribution, relevance_verdicts, statement_verdicts};
pub use statements::{reference_statements, response_statements};
pub use summary::{
    closed_questions, coherence_rating, keyphrases, summary_answers, COHERENCE_SCALE,
};

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
trait ItemVerdicts: std::fmt::Debug + Send + Sync {
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
