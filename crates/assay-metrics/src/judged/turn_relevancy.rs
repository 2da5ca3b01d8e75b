//! `turn_relevancy` (DeepEval `TurnRelevancyMetric`): whether each of the
//! assistant's replies is relevant to the conversation so far.
//!
//! The conversation is cut into interactions as DeepEval cuts it: one
//! starts at a user message that follows the assistant and holds every
//! message up to the next such one; a trailing interaction without an
//! assistant message is left out. For each interaction the judge reads a
//! sliding window of it and the `window_size - 1` before it (default 10,
//! DeepEval's) and says whether the window's last assistant message is
//! relevant ([`relevance`], prompt `turn_relevance`).
//!
//! Value = the share of relevant replies, as DeepEval computes it. Details
//! list each judged reply with its verdict and reason. Where DeepEval gives
//! 1 to a conversation without a reply, assay skips it (`no_turns`:
//! there is no reply to judge). A conversation whose messages or contents
//! could not be read fails (`input`) naming the field.

use crate::judged::conversation::{
    readable, said, transcript, turn_share, unreadable, Reading, TranscriptStep, TEXT_PARTS,
};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::SlotKind::Text;
use crate::judged::prompt::{PromptDecl, PromptId, PromptSet};
use crate::judged::step::{InputError, Inputs, Label, StepKey, Verdict};
use crate::params::{param, ParamError, Values};
use crate::spec::Direction;
use assay_core::conversation::{Message, Role};
use assay_core::{Field, Outcome, Sample, SkipReason};
use std::ops::Range;

/// Whether the assistant's last message of a window of turns is relevant.
pub const TURN_RELEVANCE: PromptId = PromptId(&PromptDecl {
    name: "turn_relevance",
    text: include_str!("../../prompts/turn_relevance.json"),
    slots: &[("turns", Text)],
    counts: &[],
    per_item: &[],
});

pub const EMPTY_INPUTS: &str =
    "skipped (no_turns) when the conversation has no assistant reply to judge";

/// DeepEval's window: the interaction judged and the nine before it.
const WINDOW: usize = 10;

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "turn_relevancy",
    summary: "share of assistant replies relevant to the conversation so far (DeepEval)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages],
    needs_contexts: false,
    prompts: &[TURN_RELEVANCE],
    params: &[param(
        "window_size",
        "10",
        "interactions the judge reads: the one judged and those before it",
    )],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(TurnRelevancy { window: WINDOW }),
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    let window = values.get("window_size", |s| match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("expected a whole number of at least 1"),
    })?;
    Ok(JudgedMetric::new(TurnRelevancy { window }))
}

/// The metric with its window, in interactions.
#[derive(Debug)]
pub struct TurnRelevancy {
    pub window: usize,
}

/// The interactions of a conversation, as ranges of `messages`: each
/// starts at a user message whose last speaker before it was the
/// assistant, once a user has spoken, and the last is kept only if the
/// assistant speaks last in it. Tool results and system messages speak
/// for no one: they stay in the interaction they fall in.
pub fn interactions(messages: &[Message]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut has_user = false;
    let mut last_speaker = None;
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::User && has_user && last_speaker == Some(Role::Assistant) {
            out.push(start..i);
            start = i;
        }
        if matches!(m.role, Role::User | Role::Assistant) {
            last_speaker = Some(m.role);
        }
        has_user |= m.role == Role::User;
    }
    if last_speaker == Some(Role::Assistant) {
        out.push(start..messages.len());
    }
    out
}

impl TurnRelevancy {
    /// Per judged interaction: the place of its last message, and the
    /// step judging it over the window that ends with it.
    fn judged(&self, messages: &[Message]) -> Vec<(usize, StepKey)> {
        let units = interactions(messages);
        units
            .iter()
            .enumerate()
            .filter_map(|(i, unit)| {
                let first = units[i.saturating_sub(self.window - 1)].start;
                let window = &messages[first..unit.end];
                let reply = window
                    .iter()
                    .rev()
                    .find(|m| m.role == Role::Assistant && said(m).is_some())?;
                Some((reply.index, relevance(transcript(window))))
            })
            .collect()
    }
}

impl MetricUnit for TurnRelevancy {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        readable(sample, &TEXT_PARTS)
            .map(|messages| self.judged(messages).into_iter().map(|(_, k)| k).collect())
            .unwrap_or_default()
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(outcome) = unreadable(inputs.sample, &TEXT_PARTS) {
            return single(ID, outcome);
        }
        let messages = readable(inputs.sample, &TEXT_PARTS).unwrap_or_default();
        let mut turns = Vec::new();
        for (index, key) in self.judged(messages) {
            if let Some(v) = inputs.verdicts(&key)?.first() {
                turns.push((format!("messages[{index}]"), v.clone()));
            }
        }
        single(ID, score(&turns))
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![("window_size".into(), self.window.to_string())]
    }
}

/// The outcome of the judged replies, each named by its message, with its
/// verdict (`yes`: relevant).
pub fn score(turns: &[(String, Verdict)]) -> Outcome {
    turn_share(
        turns,
        Label::Yes,
        |relevant, all| format!("{relevant} of {all} assistant replies are relevant"),
        "irrelevant",
    )
    .unwrap_or(Outcome::Skipped(SkipReason::NoTurns))
}

/// Whether the last assistant message of `turns` (a transcript) is
/// relevant.
pub fn relevance(turns: String) -> StepKey {
    TranscriptStep::key(TURN_RELEVANCE, turns, Reading::Verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use assay_core::conversation::Conversation;
    use serde_json::{json, Value};

    fn messages(roles: &str) -> Vec<Message> {
        let list: Vec<Value> = roles
            .chars()
            .enumerate()
            .map(|(i, r)| {
                let role = if r == 'u' { "user" } else { "assistant" };
                json!({"role": role, "content": format!("m{i}")})
            })
            .collect();
        Conversation::from_openai("messages", &Value::Array(list)).messages
    }

    #[test]
    fn interactions_are_cut_as_deepeval_cuts_them() {
        // u a u a -> [u a] [u a]
        assert_eq!(interactions(&messages("uaua")), [0..2, 2..4]);
        // A leading assistant greeting joins the first user's interaction;
        // two users in a row stay in one.
        assert_eq!(interactions(&messages("auuaua")), [0..4, 4..6]);
        // A trailing user message without a reply is left out.
        assert_eq!(
            interactions(&messages("uau")),
            vec![Range { start: 0, end: 2 }]
        );
        // A tool result between the call and the reply speaks for no one.
        let mut with_tool = messages("uaaua");
        with_tool[2].role = Role::Tool;
        assert_eq!(interactions(&with_tool), [0..3, 3..5]);
        assert!(interactions(&messages("")).is_empty());
    }

    #[test]
    fn each_reply_is_judged_over_its_window() {
        let m = messages("uauaua");
        let judged = TurnRelevancy { window: 2 }.judged(&m);
        assert_eq!(
            judged.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [1, 3, 5]
        );
        // The third window holds the second and third interactions only.
        assert_eq!(
            judged[2].1,
            relevance("user: m2\nassistant: m3\nuser: m4\nassistant: m5".into())
        );
        assert_eq!(judged[0].1, relevance("user: m0\nassistant: m1".into()));
    }

    #[test]
    fn the_share_of_relevant_replies() {
        let v = |label, reason: &str| Verdict {
            verdict: label,
            reason: reason.into(),
            probabilities: None,
        };
        let turns = [
            ("messages[1]".to_string(), v(Label::Yes, "")),
            (
                "messages[3]".to_string(),
                v(Label::No, "talks about the weather"),
            ),
        ];
        let Outcome::Scored { value, reason, .. } = score(&turns) else {
            panic!()
        };
        assert_eq!(value, 0.5);
        assert!(reason
            .unwrap()
            .ends_with("irrelevant: messages[3] (talks about the weather)"));
        assert_eq!(score(&[]), Outcome::Skipped(SkipReason::NoTurns));
    }
}
