//! Verdicts on each retrieved context, in order: useful for an answer,
//! relevant to the question, contradicted by the response.

use super::{filled, question, unit, ItemVerdicts};
use crate::judged::prompt::PromptId;
use crate::judged::render::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, UsefulFor};

/// Per retrieved context, in order: useful for arriving at the target.
pub fn context_usefulness(target: UsefulFor) -> StepKey {
    unit(ContextUsefulness(target))
}

/// Per retrieved context: relevant to the question.
pub fn context_relevance() -> StepKey {
    unit(ContextRelevance)
}

/// Per retrieved context: does the response contradict it.
pub fn contradictions() -> StepKey {
    unit(Contradictions)
}

#[derive(Debug)]
struct ContextUsefulness(UsefulFor);

impl ItemVerdicts for ContextUsefulness {
    fn key(&self) -> String {
        match self.0 {
            UsefulFor::Reference(i) => format!("context_usefulness[reference {i}]"),
            UsefulFor::Response => "context_usefulness[response]".into(),
        }
    }

    fn prompt(&self) -> PromptId {
        PromptId::ContextUsefulness
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let contexts = inputs.contexts()?;
        let answer = match self.0 {
            UsefulFor::Reference(i) => inputs.reference(i)?,
            UsefulFor::Response => inputs.response()?,
        };
        Ok(filled(
            vec![
                ("question", text(inputs.user_input()?)),
                ("answer", text(answer)),
                ("contexts", list(contexts)),
            ],
            vec![("verdicts", contexts.len())],
        ))
    }
}

#[derive(Debug)]
struct ContextRelevance;

impl ItemVerdicts for ContextRelevance {
    fn key(&self) -> String {
        "context_relevance".into()
    }

    fn prompt(&self) -> PromptId {
        PromptId::ContextRelevance
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let contexts = inputs.contexts()?;
        Ok(filled(
            vec![
                ("question", text(inputs.user_input()?)),
                ("contexts", list(contexts)),
            ],
            vec![("verdicts", contexts.len())],
        ))
    }
}

#[derive(Debug)]
struct Contradictions;

impl ItemVerdicts for Contradictions {
    fn key(&self) -> String {
        "contradictions".into()
    }

    fn prompt(&self) -> PromptId {
        PromptId::Contradictions
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let contexts = inputs.contexts()?;
        Ok(filled(
            // The question only reaches the per-item form's prompt.
            vec![
                ("question", question(inputs)),
                ("response", text(inputs.response()?)),
                ("contexts", list(contexts)),
            ],
            vec![("verdicts", contexts.len())],
        ))
    }
}
