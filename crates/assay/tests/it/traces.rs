//! Agent traces as `assay eval` reads them: LLM calls without a parent
//! span stitched into their conversations, references joined from a file
//! or read from the spans, and an export without message content (or any
//! input without rows) refused with the reason.
//!
//! The exports are written as `opentelemetry-instrumentation-openai-v2`
//! writes them under `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=
//! span_only`: one `chat MODEL` client span per call, a root span of a
//! trace of its own when the agent calls its client directly, with
//! `gen_ai.input.messages` and `gen_ai.output.messages` as JSON text.

use crate::common::{eval, results_by_key, stderr};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const TOOL_METRICS: &str = "tool_call_accuracy,tool_call_f1,tool_correctness";

/// One agent's conversation: its question, the calls of its first answer
/// (name, arguments), what each returned and its last answer.
struct Agent {
    question: &'static str,
    calls: Vec<(&'static str, Value)>,
    results: Vec<&'static str>,
    answer: &'static str,
}

fn agents() -> Vec<Agent> {
    vec![
        Agent {
            question: "Find a flight Oslo-Rome on 1 May.",
            calls: vec![(
                "search_flights",
                json!({"from": "OSL", "to": "ROM", "date": "2026-05-01"}),
            )],
            results: vec!["SK4711 at 09:05"],
            answer: "SK4711 leaves at 09:05.",
        },
        Agent {
            question: "What is the weather in Bergen?",
            calls: vec![("get_weather", json!({"city": "Bergen"}))],
            results: vec!["rain, 9 C"],
            answer: "Rain and 9 degrees in Bergen.",
        },
        Agent {
            question: "Book a hotel in Rome for two nights with breakfast.",
            calls: vec![(
                "book_hotel",
                json!({"city": "Rome", "nights": 2, "options": {"breakfast": true, "rooms": [1]}}),
            )],
            results: vec!["booked: H-77"],
            answer: "Booked, reference H-77.",
        },
        Agent {
            question: "Convert 100 EUR to NOK, and what time is it in Oslo?",
            calls: vec![
                (
                    "convert_currency",
                    json!({"amount": 100, "from": "EUR", "to": "NOK"}),
                ),
                ("get_time", json!({"city": "Oslo"})),
            ],
            results: vec!["1150 NOK", "14:02"],
            answer: "100 EUR is 1150 NOK; it is 14:02 in Oslo.",
        },
    ]
}

const SYSTEM: &str = "You are a travel assistant.";

/// The trace id of agent `a`'s call `c` (each call a trace of its own).
fn trace_id(a: usize, c: usize) -> String {
    format!("{:032x}", 0x5bf9_0000 + a * 16 + c)
}

fn text(role: &str, content: &str) -> Value {
    json!({"role": role, "parts": [{"type": "text", "content": content}]})
}

/// The assistant's tool calls as the GenAI conventions write them: the
/// arguments as an object in the call's output, as the JSON text the
/// client sent in the next call's input.
fn genai_calls(agent: &Agent, a: usize, as_text: bool) -> Value {
    let parts: Vec<Value> = agent
        .calls
        .iter()
        .enumerate()
        .map(|(k, (name, args))| {
            let arguments = if as_text {
                Value::String(args.to_string())
            } else {
                args.clone()
            };
            json!({"type": "tool_call", "id": format!("call_{a}_{k}"), "name": name,
                   "arguments": arguments})
        })
        .collect();
    json!({"role": "assistant", "parts": parts})
}

/// Agent `a`'s calls as OpenAI chat `tool_calls`, their arguments as JSON
/// text.
fn chat_calls(agent: &Agent, a: usize) -> Vec<Value> {
    agent
        .calls
        .iter()
        .enumerate()
        .map(|(k, (name, args))| {
            json!({"id": format!("call_{a}_{k}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect()
}

fn attr(key: &str, value: Value) -> Value {
    let value = match value {
        Value::String(s) => json!({"stringValue": s}),
        Value::Number(n) => json!({"intValue": n.to_string()}),
        Value::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(|i| json!({"stringValue": i})).collect::<Vec<_>>()}})
        }
        other => json!({"boolValue": other}),
    };
    json!({"key": key, "value": value})
}

/// A chat span of openai-v2, with its content when `content` says so.
fn chat_span(trace: &str, start: u64, content: Option<(Value, Value)>, extra: Vec<Value>) -> Value {
    let mut attributes = vec![
        attr("gen_ai.operation.name", json!("chat")),
        attr("gen_ai.system", json!("openai")),
        attr("gen_ai.request.model", json!("gpt-4o-mini")),
        attr("gen_ai.response.model", json!("gpt-4o-mini-2024-07-18")),
        attr("gen_ai.response.finish_reasons", json!(["stop"])),
        attr("gen_ai.usage.input_tokens", json!(52)),
        attr("gen_ai.usage.output_tokens", json!(17)),
        attr("server.address", json!("127.0.0.1")),
    ];
    if let Some((input, output)) = content {
        attributes.push(attr("gen_ai.input.messages", json!(input.to_string())));
        attributes.push(attr("gen_ai.output.messages", json!(output.to_string())));
    }
    attributes.extend(extra);
    json!({"traceId": trace, "spanId": format!("{start:016x}"), "name": "chat gpt-4o-mini",
           "kind": 3, "startTimeUnixNano": (1_770_000_000_000_000_000u64 + start * 1_000_000).to_string(),
           "endTimeUnixNano": (1_770_000_000_000_000_000u64 + start * 1_000_000 + 400_000).to_string(),
           "attributes": attributes, "status": {}})
}

/// The export of the four agents run side by side without a parent
/// span: every agent's first call, then every agent's second, each call
/// a trace of its own. `content: false` is content capture off.
fn export(content: bool) -> String {
    let mut spans = Vec::new();
    for (a, agent) in agents().iter().enumerate() {
        let ask = vec![text("system", SYSTEM), text("user", agent.question)];
        let mut output = genai_calls(agent, a, false);
        output["finish_reason"] = json!("tool_calls");
        let first = (json!(ask), json!([output]));
        spans.push((100 + a as u64, trace_id(a, 0), first));
        let mut history = ask.clone();
        history.push(genai_calls(agent, a, true));
        for (k, result) in agent.results.iter().enumerate() {
            history.push(
                json!({"role": "tool", "parts": [{"type": "tool_call_response",
                "id": format!("call_{a}_{k}"), "response": result}]}),
            );
        }
        let mut last = text("assistant", agent.answer);
        last["finish_reason"] = json!("stop");
        spans.push((
            200 + a as u64,
            trace_id(a, 1),
            (json!(history), json!([last])),
        ));
    }
    // A collector writes a batch per export, in the order spans ended.
    let lines: Vec<String> = spans
        .into_iter()
        .map(|(start, trace, c)| {
            let span = chat_span(&trace, start, content.then_some(c), Vec::new());
            json!({"resourceSpans": [{"resource": {"attributes": [attr("service.name", json!("travel-agent"))]},
                   "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2", "version": "2.1b0"},
                                   "spans": [span]}]}]})
            .to_string()
        })
        .collect();
    lines.join("\n") + "\n"
}

/// The same four conversations as JSONL rows of OpenAI chat messages,
/// named by the trace of their first call, with `references` (agent to
/// reference calls) on them.
fn jsonl(references: &[Value]) -> String {
    let mut out = String::new();
    for (a, agent) in agents().iter().enumerate() {
        let calls = chat_calls(agent, a);
        let mut messages = vec![
            json!({"role": "system", "content": SYSTEM}),
            json!({"role": "user", "content": agent.question}),
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
        ];
        for (k, result) in agent.results.iter().enumerate() {
            messages.push(
                json!({"role": "tool", "tool_call_id": format!("call_{a}_{k}"), "content": result}),
            );
        }
        messages.push(json!({"role": "assistant", "content": agent.answer}));
        let row = json!({"id": trace_id(a, 0), "messages": messages,
                         "reference_tool_calls": references[a]});
        out.push_str(&row.to_string());
        out.push('\n');
    }
    out
}

/// What each agent should have called: the first right, the second with
/// another city, the third right (nested arguments), the fourth only one
/// of its two calls.
fn reference_calls() -> Vec<Value> {
    vec![
        json!([{"name": "search_flights", "args": {"from": "OSL", "to": "ROM", "date": "2026-05-01"}}]),
        json!([{"name": "get_weather", "args": {"city": "Oslo"}}]),
        json!([{"name": "book_hotel", "args": {"city": "Rome", "nights": 2,
                "options": {"breakfast": true, "rooms": [1]}}}]),
        json!([{"name": "convert_currency", "args": {"amount": 100, "from": "EUR", "to": "NOK"}}]),
    ]
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn summary(dir: &Path) -> Value {
    crate::common::read_json(&dir.join("summary.json"))
}

/// The case: four conversations of an agent without a parent
/// span are four rows (not eight), and with their references joined from
/// a file (three by trace id, one by the id assay gives the row) the
/// tool-call metrics score them exactly as the same conversations given
/// as JSONL.
#[test]
fn four_conversations_without_a_parent_span_score_as_their_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let traces = write(dir.path(), "traces.json", &export(true));
    let refs = reference_calls();
    let mut lines: Vec<String> = (0..3)
        .map(|a| json!({"trace_id": trace_id(a, 0), "reference_tool_calls": refs[a]}).to_string())
        .collect();
    lines.push(json!({"id": trace_id(3, 0), "reference_tool_calls": refs[3]}).to_string());
    // A reference for a trace that is not in the export.
    lines.push(
        json!({"trace_id": "0000000000000000000000000000dead", "reference_tool_calls": []})
            .to_string(),
    );
    let references = write(dir.path(), "references.jsonl", &(lines.join("\n") + "\n"));
    let out = dir.path().join("traces-run");
    let o = eval(
        &traces,
        TOOL_METRICS,
        &out,
        &["--references", references.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains(
            "stitched    8 LLM calls without a common parent span stitched into 4 conversations (4 of several calls"
        ),
        "{table}"
    );
    assert!(
        table.contains(
            "references.jsonl: 5 rows, joined to 4 samples; 1 references rows matched no sample: \
             trace_id=0000000000000000000000000000dead"
        ),
        "{table}"
    );
    let s = summary(&out);
    assert_eq!(s["rows"], 4);
    assert_eq!(
        s["input"]["stitched"],
        json!({"stitch": "on", "calls": 8, "rows": 4, "rows_of_several_calls": 4})
    );
    assert_eq!(s["input"]["references"]["samples_without"], 0);
    assert_eq!(s["input"]["references"]["unmatched"], 1);
    let manifest = crate::common::read_json(&out.join("manifest.json"));
    assert_eq!(
        manifest["input"]["references"]["sha256"],
        assay_core::hash::sha256_file(&references).unwrap()
    );

    let (from_traces, _) = scored_as_jsonl(dir.path(), &refs, &out);
    assert_eq!(from_traces.len(), 12);
    let value = |a: usize, metric: &str| {
        from_traces[&(trace_id(a, 0), metric.to_string())]["value"].clone()
    };
    assert_eq!(value(0, "tool_call_accuracy"), 1.0);
    assert_eq!(value(1, "tool_call_accuracy"), 0.0, "another city");
    assert_eq!(value(1, "tool_correctness"), 1.0, "the right tool");
    assert_eq!(value(2, "tool_call_f1"), 1.0, "nested arguments kept");
    assert_eq!(value(3, "tool_call_f1"), 0.6667, "one of two calls wanted");
}

/// `--no-stitch` keeps one row per call: the first calls' rows hold the
/// calls, the second calls' their results and answers.
#[test]
fn no_stitch_keeps_one_row_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let traces = write(dir.path(), "traces.json", &export(true));
    let out = dir.path().join("run");
    let o = eval(&traces, "tool_correctness", &out, &["--no-stitch"]);
    // Unstitched, no row carries its reference tool calls.
    crate::judged::unscored(&o, &["tool_correctness"]);
    let s = summary(&out);
    assert_eq!(s["rows"], 8);
    assert_eq!(
        s["input"]["stitched"],
        json!({"stitch": "off", "calls": 8, "rows": 8, "rows_of_several_calls": 0})
    );
    let manifest = crate::common::read_json(&out.join("manifest.json"));
    assert_eq!(manifest["input"]["stitch"], "off");
    let results = results_by_key(&out);
    // Without references every row is skipped, each named by its trace.
    for a in 0..4 {
        for c in 0..2 {
            let r = &results[&(trace_id(a, c), "tool_correctness".to_string())];
            assert_eq!(r["status"], "skipped", "{r}");
        }
    }
}

/// Content capture off: the export is refused (exit code 2) with the
/// attributes it has and how to turn capture on; no run is written.
#[test]
fn an_export_without_message_content_is_refused_with_how_to_capture_it() {
    let dir = tempfile::tempdir().unwrap();
    let traces = write(dir.path(), "traces.json", &export(false));
    let out = dir.path().join("run");
    let o = eval(&traces, TOOL_METRICS, &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "traces.json: no rows to score: its 8 LLM spans (in 8 traces) carry no messages, only \
             gen_ai.operation.name, gen_ai.request.model, gen_ai.response.finish_reasons, \
             gen_ai.response.model, gen_ai.system, gen_ai.usage.input_tokens, \
             gen_ai.usage.output_tokens, server.address: the instrumentation's content capture is off."
        ),
        "{e}"
    );
    for hint in [
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only",
        "OPENINFERENCE_HIDE_INPUTS",
        "OPENINFERENCE_HIDE_OUTPUT_MESSAGES",
        "TRACELOOP_TRACE_CONTENT=true",
    ] {
        assert!(e.contains(hint), "{hint}: {e}");
    }
    assert!(!out.join("summary.json").exists());
}

/// Any input that holds no row is refused with exit code 2 and why, from
/// every format.
#[test]
fn an_input_without_rows_is_refused_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let http = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": trace_id(0, 0), "spanId": "0000000000000001", "name": "GET /health",
         "attributes": [attr("http.request.method", json!("GET"))]}]}]}]});
    for (name, content, why) in [
        ("empty.jsonl", "\n", "empty.jsonl: no rows to score: it holds no line with a row"),
        ("header.csv", "response,reference\n", "header.csv: no rows to score: it holds no row below its header"),
        ("empty.json", "[]", "empty.json: no rows to score: the JSON array is empty"),
        (
            "http.json",
            &http.to_string(),
            "http.json: no rows to score: none of its 1 spans in 1 traces is an LLM span (spans named 'GET /health')",
        ),
    ] {
        let data = write(dir.path(), name, content);
        let out = dir.path().join(format!("run-{name}"));
        let o = eval(&data, "rouge", &out, &[]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{name}: {}", stderr(&o));
        assert!(!out.join("summary.json").exists(), "{name}");
    }
}

/// A harness records the reference calls on the agent's own span
/// (`assay.reference_tool_calls`, JSON text): they are the row's.
#[test]
fn references_recorded_on_spans_are_scored() {
    let dir = tempfile::tempdir().unwrap();
    let agent = &agents()[0];
    let ask = json!([text("system", SYSTEM), text("user", agent.question)]);
    let recorded = attr(
        "assay.reference_tool_calls",
        json!(reference_calls()[0].to_string()),
    );
    let span = chat_span(
        &trace_id(0, 0),
        100,
        Some((ask, json!([genai_calls(agent, 0, false)]))),
        vec![recorded],
    );
    let traces = write(
        dir.path(),
        "traces.json",
        &json!({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).to_string(),
    );
    let out = dir.path().join("run");
    let o = eval(&traces, TOOL_METRICS, &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let results = results_by_key(&out);
    for metric in TOOL_METRICS.split(',') {
        let r = &results[&(trace_id(0, 0), metric.to_string())];
        assert_eq!(r["value"], 1.0, "{r}");
    }
}

/// A references file with a bad row stops the run before anything is
/// scored, naming the file, row and field; a changed references file is
/// another run (its hash is in the manifest), not a resumable one.
#[test]
fn references_files_are_checked_and_part_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write(
        dir.path(),
        "agent.jsonl",
        &jsonl(&[json!([]), json!([]), json!([]), json!([])]),
    );
    let refs = write(
        dir.path(),
        "refs.jsonl",
        &format!(
            "{{\"id\": \"{}\", \"reference_tool_calls\": []}}\n{{\"reference\": \"no key\"}}\n",
            trace_id(0, 0)
        ),
    );
    let out = dir.path().join("run");
    let o = eval(
        &rows,
        "tool_correctness",
        &out,
        &["--references", refs.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("refs.jsonl: line 2: no key: a references row names its sample by 'trace_id', 'sample_id' or 'id'"),
        "{}",
        stderr(&o)
    );
    let o = eval(
        &rows,
        "tool_correctness",
        &out,
        &["--references", "missing.jsonl"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--references: missing.jsonl: no such file"),
        "{}",
        stderr(&o)
    );

    // The rows carry reference_tool_calls already: the file gives another
    // id's and says the same of the first.
    let same = format!(
        "{{\"id\": \"{}\", \"reference_tool_calls\": []}}\n",
        trace_id(0, 0)
    );
    std::fs::write(&refs, &same).unwrap();
    let o = eval(
        &rows,
        "tool_correctness",
        &out,
        &["--references", refs.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(summary(&out)["input"]["references"]["samples_without"], 3);
    std::fs::write(
        &refs,
        same.replace("[]", "[{\"name\": \"f\", \"args\": {}}]"),
    )
    .unwrap();
    let o = eval(
        &rows,
        "tool_correctness",
        &out,
        &["--references", refs.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("holds a run with another manifest"), "{e}");
    assert!(e.contains("input.references.sha256"), "{e}");
}

/// A plain JSON value as an OTLP `AnyValue`, as a logs exporter writes a
/// record's body.
fn any_value(v: &Value) -> Value {
    match v {
        Value::String(s) => json!({"stringValue": s}),
        Value::Number(n) => json!({"intValue": n.to_string()}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(any_value).collect::<Vec<_>>()}})
        }
        Value::Object(map) => json!({"kvlistValue": {"values": map
            .iter()
            .map(|(k, v)| json!({"key": k, "value": any_value(v)}))
            .collect::<Vec<_>>()}}),
        Value::Null => json!({}),
    }
}

/// The OTLP logs export of [`export`]`(false)`'s calls, as the older
/// content mode of `opentelemetry-instrumentation-openai-v2`
/// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`) writes
/// them: per call its input messages as `gen_ai.{role}.message` events
/// (an assistant's with `tool_calls` only, a tool result's with its call's
/// `id`) and its output as a `gen_ai.choice` event, each record on its
/// span. Every other agent's records name the event in the `event.name`
/// attribute (older exporters) instead of `eventName`; `extra` records
/// are appended.
fn logs_export(extra: Vec<Value>) -> String {
    let record = |a: usize, trace: &str, span: u64, k: u64, name: &str, body: Value| {
        let time = 1_770_000_000_000_000_000u64 + span * 1_000_000 + 400_000 + k;
        let mut r = json!({"timeUnixNano": time.to_string(), "observedTimeUnixNano": time.to_string(),
                           "severityNumber": 9, "traceId": trace, "spanId": format!("{span:016x}"),
                           "flags": 1, "body": any_value(&body),
                           "attributes": [attr("gen_ai.system", json!("openai"))]});
        if a.is_multiple_of(2) {
            r["eventName"] = json!(name);
        } else {
            r["attributes"]
                .as_array_mut()
                .unwrap()
                .push(attr("event.name", json!(name)));
        }
        r
    };
    let mut records = Vec::new();
    for (a, agent) in agents().iter().enumerate() {
        let calls = chat_calls(agent, a);
        let ask = [
            ("gen_ai.system.message", json!({"content": SYSTEM})),
            ("gen_ai.user.message", json!({"content": agent.question})),
        ];
        let (first, second) = (trace_id(a, 0), trace_id(a, 1));
        let mut events: Vec<(&str, u64, &str, Value)> = Vec::new();
        for (name, body) in &ask {
            events.push((&first, 100 + a as u64, name, body.clone()));
        }
        events.push((
            &first,
            100 + a as u64,
            "gen_ai.choice",
            json!({"index": 0, "finish_reason": "tool_calls",
                   "message": {"role": "assistant", "tool_calls": calls}}),
        ));
        for (name, body) in &ask {
            events.push((&second, 200 + a as u64, name, body.clone()));
        }
        events.push((
            &second,
            200 + a as u64,
            "gen_ai.assistant.message",
            json!({"tool_calls": calls}),
        ));
        for (k, result) in agent.results.iter().enumerate() {
            events.push((
                &second,
                200 + a as u64,
                "gen_ai.tool.message",
                json!({"content": result, "id": format!("call_{a}_{k}")}),
            ));
        }
        events.push((
            &second,
            200 + a as u64,
            "gen_ai.choice",
            json!({"index": 0, "finish_reason": "stop",
                   "message": {"role": "assistant", "content": agent.answer}}),
        ));
        for (k, (trace, span, name, body)) in events.into_iter().enumerate() {
            records.push(record(a, trace, span, k as u64, name, body));
        }
    }
    records.extend(extra);
    // A batch per call's records, as a collector's file exporter writes.
    let lines: Vec<String> = records
        .chunks(3)
        .map(|chunk| {
            json!({"resourceLogs": [{"resource": {"attributes": [attr("service.name", json!("travel-agent"))]},
                   "scopeLogs": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2"},
                                  "logRecords": chunk}]}]})
            .to_string()
        })
        .collect();
    lines.join("\n") + "\n"
}

/// The older openai-v2 content mode: spans without messages and a logs
/// export of their events. Given together (`--logs`), the four
/// conversations score exactly as their JSONL; the spans alone are
/// refused with the option to pass; events of a span the trace export
/// lacks are a bad row that names it; the logs file is in the manifest.
#[test]
fn spans_without_content_and_their_log_events_score_as_their_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let traces = write(dir.path(), "traces.json", &export(false));
    let stray = json!({"eventName": "gen_ai.user.message", "traceId": "0000000000000000000000000000beef",
                       "spanId": "00000000000000ef", "body": any_value(&json!({"content": "Hello?"}))});
    let logs = write(dir.path(), "logs.json", &logs_export(vec![stray]));
    let refs = reference_calls();
    let lines: Vec<String> = (0..4)
        .map(|a| json!({"trace_id": trace_id(a, 0), "reference_tool_calls": refs[a]}).to_string())
        .collect();
    let references = write(dir.path(), "references.jsonl", &(lines.join("\n") + "\n"));
    let out = dir.path().join("traces-run");
    let o = eval(
        &traces,
        TOOL_METRICS,
        &out,
        &[
            "--references",
            references.to_str().unwrap(),
            "--logs",
            logs.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&out);
    assert_eq!(s["rows"], 5, "four conversations and the stray events");
    assert_eq!(
        s["input"]["stitched"],
        json!({"stitch": "on", "calls": 8, "rows": 4, "rows_of_several_calls": 4})
    );
    let manifest = crate::common::read_json(&out.join("manifest.json"));
    assert_eq!(
        manifest["input"]["logs"]["sha256"],
        assay_core::hash::sha256_file(&logs).unwrap()
    );

    let (from_traces, from_rows) = scored_as_jsonl(dir.path(), &refs, &out);
    // The stray events: a failed row naming their span.
    let stray: Vec<&Value> = from_traces
        .values()
        .filter(|r| {
            !from_rows.contains_key(&(
                r["sample_id"].as_str().unwrap().to_string(),
                r["metric"].as_str().unwrap().to_string(),
            ))
        })
        .collect();
    assert_eq!(stray.len(), 3, "{stray:?}");
    for r in stray {
        assert_eq!(r["status"], "failed", "{r}");
        let text = r.to_string();
        assert!(
            text.contains("1 log events (gen_ai.user.message) of span 00000000000000ef, which the trace export does not hold"),
            "{text}"
        );
    }

    // The spans alone: refused, naming the option.
    let o = eval(&traces, TOOL_METRICS, &dir.path().join("bare"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("carry no messages"), "{e}");
    assert!(
        e.contains("pass that OTLP logs export with --logs FILE"),
        "{e}"
    );

    // A logs file for another input format (the JSONL written above) is
    // refused.
    let o = eval(
        &dir.path().join("agent.jsonl"),
        TOOL_METRICS,
        &dir.path().join("jsonl-logs"),
        &["--logs", logs.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is read as jsonl"), "{}", stderr(&o));
}

/// Records by (sample, metric).
type ByKey = std::collections::BTreeMap<(String, String), Value>;

/// Scores the conversations `refs` as JSONL in `dir` and checks that the
/// trace run `out` scored each of their outcomes the same, value and
/// details; returns both runs' records by (sample, metric).
fn scored_as_jsonl(dir: &Path, refs: &[Value], out: &Path) -> (ByKey, ByKey) {
    let rows = write(dir, "agent.jsonl", &jsonl(refs));
    let plain = dir.join("jsonl-run");
    let o = eval(&rows, TOOL_METRICS, &plain, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let from_traces = results_by_key(out);
    let from_rows = results_by_key(&plain);
    for (key, expected) in &from_rows {
        let got = &from_traces[key];
        assert_eq!(got["status"], "scored", "{key:?}: {got}");
        assert_eq!(got["value"], expected["value"], "{key:?}");
        assert_eq!(got["details"], expected["details"], "{key:?}");
    }
    (from_traces, from_rows)
}
