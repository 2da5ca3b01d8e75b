//! A reference's statements and their attribution to the contexts in one
//! call (prompt `reference_recall`).

use super::{blank, filled, reference_attribution, reference_statements, unit};
use crate::judged::answer::{array, field, string, verdict};
use crate::judged::prompt::PromptDecl;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::step::Problem;
use crate::judged::step::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, StepOutput, StepUnit};
use serde_json::Value;

/// Each reference sentence, attributed to the contexts or not (ragas' one-call form).
pub const REFERENCE_RECALL: PromptId = PromptId(&PromptDecl {
    name: "reference_recall",
    text: include_str!("../../../prompts/reference_recall.json"),
    slots: &[("contexts", List), ("reference", Text)],
    counts: &[],
    per_item: &[],
});

/// Statements of reference `i` and their attribution to the contexts in
/// ONE call: what `context_recall` asks for when no other metric of the
/// sample needs the reference's statements ([`crate::judged::plan()`]
/// then uses [`reference_statements`] + [`reference_attribution`]
/// instead, sharing the statements).
pub fn reference_recall(i: usize) -> StepKey {
    unit(ReferenceRecall(i))
}

#[derive(Debug)]
struct ReferenceRecall(usize);

impl StepUnit for ReferenceRecall {
    fn key(&self) -> String {
        format!("reference_recall[{}]", self.0)
    }

    fn prompt(&self) -> PromptId {
        REFERENCE_RECALL
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(filled(
            vec![
                ("contexts", list(inputs.contexts()?)),
                ("reference", text(inputs.reference(self.0)?)),
            ],
            Vec::new(),
        ))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        blank(filled, "reference").then(|| StepOutput::Attributed {
            statements: Vec::new(),
            verdicts: Vec::new(),
        })
    }

    fn split(&self) -> Option<(StepKey, StepKey)> {
        Some((reference_statements(self.0), reference_attribution(self.0)))
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        let items = array(field(answer, "$", "statements")?, "$.statements", None)?;
        let mut statements = Vec::with_capacity(items.len());
        let mut verdicts = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("$.statements[{i}]");
            let statement = string(field(item, &at, "statement")?, &format!("{at}.statement"))?;
            let v = verdict(item, &at, self.labels())?;
            // A blank statement claims nothing; drop it with its verdict.
            if !statement.trim().is_empty() {
                statements.push(statement.trim().to_string());
                verdicts.push(v);
            }
        }
        Ok(StepOutput::Attributed {
            statements,
            verdicts,
        })
    }
}
