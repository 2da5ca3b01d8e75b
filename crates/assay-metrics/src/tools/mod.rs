//! Deterministic tool-call metrics: the calls a conversation's assistant
//! made (its `tool_calls`, in message order) against `reference_tool_calls`,
//! equal to their Python references number for number (a parity set of
//! generated and hand-picked cases, `tests/data/tool_calls/`, checks it).
//!
//! Each metric is one module with its spec, parameters, signature and pure
//! `score`, registered as the lexical metrics are
//! ([`crate::lexical::LEXICAL`]) through [`Tooled`]. A conversation whose part a metric needs is malformed fails that
//! metric on that row, naming the row, the message and the field.

pub mod python;
pub mod tool_call_accuracy;
pub mod tool_call_f1;
pub mod tool_correctness;

use crate::unit::{MetricId, Unit, UnitScorer};
use assay_core::conversation::{Part, Problem, ToolCall};
use assay_core::{Failure, FailureKind, Field, Outcome, Sample, Signature, SkipReason};
use serde_json::Value;

/// A configured tool-call metric: how it scores the calls of a
/// conversation whose parts it needs are well-formed.
pub(crate) trait Tool: Clone + std::fmt::Debug + Send + Sync + 'static {
    fn id(&self) -> MetricId;
    /// The parts of the conversation that must be well-formed; ragas
    /// builds a MultiTurnSample, whose validator rejects a tool result out
    /// of place, and its ToolCall null arguments; DeepEval sees the calls
    /// alone, and takes null as no arguments.
    fn needs(&self) -> &'static [Part];
    fn params_json(&self) -> Value;
    fn signature(&self) -> Signature;
    /// The pure score, or why the reference would raise.
    fn score_calls(
        &self,
        predicted: &[&ToolCall],
        reference: &[ToolCall],
    ) -> Result<Outcome, String>;
}

/// A tool-call metric as a lexical unit: its one outcome per sample is
/// scored from the conversation.
#[derive(Clone, Debug)]
pub(crate) struct Tooled<T>(pub T);

impl<T: Tool> Tooled<T> {
    /// The unit of the tool metric `tool`.
    pub fn unit(tool: T) -> Box<dyn Unit> {
        Box::new(Tooled(tool))
    }
}

impl<T: Tool> Unit for Tooled<T> {
    fn outputs(&self) -> Vec<String> {
        vec![self.0.id().name().to_string()]
    }

    fn params_json(&self) -> Value {
        self.0.params_json()
    }

    fn signature(&self) -> Signature {
        self.0.signature()
    }

    fn scorer(&self) -> Box<dyn UnitScorer> {
        Box::new(self.clone())
    }
}

impl<T: Tool> UnitScorer for Tooled<T> {
    fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        vec![match calls(sample, self.0.needs()) {
            Ok((predicted, reference)) => self
                .0
                .score_calls(&predicted, reference)
                .unwrap_or_else(|e| input_failure(sample, e)),
            Err(outcome) => outcome,
        }]
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
