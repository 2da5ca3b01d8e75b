//! A run over conversations end to end: `examples/agent.jsonl` (a correct
//! tool use, a wrong argument, a wrong order, a missing call, an extra
//! call, and two chats without tools) plus a malformed row, scored by the
//! tool-call metrics. The values are ragas 0.4.3's and DeepEval 4.3.1's on
//! the same rows.

use crate::common::{lexical, records};
use assay_core::{FailureKind, Status};
use assay_engine::{run_blocking, CancelToken, Silent};
use assay_metrics::Metric;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[test]
fn the_agent_example_scores_as_the_references_and_a_bad_row_fails_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent.jsonl");
    let mut text = std::fs::read_to_string(example).unwrap();
    text.push_str(
        r#"{"id": "malformed", "messages": [{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "search_flights", "arguments": "{\"from\": "}}]}], "reference_tool_calls": [{"name": "search_flights", "args": {}}]}"#,
    );
    let data = tmp.path().join("agent.jsonl");
    std::fs::write(&data, text).unwrap();
    let out = tmp.path().join("run");
    let mut options = lexical(&data, &out);
    let ordered_args = BTreeMap::from([
        ("consider_ordering".to_string(), "true".to_string()),
        ("input_parameters".to_string(), "true".to_string()),
    ]);
    options.metrics = vec![
        Metric::configure(
            assay_metrics::tools::tool_call_accuracy::ID,
            &BTreeMap::new(),
        )
        .unwrap(),
        Metric::configure(assay_metrics::tools::tool_call_f1::ID, &BTreeMap::new()).unwrap(),
        Metric::configure(assay_metrics::tools::tool_correctness::ID, &BTreeMap::new()).unwrap(),
    ];
    run_blocking(&options, &mut Silent, &CancelToken::new()).unwrap();
    let mut got: BTreeMap<(String, String), Option<f64>> = BTreeMap::new();
    for r in records(&out) {
        if r.sample_id == "malformed" {
            assert_eq!(r.status, Status::Failed, "{r:?}");
            let e = r.error.unwrap();
            assert_eq!(e.kind, FailureKind::Input);
            assert!(
                e.message.starts_with(
                    "row 8: message 0, field 'messages[0].tool_calls[0].function.arguments': not JSON"
                ),
                "{}",
                e.message
            );
            continue;
        }
        if ["off-topic", "forgotten-fact"].contains(&r.sample_id.as_str()) {
            // No reference calls: nothing to compare, said so.
            assert_eq!(r.status, Status::Skipped, "{r:?}");
            continue;
        }
        got.insert((r.sample_id, r.metric), r.value);
    }
    // (accuracy, f1, correctness) per row, from ragas and DeepEval.
    let want = [
        ("correct", 1.0, 1.0, 1.0),
        ("wrong-argument", 0.75, 0.5, 1.0),
        ("wrong-order", 0.0, 1.0, 1.0),
        ("missing-call", 0.0, 0.6667, 0.5),
        ("extra-call", 0.0, 0.8, 1.0),
    ];
    assert_eq!(got.len(), want.len() * 3);
    for (id, accuracy, f1, correctness) in want {
        for (metric, value) in [
            ("tool_call_accuracy", accuracy),
            ("tool_call_f1", f1),
            ("tool_correctness", correctness),
        ] {
            assert_eq!(
                got[&(id.to_string(), metric.to_string())],
                Some(value),
                "{id} {metric}"
            );
        }
    }

    // The same run with DeepEval's ordering and arguments switched on.
    let out = tmp.path().join("ordered");
    let mut options = lexical(&data, &out);
    options.metrics =
        vec![Metric::configure(assay_metrics::tools::tool_correctness::ID, &ordered_args).unwrap()];
    run_blocking(&options, &mut Silent, &CancelToken::new()).unwrap();
    let values: BTreeMap<String, Option<f64>> = records(&out)
        .into_iter()
        .map(|r| (r.sample_id, r.value))
        .collect();
    assert_eq!(values["off-topic"], None);
    for (id, value) in [
        ("correct", 1.0),
        ("wrong-argument", 0.75),
        ("wrong-order", 0.5),
        ("missing-call", 0.5),
        ("extra-call", 1.0),
    ] {
        assert_eq!(values[id], Some(value), "{id}");
    }
}

/// The agent example written as Anthropic Messages, as OpenAI Responses
/// items and as DeepEval turns scores exactly as the chat spelling, row by
/// row and metric by metric.
#[test]
fn anthropic_responses_and_deepeval_spellings_score_as_the_chat_spelling() {
    let tmp = tempfile::tempdir().unwrap();
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent.jsonl");
    let rows: Vec<Value> = std::fs::read_to_string(example)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|row| row.get("reference_tool_calls").is_some())
        .collect();
    assert_eq!(rows.len(), 5);
    let params = BTreeMap::from([
        ("consider_ordering".to_string(), "true".to_string()),
        ("input_parameters".to_string(), "true".to_string()),
    ]);
    let score = |name: &str, rows: &[Value]| {
        let data = tmp.path().join(format!("{name}.jsonl"));
        let text: Vec<String> = rows.iter().map(Value::to_string).collect();
        std::fs::write(&data, text.join("\n")).unwrap();
        let out = tmp.path().join(name);
        let mut options = lexical(&data, &out);
        options.metrics = vec![
            Metric::configure(
                assay_metrics::tools::tool_call_accuracy::ID,
                &BTreeMap::new(),
            )
            .unwrap(),
            Metric::configure(assay_metrics::tools::tool_call_f1::ID, &BTreeMap::new()).unwrap(),
            Metric::configure(assay_metrics::tools::tool_correctness::ID, &params).unwrap(),
        ];
        run_blocking(&options, &mut Silent, &CancelToken::new()).unwrap();
        let got: BTreeMap<(String, String), (Status, Option<f64>)> = records(&out)
            .into_iter()
            .map(|r| ((r.sample_id, r.metric), (r.status, r.value)))
            .collect();
        got
    };
    let chat = score("chat", &rows);
    assert_eq!(chat.len(), rows.len() * 3);
    assert!(chat.values().all(|(s, _)| *s == Status::Scored), "{chat:?}");
    let respelled = |to: fn(&[Value]) -> Vec<Value>| -> Vec<Value> {
        rows.iter()
            .map(|row| {
                let mut row = row.clone();
                let messages = row["messages"].as_array().unwrap().clone();
                row["messages"] = Value::Array(to(&messages));
                row
            })
            .collect()
    };
    assert_eq!(score("anthropic", &respelled(anthropic)), chat);
    assert_eq!(score("responses", &respelled(responses)), chat);
    let turns: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut row = row.clone();
            let messages = row.as_object_mut().unwrap().remove("messages").unwrap();
            row["turns"] = Value::Array(deepeval(messages.as_array().unwrap()));
            row
        })
        .collect();
    assert_eq!(score("deepeval", &turns), chat);
}

/// Chat messages as DeepEval's `ConversationalTestCase.turns`: a turn per
/// user or assistant message, each call with its output in the assistant
/// turn's `tools_called`; DeepEval has no system turn.
fn deepeval(messages: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        match m["role"].as_str().unwrap() {
            "system" => {}
            "tool" => {
                let last = out.last_mut().unwrap();
                let call = last["tools_called"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|c| c["id"] == m["tool_call_id"])
                    .unwrap();
                call["output"] = m["content"].clone();
                call.as_object_mut().unwrap().remove("id");
            }
            role => {
                let calls: Vec<Value> = m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        let args: Value =
                            serde_json::from_str(c["function"]["arguments"].as_str().unwrap())
                                .unwrap();
                        json!({"id": c["id"], "name": c["function"]["name"], "input_parameters": args})
                    })
                    .collect();
                out.push(json!({"role": role, "content": m["content"], "tools_called": calls}));
            }
        }
    }
    out
}

/// Chat messages as Anthropic writes them: content blocks, `tool_use` in
/// the assistant's message, `tool_result`s in one user message.
fn anthropic(messages: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        let text = m["content"]
            .as_str()
            .map(|t| json!({"type": "text", "text": t}));
        match m["role"].as_str().unwrap() {
            "tool" => {
                let result = json!({"type": "tool_result", "tool_use_id": m["tool_call_id"],
                                    "content": [{"type": "text", "text": m["content"]}]});
                match out.last_mut() {
                    Some(last)
                        if last["role"] == "user"
                            && last["content"][0]["type"] == "tool_result" =>
                    {
                        last["content"].as_array_mut().unwrap().push(result)
                    }
                    _ => out.push(json!({"role": "user", "content": [result]})),
                }
            }
            "assistant" => {
                let mut blocks: Vec<Value> = text.into_iter().collect();
                for call in m["tool_calls"].as_array().into_iter().flatten() {
                    let input: Value =
                        serde_json::from_str(call["function"]["arguments"].as_str().unwrap())
                            .unwrap();
                    blocks.push(json!({"type": "tool_use", "id": call["id"],
                                       "name": call["function"]["name"], "input": input}));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
            }
            role => out.push(json!({"role": role, "content": [text]})),
        }
    }
    out
}

/// Chat messages as OpenAI Responses items.
fn responses(messages: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in messages {
        let role = m["role"].as_str().unwrap();
        if role == "tool" {
            out.push(
                json!({"type": "function_call_output", "call_id": m["tool_call_id"],
                            "output": m["content"]}),
            );
            continue;
        }
        if let Some(t) = m["content"].as_str() {
            let kind = if role == "assistant" {
                "output_text"
            } else {
                "input_text"
            };
            let role = if role == "system" { "developer" } else { role };
            out.push(json!({"type": "message", "role": role,
                            "content": [{"type": kind, "text": t}]}));
        }
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            out.push(json!({"type": "function_call", "call_id": call["id"],
                            "name": call["function"]["name"],
                            "arguments": call["function"]["arguments"]}));
        }
    }
    out
}
