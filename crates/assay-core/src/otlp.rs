//! Agent traces as samples: an OTLP JSON export (what an OpenTelemetry
//! collector's file exporter writes: `{"resourceSpans": [...]}` objects,
//! one per line or one document) read as one row per trace.
//!
//! A trace's conversation is the one its last LLM span saw: that span's
//! input messages followed by its output messages (an agent's last call
//! carries the whole history, tool calls and results included). LLM spans
//! are read in three spellings:
//!
//! - the OpenTelemetry GenAI semantic conventions: `gen_ai.input.messages`
//!   and `gen_ai.output.messages` (JSON messages of typed `parts`: `text`,
//!   `tool_call`, `tool_call_response`) and `gen_ai.system_instructions`;
//! - OpenInference: `llm.input_messages.N.message.*` and
//!   `llm.output_messages.N.message.*` (role, content or contents,
//!   `tool_calls.M.tool_call.*`, `tool_call_id`);
//! - the older flattened GenAI attributes: `gen_ai.prompt.N.*` and
//!   `gen_ai.completion.N.*`.
//!
//! Documents of OpenInference retriever spans
//! (`retrieval.documents.N.document.content`) become the row's
//! `retrieved_contexts`; the last user message with text its `user_input`
//! and the last assistant message with text after it its `response`, so
//! that single-turn metrics score a RAG trace too. The row's `id` is the
//! trace id in hex. A trace without an LLM span (an HTTP request's, say)
//! is no row; a trace whose messages cannot be read is a bad row naming
//! the span and attribute.
//!
//! LLM calls without a common parent span (an agent that calls its client
//! directly: each call a root span, usually a trace of its own) are
//! stitched into conversations ([`Stitch`]): taken by start time, a call
//! whose input messages extend an earlier call's input and output
//! messages continues that call's conversation (one of its own trace
//! first). Each conversation is one row, named by the trace of its first
//! call.
//!
//! References that a test harness records on the spans (`assay.reference`,
//! `assay.reference_tool_calls`, ... on any span of the trace; see
//! [`REFERENCE_ATTRIBUTES`]) become the row's reference fields.
//!
//! An export whose LLM spans carry no messages (the instrumentation's
//! content capture is off) is an error that names the attributes found
//! and how to turn capture on, never an empty run.

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::io::Read;
use std::str::FromStr;

/// One trace of the export: its id and its row, or why it has none.
#[derive(Debug, PartialEq)]
pub struct Trace {
    /// The trace id, in lower-case hex.
    pub id: String,
    pub row: Result<Map<String, Value>, TraceError>,
}

/// A trace whose conversation cannot be read.
#[derive(Debug, PartialEq)]
pub struct TraceError {
    /// The attribute at fault.
    pub field: String,
    pub message: String,
}

/// One span, its attributes as plain JSON values.
struct Span {
    id: String,
    /// The parent span's id in hex; empty for a root span.
    parent: String,
    name: String,
    start: u64,
    end: u64,
    attributes: Map<String, Value>,
}

/// Whether LLM calls without a common parent span are stitched into
/// conversations (`--no-stitch`, `stitch=False`: one row per call).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stitch {
    #[default]
    On,
    Off,
}

impl fmt::Display for Stitch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stitch::On => "on",
            Stitch::Off => "off",
        })
    }
}

impl FromStr for Stitch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "on" => Ok(Stitch::On),
            "off" => Ok(Stitch::Off),
            other => Err(format!("'{other}': expected on or off")),
        }
    }
}

/// What stitching did to an export: how many LLM calls without a common
/// parent span there were and how many rows they became.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stitched {
    pub stitch: Stitch,
    /// LLM calls without a common parent span.
    pub calls: u64,
    /// The rows they became.
    pub rows: u64,
    /// Rows made of more than one call.
    pub rows_of_several_calls: u64,
}

impl fmt::Display for Stitched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stitch {
            Stitch::On => write!(
                f,
                "{} LLM calls without a common parent span stitched into {} conversations \
                 ({} of several calls: each call's input messages extend an earlier call's \
                 input and output; --no-stitch keeps one row per call)",
                self.calls, self.rows, self.rows_of_several_calls
            ),
            Stitch::Off => write!(
                f,
                "{} LLM calls without a common parent span read as one row each (--no-stitch)",
                self.calls
            ),
        }
    }
}

/// The rows of an export and what stitching did.
#[derive(Debug, PartialEq)]
pub struct Export {
    pub traces: Vec<Trace>,
    /// `None` when no call was without a common parent.
    pub stitched: Option<Stitched>,
}

/// The attributes that carry a row's reference fields, each a field name
/// after `assay.`: the list fields and `reference_tool_calls` as JSON text
/// (or an OTLP array), `reference` and `chatbot_role` as plain text.
pub const REFERENCE_ATTRIBUTES: [&str; 6] = [
    "assay.reference",
    "assay.references",
    "assay.reference_contexts",
    "assay.reference_tool_calls",
    "assay.reference_topics",
    "assay.chatbot_role",
];

/// The traces of an OTLP JSON export, in the order their first span
/// appears: one [`Trace`] per trace whose LLM spans share a parent, one
/// per conversation of the calls that do not ([`Stitch`]). The error is
/// why the export as a whole cannot be read, or why it holds nothing to
/// score though it has spans.
pub fn read(reader: impl Read, stitch: Stitch) -> Result<Export, String> {
    read_with(reader, stitch, None)
}

/// The traces of an OTLP JSON export as [`read`] gives them, the
/// messages of `events` (an OTLP logs export's GenAI events, [`Events`])
/// put on their spans first: a span that carries no messages of its own
/// reads as if it carried its events'. Events whose span is not in the
/// export are a bad row each (one per span), after the others.
pub fn read_with(
    reader: impl Read,
    stitch: Stitch,
    events: Option<&Events>,
) -> Result<Export, String> {
    let mut order: Vec<String> = Vec::new();
    let mut traces: HashMap<String, Vec<Span>> = HashMap::new();
    for (n, value) in serde_json::Deserializer::from_reader(reader)
        .into_iter::<Value>()
        .enumerate()
    {
        let value = value.map_err(|e| format!("invalid JSON: {e}"))?;
        let batch = n + 1;
        let resource_spans = value
            .get("resourceSpans")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                format!(
                    "object {batch}: expected an OTLP trace export ({{\"resourceSpans\": [...]}})"
                )
            })?;
        for resource in resource_spans {
            let scopes = resource
                .get("scopeSpans")
                .or_else(|| resource.get("instrumentationLibrarySpans"))
                .and_then(Value::as_array);
            for scope in scopes.into_iter().flatten() {
                let spans = scope.get("spans").and_then(Value::as_array);
                for span in spans.into_iter().flatten() {
                    let (trace, span) = read_span(span)
                        .ok_or_else(|| format!("object {batch}: a span without a traceId"))?;
                    if !traces.contains_key(&trace) {
                        order.push(trace.clone());
                    }
                    traces.entry(trace).or_default().push(span);
                }
            }
        }
    }
    let mut unmatched = Vec::new();
    if let Some(events) = events {
        let mut matched: HashSet<&(String, String)> = HashSet::new();
        for (trace, spans) in traces.iter_mut() {
            for span in spans.iter_mut() {
                let key = (trace.clone(), span.id.clone());
                if let Some((key, of_span)) = events.by_span.get_key_value(&key) {
                    matched.insert(key);
                    of_span.attach(span);
                }
            }
        }
        unmatched = events
            .order
            .iter()
            .filter(|key| !matched.contains(key))
            .map(|key| events.unmatched(key))
            .collect();
    }
    let all: Vec<(String, Vec<Span>)> = order
        .into_iter()
        .filter_map(|id| {
            let mut spans = traces.remove(&id)?;
            spans.sort_by_key(|s| (s.start, s.end));
            Some((id, spans))
        })
        .collect();
    let mut export = rows(&all, stitch);
    // Traces whose LLM spans carry no messages: bad rows beside others,
    // but an export of nothing else holds nothing to score.
    let bare = all
        .iter()
        .filter(|(_, spans)| {
            spans
                .iter()
                .all(|s| Convention::of(&s.attributes).is_none())
                && spans.iter().any(|s| llm_like(&s.attributes))
        })
        .count();
    if export.traces.len() == bare && !all.is_empty() {
        let mut why = nothing_to_score(&all);
        match events {
            Some(events) if events.is_empty() => why.push_str(
                "\n(the logs export given holds no GenAI log event: gen_ai.user.message, \
                 gen_ai.choice, ...)",
            ),
            Some(events) => why.push_str(&format!(
                "\n(the {} GenAI log events of the logs export belong to {} spans, none of \
                 them in this export: are the two files of one run?)",
                events.records,
                events.order.len()
            )),
            None => {}
        }
        return Err(why);
    }
    export.traces.extend(unmatched);
    Ok(export)
}

/// The GenAI log events of an OTLP JSON logs export
/// (`{"resourceLogs": [...]}`), as the older content mode of
/// `opentelemetry-instrumentation-openai-v2`
/// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`) writes the
/// messages of its spans: `gen_ai.system.message`, `gen_ai.user.message`,
/// `gen_ai.assistant.message` (`tool_calls`), `gen_ai.tool.message` (`id`)
/// for the input, `gen_ai.choice` (`index`, `finish_reason`, `message`) for
/// the output, each log record named by its `eventName` (or its
/// `event.name` attribute), its `body` the event's payload, and its
/// `traceId` and `spanId` the span it belongs to.
#[derive(Debug, Default, PartialEq)]
pub struct Events {
    /// (trace id, span id), in hex, to the span's events.
    by_span: HashMap<(String, String), SpanEvents>,
    /// The spans in the order their first event appears.
    order: Vec<(String, String)>,
    /// GenAI events read.
    pub records: u64,
}

/// The events of one span, in record order.
#[derive(Debug, Default, PartialEq)]
struct SpanEvents {
    events: Vec<Event>,
}

#[derive(Debug, PartialEq)]
struct Event {
    name: String,
    /// `timeUnixNano`, else `observedTimeUnixNano`.
    time: Option<u64>,
    /// An input message, or a choice's index and message.
    message: Value,
    choice: Option<i64>,
}

/// The log events that carry GenAI messages: the input messages' by role.
const MESSAGE_EVENTS: [(&str, &str); 4] = [
    ("gen_ai.system.message", "system"),
    ("gen_ai.user.message", "user"),
    ("gen_ai.assistant.message", "assistant"),
    ("gen_ai.tool.message", "tool"),
];

impl Events {
    /// Reads an OTLP JSON logs export: `{"resourceLogs": [...]}` objects,
    /// one per line or one document. Log records that are not GenAI
    /// message events are passed over. The error is why the export as a
    /// whole cannot be read.
    pub fn read(reader: impl Read) -> Result<Events, String> {
        let mut events = Events::default();
        for (n, value) in serde_json::Deserializer::from_reader(reader)
            .into_iter::<Value>()
            .enumerate()
        {
            let value = value.map_err(|e| format!("invalid JSON: {e}"))?;
            let batch = n + 1;
            let resource_logs = value
                .get("resourceLogs")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    format!(
                        "object {batch}: expected an OTLP logs export ({{\"resourceLogs\": [...]}})"
                    )
                })?;
            for resource in resource_logs {
                let scopes = resource
                    .get("scopeLogs")
                    .or_else(|| resource.get("instrumentationLibraryLogs"))
                    .and_then(Value::as_array);
                for scope in scopes.into_iter().flatten() {
                    let records = scope.get("logRecords").and_then(Value::as_array);
                    for record in records.into_iter().flatten() {
                        if let Some((key, event)) = read_event(record) {
                            events.records += 1;
                            if !events.by_span.contains_key(&key) {
                                events.order.push(key.clone());
                            }
                            events.by_span.entry(key).or_default().events.push(event);
                        }
                    }
                }
            }
        }
        Ok(events)
    }

    /// Whether no GenAI event was read.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// The bad row of the events of span `key`, which the trace export
    /// does not hold.
    fn unmatched(&self, (trace, span): &(String, String)) -> Trace {
        let events = &self.by_span[&(trace.clone(), span.clone())].events;
        let names: BTreeSet<&str> = events.iter().map(|e| e.name.as_str()).collect();
        let id = format!("{trace}/{span}");
        let span = if span.is_empty() {
            "no span id".to_string()
        } else {
            format!("span {span}")
        };
        Trace {
            id,
            row: Err(TraceError {
                field: "spanId".into(),
                message: format!(
                    "{} log events ({}) of {span}, which the trace export does not hold: \
                     their messages belong to no LLM span (export the spans and logs of \
                     the same run)",
                    events.len(),
                    listed(names.into_iter().map(str::to_string).collect()),
                ),
            }),
        }
    }
}

impl SpanEvents {
    /// Puts the messages on `span` as `gen_ai.input.messages` and
    /// `gen_ai.output.messages` (chat messages, which [`messages`] reads as
    /// they are), unless the span carries messages of its own. The events
    /// are taken in time order when each has a time, else in record order;
    /// the output is the first choice (the lowest `index`).
    fn attach(&self, span: &mut Span) {
        if Convention::of(&span.attributes).is_some() {
            return;
        }
        let mut events: Vec<&Event> = self.events.iter().collect();
        if events.iter().all(|e| e.time.is_some()) {
            events.sort_by_key(|e| e.time);
        }
        let input: Vec<Value> = events
            .iter()
            .filter(|e| e.choice.is_none())
            .map(|e| e.message.clone())
            .collect();
        let first = events.iter().filter_map(|e| e.choice).min();
        let output: Vec<Value> = events
            .iter()
            .filter(|e| e.choice.is_some() && e.choice == first)
            .map(|e| e.message.clone())
            .collect();
        span.attributes
            .insert("gen_ai.input.messages".into(), Value::Array(input));
        span.attributes
            .insert("gen_ai.output.messages".into(), Value::Array(output));
    }
}

/// A log record as a GenAI event of its span (trace id, span id), or
/// `None` when it is no GenAI message event.
fn read_event(record: &Value) -> Option<((String, String), Event)> {
    let name = match record.get("eventName").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => record
            .get("attributes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|kv| kv.get("key").and_then(Value::as_str) == Some("event.name"))
            .and_then(|kv| any_value(kv.get("value")?).as_str().map(str::to_string))?,
    };
    let body = match record.get("body").map(any_value) {
        // A body written as JSON text.
        Some(Value::String(text)) => serde_json::from_str(&text).unwrap_or(Value::Null),
        Some(body) => body,
        None => Value::Null,
    };
    let (message, choice) = if name == "gen_ai.choice" {
        let index = match &body["index"] {
            Value::Number(n) => n.as_i64().unwrap_or(0),
            Value::String(s) => s.parse().unwrap_or(0),
            _ => 0,
        };
        (event_message(&body["message"], "assistant"), Some(index))
    } else {
        let role = MESSAGE_EVENTS.iter().find(|(n, _)| *n == name)?.1;
        (event_message(&body, role), None)
    };
    let time = ["timeUnixNano", "observedTimeUnixNano"]
        .iter()
        .find_map(|key| match record.get(*key)? {
            Value::String(s) => s.parse().ok(),
            Value::Number(n) => n.as_u64(),
            _ => None,
        })
        .filter(|t| *t > 0);
    let id = |key: &str| {
        record
            .get(key)
            .and_then(Value::as_str)
            .map(hex_id)
            .unwrap_or_default()
    };
    Some((
        (id("traceId"), id("spanId")),
        Event {
            name,
            time,
            message,
            choice,
        },
    ))
}

/// An event's payload as a chat message: `role` unless it names its own,
/// `content` (text, or the texts of content parts), the assistant's
/// `tool_calls` (arguments as JSON text) and a tool result's `id` as its
/// `tool_call_id`.
fn event_message(body: &Value, role: &str) -> Value {
    let role = body["role"].as_str().unwrap_or(role);
    let content = match &body["content"] {
        Value::Null => Value::Null,
        Value::String(s) => Value::String(s.clone()),
        Value::Array(parts) => Value::String(
            parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    part => part["text"].as_str().or(part["content"].as_str()),
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => Value::String(other.to_string()),
    };
    let mut message = json!({"role": role, "content": content});
    let calls: Vec<Value> = body["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|call| {
            let arguments = match &call["function"]["arguments"] {
                Value::String(s) => s.clone(),
                Value::Null => "{}".to_string(),
                other => other.to_string(),
            };
            json!({"id": call["id"], "type": "function",
                   "function": {"name": call["function"]["name"], "arguments": arguments}})
        })
        .collect();
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    if role == "tool" {
        let id = body.get("id").or(body.get("tool_call_id"));
        message["tool_call_id"] = id.cloned().unwrap_or(Value::Null);
    }
    message
}

/// One LLM call of a trace whose LLM spans share no parent.
struct Call {
    /// The trace's place in the export, and the span's in the trace.
    trace: usize,
    span: usize,
    input: Vec<Value>,
    output: Vec<Value>,
}

/// The rows of the traces `all` (each with its spans in start order).
fn rows(all: &[(String, Vec<Span>)], stitch: Stitch) -> Export {
    // (trace, start, trace) of each row, to put them in export order.
    let mut out: Vec<((usize, u64), Trace)> = Vec::new();
    let mut calls: Vec<Call> = Vec::new();
    for (t, (id, spans)) in all.iter().enumerate() {
        let llm: Vec<(usize, Convention)> = spans
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Convention::of(&s.attributes).map(|c| (i, c)))
            .collect();
        if llm.is_empty() {
            if let Some(e) = without_content(spans) {
                out.push(((t, 0), trace_error(id, e)));
            }
            continue;
        }
        let ids: HashSet<&str> = spans.iter().map(|s| s.id.as_str()).collect();
        let parented = llm
            .iter()
            .all(|(i, _)| ids.contains(spans[*i].parent.as_str()));
        if parented {
            if let Some(row) = row(id, spans, &[t], all) {
                out.push((
                    (t, 0),
                    Trace {
                        id: id.clone(),
                        row,
                    },
                ));
            }
            continue;
        }
        let mut read = Vec::new();
        for (i, convention) in llm {
            match messages(&spans[i], convention) {
                Ok((input, output)) => read.push(Call {
                    trace: t,
                    span: i,
                    input,
                    output,
                }),
                Err(e) => {
                    read.clear();
                    out.push(((t, 0), trace_error(id, e)));
                    break;
                }
            }
        }
        calls.extend(read);
    }
    let n_calls = calls.len() as u64;
    let start = |c: &Call| {
        let s = &all[c.trace].1[c.span];
        (s.start, s.end, c.trace, c.span)
    };
    calls.sort_by_key(start);
    // Each conversation: its calls, in order.
    let mut conversations: Vec<Vec<usize>> = Vec::new();
    for (k, call) in calls.iter().enumerate() {
        let continued = match stitch {
            Stitch::Off => None,
            Stitch::On => conversations
                .iter()
                .enumerate()
                .filter(|(_, conv)| {
                    let last = &calls[*conv.last().unwrap_or(&k)];
                    extends(&call.input, &last.input, &last.output)
                })
                // One of its own trace first, then the one waiting longest
                // (agents that run alike give like calls in turn).
                .max_by_key(|(j, conv)| {
                    let last = &calls[*conv.last().unwrap_or(&k)];
                    (
                        last.trace == call.trace,
                        std::cmp::Reverse((start(last), *j)),
                    )
                })
                .map(|(j, _)| j),
        };
        match continued {
            Some(j) => conversations[j].push(k),
            None => conversations.push(vec![k]),
        }
    }
    let mut per_trace: HashMap<usize, usize> = HashMap::new();
    for conv in &conversations {
        *per_trace.entry(calls[conv[0]].trace).or_default() += 1;
    }
    let several = conversations.iter().filter(|c| c.len() > 1).count() as u64;
    for conv in &conversations {
        let first = &calls[conv[0]];
        let last = &calls[conv[conv.len() - 1]];
        let (trace_id, spans) = &all[first.trace];
        let id = if per_trace[&first.trace] > 1 {
            format!("{trace_id}/{}", spans[first.span].id)
        } else {
            trace_id.clone()
        };
        let mut involved: Vec<usize> = conv.iter().map(|k| calls[*k].trace).collect();
        involved.dedup();
        let messages = last.input.iter().chain(&last.output).cloned().collect();
        let row = fill(&id, messages, &involved, all);
        out.push(((first.trace, spans[first.span].start), Trace { id, row }));
    }
    out.sort_by_key(|(at, _)| *at);
    let stitched = (n_calls > 0 && (n_calls > conversations.len() as u64 || stitch == Stitch::Off))
        .then_some(Stitched {
            stitch,
            calls: n_calls,
            rows: conversations.len() as u64,
            rows_of_several_calls: several,
        });
    Export {
        traces: out.into_iter().map(|(_, t)| t).collect(),
        stitched,
    }
}

fn trace_error(id: &str, e: TraceError) -> Trace {
    Trace {
        id: id.to_string(),
        row: Err(e),
    }
}

/// Whether `input` begins with the messages `before` and `after` (a call's
/// input and output), compared as [`same_message`] does.
fn extends(input: &[Value], before: &[Value], after: &[Value]) -> bool {
    let seen = before.len() + after.len();
    seen > 0
        && input.len() > seen
        && before
            .iter()
            .chain(after)
            .zip(input)
            .all(|(a, b)| same_message(a, b))
}

/// Whether two chat messages say the same: role, text (`null` as empty),
/// tool calls by name and arguments (JSON text read as JSON) and the tool
/// result's call id. A call's output and the next call's input spell the
/// same message in small ways differently (`null` or `""` content, a
/// finish reason, arguments as text or an object).
fn same_message(a: &Value, b: &Value) -> bool {
    fn text(v: &Value) -> &str {
        v.as_str().unwrap_or("").trim()
    }
    fn arguments(v: &Value) -> Value {
        match v {
            Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
            Value::Null => json!({}),
            other => other.clone(),
        }
    }
    fn calls(v: &Value) -> Vec<(Value, Value, Value)> {
        v["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["id"].clone(),
                    c["function"]["name"].clone(),
                    arguments(&c["function"]["arguments"]),
                )
            })
            .collect()
    }
    a["role"] == b["role"]
        && text(&a["content"]) == text(&b["content"])
        && calls(a) == calls(b)
        && a.get("tool_call_id") == b.get("tool_call_id")
}

/// Why an export with spans holds nothing to score: its LLM spans carry no
/// messages (content capture is off), or it has no LLM span.
fn nothing_to_score(all: &[(String, Vec<Span>)]) -> String {
    let spans = all.iter().flat_map(|(_, s)| s);
    let n_spans = spans.clone().count();
    let bare: Vec<&Span> = spans.filter(|s| llm_like(&s.attributes)).collect();
    if bare.is_empty() {
        let names: BTreeSet<&str> = all
            .iter()
            .flat_map(|(_, s)| s)
            .map(|s| s.name.as_str())
            .collect();
        return format!(
            "no rows to score: none of its {n_spans} spans in {} traces is an LLM span \
             (spans named {}); assay reads the messages of LLM spans as the OpenTelemetry \
             GenAI conventions (gen_ai.input.messages, gen_ai.prompt.N.*) or OpenInference \
             (llm.input_messages.N.*) write them",
            all.len(),
            listed(names.into_iter().map(|n| format!("'{n}'")).collect()),
        );
    }
    let found: BTreeSet<&str> = bare
        .iter()
        .flat_map(|s| s.attributes.keys())
        .map(String::as_str)
        .collect();
    let traces = all
        .iter()
        .filter(|(_, s)| s.iter().any(|s| llm_like(&s.attributes)))
        .count();
    format!(
        "no rows to score: its {} LLM spans (in {traces} traces) carry no messages, only {}: \
         the instrumentation's content capture is off. Turn it on and export again:\n\
         {CAPTURE_HINT}",
        bare.len(),
        listed(found.into_iter().map(str::to_string).collect()),
    )
}

/// How to make each instrumentation write the messages.
pub const CAPTURE_HINT: &str =
    "  - OpenTelemetry GenAI (opentelemetry-instrumentation-openai-v2): \
     OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and \
     OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only; or, in its older mode \
     (=true), which writes the messages as log events, export the logs too and pass that \
     OTLP logs export with --logs FILE (logs= in Python)\n  \
     - OpenInference (openinference-instrumentation-*): leave OPENINFERENCE_HIDE_INPUTS, \
     OPENINFERENCE_HIDE_OUTPUTS, OPENINFERENCE_HIDE_INPUT_MESSAGES, \
     OPENINFERENCE_HIDE_OUTPUT_MESSAGES, OPENINFERENCE_HIDE_INPUT_TEXT and \
     OPENINFERENCE_HIDE_OUTPUT_TEXT unset or false (or hide_* in its TraceConfig)\n  \
     - OpenLLMetry (opentelemetry-instrumentation-openai): TRACELOOP_TRACE_CONTENT=true \
     (the default)";

/// At most 12 items, comma-separated, with how many more.
fn listed(items: Vec<String>) -> String {
    const MAX: usize = 12;
    let more = items.len().saturating_sub(MAX);
    let mut text = items.into_iter().take(MAX).collect::<Vec<_>>().join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// Whether a span is an LLM call by its attributes, messages aside: a
/// GenAI `chat` (or text completion) operation, an OpenInference `LLM`
/// span, or an OpenLLMetry chat request.
fn llm_like(attributes: &Map<String, Value>) -> bool {
    let text = |key: &str| attributes.get(key).and_then(Value::as_str);
    match text("gen_ai.operation.name") {
        Some(op) => matches!(op, "chat" | "text_completion" | "generate_content"),
        None => {
            text("openinference.span.kind") == Some("LLM")
                || matches!(text("llm.request.type"), Some("chat" | "completion"))
        }
    }
}

/// The error of a trace whose LLM spans carry no messages, when one does.
fn without_content(spans: &[Span]) -> Option<TraceError> {
    let span = spans.iter().find(|s| llm_like(&s.attributes))?;
    let field = if span.attributes.contains_key("openinference.span.kind") {
        "llm.input_messages"
    } else {
        "gen_ai.input.messages"
    };
    Some(bad(
        span,
        field,
        "an LLM span without its messages: the instrumentation's content capture is off \
         (or it writes them as log events: pass its logs export with --logs FILE; see \
         docs/tool-calls.md, Traces)"
            .into(),
    ))
}

fn read_span(span: &Value) -> Option<(String, Span)> {
    let trace = hex_id(span.get("traceId")?.as_str()?);
    let time = |key: &str| match span.get(key) {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    };
    let attributes = span
        .get("attributes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|kv| {
            Some((
                kv.get("key")?.as_str()?.to_string(),
                any_value(kv.get("value")?),
            ))
        })
        .collect();
    Some((
        trace,
        Span {
            id: span
                .get("spanId")
                .and_then(Value::as_str)
                .map(hex_id)
                .unwrap_or_default(),
            parent: span
                .get("parentSpanId")
                .and_then(Value::as_str)
                .map(hex_id)
                .unwrap_or_default(),
            name: span
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            start: time("startTimeUnixNano"),
            end: time("endTimeUnixNano"),
            attributes,
        },
    ))
}

/// An OTLP `AnyValue` as plain JSON.
fn any_value(v: &Value) -> Value {
    let Some(map) = v.as_object() else {
        return Value::Null;
    };
    if let Some(s) = map.get("stringValue").or_else(|| map.get("bytesValue")) {
        return s.clone();
    }
    if let Some(b) = map.get("boolValue") {
        return b.clone();
    }
    if let Some(i) = map.get("intValue") {
        return match i {
            Value::String(s) => s.parse::<i64>().map_or_else(|_| i.clone(), Value::from),
            other => other.clone(),
        };
    }
    if let Some(d) = map.get("doubleValue") {
        return d.clone();
    }
    let values = |key: &str| {
        map.get(key)
            .and_then(|a| a.get("values"))
            .and_then(Value::as_array)
    };
    if let Some(items) = values("arrayValue") {
        return Value::Array(items.iter().map(any_value).collect());
    }
    if let Some(items) = values("kvlistValue") {
        return Value::Object(
            items
                .iter()
                .filter_map(|kv| {
                    Some((
                        kv.get("key")?.as_str()?.to_string(),
                        any_value(kv.get("value")?),
                    ))
                })
                .collect(),
        );
    }
    Value::Null
}

/// A trace or span id in lower-case hex: OTLP JSON writes hex, the
/// protobuf JSON mapping base64.
fn hex_id(id: &str) -> String {
    if id.len().is_multiple_of(2) && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return id.to_ascii_lowercase();
    }
    match base64(id) {
        Some(bytes) if bytes.len() == 16 || bytes.len() == 8 => {
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        }
        _ => id.to_string(),
    }
}

fn base64(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.trim_end_matches('=').bytes() {
        acc = (acc << 6) | digit(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// The row of a trace whose LLM spans share a parent: the conversation of
/// its last LLM span; `None` when it has no LLM span. `traces` are the
/// places in `all` of the traces whose spans give the row its contexts
/// and references.
fn row(
    id: &str,
    spans: &[Span],
    traces: &[usize],
    all: &[(String, Vec<Span>)],
) -> Option<Result<Map<String, Value>, TraceError>> {
    let (llm, convention) = spans
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Convention::of(&s.attributes).map(|c| (i, s, c)))
        .max_by_key(|(i, s, _)| (s.end, s.start, *i))
        .map(|(_, s, c)| (s, c))?;
    Some(
        messages(llm, convention)
            .and_then(|(input, output)| fill(id, [input, output].concat(), traces, all)),
    )
}

/// The row `id` of a conversation: its messages, its single-turn fields,
/// the contexts and references on the spans of `traces` (places in
/// `all`), and the ids of those traces (`trace_id`, and `trace_ids` when
/// there are several) for references to be joined by.
fn fill(
    id: &str,
    messages: Vec<Value>,
    traces: &[usize],
    all: &[(String, Vec<Span>)],
) -> Result<Map<String, Value>, TraceError> {
    let mut row = Map::new();
    row.insert("id".into(), Value::String(id.to_string()));
    let spans = || traces.iter().flat_map(|t| &all[*t].1);
    let contexts: Vec<Value> = spans().flat_map(documents).collect();
    if let Some((question, answer)) = exchange(&messages) {
        row.insert("user_input".into(), question);
        if let Some(answer) = answer {
            row.insert("response".into(), answer);
        }
    }
    if !contexts.is_empty() {
        row.insert("retrieved_contexts".into(), Value::Array(contexts));
    }
    row.insert("messages".into(), Value::Array(messages));
    let mut given: BTreeMap<&str, (&Span, Value)> = BTreeMap::new();
    for span in spans() {
        for attribute in REFERENCE_ATTRIBUTES {
            let Some(value) = span.attributes.get(attribute) else {
                continue;
            };
            let field = &attribute["assay.".len()..];
            let value = match value {
                Value::String(text) if !matches!(field, "reference" | "chatbot_role") => {
                    serde_json::from_str(text)
                        .map_err(|e| bad(span, attribute, format!("invalid JSON: {e}")))?
                }
                other => other.clone(),
            };
            if let Some((earlier, before)) = given.get(field) {
                if *before != value {
                    return Err(bad(
                        span,
                        attribute,
                        format!(
                            "says otherwise than span '{}' ({}): which reference is meant is unclear",
                            earlier.name, earlier.id
                        ),
                    ));
                }
                continue;
            }
            given.insert(field, (span, value));
        }
    }
    for (field, (_, value)) in given {
        row.insert(field.to_string(), value);
    }
    row.insert("trace_id".into(), Value::String(all[traces[0]].0.clone()));
    if traces.len() > 1 {
        let ids = traces.iter().map(|t| Value::String(all[*t].0.clone()));
        row.insert("trace_ids".into(), Value::Array(ids.collect()));
    }
    Ok(row)
}

/// The last user message with text, and the last assistant message with
/// text after it.
fn exchange(messages: &[Value]) -> Option<(Value, Option<Value>)> {
    let text = |m: &Value, role: &str| {
        (m["role"] == role)
            .then(|| m["content"].as_str().filter(|t| !t.trim().is_empty()))
            .flatten()
            .map(|t| Value::String(t.to_string()))
    };
    let at = messages.iter().rposition(|m| text(m, "user").is_some())?;
    let question = text(&messages[at], "user")?;
    let answer = messages[at + 1..]
        .iter()
        .rev()
        .find_map(|m| text(m, "assistant"));
    Some((question, answer))
}

/// The texts of a retriever span's documents.
fn documents(span: &Span) -> Vec<Value> {
    indexed(pairs(&span.attributes), "retrieval.documents.")
        .into_values()
        .filter_map(|doc| doc.get("document.content").map(|v| (*v).clone()))
        .filter(Value::is_string)
        .collect()
}

/// How a span spells its messages.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Convention {
    /// `gen_ai.input.messages` / `gen_ai.output.messages`, JSON with parts.
    GenAi,
    /// `llm.input_messages.N.message.*`.
    OpenInference,
    /// `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`.
    GenAiFlat,
}

impl Convention {
    fn of(attributes: &Map<String, Value>) -> Option<Convention> {
        let has = |prefix: &str| attributes.keys().any(|k| k.starts_with(prefix));
        if attributes.contains_key("gen_ai.input.messages")
            || attributes.contains_key("gen_ai.output.messages")
        {
            Some(Convention::GenAi)
        } else if has("llm.input_messages.") || has("llm.output_messages.") {
            Some(Convention::OpenInference)
        } else if has("gen_ai.prompt.") || has("gen_ai.completion.") {
            Some(Convention::GenAiFlat)
        } else {
            None
        }
    }
}

/// The messages an LLM span saw and those it wrote, as OpenAI chat
/// messages, read as `convention` spells them.
fn messages(span: &Span, convention: Convention) -> Result<(Vec<Value>, Vec<Value>), TraceError> {
    let attributes = &span.attributes;
    let mut messages = Vec::new();
    // Where the output messages begin.
    let mut output = 0;
    match convention {
        Convention::GenAi => {
            if let Some(system) = attributes.get("gen_ai.system_instructions") {
                let field = "gen_ai.system_instructions";
                let parts = json_attribute(span, field, system)?;
                let text = texts(parts.as_array().map_or(&[][..], Vec::as_slice));
                if !text.is_empty() {
                    messages.push(json!({"role": "system", "content": text}));
                }
            }
            for field in ["gen_ai.input.messages", "gen_ai.output.messages"] {
                if field == "gen_ai.output.messages" {
                    output = messages.len();
                }
                let Some(value) = attributes.get(field) else {
                    continue;
                };
                let list = json_attribute(span, field, value)?;
                let Some(list) = list.as_array() else {
                    return Err(bad(span, field, "expected a list of messages".into()));
                };
                for (i, m) in list.iter().enumerate() {
                    messages.extend(genai_message(m).map_err(|path| {
                        bad(
                            span,
                            &format!("{field}[{i}]{path}"),
                            "missing or of the wrong type".into(),
                        )
                    })?);
                }
            }
        }
        Convention::OpenInference => {
            for prefix in ["llm.input_messages.", "llm.output_messages."] {
                if prefix == "llm.output_messages." {
                    output = messages.len();
                }
                for (_, m) in indexed(pairs(attributes), prefix) {
                    messages.push(flat_message(&m, "message.", "tool_call.", "function."));
                }
            }
        }
        Convention::GenAiFlat => {
            for prefix in ["gen_ai.prompt.", "gen_ai.completion."] {
                if prefix == "gen_ai.completion." {
                    output = messages.len();
                }
                for (_, m) in indexed(pairs(attributes), prefix) {
                    messages.push(flat_message(&m, "", "", ""));
                }
            }
        }
    }
    // A system instruction that the input messages repeat is said once.
    if output > 1 && messages[0]["role"] == "system" && messages[0] == messages[1] {
        messages.remove(0);
        output -= 1;
    }
    let outputs = messages.split_off(output);
    Ok((messages, outputs))
}

fn bad(span: &Span, field: &str, message: String) -> TraceError {
    TraceError {
        field: field.to_string(),
        message: format!("span '{}' ({}): {message}", span.name, span.id),
    }
}

/// An attribute that holds JSON as text (as the conventions say) or as a
/// structured value.
fn json_attribute(span: &Span, field: &str, value: &Value) -> Result<Value, TraceError> {
    match value {
        Value::String(text) => {
            serde_json::from_str(text).map_err(|e| bad(span, field, format!("invalid JSON: {e}")))
        }
        other => Ok(other.clone()),
    }
}

/// The texts of `text` parts, one per line.
fn texts(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|p| p["type"] == "text")
        .filter_map(|p| p["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A GenAI message as chat messages: one, or one per tool result. The
/// error is the path within the message that cannot be read.
fn genai_message(m: &Value) -> Result<Vec<Value>, String> {
    let role = m["role"].as_str().ok_or(".role")?;
    let Some(parts) = m.get("parts") else {
        // Already a chat message.
        return Ok(vec![m.clone()]);
    };
    let parts = parts.as_array().ok_or(".parts")?;
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for (j, part) in parts.iter().enumerate() {
        match part["type"].as_str() {
            Some("tool_call") => {
                let name = part["name"].as_str().ok_or(format!(".parts[{j}].name"))?;
                let arguments = match &part["arguments"] {
                    Value::String(s) => s.clone(),
                    Value::Null => "{}".to_string(),
                    other => other.to_string(),
                };
                calls.push(json!({"id": part["id"], "type": "function",
                                  "function": {"name": name, "arguments": arguments}}));
            }
            Some("tool_call_response") => {
                let content = match &part["response"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                results
                    .push(json!({"role": "tool", "tool_call_id": part["id"], "content": content}));
            }
            _ => {}
        }
    }
    let text = texts(parts);
    let mut out = Vec::new();
    if !results.is_empty() {
        out.extend(results);
        if text.is_empty() {
            return Ok(out);
        }
    }
    let mut message = json!({"role": role, "content": if text.is_empty() { Value::Null } else { Value::String(text) }});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    out.insert(0, message);
    Ok(out)
}

fn pairs(attributes: &Map<String, Value>) -> impl Iterator<Item = (&str, &Value)> {
    attributes.iter().map(|(k, v)| (k.as_str(), v))
}

/// Keys `{prefix}N.{rest}` grouped by `N`, each group `rest` to its value.
fn indexed<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a Value)>,
    prefix: &str,
) -> BTreeMap<usize, BTreeMap<&'a str, &'a Value>> {
    let mut out: BTreeMap<usize, BTreeMap<&str, &Value>> = BTreeMap::new();
    for (key, value) in entries {
        let Some(rest) = key.strip_prefix(prefix) else {
            continue;
        };
        let Some((n, rest)) = rest.split_once('.') else {
            continue;
        };
        if let Ok(n) = n.parse() {
            out.entry(n).or_default().insert(rest, value);
        }
    }
    out
}

/// A flattened message as a chat message: `{message}role`,
/// `{message}content` (or `{message}contents.N.message_content.text`),
/// `{message}tool_call_id` and `{message}tool_calls.N.{call}id`,
/// `{call}{function}name`, `{call}{function}arguments`.
fn flat_message(m: &BTreeMap<&str, &Value>, message: &str, call: &str, function: &str) -> Value {
    let get = |key: &str| m.get(format!("{message}{key}").as_str()).copied();
    let mut out = Map::new();
    out.insert("role".into(), get("role").cloned().unwrap_or(Value::Null));
    let contents: Vec<&str> = indexed(
        m.iter().map(|(k, v)| (*k, *v)),
        &format!("{message}contents."),
    )
    .into_values()
    .filter_map(|c| c.get("message_content.text").and_then(|v| v.as_str()))
    .collect();
    let content = match get("content") {
        Some(c) => c.clone(),
        None if !contents.is_empty() => Value::String(contents.join("\n")),
        None => Value::Null,
    };
    out.insert("content".into(), content);
    if let Some(id) = get("tool_call_id") {
        out.insert("tool_call_id".into(), id.clone());
    }
    let calls: Vec<Value> = indexed(
        m.iter().map(|(k, v)| (*k, *v)),
        &format!("{message}tool_calls."),
    )
    .into_values()
    .map(|c| {
        let field = |key: &str| c.get(key).map_or(Value::Null, |v| (*v).clone());
        json!({
            "id": field(&format!("{call}id")),
            "type": "function",
            "function": {
                "name": field(&format!("{call}{function}name")),
                "arguments": field(&format!("{call}{function}arguments")),
            },
        })
    })
    .collect();
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(key: &str, value: Value) -> Value {
        let value = match value {
            Value::String(s) => json!({"stringValue": s}),
            Value::Number(n) => json!({"intValue": n.to_string()}),
            other => json!({"boolValue": other}),
        };
        json!({"key": key, "value": value})
    }

    fn span(trace: &str, id: &str, name: &str, start: u64, attributes: Vec<Value>) -> Value {
        json!({"traceId": trace, "spanId": id, "name": name,
               "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 5).to_string(),
               "attributes": attributes})
    }

    fn export(spans: Vec<Value>) -> String {
        json!({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]})
            .to_string()
    }

    fn rows(text: &str) -> Vec<Trace> {
        read(text.as_bytes(), Stitch::On).unwrap().traces
    }

    const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";

    #[test]
    fn the_last_genai_span_gives_the_conversation_with_its_tool_calls_and_results() {
        let input = json!([
            {"role": "system", "parts": [{"type": "text", "content": "You book flights."}]},
            {"role": "user", "parts": [{"type": "text", "content": "Find a flight Oslo-Rome."}]},
            {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1",
                "name": "search_flights", "arguments": {"from": "OSL", "to": "ROM"}}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                "response": "SK4711 at 09:05"}]},
        ]);
        let output = json!([{"role": "assistant", "finish_reason": "stop",
            "parts": [{"type": "text", "content": "SK4711 leaves at 09:05."}]}]);
        let first = span(
            TRACE,
            "b7ad6b7169203331",
            "openai.chat",
            10,
            vec![attr(
                "gen_ai.input.messages",
                json!(input.as_array().unwrap()[..2]).to_string().into(),
            )],
        );
        let last = span(
            TRACE,
            "c7ad6b7169203331",
            "openai.chat",
            20,
            vec![
                attr("gen_ai.input.messages", input.to_string().into()),
                attr("gen_ai.output.messages", output.to_string().into()),
            ],
        );
        // Spans of one trace in two batches, the later call first.
        let text = format!("{}\n{}\n", export(vec![last]), export(vec![first]));
        let traces = rows(&text);
        assert_eq!(traces.len(), 1);
        assert_eq!(traces[0].id, TRACE);
        let row = traces[0].row.as_ref().unwrap();
        assert_eq!(
            row["messages"],
            json!([
                {"role": "system", "content": "You book flights."},
                {"role": "user", "content": "Find a flight Oslo-Rome."},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                    "type": "function", "function": {"name": "search_flights",
                    "arguments": "{\"from\":\"OSL\",\"to\":\"ROM\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "SK4711 at 09:05"},
                {"role": "assistant", "content": "SK4711 leaves at 09:05."},
            ])
        );
        assert_eq!(row["user_input"], "Find a flight Oslo-Rome.");
        assert_eq!(row["response"], "SK4711 leaves at 09:05.");
        assert!(!row.contains_key("retrieved_contexts"));
    }

    #[test]
    fn openinference_messages_and_retrieved_documents_are_read() {
        // The protobuf JSON mapping writes ids in base64.
        let trace = "CvdlGRbNQ92ESOshHIAxnA==";
        let retriever = span(
            trace,
            "AAAAAAAAAAE=",
            "retrieve",
            5,
            vec![
                attr("openinference.span.kind", "RETRIEVER".into()),
                attr(
                    "retrieval.documents.1.document.content",
                    "Flights to Rome leave at 9.".into(),
                ),
                attr(
                    "retrieval.documents.0.document.content",
                    "SK4711 flies Oslo-Rome.".into(),
                ),
            ],
        );
        let llm = span(
            trace,
            "AAAAAAAAAAI=",
            "ChatCompletion",
            10,
            vec![
                attr("llm.input_messages.0.message.role", "user".into()),
                attr(
                    "llm.input_messages.0.message.contents.0.message_content.type",
                    "text".into(),
                ),
                attr(
                    "llm.input_messages.0.message.contents.0.message_content.text",
                    "Book SK4711.".into(),
                ),
                attr("llm.input_messages.1.message.role", "assistant".into()),
                attr(
                    "llm.input_messages.1.message.tool_calls.0.tool_call.id",
                    "c1".into(),
                ),
                attr(
                    "llm.input_messages.1.message.tool_calls.0.tool_call.function.name",
                    "book".into(),
                ),
                attr(
                    "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments",
                    "{\"flight\": \"SK4711\"}".into(),
                ),
                attr("llm.input_messages.2.message.role", "tool".into()),
                attr("llm.input_messages.2.message.tool_call_id", "c1".into()),
                attr("llm.input_messages.2.message.content", "booked".into()),
                attr("llm.input_messages.10.message.role", "user".into()),
                attr("llm.input_messages.10.message.content", "Thanks!".into()),
                attr("llm.output_messages.0.message.role", "assistant".into()),
                attr(
                    "llm.output_messages.0.message.content",
                    "You are booked.".into(),
                ),
                attr("llm.token_count.total", json!(18)),
            ],
        );
        let traces = rows(&export(vec![llm, retriever]));
        assert_eq!(traces[0].id, TRACE);
        let row = traces[0].row.as_ref().unwrap();
        let messages = row["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 5, "index 10 comes after 2: {messages:?}");
        assert_eq!(
            messages[0],
            json!({"role": "user", "content": "Book SK4711."})
        );
        assert_eq!(
            messages[1]["tool_calls"][0],
            json!({"id": "c1", "type": "function",
                   "function": {"name": "book", "arguments": "{\"flight\": \"SK4711\"}"}})
        );
        assert_eq!(
            messages[2],
            json!({"role": "tool", "content": "booked", "tool_call_id": "c1"})
        );
        assert_eq!(messages[3]["content"], "Thanks!");
        assert_eq!(row["user_input"], "Thanks!");
        assert_eq!(row["response"], "You are booked.");
        assert_eq!(
            row["retrieved_contexts"],
            json!(["SK4711 flies Oslo-Rome.", "Flights to Rome leave at 9."])
        );
    }

    #[test]
    fn the_older_flattened_genai_attributes_are_read() {
        let llm = span(
            TRACE,
            "01",
            "openai.chat",
            1,
            vec![
                attr("gen_ai.prompt.0.role", "user".into()),
                attr("gen_ai.prompt.0.content", "Weather in Oslo?".into()),
                attr("gen_ai.completion.0.role", "assistant".into()),
                attr("gen_ai.completion.0.tool_calls.0.id", "w1".into()),
                attr("gen_ai.completion.0.tool_calls.0.name", "weather".into()),
                attr(
                    "gen_ai.completion.0.tool_calls.0.arguments",
                    "{\"city\": \"Oslo\"}".into(),
                ),
            ],
        );
        let traces = rows(&export(vec![llm]));
        let row = traces[0].row.as_ref().unwrap();
        assert_eq!(
            row["messages"][1]["tool_calls"][0]["function"]["name"],
            "weather"
        );
        assert_eq!(row["user_input"], "Weather in Oslo?");
        assert!(!row.contains_key("response"), "a call is no answer");
    }

    #[test]
    fn traces_without_an_llm_span_are_no_rows_and_bad_messages_name_their_attribute() {
        let http = span(
            "11111111111111111111111111111111",
            "01",
            "GET /",
            1,
            vec![attr("http.method", "GET".into())],
        );
        let broken = span(
            TRACE,
            "02",
            "openai.chat",
            2,
            vec![attr(
                "gen_ai.input.messages",
                "[{\"role\": \"user\", \"parts\": [".into(),
            )],
        );
        let roleless = span(
            "22222222222222222222222222222222",
            "03",
            "openai.chat",
            3,
            vec![attr("gen_ai.input.messages", "[{\"parts\": []}]".into())],
        );
        let traces = rows(&export(vec![http, broken, roleless]));
        assert_eq!(traces.len(), 2);
        let e = traces[0].row.as_ref().unwrap_err();
        assert_eq!(e.field, "gen_ai.input.messages");
        assert!(
            e.message
                .starts_with("span 'openai.chat' (02): invalid JSON"),
            "{}",
            e.message
        );
        let e = traces[1].row.as_ref().unwrap_err();
        assert_eq!(e.field, "gen_ai.input.messages[0].role");
        for bad in ["[1, 2]", "{\"spans\": []}", "{\"resourceSpans\": [] "] {
            assert!(read(bad.as_bytes(), Stitch::On).is_err(), "{bad}");
        }
        assert_eq!(read("".as_bytes(), Stitch::On).unwrap().traces, Vec::new());
    }

    /// A chat call as `opentelemetry-instrumentation-openai-v2` writes it
    /// under `span_only`, a root span of a trace of its own; without
    /// `input`/`output`, as it writes it with content capture off.
    fn v2_call(trace: &str, start: u64, content: Option<(Value, Value)>) -> Value {
        let mut attributes = vec![
            attr("gen_ai.operation.name", "chat".into()),
            attr("gen_ai.provider.name", "openai".into()),
            attr("gen_ai.request.model", "gpt-4o-mini".into()),
            attr("gen_ai.usage.input_tokens", json!(31)),
        ];
        if let Some((input, output)) = content {
            attributes.push(attr("gen_ai.input.messages", input.to_string().into()));
            attributes.push(attr("gen_ai.output.messages", output.to_string().into()));
        }
        span(
            trace,
            &format!("{start:016x}"),
            "chat gpt-4o-mini",
            start,
            attributes,
        )
    }

    fn text(role: &str, content: &str) -> Value {
        json!({"role": role, "parts": [{"type": "text", "content": content}]})
    }

    fn call(id: &str, name: &str, arguments: Value) -> Value {
        json!({"role": "assistant", "parts": [{"type": "tool_call", "id": id, "name": name,
               "arguments": arguments}], "finish_reason": "tool_calls"})
    }

    fn result(id: &str, response: &str) -> Value {
        json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": id,
               "response": response}]})
    }

    /// Two conversations of two calls each, every call a trace of its own
    /// and the agents' calls interleaved in time; the second agent asks
    /// what the first does, so only the history tells them apart.
    fn two_agents() -> String {
        let ask = [
            text("system", "You book flights."),
            text("user", "Oslo-Rome?"),
        ];
        let calls = |who: &str| {
            let first = (
                json!(ask),
                json!([call("c1", "search", json!({"to": "ROM"}))]),
            );
            let mut history = ask.to_vec();
            history.push(call("c1", "search", json!({"to": "ROM"})));
            history.push(result("c1", &format!("{who} flies at 9")));
            let second = (
                json!(history),
                json!([text("assistant", &format!("{who} at 9."))]),
            );
            (first, second)
        };
        let (a1, a2) = calls("SK1");
        let (b1, b2) = calls("AZ2");
        export(vec![
            v2_call("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", 10, Some(a1)),
            v2_call("b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1", 20, Some(b1)),
            v2_call("b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2", 30, Some(b2)),
            v2_call("a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2", 40, Some(a2)),
        ])
    }

    #[test]
    fn calls_without_a_parent_are_stitched_into_their_conversations() {
        let export = read(two_agents().as_bytes(), Stitch::On).unwrap();
        let rows: Vec<&Map<String, Value>> = export
            .traces
            .iter()
            .map(|t| t.row.as_ref().unwrap())
            .collect();
        assert_eq!(rows.len(), 2);
        // Each named by the trace of its first call; the second call
        // whose tool said "AZ2" (the earlier one) continues the
        // conversation that waited longest, and the history, not the
        // time, decides.
        assert_eq!(rows[0]["id"], "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1");
        assert_eq!(rows[0]["response"], "AZ2 at 9.");
        assert_eq!(rows[1]["id"], "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1");
        assert_eq!(rows[1]["response"], "SK1 at 9.");
        assert_eq!(
            rows[1]["trace_ids"],
            json!([
                "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1",
                "a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2"
            ])
        );
        let messages = rows[1]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 5, "{messages:?}");
        assert_eq!(messages[2]["tool_calls"][0]["function"]["name"], "search");
        assert_eq!(
            export.stitched,
            Some(Stitched {
                stitch: Stitch::On,
                calls: 4,
                rows: 2,
                rows_of_several_calls: 2
            })
        );
        let apart = read(two_agents().as_bytes(), Stitch::Off).unwrap();
        assert_eq!(apart.traces.len(), 4, "one row per call");
        assert_eq!(
            apart.traces[0].row.as_ref().unwrap()["messages"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(apart.stitched.unwrap().rows, 4);
    }

    #[test]
    fn calls_under_one_parent_stay_one_row_per_trace() {
        let parent = json!({"traceId": TRACE, "spanId": "00000000000000aa", "name": "agent",
            "startTimeUnixNano": "1", "endTimeUnixNano": "99", "attributes": []});
        let child = |start: u64, input: Value, output: Value| {
            let mut s = v2_call(TRACE, start, Some((input, output)));
            s["parentSpanId"] = json!("00000000000000aa");
            s
        };
        // Two calls that do not extend each other: still the last one's.
        let file = export(vec![
            parent,
            child(
                10,
                json!([text("user", "Hi")]),
                json!([text("assistant", "Hello")]),
            ),
            child(
                20,
                json!([text("user", "Sum up")]),
                json!([text("assistant", "Done")]),
            ),
        ]);
        let export = read(file.as_bytes(), Stitch::On).unwrap();
        assert_eq!(export.traces.len(), 1);
        assert_eq!(export.traces[0].row.as_ref().unwrap()["response"], "Done");
        assert_eq!(export.stitched, None);
    }

    #[test]
    fn spans_without_messages_say_that_content_capture_is_off() {
        let bare = export(vec![
            v2_call("a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1", 10, None),
            v2_call("b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1", 20, None),
        ]);
        let e = read(bare.as_bytes(), Stitch::On).unwrap_err();
        assert!(
            e.starts_with(
                "no rows to score: its 2 LLM spans (in 2 traces) carry no messages, only \
                 gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model, \
                 gen_ai.usage.input_tokens: the instrumentation's content capture is off."
            ),
            "{e}"
        );
        assert!(
            e.contains("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only"),
            "{e}"
        );
        assert!(e.contains("OPENINFERENCE_HIDE_INPUTS"), "{e}");
        // OpenInference with its inputs and outputs hidden.
        let hidden = span(
            TRACE,
            "01",
            "ChatCompletion",
            1,
            vec![
                attr("openinference.span.kind", "LLM".into()),
                attr("llm.model_name", "gpt-4o-mini".into()),
                attr("input.value", "__REDACTED__".into()),
            ],
        );
        let e = read(export(vec![hidden.clone()]).as_bytes(), Stitch::On).unwrap_err();
        assert!(
            e.contains("only input.value, llm.model_name, openinference.span.kind"),
            "{e}"
        );
        // Beside a trace with content, such a trace is a bad row.
        let both = export(vec![
            hidden,
            v2_call(
                "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1",
                20,
                Some((
                    json!([text("user", "Hi")]),
                    json!([text("assistant", "Hello")]),
                )),
            ),
        ]);
        let traces = read(both.as_bytes(), Stitch::On).unwrap().traces;
        let e = traces[0].row.as_ref().unwrap_err();
        assert_eq!(e.field, "llm.input_messages");
        assert!(
            e.message.contains("content capture is off"),
            "{}",
            e.message
        );
        assert!(traces[1].row.is_ok());
        // Spans, but none of an LLM.
        let http = span(
            TRACE,
            "01",
            "GET /",
            1,
            vec![attr("http.method", "GET".into())],
        );
        let e = read(export(vec![http]).as_bytes(), Stitch::On).unwrap_err();
        assert!(
            e.starts_with("no rows to score: none of its 1 spans in 1 traces is an LLM span (spans named 'GET /')"),
            "{e}"
        );
    }

    #[test]
    fn references_on_spans_become_the_row_s_reference_fields() {
        let root = span(
            TRACE,
            "00000000000000aa",
            "agent",
            1,
            vec![
                attr(
                    "assay.reference_tool_calls",
                    json!([{"name": "search", "args": {"to": "ROM"}}])
                        .to_string()
                        .into(),
                ),
                attr("assay.reference", "SK1 at 9.".into()),
                attr("assay.reference_topics", "[\"flights\"]".into()),
            ],
        );
        let mut llm = v2_call(
            TRACE,
            10,
            Some((
                json!([text("user", "Oslo-Rome?")]),
                json!([text("assistant", "SK1 at 9.")]),
            )),
        );
        llm["parentSpanId"] = json!("00000000000000aa");
        let traces = read(
            export(vec![root.clone(), llm.clone()]).as_bytes(),
            Stitch::On,
        )
        .unwrap()
        .traces;
        let row = traces[0].row.as_ref().unwrap();
        assert_eq!(
            row["reference_tool_calls"],
            json!([{"name": "search", "args": {"to": "ROM"}}])
        );
        assert_eq!(row["reference"], "SK1 at 9.");
        assert_eq!(row["reference_topics"], json!(["flights"]));
        // Two spans that say different things, or JSON that is not, are a
        // bad row naming the span and attribute.
        let mut other = llm.clone();
        other["attributes"]
            .as_array_mut()
            .unwrap()
            .push(attr("assay.reference", "AZ2".into()));
        let traces = read(export(vec![root, other]).as_bytes(), Stitch::On)
            .unwrap()
            .traces;
        let e = traces[0].row.as_ref().unwrap_err();
        assert_eq!(e.field, "assay.reference");
        assert!(
            e.message.contains("says otherwise than span 'agent'"),
            "{}",
            e.message
        );
        let mut broken = llm;
        broken["attributes"]
            .as_array_mut()
            .unwrap()
            .push(attr("assay.reference_tool_calls", "[{".into()));
        let traces = read(export(vec![broken]).as_bytes(), Stitch::On)
            .unwrap()
            .traces;
        let e = traces[0].row.as_ref().unwrap_err();
        assert_eq!(e.field, "assay.reference_tool_calls");
        assert!(e.message.contains("invalid JSON"), "{}", e.message);
    }

    #[test]
    fn ids_read_as_hex() {
        assert_eq!(hex_id("0AF7651916CD43DD8448EB211C80319C"), TRACE);
        assert_eq!(hex_id("CvdlGRbNQ92ESOshHIAxnA=="), TRACE);
        assert_eq!(hex_id("AAAAAAAAAAE="), "0000000000000001");
        assert_eq!(hex_id("not an id"), "not an id");
    }

    /// A log record of the GenAI event `name` on span `span` of `trace`,
    /// its body `body` (plain JSON, written as an OTLP kvlist).
    fn record(trace: &str, span: &str, name: &str, time: Option<u64>, body: Value) -> Value {
        fn any(v: &Value) -> Value {
            match v {
                Value::String(s) => json!({"stringValue": s}),
                Value::Number(n) => json!({"intValue": n.to_string()}),
                Value::Array(items) => {
                    json!({"arrayValue": {"values": items.iter().map(any).collect::<Vec<_>>()}})
                }
                Value::Object(map) => json!({"kvlistValue": {"values": map
                    .iter()
                    .map(|(k, v)| json!({"key": k, "value": any(v)}))
                    .collect::<Vec<_>>()}}),
                other => json!({"boolValue": other}),
            }
        }
        let mut r =
            json!({"traceId": trace, "spanId": span, "eventName": name, "body": any(&body)});
        if let Some(t) = time {
            r["timeUnixNano"] = json!(t.to_string());
        }
        r
    }

    fn logs(records: Vec<Value>) -> Events {
        let text = json!({"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}).to_string();
        Events::read(text.as_bytes()).unwrap()
    }

    /// A chat span of openai-v2 in its event mode: no messages.
    fn bare_chat(trace: &str, id: &str, start: u64) -> Value {
        span(
            trace,
            id,
            "chat gpt-4o-mini",
            start,
            vec![attr("gen_ai.operation.name", "chat".into())],
        )
    }

    #[test]
    fn log_events_give_a_bare_span_its_messages_in_time_order() {
        let call = json!([{"id": "call_1", "type": "function",
            "function": {"name": "search_flights", "arguments": "{\"to\": \"ROM\"}"}}]);
        // Base64 ids in the logs, hex in the spans; the records out of
        // order, their times in order; the older `event.name` attribute.
        let (trace64, span64) = ("CvdlGRbNQ92ESOshHIAxnA==", "AAAAAAAAAAI=");
        let mut older = record(
            trace64,
            span64,
            "",
            Some(2),
            json!({"content": "Find a flight."}),
        );
        older.as_object_mut().unwrap().remove("eventName");
        older["attributes"] =
            json!([{"key": "event.name", "value": {"stringValue": "gen_ai.user.message"}}]);
        let events = logs(vec![
            record(
                trace64,
                span64,
                "gen_ai.choice",
                Some(9),
                json!({"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "Second choice."}}),
            ),
            record(
                TRACE,
                "0000000000000002",
                "gen_ai.choice",
                Some(8),
                json!({"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "SK4711."}}),
            ),
            record(
                TRACE,
                "0000000000000002",
                "gen_ai.tool.message",
                Some(5),
                json!({"content": "SK4711 at 09:05", "id": "call_1"}),
            ),
            record(
                TRACE,
                "0000000000000002",
                "gen_ai.assistant.message",
                Some(4),
                json!({"tool_calls": call}),
            ),
            older,
            record(
                TRACE,
                "0000000000000002",
                "gen_ai.system.message",
                Some(1),
                json!({"content": [{"type": "text", "text": "You book flights."}]}),
            ),
            // Not a GenAI message event: passed over.
            record(
                TRACE,
                "0000000000000002",
                "gen_ai.client.inference.operation.details",
                Some(3),
                json!({}),
            ),
        ]);
        assert_eq!(events.records, 6);
        let spans = export(vec![bare_chat(TRACE, "0000000000000002", 10)]);
        let traces = read_with(spans.as_bytes(), Stitch::On, Some(&events))
            .unwrap()
            .traces;
        assert_eq!(traces.len(), 1);
        let row = traces[0].row.as_ref().unwrap();
        assert_eq!(
            row["messages"],
            json!([
                {"role": "system", "content": "You book flights."},
                {"role": "user", "content": "Find a flight."},
                {"role": "assistant", "content": null, "tool_calls": call},
                {"role": "tool", "content": "SK4711 at 09:05", "tool_call_id": "call_1"},
                {"role": "assistant", "content": "SK4711."},
            ])
        );
        assert_eq!(row["response"], "SK4711.");
    }

    #[test]
    fn log_events_without_their_span_are_a_bad_row_and_a_span_keeps_its_own_messages() {
        let own = span(
            TRACE,
            "0000000000000001",
            "chat",
            10,
            vec![attr(
                "gen_ai.input.messages",
                json!([{"role": "user", "parts": [{"type": "text", "content": "Own."}]}])
                    .to_string()
                    .into(),
            )],
        );
        let events = logs(vec![
            record(
                TRACE,
                "0000000000000001",
                "gen_ai.user.message",
                None,
                json!({"content": "From logs."}),
            ),
            record(
                TRACE,
                "00000000000000ff",
                "gen_ai.user.message",
                None,
                json!({"content": "Lost."}),
            ),
            record(
                TRACE,
                "00000000000000ff",
                "gen_ai.choice",
                None,
                json!({"index": 0, "finish_reason": "stop", "message": {"role": "assistant"}}),
            ),
        ]);
        let traces = read_with(export(vec![own]).as_bytes(), Stitch::On, Some(&events))
            .unwrap()
            .traces;
        assert_eq!(traces.len(), 2);
        let row = traces[0].row.as_ref().unwrap();
        assert_eq!(
            row["messages"],
            json!([{"role": "user", "content": "Own."}])
        );
        assert_eq!(traces[1].id, format!("{TRACE}/00000000000000ff"));
        let e = traces[1].row.as_ref().unwrap_err();
        assert_eq!(e.field, "spanId");
        assert!(
            e.message.starts_with(
                "2 log events (gen_ai.choice, gen_ai.user.message) of span 00000000000000ff, \
                 which the trace export does not hold"
            ),
            "{}",
            e.message
        );
        // Logs of another run only: nothing to score, and why.
        let bare = export(vec![bare_chat(TRACE, "0000000000000003", 10)]);
        let e = read_with(bare.as_bytes(), Stitch::On, Some(&events)).unwrap_err();
        assert!(e.contains("carry no messages"), "{e}");
        assert!(
            e.contains("belong to 2 spans, none of them in this export"),
            "{e}"
        );
        let e = read_with(bare.as_bytes(), Stitch::On, None).unwrap_err();
        assert!(e.contains("--logs FILE"), "{e}");
        assert!(Events::read("{\"resourceSpans\": []}".as_bytes()).is_err());
    }
}
