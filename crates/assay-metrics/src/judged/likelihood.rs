//! Grounding verdicts read from likelihoods ([`Protocol::Likelihood`]).
//!
//! [`Protocol::Likelihood`]: crate::judged::Protocol::Likelihood
//!
//! A small model asked "is this supported?" answers close to chance; the
//! same model reading the response as its own answer does better. The
//! judge is given the response to score twice: as its answer to the
//! question with the contexts ([`GROUNDED_REPLY`]) and without
//! them ([`OPEN_REPLY`]). Per token, a gain is
//! log P(token | with contexts) − w × log P(token | without); with a
//! weight w of 1 it is the pointwise mutual information of the response's
//! words with the contexts. Words the contexts state become much more
//! likely; words they do not state do not, and words they speak against
//! become less likely than without them.
//!
//! Two readings of the mean gain over a text's tokens: [`SUPPORT`] (the
//! contexts state it) and [`CONTRADICTION`] (they speak against it), each
//! a weight and a threshold in nats; a verdict's probability is a logistic
//! of the distance to the threshold, with scale [`WIDTH`]. Weights and
//! thresholds were chosen on the tuning rows of `data/calibration/`
//! (HaluEval QA pairs and RAGTruth rows ranked 51–70), not on the rows the
//! README reports.
//!
//! What it cannot see: a statement the judge knows without the contexts
//! (common knowledge) gains little from them, and may read unsupported
//! even when they state it.
//!
//! ```
//! use assay_metrics::judged::likelihood::{reply_answer, CONTRADICTION, SUPPORT};
//! // Words a nat a token likelier with the contexts than their weighted
//! // reading without are stated by them; a context that makes the
//! // response a nat a token less likely than the question alone speaks
//! // against it.
//! assert!(SUPPORT.probability(SUPPORT.threshold + 1.0) > 0.8);
//! assert!(CONTRADICTION.probability(-1.0) < 0.2);
//! let answer = reply_answer([("Paris", -0.1), (".", -0.2)]);
//! assert_eq!(answer["tokens"][0][0], "Paris");
//! ```

use crate::judged::answer::CHOICE_PROBABILITIES;
use crate::judged::prompt::PromptDecl;
use crate::judged::prompt::Protocol;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{PromptId, PromptSet, SlotValue};
use crate::judged::request::{user_message, JudgeRequest, Message, Role};
use crate::judged::step::Filled;
use crate::judged::step::Problem;
use crate::judged::step::StepKey;
use crate::judged::steps;
use serde_json::{json, Value};
use std::ops::Range;

/// The question put with the contexts, whose answer is the response read under [`crate::judged::Protocol::Likelihood`].
pub const GROUNDED_REPLY: PromptId = PromptId(&PromptDecl {
    name: "grounded_reply",
    text: include_str!("../../prompts/grounded_reply.json"),
    slots: &[("contexts", List), ("question", Text)],
    counts: &[],
    per_item: &[],
});

/// The same question without the contexts: the baseline of [`GROUNDED_REPLY`].
pub const OPEN_REPLY: PromptId = PromptId(&PromptDecl {
    name: "open_reply",
    text: include_str!("../../prompts/open_reply.json"),
    slots: &[("question", Text)],
    counts: &[],
    per_item: &[],
});

/// The scale, in nats a token, of the logistic that turns a gain into the
/// verdict's probability.
pub const WIDTH: f64 = 0.5;

/// One reading of the gain: how much of the open reading's
/// log-probability it takes away, and from which mean gain (nats a
/// token) the reading holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    pub weight: f64,
    pub threshold: f64,
}

impl Reading {
    /// The mean gain of tokens read `with` and without (`open`) the
    /// contexts, as (log-probability with, without) pairs.
    pub fn gain(&self, tokens: &[(f64, f64)]) -> f64 {
        let n = tokens.len() as f64;
        tokens.iter().map(|(w, o)| w - self.weight * o).sum::<f64>() / n
    }

    /// The probability that the reading holds at mean gain `gain`.
    pub fn probability(&self, gain: f64) -> f64 {
        1.0 / (1.0 + (-(gain - self.threshold) / WIDTH).exp())
    }
}

/// The contexts state a text. Weight: read with these prompts by the
/// default judge on the tuning rows (one score per response), 0.75 ranked
/// RAGTruth with ROC-AUC 0.78 and HaluEval QA with 0.93; 1 gave 0.74 and
/// 0.96, 0.5 gave 0.80 and 0.85. Threshold: 0.25 was the most accurate on
/// RAGTruth's tuning rows (0.78 of the rows right; 0.63 at 0, 0.68 at 0.5)
/// and right on 0.88 of HaluEval QA's (0.90 at 0.75, the best there).
pub const SUPPORT: Reading = Reading {
    weight: 0.75,
    threshold: 0.25,
};

/// The contexts speak against a text: they make it less likely than the
/// question alone does (the mutual information below 0); a context the
/// text does not use leaves it about as likely. On the tuning rows read
/// per context, the faithful RAGTruth responses had 3% of their contexts
/// called contradicted this way, against 38% with [`SUPPORT`] failing,
/// and the rows ranked better (ROC-AUC 0.67 against 0.66 on RAGTruth,
/// 0.96 against 0.93 on HaluEval QA).
pub const CONTRADICTION: Reading = Reading {
    weight: 1.0,
    threshold: 0.0,
};

/// Which list prompt's verdicts are read from likelihoods, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Per statement (a sentence of the response, under this protocol),
    /// against all the contexts together: `yes` when they state it
    /// ([`SUPPORT`]), else `no` when they speak against it
    /// ([`CONTRADICTION`]), else `idk` ([`steps::FAITHFULNESS_VERDICTS`]).
    Statements,
    /// Per context, read alone against the whole response: `yes` (the
    /// response contradicts it) when it speaks against the response
    /// ([`CONTRADICTION`]), else `no` ([`steps::CONTRADICTIONS`]).
    Contexts,
}

impl Form {
    /// How the verdicts of list prompt `id` are read from likelihoods
    /// under `protocol`, if they are.
    pub fn under(protocol: Protocol, id: PromptId) -> Option<Form> {
        const FORMS: [(PromptId, Form); 2] = [
            (steps::FAITHFULNESS_VERDICTS, Form::Statements),
            (steps::CONTRADICTIONS, Form::Contexts),
        ];
        FORMS
            .iter()
            .find(|(p, _)| *p == id)
            .map(|(_, form)| *form)
            .filter(|_| protocol == Protocol::Likelihood)
    }

    /// The verdict on a text whose tokens read (with, without) the
    /// contexts as `tokens`: its label, the probability of each label, and
    /// the gains as its reason.
    fn verdict(self, tokens: &[(f64, f64)]) -> Value {
        if tokens.is_empty() {
            // Only an empty response has no token: it contradicts nothing
            // and states nothing.
            let label = match self {
                Form::Statements => "idk",
                Form::Contexts => "no",
            };
            return json!({"verdict": label, "reason": "the response has no words to read"});
        }
        let (support, against) = (SUPPORT.gain(tokens), CONTRADICTION.gain(tokens));
        let p_against = 1.0 - CONTRADICTION.probability(against);
        let mutual = format!(
            "the mutual information is {against:.2} nats a token (contradicted below {})",
            CONTRADICTION.threshold
        );
        let (label, probabilities, reason) = match self {
            Form::Statements => {
                let p_yes = SUPPORT.probability(support);
                let label = if support >= SUPPORT.threshold {
                    "yes"
                } else if against < CONTRADICTION.threshold {
                    "no"
                } else {
                    "idk"
                };
                let probabilities = json!({
                    "yes": p_yes,
                    "no": (1.0 - p_yes) * p_against,
                    "idk": (1.0 - p_yes) * (1.0 - p_against),
                });
                let reason = format!(
                    "its words gain {support:.2} nats a token from the contexts \
                     (supported from {}); {mutual}",
                    SUPPORT.threshold
                );
                (label, probabilities, reason)
            }
            Form::Contexts => {
                let label = if against < CONTRADICTION.threshold {
                    "yes"
                } else {
                    "no"
                };
                let probabilities = json!({"yes": p_against, "no": 1.0 - p_against});
                (label, probabilities, format!("with this context, {mutual}"))
            }
        };
        json!({
            "verdict": label,
            "reason": reason,
            CHOICE_PROBABILITIES: {"verdict": probabilities},
        })
    }
}

/// The answer of a scored reply as the engine hands it on: each token's
/// text and log-probability, in order (`{"tokens": [[text, logprob], ...]}`).
pub fn reply_answer<'a>(tokens: impl IntoIterator<Item = (&'a str, f64)>) -> Value {
    json!({"tokens": tokens.into_iter().map(|(t, lp)| json!([t, lp])).collect::<Vec<_>>()})
}

/// The tokens of a [`reply_answer`].
pub fn reply_tokens(answer: &Value) -> Result<Vec<(&str, f64)>, Problem> {
    let shape = |at: &str| Problem::Shape {
        at: at.to_string(),
        expected: "[text, log-probability]",
    };
    answer
        .get("tokens")
        .and_then(Value::as_array)
        .ok_or(Problem::Shape {
            at: "$.tokens".into(),
            expected: "the scored reply's tokens",
        })?
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let at = format!("$.tokens[{i}]");
            match t.as_array().map(Vec::as_slice) {
                Some([Value::String(text), lp]) => {
                    let lp = lp.as_f64().ok_or_else(|| shape(&at))?;
                    if lp.is_nan() || lp > 0.0 {
                        return Err(Problem::OutOfRange {
                            at,
                            got: lp.to_string(),
                        });
                    }
                    Ok((text.as_str(), lp))
                }
                _ => Err(shape(&at)),
            }
        })
        .collect()
}

/// How the answers of a step's likelihood requests become its list
/// prompt's answer: which grounded request and which bytes of the reply
/// each verdict reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Scoring {
    form: Form,
    reply: String,
    /// Per verdict, what it reads. The open request comes after all
    /// grounded ones.
    verdicts: Vec<Read>,
    grounded: usize,
}

/// What one verdict reads: the index of its grounded request, and its
/// span of the reply.
type Read = (usize, Range<usize>);

/// The requests of a step whose list prompt has a likelihood form: the
/// grounded ones (one with every context for [`Form::Statements`], one
/// per context for [`Form::Contexts`]), then the open one, each scoring
/// `reply`; and how their answers become the step's verdicts.
pub(crate) fn requests(
    prompts: &PromptSet,
    step: &StepKey,
    filled: &Filled,
    reply: &str,
    form: Form,
) -> (Vec<JudgeRequest>, Scoring) {
    let list = |name: &str| match filled.slots.get(name) {
        Some(SlotValue::List(items)) => items.clone(),
        _ => Vec::new(),
    };
    let contexts = list("contexts");
    let (grounded, verdicts): (Vec<Vec<String>>, Vec<Read>) = match form {
        Form::Statements => {
            let statements = list("statements");
            (vec![contexts], spans(reply, &statements))
        }
        Form::Contexts => {
            let n = contexts.len();
            (
                contexts.into_iter().map(|c| vec![c]).collect(),
                (0..n).map(|i| (i, 0..reply.len())).collect(),
            )
        }
    };
    let ask = |id: PromptId, contexts: Option<Vec<String>>| {
        let prompt = prompts.get(id);
        let contexts = contexts.map(SlotValue::List);
        let slot = |name: &str| match (name, &contexts) {
            ("contexts", Some(c)) => Some(c),
            _ => filled.slots.get(name),
        };
        JudgeRequest {
            step: step.clone(),
            prompt_id: id,
            prompt_version: prompt.version,
            prompt_hash: prompt.hash.clone(),
            messages: vec![
                Message {
                    role: Role::System,
                    content: prompt.instruction.trim_end().to_string(),
                },
                Message {
                    role: Role::User,
                    content: user_message(prompt, slot, &[]),
                },
            ],
            schema: Value::Null,
            temperature: 0.0,
            n_votes: 1,
            continuation: Some(reply.to_string()),
        }
    };
    let n_grounded = grounded.len();
    let mut items: Vec<JudgeRequest> = grounded
        .into_iter()
        .map(|c| ask(GROUNDED_REPLY, Some(c)))
        .collect();
    items.push(ask(OPEN_REPLY, None));
    let scoring = Scoring {
        form,
        reply: reply.to_string(),
        verdicts,
        grounded: n_grounded,
    };
    (items, scoring)
}

/// Where each statement lies in the reply, searched in order; one not
/// found (it cannot be, as statements are the reply's sentences under
/// this protocol) reads the whole reply.
fn spans(reply: &str, statements: &[String]) -> Vec<Read> {
    let mut from = 0;
    statements
        .iter()
        .map(|s| match reply[from..].find(s.as_str()) {
            Some(at) if !s.is_empty() => {
                let start = from + at;
                from = start + s.len();
                (0, start..from)
            }
            _ => (0, 0..reply.len()),
        })
        .collect()
}

impl Scoring {
    /// How many verdicts the answers give.
    pub fn verdict_count(&self) -> usize {
        self.verdicts.len()
    }

    /// Checks one request's answer: a scored reply.
    pub fn check(&self, answer: &Value) -> Result<(), Problem> {
        reply_tokens(answer).map(drop)
    }

    /// The list prompt's answer: one verdict per item, with its reason and
    /// its probabilities, from the answers of [`requests`] in order.
    pub fn join(&self, answers: &[Value]) -> Result<Value, Problem> {
        let parsed = answers
            .iter()
            .map(reply_tokens)
            .collect::<Result<Vec<_>, _>>()?;
        let Some((open, grounded)) = parsed.split_last() else {
            return Err(Problem::WrongCount {
                at: "$".into(),
                expected: self.grounded + 1,
                got: 0,
            });
        };
        if grounded.len() != self.grounded {
            return Err(Problem::WrongCount {
                at: "$".into(),
                expected: self.grounded + 1,
                got: answers.len(),
            });
        }
        let offsets = byte_ranges(open);
        let spelled: String = open.iter().map(|(t, _)| *t).collect();
        if spelled != self.reply {
            return Err(Problem::Shape {
                at: "$.tokens".into(),
                expected: "tokens that spell the response",
            });
        }
        let mut verdicts = Vec::with_capacity(self.verdicts.len());
        for (g, span) in &self.verdicts {
            let with = &grounded[*g];
            if with.len() != open.len() || with.iter().zip(open).any(|(a, b)| a.0 != b.0) {
                return Err(Problem::Shape {
                    at: format!("$[{g}].tokens"),
                    expected: "the same tokens with and without the contexts",
                });
            }
            let tokens: Vec<(f64, f64)> = offsets
                .iter()
                .enumerate()
                .filter(|(_, r)| overlaps(r, span))
                .map(|(i, _)| (with[i].1, open[i].1))
                .collect();
            verdicts.push(self.form.verdict(&tokens));
        }
        Ok(json!({"verdicts": verdicts}))
    }
}

/// Each token's byte range in the text they spell together.
fn byte_ranges(tokens: &[(&str, f64)]) -> Vec<Range<usize>> {
    let mut at = 0;
    tokens
        .iter()
        .map(|(t, _)| {
            let r = at..at + t.len();
            at = r.end;
            r
        })
        .collect()
}

/// Whether a token's bytes meet a span (a token that completes a
/// character has them all; one holding none sits where it starts).
fn overlaps(token: &Range<usize>, span: &Range<usize>) -> bool {
    if token.is_empty() {
        return span.contains(&token.start);
    }
    token.start < span.end && token.end > span.start
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::render::{render, ItemRequests, Request};
    use crate::judged::step::{Inputs, Label, Outputs, StepOutput, Verdict};
    use crate::judged::{steps, validate};

    fn sample(row: Value) -> assay_core::Sample {
        assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap()
    }

    fn requests_of(step: &StepKey, row: Value, outputs: &Outputs) -> ItemRequests {
        let prompts = PromptSet::builtin()
            .unwrap()
            .with_protocol(Protocol::Likelihood);
        let s = sample(row);
        match render(&prompts, step, &Inputs::new(&s, outputs)).unwrap() {
            Request::Items(req) => req,
            other => panic!("{other:?}"),
        }
    }

    /// The verdicts `joined` validates to, as the engine would check it.
    fn verdicts(step: &StepKey, row: Value, outputs: &Outputs, joined: &Value) -> Vec<Verdict> {
        let s = sample(row);
        match validate(step, &Inputs::new(&s, outputs), joined).unwrap() {
            StepOutput::Verdicts(v) => v,
            other => panic!("{other:?}"),
        }
    }

    /// The worked example: "Paris is in France. It has 3 towers. It is
    /// old." in 8 tokens, read (with, without) the contexts.
    /// - "Paris is in France.": (-1, -4), (-1, -3), (-2, -3). Support
    ///   gains 2, 1.25, 0.25, mean 7/6 >= 0.25: yes.
    /// - "It has 3 towers.": (-2.5, -2), (-3.5, -3), (-2, -2). Support
    ///   -11/12; mutual information -0.5, -0.5, 0, mean -1/3 < 0: no.
    /// - "It is old.": (-1.9, -2), (-2, -2). Support -0.45; mutual
    ///   information 0.05: idk.
    #[test]
    fn each_statement_reads_its_own_tokens_gain() {
        let reply = "Paris is in France. It has 3 towers. It is old.";
        let row = json!({"user_input": "Where is Paris?", "response": reply, "retrieved_contexts": ["Paris is in France."]});
        let mut outputs = Outputs::new();
        let sentences = ["Paris is in France.", "It has 3 towers.", "It is old."];
        outputs.insert(
            steps::response_statements(),
            StepOutput::Texts(sentences.map(String::from).to_vec()),
        );
        let req = requests_of(&steps::statement_verdicts(), row.clone(), &outputs);
        assert_eq!(req.items.len(), 2);
        assert_eq!(req.items[0].prompt_id, GROUNDED_REPLY);
        assert!(req.items[0].messages[1]
            .content
            .contains("Paris is in France."));
        assert!(!req.items[1].messages[1].content.contains("France"));
        assert_eq!(req.items[1].continuation.as_deref(), Some(reply));
        let texts = [
            "Paris is", " in", " France.", " It has", " 3", " towers.", " It is", " old.",
        ];
        let with = [-1.0, -1.0, -2.0, -2.5, -3.5, -2.0, -1.9, -2.0];
        let open = [-4.0, -3.0, -3.0, -2.0, -3.0, -2.0, -2.0, -2.0];
        let grounded = reply_answer(texts.iter().copied().zip(with));
        let baseline = reply_answer(texts.iter().copied().zip(open));
        let joined = req.join(vec![grounded, baseline]).unwrap();
        let v = verdicts(&steps::statement_verdicts(), row, &outputs, &joined);
        let labels: Vec<Label> = v.iter().map(|v| v.verdict).collect();
        assert_eq!(labels, [Label::Yes, Label::No, Label::Idk]);
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9;
        assert!(close(
            v[0].probability(Label::Yes),
            SUPPORT.probability(7.0 / 6.0)
        ));
        let (p_yes, p_against) = (
            SUPPORT.probability(-11.0 / 12.0),
            1.0 - CONTRADICTION.probability(-1.0 / 3.0),
        );
        assert!(close(
            v[1].probability(Label::No),
            (1.0 - p_yes) * p_against
        ));
        assert!(close(
            v[1].probability(Label::Idk),
            (1.0 - p_yes) * (1.0 - p_against)
        ));
        assert!(v[1].reason.contains("gain -0.92 nats"), "{}", v[1].reason);
        assert!(v[1].reason.contains("is -0.33 nats"), "{}", v[1].reason);
    }

    /// Per context, the whole response against that context alone, with
    /// the mutual information: the first makes its tokens 0.2 + 0.2 -
    /// 0.2 = 0.2 nats less likely in all (mean -0.07: contradicted); the
    /// second, which states it, 4.5 + 1.5 + 0.5 more (not); the third,
    /// about something else, makes the first 0.1 nats likelier (not).
    #[test]
    fn each_context_is_read_alone_against_the_whole_response() {
        let row = json!({"user_input": "Who wrote it?", "response": "Charlotte wrote it.", "retrieved_contexts": ["Jane Austen wrote it.", "Charlotte wrote it.", "It rained."]});
        let outputs = Outputs::new();
        let req = requests_of(&steps::contradictions(), row.clone(), &outputs);
        assert_eq!(req.items.len(), 4);
        assert!(req.items[0].messages[1].content.contains("Jane Austen"));
        assert!(!req.items[0].messages[1].content.contains("Charlotte wrote"));
        let texts = ["Charlotte", " wrote", " it."];
        let at = |lps: [f64; 3]| reply_answer(texts.iter().copied().zip(lps));
        let joined = req
            .join(vec![
                at([-6.2, -2.2, -0.8]),
                at([-1.5, -0.5, -0.5]),
                at([-5.9, -2.0, -1.0]),
                at([-6.0, -2.0, -1.0]),
            ])
            .unwrap();
        let v = verdicts(&steps::contradictions(), row, &outputs, &joined);
        let labels: Vec<Label> = v.iter().map(|v| v.verdict).collect();
        assert_eq!(labels, [Label::Yes, Label::No, Label::No]);
        assert!(v[0].reason.contains("is -0.07 nats"), "{}", v[0].reason);
        let p = 1.0 - CONTRADICTION.probability(-0.2 / 3.0);
        assert!((v[0].probability(Label::Yes).unwrap() - p).abs() < 1e-9);
    }

    #[test]
    fn tokens_that_differ_between_the_two_readings_are_a_problem() {
        let row = json!({"response": "Rome.", "retrieved_contexts": ["Rome."]});
        let req = requests_of(&steps::contradictions(), row, &Outputs::new());
        let a = reply_answer([("Rome", -1.0), (".", -1.0)]);
        let b = reply_answer([("Ro", -1.0), ("me.", -1.0)]);
        let err = req.join(vec![a, b]).unwrap_err();
        assert!(err.to_string().contains("same tokens"), "{err}");
        let short = reply_answer([("Rom", -1.0)]);
        let err = req.join(vec![short.clone(), short]).unwrap_err();
        assert!(err.to_string().contains("spell the response"), "{err}");
    }

    #[test]
    fn a_malformed_reply_answer_names_the_place() {
        let err = reply_tokens(&json!({"tokens": [["a", -1.0], ["b", 0.5]]})).unwrap_err();
        assert_eq!(err.to_string(), "$.tokens[1]: 0.5 is out of range");
        let err = reply_tokens(&json!({"tokens": [["a"]]})).unwrap_err();
        assert!(err.to_string().starts_with("$.tokens[0]"), "{err}");
    }
}
