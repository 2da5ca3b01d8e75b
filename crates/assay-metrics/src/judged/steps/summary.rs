//! Judging a summary (the response) of its source (the contexts joined by
//! newlines): keyphrases of the source, closed questions about them, the
//! summary's answers to them, and a coherence rating.

use super::{blank, filled, unit, ItemVerdicts};
use crate::judged::answer::{field, rating, texts};
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{ItemForm, PromptDecl};
use crate::judged::step::Problem;
use crate::judged::step::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, StepOutput, StepUnit};
use serde_json::Value;

/// The keyphrases of the text a summary summarises.
pub const KEYPHRASES: PromptId = PromptId(&PromptDecl {
    name: "keyphrases",
    text: include_str!("../../../prompts/keyphrases.json"),
    slots: &[("text", Text)],
    counts: &[],
    per_item: &[],
});

/// Yes/no questions about the text, from its keyphrases.
pub const CLOSED_QUESTIONS: PromptId = PromptId(&PromptDecl {
    name: "closed_questions",
    text: include_str!("../../../prompts/closed_questions.json"),
    slots: &[("text", Text), ("keyphrases", List)],
    counts: &[],
    per_item: &[],
});

/// One closed question answered from the summary (the per-item form of [`SUMMARY_ANSWERS`]).
pub const SUMMARY_ANSWER: PromptId = PromptId(&PromptDecl {
    name: "summary_answer",
    text: include_str!("../../../prompts/summary_answer.json"),
    slots: &[("summary", Text), ("question", Text)],
    counts: &[],
    per_item: &[],
});

/// Each closed question answered from the summary.
pub const SUMMARY_ANSWERS: PromptId = PromptId(&PromptDecl {
    name: "summary_answers",
    text: include_str!("../../../prompts/summary_answers.json"),
    slots: &[("summary", Text), ("questions", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: SUMMARY_ANSWER,
        list: "questions",
        item: "question",
        answers: "verdicts",
    }],
});

/// A 1..5 coherence rating of a summary.
pub const COHERENCE_RATING: PromptId = PromptId(&PromptDecl {
    name: "coherence_rating",
    text: include_str!("../../../prompts/coherence_rating.json"),
    slots: &[("text", Text), ("summary", Text)],
    counts: &[],
    per_item: &[],
});

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
        KEYPHRASES
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
        CLOSED_QUESTIONS
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
        SUMMARY_ANSWERS
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
        COHERENCE_RATING
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
