//! Property tests of structured output: extraction, validation and the
//! judge's repair loop over arbitrary answers, never a panic.
//!
//! `cargo test` runs a few dozen cases per property; `scripts/fuzz.sh` sets
//! `PROPTEST_CASES` for long runs. Failures found are replayed from
//! `proptest-regressions/` before any new case.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use assay_llm::schema::{parse_structured, validate};
use assay_llm::{
    BoxFuture, ChatModel, ChatRequest, ChatResponse, Error, FailureKind, FinishReason, Judge,
    ModelIdentity, Source, Usage,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// `default_cases` cases, or as many as `PROPTEST_CASES` says.
fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok());
    ProptestConfig::with_cases(cases.unwrap_or(default_cases))
}

/// Text a judge might write inside strings: brackets, quotes, escapes.
fn text() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec![
        'a', 'b', ' ', '{', '}', '[', ']', '"', '\\', ',', ':', '\n', 'é', '😀', '\u{0}',
    ]);
    prop::collection::vec(chars, 0..12).prop_map(String::from_iter)
}

/// The output schemas of assay's judge steps, in their shapes, each with
/// values that satisfy it.
fn schema_and_value() -> impl Strategy<Value = (Value, Value)> {
    let verdict = json!({
        "type": "object", "required": ["verdict"], "additionalProperties": false,
        "properties": {"verdict": {"type": "integer", "enum": [0, 1]}, "reason": {"type": "string"}}
    });
    let statements = json!({
        "type": "object", "required": ["statements"], "additionalProperties": false,
        "properties": {"statements": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["statement", "verdict"],
            "properties": {"statement": {"type": "string"}, "verdict": {"type": "integer", "minimum": 0, "maximum": 1}}
        }}}
    });
    let list = json!({"type": "array", "maxItems": 3, "items": {"type": "string"}});
    prop_oneof![
        (0..2u8, prop::option::of(text())).prop_map(move |(v, reason)| {
            let mut value = json!({ "verdict": v });
            if let Some(r) = reason {
                value["reason"] = json!(r);
            }
            (verdict.clone(), value)
        }),
        prop::collection::vec((text(), 0..2u8), 1..4).prop_map(move |items| {
            let items: Vec<Value> = items
                .into_iter()
                .map(|(s, v)| json!({"statement": s, "verdict": v}))
                .collect();
            (statements.clone(), json!({ "statements": items }))
        }),
        prop::collection::vec(text(), 0..4).prop_map(move |items| (list.clone(), json!(items))),
    ]
}

/// Prose around an answer: fences, citations, stray brackets.
fn prose() -> impl Strategy<Value = String> {
    let words = prop::sample::select(vec![
        "Sure. ",
        "Here is the JSON:\n",
        "```json\n",
        "```\n",
        "\n```",
        " Hope this helps.",
        "As the context [1] says, ",
        "see [2]. ",
        "{not json} ",
        "(a, b) ",
        "\"quoted\" ",
    ]);
    prop::collection::vec(words, 0..4).prop_map(|w| w.concat())
}

/// `value` as a model might write it: compact or indented.
fn written(value: &Value, pretty: bool) -> String {
    if pretty {
        serde_json::to_string_pretty(value).unwrap()
    } else {
        value.to_string()
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Whatever the text, a value that comes out satisfies the schema.
    #[test]
    fn whatever_parses_satisfies_the_schema(
        (schema, value) in schema_and_value(),
        before in prose(),
        noise in text(),
        pretty in any::<bool>(),
    ) {
        for answer in [noise.clone(), format!("{before}{noise}{}", written(&value, pretty))] {
            if let Ok(v) = parse_structured(&answer, &schema) {
                prop_assert_eq!(validate(&v, &schema), Ok(()));
            }
        }
    }

    /// A valid answer amid prose is found, whatever brackets the prose has.
    #[test]
    fn a_valid_answer_amid_prose_is_found(
        (schema, value) in schema_and_value(),
        before in prose(),
        after in prose(),
        pretty in any::<bool>(),
    ) {
        let answer = format!("{before}{}{after}", written(&value, pretty));
        prop_assert_eq!(parse_structured(&answer, &schema), Ok(value));
    }

    /// A valid answer cut at any character: the part before the cut either
    /// gives a value that satisfies the schema or says why not.
    #[test]
    fn a_truncated_answer_parses_to_a_valid_value_or_fails(
        (schema, value) in schema_and_value(),
        before in prose(),
        pretty in any::<bool>(),
    ) {
        let answer = format!("{before}{}", written(&value, pretty));
        for (cut, _) in answer.char_indices() {
            match parse_structured(&answer[..cut], &schema) {
                Ok(v) => prop_assert_eq!(validate(&v, &schema), Ok(())),
                Err(e) => prop_assert!(!e.is_empty()),
            }
        }
    }
}

/// A model that answers from a script, one answer per call.
struct Scripted {
    identity: ModelIdentity,
    answers: Vec<String>,
    calls: AtomicUsize,
}

impl ChatModel for Scripted {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn complete<'a>(
        &'a self,
        _request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, Error>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let text = self.answers[n].clone();
        Box::pin(async move {
            Ok(ChatResponse {
                text,
                json: None,
                finish_reason: FinishReason::Stop,
                usage: Usage::default(),
                latency: Duration::ZERO,
                source: Source::Upstream,
                logprobs: None,
                choice_probabilities: None,
            })
        })
    }
}

/// An answer: valid, valid but cut short, or noise.
fn answer(value: Value) -> impl Strategy<Value = String> {
    let whole = value.to_string();
    prop_oneof![
        (prose(), prose()).prop_map(move |(b, a)| format!("{b}{whole}{a}")),
        (prose(), any::<prop::sample::Index>()).prop_map(move |(b, i)| {
            let answer = format!("{b}{}", value);
            let cut = i.index(answer.len());
            let cut = (0..=cut)
                .rev()
                .find(|&c| answer.is_char_boundary(c))
                .unwrap_or(0);
            answer[..cut].to_string()
        }),
        text(),
    ]
}

fn judge_case() -> impl Strategy<Value = (Value, Vec<String>, u32)> {
    (schema_and_value(), 0u32..3).prop_flat_map(|((schema, value), repairs)| {
        let answers = prop::collection::vec(answer(value), repairs as usize + 1);
        (Just(schema), answers, Just(repairs))
    })
}

proptest! {
    #![proptest_config(config(256))]

    /// The judge returns the first answer that validates, as validated
    /// JSON, after as many calls as it took; when none of the first ask
    /// and its repairs does, a `parse` failure carrying the last raw answer.
    #[test]
    fn the_judge_returns_a_valid_answer_or_a_parse_failure_with_the_raw_text(
        (schema, answers, repairs) in judge_case(),
    ) {
        let model = Arc::new(Scripted {
            identity: ModelIdentity {
                provider: "scripted".into(),
                endpoint: "memory".into(),
                model: "m".into(),
                settings: String::new(),
            },
            answers: answers.clone(),
            calls: AtomicUsize::new(0),
        });
        let judge = Judge::new(model.clone(), None, repairs);
        let request = crate::request("q").with_schema(schema.clone());
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let result = runtime.block_on(judge.chat(&request));
        let first_valid = answers.iter().position(|a| parse_structured(a, &schema).is_ok());
        match (result, first_valid) {
            (Ok(resp), Some(i)) => {
                let json = resp.json.expect("a schema'd answer carries its JSON");
                prop_assert_eq!(validate(&json, &schema), Ok(()));
                prop_assert_eq!(&resp.text, &answers[i]);
                prop_assert_eq!(model.calls.load(Ordering::SeqCst), i + 1);
            }
            (Err(e), None) => {
                prop_assert_eq!(e.kind(), FailureKind::Parse);
                prop_assert_eq!(e.raw_output(), Some(answers[repairs as usize].as_str()));
                prop_assert_eq!(model.calls.load(Ordering::SeqCst), answers.len());
            }
            (result, first_valid) => {
                prop_assert!(false, "{:?} with the first valid answer {:?}", result, first_valid);
            }
        }
    }
}
