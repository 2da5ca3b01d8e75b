//! The shape of the metrics whose score is the share of a list's items
//! that one verdict step judges: `bias` and `toxicity` (the response's
//! opinions), `context_relevance` and `hallucination` (the retrieved
//! contexts). Each of those modules is its definition, its pure score and
//! its tests; this is their one [`MetricUnit`].

use crate::judged::metric::{single, JudgedDef, JudgedId, MetricUnit};
use crate::judged::step::{InputError, Inputs, StepKey, Verdict};
use crate::judged::steps;
use assay_core::{Outcome, Sample};
use std::fmt;

/// The items a share is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Items {
    /// The response's opinions ([`steps::opinions`]), a step of their own.
    Opinions,
    /// The sample's retrieved contexts.
    Contexts,
}

/// A metric scored as the share of its items that a verdict step judges.
pub struct Share {
    pub def: &'static JudgedDef,
    pub items: Items,
    /// The step of one verdict per item.
    pub verdicts: fn() -> StepKey,
    /// The pure score from the items and their verdicts.
    pub score: fn(&[String], &[Verdict]) -> Outcome,
}

impl fmt::Debug for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Share")
            .field("metric", &self.def.name)
            .field("items", &self.items)
            .finish()
    }
}

impl MetricUnit for Share {
    fn def(&self) -> &'static JudgedDef {
        self.def
    }

    fn steps(&self, _: &Sample) -> Vec<StepKey> {
        match self.items {
            Items::Opinions => vec![steps::opinions(), (self.verdicts)()],
            Items::Contexts => vec![(self.verdicts)()],
        }
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        let items = match self.items {
            Items::Opinions => inputs.texts(&steps::opinions())?,
            Items::Contexts => inputs.contexts()?,
        };
        single(
            JudgedId::of(self.def),
            (self.score)(items, inputs.verdicts(&(self.verdicts)())?),
        )
    }
}
