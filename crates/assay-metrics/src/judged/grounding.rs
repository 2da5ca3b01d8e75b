//! Closed grounding questions answered by the grounding model
//! ([`Protocol::Grounding`]), with no judge asked: "is this claim
//! supported by this text?" from the lexical features and trained
//! logistic model of `assay_grounding`. Each verdict keeps its
//! probabilities (the soft score `calibrate` ranks by) and a reason that
//! names its evidence (the closest sentence, the words the text lacks).
//!
//! [`Protocol::Grounding`]: crate::judged::Protocol::Grounding
//!
//! The questions, by list prompt:
//! - statements against the question and contexts (faithfulness,
//!   context_recall's attribution): `yes` when supported; otherwise `no`
//!   (contradicted) when the closest sentence holds at least half of the
//!   statement's content words (it speaks of the same thing, and says
//!   otherwise), else `idk`;
//! - each context's usefulness for an answer (context_precision): the
//!   share of the answer's content words outside the question that the
//!   context holds, useful from [`USEFUL_FROM`]; a rule, not trained (no
//!   labelled data for usefulness was at hand);
//! - each context contradicted by the response (hallucination): some
//!   sentence of the response is unsupported by the question and all the
//!   contexts, and shares its words with this context (probability: the
//!   largest of P(unsupported) x min(1, 2 x the share of the sentence's
//!   content words the context and question hold));
//! - statement matches of answer_correctness: each response statement
//!   against the reference's statements, each reference statement against
//!   the response's.

use crate::judged::prompt::{PromptId, SlotValue};
use crate::judged::render::Filled;
use crate::judged::step::{Label, StepOutput, Verdict};
use assay_grounding::{Judgement, Model, Support};

/// The share of an answer's own words a context must hold to be useful.
pub const USEFUL_FROM: f64 = 0.25;

/// The slope of the logistic that turns that share into P(useful).
const USEFUL_SLOPE: f64 = 12.0;

/// Which grounding question a list prompt asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Per statement against the contexts: yes, no or idk.
    Statements,
    /// Per statement against the contexts: yes or no.
    Attribution,
    /// Per context: useful for the answer.
    Usefulness,
    /// Per context: contradicted by the response.
    Contradictions,
    /// Response statements against the reference's and back.
    Correctness,
}

impl Form {
    /// The form of list prompt `id`, if the grounding model answers it.
    pub fn of(id: PromptId) -> Option<Form> {
        match id {
            PromptId::FaithfulnessVerdicts => Some(Form::Statements),
            PromptId::ReferenceAttribution => Some(Form::Attribution),
            PromptId::ContextUsefulness => Some(Form::Usefulness),
            PromptId::Contradictions => Some(Form::Contradictions),
            PromptId::CorrectnessClassification => Some(Form::Correctness),
            _ => None,
        }
    }

    /// The step's output for the filled slots of its list prompt.
    pub fn answer(self, filled: &Filled) -> StepOutput {
        let text = |name: &str| match filled.slots.get(name) {
            Some(SlotValue::Text(t)) => t.as_str(),
            _ => "",
        };
        let list = |name: &str| match filled.slots.get(name) {
            Some(SlotValue::List(items)) => items.as_slice(),
            _ => &[],
        };
        let model = Model::builtin();
        let with_question = |texts: &[String]| {
            Support::new(std::iter::once(text("question")).chain(texts.iter().map(String::as_str)))
        };
        match self {
            Form::Statements | Form::Attribution => {
                let support = with_question(list("contexts"));
                let three = self == Form::Statements;
                StepOutput::Verdicts(
                    list("statements")
                        .iter()
                        .map(|s| statement(&model.judge(s, &support), three))
                        .collect(),
                )
            }
            Form::Usefulness => StepOutput::Verdicts(
                list("contexts")
                    .iter()
                    .map(|c| usefulness(text("question"), text("answer"), c))
                    .collect(),
            ),
            Form::Contradictions => {
                let contexts = list("contexts");
                let all = with_question(contexts);
                let sentences = assay_text::sentences::split_sentences(text("response"));
                let judged: Vec<Judgement> =
                    sentences.iter().map(|s| model.judge(s, &all)).collect();
                StepOutput::Verdicts(
                    contexts
                        .iter()
                        .map(|c| {
                            contradiction(
                                &sentences,
                                &judged,
                                &with_question(std::slice::from_ref(c)),
                            )
                        })
                        .collect(),
                )
            }
            Form::Correctness => {
                let response = list("response_statements");
                let reference = list("reference_statements");
                let against = |claims: &[String], other: &[String]| {
                    let support = Support::new(other.iter().map(String::as_str));
                    claims
                        .iter()
                        .map(|s| statement(&model.judge(s, &support), false))
                        .collect()
                };
                StepOutput::Classification {
                    response: against(response, reference),
                    reference: against(reference, response),
                }
            }
        }
    }
}

/// A statement's verdict: yes when supported; with `three` labels, no
/// when the closest sentence speaks of the same thing, else idk.
fn statement(j: &Judgement, three: bool) -> Verdict {
    let p = j.probability;
    let (verdict, probabilities) = if three {
        let aligned = j.features.best_sentence_recall();
        let against = if aligned >= 0.5 { 1.0 } else { 0.0 };
        let label = match (j.supported(), aligned >= 0.5) {
            (true, _) => Label::Yes,
            (false, true) => Label::No,
            (false, false) => Label::Idk,
        };
        (
            label,
            vec![
                (Label::Yes, p),
                (Label::No, (1.0 - p) * against),
                (Label::Idk, (1.0 - p) * (1.0 - against)),
            ],
        )
    } else {
        let label = if j.supported() { Label::Yes } else { Label::No };
        (label, vec![(Label::Yes, p), (Label::No, 1.0 - p)])
    };
    Verdict {
        verdict,
        reason: j.reason(),
        probabilities: Some(probabilities),
    }
}

fn usefulness(question: &str, answer: &str, context: &str) -> Verdict {
    let share = assay_grounding::features::answer_coverage(question, answer, context);
    let p = 1.0 / (1.0 + (-(share - USEFUL_FROM) * USEFUL_SLOPE).exp());
    let verdict = if share >= USEFUL_FROM {
        Label::Yes
    } else {
        Label::No
    };
    Verdict {
        verdict,
        reason: format!(
            "the context holds {:.0}% of the answer's words outside the question (useful from {:.0}%)",
            share * 100.0,
            USEFUL_FROM * 100.0
        ),
        probabilities: Some(vec![(Label::Yes, p), (Label::No, 1.0 - p)]),
    }
}

fn contradiction(sentences: &[&str], judged: &[Judgement], context: &Support) -> Verdict {
    let mut worst: Option<(f64, usize)> = None;
    for (i, (s, j)) in sentences.iter().zip(judged).enumerate() {
        let shared = assay_grounding::Features::of(s, context).best_sentence_recall();
        let p = (1.0 - j.probability) * (2.0 * shared).min(1.0);
        if worst.is_none_or(|(w, _)| p > w) {
            worst = Some((p, i));
        }
    }
    let (p, reason) = match worst {
        Some((p, i)) => (
            p,
            format!(
                "P(contradicted) {p:.2}, from the sentence \"{}\": {}",
                sentences[i],
                judged[i].reason()
            ),
        ),
        None => (0.0, "the response has no sentence".to_string()),
    };
    Verdict {
        verdict: if p >= 0.5 { Label::Yes } else { Label::No },
        reason,
        probabilities: Some(vec![(Label::Yes, p), (Label::No, 1.0 - p)]),
    }
}
