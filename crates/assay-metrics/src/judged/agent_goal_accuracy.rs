//! `agent_goal_accuracy` (ragas `AgentGoalAccuracyWithReference` and
//! `AgentGoalAccuracyWithoutReference`): whether the agent achieved what
//! the user wanted, 1 or 0.
//!
//! Steps: the judge reads the conversation, tool calls and results
//! included, and says what the user wanted and where the conversation
//! ended ([`goal_outcome`], prompt `goal_outcome`, a step `task_completion`
//! shares); then whether that end
//! state achieves the desired outcome ([`outcome_match`], prompt
//! `outcome_match`). The desired outcome is the row's `reference` when it
//! has one (ragas' with-reference form), else the goal the judge inferred
//! (its without-reference form).
//!
//! Value = 1 when it is achieved, else 0, as ragas scores it; details carry
//! the goal, the end state, the desired outcome and whether it came from
//! the reference, and the probability of `yes` as the soft score when the
//! judge gave one. A conversation whose messages, contents or tool calls
//! could not be read fails (`input`) naming the field.

use crate::judged::common::{scored, with_soft_score};
use crate::judged::conversation::{agent_transcript, one_verdict, readable, unreadable};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::SlotKind::Text;
use crate::judged::prompt::{PromptDecl, PromptId};
use crate::judged::step::{
    text, Filled, InputError, Inputs, Label, Problem, StepKey, StepOutput, StepUnit, UnitStep,
    Verdict,
};
use crate::judged::steps::{goal_outcome, AGENT_PARTS, GOAL_OUTCOME};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample};
use serde_json::{json, Value};
use std::sync::Arc;

/// Whether an arrived outcome achieves a desired one.
pub const OUTCOME_MATCH: PromptId = PromptId(&PromptDecl {
    name: "outcome_match",
    text: include_str!("../../prompts/outcome_match.json"),
    slots: &[("desired_outcome", Text), ("arrived_outcome", Text)],
    counts: &[],
    per_item: &[],
});

pub const EMPTY_INPUTS: &str =
    "an empty conversation is judged as it is; without a reference the inferred goal is the desired outcome";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "agent_goal_accuracy",
    summary: "1 if the conversation achieved the user's goal (the reference, else the inferred goal), else 0 (ragas)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages],
    needs_contexts: false,
    prompts: &[GOAL_OUTCOME, OUTCOME_MATCH],
    params: &[],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(AgentGoalAccuracy),
    configure: None,
    named_params: None,
    per_output: None,
};

/// The metric (it has no parameters).
#[derive(Debug)]
pub struct AgentGoalAccuracy;

/// The steps of a conversation: what was wanted and reached, then whether
/// it was achieved against `reference` (or the inferred goal).
fn steps_of(turns: String, reference: Option<&str>) -> (StepKey, StepKey) {
    let inferred = goal_outcome(turns);
    let matched = outcome_match(inferred.clone(), reference.map(str::to_string));
    (inferred, matched)
}

impl MetricUnit for AgentGoalAccuracy {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        let Some(messages) = readable(sample, &AGENT_PARTS) else {
            return Vec::new();
        };
        let (inferred, matched) = steps_of(agent_transcript(messages), sample.reference.as_deref());
        vec![inferred, matched]
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(outcome) = unreadable(inputs.sample, &AGENT_PARTS) {
            return single(ID, outcome);
        }
        let messages = readable(inputs.sample, &AGENT_PARTS).unwrap_or_default();
        let reference = inputs.sample.reference.as_deref();
        let (inferred, matched) = steps_of(agent_transcript(messages), reference);
        let [goal, end_state] = inputs.texts(&inferred)? else {
            return Err(InputError::WrongOutput(inferred));
        };
        let Some(verdict) = inputs.verdicts(&matched)?.first() else {
            return Err(InputError::WrongOutput(matched));
        };
        single(ID, score(goal, end_state, reference, verdict))
    }
}

/// The outcome of the judge's reading of the conversation (`goal`,
/// `end_state`) and its verdict on whether the desired outcome (the
/// `reference`, else `goal`) was achieved.
pub fn score(goal: &str, end_state: &str, reference: Option<&str>, verdict: &Verdict) -> Outcome {
    let achieved = verdict.verdict == Label::Yes;
    let desired = reference.unwrap_or(goal);
    let mut reason = format!(
        "{} the {}: {desired}",
        if achieved {
            "achieved"
        } else {
            "did not achieve"
        },
        if reference.is_some() {
            "reference outcome"
        } else {
            "user's goal"
        },
    );
    if !verdict.reason.trim().is_empty() {
        reason.push_str(&format!(" ({})", verdict.reason.trim()));
    }
    let details = json!({
        "user_goal": goal,
        "end_state": end_state,
        "desired_outcome": desired,
        "against_reference": reference.is_some(),
        "verdict": verdict,
    });
    scored(
        if achieved { 1.0 } else { 0.0 },
        reason,
        with_soft_score(details, verdict.probability(Label::Yes)),
    )
}

/// Whether the end state `inferred` reached achieves `reference`, or the
/// goal `inferred` names when there is none.
pub fn outcome_match(inferred: StepKey, reference: Option<String>) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(OutcomeMatch {
        inferred,
        reference,
    })))
}

#[derive(Debug)]
struct OutcomeMatch {
    inferred: StepKey,
    reference: Option<String>,
}

impl StepUnit for OutcomeMatch {
    fn key(&self) -> String {
        format!(
            "outcome_match\n{}\n{}",
            self.inferred,
            self.reference.as_deref().unwrap_or("(inferred goal)")
        )
    }

    fn name(&self) -> String {
        "outcome_match".to_string()
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![self.inferred.clone()]
    }

    fn prompt(&self) -> PromptId {
        OUTCOME_MATCH
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let [goal, end_state] = inputs.texts(&self.inferred)? else {
            return Err(InputError::WrongOutput(self.inferred.clone()));
        };
        let desired = self.reference.as_deref().unwrap_or(goal);
        Ok(Filled {
            slots: [
                ("desired_outcome", text(desired)),
                ("arrived_outcome", text(end_state)),
            ]
            .into(),
            counts: Vec::new(),
            votes: 1,
        })
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

    fn v(label: Label, probability_yes: Option<f64>) -> Verdict {
        Verdict {
            verdict: label,
            reason: "the booking matches".into(),
            probabilities: probability_yes.map(|p| vec![(Label::Yes, p), (Label::No, 1.0 - p)]),
        }
    }

    #[test]
    fn achieved_is_one_and_the_desired_outcome_is_the_reference_when_given() {
        // ragas' worked case: the table was booked as asked -> 1.
        let Outcome::Scored {
            value,
            reason,
            details,
        } = score(
            "A table for two tonight",
            "A table for two is booked",
            Some("A table for two at 8 pm"),
            &v(Label::Yes, Some(0.9)),
        )
        else {
            panic!()
        };
        assert_eq!(value, 1.0);
        assert_eq!(
            reason.unwrap(),
            "achieved the reference outcome: A table for two at 8 pm (the booking matches)"
        );
        assert_eq!(details.to_json()["against_reference"], true);
        assert_eq!(details.to_json()["soft_score"], 0.9);
        // Without a reference the inferred goal is what must be achieved.
        let Outcome::Scored { value, details, .. } = score(
            "A table for two",
            "Nothing booked",
            None,
            &v(Label::No, None),
        ) else {
            panic!()
        };
        assert_eq!(value, 0.0);
        assert_eq!(details.to_json()["desired_outcome"], "A table for two");
        assert!(details.to_json().get("soft_score").is_none());
    }
}
