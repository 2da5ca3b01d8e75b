//! Deterministic tool-call metrics: the calls a conversation's assistant
//! made (its `tool_calls`, in message order) against `reference_tool_calls`,
//! equal to their Python references number for number (a parity set of
//! generated and hand-picked cases, `tests/data/tool_calls/`, checks it).
//!
//! Each metric is one module with its spec, parameters, signature and pure
//! `score`; [`ToolMetric`] is their one list, which the lexical registry
//! wraps. A conversation whose part a metric needs is malformed fails that
//! metric on that row, naming the row, the message and the field.

pub mod python;
pub mod tool_call_accuracy;
pub mod tool_call_f1;
pub mod tool_correctness;

use assay_core::conversation::{Part, Problem, ToolCall};
use assay_core::{Failure, FailureKind, Field, Outcome, Sample, Signature, SkipReason};
use serde_json::Value;

/// A configured tool-call metric.
#[derive(Clone, Debug)]
pub enum ToolMetric {
    Accuracy(tool_call_accuracy::Params),
    F1,
    Correctness(tool_correctness::Params),
}

impl ToolMetric {
    pub fn params_json(&self) -> Value {
        match self {
            ToolMetric::Accuracy(p) => p.json(),
            ToolMetric::F1 => serde_json::json!({}),
            ToolMetric::Correctness(p) => p.json(),
        }
    }

    pub fn signature(&self) -> Signature {
        match self {
            ToolMetric::Accuracy(p) => p.signature(),
            ToolMetric::F1 => tool_call_f1::signature(),
            ToolMetric::Correctness(p) => p.signature(),
        }
    }

    /// The outcome of one sample that has both `messages` and
    /// `reference_tool_calls`.
    pub fn score(&self, sample: &Sample) -> Outcome {
        let needs = match self {
            // ragas builds a MultiTurnSample, whose validator rejects a tool
            // result out of place, and its ToolCall null arguments;
            // DeepEval sees the calls alone, and takes null as no arguments.
            ToolMetric::Accuracy(_) | ToolMetric::F1 => &[Part::Order, Part::NullArguments][..],
            ToolMetric::Correctness(_) => &[],
        };
        let calls = match calls(sample, needs) {
            Ok(calls) => calls,
            Err(outcome) => return outcome,
        };
        let (predicted, reference) = calls;
        match self {
            ToolMetric::Accuracy(p) => p.score(&predicted, reference),
            ToolMetric::F1 => tool_call_f1::score(&predicted, reference),
            ToolMetric::Correctness(p) => p
                .score(&predicted, reference)
                .unwrap_or_else(|e| input_failure(sample, e)),
        }
    }
}

/// A failure of `sample`'s input, for the reason `why`.
fn input_failure(sample: &Sample, why: impl std::fmt::Display) -> Outcome {
    Outcome::Failed(Failure {
        kind: FailureKind::Input,
        message: format!("row {}: {why}", sample.row),
    })
}

/// The predicted and the reference calls, or the failure that names the
/// malformed part.
fn calls<'s>(
    sample: &'s Sample,
    needs: &[Part],
) -> Result<(Vec<&'s ToolCall>, &'s [ToolCall]), Outcome> {
    let fail = |p: &Problem| input_failure(sample, p);
    let missing = |field| Outcome::Skipped(SkipReason::MissingField(field));
    let conversation = sample
        .messages
        .as_ref()
        .ok_or_else(|| missing(Field::Messages))?;
    let reference =
        (sample.reference_tool_calls.as_ref()).ok_or_else(|| missing(Field::ReferenceToolCalls))?;
    let reference = reference.as_deref().map_err(fail)?;
    conversation.first_problem(needs).map_err(fail)?;
    let predicted = conversation.tool_calls().map_err(fail)?;
    Ok((predicted, reference))
}

/// A call for the worked examples.
#[cfg(test)]
fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: None,
        name: name.into(),
        null_args: args.is_null(),
        args: args.as_object().cloned().unwrap_or_default(),
    }
}
