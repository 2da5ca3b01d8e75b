//! Turning a step and its inputs into a neutral request for the judge
//! layer: chat messages with the fixed part first, the output schema with
//! exact item counts, sampling settings.

use crate::judged::likelihood::{self, Scoring};
use crate::judged::prompt::{ItemForm, PromptSet, Protocol, SlotValue};
use crate::judged::request::{
    fixed_messages, language_note, noted, user_message, with_reason, EmbedRequest, JudgeRequest,
    Message, Role, VOTE_TEMPERATURE,
};
use crate::judged::schema::with_exact_items;
use crate::judged::step::{Filled, InputError, Inputs, Problem, StepKey, StepOutput};
use crate::judged::steps::embed_request;
use crate::judged::validate::validate_item;
use crate::judged::{demonstrate, grounding, screen};
use serde_json::Value;

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
    let note = language_note(inputs.sample);
    let note = note.as_deref();
    Ok(match rendered(prompts, step, inputs)? {
        Request::Judge(req) => Request::Judge(noted(req, note)),
        // A scored reply is the response's own words: nothing to write.
        Request::Items(mut req) if req.likelihood.is_none() => {
            req.items = req.items.into_iter().map(|i| noted(i, note)).collect();
            Request::Items(req)
        }
        other => other,
    })
}

/// [`render`]'s request, before the row's language is named in it.
fn rendered(
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
    if let Some(form) = grounding::Form::under(prompts, id) {
        return form
            .answer(&filled, prompts)
            .map(Request::Resolved)
            .map_err(InputError::Model);
    }
    if let Some(screen) = screen::Screen::under(prompts.protocol(), id) {
        return Ok(Request::Resolved(screen.answer(&filled)));
    }
    if let Some(form) = likelihood::Form::under(prompts.protocol(), id) {
        let reply = unit.0.reply(inputs)?;
        let (items, scoring) = likelihood::requests(prompts, step, &filled, &reply, form);
        return Ok(Request::Items(ItemRequests {
            step: step.clone(),
            lists: vec![("verdicts", scoring.verdict_count())],
            items,
            likelihood: Some(scoring),
        }));
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
    let statements: Vec<&str> = match filled.slots.get("statements") {
        Some(SlotValue::List(items)) => items.iter().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    messages.extend(demonstrate::messages(prompts, prompt, &statements));
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
/// (all of it but the statement for `statement_support`, an alignment's
/// demonstrations included; a context comes
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
        // The same demonstrations for every item of the row (those
        // nearest any of its items): they come before the row's contexts,
        // which a prefix cache then reads once.
        let mut fixed = fixed_messages(prompt);
        let all: Vec<&str> = items.iter().map(String::as_str).collect();
        fixed.extend(demonstrate::messages(prompts, prompt, &all));
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
