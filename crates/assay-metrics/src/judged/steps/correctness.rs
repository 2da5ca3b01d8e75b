//! The response's statements against a reference's: true positives,
//! false positives, false negatives (prompt `correctness_classification`).

use super::{filled, question, reference_statements, response_statements, unit};
use crate::judged::prompt::PromptId;
use crate::judged::render::{list, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, StepOutput, StepUnit};
use crate::judged::validate::{verdicts, Problem};
use serde_json::Value;

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
        PromptId::CorrectnessClassification
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
