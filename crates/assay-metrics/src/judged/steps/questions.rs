//! Questions the response answers, each with a noncommittal flag (prompt
//! `generated_questions`).

use super::{filled, unit};
use crate::judged::answer::{array, boolean, field, string};
use crate::judged::prompt::PromptDecl;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotKind::Text;
use crate::judged::step::Problem;
use crate::judged::step::{text, Filled};
use crate::judged::step::{GeneratedQuestion, InputError, Inputs, StepKey, StepOutput, StepUnit};
use serde_json::Value;

/// Questions the response answers, each flagged noncommittal or not.
pub const GENERATED_QUESTIONS: PromptId = PromptId(&PromptDecl {
    name: "generated_questions",
    text: include_str!("../../../prompts/generated_questions.json"),
    slots: &[("response", Text), ("count", Text)],
    counts: &["questions"],
    per_item: &[],
});

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
        GENERATED_QUESTIONS
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
