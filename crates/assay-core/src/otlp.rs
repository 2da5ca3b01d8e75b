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

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;

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
    name: String,
    start: u64,
    end: u64,
    attributes: Map<String, Value>,
}

/// The traces of an OTLP JSON export, in the order their first span
/// appears. Each trace with an LLM span is a [`Trace`]; the error is why
/// the export as a whole cannot be read.
pub fn read(reader: impl Read) -> Result<Vec<Trace>, String> {
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
    Ok(order
        .into_iter()
        .filter_map(|id| {
            let mut spans = traces.remove(&id)?;
            spans.sort_by_key(|s| (s.start, s.end));
            let row = row(&id, &spans)?;
            Some(Trace { id, row })
        })
        .collect())
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

/// The row of a trace, `None` when it has no LLM span.
fn row(id: &str, spans: &[Span]) -> Option<Result<Map<String, Value>, TraceError>> {
    let (llm, convention) = spans
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Convention::of(&s.attributes).map(|c| (i, s, c)))
        .max_by_key(|(i, s, _)| (s.end, s.start, *i))
        .map(|(_, s, c)| (s, c))?;
    Some(conversation(llm, convention).map(|messages| {
        let mut row = Map::new();
        row.insert("id".into(), Value::String(id.to_string()));
        let contexts: Vec<Value> = spans.iter().flat_map(documents).collect();
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
        row
    }))
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

/// The messages an LLM span saw and wrote, as OpenAI chat messages, read
/// as `convention` spells them.
fn conversation(span: &Span, convention: Convention) -> Result<Vec<Value>, TraceError> {
    let attributes = &span.attributes;
    let mut messages = Vec::new();
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
                for (_, m) in indexed(pairs(attributes), prefix) {
                    messages.push(flat_message(&m, "message.", "tool_call.", "function."));
                }
            }
        }
        Convention::GenAiFlat => {
            for prefix in ["gen_ai.prompt.", "gen_ai.completion."] {
                for (_, m) in indexed(pairs(attributes), prefix) {
                    messages.push(flat_message(&m, "", "", ""));
                }
            }
        }
    }
    // A system instruction that the input messages repeat is said once.
    if messages.len() > 1 && messages[0]["role"] == "system" && messages[0] == messages[1] {
        messages.remove(0);
    }
    Ok(messages)
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
        read(text.as_bytes()).unwrap()
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
            assert!(read(bad.as_bytes()).is_err(), "{bad}");
        }
        assert_eq!(read("".as_bytes()).unwrap(), Vec::new());
    }

    #[test]
    fn ids_read_as_hex() {
        assert_eq!(hex_id("0AF7651916CD43DD8448EB211C80319C"), TRACE);
        assert_eq!(hex_id("CvdlGRbNQ92ESOshHIAxnA=="), TRACE);
        assert_eq!(hex_id("AAAAAAAAAAE="), "0000000000000001");
        assert_eq!(hex_id("not an id"), "not an id");
    }
}
