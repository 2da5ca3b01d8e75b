//! A yes/no verdict on one aspect of the response, drawn `votes` times
//! (prompt `aspect_verdict`).

use super::{question, unit};
use crate::judged::answer::{verdict, vote_at, votes_of};
use crate::judged::prompt::PromptDecl;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{PromptId, SlotValue};
use crate::judged::step::Problem;
use crate::judged::step::{list, text, Filled};
use crate::judged::step::{Aspect, InputError, Inputs, StepKey, StepOutput, StepUnit};
use serde_json::Value;

/// One aspect's yes/no verdict on the response.
pub const ASPECT_VERDICT: PromptId = PromptId(&PromptDecl {
    name: "aspect_verdict",
    text: include_str!("../../../prompts/aspect_verdict.json"),
    slots: &[
        ("aspect", Text),
        ("definition", Text),
        ("question", Text),
        ("response", Text),
        ("contexts", List),
    ],
    counts: &[],
    per_item: &[],
});

/// A yes/no verdict on `aspect`, `votes` independent draws.
pub fn aspect_verdict(aspect: Aspect, votes: u32) -> StepKey {
    unit(AspectVerdict { aspect, votes })
}

#[derive(Debug)]
struct AspectVerdict {
    aspect: Aspect,
    votes: u32,
}

impl StepUnit for AspectVerdict {
    /// The definition is part of the work: two definitions under one
    /// name are two steps.
    fn key(&self) -> String {
        format!("{}\n{}", self.name(), self.aspect.definition)
    }

    fn name(&self) -> String {
        format!("aspect_verdict[{} x{}]", self.aspect.name, self.votes)
    }

    fn prompt(&self) -> PromptId {
        ASPECT_VERDICT
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let contexts = inputs
            .sample
            .retrieved_contexts
            .as_deref()
            .map_or(SlotValue::Absent, list);
        Ok(Filled {
            slots: [
                ("aspect", text(&self.aspect.name)),
                ("definition", text(&self.aspect.definition)),
                ("question", question(inputs)),
                ("response", text(inputs.response()?)),
                ("contexts", contexts),
            ]
            .into(),
            counts: Vec::new(),
            votes: self.votes,
        })
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        votes_of(answer, self.votes)?
            .iter()
            .enumerate()
            .map(|(i, vote)| verdict(vote, &vote_at(self.votes, i), self.labels()))
            .collect::<Result<_, _>>()
            .map(StepOutput::Verdicts)
    }

    fn check_vote(&self, _: &Inputs<'_>, vote: &Value) -> Result<(), Problem> {
        verdict(vote, "$", self.labels()).map(drop)
    }
}
