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
//!   content words the context's closest sentence holds));
//! - statement matches of answer_correctness: each response statement
//!   against the reference's statements, each reference statement against
//!   the response's;
//! - summarization_score's answers, only where a model is given (the
//!   lexical model was never measured on questions): each closed question
//!   with its expected answer, "{question} Yes.", against the summary. A
//!   claim is what the models are trained to check, and a bare question
//!   reads as neither entailed nor contradicted.

use crate::judged::prompt::{GroundingModel, PromptId, PromptSet, Protocol, SlotValue};
use crate::judged::step::Filled;
use crate::judged::step::{Label, StepOutput, Verdict};
use crate::judged::steps;
use assay_grounding::words::Lexicon;
use assay_grounding::{language, Judgement, Support, Verified};

/// The list slots of the grounding questions, whose texts tell a row's
/// language.
const SLOT_LISTS: [&str; 5] = [
    "contexts",
    "statements",
    "response_statements",
    "reference_statements",
    "questions",
];

/// The share of an answer's own words a context must hold to be useful.
pub const USEFUL_FROM: f64 = 0.25;

/// The slope of the logistic that turns that share into P(useful).
const USEFUL_SLOPE: f64 = 12.0;

/// An answer of fewer words is a bare phrase ("In 1879."), which a
/// grounding model reads as a claim only after its question.
const BARE_ANSWER_WORDS: usize = 6;

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
    /// Per closed question: the summary answers yes.
    SummaryAnswers,
}

impl Form {
    /// How the grounding model answers list prompt `id` of `prompts`, if
    /// it does: under the grounding protocol, or under any where a
    /// grounding model is given.
    pub fn under(prompts: &PromptSet, id: PromptId) -> Option<Form> {
        const FORMS: [(PromptId, Form); 6] = [
            (steps::FAITHFULNESS_VERDICTS, Form::Statements),
            (steps::REFERENCE_ATTRIBUTION, Form::Attribution),
            (steps::CONTEXT_USEFULNESS, Form::Usefulness),
            (steps::CONTRADICTIONS, Form::Contradictions),
            (steps::CORRECTNESS_CLASSIFICATION, Form::Correctness),
            (steps::SUMMARY_ANSWERS, Form::SummaryAnswers),
        ];
        let given = prompts.grounding().is_some();
        FORMS
            .iter()
            .find(|(p, _)| *p == id)
            .map(|(_, form)| *form)
            .filter(|form| match form {
                Form::SummaryAnswers => given,
                _ => given || prompts.protocol() == Protocol::Grounding,
            })
    }

    /// The step's output for the filled slots of its list prompt, from
    /// the grounding model of `prompts` where one is given, else from the
    /// lexical model (an alignment's combiner, or the built-in one); a
    /// model that fails gives the error it names.
    pub fn answer(self, filled: &Filled, prompts: &PromptSet) -> Result<StepOutput, String> {
        let model = prompts.grounding();
        let text = |name: &str| match filled.slots.get(name) {
            Some(SlotValue::Text(t)) => t.as_str(),
            _ => "",
        };
        let list = |name: &str| match filled.slots.get(name) {
            Some(SlotValue::List(items)) => items.as_slice(),
            _ => &[],
        };
        let (lexical, _) = prompts.combiner();
        let lexicon = match prompts.language() {
            Some(given) => given,
            None => {
                let mut texts = vec![
                    text("question"),
                    text("answer"),
                    text("response"),
                    text("summary"),
                ];
                for name in SLOT_LISTS {
                    texts.extend(list(name).iter().map(String::as_str));
                }
                // A given model may read what the words cannot: its
                // probability decides, the words only name what is missing.
                match (language::lexicon_of(&texts), model) {
                    (Ok(lexicon), _) => lexicon,
                    (Err(_), Some(_)) => Lexicon::ENGLISH,
                    (Err(unsupported), None) => {
                        return Err(format!("unsupported_language: {unsupported}"))
                    }
                }
            }
        };
        let support = |texts: &mut dyn Iterator<Item = &str>| Support::in_language(texts, lexicon);
        let with_question = |texts: &[String]| {
            support(&mut std::iter::once(text("question")).chain(texts.iter().map(String::as_str)))
        };
        // The lexical verdicts, with a given model's probability in place
        // of the lexical one: the words still tell "says otherwise" (no)
        // from "says nothing of it" (idk), and name what is missing.
        let judged = |claims: &[String], sources: &[String], support: &Support| {
            let lexical: Vec<Judged> = claims
                .iter()
                .map(|c| Judged::Lexical(lexical.judge(c, support)))
                .collect();
            match model {
                None => Ok::<_, String>(lexical),
                Some(m) => {
                    let verified = m.0.verify(&strs(claims), &strs(sources))?;
                    Ok(lexical
                        .into_iter()
                        .zip(verified)
                        .map(|(l, v)| match l {
                            Judged::Lexical(j) => Judged::Model {
                                lexical: j,
                                verified: v,
                                threshold: m.0.threshold(),
                            },
                            model @ Judged::Model { .. } => model,
                        })
                        .collect())
                }
            }
        };
        Ok(match self {
            Form::Statements | Form::Attribution => {
                let contexts = list("contexts");
                let three = self == Form::Statements;
                let verdicts = judged(list("statements"), contexts, &with_question(contexts))?;
                StepOutput::Verdicts(verdicts.iter().map(|j| statement(j, three)).collect())
            }
            Form::Usefulness => StepOutput::Verdicts(
                list("contexts")
                    .iter()
                    .map(|c| usefulness(text("question"), text("answer"), c, model, &lexicon))
                    .collect::<Result<_, _>>()?,
            ),
            Form::Contradictions => {
                let contexts = list("contexts");
                let all = with_question(contexts);
                let sentences: Vec<String> =
                    assay_text::sentences::split_sentences(text("response"))
                        .into_iter()
                        .map(String::from)
                        .collect();
                let judged = judged(&sentences, contexts, &all)?;
                StepOutput::Verdicts(
                    contexts
                        .iter()
                        .map(|c| {
                            let context = support(&mut std::iter::once(c.as_str()));
                            contradiction(&sentences, &judged, &context)
                        })
                        .collect(),
                )
            }
            Form::Correctness => {
                let response = list("response_statements");
                let reference = list("reference_statements");
                let against =
                    |claims: &[String], other: &[String]| -> Result<Vec<Verdict>, String> {
                        let support = support(&mut other.iter().map(String::as_str));
                        let sources = [other.join(" ")];
                        let verdicts = judged(claims, &sources, &support)?;
                        Ok(verdicts.iter().map(|j| statement(j, false)).collect())
                    };
                StepOutput::Classification {
                    response: against(response, reference)?,
                    reference: against(reference, response)?,
                }
            }
            Form::SummaryAnswers => {
                let claims: Vec<String> =
                    list("questions").iter().map(|q| answered_yes(q)).collect();
                let summary = [text("summary").to_string()];
                let verdicts = judged(
                    &claims,
                    &summary,
                    &support(&mut summary.iter().map(String::as_str)),
                )?;
                StepOutput::Verdicts(verdicts.iter().map(|j| statement(j, false)).collect())
            }
        })
    }
}

/// A closed question as the claim a grounding model checks: the question
/// with its expected answer.
pub fn answered_yes(question: &str) -> String {
    format!("{} Yes.", question.trim())
}

fn strs(items: &[String]) -> Vec<&str> {
    items.iter().map(String::as_str).collect()
}

/// One claim's verdict: the lexical model's, or a given model's
/// probability beside the lexical features.
enum Judged {
    Lexical(Judgement),
    Model {
        lexical: Judgement,
        verified: Verified,
        threshold: f64,
    },
}

impl Judged {
    fn probability(&self) -> f64 {
        match self {
            Judged::Lexical(j) => j.probability,
            Judged::Model { verified, .. } => verified.probability,
        }
    }

    fn supported(&self) -> bool {
        match self {
            Judged::Lexical(j) => j.supported(),
            Judged::Model {
                verified,
                threshold,
                ..
            } => verified.probability >= *threshold,
        }
    }

    fn lexical(&self) -> &Judgement {
        match self {
            Judged::Lexical(j) | Judged::Model { lexical: j, .. } => j,
        }
    }

    /// The evidence: the closest sentence and missing words, or the
    /// model's best window.
    fn reason(&self) -> String {
        match self {
            Judged::Lexical(j) => j.reason(),
            Judged::Model {
                verified,
                threshold,
                ..
            } => verified.reason(*threshold),
        }
    }
}

/// A statement's verdict: yes when supported; with `three` labels, no
/// when the closest sentence speaks of the same thing, else idk.
fn statement(j: &Judged, three: bool) -> Verdict {
    let p = j.probability();
    let (verdict, probabilities) = if three {
        // Unsupported is `no` where the closest sentence speaks of the
        // same thing, else `idk`: all of P(unsupported) goes to that one.
        let unsupported = if j.lexical().features.best_sentence_recall() >= 0.5 {
            Label::No
        } else {
            Label::Idk
        };
        let label = if j.supported() {
            Label::Yes
        } else {
            unsupported
        };
        let other = if unsupported == Label::No {
            Label::Idk
        } else {
            Label::No
        };
        (
            label,
            vec![(Label::Yes, p), (unsupported, 1.0 - p), (other, 0.0)],
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

/// A context's usefulness for an answer: with a grounding model, whether
/// the context supports the answer (the question before it where the
/// answer is a bare phrase); else the share of the answer's own words it
/// holds.
fn usefulness(
    question: &str,
    answer: &str,
    context: &str,
    model: Option<&GroundingModel>,
    lexicon: &Lexicon,
) -> Result<Verdict, String> {
    if let Some(m) = model {
        let claim = if assay_grounding::features::words(answer).len() < BARE_ANSWER_WORDS {
            format!("{question} {answer}")
        } else {
            answer.to_string()
        };
        let v = m.0.verify(&[claim.as_str()], &[context])?;
        let p = v.first().map_or(0.0, |v| v.probability);
        let t = m.0.threshold();
        return Ok(Verdict {
            verdict: if p >= t { Label::Yes } else { Label::No },
            reason: format!("P(the context supports the answer) {p:.2} (useful from {t:.2})"),
            probabilities: Some(vec![(Label::Yes, p), (Label::No, 1.0 - p)]),
        });
    }
    let share = assay_grounding::features::answer_coverage(question, answer, context, lexicon);
    let p = 1.0 / (1.0 + (-(share - USEFUL_FROM) * USEFUL_SLOPE).exp());
    let verdict = if share >= USEFUL_FROM {
        Label::Yes
    } else {
        Label::No
    };
    Ok(Verdict {
        verdict,
        reason: format!(
            "the context holds {:.0}% of the answer's words outside the question (useful from {:.0}%)",
            share * 100.0,
            USEFUL_FROM * 100.0
        ),
        probabilities: Some(vec![(Label::Yes, p), (Label::No, 1.0 - p)]),
    })
}

fn contradiction(sentences: &[String], judged: &[Judged], context: &Support) -> Verdict {
    let mut worst: Option<(f64, usize)> = None;
    for (i, (s, j)) in sentences.iter().zip(judged).enumerate() {
        let shared = assay_grounding::Features::of(s, context).best_sentence_recall();
        let p = (1.0 - j.probability()) * (2.0 * shared).min(1.0);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::prompt::{PromptSet, Protocol};
    use crate::judged::render::{render, Request};
    use crate::judged::step::{Inputs, Outputs};
    use crate::judged::steps;
    use serde_json::json;

    fn resolved(
        step: &crate::judged::StepKey,
        row: serde_json::Value,
        outputs: &Outputs,
    ) -> StepOutput {
        let prompts = PromptSet::builtin()
            .unwrap()
            .with_protocol(Protocol::Grounding);
        let s = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
        match render(&prompts, step, &Inputs::new(&s, outputs)).unwrap() {
            Request::Resolved(out) => out,
            other => panic!("asked the judge: {other:?}"),
        }
    }

    fn labels(out: &StepOutput) -> Vec<Label> {
        match out {
            StepOutput::Verdicts(v) => v.iter().map(|v| v.verdict).collect(),
            other => panic!("{other:?}"),
        }
    }

    /// A stated sentence is supported; one that speaks of the same thing
    /// with other words is contradicted (no); one about something else is
    /// neither (idk). The probabilities of the three labels add to 1.
    #[test]
    fn statements_are_supported_contradicted_or_unknown() {
        let row = json!({"user_input": "Who wrote Pride and Prejudice?", "response": "x", "retrieved_contexts": ["Pride and Prejudice is an 1813 novel by Jane Austen."]});
        let mut outputs = Outputs::new();
        let statements = [
            "Pride and Prejudice is a novel by Jane Austen.",
            "Pride and Prejudice was written by Charlotte Brontë in 1813.",
            "Volcanoes erupt lava.",
        ];
        outputs.insert(
            steps::response_statements(),
            StepOutput::Texts(statements.map(String::from).to_vec()),
        );
        let out = resolved(&steps::statement_verdicts(), row, &outputs);
        assert_eq!(labels(&out), [Label::Yes, Label::No, Label::Idk]);
        let StepOutput::Verdicts(v) = out else {
            unreachable!()
        };
        for verdict in &v {
            let total: f64 = verdict
                .probabilities
                .as_ref()
                .unwrap()
                .iter()
                .map(|(_, p)| p)
                .sum();
            assert!((total - 1.0).abs() < 1e-12);
        }
        assert!(
            v[1].reason
                .contains("not in the text: written, charlotte, brontë"),
            "{}",
            v[1].reason
        );
    }

    /// Usefulness: the share of the answer's words outside the question
    /// that a context holds, from 25%.
    #[test]
    fn a_context_is_useful_when_it_holds_the_answer_s_own_words() {
        let row = json!({"user_input": "When was Einstein born?", "response": "In 1879 in Ulm.", "reference": "Einstein was born in 1879 in Ulm, Germany.",
            "retrieved_contexts": ["Einstein was born in 1879.", "Ulm is a city.", "Paris is in France."]});
        let out = resolved(
            &steps::context_usefulness(crate::judged::UsefulFor::Reference(0)),
            row,
            &Outputs::new(),
        );
        // Own words: 1879, ulm, germany: 1/3, 1/3, 0.
        assert_eq!(labels(&out), [Label::Yes, Label::Yes, Label::No]);
    }

    /// A context is contradicted when an unsupported sentence of the
    /// response shares its words; a context about something else is not.
    #[test]
    fn only_a_context_an_unsupported_sentence_speaks_of_is_contradicted() {
        let row = json!({"user_input": "Who wrote Pride and Prejudice?", "response": "Pride and Prejudice was written by Charlotte Brontë.",
            "retrieved_contexts": ["Pride and Prejudice is an 1813 novel by Jane Austen.", "Volcanoes erupt lava."]});
        let out = resolved(&steps::contradictions(), row, &Outputs::new());
        assert_eq!(labels(&out), [Label::Yes, Label::No], "{out:?}");
    }

    /// Statement matches both ways: "Mars" is the reference "Mars"; a
    /// reference statement the response leaves out is a false negative.
    #[test]
    fn correctness_matches_statements_both_ways() {
        let row = json!({"user_input": "q", "response": "x", "reference": "y"});
        let mut outputs = Outputs::new();
        outputs.insert(
            steps::response_statements(),
            StepOutput::Texts(vec!["Mars has two moons, Phobos and Deimos.".into()]),
        );
        outputs.insert(
            steps::reference_statements(0),
            StepOutput::Texts(vec![
                "Mars has two small moons: Phobos and Deimos.".into(),
                "Olympus Mons is a volcano on Mars.".into(),
            ]),
        );
        match resolved(&steps::correctness_classification(0), row, &outputs) {
            StepOutput::Classification {
                response,
                reference,
            } => {
                assert_eq!(
                    response.iter().map(|v| v.verdict).collect::<Vec<_>>(),
                    [Label::Yes]
                );
                assert_eq!(
                    reference.iter().map(|v| v.verdict).collect::<Vec<_>>(),
                    [Label::Yes, Label::No]
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
