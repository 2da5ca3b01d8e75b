use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use assay_llm::{ChatModel, ChatRequest, FailureKind, FinishReason, Judge, Message, PromptRef};
use assay_local::{
    Error, JudgeOptions, KnownJudge, LocalAnswer, LocalJudge, LocalSpec, Offloaded, PrefixCaching,
};
use serde_json::{json, Value};

use crate::embed::{current_thread, identity_at_two_places, link_or_copy, tempdir};

fn options(prefix_caching: PrefixCaching) -> JudgeOptions {
    // One thread: tests run side by side, and llama.cpp's spinning worker
    // threads slow to a crawl when they outnumber the free cores.
    JudgeOptions {
        threads: 1,
        context: 2048,
        max_tokens: 256,
        prefix_caching,
        chunk: 64,
    }
}

fn load(prefix_caching: PrefixCaching) -> LocalJudge {
    LocalJudge::known(KnownJudge::Smollm2135m, options(prefix_caching))
        .unwrap_or_else(|e| panic!("cannot load the small judge: {e}"))
}

fn judge() -> &'static Arc<LocalJudge> {
    static J: OnceLock<Arc<LocalJudge>> = OnceLock::new();
    J.get_or_init(|| Arc::new(load(PrefixCaching::Enabled)))
}

fn request(system: &str, user: &str, schema: Option<Value>) -> ChatRequest {
    let mut r = ChatRequest::new(
        PromptRef {
            id: "test".into(),
            version: "1".into(),
        },
        vec![Message::system(system), Message::user(user)],
    );
    r.schema = schema;
    r
}

const INSTRUCTION: &str = "You are a careful grader. Answer in JSON.";

fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "verdict": {"enum": ["yes", "no"]}
        },
        "required": ["reason", "verdict"],
        "additionalProperties": false
    })
}

#[test]
fn chat_template_is_the_models_own() {
    let text = judge()
        .render(&[Message::system("S"), Message::user("U")])
        .unwrap();
    assert_eq!(
        text,
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn constrained_output_satisfies_every_schema() {
    let schemas = [
        verdict_schema(),
        json!({"type": "object", "properties": {"score": {"type": "integer"}, "ok": {"type": "boolean"}}, "required": ["score", "ok"]}),
        json!({
            "type": "object",
            "properties": {
                "statements": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {"statement": {"type": "string"}, "verdict": {"enum": [0, 1]}},
                        "required": ["statement", "verdict"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["statements"],
            "additionalProperties": false
        }),
        json!({"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}),
        json!({"type": "object", "properties": {"kind": {"const": "fixed"}, "note": {"type": ["string", "null"]}}, "required": ["kind"]}),
    ];
    for schema in schemas {
        let r = request(
            INSTRUCTION,
            "Question: Is Paris the capital of France? List the statements you make and grade them.",
            Some(schema.clone()),
        );
        let a = judge().answer(&r).unwrap();
        assert_eq!(a.finish_reason, FinishReason::Stop, "{schema}: {}", a.text);
        let v: Value = serde_json::from_str(&a.text)
            .unwrap_or_else(|e| panic!("{schema}: not JSON ({e}): {}", a.text));
        assay_llm::schema::validate(&v, &schema)
            .unwrap_or_else(|e| panic!("{schema}: {e}: {}", a.text));
    }
}

#[test]
fn same_request_gives_same_bytes_whatever_came_before() {
    let r = request(
        INSTRUCTION,
        "Is the sky green? Give a reason.",
        Some(verdict_schema()),
    );
    let other = request(
        INSTRUCTION,
        "Is water wet? Give a reason.",
        Some(verdict_schema()),
    );
    let first = judge().answer(&r).unwrap();
    judge().answer(&other).unwrap();
    let second = judge().answer(&r).unwrap();
    let third = judge().answer(&r).unwrap();
    let fresh = load(PrefixCaching::Disabled).answer(&r).unwrap();
    assert_eq!(first.text, second.text);
    assert_eq!(first.text, third.text);
    assert_eq!(first.text, fresh.text);
    assert_eq!(first.choices, fresh.choices);
}

#[test]
fn shared_prefix_is_reused() {
    let j = load(PrefixCaching::Enabled);
    let long_instruction = format!(
        "{INSTRUCTION} {}",
        "Be strict and explain briefly. ".repeat(20)
    );
    let a = j
        .answer(&request(
            &long_instruction,
            "Is ice cold?",
            Some(verdict_schema()),
        ))
        .unwrap();
    assert_eq!(a.reused_tokens, 0);
    let b = j
        .answer(&request(
            &long_instruction,
            "Is fire hot?",
            Some(verdict_schema()),
        ))
        .unwrap();
    assert!(b.reused_tokens > 100, "reused {}", b.reused_tokens);
    assert!(b.reused_tokens < b.prompt_tokens);
    let uncached = load(PrefixCaching::Disabled)
        .answer(&request(
            &long_instruction,
            "Is fire hot?",
            Some(verdict_schema()),
        ))
        .unwrap();
    assert_eq!(uncached.reused_tokens, 0);
    assert_eq!(b.text, uncached.text);
}

#[test]
fn choice_probabilities_sum_to_one_and_follow_the_greedy_choice() {
    let schema = json!({
        "type": "object",
        "properties": {
            "verdicts": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"enum": [0, 1]}},
            "answer": {"enum": ["yes", "no"]},
            "sure": {"type": "boolean"}
        },
        "required": ["answer", "verdicts", "sure"]
    });
    let r = request(INSTRUCTION, "Is two plus two four?", Some(schema));
    let a = judge().answer(&r).unwrap();
    let v: Value = serde_json::from_str(&a.text).unwrap();
    let pointers: Vec<&str> = a.choices.iter().map(|c| c.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/answer", "/verdicts/0", "/verdicts/1", "/sure"],
        "{}",
        a.text
    );
    for c in &a.choices {
        let sum: f64 = c.probabilities.iter().map(|(_, p)| p).sum();
        assert!((sum - 1.0).abs() < 1e-9, "{c:?}");
        let best = c
            .probabilities
            .iter()
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .map(|(v, _)| v.clone())
            .unwrap();
        let written = v.pointer(&c.pointer).unwrap().to_string();
        assert_eq!(best, written, "{c:?} in {}", a.text);
    }
}

#[test]
fn the_trait_returns_validated_json_and_probabilities_per_pointer() {
    let r = request(INSTRUCTION, "Is snow white?", Some(verdict_schema()));
    let chat = Offloaded::new(Arc::clone(judge()));
    let resp = current_thread().block_on(chat.complete(&r)).unwrap();
    let json = resp.json.expect("validated JSON");
    assert!(json["verdict"] == "yes" || json["verdict"] == "no");
    let points = resp.choice_probabilities.expect("choice probabilities");
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].pointer, "/verdict");
    let values: Vec<&str> = points[0]
        .probabilities
        .iter()
        .map(|(v, _)| v.as_str())
        .collect();
    assert_eq!(values, ["\"yes\"", "\"no\""]);
    assert!(resp.usage.prompt_tokens > 10 && resp.usage.completion_tokens > 3);
    assert_eq!(chat.identity().provider, "local");
}

/// A scored reply: one log-probability per token, whose texts spell the
/// reply (the "ë" of "Brontë", two bytes, whole); the same numbers
/// whatever the cache held and through the trait; and a context that
/// states the answer makes it likelier than the question alone does.
#[test]
fn a_reply_is_likelier_with_the_context_that_states_it() {
    let reply = "The book was written by Quelma Brontë of Zorbia.";
    let question = "Who wrote the book?";
    let with = request(
        "Answer the question using only the contexts.",
        &format!("contexts:\n1. {reply}\n\nquestion:\n{question}"),
        None,
    )
    .with_continuation(reply);
    let without = request(
        "Answer the question.",
        &format!("question:\n{question}"),
        None,
    )
    .with_continuation(reply);
    let a = judge().answer(&with).unwrap();
    let spelled: String = a.scored.iter().map(|t| t.token.as_str()).collect();
    assert_eq!(spelled, reply);
    assert!(
        a.scored
            .iter()
            .all(|t| t.logprob.is_finite() && t.logprob <= 0.0),
        "{:?}",
        a.scored
    );
    assert_eq!((a.text.as_str(), a.completion_tokens), (reply, 0));
    let b = judge().answer(&without).unwrap();
    let mean =
        |x: &LocalAnswer| x.scored.iter().map(|t| t.logprob).sum::<f64>() / x.scored.len() as f64;
    assert!(
        mean(&a) > mean(&b) + 1.0,
        "with the context {}, without {}",
        mean(&a),
        mean(&b)
    );
    let fresh = load(PrefixCaching::Disabled).answer(&with).unwrap();
    assert_eq!(a.scored, fresh.scored);
    let chat = Offloaded::new(Arc::clone(judge()));
    let resp = current_thread().block_on(chat.complete(&with)).unwrap();
    assert_eq!(resp.logprobs.as_deref(), Some(&a.scored[..]));
    assert_eq!(resp.json, None);
}

/// A 1-5 rating (an integer range, as the coherence prompt asks it) is a
/// closed choice: its five probabilities sum to 1, sit at the rating's
/// pointer and not at the verdict's of the same answer, and the written
/// rating is the likeliest.
#[test]
fn a_rating_gets_its_five_probabilities_at_its_own_pointer() {
    let schema = json!({
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "rating": {"type": "integer", "minimum": 1, "maximum": 5},
            "verdict": {"enum": ["yes", "no"]}
        },
        "required": ["reason", "rating", "verdict"],
        "additionalProperties": false
    });
    let r = request(
        INSTRUCTION,
        "Rate from 1 to 5 how well this summary covers the text, then say whether it is \
         faithful. Text: The council approved a tram line to the airport. Summary: A tram \
         line was approved.",
        Some(schema),
    );
    let chat = Offloaded::new(Arc::clone(judge()));
    let resp = current_thread().block_on(chat.complete(&r)).unwrap();
    let json = resp.json.expect("validated JSON");
    let points = resp.choice_probabilities.expect("choice probabilities");
    let pointers: Vec<&str> = points.iter().map(|c| c.pointer.as_str()).collect();
    assert_eq!(pointers, ["/rating", "/verdict"]);
    let rating = &points[0].probabilities;
    let values: Vec<&str> = rating.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(values, ["1", "2", "3", "4", "5"]);
    let sum: f64 = rating.iter().map(|(_, p)| p).sum();
    assert!((sum - 1.0).abs() < 1e-9, "{rating:?}");
    let likeliest = rating
        .iter()
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .map(|(v, _)| v.as_str())
        .unwrap();
    assert_eq!(likeliest, json["rating"].to_string(), "{json}");
}

/// Concurrent calls share one context, so they take turns: each call's
/// recorded latency is its own compute time, and these times cannot
/// overlap, so they add up to at most the wall time of the whole batch.
/// (Were the wait for the context counted, the second call would also
/// count the first's time, and the sum would exceed the wall time.)
#[test]
fn concurrent_calls_record_their_compute_time_not_their_wait() {
    let chat = Offloaded::new(Arc::clone(judge()));
    let requests: Vec<ChatRequest> = [
        "Is ice cold?",
        "Is fire hot?",
        "Is rain wet?",
        "Is sand dry?",
    ]
    .iter()
    .map(|q| request(INSTRUCTION, q, Some(verdict_schema())))
    .collect();
    let started = std::time::Instant::now();
    let latencies = current_thread().block_on(async {
        let mut calls = tokio::task::JoinSet::new();
        for r in requests {
            let chat = chat.clone();
            calls.spawn(async move { chat.complete(&r).await.map(|resp| resp.latency) });
        }
        let mut latencies = Vec::new();
        while let Some(done) = calls.join_next().await {
            latencies.push(done.unwrap().unwrap());
        }
        latencies
    });
    let wall = started.elapsed();
    assert_eq!(latencies.len(), 4);
    assert!(latencies.iter().all(|l| !l.is_zero()), "{latencies:?}");
    let total: std::time::Duration = latencies.iter().sum();
    assert!(total <= wall, "{latencies:?} add up to more than {wall:?}");
}

/// The model computes off the runtime: on a single-threaded runtime, a
/// second task gets to run while the answer is being computed. A model
/// computing inside `poll` would finish before the other branch is first
/// polled, and this test would fail.
#[test]
fn the_runtime_keeps_running_while_the_model_computes() {
    let r = request(INSTRUCTION, "Is snow white?", Some(verdict_schema()));
    let chat = Offloaded::new(Arc::clone(judge()));
    let answered = AtomicBool::new(false);
    let (resp, ran_meanwhile) = current_thread().block_on(async {
        tokio::join!(
            async {
                let resp = chat.complete(&r).await;
                answered.store(true, Ordering::SeqCst);
                resp
            },
            async { !answered.load(Ordering::SeqCst) }
        )
    });
    assert!(resp.is_ok());
    assert!(ran_meanwhile, "the other task waited for the model");
}

/// Votes ask at a temperature above zero with distinct seeds: the seed
/// decides the answer (same seed, same bytes), the seeds give different
/// answers, and the schema still holds for every draw.
#[test]
fn a_temperature_draws_by_seed_under_the_schema() {
    let draw = |seed: u64, schema: Option<Value>| {
        let mut r = request(
            "Answer with one word.",
            "Name an animal that lives in a forest.",
            schema,
        );
        r.sampling.temperature = 1.5;
        r.sampling.seed = Some(seed);
        // Under the grammar a draw may spell the JSON in short pieces.
        r.sampling.max_tokens = Some(if r.schema.is_some() { 64 } else { 12 });
        judge().answer(&r).unwrap().text
    };
    let free: Vec<String> = (0..6).map(|seed| draw(seed, None)).collect();
    assert_eq!(
        free[3],
        draw(3, None),
        "the same seed gives the same answer"
    );
    let mut distinct = free.clone();
    distinct.sort();
    distinct.dedup();
    assert!(distinct.len() > 1, "six seeds, one answer: {free:?}");
    // The verdict alone: a free-text reason drawn at this temperature may
    // ramble past the budget.
    let verdict_only = json!({
        "type": "object",
        "properties": {"verdict": {"enum": ["yes", "no"]}},
        "required": ["verdict"],
        "additionalProperties": false
    });
    for seed in 0..4 {
        let text = draw(seed, Some(verdict_only.clone()));
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert!(v["verdict"] == "yes" || v["verdict"] == "no", "{text}");
    }
}

#[test]
fn unconstrained_requests_stop_at_the_budget_or_a_stop_sequence() {
    let mut r = request(INSTRUCTION, "Count from one to twenty in words.", None);
    r.sampling.max_tokens = Some(5);
    let a = judge().answer(&r).unwrap();
    assert_eq!(a.completion_tokens, 5);
    assert_eq!(a.finish_reason, FinishReason::Length);
    r.sampling.max_tokens = Some(60);
    r.sampling.stop = vec!["three".into()];
    let b = judge().answer(&r).unwrap();
    assert!(!b.text.contains("three"), "{}", b.text);
}

#[test]
fn unsupported_schemas_are_refused_before_decoding() {
    let r = request(INSTRUCTION, "x", Some(json!({"type": "tuple"})));
    assert!(matches!(judge().answer(&r), Err(Error::Schema(_))));
}

/// The same GGUF file at two paths gives the same identity, named by the
/// file's name and SHA-256 and by neither path.
#[test]
fn the_identity_is_the_same_wherever_the_model_is() {
    let src = KnownJudge::Smollm2135m.path();
    let identity = identity_at_two_places(
        "judge-where",
        |dir| {
            let path = dir.join(KnownJudge::Smollm2135m.file_name());
            link_or_copy(&src, &path);
            LocalSpec::File(path)
        },
        |spec| {
            LocalJudge::from_spec(spec, options(PrefixCaching::Enabled))
                .unwrap_or_else(|e| panic!("cannot load {spec}: {e}"))
                .identity()
                .clone()
        },
    );
    // The SHA-256 scripts/fetch-models.sh pins.
    assert_eq!(
        identity.endpoint,
        "smollm2-135m-instruct-q4_1.gguf@sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    );
    assert_eq!(identity.model, "smollm2-135m-instruct-q4_1");
    assert_eq!(judge().identity().endpoint, identity.endpoint);
}

#[test]
fn missing_truncated_and_foreign_files_are_clear_errors() {
    let tmp = tempdir("judge-files");
    let missing = tmp.join("nothing.gguf");
    let e = LocalJudge::load(&missing, "nothing", options(PrefixCaching::Enabled))
        .err()
        .unwrap();
    assert!(matches!(e, Error::ModelMissing { .. }));
    assert!(e.to_string().contains("scripts/fetch-models.sh"), "{e}");

    let bytes = std::fs::read(KnownJudge::Smollm2135m.path())
        .unwrap_or_else(|e| panic!("small judge missing ({e}); run scripts/fetch-models.sh"));
    for (name, content) in [
        ("truncated.gguf", &bytes[..bytes.len() / 3]),
        ("header-only.gguf", &bytes[..64]),
        ("foreign.gguf", &b"PK\x03\x04 definitely not a model"[..]),
    ] {
        let path = tmp.join(name);
        std::fs::write(&path, content).unwrap();
        match LocalJudge::load(&path, name, options(PrefixCaching::Enabled)) {
            Err(Error::ModelInvalid { .. }) => {}
            Err(other) => panic!("{name}: wrong error {other}"),
            Ok(_) => panic!("{name} loaded"),
        }
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A constrained answer cut off at the token budget is a `truncated`
/// failure of the judge layer carrying the cut text, not a `parse` failure
/// (nor a repair re-ask that would be cut off again).
#[test]
fn a_schema_answer_cut_at_the_budget_is_truncated() {
    let schema = json!({
        "type": "object",
        "properties": {"reason": {"type": "string"}},
        "required": ["reason"],
        "additionalProperties": false
    });
    let mut r = request(
        INSTRUCTION,
        "Explain at length why the sky is blue.",
        Some(schema),
    );
    r.sampling.max_tokens = Some(6);
    let judge = Judge::new(Arc::new(Offloaded::new(Arc::clone(judge()))), None, 1);
    let e = current_thread()
        .block_on(judge.complete(&r))
        .expect_err("six tokens cannot close the object");
    assert_eq!(e.kind(), FailureKind::Truncated, "{e}");
    let raw = e.raw_output().unwrap_or_default();
    assert!(raw.starts_with("{\"reason\""), "{raw}");
}

/// A greedy small model asked to repeat itself loops inside its reason;
/// without the loop check it writes "the cat sat on the mat" until the
/// token limit and the answer is lost as truncated.
#[test]
fn a_reason_that_repeats_itself_is_closed_and_the_verdict_still_given() {
    let r = request(
        INSTRUCTION,
        "Say the same sentence over and over: the cat sat on the mat, the cat sat on the \
         mat, the cat sat on the mat,",
        Some(verdict_schema()),
    );
    let answer = judge().answer(&r).unwrap();
    assert_eq!(answer.finish_reason, FinishReason::Stop, "{}", answer.text);
    let json: Value = serde_json::from_str(&answer.text).expect("whole JSON");
    let reason = json["reason"].as_str().unwrap();
    // Cut within the first repeat of 64 bytes, well before the limit.
    assert!(
        reason.matches("the cat sat on the mat").count() >= 2,
        "{reason}"
    );
    assert!(reason.len() < 200, "{reason}");
    assert!(
        ["yes", "no"].contains(&json["verdict"].as_str().unwrap()),
        "{json}"
    );
    assert!(
        answer.completion_tokens < 64,
        "{}",
        answer.completion_tokens
    );
}
