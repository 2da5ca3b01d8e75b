//! What the conversation metrics share: reading a row's `messages` (the
//! messages with text, a message by its place, the turns before it as a
//! transcript, the failure of a conversation whose read parts are
//! malformed), a step asked about one transcript, and the score of turns
//! judged one by one.

use crate::judged::answer::{field, string, texts, verdict};
use crate::judged::common::{scored, soft_share, with_soft_score};
use crate::judged::prompt::PromptId;
use crate::judged::step::{
    text, Filled, InputError, Inputs, Label, Problem, StepKey, StepOutput, StepUnit, UnitStep,
    Verdict,
};
use assay_core::conversation::{Conversation, Message, Part};
use assay_core::{Failure, FailureKind, Field, Outcome, Sample, SkipReason};
use serde_json::{json, Value};
use std::sync::Arc;

/// The parts of a conversation that metrics reading its text need.
pub const TEXT_PARTS: [Part; 2] = [Part::Message, Part::Content];

/// The row's messages, when every part of `parts` is well formed.
pub fn readable<'a>(sample: &'a Sample, parts: &[Part]) -> Option<&'a [Message]> {
    let conversation = sample.messages.as_ref()?;
    conversation.first_problem(parts).ok()?;
    Some(&conversation.messages)
}

/// The outcome of a row whose conversation a metric cannot read: skipped
/// without one, failed (naming the message and field) when a part of
/// `parts` is malformed; `None` when it reads.
pub fn unreadable(sample: &Sample, parts: &[Part]) -> Option<Outcome> {
    let Some(conversation) = sample.messages.as_ref() else {
        return Some(Outcome::Skipped(SkipReason::MissingField(Field::Messages)));
    };
    conversation.first_problem(parts).err().map(|problem| {
        Outcome::Failed(Failure {
            kind: FailureKind::Input,
            message: problem.to_string(),
        })
    })
}

/// The message's text, unless it has none or only blanks.
pub fn said(message: &Message) -> Option<&str> {
    message.content.as_deref().filter(|c| !c.trim().is_empty())
}

/// Message `index` (its place in the input's list) of the row's
/// conversation.
pub fn message<'a>(inputs: &Inputs<'a>, index: usize) -> Result<&'a Message, InputError> {
    inputs
        .sample
        .messages
        .as_ref()
        .and_then(|c| c.messages.iter().find(|m| m.index == index))
        .ok_or(InputError::MissingField(Field::Messages))
}

/// The messages with text among `messages`, one `role: text` line each,
/// or `(none)`.
pub fn transcript<'a>(messages: impl IntoIterator<Item = &'a Message>) -> String {
    let lines: Vec<String> = messages
        .into_iter()
        .filter_map(|m| said(m).map(|t| format!("{}: {}", m.role, t.trim())))
        .collect();
    if lines.is_empty() {
        "(none)".to_string()
    } else {
        lines.join("\n")
    }
}

/// The messages with their tool calls, one line each: `role: text`, and
/// `assistant: [calls NAME {ARGS}]` for each call (an agent's transcript),
/// or `(none)`.
pub fn agent_transcript(messages: &[Message]) -> String {
    let mut lines = Vec::new();
    for m in messages {
        if let Some(t) = said(m) {
            lines.push(format!("{}: {}", m.role, t.trim()));
        }
        for call in &m.tool_calls {
            let args = Value::Object(call.args.clone());
            lines.push(format!("{}: [calls {} {args}]", m.role, call.name));
        }
    }
    if lines.is_empty() {
        "(none)".to_string()
    } else {
        lines.join("\n")
    }
}

/// The turns of `conversation` before message `index`, as a transcript.
pub fn before(conversation: Option<&Conversation>, index: usize) -> String {
    transcript(
        conversation
            .into_iter()
            .flat_map(|c| &c.messages)
            .filter(|m| m.index < index),
    )
}

/// The outcome of judged turns, each named by its message, with its
/// verdict: the share whose verdict is `good`, a reason that `summary`
/// words from (good, all) and that quotes the other turns under `others`
/// with their reasons, details listing every turn, and the mean
/// probability of `good` as the soft score when the judge gave one.
/// `None` when no turn was judged.
pub fn turn_share(
    turns: &[(String, Verdict)],
    good: Label,
    summary: impl FnOnce(usize, usize) -> String,
    others: &str,
) -> Option<Outcome> {
    if turns.is_empty() {
        return None;
    }
    let verdicts: Vec<Verdict> = turns.iter().map(|(_, v)| v.clone()).collect();
    let n_good = verdicts.iter().filter(|v| v.verdict == good).count();
    let quoted: Vec<String> = turns
        .iter()
        .filter(|(_, v)| v.verdict != good)
        .map(|(turn, v)| match v.reason.trim() {
            "" => turn.clone(),
            why => format!("{turn} ({why})"),
        })
        .collect();
    let mut reason = summary(n_good, turns.len());
    if !quoted.is_empty() {
        reason.push_str(&format!("; {others}: {}", quoted.join("; ")));
    }
    let details = json!({
        "turns": turns.iter().map(|(turn, v)| {
            let mut entry = json!(v);
            entry["turn"] = json!(turn);
            entry
        }).collect::<Vec<Value>>(),
    });
    Some(scored(
        n_good as f64 / turns.len() as f64,
        reason,
        with_soft_score(details, soft_share(&verdicts, good)),
    ))
}

/// What a [`TranscriptStep`] reads from its answer.
#[derive(Clone, Copy, Debug)]
pub enum Reading {
    /// A list of texts under this member.
    Texts(&'static str),
    /// One text under each of these members, in order.
    Fields(&'static [&'static str]),
    /// One verdict.
    Verdict,
}

/// A step that asks `prompt` about one transcript (its slot `turns`): the
/// transcript is the work, so equal transcripts of two rows are one call.
#[derive(Debug)]
pub struct TranscriptStep {
    pub prompt: PromptId,
    pub turns: String,
    pub reading: Reading,
}

impl TranscriptStep {
    /// The key of the step.
    pub fn key(prompt: PromptId, turns: String, reading: Reading) -> StepKey {
        StepKey::Unit(UnitStep(Arc::new(TranscriptStep {
            prompt,
            turns,
            reading,
        })))
    }
}

impl StepUnit for TranscriptStep {
    fn key(&self) -> String {
        format!("{}\n{}", self.prompt, self.turns)
    }

    fn name(&self) -> String {
        self.prompt.to_string()
    }

    fn prompt(&self) -> PromptId {
        self.prompt
    }

    fn fill(&self, _: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(Filled {
            slots: [("turns", text(&self.turns))].into(),
            counts: Vec::new(),
            votes: 1,
        })
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        self.read(answer)
    }

    fn check_vote(&self, _: &Inputs<'_>, vote: &Value) -> Result<(), Problem> {
        self.read(vote).map(drop)
    }
}

impl TranscriptStep {
    fn read(&self, answer: &Value) -> Result<StepOutput, Problem> {
        match self.reading {
            Reading::Texts(name) => {
                texts(field(answer, "$", name)?, &format!("$.{name}")).map(StepOutput::Texts)
            }
            Reading::Fields(names) => names
                .iter()
                .map(|name| string(field(answer, "$", name)?, &format!("$.{name}")))
                .collect::<Result<_, _>>()
                .map(StepOutput::Texts),
            Reading::Verdict => one_verdict(answer, self.labels()),
        }
    }
}

/// The answer of a step that asks one verdict.
pub fn one_verdict(answer: &Value, labels: &[Label]) -> Result<StepOutput, Problem> {
    verdict(answer, "$", labels).map(|v| StepOutput::Verdicts(vec![v]))
}
