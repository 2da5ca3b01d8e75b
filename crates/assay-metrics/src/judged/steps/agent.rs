//! Reading an agent's conversation: what the user wanted and where the
//! conversation ended, the step `agent_goal_accuracy` and
//! `task_completion` both judge from (so together they ask it once).

use crate::judged::conversation::{Reading, TranscriptStep};
use crate::judged::prompt::SlotKind::Text;
use crate::judged::prompt::{PromptDecl, PromptId};
use crate::judged::step::StepKey;
use assay_core::conversation::Part;

/// What the user wanted from a conversation, and where it ended.
pub const GOAL_OUTCOME: PromptId = PromptId(&PromptDecl {
    name: "goal_outcome",
    text: include_str!("../../../prompts/goal_outcome.json"),
    slots: &[("turns", Text)],
    counts: &[],
    per_item: &[],
});

/// The parts of a conversation the agent metrics read: its text and its
/// calls.
pub const AGENT_PARTS: [Part; 4] = [
    Part::Message,
    Part::Content,
    Part::ToolCalls,
    Part::ToolResult,
];

/// What the user wanted from `turns` (an agent transcript) and where it
/// ended.
pub fn goal_outcome(turns: String) -> StepKey {
    TranscriptStep::key(
        GOAL_OUTCOME,
        turns,
        Reading::Fields(&["user_goal", "end_state"]),
    )
}
