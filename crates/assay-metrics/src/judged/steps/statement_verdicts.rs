//! Verdicts on each statement of a text: the response's against the
//! contexts (faithfulness) or the question (relevance), a reference's
//! against the contexts (attribution).

use super::{filled, question, reference_statements, response_statements, unit, ItemVerdicts};
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{ItemForm, PromptDecl};
use crate::judged::step::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, Label, StepKey};

/// One statement against the contexts (the per-item form of [`FAITHFULNESS_VERDICTS`]).
pub const STATEMENT_SUPPORT: PromptId = PromptId(&PromptDecl {
    name: "statement_support",
    text: include_str!("../../../prompts/statement_support.json"),
    slots: &[("contexts", List), ("question", Text), ("statement", Text)],
    counts: &[],
    per_item: &[],
});

/// Whether each statement is supported by the contexts.
pub const FAITHFULNESS_VERDICTS: PromptId = PromptId(&PromptDecl {
    name: "faithfulness_verdicts",
    text: include_str!("../../../prompts/faithfulness_verdicts.json"),
    slots: &[("contexts", List), ("statements", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: STATEMENT_SUPPORT,
        list: "statements",
        item: "statement",
        answers: "verdicts",
    }],
});

/// Whether each statement is relevant to the question.
pub const RELEVANCE_VERDICTS: PromptId = PromptId(&PromptDecl {
    name: "relevance_verdicts",
    text: include_str!("../../../prompts/relevance_verdicts.json"),
    slots: &[("question", Text), ("statements", List)],
    counts: &["verdicts"],
    per_item: &[],
});

/// One reference statement against the contexts (the per-item form of [`REFERENCE_ATTRIBUTION`]).
pub const REFERENCE_SUPPORT: PromptId = PromptId(&PromptDecl {
    name: "reference_support",
    text: include_str!("../../../prompts/reference_support.json"),
    slots: &[("contexts", List), ("question", Text), ("statement", Text)],
    counts: &[],
    per_item: &[],
});

/// Whether each reference statement can be attributed to the contexts.
pub const REFERENCE_ATTRIBUTION: PromptId = PromptId(&PromptDecl {
    name: "reference_attribution",
    text: include_str!("../../../prompts/reference_attribution.json"),
    slots: &[("contexts", List), ("statements", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: REFERENCE_SUPPORT,
        list: "statements",
        item: "statement",
        answers: "verdicts",
    }],
});

/// Per response statement: inferable from the contexts (yes), contradicted
/// (no) or neither (idk). Serves both faithfulness modes.
pub fn statement_verdicts() -> StepKey {
    unit(StatementVerdicts)
}

/// Per response statement: relevant to the question (yes/no/idk).
pub fn relevance_verdicts() -> StepKey {
    unit(RelevanceVerdicts)
}

/// Per statement of reference `i`: attributable to the contexts.
pub fn reference_attribution(i: usize) -> StepKey {
    unit(ReferenceAttribution(i))
}

const YES_NO_IDK: &[Label] = &[Label::Yes, Label::No, Label::Idk];

#[derive(Debug)]
struct StatementVerdicts;

impl ItemVerdicts for StatementVerdicts {
    fn key(&self) -> String {
        "statement_verdicts".into()
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![response_statements()]
    }

    fn prompt(&self) -> PromptId {
        FAITHFULNESS_VERDICTS
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let statements = inputs.texts(&response_statements())?;
        Ok(filled(
            // The question only reaches the per-item form's prompt.
            vec![
                ("question", question(inputs)),
                ("contexts", list(inputs.contexts()?)),
                ("statements", list(statements)),
            ],
            vec![("verdicts", statements.len())],
        ))
    }

    fn labels(&self) -> &'static [Label] {
        YES_NO_IDK
    }
}

#[derive(Debug)]
struct RelevanceVerdicts;

impl ItemVerdicts for RelevanceVerdicts {
    fn key(&self) -> String {
        "relevance_verdicts".into()
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![response_statements()]
    }

    fn prompt(&self) -> PromptId {
        RELEVANCE_VERDICTS
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let statements = inputs.texts(&response_statements())?;
        Ok(filled(
            vec![
                ("question", text(inputs.user_input()?)),
                ("statements", list(statements)),
            ],
            vec![("verdicts", statements.len())],
        ))
    }

    fn labels(&self) -> &'static [Label] {
        YES_NO_IDK
    }
}

#[derive(Debug)]
struct ReferenceAttribution(usize);

impl ItemVerdicts for ReferenceAttribution {
    fn key(&self) -> String {
        format!("reference_attribution[{}]", self.0)
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![reference_statements(self.0)]
    }

    fn prompt(&self) -> PromptId {
        REFERENCE_ATTRIBUTION
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let statements = inputs.texts(&reference_statements(self.0))?;
        Ok(filled(
            // The question only reaches the per-item form's prompt.
            vec![
                ("question", question(inputs)),
                ("contexts", list(inputs.contexts()?)),
                ("statements", list(statements)),
            ],
            vec![("verdicts", statements.len())],
        ))
    }
}
