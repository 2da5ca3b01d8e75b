//! `conversation_rubric` (DeepEval `ConversationalGEval`, ragas' rubrics
//! over a `MultiTurnSample`): a judged rating of a whole conversation on a
//! criterion the user writes, tool calls and results included, scaled to
//! [0, 1].
//!
//! `--set conversation_rubric.criteria="Does the assistant stay polite?"`;
//! named rubrics (`conversation_rubric.NAME.criteria`), given or generated
//! evaluation steps, the 1..N scale and the probability-weighted rating
//! are those of `rubric` ([`crate::judged::rubrics`]); the judge reads the
//! conversation as a transcript (`fields`, default `messages`; add
//! `chatbot_role`, `reference` and the like to show it more).
//!
//! Empty inputs: a row without `messages` is skipped; a conversation whose
//! messages, contents or tool calls could not be read fails (`input`)
//! naming the field; an empty one is rated as it is.

use crate::judged::metric::{JudgedDef, JudgedId, JudgedMetric, PerOutput};
use crate::judged::prompt::PromptSet;
use crate::judged::rubrics::{self, RATING_PROMPT, STEPS_PROMPT};
use crate::params::{ParamError, ParamSpec, Values};
use crate::spec::Direction;
use assay_core::Field;

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

const PARAMS: [ParamSpec; 4] = rubrics::params("messages");

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "conversation_rubric",
    summary: "a 1..N rating of a whole conversation on a criterion you write (conversational G-Eval), scaled to [0, 1]",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages],
    needs_contexts: false,
    prompts: &[STEPS_PROMPT, RATING_PROMPT],
    params: &PARAMS,
    empty_inputs: "skipped without messages; a malformed conversation fails naming the field; \
                   an empty one is rated as it is",
    signature_version: 1,
    default: || rubrics::unconfigured(&DEF),
    configure: Some(configure),
    named_params: Some(""),
    per_output: Some(PerOutput {
        outputs: "conversation_rubric for conversation_rubric.criteria, conversation_rubric/NAME \
                  for each conversation_rubric.NAME.criteria",
        direction: "higher is better",
    }),
};

fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    rubrics::configure(&DEF, values)
}
