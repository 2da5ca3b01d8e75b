//! `tool_call_f1`: ragas 0.4.3 `ToolCallF1` — F1 between the set of calls
//! made and the set of reference calls, a call being its name and its
//! arguments.
//!
//! Definition (ragas `_tool_call_f1.py`): both lists become sets of
//! `(name, args)` with Python equality (`1 == 1.0 == True`, objects equal
//! whatever their key order, lists element by element); TP = |made ∩
//! reference|, FP = |made − reference|, FN = |reference − made|;
//! precision and recall are 0 when their denominator is; F1 = 2PR/(P+R),
//! 0 when P+R is; the value is Python's `round(F1, 4)`.
//!
//! Quirks a user may not expect, all the reference's:
//! - Sets, not lists: a call made twice counts once, a reference call
//!   listed twice is wanted once; order is ignored.
//! - Both sides empty scores 0, not 1 (precision and recall are 0).
//! - Arguments must match entirely (no partial credit), but `1` equals
//!   `1.0` and `true` here, unlike `tool_call_accuracy`; `"1"` does not.
//! - Rounded to 4 decimals (half to even on the exact binary value).
//! - As for `tool_call_accuracy`, a tool result out of place fails the row:
//!   the reference builds a ragas `MultiTurnSample`, which rejects it.
//!
//! Empty inputs: 0 when either side (or both) has no call.

use super::python::{map_eq, round4};
use super::{Tool, Tooled};
use crate::spec::Direction;
use crate::unit::{MetricId, MetricSpec};
use assay_core::conversation::{Part, ToolCall};
use assay_core::{Field, Outcome, Signature};
use serde_json::{json, Value};

pub const ID: MetricId = MetricId::of(&SPEC);

pub const SPEC: MetricSpec = MetricSpec {
    name: "tool_call_f1",
    summary:
        "F1 between the set of tool calls made and the set of reference calls (name and arguments)",
    definition: "ragas 0.4.3 ToolCallF1: calls as a set of (name, args) under Python equality; \
                 F1 of made against reference, rounded to 4 decimals. See docs/tool-calls.md.",
    required: &[Field::Messages, Field::ReferenceToolCalls],
    params: &[],
    direction: Direction::HigherIsBetter,
    empty_inputs:
        "0 when either side has no tool call, including both (ragas: precision and recall are 0)",
    outputs: "tool_call_f1",
    added_params: &[],
    configure: |_| Ok(Tooled::unit(F1)),
};

/// `tool_call_f1`, which has no parameters.
#[derive(Clone, Copy, Debug)]
pub struct F1;

impl Tool for F1 {
    fn id(&self) -> MetricId {
        ID
    }

    fn needs(&self) -> &'static [Part] {
        &[Part::Order, Part::NullArguments]
    }

    fn params_json(&self) -> Value {
        json!({})
    }

    fn signature(&self) -> Signature {
        signature()
    }

    fn score_calls(
        &self,
        predicted: &[&ToolCall],
        reference: &[ToolCall],
    ) -> Result<Outcome, String> {
        Ok(score(predicted, reference))
    }
}

pub fn signature() -> Signature {
    Signature::new(ID.name(), 1)
        .with("match", "py-eq-set")
        .with("round", 4)
        .with("ref", "ragas-0.4.3")
}

/// The calls, each once under Python equality, first occurrence kept.
fn distinct<'c>(calls: impl IntoIterator<Item = &'c ToolCall>) -> Vec<&'c ToolCall> {
    let mut out: Vec<&ToolCall> = Vec::new();
    for c in calls {
        if !out.iter().any(|o| same(o, c)) {
            out.push(c);
        }
    }
    out
}

fn same(a: &ToolCall, b: &ToolCall) -> bool {
    a.name == b.name && map_eq(&a.args, &b.args)
}

/// The pure score.
pub fn score(predicted: &[&ToolCall], reference: &[ToolCall]) -> Outcome {
    let made = distinct(predicted.iter().copied());
    let wanted = distinct(reference);
    let tp = made
        .iter()
        .filter(|m| wanted.iter().any(|w| same(m, w)))
        .count();
    let (fp, fn_) = (made.len() - tp, wanted.len() - tp);
    let ratio = |a: usize, b: usize| {
        if a + b > 0 {
            a as f64 / (a + b) as f64
        } else {
            0.0
        }
    };
    let (precision, recall) = (ratio(tp, fp), ratio(tp, fn_));
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    Outcome::scored(
        round4(f1),
        json!({"tp": tp, "fp": fp, "fn": fn_, "precision": precision, "recall": recall}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call;

    fn value(p: &[ToolCall], r: &[ToolCall]) -> f64 {
        match score(&p.iter().collect::<Vec<_>>(), r) {
            Outcome::Scored { value, .. } => value,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn worked_examples() {
        let w = call("weather", json!({"city": "Oslo", "days": 1}));
        let s = call("search", json!({"q": "x"}));
        assert_eq!(
            value(std::slice::from_ref(&w), &[w.clone(), s.clone()]),
            0.6667
        );
        assert_eq!(value(&[s.clone(), w.clone()], &[w.clone(), s.clone()]), 1.0);
        assert_eq!(
            value(&[w.clone(), w.clone()], std::slice::from_ref(&w)),
            1.0
        );
        assert_eq!(value(&[], &[]), 0.0);
        let float = call("weather", json!({"days": 1.0, "city": "Oslo"}));
        assert_eq!(value(&[float], &[w]), 1.0);
    }
}
