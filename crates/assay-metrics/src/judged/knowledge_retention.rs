//! `knowledge_retention` (DeepEval `KnowledgeRetentionMetric`): whether
//! the assistant keeps what the user told it over a conversation.
//!
//! Steps, per row's `messages`: for each user message, the facts it
//! states ([`user_facts`], prompt `user_facts`, the earlier turns beside
//! it); then for each assistant message with text, whether it forgets or
//! contradicts a fact the user stated before it ([`retention`], prompt
//! `retention_verdict`: `yes` is an attrition). An assistant message with
//! no earlier fact is not judged and makes no call.
//!
//! Value = the share of judged assistant messages without attrition, as
//! DeepEval computes it. Details list each judged message with its verdict
//! and reason, and the facts. Where DeepEval gives 0 to a conversation in
//! which no assistant message follows a fact, assay skips it
//! (`no_facts`): there was nothing to retain. A conversation whose
//! messages or contents could not be read fails (`input`) naming the
//! field.

use crate::judged::answer::{field, texts};
use crate::judged::conversation::{
    before, message, one_verdict, readable, said, turn_share, unreadable, TEXT_PARTS,
};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{PromptDecl, PromptId, SlotValue};
use crate::judged::step::{
    list, text, Filled, InputError, Inputs, Label, Problem, StepKey, StepOutput, StepUnit,
    UnitStep, Verdict,
};
use crate::spec::Direction;
use assay_core::conversation::{Message, Role};
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::{json, Value};
use std::sync::Arc;

/// The facts one user message states, as "topic: value" lines.
pub const USER_FACTS: PromptId = PromptId(&PromptDecl {
    name: "user_facts",
    text: include_str!("../../prompts/user_facts.json"),
    slots: &[("earlier_turns", Text), ("message", Text)],
    counts: &[],
    per_item: &[],
});

/// Whether one assistant message forgets or contradicts the user's facts.
pub const RETENTION_VERDICT: PromptId = PromptId(&PromptDecl {
    name: "retention_verdict",
    text: include_str!("../../prompts/retention_verdict.json"),
    slots: &[("facts", List), ("message", Text)],
    counts: &[],
    per_item: &[],
});

pub const EMPTY_INPUTS: &str =
    "skipped (no_facts) when no assistant message follows a fact the user stated; \
     an assistant message without text is not judged";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "knowledge_retention",
    summary: "share of assistant turns that keep the facts the user gave earlier (DeepEval)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages],
    needs_contexts: false,
    prompts: &[USER_FACTS, RETENTION_VERDICT],
    params: &[],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(KnowledgeRetention),
    configure: None,
    named_params: None,
    per_output: None,
};

/// The metric (it has no parameters).
#[derive(Debug)]
pub struct KnowledgeRetention;

/// Each assistant message with text, by its place in `messages`, with
/// the step judging it, in order.
fn judged(messages: &[Message]) -> Vec<(usize, StepKey)> {
    let mut users = Vec::new();
    let mut out = Vec::new();
    for m in messages {
        match m.role {
            Role::User if said(m).is_some() => users.push(m.index),
            Role::Assistant if said(m).is_some() => {
                out.push((m.index, retention(m.index, users.clone())));
            }
            _ => {}
        }
    }
    out
}

impl MetricUnit for KnowledgeRetention {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        let Some(messages) = readable(sample, &TEXT_PARTS) else {
            return Vec::new();
        };
        let facts = messages
            .iter()
            .filter(|m| m.role == Role::User && said(m).is_some())
            .map(|m| user_facts(m.index));
        facts
            .chain(judged(messages).into_iter().map(|(_, key)| key))
            .collect()
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(outcome) = unreadable(inputs.sample, &TEXT_PARTS) {
            return single(ID, outcome);
        }
        let messages = readable(inputs.sample, &TEXT_PARTS).unwrap_or_default();
        let mut turns = Vec::new();
        let mut facts = Vec::new();
        for m in messages {
            if m.role == Role::User && said(m).is_some() {
                facts.extend(inputs.texts(&user_facts(m.index))?.iter().cloned());
            }
        }
        for (index, key) in judged(messages) {
            if let Some(v) = inputs.verdicts(&key)?.first() {
                turns.push((format!("messages[{index}]"), v.clone()));
            }
        }
        single(ID, score(&turns, &facts))
    }
}

/// The outcome of the judged assistant messages (each named, with its
/// verdict: `yes` is an attrition) and the facts they were judged against.
pub fn score(turns: &[(String, Verdict)], facts: &[String]) -> Outcome {
    let shared = turn_share(
        turns,
        Label::No,
        |kept, all| format!("{kept} of {all} assistant turns keep the user's facts"),
        "forgotten or contradicted",
    );
    match shared {
        Some(Outcome::Scored {
            value,
            reason,
            mut details,
        }) => {
            details.insert("facts", json!(facts));
            Outcome::Scored {
                value,
                reason,
                details,
            }
        }
        Some(other) => other,
        None => Outcome::Skipped(SkipReason::NoFacts),
    }
}

/// The facts user message `index` (its place in `messages`) states.
pub fn user_facts(index: usize) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(UserFacts { index })))
}

/// Whether assistant message `index` keeps the facts of user messages
/// `users` (those before it).
pub fn retention(index: usize, users: Vec<usize>) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(Retention { index, users })))
}

#[derive(Debug)]
struct UserFacts {
    index: usize,
}

impl StepUnit for UserFacts {
    fn key(&self) -> String {
        format!("user_facts[messages[{}]]", self.index)
    }

    fn prompt(&self) -> PromptId {
        USER_FACTS
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let content = message(inputs, self.index)?.content.as_deref();
        Ok(Filled {
            slots: [
                (
                    "earlier_turns",
                    text(&before(inputs.sample.messages.as_ref(), self.index)),
                ),
                ("message", text(content.unwrap_or_default())),
            ]
            .into(),
            counts: Vec::new(),
            votes: 1,
        })
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        texts(field(answer, "$", "facts")?, "$.facts").map(StepOutput::Texts)
    }
}

#[derive(Debug)]
struct Retention {
    index: usize,
    users: Vec<usize>,
}

impl StepUnit for Retention {
    fn key(&self) -> String {
        format!("retention_verdict[messages[{}]]", self.index)
    }

    fn deps(&self) -> Vec<StepKey> {
        self.users.iter().map(|i| user_facts(*i)).collect()
    }

    fn prompt(&self) -> PromptId {
        RETENTION_VERDICT
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let mut facts = Vec::new();
        for i in &self.users {
            facts.extend(inputs.texts(&user_facts(*i))?.iter().cloned());
        }
        let content = message(inputs, self.index)?.content.as_deref();
        Ok(Filled {
            slots: [
                ("facts", list(&facts)),
                ("message", text(content.unwrap_or_default())),
            ]
            .into(),
            counts: Vec::new(),
            votes: 1,
        })
    }

    /// Nothing was stated before it: nothing to judge, no call.
    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        matches!(filled.slots.get("facts"), Some(SlotValue::List(l)) if l.is_empty())
            .then(|| StepOutput::Verdicts(Vec::new()))
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        one_verdict(answer, self.labels())
    }

    fn check_vote(&self, _: &Inputs<'_>, vote: &Value) -> Result<(), Problem> {
        one_verdict(vote, self.labels()).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_of_turns_without_attrition() {
        // DeepEval's worked case: three judged assistant turns, the second
        // asks again for the user's address -> 2 / 3.
        let turns = [
            ("messages[1]".to_string(), Verdict::new(Label::No, "")),
            (
                "messages[3]".to_string(),
                Verdict::new(Label::Yes, "asks for the address again"),
            ),
            ("messages[5]".to_string(), Verdict::new(Label::No, "")),
        ];
        let facts = ["address: 12 Elm Street".to_string()];
        let Outcome::Scored {
            value,
            reason,
            details,
        } = score(&turns, &facts)
        else {
            panic!()
        };
        assert!((value - 2.0 / 3.0).abs() < 1e-12);
        let reason = reason.unwrap();
        assert!(reason.starts_with("2 of 3 assistant turns"), "{reason}");
        assert!(
            reason.contains("messages[3] (asks for the address again)"),
            "{reason}"
        );
        assert_eq!(details.to_json()["turns"][1]["turn"], "messages[3]");
        assert_eq!(details.to_json()["facts"][0], "address: 12 Elm Street");
    }

    #[test]
    fn nothing_to_retain_is_a_skip_not_a_zero() {
        assert_eq!(score(&[], &[]), Outcome::Skipped(SkipReason::NoFacts));
    }
}
