//! The response's statements against a reference's: true positives,
//! false positives, false negatives (prompt `correctness_classification`).

use super::{filled, question, reference_statements, response_statements, unit};
use crate::judged::answer::verdicts;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{ItemForm, PromptDecl};
use crate::judged::step::Problem;
use crate::judged::step::{list, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, StepOutput, StepUnit};
use serde_json::Value;

/// One response statement against the reference's statements (the per-item form of [`CORRECTNESS_CLASSIFICATION`]'s `response` list).
pub const STATEMENT_IN_REFERENCE: PromptId = PromptId(&PromptDecl {
    name: "statement_in_reference",
    text: include_str!("../../../prompts/statement_in_reference.json"),
    slots: &[
        ("question", Text),
        ("reference_statements", List),
        ("statement", Text),
    ],
    counts: &[],
    per_item: &[],
});

/// One reference statement against the response's statements (the per-item form of its `reference` list).
pub const STATEMENT_IN_RESPONSE: PromptId = PromptId(&PromptDecl {
    name: "statement_in_response",
    text: include_str!("../../../prompts/statement_in_response.json"),
    slots: &[
        ("question", Text),
        ("response_statements", List),
        ("statement", Text),
    ],
    counts: &[],
    per_item: &[],
});

/// Each response and reference statement, found in the other or not.
pub const CORRECTNESS_CLASSIFICATION: PromptId = PromptId(&PromptDecl {
    name: "correctness_classification",
    text: include_str!("../../../prompts/correctness_classification.json"),
    slots: &[
        ("question", Text),
        ("response_statements", List),
        ("reference_statements", List),
    ],
    counts: &["response", "reference"],
    per_item: &[
        ItemForm {
            prompt: STATEMENT_IN_REFERENCE,
            list: "response_statements",
            item: "statement",
            answers: "response",
        },
        ItemForm {
            prompt: STATEMENT_IN_RESPONSE,
            list: "reference_statements",
            item: "statement",
            answers: "reference",
        },
    ],
});

/// Response statements vs statements of reference `i`: TP/FP/FN.
pub fn correctness_classification(i: usize) -> StepKey {
    unit(CorrectnessClassification(i))
}

#[derive(Debug)]
struct CorrectnessClassification(usize);

impl StepUnit for CorrectnessClassification {
    fn key(&self) -> String {
        format!("correctness_classification[{}]", self.0)
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![response_statements(), reference_statements(self.0)]
    }

    fn prompt(&self) -> PromptId {
        CORRECTNESS_CLASSIFICATION
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let response = inputs.texts(&response_statements())?;
        let reference = inputs.texts(&reference_statements(self.0))?;
        Ok(filled(
            vec![
                ("question", question(inputs)),
                ("response_statements", list(response)),
                ("reference_statements", list(reference)),
            ],
            vec![("response", response.len()), ("reference", reference.len())],
        ))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        filled
            .counts
            .iter()
            .all(|(_, n)| *n == 0)
            .then(|| StepOutput::Classification {
                response: Vec::new(),
                reference: Vec::new(),
            })
    }

    fn check(
        &self,
        _: &Inputs<'_>,
        filled: &Filled,
        answer: &Value,
    ) -> Result<StepOutput, Problem> {
        let count = |path: &str| filled.count(path);
        Ok(StepOutput::Classification {
            response: verdicts(answer, "response", count("response"), self.labels())?,
            reference: verdicts(answer, "reference", count("reference"), self.labels())?,
        })
    }
}
