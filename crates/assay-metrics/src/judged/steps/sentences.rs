//! The sentences of the contexts needed to answer the question, drawn
//! `votes` times (prompt `sentence_extraction`).

use super::unit;
use crate::judged::answer::{boolean, field, texts, vote_at, votes_of};
use crate::judged::prompt::PromptDecl;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotKind::Text;
use crate::judged::step::Problem;
use crate::judged::step::{text, Filled};
use crate::judged::step::{Extraction, InputError, Inputs, StepKey, StepOutput, StepUnit};
use serde_json::Value;

/// The sentences of a context needed to answer the question.
pub const SENTENCE_EXTRACTION: PromptId = PromptId(&PromptDecl {
    name: "sentence_extraction",
    text: include_str!("../../../prompts/sentence_extraction.json"),
    slots: &[("question", Text), ("context", Text)],
    counts: &[],
    per_item: &[],
});

/// Sentences of the joined contexts needed to answer, `votes` draws.
pub fn sentence_extraction(votes: u32) -> StepKey {
    unit(SentenceExtraction(votes))
}

#[derive(Debug)]
struct SentenceExtraction(u32);

impl StepUnit for SentenceExtraction {
    fn key(&self) -> String {
        format!("sentence_extraction[x{}]", self.0)
    }

    fn prompt(&self) -> PromptId {
        SENTENCE_EXTRACTION
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(Filled {
            slots: [
                ("question", text(inputs.user_input()?)),
                ("context", text(&inputs.source()?)),
            ]
            .into(),
            counts: Vec::new(),
            votes: self.0,
        })
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        votes_of(answer, self.0)?
            .iter()
            .enumerate()
            .map(|(i, vote)| extraction(vote, &vote_at(self.0, i)))
            .collect::<Result<_, _>>()
            .map(StepOutput::Extractions)
    }

    fn check_vote(&self, _: &Inputs<'_>, vote: &Value) -> Result<(), Problem> {
        extraction(vote, "$").map(drop)
    }
}

fn extraction(vote: &Value, at: &str) -> Result<Extraction, Problem> {
    let insufficient = boolean(
        field(vote, at, "insufficient_information")?,
        &format!("{at}.insufficient_information"),
    )?;
    let sentences = texts(field(vote, at, "sentences")?, &format!("{at}.sentences"))?;
    // Sentences beside "insufficient" contradict it: which half is meant
    // decides the score, so the vote is asked again rather than guessed.
    if insufficient && !sentences.is_empty() {
        return Err(Problem::Shape {
            at: format!("{at}.sentences"),
            expected: "none when insufficient_information is true",
        });
    }
    Ok(if insufficient {
        Extraction::InsufficientInformation
    } else {
        Extraction::Sentences(sentences)
    })
}
