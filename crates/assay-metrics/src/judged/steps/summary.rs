//! Judging a summary (the response) of its source (the contexts joined by
//! newlines): keyphrases of the source, closed questions about them, the
//! summary's answers to them, and a coherence rating.

use super::{blank, filled, unit, ItemVerdicts};
use crate::judged::prompt::PromptId;
use crate::judged::render::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, StepOutput, StepUnit};
use crate::judged::validate::{field, rating, texts, Problem};
use serde_json::Value;

/// Keyphrases of the source text.
/// The top of the coherence rating's scale 1..=5.
pub const COHERENCE_SCALE: u8 = 5;

pub fn keyphrases() -> StepKey {
    unit(Keyphrases)
}

/// Closed questions about the keyphrases whose answer from the source is yes.
pub fn closed_questions() -> StepKey {
    unit(ClosedQuestions)
}

/// Per closed question: does the summary answer yes.
pub fn summary_answers() -> StepKey {
    unit(SummaryAnswers)
}

/// A 1-5 coherence rating of the summary against the source.
pub fn coherence_rating() -> StepKey {
    unit(CoherenceRating)
}

#[derive(Debug)]
struct Keyphrases;

impl StepUnit for Keyphrases {
    fn key(&self) -> String {
        "keyphrases".into()
    }

    fn prompt(&self) -> PromptId {
        PromptId::Keyphrases
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(filled(vec![("text", text(&inputs.source()?))], Vec::new()))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        blank(filled, "text").then(|| StepOutput::Texts(Vec::new()))
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        texts(field(answer, "$", "keyphrases")?, "$.keyphrases").map(StepOutput::Texts)
    }
}

#[derive(Debug)]
struct ClosedQuestions;

impl StepUnit for ClosedQuestions {
    fn key(&self) -> String {
        "closed_questions".into()
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![keyphrases()]
    }

    fn prompt(&self) -> PromptId {
        PromptId::ClosedQuestions
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(filled(
            vec![
                ("text", text(&inputs.source()?)),
                ("keyphrases", list(inputs.texts(&keyphrases())?)),
            ],
            Vec::new(),
        ))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        (blank(filled, "keyphrases") || blank(filled, "text"))
            .then(|| StepOutput::Texts(Vec::new()))
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        texts(field(answer, "$", "questions")?, "$.questions").map(StepOutput::Texts)
    }
}

#[derive(Debug)]
struct SummaryAnswers;

impl ItemVerdicts for SummaryAnswers {
    fn key(&self) -> String {
        "summary_answers".into()
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![closed_questions()]
    }

    fn prompt(&self) -> PromptId {
        PromptId::SummaryAnswers
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let questions = inputs.texts(&closed_questions())?;
        Ok(filled(
            vec![
                ("summary", text(inputs.response()?)),
                ("questions", list(questions)),
            ],
            vec![("verdicts", questions.len())],
        ))
    }
}

#[derive(Debug)]
struct CoherenceRating;

impl StepUnit for CoherenceRating {
    fn key(&self) -> String {
        "coherence_rating".into()
    }

    fn prompt(&self) -> PromptId {
        PromptId::CoherenceRating
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(filled(
            vec![
                ("text", text(&inputs.source()?)),
                ("summary", text(inputs.response()?)),
            ],
            Vec::new(),
        ))
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        rating(answer, COHERENCE_SCALE).map(StepOutput::Rating)
    }
}
