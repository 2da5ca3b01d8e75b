//! `METRIC.per_turn=true`: a single-turn RAG metric scored on each turn of
//! a conversation that carries its own retrieved contexts (DeepEval's
//! turn-level RAG metrics), the conversation's value being their mean.
//!
//! A turn is an assistant message of `messages` with `retrieved_contexts`
//! (DeepEval's `retrieval_context`). Its metric reads it as a sample: the
//! message's text is the response, its contexts the retrieved contexts,
//! and the text of the user's messages since the assistant last said
//! something is the question. Each turn's steps are the metric's own, on
//! that sample; equal work of two metrics on one turn is one call, as on a
//! single-turn row.
//!
//! A turn also carries the conversation's `reference` (DeepEval's
//! `expected_outcome`), which the turn-level context precision and recall
//! compare with. Offered by the metrics that declare [`PARAM`];
//! [`crate::judged::JudgedMetric::configure`] refuses one whose
//! parameters make it embed texts. The metric itself is
//! [`crate::judged::metric`]'s, over the turns and steps of this module.
//!
//! Value = the mean of the scored turns' values. A turn its metric skips
//! (no statements, say) is left out of the mean and listed; a conversation
//! none of whose replies carries contexts is skipped (`no_turn_contexts`);
//! one turn failed fails the conversation's outcome, naming the message.
//! Details list every turn as `{"turn": "messages[N]", "verdict", "value",
//! "reason", "details"}`, which the report shows beside the message.

use crate::judged::common::{scored, with_soft_score, SOFT_SCORE};
use crate::judged::conversation::{readable, said};
use crate::judged::prompt::PromptId;
use crate::judged::step::{
    Filled, InputError, Inputs, Label, Outputs, Problem, StepKey, StepOutput, StepUnit, UnitStep,
};
use crate::params::{param, ParamSpec};
use assay_core::conversation::{Part, Role};
use assay_core::{Failure, Outcome, Sample, SkipReason};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The parameter, in the `params` of each metric that offers it.
pub const PARAM: ParamSpec = param(
    "per_turn",
    "false",
    "true: score each assistant reply of the conversation that carries its own \
     retrieved_contexts (the user's messages before it as the question, the conversation's \
     reference as its reference); the conversation's value is their mean",
);

/// The parts of a conversation its turns are read from.
pub const TURN_PARTS: [Part; 3] = [Part::Message, Part::Content, Part::Contexts];

/// An assistant reply with its own contexts, as the sample its metric
/// scores.
#[derive(Debug)]
pub struct Turn {
    /// Its place in the input's `messages`.
    pub at: usize,
    pub sample: Sample,
}

impl Turn {
    /// `messages[N]`.
    pub fn name(&self) -> String {
        format!("messages[{}]", self.at)
    }
}

/// The turns of the row's conversation that carry contexts, in order.
pub fn turns(sample: &Sample) -> Vec<Arc<Turn>> {
    let Some(messages) = readable(sample, &TURN_PARTS) else {
        return Vec::new();
    };
    let mut asked: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for m in messages {
        match m.role {
            Role::User => asked.extend(said(m)),
            Role::Assistant => {
                if let Some(contexts) = &m.retrieved_contexts {
                    out.push(Arc::new(Turn {
                        at: m.index,
                        sample: Sample {
                            id: sample.id.clone(),
                            row: sample.row,
                            user_input: (!asked.is_empty()).then(|| asked.join("\n")),
                            response: said(m).map(str::to_owned),
                            retrieved_contexts: Some(contexts.clone()),
                            reference: sample.reference.clone(),
                            references: sample.references.clone(),
                            ..Sample::default()
                        },
                    }));
                }
                // A reply that only calls tools leaves the question open.
                if said(m).is_some() {
                    asked.clear();
                }
            }
            _ => {}
        }
    }
    out
}

/// `key`, asked about `turn`.
pub fn on(turn: &Arc<Turn>, key: StepKey) -> StepKey {
    match key {
        StepKey::Unit(step) => StepKey::Unit(UnitStep(Arc::new(OnTurn {
            turn: Arc::clone(turn),
            step,
        }))),
        // A metric that embeds is not scored per turn.
        embed @ StepKey::Embed(_) => embed,
    }
}

/// The outputs of `keys` (and the steps they read) on `turn`, under the
/// keys the metric knows them by.
pub fn view(turn: &Arc<Turn>, keys: Vec<StepKey>, outputs: &Outputs) -> Outputs {
    let mut seen = BTreeSet::new();
    let mut todo = keys;
    let mut out = Outputs::new();
    while let Some(key) = todo.pop() {
        if !seen.insert(key.clone()) {
            continue;
        }
        if let StepKey::Unit(u) = &key {
            todo.extend(u.0.deps());
            todo.extend(u.0.split().into_iter().flat_map(|(a, b)| [a, b]));
        }
        if let Some(output) = outputs.get(&on(turn, key.clone())) {
            out.insert(key, output.clone());
        }
    }
    out
}

/// The conversation's outcome from its turns' outcomes, each named by its
/// message: the mean of the scored ones (see the module docs).
pub fn score(turns: &[(String, Outcome)]) -> Outcome {
    if turns.is_empty() {
        return Outcome::Skipped(SkipReason::NoTurnContexts);
    }
    let failed: Vec<(&String, &Failure)> = turns
        .iter()
        .filter_map(|(t, o)| match o {
            Outcome::Failed(f) => Some((t, f)),
            _ => None,
        })
        .collect();
    if let Some((turn, first)) = failed.first() {
        let mut message = format!("{turn}: {}", first.message);
        if failed.len() > 1 {
            message.push_str(&format!(" (and {} more turns failed)", failed.len() - 1));
        }
        return Outcome::Failed(Failure {
            kind: first.kind,
            message,
        });
    }
    let values: Vec<(&String, f64, Option<f64>)> = turns
        .iter()
        .filter_map(|(t, o)| match o {
            Outcome::Scored { value, details, .. } => Some((t, *value, details.number(SOFT_SCORE))),
            _ => None,
        })
        .collect();
    if values.is_empty() {
        return turns[0].1.clone();
    }
    let n = values.len() as f64;
    let mean = values.iter().map(|(_, v, _)| v).sum::<f64>() / n;
    let soft: Option<Vec<f64>> = values.iter().map(|(_, _, s)| *s).collect();
    let listed: Vec<String> = turns
        .iter()
        .map(|(t, o)| match o {
            Outcome::Scored { value, .. } => format!("{t} {value:.2}"),
            Outcome::Skipped(why) => format!("{t} skipped ({why})"),
            Outcome::Failed(_) => unreachable!("a failed turn fails the conversation"),
        })
        .collect();
    let reason = format!(
        "mean of {} turns with contexts: {}",
        values.len(),
        listed.join("; ")
    );
    let details = json!({
        "turns": turns.iter().map(|(t, o)| entry(t, o)).collect::<Vec<Value>>(),
    });
    scored(
        mean,
        reason,
        with_soft_score(details, soft.map(|s| s.iter().sum::<f64>() / n)),
    )
}

/// A turn's line in the details: its outcome, with a verdict the report
/// can show beside the message.
fn entry(turn: &str, outcome: &Outcome) -> Value {
    match outcome {
        Outcome::Scored {
            value,
            reason,
            details,
        } => json!({
            "turn": turn,
            "verdict": format!("{value:.2}"),
            "value": value,
            "reason": reason,
            "details": details,
        }),
        Outcome::Skipped(why) => json!({
            "turn": turn,
            "verdict": "skipped",
            "reason": why.to_string(),
        }),
        Outcome::Failed(f) => json!({
            "turn": turn,
            "verdict": "failed",
            "reason": f.message,
        }),
    }
}

/// One step of the metric, asked about one turn: the step reads the turn
/// as its sample and its dependencies' outputs on that turn.
#[derive(Debug)]
struct OnTurn {
    turn: Arc<Turn>,
    step: UnitStep,
}

impl OnTurn {
    /// The outputs the step reads, under the keys it knows them by.
    fn read(&self, outputs: &Outputs) -> Outputs {
        self.step
            .0
            .deps()
            .into_iter()
            .filter_map(|d| {
                let output = outputs.get(&on(&self.turn, d.clone()))?.clone();
                Some((d, output))
            })
            .collect()
    }
}

impl StepUnit for OnTurn {
    fn key(&self) -> String {
        format!("{}\n{}", self.turn.name(), self.step.0.key())
    }

    fn name(&self) -> String {
        format!("{} on {}", self.step.0.name(), self.turn.name())
    }

    fn deps(&self) -> Vec<StepKey> {
        let deps = self.step.0.deps();
        deps.into_iter().map(|d| on(&self.turn, d)).collect()
    }

    fn prompt(&self) -> PromptId {
        self.step.0.prompt()
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let read = self.read(inputs.outputs);
        self.step.0.fill(&Inputs::new(&self.turn.sample, &read))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        self.step.0.trivial(filled)
    }

    fn without_call(&self, filled: &Filled) -> Option<StepOutput> {
        self.step.0.without_call(filled)
    }

    fn schema(&self, prompt_schema: &Value) -> Value {
        self.step.0.schema(prompt_schema)
    }

    fn labels(&self) -> &'static [Label] {
        self.step.0.labels()
    }

    fn check(
        &self,
        inputs: &Inputs<'_>,
        filled: &Filled,
        answer: &Value,
    ) -> Result<StepOutput, Problem> {
        let read = self.read(inputs.outputs);
        let turn = Inputs::new(&self.turn.sample, &read);
        self.step.0.check(&turn, filled, answer)
    }

    fn check_vote(&self, inputs: &Inputs<'_>, answer: &Value) -> Result<(), Problem> {
        let read = self.read(inputs.outputs);
        let turn = Inputs::new(&self.turn.sample, &read);
        self.step.0.check_vote(&turn, answer)
    }

    fn reply(&self, _: &Inputs<'_>) -> Result<String, InputError> {
        let read = Outputs::new();
        self.step.0.reply(&Inputs::new(&self.turn.sample, &read))
    }

    fn split(&self) -> Option<(StepKey, StepKey)> {
        let (first, second) = self.step.0.split()?;
        Some((on(&self.turn, first), on(&self.turn, second)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use assay_core::FailureKind;

    fn scored_turn(turn: &str, value: f64, soft: Option<f64>) -> (String, Outcome) {
        let details = with_soft_score(json!({}), soft);
        (turn.into(), scored(value, "r".into(), details))
    }

    #[test]
    fn the_conversation_scores_the_mean_of_its_scored_turns() {
        let turns = [
            scored_turn("messages[1]", 1.0, Some(0.9)),
            (
                "messages[3]".into(),
                Outcome::Skipped(SkipReason::NoStatements),
            ),
            scored_turn("messages[5]", 0.5, Some(0.6)),
        ];
        let Outcome::Scored {
            value,
            reason,
            details,
        } = score(&turns)
        else {
            panic!("not scored");
        };
        assert_eq!(value, 0.75);
        assert!((details.to_json()[SOFT_SCORE].as_f64().unwrap() - 0.75).abs() < 1e-12);
        assert_eq!(
            reason.unwrap(),
            "mean of 2 turns with contexts: messages[1] 1.00; messages[3] skipped \
             (no_statements: the text has no statements to judge); messages[5] 0.50"
        );
        let details = details.into_json();
        let listed = details["turns"].as_array().unwrap();
        assert_eq!(listed.len(), 3);
        assert_eq!(listed[1]["verdict"], "skipped");
        assert_eq!(listed[2]["turn"], "messages[5]");
    }

    #[test]
    fn a_soft_score_needs_every_scored_turn_to_have_one() {
        let turns = [
            scored_turn("messages[1]", 1.0, Some(0.9)),
            scored_turn("messages[3]", 0.0, None),
        ];
        let Outcome::Scored { details, .. } = score(&turns) else {
            panic!("not scored");
        };
        assert!(details.to_json().get(SOFT_SCORE).is_none());
    }

    #[test]
    fn no_turn_skips_and_all_skipped_keeps_the_first_reason() {
        assert_eq!(score(&[]), Outcome::Skipped(SkipReason::NoTurnContexts));
        let turns = [(
            "messages[1]".to_string(),
            Outcome::Skipped(SkipReason::NoStatements),
        )];
        assert_eq!(score(&turns), Outcome::Skipped(SkipReason::NoStatements));
    }

    #[test]
    fn a_failed_turn_fails_the_conversation_naming_its_message() {
        let fail = |m: &str| {
            Outcome::Failed(Failure {
                kind: FailureKind::Parse,
                message: m.into(),
            })
        };
        let turns = [
            scored_turn("messages[1]", 1.0, None),
            ("messages[3]".into(), fail("bad answer")),
            ("messages[5]".into(), fail("worse")),
        ];
        assert_eq!(
            score(&turns),
            Outcome::Failed(Failure {
                kind: FailureKind::Parse,
                message: "messages[3]: bad answer (and 1 more turns failed)".into(),
            })
        );
    }
}
