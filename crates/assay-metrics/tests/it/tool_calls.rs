//! The tool-call metrics on conversations with malformed parts: the metric
//! that needs the part fails naming row, message and field; the others score.

use assay_core::{FailureKind, Field, Outcome, Sample, SkipReason};
use assay_metrics::{Metric, MetricId};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn outcome(id: MetricId, row: &Value) -> Outcome {
    let sample = Sample::from_json(4, row.as_object().unwrap()).unwrap();
    let metric = Metric::configure(id, &BTreeMap::new()).unwrap();
    let mut out = metric.scorer().score(&sample);
    assert_eq!(out.len(), 1);
    out.remove(0)
}

fn call(id: &str, name: &str, args: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
}

const TOOLS: [MetricId; 3] = [
    assay_metrics::tools::tool_call_accuracy::ID,
    assay_metrics::tools::tool_call_f1::ID,
    assay_metrics::tools::tool_correctness::ID,
];

#[test]
fn arguments_that_are_not_an_object_fail_every_tool_metric_naming_the_place() {
    let row = json!({
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "tool_calls": [call("a", "weather", "[\"Oslo\"]")]},
        ],
        "reference_tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}],
        "response": "Rain.", "reference": "Rain."
    });
    for id in TOOLS {
        let Outcome::Failed(f) = outcome(id, &row) else {
            panic!("{id}: not failed")
        };
        assert_eq!(f.kind, FailureKind::Input);
        assert_eq!(
            f.message,
            "row 4: message 1, field 'messages[1].tool_calls[0].function.arguments': \
             expected a JSON object, got a list"
        );
    }
    // A metric that reads only the well-formed fields scores the row.
    assert!(matches!(
        outcome(assay_metrics::lexical::exact_match::ID, &row),
        Outcome::Scored { value, .. } if value == 1.0
    ));
}

#[test]
fn a_tool_result_out_of_place_fails_the_ragas_metrics_only() {
    let row = json!({
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "tool", "tool_call_id": "a", "content": "rain"},
            {"role": "assistant", "tool_calls": [call("a", "weather", "{\"city\": \"Oslo\"}")]},
        ],
        "reference_tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}]
    });
    for id in [
        assay_metrics::tools::tool_call_accuracy::ID,
        assay_metrics::tools::tool_call_f1::ID,
    ] {
        let Outcome::Failed(f) = outcome(id, &row) else {
            panic!("{id}: not failed")
        };
        assert!(
            f.message
                .starts_with("row 4: message 1, field 'messages[1]': a tool result must follow"),
            "{}",
            f.message
        );
    }
    assert!(matches!(
        outcome(assay_metrics::tools::tool_correctness::ID, &row),
        Outcome::Scored { value, .. } if value == 1.0
    ));
}

#[test]
fn null_arguments_fail_the_ragas_metrics_and_deepeval_scores_them() {
    let row = json!({
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "tool_calls": [call("a", "weather", "null")]},
        ],
        "reference_tool_calls": [{"name": "weather", "args": {}}]
    });
    for id in [
        assay_metrics::tools::tool_call_accuracy::ID,
        assay_metrics::tools::tool_call_f1::ID,
    ] {
        let Outcome::Failed(f) = outcome(id, &row) else {
            panic!("{id}: not failed")
        };
        assert_eq!(
            f.message,
            "row 4: message 1, field 'messages[1].tool_calls[0].function.arguments': null \
             arguments: ragas' ToolCall needs an object (DeepEval reads null as a call without \
             arguments)"
        );
    }
    assert!(matches!(
        outcome(assay_metrics::tools::tool_correctness::ID, &row),
        Outcome::Scored { value, .. } if value == 1.0
    ));
    // Weighed against `{}` by its arguments, it makes DeepEval raise.
    let params = BTreeMap::from([("input_parameters".to_string(), "true".to_string())]);
    let metric = Metric::configure(assay_metrics::tools::tool_correctness::ID, &params).unwrap();
    let sample = Sample::from_json(4, row.as_object().unwrap()).unwrap();
    let [Outcome::Failed(f)] = &metric.scorer().score(&sample)[..] else {
        panic!("not failed")
    };
    assert_eq!(f.kind, FailureKind::Input);
    assert!(f.message.starts_with("row 4: tool_correctness with input_parameters=true compares a 'weather' call whose arguments are null"), "{}", f.message);
}

#[test]
fn a_result_naming_no_call_still_scores_and_bad_references_fail() {
    let row = json!({
        "messages": [
            {"role": "assistant", "tool_calls": [call("a", "weather", "{}")]},
            {"role": "tool", "tool_call_id": "zz", "content": "rain"},
        ],
        "reference_tool_calls": [{"name": "weather", "args": {}}]
    });
    for id in TOOLS {
        assert!(
            matches!(outcome(id, &row), Outcome::Scored { value, .. } if value == 1.0),
            "{id}"
        );
    }
    let row = json!({"messages": [], "reference_tool_calls": [{"name": "weather", "args": "x"}]});
    let Outcome::Failed(f) = outcome(assay_metrics::tools::tool_correctness::ID, &row) else {
        panic!("not failed")
    };
    assert_eq!(
        f.message,
        "row 4: field 'reference_tool_calls[0].args': expected an object, got a string"
    );
    assert_eq!(
        outcome(
            assay_metrics::tools::tool_call_f1::ID,
            &json!({"messages": []})
        ),
        Outcome::Skipped(SkipReason::MissingField(Field::ReferenceToolCalls))
    );
}

#[test]
fn ragas_multi_turn_samples_score_alike() {
    let row = json!({
        "user_input": [
            {"type": "human", "content": "weather?"},
            {"type": "ai", "content": "", "tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}]},
            {"type": "tool", "content": "rain"},
        ],
        "reference_tool_calls": [{"name": "weather", "args": {"city": "Oslo"}}]
    });
    for id in TOOLS {
        assert!(
            matches!(outcome(id, &row), Outcome::Scored { value, .. } if value == 1.0),
            "{id}"
        );
    }
}
