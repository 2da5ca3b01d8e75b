//! The statements of a text: the response's or a reference's (prompt
//! `statements`). Under the per-item protocol they are the text's
//! sentences, without a call: a small local judge's own statements were
//! the larger error (questions restated, fragments, claims the text does
//! not make), and each sentence is then judged with the question beside it.

use super::{blank, filled, question, unit};
use crate::judged::answer::{field, texts};
use crate::judged::prompt::PromptDecl;
use crate::judged::prompt::SlotKind::Text;
use crate::judged::prompt::{PromptId, SlotValue};
use crate::judged::step::Problem;
use crate::judged::step::{text, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, StepOutput, StepUnit};
use assay_text::sentences::split_sentences;
use serde_json::Value;

/// The statements of a text, one claim each.
pub const STATEMENTS: PromptId = PromptId(&PromptDecl {
    name: "statements",
    text: include_str!("../../../prompts/statements.json"),
    slots: &[("question", Text), ("text", Text)],
    counts: &[],
    per_item: &[],
});

/// Statements of the response.
pub fn response_statements() -> StepKey {
    unit(Statements(Of::Response))
}

/// Statements of reference `i` (0-based in the reference list).
pub fn reference_statements(i: usize) -> StepKey {
    unit(Statements(Of::Reference(i)))
}

/// The text whose statements are extracted.
#[derive(Debug)]
enum Of {
    Response,
    Reference(usize),
}

#[derive(Debug)]
struct Statements(Of);

impl StepUnit for Statements {
    fn key(&self) -> String {
        match self.0 {
            Of::Response => "response_statements".into(),
            Of::Reference(i) => format!("reference_statements[{i}]"),
        }
    }

    fn prompt(&self) -> PromptId {
        STATEMENTS
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let of = match self.0 {
            Of::Response => inputs.response()?,
            Of::Reference(i) => inputs.reference(i)?,
        };
        Ok(filled(
            vec![("question", question(inputs)), ("text", text(of))],
            Vec::new(),
        ))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        blank(filled, "text").then(|| StepOutput::Texts(Vec::new()))
    }

    fn without_call(&self, filled: &Filled) -> Option<StepOutput> {
        let Some(SlotValue::Text(of)) = filled.slots.get("text") else {
            return None;
        };
        Some(StepOutput::Texts(
            split_sentences(of).into_iter().map(str::to_owned).collect(),
        ))
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        texts(field(answer, "$", "statements")?, "$.statements").map(StepOutput::Texts)
    }
}
