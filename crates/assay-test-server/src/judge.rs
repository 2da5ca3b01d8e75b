//! A deterministic judge whose answers follow from the rendered request
//! alone: it reads the `name:\nvalue` sections of the last user message
//! (the sample's part of every assay prompt) and answers by simple rules,
//! so a wrong input in a prompt gives a wrong score.
//!
//! Rules, per prompt: statements are the text split at ". "; a statement
//! is supported when the contexts contain it (case-insensitive); a context
//! is useful when it is one of the answer's statements; a statement or
//! context is relevant when it shares a word longer than 3 letters with
//! the question; opinions are sentences starting "I think", biased or
//! toxic when they contain "stupid"; a context is contradicted when both
//! it and the response mention cheese; the generation critic scores a
//! question that says "the source" 0.3, others 0.9; generated questions
//! are the first statement plus a number, citing the listed sentences
//! that share the most words with their answer; the per-item prompts
//! follow the same rules, one statement or context at a time; coherence
//! is rated 4; an aspect is present when the response mentions Paris; a
//! rubric's evaluation steps are the sentences of its criterion, and its
//! rating is 1 plus the number of steps whose last word the response (or
//! the conversation rated) contains (at most the scale's top); an
//! outcome's reason quotes the metric and the score it was given.
//! In conversations (`role: text` lines), a user's facts are the sentences
//! of the message that are not questions; an assistant message forgets one
//! when it asks a question that shares a word longer than 3 letters with a
//! fact; a reply is relevant when it shares such a word with the user's
//! last message before it; the user's intentions are their questions, and
//! one is met when an assistant message shares such a word with it; a
//! reply breaks its role when it talks of code, debugging or Python; an
//! agent's goal is the user's first message and its end state all the
//! assistant's lines, and an outcome is achieved when it shares such a
//! word with the one desired (and a task rated 5 when its outcome shares
//! such a word with it, else 1); the topics are the user's messages, one is
//! answered when an assistant message shares such a word with it, and
//! within the reference topics when it shares such a word with them; a
//! tool call's arguments are wrong when one of them is a word the user
//! wrote (the agent copied text where a value belongs).
//! A request with tools and no assay prompt is an agent's step: after a
//! user message the tools offered are called in turn, one a step, each with
//! the `default`s of its parameters, and the last one's result is the answer.
//! A prompt with no rule is answered with the simplest value its schema
//! accepts ([`satisfying`]): the schema of its `response_format`, else the
//! one its text states after `JSON Schema:` (as ragas' prompts do), so
//! other libraries' metrics run against this judge too.
//! Embeddings are letter counts.

use crate::{chat, Recorded, Reply};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A RAG sample the rules above score in known ways: one of the two
/// response statements is in the contexts, contexts 1 and 4 state the
/// reference, context 3 mentions cheese like the response.
pub fn eiffel_row() -> Value {
    json!({
        "user_input": "Where is the Eiffel Tower",
        "response": "The Eiffel Tower is in Paris. The Eiffel Tower is made of cheese",
        "retrieved_contexts": [
            "The Eiffel Tower is in Paris",
            "Paris is the capital of France",
            "Cheese is tasty",
            "The Eiffel Tower opened in 1889"
        ],
        "reference": "The Eiffel Tower is in Paris. The Eiffel Tower opened in 1889. The Eiffel Tower is 330 metres tall"
    })
}

/// The prompt a chat request was rendered from: the name of its JSON
/// Schema (assay's prompt id), if the request has one.
pub fn prompt_name(req: &Recorded) -> Option<&str> {
    req.body["response_format"]["json_schema"]["name"].as_str()
}

/// Answers a chat or embeddings request the way [`answer`] and [`embed`] do.
pub fn reply(req: &Recorded) -> Reply {
    reply_filling(req, &Fill::default())
}

/// How a prompt with no rule of its own is answered: the simplest value
/// of its schema ([`Fill::default`]), or one that passes the filters of
/// another library's pipeline, as a willing judge's would.
#[derive(Clone, Debug, Default)]
pub struct Fill {
    /// Arrays (where their `maxItems` allows) and maps get at least this
    /// many items: a library whose metrics extract lists then judge each
    /// item makes its later calls.
    pub items: usize,
    /// Strings are the prompt's sentences in turn ([`prompt_sentences`])
    /// instead of "fake", and a map's keys the `name`s its input gives:
    /// extracted headlines, entities and questions are then text the
    /// documents hold, as a test-set generator's later steps expect.
    pub text: bool,
    /// A number without a `maximum` gets this one (a number with one gets
    /// its maximum), instead of the minimum: a score passes the filter it
    /// feeds.
    pub score: Option<f64>,
}

/// [`reply`], with a prompt with no rule answered as `fill` says.
pub fn reply_filling(req: &Recorded, fill: &Fill) -> Reply {
    if req.path.ends_with("/embeddings") {
        let data: Vec<Value> = req.body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, t)| json!({"index": i, "embedding": embed(t.as_str().unwrap_or(""))}))
            .collect();
        return Reply::json(
            200,
            json!({"object": "list", "data": data, "usage": {"prompt_tokens": 3, "total_tokens": 3}}),
        );
    }
    let prompt = prompt_name(req).unwrap_or("");
    if prompt.is_empty() {
        if let Some(reply) = agent_step(req) {
            return reply;
        }
    }
    let message = req.last_message();
    let answer = rule(prompt, message).unwrap_or_else(|| {
        let schema = &req.body["response_format"]["json_schema"]["schema"];
        let schema = match stated_schema(message).filter(|_| schema.is_null()) {
            Some(stated) => stated,
            None => schema.clone(),
        };
        let (texts, names) = if fill.text {
            (prompt_sentences(message), prompt_names(message))
        } else {
            (Vec::new(), Vec::new())
        };
        Filler::new(fill, texts, names).fill(&schema, &schema)
    });
    chat(&citing(req, answer).to_string())
}

/// `answer` with the evidence a generator's request asks for and the
/// answer lacks: for each `evidence...` property of the request's schema
/// that lists sentences, the first of those sharing the most words with
/// the answer's `answer`. A scripted judge of a test answers through it.
pub fn citing(req: &Recorded, mut answer: Value) -> Value {
    cite(
        &mut answer,
        &req.body["response_format"]["json_schema"]["schema"],
    );
    answer
}

fn cite(answer: &mut Value, schema: &Value) {
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    let said = long_words(answer["answer"].as_str().unwrap_or(""));
    for (name, property) in properties {
        let listed: Vec<&str> = property["enum"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !name.starts_with("evidence") || answer.get(name).is_some() || listed.is_empty() {
            continue;
        }
        let shared = |sentence: &str| long_words(sentence).intersection(&said).count();
        // The first of the most shared, as `max_by_key` gives the last.
        let chosen = listed
            .iter()
            .rev()
            .max_by_key(|s| shared(s))
            .unwrap_or(&listed[0]);
        if let Value::Object(fields) = answer {
            fields.insert(name.clone(), json!(chosen));
        }
    }
}

/// The sentences a [`Fill::text`] answer is made of: those of the input
/// a prompt ends with after `input:` (ragas' prompts give it as JSON; its
/// strings are read last first, so that what an answer picks from comes
/// before who asks), else of the whole message; lines and ". " split
/// them, and pieces under 12 characters are left out.
///
/// ```
/// let prompt = "Extract headlines.\ninput: {\"text\": \"# Radium\\nRadium glows blue. It was found in 1898.\"}\nOutput: ";
/// assert_eq!(
///     assay_test_server::judge::prompt_sentences(prompt),
///     ["Radium glows blue.", "It was found in 1898."]
/// );
/// ```
pub fn prompt_sentences(message: &str) -> Vec<String> {
    let mut texts = Vec::new();
    match prompt_input(message) {
        Some(value) => {
            strings(&value, &mut texts);
            texts.reverse();
        }
        None => texts.push(message.to_string()),
    }
    texts
        .iter()
        .flat_map(|t| t.lines())
        .flat_map(|line| line.split_inclusive(". "))
        .map(str::trim)
        .filter(|s| s.chars().count() >= 12)
        .map(String::from)
        .collect()
}

/// The JSON value a prompt's text gives after its last `input:`.
fn prompt_input(message: &str) -> Option<Value> {
    let at = message.rfind("input:")? + "input:".len();
    serde_json::Deserializer::from_str(message[at..].trim_start())
        .into_iter::<Value>()
        .next()?
        .ok()
}

/// The values of the `name` members of a prompt's input (ragas' personas
/// are named so, and a map it asks for is keyed by those names).
fn prompt_names(message: &str) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(members) => {
                if let Some(name) = members.get("name").and_then(Value::as_str) {
                    out.push(name.to_string());
                }
                members.values().for_each(|v| walk(v, out));
            }
            _ => {}
        }
    }
    let mut names = Vec::new();
    if let Some(input) = prompt_input(message) {
        walk(&input, &mut names);
    }
    names
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(members) => members.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The JSON Schema a prompt's text states after `JSON Schema:`, as
/// ragas' prompts do (they ask for JSON in words, without
/// `response_format`).
fn stated_schema(message: &str) -> Option<Value> {
    const MARK: &str = "JSON Schema:";
    let at = message.find(MARK)? + MARK.len();
    serde_json::Deserializer::from_str(message[at..].trim_start())
        .into_iter::<Value>()
        .next()?
        .ok()
}

/// The simplest value `schema` accepts: an object of its properties so
/// filled (an empty one for a map), `minItems` copies of an array's item,
/// the first of an `enum` (or of an `anyOf`, or of a list of types),
/// "fake" for a string, the `minimum` (else 0) of a number, true; a `$ref`
/// within the schema (as pydantic writes nested models) is followed. A
/// prompt without a rule of its own is answered so: a new judged metric
/// runs against this judge, with answers that say nothing, before it has
/// a rule.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {
///     "verdicts": {"type": "array", "minItems": 2, "items": {"type": "string", "enum": ["yes", "no"]}},
///     "rating": {"type": "integer", "minimum": 1, "maximum": 5}}});
/// assert_eq!(
///     assay_test_server::judge::satisfying(&schema),
///     json!({"verdicts": ["yes", "yes"], "rating": 1})
/// );
/// ```
pub fn satisfying(schema: &Value) -> Value {
    satisfying_with(schema, 0)
}

/// [`satisfying`], with arrays of at least `items` items where their
/// `maxItems` allows, and maps (`additionalProperties` without
/// `properties`) of `items` members.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {
///     "topics": {"type": "array", "items": {"$ref": "#/$defs/Topic"}}},
///     "$defs": {"Topic": {"type": "object", "properties": {"name": {"type": "string"}}}}});
/// assert_eq!(
///     assay_test_server::judge::satisfying_with(&schema, 2),
///     json!({"topics": [{"name": "fake"}, {"name": "fake"}]})
/// );
/// ```
pub fn satisfying_with(schema: &Value, items: usize) -> Value {
    let fill = Fill {
        items,
        ..Fill::default()
    };
    Filler::new(&fill, Vec::new(), Vec::new()).fill(schema, schema)
}

/// One answer's filling: [`Fill`]'s choices, the prompt's sentences
/// still to use, and the names a map's keys are.
struct Filler<'a> {
    how: &'a Fill,
    texts: Vec<String>,
    next: std::cell::Cell<usize>,
    names: Vec<String>,
}

impl<'a> Filler<'a> {
    fn new(how: &'a Fill, texts: Vec<String>, names: Vec<String>) -> Self {
        Filler {
            how,
            texts,
            next: std::cell::Cell::new(0),
            names,
        }
    }

    /// The key of a map's `k`th member (from 1): the `k`th name, else
    /// "fakeK".
    fn key(&self, k: usize) -> String {
        self.names
            .get(k - 1)
            .cloned()
            .unwrap_or_else(|| format!("fake{k}"))
    }

    fn text(&self) -> Value {
        if self.texts.is_empty() {
            return json!("fake");
        }
        let k = self.next.get();
        self.next.set(k + 1);
        json!(self.texts[k % self.texts.len()])
    }

    fn number(&self, schema: &Value, integer: bool) -> Value {
        let bound = match self.how.score {
            Some(score) => schema["maximum"].as_f64().unwrap_or(score),
            None => schema["minimum"].as_f64().unwrap_or(0.0),
        };
        if integer {
            json!(bound as i64)
        } else {
            json!(bound)
        }
    }

    fn fill(&self, schema: &Value, root: &Value) -> Value {
        let items = self.how.items;
        if let Some(target) = schema["$ref"].as_str() {
            return target
                .strip_prefix('#')
                .and_then(|pointer| root.pointer(pointer))
                .map_or(Value::Null, |s| self.fill(s, root));
        }
        if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
            return first.clone();
        }
        if let Some(first) = schema["anyOf"].as_array().and_then(|a| a.first()) {
            return self.fill(first, root);
        }
        let kind = match &schema["type"] {
            Value::Array(kinds) => kinds.first().and_then(Value::as_str),
            kind => kind.as_str(),
        };
        match kind {
            // A map (no properties, a schema for any member's value) gets
            // `items` members.
            Some("object")
                if schema["properties"].is_null() && schema["additionalProperties"].is_object() =>
            {
                let members = match self.names.len() {
                    0 => items,
                    names => items.min(names),
                };
                Value::Object(
                    (1..=members)
                        .map(|k| {
                            (
                                self.key(k),
                                self.fill(&schema["additionalProperties"], root),
                            )
                        })
                        .collect(),
                )
            }
            Some("object") => Value::Object(
                schema["properties"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, s)| (k.clone(), self.fill(s, root)))
                    .collect(),
            ),
            Some("array") => {
                let min = schema["minItems"].as_u64().unwrap_or(0) as usize;
                let max = schema["maxItems"]
                    .as_u64()
                    .map_or(usize::MAX, |m| m as usize);
                let n = min.max(items.min(max));
                (0..n).map(|_| self.fill(&schema["items"], root)).collect()
            }
            Some("string") => self.text(),
            Some("integer") => self.number(schema, true),
            Some("number") => self.number(schema, false),
            Some("boolean") => json!(true),
            _ => Value::Null,
        }
    }
}

/// A request that offers tools, as an agent's model sees it: after the
/// user, the first tool is called; after a tool result, the next tool
/// offered is called, until each has been called once since the user's
/// last message, and then the last result is the answer. A call's arguments
/// are the `default`s of its parameters' schema ([`defaults`]): `{}` for a
/// tool without any. So an instrumented agent loop against this judge
/// writes a trace with its calls, their arguments and results.
fn agent_step(req: &Recorded) -> Option<Reply> {
    let tools = req.body["tools"].as_array().filter(|t| !t.is_empty())?;
    let messages = req.body["messages"].as_array()?;
    let last = messages.last()?;
    let since_user = messages
        .iter()
        .rev()
        .take_while(|m| m["role"] != "user")
        .filter(|m| m["role"] == "assistant" && m["tool_calls"].is_array())
        .count();
    match last["role"].as_str()? {
        "user" | "tool" if since_user < tools.len() => {
            let function = &tools[since_user]["function"];
            let arguments = defaults(&function["parameters"]);
            let arguments = if arguments.is_object() {
                arguments
            } else {
                json!({})
            };
            Some(Reply::json(
                200,
                json!({
                    "id": "cmpl-1", "object": "chat.completion", "model": "judge",
                    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                        "role": "assistant", "content": null,
                        "tool_calls": [{"id": format!("call_{}", since_user + 1), "type": "function",
                                        "function": {"name": function["name"].as_str()?,
                                                     "arguments": arguments.to_string()}}]}}],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
                }),
            ))
        }
        "tool" => Some(chat(last["content"].as_str()?)),
        _ => None,
    }
}

/// The value a JSON Schema's `default`s make: its own `default`, else, for
/// an object, the object of its properties that have one (nested objects
/// built the same way); `null` when nothing gives one.
fn defaults(schema: &Value) -> Value {
    if !schema["default"].is_null() {
        return schema["default"].clone();
    }
    let Some(properties) = schema["properties"].as_object() else {
        return Value::Null;
    };
    Value::Object(
        properties
            .iter()
            .map(|(k, s)| (k.clone(), defaults(s)))
            .filter(|(_, v)| !v.is_null())
            .collect(),
    )
}

/// A question about the contexts of a generation request (about three
/// of its words) whose answer is the first sentence of each
/// context word for word, or the n-th on the n-th attempt.
fn generated(s: &BTreeMap<String, String>) -> Value {
    let attempt: usize = s
        .get("attempt")
        .and_then(|a| a.split_whitespace().next()?.parse().ok())
        .unwrap_or(1);
    let sentences: Vec<String> = bodies(s)
        .iter()
        .map(|body| {
            let parts: Vec<&str> = body.split_inclusive(". ").collect();
            parts
                .get((attempt - 1) % parts.len().max(1))
                .map_or("", |p| p.trim())
                .to_string()
        })
        .collect();
    // Three words of the first sentence, further on in it on a later
    // attempt, so that a retry asks another question.
    let words: Vec<&str> = sentences
        .first()
        .map_or("", String::as_str)
        .split_whitespace()
        .collect();
    let from = (3 * (attempt - 1)).min(words.len().saturating_sub(3));
    let topic: Vec<&str> = words.iter().skip(from).take(3).copied().collect();
    json!({
        "question": format!(
            "What does the source say about {}?",
            topic.join(" ").trim_end_matches(['.', ',', ':'])
        ),
        "answer": sentences.join(" "),
    })
}

/// The text of each context of a generator's request, without the line
/// of headings in brackets that opens it where there are any.
fn bodies(s: &BTreeMap<String, String>) -> Vec<String> {
    ["context", "context 1", "context 2"]
        .iter()
        .filter_map(|k| s.get(*k))
        .map(|c| {
            let mut lines: Vec<&str> = c.lines().collect();
            if lines.len() > 1 && lines[0].starts_with('[') && lines[0].ends_with(']') {
                lines.remove(0);
            }
            lines.join(" ")
        })
        .collect()
}

/// The round-trip answer: the contexts' sentence that shares the most
/// words of four letters or more with the question, as a reader who
/// copies its answer would give; none where no sentence shares one.
fn read_off(s: &BTreeMap<String, String>) -> Value {
    let asked = long_words(s.get("question").map_or("", String::as_str));
    let best = bodies(s)
        .iter()
        .flat_map(|b| {
            b.split_inclusive(". ")
                .map(|p| p.trim().to_string())
                .collect::<Vec<_>>()
        })
        .map(|sentence| {
            let shared = long_words(&sentence).intersection(&asked).count();
            (shared, sentence)
        })
        .filter(|(shared, _)| *shared > 0)
        .max_by_key(|(shared, _)| *shared);
    match best {
        Some((_, sentence)) => json!({"answered": true, "answer": sentence}),
        None => json!({"answered": false, "answer": ""}),
    }
}

/// The sections of a rendered user message: `name:\nvalue` blocks
/// separated by blank lines.
pub fn sections(message: &str) -> BTreeMap<String, String> {
    message
        .split("\n\n")
        .filter_map(|block| block.split_once(":\n"))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The items of a numbered list section.
pub fn items(section: &str) -> Vec<String> {
    if section.is_empty() || section == "(none)" {
        return Vec::new();
    }
    section
        .lines()
        .map(|l| l.split_once(". ").map_or(l, |(_, rest)| rest).to_string())
        .collect()
}

/// The statements of a text: split at ". ", trailing full stops dropped.
pub fn split_statements(text: &str) -> Vec<String> {
    text.split(". ")
        .map(|s| s.trim().trim_end_matches('.').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether the (lowercased) contexts contain the statement, its closing
/// full stop aside.
fn mentions(contexts: &str, statement: &str) -> bool {
    contexts.contains(&statement.trim_end_matches('.').to_lowercase())
}

/// Whether a context is one of the answer's statements.
fn useful(answer: &str, context: &str) -> bool {
    split_statements(answer).iter().any(|a| a == context)
}

/// Whether the summary contains the claim of an "Is it true that ...?"
/// question.
fn summary_says(summary: &str, question: &str) -> bool {
    let claim = question
        .trim_start_matches("Is it true that ")
        .trim_end_matches('?');
    summary.to_lowercase().contains(&claim.to_lowercase())
}

/// Whether a statement is one of a list's, word for word.
fn among(list: &[String], statement: &str) -> bool {
    list.iter().any(|x| x == statement)
}

fn verdicts(flags: impl IntoIterator<Item = &'static str>) -> Value {
    json!({"verdicts": flags.into_iter().map(|v| json!({"reason": format!("fake {v}"), "verdict": v})).collect::<Vec<_>>()})
}

/// Whether two texts share a word longer than 3 letters.
fn shares_word(a: &str, b: &str) -> bool {
    long_words(a).intersection(&long_words(b)).next().is_some()
}

/// A text's words longer than 3 letters, lower-cased, punctuation aside.
fn long_words(t: &str) -> BTreeSet<String> {
    t.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 3)
        .map(str::to_string)
        .collect()
}

/// Whether one of a call's (`NAME {arguments}`) string arguments is a word
/// of a user message of `turns`: the agent copied text where a value
/// belongs.
fn copies_user_words(turns: &str, call: &str) -> bool {
    let user: Vec<String> = turns
        .lines()
        .filter_map(|l| l.strip_prefix("user: "))
        .flat_map(|l| l.split(|c: char| !c.is_alphanumeric()))
        .map(str::to_lowercase)
        .collect();
    let arguments = call.split_once(' ').map_or("{}", |(_, a)| a);
    serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|a| a.as_object().cloned())
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| v.as_str().map(str::to_lowercase))
        .any(|v| user.contains(&v))
}

/// Whether an assistant line of `turns` shares a word with `intention`.
fn met(turns: &str, intention: &str) -> bool {
    turns
        .lines()
        .filter_map(|l| l.strip_prefix("assistant: "))
        .any(|l| shares_word(l, intention))
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The answer to prompt `prompt` (an assay prompt id) whose last user
/// message is `last`. Prompts without a rule get an empty object.
pub fn answer(prompt: &str, last: &str) -> Value {
    rule(prompt, last).unwrap_or_else(|| json!({}))
}

/// The answer of `prompt`'s rule, if it has one.
fn rule(prompt: &str, last: &str) -> Option<Value> {
    let s = sections(last);
    let sec = |name: &str| s.get(name).map_or("", String::as_str);
    let contexts = sec("contexts").to_lowercase();
    Some(match prompt {
        "statements" => json!({"statements": split_statements(sec("text"))}),
        "generate_single_hop" | "generate_multi_hop" | "generate_abstract" => generated(&s),
        // A scenario of the persona's, around the same question and answer.
        "generate_conversation" => {
            let mut g = generated(&s);
            g["scenario"] = json!(format!(
                "{} wants to know what the source says.",
                sec("persona")
            ));
            g
        }
        // The loopback knows nothing without a context.
        "generate_closed_book" => json!({"known": false, "answer": ""}),
        "generate_round_trip" => read_off(&s),
        // A question that points at "the source" is not self-contained.
        "generate_critic" => {
            if sec("question").contains("the source") {
                json!({"feedback": "Name the subject instead of the source.", "score": 0.3})
            } else {
                json!({"feedback": "none", "score": 0.9})
            }
        }
        "faithfulness_verdicts" => verdicts(
            items(sec("statements"))
                .iter()
                .map(|st| {
                    if mentions(&contexts, st) {
                        "yes"
                    } else {
                        "idk"
                    }
                })
                .collect::<Vec<_>>(),
        ),
        "statement_support" => {
            json!({"verdict": if mentions(&contexts, sec("statement")) { "yes" } else { "idk" }})
        }
        "context_contradiction" => {
            let both = |s: &str| sec(s).to_lowercase().contains("cheese");
            json!({"verdict": yes_no(both("response") && both("context"))})
        }
        "reference_attribution" => verdicts(
            items(sec("statements"))
                .iter()
                .map(|st| yes_no(mentions(&contexts, st)))
                .collect::<Vec<_>>(),
        ),
        "reference_support" => json!({"verdict": yes_no(mentions(&contexts, sec("statement")))}),
        "reference_recall" => json!({"statements": split_statements(sec("reference"))
            .iter()
            .map(|st| json!({"statement": st, "reason": "fake", "verdict": yes_no(mentions(&contexts, st))}))
            .collect::<Vec<_>>()}),
        "context_usefulness" => verdicts(
            items(sec("contexts"))
                .iter()
                .map(|c| yes_no(useful(sec("answer"), c)))
                .collect::<Vec<_>>(),
        ),
        "context_useful" => json!({"verdict": yes_no(useful(sec("answer"), sec("context")))}),
        "relevance_verdicts" | "context_relevance" => {
            let question = sec("question").to_lowercase();
            let list = if prompt == "relevance_verdicts" {
                "statements"
            } else {
                "contexts"
            };
            verdicts(
                items(sec(list))
                    .iter()
                    .map(|x| {
                        yes_no(
                            x.to_lowercase()
                                .split(' ')
                                .any(|w| w.len() > 3 && question.contains(w)),
                        )
                    })
                    .collect::<Vec<_>>(),
            )
        }
        "generated_questions" => {
            let n: usize = sec("count").parse().unwrap_or(0);
            let first = split_statements(sec("response"))
                .into_iter()
                .next()
                .unwrap_or_default();
            json!({"questions": (0..n).map(|i| json!({"question": format!("{first} {i}"), "noncommittal": false})).collect::<Vec<_>>()})
        }
        "correctness_classification" => {
            let resp = items(sec("response_statements"));
            let refs = items(sec("reference_statements"));
            let one = |a: &[String], b: &[String]| {
                a.iter()
                    .map(|x| json!({"reason": "fake", "verdict": yes_no(among(b, x))}))
                    .collect::<Vec<_>>()
            };
            json!({"response": one(&resp, &refs), "reference": one(&refs, &resp)})
        }
        "statement_in_reference" => json!({"verdict": yes_no(among(
            &items(sec("reference_statements")),
            sec("statement")
        ))}),
        "statement_in_response" => json!({"verdict": yes_no(among(
            &items(sec("response_statements")),
            sec("statement")
        ))}),
        "opinions" => json!({"opinions": split_statements(sec("text"))
            .into_iter()
            .filter(|x| x.starts_with("I think"))
            .collect::<Vec<_>>()}),
        "bias_verdicts" | "toxicity_verdicts" => verdicts(
            items(sec("opinions"))
                .iter()
                .map(|o| yes_no(o.contains("stupid")))
                .collect::<Vec<_>>(),
        ),
        "contradictions" => {
            let cheese = sec("response").to_lowercase().contains("cheese");
            verdicts(
                items(sec("contexts"))
                    .iter()
                    .map(|c| yes_no(cheese && c.to_lowercase().contains("cheese")))
                    .collect::<Vec<_>>(),
            )
        }
        "keyphrases" => json!({"keyphrases": sec("text").lines().take(3).collect::<Vec<_>>()}),
        "closed_questions" => json!({"questions": items(sec("keyphrases"))
            .iter()
            .map(|k| format!("Is it true that {k}?"))
            .collect::<Vec<_>>()}),
        "summary_answers" => verdicts(
            items(sec("questions"))
                .iter()
                .map(|q| yes_no(summary_says(sec("summary"), q)))
                .collect::<Vec<_>>(),
        ),
        "summary_answer" => {
            json!({"verdict": yes_no(summary_says(sec("summary"), sec("question")))})
        }
        "coherence_rating" => json!({"reason": "fake", "rating": 4}),
        "aspect_verdict" => {
            json!({"reason": "fake", "verdict": yes_no(sec("response").contains("Paris"))})
        }
        "sentence_extraction" => {
            let picked: Vec<&str> = sec("context")
                .lines()
                .filter(|l| l.contains("Eiffel"))
                .collect();
            json!({"insufficient_information": picked.is_empty(), "sentences": picked})
        }
        "rubric_steps" => json!({"steps": split_statements(sec("criteria"))}),
        "rubric_rating" => {
            // What is rated: the response, else the whole sample (a
            // conversation's transcript).
            let response = match sec("response") {
                "" => sec("sample"),
                r => r,
            }
            .to_lowercase();
            let top: usize = sec("scale")
                .rsplit(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            let met = items(sec("steps"))
                .iter()
                .filter(|step| {
                    step.split(' ')
                        .next_back()
                        .is_some_and(|w| response.contains(&w.to_lowercase()))
                })
                .count();
            json!({"reason": "fake", "rating": (1 + met).min(top)})
        }
        "outcome_reason" => json!({"reason": reason_for(sec("metric"), sec("score"))}),
        "user_facts" => json!({"facts": split_statements(sec("message"))
            .into_iter()
            .filter(|s| !s.ends_with('?'))
            .collect::<Vec<_>>()}),
        "retention_verdict" => {
            let message = sec("message");
            let asks_known = message.trim_end().ends_with('?')
                && items(sec("facts")).iter().any(|f| shares_word(f, message));
            json!({"reason": "fake", "verdict": yes_no(asks_known)})
        }
        "turn_relevance" => {
            let turns = sec("turns");
            let last = |role: &str| {
                turns
                    .lines()
                    .filter_map(|l| l.strip_prefix(role))
                    .next_back()
                    .unwrap_or("")
            };
            let relevant = shares_word(last("user: "), last("assistant: "));
            json!({"reason": "fake", "verdict": yes_no(relevant)})
        }
        "user_intentions" => json!({"intentions": sec("turns")
            .lines()
            .filter_map(|l| l.strip_prefix("user: "))
            .filter(|l| l.trim_end().ends_with('?'))
            .collect::<Vec<_>>()}),
        "intentions_met" => verdicts(
            items(sec("intentions"))
                .iter()
                .map(|i| yes_no(met(sec("turns"), i)))
                .collect::<Vec<_>>(),
        ),
        "intention_met" => json!({"verdict": yes_no(met(sec("turns"), sec("intention")))}),
        "role_verdicts" => verdicts(
            items(sec("replies"))
                .iter()
                .map(|r| yes_no(!shares_word(r, "code debug python")))
                .collect::<Vec<_>>(),
        ),
        "goal_outcome" => {
            let turns = sec("turns");
            let said = |role: &str| -> Vec<&str> {
                turns.lines().filter_map(|l| l.strip_prefix(role)).collect()
            };
            json!({"user_goal": said("user: ").first().copied().unwrap_or(""),
                   "end_state": said("assistant: ").join("; ")})
        }
        "task_rating" => json!({"reason": "fake",
            "rating": if shares_word(sec("task"), sec("outcome")) { 5 } else { 1 }}),
        "outcome_match" => json!({"reason": "fake",
            "verdict": yes_no(shares_word(sec("desired_outcome"), sec("arrived_outcome")))}),
        "conversation_topics" => json!({"topics": sec("turns")
            .lines()
            .filter_map(|l| l.strip_prefix("user: "))
            .collect::<Vec<_>>()}),
        "topics_answered" => verdicts(
            items(sec("topics"))
                .iter()
                .map(|t| yes_no(met(sec("turns"), t)))
                .collect::<Vec<_>>(),
        ),
        "topic_answered" => json!({"verdict": yes_no(met(sec("turns"), sec("topic")))}),
        "topics_in_reference" => verdicts(
            items(sec("topics"))
                .iter()
                .map(|t| yes_no(shares_word(t, sec("reference_topics"))))
                .collect::<Vec<_>>(),
        ),
        "argument_verdicts" => verdicts(
            items(sec("calls"))
                .iter()
                .map(|c| yes_no(!copies_user_words(sec("turns"), c)))
                .collect::<Vec<_>>(),
        ),
        "argument_verdict" => {
            json!({"verdict": yes_no(!copies_user_words(sec("turns"), sec("call")))})
        }
        "role_verdict" => {
            json!({"verdict": yes_no(!shares_word(sec("reply"), "code debug python"))})
        }
        _ => return None,
    })
}

/// What [`answer`] says to the `outcome_reason` prompt: the metric and
/// the score it was given, quoted.
pub fn reason_for(metric: &str, score: &str) -> String {
    format!("{metric} scored {score}.")
}

/// A bag-of-letters embedding: similar texts, similar vectors.
pub fn embed(text: &str) -> Vec<f64> {
    let mut v = vec![0.0; 26];
    for c in text
        .to_ascii_lowercase()
        .bytes()
        .filter(u8::is_ascii_lowercase)
    {
        v[(c - b'a') as usize] += 1.0;
    }
    v
}

/// Cosine similarity of two vectors.
pub fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    dot / (a.iter().map(|x| x * x).sum::<f64>().sqrt()
        * b.iter().map(|x| x * x).sum::<f64>().sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn answer_of(reply: Reply) -> Value {
        let Reply::Http { body, .. } = reply else {
            panic!("an answer");
        };
        let body: Value = serde_json::from_str(&body).unwrap();
        serde_json::from_str(body["choices"][0]["message"]["content"].as_str().unwrap()).unwrap()
    }

    /// ragas asks for JSON in words, stating a pydantic model's schema
    /// (nested models under `$defs`): the answer satisfies it, its lists
    /// of the items asked for.
    #[test]
    fn a_schema_stated_in_the_prompt_is_answered() {
        let schema = json!({
            "$defs": {"Verdict": {"type": "object", "properties": {
                "reason": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "verdict": {"type": "integer"}}}},
            "type": "object",
            "properties": {"verdicts": {"type": "array", "items": {"$ref": "#/$defs/Verdict"}}}
        });
        let message = format!(
            "Please return the output in a JSON format that complies with the following \
             schema as specified in JSON Schema:\n{schema}Do not use single quotes."
        );
        let req = Recorded {
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            body: json!({"messages": [{"role": "user", "content": message}]}),
            at: Instant::now(),
        };
        let verdict = json!({"reason": "fake", "verdict": 0});
        let two = Fill {
            items: 2,
            ..Fill::default()
        };
        assert_eq!(
            answer_of(reply_filling(&req, &two)),
            json!({"verdicts": [verdict, verdict]})
        );
        assert_eq!(answer_of(reply(&req)), json!({"verdicts": []}));
    }

    /// A willing fill, for another library's generator: strings are the
    /// sentences of the prompt's input in turn (its later strings first:
    /// the themes, not the persona's description), a map has a member
    /// for each name the input gives, a score without a maximum is the
    /// one given and one with a maximum that maximum.
    #[test]
    fn a_willing_fill_answers_with_the_inputs_text_names_and_top_scores() {
        let schema = json!({
            "type": "object",
            "properties": {
                "mapping": {"type": "object", "additionalProperties":
                    {"type": "array", "items": {"type": "string"}}},
                "score": {"type": "integer"},
                "clarity": {"type": "number", "maximum": 1}
            }
        });
        let input = json!({
            "personas": [{"name": "Historian", "role_description": "Studies the past closely."}],
            "themes": ["Radium glows blue. It was found in 1898."]
        });
        let message =
            format!("Match personas to themes. JSON Schema:\n{schema}\ninput: {input}\nOutput: ");
        let req = Recorded {
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            body: json!({"messages": [{"role": "user", "content": message}]}),
            at: Instant::now(),
        };
        let willing = Fill {
            items: 2,
            text: true,
            score: Some(5.0),
        };
        assert_eq!(
            answer_of(reply_filling(&req, &willing)),
            json!({
                "mapping": {"Historian": ["Radium glows blue.", "It was found in 1898."]},
                "score": 5,
                "clarity": 1.0
            })
        );
    }

    /// An agent's steps: each tool offered is called in turn with its
    /// parameters' defaults (nested ones included), then the last result
    /// is the answer; a new user message starts the calls again. (The
    /// schema's keys are in alphabetical order, so the arguments' text is
    /// the same whether JSON objects keep their order or sort it.)
    #[test]
    fn an_agent_calls_each_tool_in_turn_then_answers() {
        let tools = json!([
            {"type": "function", "function": {"name": "search", "parameters": {
                "type": "object", "properties": {"q": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "book", "parameters": {
                "type": "object", "properties": {
                    "flight": {"type": "string", "default": "SK4711"},
                    "seat": {"type": "object", "properties": {
                        "letter": {"type": "string", "default": "C"},
                        "row": {"type": "integer", "default": 12}}}}}}}
        ]);
        let step = |messages: Value| {
            let req = Recorded {
                path: "/v1/chat/completions".into(),
                headers: Vec::new(),
                body: json!({"messages": messages, "tools": tools}),
                at: Instant::now(),
            };
            let Reply::Http { body, .. } = reply(&req) else {
                panic!("an answer");
            };
            serde_json::from_str::<Value>(&body).unwrap()["choices"][0]["message"].clone()
        };
        let user = json!({"role": "user", "content": "Book SK4711."});
        let first = step(json!([user]));
        assert_eq!(
            first["tool_calls"][0]["function"],
            json!({"name": "search", "arguments": "{}"})
        );
        let result = json!({"role": "tool", "tool_call_id": "call_1", "content": "found"});
        let second = step(json!([user, first, result]));
        assert_eq!(second["tool_calls"][0]["id"], "call_2");
        assert_eq!(
            second["tool_calls"][0]["function"],
            json!({"name": "book",
                   "arguments": r#"{"flight":"SK4711","seat":{"letter":"C","row":12}}"#})
        );
        let booked = json!({"role": "tool", "tool_call_id": "call_2", "content": "booked"});
        let answer = step(json!([user, first, result, second, booked]));
        assert_eq!(answer, json!({"role": "assistant", "content": "booked"}));
        let again = step(json!([user, first, result, second, booked, answer, user]));
        assert_eq!(again["tool_calls"][0]["function"]["name"], "search");
    }
}
