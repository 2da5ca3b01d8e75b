//! Turning a step and its inputs into a neutral request for the judge
//! layer: chat messages with the fixed part first, the output schema with
//! exact item counts, sampling settings.

use crate::judged::prompt::{canonical_json, Prompt, PromptId, PromptSet, SlotValue};
use crate::judged::schema::with_exact_items;
use crate::judged::step::{EmbedText, InputError, Inputs, StepKey, StepOutput, UsefulFor};
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
}

/// Texts to embed, in order; the answer is one vector per text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbedRequest {
    pub step: StepKey,
    pub texts: Vec<String>,
}

/// What the engine does for a step.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Judge(JudgeRequest),
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

pub(crate) fn text(s: &str) -> SlotValue {
    SlotValue::Text(s.to_string())
}

pub(crate) fn list(items: &[String]) -> SlotValue {
    SlotValue::List(items.to_vec())
}

fn optional(s: Option<&String>) -> SlotValue {
    s.map_or(SlotValue::Absent, |s| text(s))
}

/// The slots and counts of a judge step (`None` for embedding steps).
pub(crate) fn fill(step: &StepKey, inputs: &Inputs<'_>) -> Result<Option<Filled>, InputError> {
    let question = || optional(inputs.sample.user_input.as_ref());
    let mut counts = Vec::new();
    let mut votes = 1;
    let slots: Vec<(&'static str, SlotValue)> = match step {
        StepKey::ResponseStatements => {
            vec![("question", question()), ("text", text(inputs.response()?))]
        }
        StepKey::ReferenceStatements(i) => {
            vec![
                ("question", question()),
                ("text", text(inputs.reference(*i)?)),
            ]
        }
        StepKey::Opinions => vec![("text", text(inputs.response()?))],
        StepKey::StatementVerdicts => {
            let statements = inputs.texts(&StepKey::ResponseStatements)?;
            counts.push(("verdicts", statements.len()));
            vec![
                ("contexts", list(inputs.contexts()?)),
                ("statements", list(statements)),
            ]
        }
        StepKey::RelevanceVerdicts => {
            let statements = inputs.texts(&StepKey::ResponseStatements)?;
            counts.push(("verdicts", statements.len()));
            vec![
                ("question", text(inputs.user_input()?)),
                ("statements", list(statements)),
            ]
        }
        StepKey::ContextUsefulness(target) => {
            let contexts = inputs.contexts()?;
            counts.push(("verdicts", contexts.len()));
            let answer = match target {
                UsefulFor::Reference(i) => inputs.reference(*i)?,
                UsefulFor::Response => inputs.response()?,
            };
            vec![
                ("question", text(inputs.user_input()?)),
                ("answer", text(answer)),
                ("contexts", list(contexts)),
            ]
        }
        StepKey::ReferenceAttribution(i) => {
            let statements = inputs.texts(&StepKey::ReferenceStatements(*i))?;
            counts.push(("verdicts", statements.len()));
            vec![
                ("contexts", list(inputs.contexts()?)),
                ("statements", list(statements)),
            ]
        }
        StepKey::ReferenceRecall(i) => vec![
            ("contexts", list(inputs.contexts()?)),
            ("reference", text(inputs.reference(*i)?)),
        ],
        StepKey::ContextRelevance => {
            let contexts = inputs.contexts()?;
            counts.push(("verdicts", contexts.len()));
            vec![
                ("question", text(inputs.user_input()?)),
                ("contexts", list(contexts)),
            ]
        }
        StepKey::Contradictions => {
            let contexts = inputs.contexts()?;
            counts.push(("verdicts", contexts.len()));
            vec![
                ("response", text(inputs.response()?)),
                ("contexts", list(contexts)),
            ]
        }
        StepKey::GeneratedQuestions { count } => {
            counts.push(("questions", *count as usize));
            vec![
                ("response", text(inputs.response()?)),
                ("count", text(&count.to_string())),
            ]
        }
        StepKey::CorrectnessClassification(i) => {
            let response = inputs.texts(&StepKey::ResponseStatements)?;
            let reference = inputs.texts(&StepKey::ReferenceStatements(*i))?;
            counts.push(("response", response.len()));
            counts.push(("reference", reference.len()));
            vec![
                ("question", question()),
                ("response_statements", list(response)),
                ("reference_statements", list(reference)),
            ]
        }
        StepKey::Keyphrases => vec![("text", text(&inputs.source()?))],
        StepKey::ClosedQuestions => vec![
            ("text", text(&inputs.source()?)),
            ("keyphrases", list(inputs.texts(&StepKey::Keyphrases)?)),
        ],
        StepKey::SummaryAnswers => {
            let questions = inputs.texts(&StepKey::ClosedQuestions)?;
            counts.push(("verdicts", questions.len()));
            vec![
                ("summary", text(inputs.response()?)),
                ("questions", list(questions)),
            ]
        }
        StepKey::CoherenceRating => vec![
            ("text", text(&inputs.source()?)),
            ("summary", text(inputs.response()?)),
        ],
        StepKey::BiasVerdicts | StepKey::ToxicityVerdicts => {
            let opinions = inputs.texts(&StepKey::Opinions)?;
            counts.push(("verdicts", opinions.len()));
            vec![("opinions", list(opinions))]
        }
        StepKey::AspectVerdict { aspect, votes: n } => {
            votes = *n;
            vec![
                ("aspect", text(&aspect.name)),
                ("definition", text(&aspect.definition)),
                ("question", question()),
                ("response", text(inputs.response()?)),
                (
                    "contexts",
                    inputs
                        .sample
                        .retrieved_contexts
                        .as_deref()
                        .map_or(SlotValue::Absent, list),
                ),
            ]
        }
        StepKey::SentenceExtraction { votes: n } => {
            votes = *n;
            vec![
                ("question", text(inputs.user_input()?)),
                ("context", text(&inputs.source()?)),
            ]
        }
        StepKey::Unit(u) => return u.0.fill(inputs).map(Some),
        StepKey::Embed(_) => return Ok(None),
    };
    Ok(Some(Filled {
        slots: slots.into_iter().collect(),
        counts,
        votes,
    }))
}

/// The output of a step whose inputs leave nothing to ask, if so.
fn trivial(step: &StepKey, filled: &Filled) -> Option<StepOutput> {
    let blank = |name: &str| match filled.slots.get(name) {
        Some(SlotValue::Text(t)) => t.trim().is_empty(),
        Some(SlotValue::List(l)) => l.is_empty(),
        _ => false,
    };
    match step {
        StepKey::ResponseStatements
        | StepKey::ReferenceStatements(_)
        | StepKey::Opinions
        | StepKey::Keyphrases
            if blank("text") =>
        {
            Some(StepOutput::Texts(Vec::new()))
        }
        StepKey::ReferenceRecall(_) if blank("reference") => Some(StepOutput::Attributed {
            statements: Vec::new(),
            verdicts: Vec::new(),
        }),
        StepKey::ClosedQuestions if blank("keyphrases") || blank("text") => {
            Some(StepOutput::Texts(Vec::new()))
        }
        StepKey::CorrectnessClassification(_) if filled.counts.iter().all(|(_, n)| *n == 0) => {
            Some(StepOutput::Classification {
                response: Vec::new(),
                reference: Vec::new(),
            })
        }
        StepKey::GeneratedQuestions { .. } | StepKey::CorrectnessClassification(_) => None,
        _ if filled.counts.first().is_some_and(|(_, n)| *n == 0) => {
            Some(StepOutput::Verdicts(Vec::new()))
        }
        _ => None,
    }
}

/// The request for `step` of one sample.
///
/// ```
/// use assay_metrics::judged::{render, Inputs, Outputs, PromptSet, Request, StepKey};
/// let prompts = PromptSet::builtin().unwrap();
/// let row = serde_json::json!({"user_input": "Where is Rome?", "response": "Rome is in Italy."});
/// let sample = assay_core::Sample::from_json(1, row.as_object().unwrap()).unwrap();
/// let outputs = Outputs::new();
/// let Ok(Request::Judge(req)) = render(&prompts, &StepKey::ResponseStatements, &Inputs::new(&sample, &outputs)) else { panic!() };
/// assert!(req.messages.last().unwrap().content.contains("Rome is in Italy."));
/// ```
pub fn render(
    prompts: &PromptSet,
    step: &StepKey,
    inputs: &Inputs<'_>,
) -> Result<Request, InputError> {
    let (Some(id), Some(filled)) = (step.prompt(), fill(step, inputs)?) else {
        return embed_request(step, inputs).map(Request::Embed);
    };
    if let Some(output) = trivial(step, &filled) {
        return Ok(Request::Resolved(output));
    }
    let prompt = prompts.get(id);
    let mut schema = match step {
        StepKey::Unit(u) => u.0.schema(&prompt.output_schema),
        _ => prompt.output_schema.clone(),
    };
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
    }))
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
            .questions(&StepKey::GeneratedQuestions { count: *count })?
            .iter()
            .map(|q| q.question.clone())
            .collect(),
        EmbedText::Extractions { votes } => inputs
            .extractions(&StepKey::SentenceExtraction { votes: *votes })?
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
