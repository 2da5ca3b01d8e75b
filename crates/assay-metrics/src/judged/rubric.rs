//! `rubric`, the metric: a judged rating on a criterion the user writes
//! (DeepEval's G-Eval, promptfoo's `llm-rubric`, ragas' rubric scores),
//! over the sample's fields (`rubric.fields`, default `user_input,response`).
//!
//! This module is only its definition and default fields. What it runs
//! (parameters, named rubrics, evaluation steps written once per run, the
//! probability-weighted rating) is in [`crate::judged::rubrics`], which
//! `conversation_rubric` shares.

use crate::judged::metric::{JudgedDef, JudgedId, JudgedMetric, PerOutput};
use crate::judged::prompt::PromptSet;
use crate::judged::rubrics::{self, RATING_PROMPT, STEPS_PROMPT};
use crate::params::{ParamError, ParamSpec, Values};
use crate::spec::Direction;
use assay_core::Field;

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The fields a rubric reads unless `fields` says otherwise.
const DEFAULT_FIELDS: &str = "user_input,response";

const PARAMS: [ParamSpec; 4] = rubrics::params(DEFAULT_FIELDS);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "rubric",
    summary: "a 1..N rating on a criterion you write (G-Eval), scaled to [0, 1]",
    direction: Direction::HigherIsBetter,
    required: &[Field::UserInput, Field::Response],
    needs_contexts: false,
    prompts: &[STEPS_PROMPT, RATING_PROMPT],
    params: &PARAMS,
    empty_inputs:
        "skipped (missing_field) without a field it reads; empty texts are rated as they are",
    signature_version: 1,
    default: || rubrics::unconfigured(&DEF),
    configure: Some(configure),
    named_params: Some(""),
    per_output: Some(PerOutput {
        outputs: "rubric for rubric.criteria, rubric/NAME for each rubric.NAME.criteria",
        direction: "higher is better",
    }),
};

fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    rubrics::configure(&DEF, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_fields_are_the_default_fields() {
        assert_eq!(rubrics::parse_fields(DEFAULT_FIELDS).unwrap(), DEF.required);
    }
}
