//! `task_completion` (DeepEval `TaskCompletionMetric`): how completely the
//! agent accomplished the task it was given, from 0 to 1.
//!
//! Steps: the judge reads the conversation, tool calls and results
//! included, and says what the user wanted and where the conversation
//! ended ([`goal_outcome`], the step `agent_goal_accuracy` asks too, so the two metrics share that request); then rates how
//! completely that outcome accomplishes the task, 1 to 5 ([`task_rating`],
//! prompt `task_rating`).
//!
//! Value = (rating - 1) / 4, with the probability-weighted rating when the
//! judge gives probabilities (as G-Eval reads a rating). DeepEval asks its
//! judge for a number from 0 to 1; a rating on five described steps is
//! what a small judge answers reliably, and maps onto the same range.
//! Details carry the task, the outcome and the rating. A conversation
//! whose messages, contents or tool calls could not be read fails
//! (`input`) naming the field.

use crate::judged::answer::rating;
use crate::judged::common::rated;
use crate::judged::conversation::{agent_transcript, readable, unreadable};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::SlotKind::Text;
use crate::judged::prompt::{PromptDecl, PromptId};
use crate::judged::step::{
    text, Filled, InputError, Inputs, Problem, Rating, StepKey, StepOutput, StepUnit, UnitStep,
};
use crate::judged::steps::{goal_outcome, AGENT_PARTS, GOAL_OUTCOME};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample};
use serde_json::Value;
use std::sync::Arc;

/// How completely an outcome accomplishes a task, 1 to 5.
pub const TASK_RATING: PromptId = PromptId(&PromptDecl {
    name: "task_rating",
    text: include_str!("../../prompts/task_rating.json"),
    slots: &[("task", Text), ("outcome", Text)],
    counts: &[],
    per_item: &[],
});

/// The top of the rating's scale 1..=5.
pub const SCALE: u8 = 5;

pub const EMPTY_INPUTS: &str = "an empty conversation is judged as it is";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "task_completion",
    summary: "how completely the agent accomplished the task it inferred from the conversation, 0 to 1 (DeepEval)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages],
    needs_contexts: false,
    prompts: &[GOAL_OUTCOME, TASK_RATING],
    params: &[],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(TaskCompletion),
    configure: None,
    named_params: None,
    per_output: None,
};

/// The metric (it has no parameters).
#[derive(Debug)]
pub struct TaskCompletion;

impl MetricUnit for TaskCompletion {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        let Some(messages) = readable(sample, &AGENT_PARTS) else {
            return Vec::new();
        };
        let inferred = goal_outcome(agent_transcript(messages));
        vec![inferred.clone(), task_rating(inferred)]
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(outcome) = unreadable(inputs.sample, &AGENT_PARTS) {
            return single(ID, outcome);
        }
        let messages = readable(inputs.sample, &AGENT_PARTS).unwrap_or_default();
        let inferred = goal_outcome(agent_transcript(messages));
        let [task, outcome] = inputs.texts(&inferred)? else {
            return Err(InputError::WrongOutput(inferred));
        };
        let key = task_rating(inferred);
        match inputs.output(&key)? {
            StepOutput::Rating(r) => single(ID, score(task, outcome, r)),
            _ => Err(InputError::WrongOutput(key)),
        }
    }
}

/// The outcome of the judge's rating of how completely `outcome`
/// accomplishes `task`.
pub fn score(task: &str, outcome: &str, rating: &Rating) -> Outcome {
    match rated(rating, SCALE) {
        Outcome::Scored {
            value,
            reason,
            mut details,
        } => {
            details.insert("task", Value::String(task.to_string()));
            details.insert("outcome", Value::String(outcome.to_string()));
            Outcome::Scored {
                value,
                reason,
                details,
            }
        }
        other => other,
    }
}

/// How completely the outcome `inferred` names accomplishes its task.
pub fn task_rating(inferred: StepKey) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(TaskRating { inferred })))
}

#[derive(Debug)]
struct TaskRating {
    inferred: StepKey,
}

impl StepUnit for TaskRating {
    fn key(&self) -> String {
        format!("task_rating\n{}", self.inferred)
    }

    fn name(&self) -> String {
        "task_rating".to_string()
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![self.inferred.clone()]
    }

    fn prompt(&self) -> PromptId {
        TASK_RATING
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let [task, outcome] = inputs.texts(&self.inferred)? else {
            return Err(InputError::WrongOutput(self.inferred.clone()));
        };
        Ok(Filled {
            slots: [("task", text(task)), ("outcome", text(outcome))].into(),
            counts: Vec::new(),
            votes: 1,
        })
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        rating(answer, SCALE).map(StepOutput::Rating)
    }

    fn check_vote(&self, _: &Inputs<'_>, vote: &Value) -> Result<(), Problem> {
        rating(vote, SCALE).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rating_maps_onto_zero_to_one_with_the_task_and_outcome_beside_it() {
        let r = |rating, probabilities| Rating {
            rating,
            reason: "one seat of two".into(),
            probabilities,
        };
        let Outcome::Scored {
            value,
            reason,
            details,
        } = score("Book two seats", "Booked one seat", &r(3, None))
        else {
            panic!()
        };
        assert_eq!(value, 0.5);
        assert_eq!(reason.unwrap(), "rated 3 of 5: one seat of two");
        assert_eq!(details.to_json()["task"], "Book two seats");
        assert_eq!(details.to_json()["outcome"], "Booked one seat");
        // G-Eval's reading: the expected rating 4.5 of probabilities
        // split between 4 and 5.
        let soft = r(4, Some(vec![0.0, 0.0, 0.0, 0.5, 0.5]));
        let Outcome::Scored { value, .. } = score("t", "o", &soft) else {
            panic!()
        };
        assert_eq!(value, 0.875);
    }
}
