//! Questions the response answers, each with a noncommittal flag (prompt
//! `generated_questions`).

use super::{filled, unit};
use crate::judged::prompt::PromptId;
use crate::judged::render::{text, Filled};
use crate::judged::step::{GeneratedQuestion, InputError, Inputs, StepKey, StepOutput, StepUnit};
use crate::judged::validate::{array, boolean, field, string, Problem};
use serde_json::Value;

/// `count` questions the response answers, each with a noncommittal flag.
pub fn generated_questions(count: u32) -> StepKey {
    unit(GeneratedQuestions(count))
}

#[derive(Debug)]
struct GeneratedQuestions(u32);

impl StepUnit for GeneratedQuestions {
    fn key(&self) -> String {
        format!("generated_questions[{}]", self.0)
    }

    fn prompt(&self) -> PromptId {
        PromptId::GeneratedQuestions
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(filled(
            vec![
                ("response", text(inputs.response()?)),
                ("count", text(&self.0.to_string())),
            ],
            vec![("questions", self.0 as usize)],
        ))
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        let items = array(
            field(answer, "$", "questions")?,
            "$.questions",
            Some(self.0 as usize),
        )?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let at = format!("$.questions[{i}]");
                Ok(GeneratedQuestion {
                    question: string(field(item, &at, "question")?, &format!("{at}.question"))?,
                    noncommittal: boolean(
                        field(item, &at, "noncommittal")?,
                        &format!("{at}.noncommittal"),
                    )?,
                })
            })
            .collect::<Result<_, _>>()
            .map(StepOutput::Questions)
    }
}
