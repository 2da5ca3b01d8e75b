//! `tool_call_accuracy`: ragas 0.4.3 `ToolCallAccuracy` — whether the
//! assistant called the reference tools in the reference order, and how
//! many of each call's reference arguments it got exactly.
//!
//! Definition (ragas `_tool_call_accuracy.py`, its `collections` twin the
//! same): with predicted calls `P` (the assistant's `tool_calls` in message
//! order) and reference calls `R`,
//!
//! - both empty: 1; `P` empty or `R` empty (not both): 0;
//! - `strict_order=false`: both lists are first sorted by the key
//!   `(name, arg1, str(value1), arg2, str(value2), ...)`, arguments by name
//!   (stably: calls with equal keys keep their order);
//! - `aligned` = the names of `P` equal the names of `R` as sequences
//!   (same length, same order);
//! - pairing `R[i]` with `P[i]` for the shorter length, a pair with equal
//!   names scores its argument accuracy: 1 when both argument objects are
//!   empty, 0 when only the reference's is, else the share of reference
//!   arguments that the call has with `str(predicted) == str(reference)`;
//! - score = (sum / |R|) × (compared / |R| when |P| < |R|) × aligned.
//!
//! Quirks a user may not expect, all the reference's:
//! - Arguments compare by Python `str()`: `1` and `"1"` match, `true` and
//!   `"True"` match, `null` and `"None"` match, but `1` and `1.0` do not,
//!   nor `1e16` and `10000000000000000` (`1e+16` against the digits).
//!   Extra predicted arguments cost nothing.
//! - Any extra or missing call breaks the alignment: the score is 0, though
//!   every reference call was made (the partial credit and the coverage
//!   factor only show when names align, so they never lower a score).
//! - `str()` writes a nested object in the input's key order, so the same
//!   object with its keys in another order does not match; and an argument
//!   given as text that is the `str()` of the reference's value (say
//!   `"{'a': None, 'b': 1e-05}"`) does.
//! - Without strict order, calls sort by their names and the `str` of their
//!   arguments, so `a=10` sorts before `a=9`, and objects by their first
//!   key as given.
//! - The reference validates the conversation (ragas `MultiTurnSample`): a
//!   tool result not right after an assistant message with calls or another
//!   result fails the row here too, and so does a call whose arguments are
//!   `null` (ragas' `ToolCall` refuses them).
//!
//! Empty inputs: 1 when neither side has a call, 0 when only one has.

use super::python::py_str;
use super::{Tool, Tooled};
use crate::params::{parse_bool, ParamError, ParamSpec, Values};
use crate::spec::Direction;
use crate::unit::{MetricId, MetricSpec};
use assay_core::conversation::{Part, ToolCall};
use assay_core::{Field, Outcome, Signature};
use serde_json::{json, Map, Value};

pub const ID: MetricId = MetricId::of(&SPEC);

pub const SPEC: MetricSpec = MetricSpec {
    name: "tool_call_accuracy",
    summary: "whether the assistant made the reference tool calls in order, with the share of reference arguments it got exactly",
    definition: "ragas 0.4.3 ToolCallAccuracy: 0 unless the called names equal the reference names as \
                 sequences (sorted first when strict_order=false); else the mean over reference calls of \
                 the share of reference arguments whose Python str() the paired call matches. See \
                 docs/tool-calls.md for its quirks.",
    required: &[Field::Messages, Field::ReferenceToolCalls],
    params: &[ParamSpec {
        name: "strict_order",
        default: "true",
        doc: "true: calls must come in the reference order; false: both lists are sorted by name and \
              str() of their arguments first",
    }],
    direction: Direction::HigherIsBetter,
    empty_inputs: "1 when neither the conversation nor the reference has a tool call; 0 when only one has",
    outputs: "tool_call_accuracy",
    added_params: &[],
    configure: |values| Ok(Tooled::unit(Params::configure(values)?)),
};

impl Tool for Params {
    fn id(&self) -> MetricId {
        ID
    }

    fn needs(&self) -> &'static [Part] {
        &[Part::Order, Part::NullArguments]
    }

    fn params_json(&self) -> Value {
        self.json()
    }

    fn signature(&self) -> Signature {
        Params::signature(self)
    }

    fn score_calls(
        &self,
        predicted: &[&ToolCall],
        reference: &[ToolCall],
    ) -> Result<Outcome, String> {
        Ok(self.score(predicted, reference))
    }
}

/// Whether calls must come in the reference order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Strict,
    Any,
}

#[derive(Clone, Debug)]
pub struct Params {
    pub order: Order,
}

impl Params {
    pub fn configure(values: &Values) -> Result<Params, ParamError> {
        let strict = values.get("strict_order", parse_bool)?;
        Ok(Params {
            order: if strict { Order::Strict } else { Order::Any },
        })
    }

    pub fn json(&self) -> Value {
        json!({"strict_order": self.order == Order::Strict})
    }

    pub fn signature(&self) -> Signature {
        let order = match self.order {
            Order::Strict => "strict",
            Order::Any => "sorted",
        };
        Signature::new(ID.name(), 2)
            .with("order", order)
            .with("args", "py-str")
            .with("ref", "ragas-0.4.3")
    }

    /// The pure score.
    pub fn score(&self, predicted: &[&ToolCall], reference: &[ToolCall]) -> Outcome {
        let details = json!({"predicted": predicted.len(), "reference": reference.len()});
        if predicted.is_empty() || reference.is_empty() {
            let value = if predicted.is_empty() && reference.is_empty() {
                1.0
            } else {
                0.0
            };
            return Outcome::scored(value, details);
        }
        let mut predicted: Vec<&ToolCall> = predicted.to_vec();
        let mut reference: Vec<&ToolCall> = reference.iter().collect();
        if self.order == Order::Any {
            predicted.sort_by_cached_key(|c| sort_key(c));
            reference.sort_by_cached_key(|c| sort_key(c));
        }
        let aligned = predicted.len() == reference.len()
            && predicted
                .iter()
                .zip(&reference)
                .all(|(p, r)| p.name == r.name);
        let mut score = 0.0;
        for (r, p) in reference.iter().zip(&predicted) {
            if r.name == p.name {
                score += arg_score(&p.args, &r.args);
            }
        }
        let n = reference.len() as f64;
        score /= n;
        let compared = predicted.len().min(reference.len());
        if compared < reference.len() {
            score *= compared as f64 / n;
        }
        let value = score * f64::from(u8::from(aligned));
        let mut details = details;
        details["sequence_aligned"] = json!(aligned);
        Outcome::scored(value, details)
    }
}

/// ragas' `_sorted_key_for_tool_call`: the name, then each argument's name
/// and `str()` of its value, by argument name (Python's `sorted`, by code
/// point, which is UTF-8 byte order), whatever order the input gave.
fn sort_key(call: &ToolCall) -> Vec<String> {
    let mut args: Vec<(&String, &Value)> = call.args.iter().collect();
    args.sort_unstable_by_key(|(name, _)| *name);
    let mut key = vec![call.name.clone()];
    for (name, value) in args {
        key.push(name.clone());
        key.push(py_str(value));
    }
    key
}

/// ragas' `_get_arg_score` with its default `ExactMatch` on `str()`.
fn arg_score(predicted: &Map<String, Value>, reference: &Map<String, Value>) -> f64 {
    if reference.is_empty() {
        return if predicted.is_empty() { 1.0 } else { 0.0 };
    }
    let matched = reference
        .iter()
        .filter(|(k, r)| predicted.get(*k).is_some_and(|p| py_str(p) == py_str(r)))
        .count();
    matched as f64 / reference.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call;

    fn value(order: Order, p: &[ToolCall], r: &[ToolCall]) -> f64 {
        match (Params { order }).score(&p.iter().collect::<Vec<_>>(), r) {
            Outcome::Scored { value, .. } => value,
            other => panic!("{other:?}"),
        }
    }

    /// ragas' documentation example: both calls right, in order.
    #[test]
    fn worked_examples() {
        let w = call("weather_check", json!({"location": "New York"}));
        let t = call(
            "temperature_conversion",
            json!({"temperature_fahrenheit": 75}),
        );
        let both = [w.clone(), t.clone()];
        assert_eq!(value(Order::Strict, &both, &both), 1.0);
        assert_eq!(value(Order::Strict, &[t.clone(), w.clone()], &both), 0.0);
        assert_eq!(value(Order::Any, &[t.clone(), w.clone()], &both), 1.0);
        let half = call("weather_check", json!({"location": "Paris"}));
        assert_eq!(value(Order::Strict, &[half, t.clone()], &both), 0.5);
        assert_eq!(value(Order::Strict, std::slice::from_ref(&w), &both), 0.0);
        assert_eq!(value(Order::Strict, &[], &[]), 1.0);
        let float = call(
            "temperature_conversion",
            json!({"temperature_fahrenheit": 75.0}),
        );
        assert_eq!(value(Order::Strict, &[float], &[t]), 0.0);
    }
}
