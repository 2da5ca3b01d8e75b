//! Grounding verdicts read from likelihoods ([`Protocol::Likelihood`]).
//!
//! [`Protocol::Likelihood`]: crate::judged::Protocol::Likelihood
//!
//! A small model asked "is this supported?" answers close to chance; the
//! same model reading the response as its own answer does better. The
//! judge is given the response to score twice: as its answer to the
//! question with the contexts ([`PromptId::GroundedReply`]) and without
//! them ([`PromptId::OpenReply`]). Per token, the gain is
//! log P(token | with contexts) − w × log P(token | without), for the
//! form's [`Form::baseline_weight`] w: with a weight of 1 it is the
//! pointwise mutual information of the response's words with the
//! contexts. Words the contexts state become much more likely; words they
//! do not state do not, and words they contradict become less likely.
//!
//! A text is grounded when the mean gain over its tokens is at least the
//! form's [`Form::threshold`] in nats; the verdict's probability is a
//! logistic of the distance to it, with scale [`WIDTH`]. The weights and
//! thresholds were chosen on the tuning rows of `data/calibration/`
//! (HaluEval QA pairs and RAGTruth rows ranked 51–70), not on the rows the
//! README reports.
//!
//! What it cannot see: a statement the judge knows without the contexts
//! (common knowledge) gains little from them, and may read unsupported
//! even when they state it.
//!
//! ```
//! use assay_metrics::judged::likelihood::{reply_answer, verdict_probability, Form};
//! // A statement whose words gain a nat a token over the threshold is
//! // supported; a context that makes the response a nat a token less
//! // likely than the question alone contradicts it.
//! assert!(verdict_probability(Form::Statements, Form::Statements.threshold() + 1.0) > 0.8);
//! assert!(verdict_probability(Form::Contexts, -1.0) > 0.8);
//! let answer = reply_answer([("Paris", -0.1), (".", -0.2)]);
//! assert_eq!(answer["tokens"][0][0], "Paris");
//! ```

use crate::judged::prompt::{PromptId, PromptSet, SlotValue};
use crate::judged::render::{user_message, Filled, ItemRequests, JudgeRequest, Message, Role};
use crate::judged::step::StepKey;
use crate::judged::validate::{Problem, CHOICE_PROBABILITIES};
use serde_json::{json, Value};
use std::ops::Range;

/// The scale, in nats a token, of the logistic that turns a gain into the
/// verdict's probability.
pub const WIDTH: f64 = 0.5;

/// Which list prompt's verdicts are read from likelihoods, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Per statement (a sentence of the response, under this protocol):
    /// `yes` (supported) when the contexts, all together, raise its tokens
    /// by the threshold on average or more, else `no`
    /// ([`PromptId::FaithfulnessVerdicts`]).
    Statements,
    /// Per context: `yes` (the response contradicts it) when that context
    /// alone makes the whole response less likely than the question alone
    /// does, else `no` ([`PromptId::Contradictions`]). A context the
    /// response does not use leaves it about as likely: not contradicted.
    Contexts,
}

impl Form {
    /// The form of the list prompt `id`, if its verdicts can be read this way.
    pub fn of(id: PromptId) -> Option<Form> {
        match id {
            PromptId::FaithfulnessVerdicts => Some(Form::Statements),
            PromptId::Contradictions => Some(Form::Contexts),
            _ => None,
        }
    }

    /// How much of the open reading's log-probability the gain takes away.
    ///
    /// Statements: read with these prompts by the default judge on the
    /// tuning rows (one score per response), 0.75 ranked RAGTruth with
    /// ROC-AUC 0.78 and HaluEval QA with 0.93; 1 gave 0.74 and 0.96, 0.5
    /// gave 0.80 and 0.85. Contexts: 1, the mutual information, whose sign
    /// tells a context that speaks against the response from one it does
    /// not use.
    pub fn baseline_weight(self) -> f64 {
        match self {
            Form::Statements => 0.75,
            Form::Contexts => 1.0,
        }
    }

    /// The mean gain, in nats a token, from which a text counts as
    /// grounded.
    ///
    /// Statements: 0.25 was the most accurate on RAGTruth's tuning rows
    /// (0.78 of the rows right; 0.63 at 0, 0.68 at 0.5) and right on 0.88
    /// of HaluEval QA's (0.90 at 0.75, the best there). Contexts: 0; on
    /// the tuning rows read per context, the faithful RAGTruth responses
    /// had 3% of their contexts called contradicted, against 38% with the
    /// statements' weight and threshold, and the rows ranked better
    /// (ROC-AUC 0.67 against 0.66 on RAGTruth, 0.96 against 0.93 on
    /// HaluEval QA).
    pub fn threshold(self) -> f64 {
        match self {
            Form::Statements => 0.25,
            Form::Contexts => 0.0,
        }
    }

    /// The verdict label for `gain`.
    fn label(self, gain: f64) -> &'static str {
        match (self, gain >= self.threshold()) {
            (Form::Statements, true) | (Form::Contexts, false) => "yes",
            _ => "no",
        }
    }
}

/// The probability of `yes` for a text with mean gain `gain`.
pub fn verdict_probability(form: Form, gain: f64) -> f64 {
    let z = (gain - form.threshold()) / WIDTH;
    let z = match form {
        Form::Statements => z,
        Form::Contexts => -z,
    };
    1.0 / (1.0 + (-z).exp())
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
/// `reply`.
pub(crate) fn requests(
    prompts: &PromptSet,
    step: &StepKey,
    filled: &Filled,
    reply: &str,
    form: Form,
) -> ItemRequests {
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
        .map(|c| ask(PromptId::GroundedReply, Some(c)))
        .collect();
    items.push(ask(PromptId::OpenReply, None));
    ItemRequests {
        step: step.clone(),
        lists: vec![("verdicts", verdicts.len())],
        items,
        likelihood: Some(Scoring {
            form,
            reply: reply.to_string(),
            verdicts,
            grounded: n_grounded,
        }),
    }
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
            let gains: Vec<f64> = offsets
                .iter()
                .enumerate()
                .filter(|(_, r)| overlaps(r, span))
                .map(|(i, _)| with[i].1 - self.form.baseline_weight() * open[i].1)
                .collect();
            verdicts.push(self.verdict(&gains));
        }
        Ok(json!({"verdicts": verdicts}))
    }

    fn verdict(&self, gains: &[f64]) -> Value {
        if gains.is_empty() {
            // Only an empty response has no token: it contradicts nothing
            // and states nothing.
            let label = match self.form {
                Form::Statements => "idk",
                Form::Contexts => "no",
            };
            return json!({"verdict": label, "reason": "the response has no words to read"});
        }
        let gain = gains.iter().sum::<f64>() / gains.len() as f64;
        let p = verdict_probability(self.form, gain);
        let from = self.form.threshold();
        let reason = match self.form {
            Form::Statements => format!(
                "its words gain {gain:.2} nats a token from the contexts \
                 (supported from {from})"
            ),
            Form::Contexts => format!(
                "the response's words gain {gain:.2} nats a token from this context \
                 (contradicted below {from})"
            ),
        };
        json!({
            "verdict": self.form.label(gain),
            "reason": reason,
            CHOICE_PROBABILITIES: {"verdict": {"yes": p, "no": 1.0 - p}},
        })
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
    use crate::judged::prompt::Protocol;
    use crate::judged::render::{render, Request};
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

    /// The worked example: "Paris is in France. It has 3 towers." split
    /// into 6 tokens. The first sentence's gains are -1 + 0.75 * 4 = 2,
    /// -1 + 0.75 * 3 = 1.25 and -2 + 0.75 * 3 = 0.25 (mean 1.17:
    /// supported); the second's are -1.5 + 1.5 = 0, -3 + 2.25 = -0.75
    /// and -1.5 + 1.5 = 0 (mean -0.25: not).
    #[test]
    fn each_statement_reads_its_own_tokens_gain() {
        let reply = "Paris is in France. It has 3 towers.";
        let row = json!({"user_input": "Where is Paris?", "response": reply, "retrieved_contexts": ["Paris is in France."]});
        let mut outputs = Outputs::new();
        outputs.insert(
            steps::response_statements(),
            StepOutput::Texts(vec![
                "Paris is in France.".into(),
                "It has 3 towers.".into(),
            ]),
        );
        let req = requests_of(&steps::statement_verdicts(), row.clone(), &outputs);
        assert_eq!(req.items.len(), 2);
        assert_eq!(req.items[0].prompt_id, PromptId::GroundedReply);
        assert!(req.items[0].messages[1]
            .content
            .contains("Paris is in France."));
        assert!(!req.items[1].messages[1].content.contains("France"));
        assert_eq!(req.items[1].continuation.as_deref(), Some(reply));
        let texts = ["Paris is", " in", " France.", " It has", " 3", " towers."];
        let open = [-4.0, -3.0, -3.0, -2.0, -3.0, -2.0];
        let with = [-1.0, -1.0, -2.0, -1.5, -3.0, -1.5];
        let grounded = reply_answer(texts.iter().copied().zip(with));
        let baseline = reply_answer(texts.iter().copied().zip(open));
        let joined = req.join(vec![grounded, baseline]).unwrap();
        let v = verdicts(&steps::statement_verdicts(), row, &outputs, &joined);
        assert_eq!(v[0].verdict, Label::Yes);
        assert_eq!(v[1].verdict, Label::No);
        let t = Form::Statements.threshold();
        let expected = |g: f64| 1.0 / (1.0 + (-(g - t) / WIDTH).exp());
        assert!((v[0].probability(Label::Yes).unwrap() - expected(3.5 / 3.0)).abs() < 1e-9);
        assert!((v[1].probability(Label::Yes).unwrap() - expected(-0.25)).abs() < 1e-9);
        assert!(v[1].reason.contains("-0.25 nats"), "{}", v[1].reason);
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
        assert!(v[0].reason.contains("-0.07 nats"), "{}", v[0].reason);
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
