//! `argument_correctness` (DeepEval `ArgumentCorrectnessMetric`): the
//! share of the assistant's tool calls whose arguments are right for what
//! the user asked.
//!
//! Steps: the judge reads the conversation, tool calls and results
//! included, and the calls the assistant made (each its name and its
//! arguments as JSON), and says of each whether its arguments are right
//! ([`argument_verdicts`], prompt `argument_verdicts`; one
//! `argument_verdict` request per call under the per-item protocols).
//!
//! Value = calls with right arguments / calls, as DeepEval computes it
//! from its verdicts. Details list each call (`messages[i].tool_calls[j]`
//! and its name) with its verdict and reason. Where DeepEval gives 1 to a
//! case without a tool call, assay skips it (`no_calls`). A conversation
//! whose messages, contents or tool calls could not be read fails
//! (`input`) naming the field.

use crate::judged::conversation::{agent_transcript, readable, turn_share, unreadable};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{ItemForm, PromptDecl, PromptId};
use crate::judged::step::{
    list, text, Filled, InputError, Inputs, Label, StepKey, UnitStep, Verdict,
};
use crate::judged::steps::ItemVerdicts;
use crate::judged::steps::AGENT_PARTS;
use crate::spec::Direction;
use assay_core::conversation::Message;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::Value;
use std::sync::Arc;

/// One call's arguments right or not (the per-item form of
/// [`ARGUMENT_VERDICTS`]).
pub const ARGUMENT_VERDICT: PromptId = PromptId(&PromptDecl {
    name: "argument_verdict",
    text: include_str!("../../prompts/argument_verdict.json"),
    slots: &[("turns", Text), ("call", Text)],
    counts: &[],
    per_item: &[],
});

/// Each tool call's arguments right or not.
pub const ARGUMENT_VERDICTS: PromptId = PromptId(&PromptDecl {
    name: "argument_verdicts",
    text: include_str!("../../prompts/argument_verdicts.json"),
    slots: &[("turns", Text), ("calls", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: ARGUMENT_VERDICT,
        list: "calls",
        item: "call",
        answers: "verdicts",
    }],
});

pub const EMPTY_INPUTS: &str = "skipped (no_calls) when the conversation makes no tool call";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "argument_correctness",
    summary: "share of the assistant's tool calls whose arguments are right for what the user asked (DeepEval)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages],
    needs_contexts: false,
    prompts: &[ARGUMENT_VERDICTS],
    params: &[],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(ArgumentCorrectness),
    configure: None,
    named_params: None,
    per_output: None,
};

/// The metric (it has no parameters).
#[derive(Debug)]
pub struct ArgumentCorrectness;

/// Each call of `messages`: where it is (`messages[i].tool_calls[j]
/// NAME`) and how the judge reads it (`NAME {arguments}`).
fn calls(messages: &[Message]) -> Vec<(String, String)> {
    messages
        .iter()
        .flat_map(|m| {
            m.tool_calls.iter().enumerate().map(move |(j, call)| {
                (
                    format!("messages[{}].tool_calls[{j}] {}", m.index, call.name),
                    format!("{} {}", call.name, Value::Object(call.args.clone())),
                )
            })
        })
        .collect()
}

impl MetricUnit for ArgumentCorrectness {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        match readable(sample, &AGENT_PARTS) {
            Some(messages) if !calls(messages).is_empty() => vec![step(messages)],
            _ => Vec::new(),
        }
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(outcome) = unreadable(inputs.sample, &AGENT_PARTS) {
            return single(ID, outcome);
        }
        let messages = readable(inputs.sample, &AGENT_PARTS).unwrap_or_default();
        let named = calls(messages);
        if named.is_empty() {
            return single(ID, Outcome::Skipped(SkipReason::NoCalls));
        }
        let verdicts = inputs.verdicts(&step(messages))?;
        let judged: Vec<(String, Verdict)> = named
            .into_iter()
            .map(|(at, _)| at)
            .zip(verdicts.iter().cloned())
            .collect();
        single(ID, score(&judged))
    }
}

/// The step judging the calls of `messages`.
fn step(messages: &[Message]) -> StepKey {
    argument_verdicts(
        agent_transcript(messages),
        calls(messages).into_iter().map(|(_, call)| call).collect(),
    )
}

/// The outcome of the judged calls, each named by its place, with its
/// verdict (`yes`: its arguments are right).
pub fn score(calls: &[(String, Verdict)]) -> Outcome {
    turn_share(
        calls,
        Label::Yes,
        |right, all| format!("{right} of {all} tool calls have the right arguments"),
        "wrong arguments",
    )
    .unwrap_or(Outcome::Skipped(SkipReason::NoCalls))
}

/// Whether each of `calls` (`NAME {arguments}`) has the right arguments
/// over `turns` (an agent transcript).
pub fn argument_verdicts(turns: String, calls: Vec<String>) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(ArgumentVerdicts { turns, calls })))
}

#[derive(Debug)]
struct ArgumentVerdicts {
    turns: String,
    calls: Vec<String>,
}

impl ItemVerdicts for ArgumentVerdicts {
    fn key(&self) -> String {
        format!(
            "argument_verdicts\n{}\n{}",
            self.turns,
            self.calls.join("\n")
        )
    }

    fn deps(&self) -> Vec<StepKey> {
        Vec::new()
    }

    fn prompt(&self) -> PromptId {
        ARGUMENT_VERDICTS
    }

    fn fill(&self, _: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(Filled {
            slots: [("turns", text(&self.turns)), ("calls", list(&self.calls))].into(),
            counts: vec![("verdicts", self.calls.len())],
            votes: 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_of_calls_with_right_arguments() {
        // DeepEval's reading: two calls, the second books one seat of two.
        let judged = [
            (
                "messages[2].tool_calls[0] search_flights".to_string(),
                Verdict::new(Label::Yes, "as asked"),
            ),
            (
                "messages[4].tool_calls[0] book_flight".to_string(),
                Verdict::new(Label::No, "two seats were asked for"),
            ),
        ];
        let Outcome::Scored { value, reason, .. } = score(&judged) else {
            panic!()
        };
        assert_eq!(value, 0.5);
        let reason = reason.unwrap();
        assert!(
            reason.starts_with("1 of 2 tool calls have the right arguments"),
            "{reason}"
        );
        assert!(
            reason.contains("messages[4].tool_calls[0] book_flight"),
            "{reason}"
        );
        assert_eq!(score(&[]), Outcome::Skipped(SkipReason::NoCalls));
    }
}
