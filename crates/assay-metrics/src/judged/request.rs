//! The neutral requests the judge layer sends: chat messages with the
//! fixed part of a prompt first and the sample's inputs last, and the
//! texts to embed. Nothing here decides which step asks what; that is
//! [`crate::judged::render()`].

use crate::judged::prompt::{canonical_json, Prompt, PromptId, SlotValue};
use crate::judged::step::StepKey;
use serde_json::Value;

/// Temperature of steps that draw several votes: above 0 so that the
/// votes can differ (each vote also needs its own seed, see
/// [`JudgeRequest::n_votes`]).
pub const VOTE_TEMPERATURE: f64 = 0.7;

/// The text embedded for a vote that extracted no sentence.
pub const NO_SENTENCES: &str = "(no sentences)";

pub use assay_core::chat::{Message, Role};

/// A chat request, ready for any provider. Everything in it belongs in the
/// cache key; the messages never depend on anything but the prompt file
/// and the sample, so equal work gives equal requests.
///
/// The messages are: the system message (instruction and schema), then
/// each few-shot example as a user/assistant pair, all identical for every
/// sample, so provider prefix caches hit; the sample's inputs are the last
/// user message.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeRequest {
    pub step: StepKey,
    pub prompt_id: PromptId,
    pub prompt_version: u32,
    /// [`Prompt::hash`], for signatures and cache keys.
    pub prompt_hash: String,
    pub messages: Vec<Message>,
    /// JSON Schema of one answer, with `minItems = maxItems` wherever the
    /// number of items is known from the inputs.
    pub schema: Value,
    pub temperature: f64,
    /// How many independent answers to draw (distinct seeds, or `n` choices
    /// in one call). With 1, [`crate::judged::validate()`] takes the answer
    /// itself; with more, a JSON array of the answers in draw order.
    pub n_votes: u32,
    /// A reply for the judge to score rather than write (see
    /// [`crate::judged::likelihood`]); its answer is then a
    /// [`crate::judged::likelihood::reply_answer`] and `schema` is null.
    pub continuation: Option<String>,
}

/// Texts to embed, in order; the answer is one vector per text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbedRequest {
    pub step: StepKey,
    pub texts: Vec<String>,
}

/// An item's answer with an empty reason where it gave none.
pub(crate) fn with_reason(mut answer: Value) -> Value {
    if let Some(object) = answer.as_object_mut() {
        object
            .entry("reason")
            .or_insert_with(|| Value::String(String::new()));
    }
    answer
}

/// The messages every request of this prompt starts with.
pub fn fixed_messages(prompt: &Prompt) -> Vec<Message> {
    let mut messages = vec![Message {
        role: Role::System,
        content: format!(
            "{}\n\nReply with a single JSON object that follows this JSON Schema:\n{}",
            prompt.instruction.trim_end(),
            canonical_json(&prompt.output_schema)
        ),
    }];
    for example in &prompt.examples {
        let counts: Vec<(&'static str, usize)> = prompt
            .id
            .counts()
            .iter()
            .map(|p| {
                (
                    *p,
                    example
                        .output
                        .get(*p)
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len),
                )
            })
            .collect();
        messages.push(Message {
            role: Role::User,
            content: user_message(prompt, |n| example.input.get(n), &counts),
        });
        messages.push(Message {
            role: Role::Assistant,
            content: canonical_json(&example.output),
        });
    }
    messages
}

/// Items as a numbered list, one per line. Continuation lines are
/// indented so that an item with line breaks still reads as one item.
pub(crate) fn numbered(items: &[impl AsRef<str>]) -> String {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| format!("{}. {}", i + 1, item.as_ref().replace('\n', "\n   ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the last message adds where a row is not in English: the judge
/// writes what it writes (statements, reasons, questions) in the row's
/// language, not in the prompt's. Part of the message, so of the cache
/// key; the fixed messages stay the same for every row.
pub const IN_LANGUAGE: &str = "The texts above are in {language}: write every statement, reason and question of your answer in {language}.";

/// [`IN_LANGUAGE`] for `sample`, where its own texts (question, response,
/// contexts, references: not a metric's parameters, whose few words the
/// detector misreads) are written in a language other than English that
/// the detector is sure of.
pub(crate) fn language_note(sample: &assay_core::Sample) -> Option<String> {
    assay_grounding::language::detected(&sample.own_texts())
        .filter(|l| l != "English")
        .map(|l| IN_LANGUAGE.replace("{language}", &l))
}

/// `request`'s last message with `note` after it.
pub(crate) fn noted(mut request: JudgeRequest, note: Option<&str>) -> JudgeRequest {
    note_last(&mut request.messages, note);
    request
}

/// `note` after the last of `messages`.
pub(crate) fn note_last(messages: &mut [Message], note: Option<&str>) {
    if let (Some(note), Some(last)) = (note, messages.last_mut()) {
        last.content.push_str("\n\n");
        last.content.push_str(note);
    }
}

pub(crate) fn user_message<'s>(
    prompt: &Prompt,
    slot: impl Fn(&str) -> Option<&'s SlotValue>,
    counts: &[(&'static str, usize)],
) -> String {
    let mut out = String::new();
    for name in &prompt.slots {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(name);
        out.push_str(":\n");
        match slot(name).unwrap_or(&SlotValue::Absent) {
            SlotValue::Text(t) => out.push_str(t),
            SlotValue::List(items) if items.is_empty() => out.push_str("(none)"),
            SlotValue::List(items) => out.push_str(&numbered(items)),
            SlotValue::Absent => out.push_str("(not given)"),
        }
    }
    for (path, n) in counts {
        out.push_str(&format!(
            "\n\nThe answer's \"{path}\" list must have exactly {n} entries, in the order above."
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::judged::{render, steps, Inputs, Outputs, PromptSet, Request};

    fn last_message(row: serde_json::Value) -> String {
        let prompts = PromptSet::builtin().unwrap();
        let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
        let outputs = Outputs::new();
        let Ok(Request::Judge(req)) = render(
            &prompts,
            &steps::response_statements(),
            &Inputs::new(&sample, &outputs),
        ) else {
            panic!()
        };
        req.messages.last().unwrap().content.clone()
    }

    #[test]
    fn a_row_in_another_language_asks_for_answers_in_it() {
        let french = last_message(serde_json::json!({
            "user_input": "Où se trouve le siège de Siemens ?",
            "response": "Siemens a son siège à Munich depuis 1949, et l'entreprise est cotée à la Bourse de Francfort."
        }));
        assert!(
            french.ends_with(
                "The texts above are in French: write every statement, reason and question of your answer in French."
            ),
            "{french}"
        );
        let english = last_message(serde_json::json!({
            "user_input": "Where is Siemens based?",
            "response": "Siemens has had its headquarters in Munich since 1949."
        }));
        assert!(!english.contains("The texts above are in"), "{english}");
    }
}
