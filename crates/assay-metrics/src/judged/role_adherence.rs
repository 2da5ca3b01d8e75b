//! `role_adherence` (DeepEval `RoleAdherenceMetric`): the share of the
//! assistant's replies that stay in the role it was given (`chatbot_role`).
//!
//! Steps: the judge reads the role, the whole conversation and the
//! assistant's replies with text, and says of each whether it stays in the
//! role ([`role_verdicts`], prompt `role_verdicts`; one `role_verdict`
//! request per reply under the per-item protocols).
//!
//! Value = replies in role / replies, the number DeepEval computes from the
//! replies it finds out of character. Details list each reply with its
//! verdict and reason. Where DeepEval gives 1 to a conversation without a
//! reply, assay skips it (`no_turns`). A conversation whose messages or
//! contents could not be read fails (`input`) naming the field.

use crate::judged::conversation::{readable, said, transcript, turn_share, unreadable, TEXT_PARTS};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{ItemForm, PromptDecl, PromptId};
use crate::judged::step::{
    list, text, Filled, InputError, Inputs, Label, StepKey, UnitStep, Verdict,
};
use crate::judged::steps::ItemVerdicts;
use crate::spec::Direction;
use assay_core::conversation::{Message, Role};
use assay_core::{Field, Outcome, Sample, SkipReason};
use std::sync::Arc;

/// One reply in the role or not (the per-item form of [`ROLE_VERDICTS`]).
pub const ROLE_VERDICT: PromptId = PromptId(&PromptDecl {
    name: "role_verdict",
    text: include_str!("../../prompts/role_verdict.json"),
    slots: &[("role", Text), ("turns", Text), ("reply", Text)],
    counts: &[],
    per_item: &[],
});

/// Each of the assistant's replies in the role or not.
pub const ROLE_VERDICTS: PromptId = PromptId(&PromptDecl {
    name: "role_verdicts",
    text: include_str!("../../prompts/role_verdicts.json"),
    slots: &[("role", Text), ("turns", Text), ("replies", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: ROLE_VERDICT,
        list: "replies",
        item: "reply",
        answers: "verdicts",
    }],
});

pub const EMPTY_INPUTS: &str =
    "skipped (no_turns) when the conversation has no assistant reply to judge";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "role_adherence",
    summary: "share of assistant replies that stay in the given chatbot_role (DeepEval)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages, Field::ChatbotRole],
    needs_contexts: false,
    prompts: &[ROLE_VERDICTS],
    params: &[],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(RoleAdherence),
    configure: None,
    named_params: None,
    per_output: None,
};

/// The metric (it has no parameters).
#[derive(Debug)]
pub struct RoleAdherence;

/// The assistant's replies with text.
fn replies(messages: &[Message]) -> Vec<&Message> {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant && said(m).is_some())
        .collect()
}

/// The step judging the replies of `messages` against `role`.
fn step(role: &str, messages: &[Message]) -> StepKey {
    role_verdicts(
        role.to_string(),
        transcript(messages),
        replies(messages)
            .iter()
            .filter_map(|m| said(m).map(|t| t.trim().to_string()))
            .collect(),
    )
}

impl MetricUnit for RoleAdherence {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        match (
            readable(sample, &TEXT_PARTS),
            sample.chatbot_role.as_deref(),
        ) {
            (Some(messages), Some(role)) => vec![step(role, messages)],
            _ => Vec::new(),
        }
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(outcome) = unreadable(inputs.sample, &TEXT_PARTS) {
            return single(ID, outcome);
        }
        let messages = readable(inputs.sample, &TEXT_PARTS).unwrap_or_default();
        let role = inputs
            .sample
            .chatbot_role
            .as_deref()
            .ok_or(InputError::MissingField(Field::ChatbotRole))?;
        let verdicts = inputs.verdicts(&step(role, messages))?;
        let turns: Vec<(String, Verdict)> = replies(messages)
            .iter()
            .map(|m| format!("messages[{}]", m.index))
            .zip(verdicts.iter().cloned())
            .collect();
        single(ID, score(&turns))
    }
}

/// The outcome of the judged replies, each named by its message, with its
/// verdict (`yes`: in the role).
pub fn score(turns: &[(String, Verdict)]) -> Outcome {
    turn_share(
        turns,
        Label::Yes,
        |kept, all| format!("{kept} of {all} assistant replies stay in the role"),
        "out of character",
    )
    .unwrap_or(Outcome::Skipped(SkipReason::NoTurns))
}

/// Each of `replies` (of the conversation `turns`) in `role` or not.
pub fn role_verdicts(role: String, turns: String, replies: Vec<String>) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(RoleVerdicts {
        role,
        turns,
        replies,
    })))
}

/// The role and the conversation are the work.
#[derive(Debug)]
struct RoleVerdicts {
    role: String,
    turns: String,
    replies: Vec<String>,
}

impl ItemVerdicts for RoleVerdicts {
    fn key(&self) -> String {
        format!("role_verdicts\n{}\n{}", self.role, self.turns)
    }

    fn prompt(&self) -> PromptId {
        ROLE_VERDICTS
    }

    fn fill(&self, _: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(Filled {
            slots: [
                ("role", text(&self.role)),
                ("turns", text(&self.turns)),
                ("replies", list(&self.replies)),
            ]
            .into(),
            counts: vec![("verdicts", self.replies.len())],
            votes: 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_of_replies_in_the_role() {
        // DeepEval's reading: three replies, one out of character -> 2 / 3.
        let v = |label, reason: &str| Verdict {
            verdict: label,
            reason: reason.into(),
            probabilities: None,
        };
        let turns = [
            ("messages[1]".to_string(), v(Label::Yes, "")),
            (
                "messages[3]".to_string(),
                v(Label::No, "offers to debug code"),
            ),
            ("messages[5]".to_string(), v(Label::Yes, "")),
        ];
        let Outcome::Scored { value, reason, .. } = score(&turns) else {
            panic!()
        };
        assert!((value - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            reason.unwrap(),
            "2 of 3 assistant replies stay in the role; out of character: messages[3] (offers to debug code)"
        );
        assert_eq!(score(&[]), Outcome::Skipped(SkipReason::NoTurns));
    }
}
