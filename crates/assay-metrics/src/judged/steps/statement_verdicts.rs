//! Verdicts on each statement of a text: the response's against the
//! contexts (faithfulness) or the question (relevance), a reference's
//! against the contexts (attribution).

use super::{filled, item_verdicts, no_items, reference_statements, response_statements, unit};
use crate::judged::prompt::PromptId;
use crate::judged::render::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, Label, StepKey, StepOutput, StepUnit};
use crate::judged::validate::Problem;
use serde_json::Value;

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

impl StepUnit for StatementVerdicts {
    fn key(&self) -> String {
        "statement_verdicts".into()
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![response_statements()]
    }

    fn prompt(&self) -> PromptId {
        PromptId::FaithfulnessVerdicts
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let statements = inputs.texts(&response_statements())?;
        Ok(filled(
            vec![
                ("contexts", list(inputs.contexts()?)),
                ("statements", list(statements)),
            ],
            vec![("verdicts", statements.len())],
        ))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        no_items(filled)
    }

    fn labels(&self) -> &'static [Label] {
        YES_NO_IDK
    }

    fn check(
        &self,
        _: &Inputs<'_>,
        filled: &Filled,
        answer: &Value,
    ) -> Result<StepOutput, Problem> {
        item_verdicts(self, filled, answer)
    }
}

#[derive(Debug)]
struct RelevanceVerdicts;

impl StepUnit for RelevanceVerdicts {
    fn key(&self) -> String {
        "relevance_verdicts".into()
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![response_statements()]
    }

    fn prompt(&self) -> PromptId {
        PromptId::RelevanceVerdicts
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

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        no_items(filled)
    }

    fn labels(&self) -> &'static [Label] {
        YES_NO_IDK
    }

    fn check(
        &self,
        _: &Inputs<'_>,
        filled: &Filled,
        answer: &Value,
    ) -> Result<StepOutput, Problem> {
        item_verdicts(self, filled, answer)
    }
}

#[derive(Debug)]
struct ReferenceAttribution(usize);

impl StepUnit for ReferenceAttribution {
    fn key(&self) -> String {
        format!("reference_attribution[{}]", self.0)
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![reference_statements(self.0)]
    }

    fn prompt(&self) -> PromptId {
        PromptId::ReferenceAttribution
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let statements = inputs.texts(&reference_statements(self.0))?;
        Ok(filled(
            vec![
                ("contexts", list(inputs.contexts()?)),
                ("statements", list(statements)),
            ],
            vec![("verdicts", statements.len())],
        ))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        no_items(filled)
    }

    fn check(
        &self,
        _: &Inputs<'_>,
        filled: &Filled,
        answer: &Value,
    ) -> Result<StepOutput, Problem> {
        item_verdicts(self, filled, answer)
    }
}
