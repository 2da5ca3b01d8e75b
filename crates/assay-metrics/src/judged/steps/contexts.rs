//! Verdicts on each retrieved context, in order: useful for an answer,
//! relevant to the question, contradicted by the response.

use super::{filled, question, unit, ItemVerdicts};
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{ItemForm, PromptDecl};
use crate::judged::step::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, UsefulFor};

/// One context useful for the answer (the per-item form of [`CONTEXT_USEFULNESS`]).
pub const CONTEXT_USEFUL: PromptId = PromptId(&PromptDecl {
    name: "context_useful",
    text: include_str!("../../../prompts/context_useful.json"),
    slots: &[("question", Text), ("answer", Text), ("context", Text)],
    counts: &[],
    per_item: &[],
});

/// Whether each context was useful in arriving at the answer.
pub const CONTEXT_USEFULNESS: PromptId = PromptId(&PromptDecl {
    name: "context_usefulness",
    text: include_str!("../../../prompts/context_usefulness.json"),
    slots: &[("question", Text), ("answer", Text), ("contexts", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: CONTEXT_USEFUL,
        list: "contexts",
        item: "context",
        answers: "verdicts",
    }],
});

/// Whether each context is relevant to the question.
pub const CONTEXT_RELEVANCE: PromptId = PromptId(&PromptDecl {
    name: "context_relevance",
    text: include_str!("../../../prompts/context_relevance.json"),
    slots: &[("question", Text), ("contexts", List)],
    counts: &["verdicts"],
    per_item: &[],
});

/// The response against one context (the per-item form of [`CONTRADICTIONS`]).
pub const CONTEXT_CONTRADICTION: PromptId = PromptId(&PromptDecl {
    name: "context_contradiction",
    text: include_str!("../../../prompts/context_contradiction.json"),
    slots: &[("question", Text), ("response", Text), ("context", Text)],
    counts: &[],
    per_item: &[],
});

/// Whether each context contradicts the response.
pub const CONTRADICTIONS: PromptId = PromptId(&PromptDecl {
    name: "contradictions",
    text: include_str!("../../../prompts/contradictions.json"),
    slots: &[("response", Text), ("contexts", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: CONTEXT_CONTRADICTION,
        list: "contexts",
        item: "context",
        answers: "verdicts",
    }],
});

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
        CONTEXT_USEFULNESS
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
        CONTEXT_RELEVANCE
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
        CONTRADICTIONS
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
