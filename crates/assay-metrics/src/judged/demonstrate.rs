//! An alignment's demonstrations in a judge's prompt: before the sample,
//! the labelled claims nearest its statements
//! ([`assay_grounding::demonstrations`]), each as a worked example of the
//! statement-verdict prompt (a user message in the prompt's own layout and
//! the answer people gave), after the prompt file's own examples.
//!
//! Only the statement verdicts of faithfulness take them
//! ([`FAITHFULNESS_VERDICTS`], and [`STATEMENT_SUPPORT`] where it is asked
//! one statement at a time): an alignment's labels say whether a
//! response's sentences are supported by its contexts, nothing else.

use crate::judged::prompt::{canonical_json, Prompt, PromptId, PromptSet, SlotValue};
use crate::judged::request::{user_message, Message, Role};
use crate::judged::steps::{FAITHFULNESS_VERDICTS, STATEMENT_SUPPORT};
use assay_grounding::demonstrations::{Demonstration, PER_ROW};
use serde_json::json;

/// Whether requests of `id` show an alignment's demonstrations (when the
/// judge, not a grounding model, answers them).
pub fn takes(id: PromptId) -> bool {
    id == FAITHFULNESS_VERDICTS || id == STATEMENT_SUPPORT
}

/// The demonstration messages for a request of `prompt` about
/// `statements`: a user/assistant pair per demonstration, nearest first;
/// none where the prompt takes none or the prompts carry none.
pub(crate) fn messages(prompts: &PromptSet, prompt: &Prompt, statements: &[&str]) -> Vec<Message> {
    let Some((pool, _)) = prompts.demonstrations() else {
        return Vec::new();
    };
    if !takes(prompt.id) {
        return Vec::new();
    }
    pool.nearest(statements, PER_ROW)
        .into_iter()
        .flat_map(|d| pair(prompt, d))
        .collect()
}

fn pair(prompt: &Prompt, d: &Demonstration) -> [Message; 2] {
    let contexts = SlotValue::List(vec![d.context.clone()]);
    let question = if d.question.is_empty() {
        SlotValue::Absent
    } else {
        SlotValue::Text(d.question.clone())
    };
    let statement = SlotValue::Text(d.statement.clone());
    let statements = SlotValue::List(vec![d.statement.clone()]);
    let slot = |name: &str| match name {
        "contexts" => Some(&contexts),
        "question" => Some(&question),
        "statement" => Some(&statement),
        "statements" => Some(&statements),
        _ => None,
    };
    let (counts, answer): (&[(&'static str, usize)], _) = if prompt.id == STATEMENT_SUPPORT {
        (&[], json!({"verdict": d.verdict}))
    } else {
        let reason = match d.verdict.as_str() {
            "yes" => "People who checked it found it stated in the contexts.",
            "no" => "People who checked it found that the contexts say otherwise.",
            _ => "People who checked it found nothing in the contexts that states it.",
        };
        (
            &[("verdicts", 1)],
            json!({"verdicts": [{"reason": reason, "verdict": d.verdict}]}),
        )
    };
    [
        Message {
            role: Role::User,
            content: user_message(prompt, slot, counts),
        },
        Message {
            role: Role::Assistant,
            content: canonical_json(&answer),
        },
    ]
}
