//! Turning a step and its inputs into a neutral request for the judge
//! layer: chat messages with the fixed part first, the output schema with
//! exact item counts, sampling settings.

use crate::judged::likelihood::{self, Scoring};
use crate::judged::prompt::{
    canonical_json, ItemForm, Prompt, PromptId, PromptSet, Protocol, SlotValue,
};
use crate::judged::schema::with_exact_items;
use crate::judged::step::{EmbedText, InputError, Inputs, StepKey, StepOutput};
use crate::judged::steps;
use crate::judged::validate::{validate_item, Problem};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// Temperature of steps that draw several votes: above 0 so that the
/// votes can differ (each vote also needs its own seed, see
/// [`JudgeRequest::n_votes`]).
pub const VOTE_TEMPERATURE: f64 = 0.7;

/// The text embedded for a vote that extracted no sentence.
pub const NO_SENTENCES: &str = "(no sentences)";

/// The author of a chat message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    /// The OpenAI-protocol role name.
    pub fn name(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

/// A chat request, ready for any provider. Everything in it belongs in the
/// cache key; the messages never depend on anything but the prompt file
/// and the sample, so equal work gives equal requests.
///
/// The messages are: the system message (instruction and schema), then
/// each few-shot example as a user/assistant pair, all identical for every
/// sample, so provider prefix caches hit; the sample's inputs are the last
/// user message.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeRequest {
    pub step: StepKey,
    pub prompt_id: PromptId,
    pub prompt_version: u32,
    /// [`Prompt::hash`], for signatures and cache keys.
    pub prompt_hash: String,
    pub messages: Vec<Message>,
    /// JSON Schema of one answer, with `minItems = maxItems` wherever the
    /// number of items is known from the inputs.
    pub schema: Value,
    pub temperature: f64,
    /// How many independent answers to draw (distinct seeds, or `n` choices
    /// in one call). With 1, [`crate::judged::validate()`] takes the answer
    /// itself; with more, a JSON array of the answers in draw order.
    pub n_votes: u32,
    /// A reply for the judge to score rather than write (see
    /// [`crate::judged::likelihood`]); its answer is then a
    /// [`crate::judged::likelihood::reply_answer`] and `schema` is null.
    pub continuation: Option<String>,
}

/// Texts to embed, in order; the answer is one vector per text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbedRequest {
    pub step: StepKey,
    pub texts: Vec<String>,
}

/// A step asked one item at a time ([`crate::judged::prompt::Protocol::PerItem`]):
/// one request per item, whose answers [`ItemRequests::join`] puts together
/// as the answer of the list prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemRequests {
    pub step: StepKey,
    /// The answer lists the items' answers form (`verdicts`; `response`
    /// and `reference` for a correctness classification), in order, with
    /// how many of [`ItemRequests::items`] each takes.
    pub lists: Vec<(&'static str, usize)>,
    /// One request per item, list after list, in order; each checked with
    /// [`ItemRequests::check_item`].
    pub items: Vec<JudgeRequest>,
    /// Set when the items score the response under
    /// [`Protocol::Likelihood`] instead of answering a verdict each.
    pub likelihood: Option<Scoring>,
}

impl ItemRequests {
    /// The items' answers, in order, as the list prompt's answer; an item
    /// answered without a reason gets an empty one.
    ///
    /// ```
    /// use assay_metrics::judged::{render, steps, Inputs, Outputs, PromptSet, Request};
    /// use assay_metrics::judged::prompt::Protocol;
    /// let prompts = PromptSet::builtin().unwrap().with_protocol(Protocol::PerItem);
    /// let row = serde_json::json!({"response": "Rome is in Spain.", "retrieved_contexts": ["Rome is in Italy.", "Paris is in France."]});
    /// let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
    /// let outputs = Outputs::new();
    /// let Ok(Request::Items(req)) = render(&prompts, &steps::contradictions(), &Inputs::new(&sample, &outputs)) else { panic!() };
    /// assert_eq!(req.items.len(), 2);
    /// let joined = req.join(vec![serde_json::json!({"verdict": "yes"}), serde_json::json!({"verdict": "no"})]).unwrap();
    /// assert_eq!(joined, serde_json::json!({"verdicts": [{"verdict": "yes", "reason": ""}, {"verdict": "no", "reason": ""}]}));
    /// ```
    pub fn join(&self, answers: Vec<Value>) -> Result<Value, Problem> {
        if let Some(scoring) = &self.likelihood {
            return scoring.join(&answers);
        }
        let mut answers = answers.into_iter().map(with_reason);
        Ok(Value::Object(
            self.lists
                .iter()
                .map(|(name, n)| (name.to_string(), answers.by_ref().take(*n).collect()))
                .collect(),
        ))
    }

    /// Checks one item's answer: a verdict among the step's labels, or a
    /// scored reply.
    pub fn check_item(&self, answer: &Value) -> Result<(), Problem> {
        match &self.likelihood {
            Some(scoring) => scoring.check(answer),
            None => validate_item(&self.step, answer).map_err(|m| *m.problem),
        }
    }
}

/// An item's answer with an empty reason where it gave none.
pub(crate) fn with_reason(mut answer: Value) -> Value {
    if let Some(object) = answer.as_object_mut() {
        object
            .entry("reason")
            .or_insert_with(|| Value::String(String::new()));
    }
    answer
}

/// What the engine does for a step.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Judge(JudgeRequest),
    Items(ItemRequests),
    Embed(EmbedRequest),
    /// No call is needed: the output follows from the inputs (e.g. no
    /// statements, hence no verdicts).
    Resolved(StepOutput),
}

/// The filled slots of a step, and the answer arrays whose length the
/// inputs fix.
#[derive(Clone, Debug, PartialEq)]
pub struct Filled {
    pub slots: BTreeMap<&'static str, SlotValue>,
    pub counts: Vec<(&'static str, usize)>,
    /// Independent answers to draw (1: one answer at temperature 0).
    pub votes: u32,
}

impl Filled {
    /// The length the inputs fix for the answer list at `path`.
    pub fn count(&self, path: &str) -> Option<usize> {
        self.counts
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, n)| *n)
    }
}

pub(crate) fn text(s: &str) -> SlotValue {
    SlotValue::Text(s.to_string())
}

pub(crate) fn list(items: &[String]) -> SlotValue {
    SlotValue::List(items.to_vec())
}

/// The request for `step` of one sample.
///
/// ```
/// use assay_metrics::judged::{render, steps, Inputs, Outputs, PromptSet, Request};
/// let prompts = PromptSet::builtin().unwrap();
/// let row = serde_json::json!({"user_input": "Where is Rome?", "response": "Rome is in Italy."});
/// let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
/// let outputs = Outputs::new();
/// let Ok(Request::Judge(req)) = render(&prompts, &steps::response_statements(), &Inputs::new(&sample, &outputs)) else { panic!() };
/// assert!(req.messages.last().unwrap().content.contains("Rome is in Italy."));
/// ```
pub fn render(
    prompts: &PromptSet,
    step: &StepKey,
    inputs: &Inputs<'_>,
) -> Result<Request, InputError> {
    let StepKey::Unit(unit) = step else {
        return embed_request(step, inputs).map(Request::Embed);
    };
    let filled = unit.0.fill(inputs)?;
    if let Some(output) = unit.0.trivial(&filled) {
        return Ok(Request::Resolved(output));
    }
    if prompts.protocol() != Protocol::Listed {
        if let Some(output) = unit.0.without_call(&filled) {
            return Ok(Request::Resolved(output));
        }
    }
    let id = unit.0.prompt();
    if let Some(form) = prompts.protocol().grounding_form(id) {
        return Ok(Request::Resolved(form.answer(&filled)));
    }
    if let Some(screen) = prompts.protocol().screen(id) {
        return Ok(Request::Resolved(screen.answer(&filled)));
    }
    if let Some(form) = prompts.protocol().likelihood_form(id) {
        let reply = inputs.response()?;
        return Ok(Request::Items(likelihood::requests(
            prompts, step, &filled, reply, form,
        )));
    }
    if let Some(forms) = prompts.item_forms(id) {
        return Ok(Request::Items(item_requests(prompts, step, &filled, forms)));
    }
    let prompt = prompts.get(id);
    let mut schema = unit.0.schema(&prompt.output_schema);
    for (path, n) in &filled.counts {
        schema = with_exact_items(schema, &[path], *n);
    }
    let mut messages = fixed_messages(prompt);
    messages.push(Message {
        role: Role::User,
        content: user_message(prompt, |n| filled.slots.get(n), &filled.counts),
    });
    Ok(Request::Judge(JudgeRequest {
        step: step.clone(),
        prompt_id: id,
        prompt_version: prompt.version,
        prompt_hash: prompt.hash.clone(),
        messages,
        schema,
        temperature: if filled.votes > 1 {
            VOTE_TEMPERATURE
        } else {
            0.0
        },
        n_votes: filled.votes,
        continuation: None,
    }))
}

/// For each form, one request of `form.prompt` per item of the list slot
/// `form.list`, the other slots as filled. Every message but the last is
/// the same for every item of a form, and so is the last one up to the
/// item's slot: a judge with a prefix cache reads the shared part once
/// (all of it but the statement for `statement_support`; a context comes
/// first in `context_contradiction`, read before the claim).
fn item_requests(
    prompts: &PromptSet,
    step: &StepKey,
    filled: &Filled,
    forms: &[ItemForm],
) -> ItemRequests {
    let mut lists = Vec::with_capacity(forms.len());
    let mut requests = Vec::new();
    for form in forms {
        let prompt = prompts.get(form.prompt);
        let items = match filled.slots.get(form.list) {
            Some(SlotValue::List(items)) => items.as_slice(),
            _ => &[],
        };
        lists.push((form.answers, items.len()));
        let fixed = fixed_messages(prompt);
        requests.extend(items.iter().map(|item| {
            let item = SlotValue::Text(item.clone());
            let slot = |name: &str| {
                if name == form.item {
                    Some(&item)
                } else {
                    filled.slots.get(name)
                }
            };
            let mut messages = fixed.clone();
            messages.push(Message {
                role: Role::User,
                content: user_message(prompt, slot, &[]),
            });
            JudgeRequest {
                step: step.clone(),
                prompt_id: form.prompt,
                prompt_version: prompt.version,
                prompt_hash: prompt.hash.clone(),
                messages,
                schema: prompt.output_schema.clone(),
                temperature: 0.0,
                n_votes: 1,
                continuation: None,
            }
        }));
    }
    ItemRequests {
        step: step.clone(),
        lists,
        items: requests,
        likelihood: None,
    }
}

/// The messages every request of this prompt starts with.
pub fn fixed_messages(prompt: &Prompt) -> Vec<Message> {
    let mut messages = vec![Message {
        role: Role::System,
        content: format!(
            "{}\n\nReply with a single JSON object that follows this JSON Schema:\n{}",
            prompt.instruction.trim_end(),
            canonical_json(&prompt.output_schema)
        ),
    }];
    for example in &prompt.examples {
        let counts: Vec<(&'static str, usize)> = prompt
            .id
            .counts()
            .iter()
            .map(|p| {
                (
                    *p,
                    example
                        .output
                        .get(*p)
                        .and_then(Value::as_array)
                        .map_or(0, Vec::len),
                )
            })
            .collect();
        messages.push(Message {
            role: Role::User,
            content: user_message(prompt, |n| example.input.get(n), &counts),
        });
        messages.push(Message {
            role: Role::Assistant,
            content: canonical_json(&example.output),
        });
    }
    messages
}

/// Items as a numbered list, one per line. Continuation lines are
/// indented so that an item with line breaks still reads as one item.
pub(crate) fn numbered(items: &[impl AsRef<str>]) -> String {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| format!("{}. {}", i + 1, item.as_ref().replace('\n', "\n   ")))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn user_message<'s>(
    prompt: &Prompt,
    slot: impl Fn(&str) -> Option<&'s SlotValue>,
    counts: &[(&'static str, usize)],
) -> String {
    let mut out = String::new();
    for name in &prompt.slots {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(name);
        out.push_str(":\n");
        match slot(name).unwrap_or(&SlotValue::Absent) {
            SlotValue::Text(t) => out.push_str(t),
            SlotValue::List(items) if items.is_empty() => out.push_str("(none)"),
            SlotValue::List(items) => out.push_str(&numbered(items)),
            SlotValue::Absent => out.push_str("(not given)"),
        }
    }
    for (path, n) in counts {
        out.push_str(&format!(
            "\n\nThe answer's \"{path}\" list must have exactly {n} entries, in the order above."
        ));
    }
    out
}

pub(crate) fn embed_request(
    step: &StepKey,
    inputs: &Inputs<'_>,
) -> Result<EmbedRequest, InputError> {
    let StepKey::Embed(target) = step else {
        return Err(InputError::WrongOutput(step.clone()));
    };
    let texts = match target {
        EmbedText::UserInput => vec![inputs.user_input()?.to_string()],
        EmbedText::Response => vec![inputs.response()?.to_string()],
        EmbedText::Reference(i) => vec![inputs.reference(*i)?.to_string()],
        EmbedText::GeneratedQuestions { count } => inputs
            .questions(&steps::generated_questions(*count))?
            .iter()
            .map(|q| q.question.clone())
            .collect(),
        EmbedText::Extractions { votes } => inputs
            .extractions(&steps::sentence_extraction(*votes))?
            .iter()
            .map(|e| match e {
                crate::judged::step::Extraction::Sentences(s) if !s.is_empty() => s.join("\n"),
                // Scoring never compares an empty vote by its vector, but
                // providers reject empty inputs, so send a placeholder.
                _ => NO_SENTENCES.to_string(),
            })
            .collect(),
    };
    Ok(EmbedRequest {
        step: step.clone(),
        texts,
    })
}
