//! Structured output: request formats per mode, validation and repair.

use assay_llm::{FailureKind, StructuredMode};
use serde_json::json;

use crate::server::{chat, Server};
use crate::{judge, options, request, verdict_schema};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repair_re_ask_fixes_a_schema_violating_answer() {
    let server = Server::start(|_, n| match n {
        0 => chat("{\"verdict\": \"yes\"}"),
        _ => chat("Sorry! ```json\n{\"verdict\": 1,}\n```"),
    })
    .await;
    let answer = judge(&options(&server), None)
        .chat(&request("q").with_schema(verdict_schema()))
        .await
        .unwrap();
    assert_eq!(answer.json, Some(json!({"verdict": 1})));
    assert_eq!(answer.usage.prompt_tokens, 22, "usage covers both calls");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let repair = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(repair[1]["role"], "assistant");
    assert_eq!(repair[1]["content"], "{\"verdict\": \"yes\"}");
    let ask = reqs[1].last_message();
    assert!(
        ask.contains("$.verdict: expected type \"integer\", found string"),
        "{ask}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhausted_repairs_fail_as_parse_with_the_raw_text() {
    let server = Server::start(|_, _| chat("I cannot answer that.")).await;
    let mut opts = options(&server);
    opts.repair_attempts = 2;
    let err = judge(&opts, None)
        .chat(&request("q").with_schema(verdict_schema()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), FailureKind::Parse);
    assert_eq!(err.raw_output(), Some("I cannot answer that."));
    assert_eq!(server.count(), 3, "the first ask and two repairs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_mode_conveys_the_schema_its_way() {
    let server = Server::start(|_, _| chat("{\"verdict\": 0}")).await;
    for mode in StructuredMode::ALL {
        let mut opts = options(&server);
        opts.structured_mode = Some(mode);
        let answer = judge(&opts, None)
            .chat(&request("q").with_schema(verdict_schema()))
            .await
            .unwrap();
        assert_eq!(answer.json, Some(json!({"verdict": 0})));
    }
    let reqs = server.requests();
    let format = |i: usize| reqs[i].body.get("response_format").cloned();
    let schema_in_prompt = |i: usize| reqs[i].last_message().contains("\"verdict\"");
    assert_eq!(format(0).unwrap()["type"], "json_schema");
    assert_eq!(format(0).unwrap()["json_schema"]["strict"], true);
    assert_eq!(format(0).unwrap()["json_schema"]["name"], "test_prompt");
    assert_eq!(
        format(0).unwrap()["json_schema"]["schema"],
        verdict_schema()
    );
    assert!(!schema_in_prompt(0));
    assert_eq!(format(1).unwrap()["type"], "json_object");
    assert!(schema_in_prompt(1));
    assert_eq!(format(2), None);
    assert!(schema_in_prompt(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_parameters_and_logprobs_reach_the_wire() {
    let server = Server::start(|_, _| {
        crate::server::Reply::json(200, json!({
            "choices": [{"message": {"content": "yes"}, "finish_reason": "stop",
                "logprobs": {"content": [{"token": "yes", "logprob": -0.1,
                    "top_logprobs": [{"token": "yes", "logprob": -0.1}, {"token": "no", "logprob": -2.4}]}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1}
        }))
    })
    .await;
    let mut req = request("q");
    req.sampling.top_p = Some(0.5);
    req.sampling.max_tokens = Some(9);
    req.sampling.stop = vec!["\n".into()];
    req.top_logprobs = Some(2);
    let answer = judge(&options(&server), None).chat(&req).await.unwrap();
    let body = &server.requests()[0].body;
    assert_eq!(body["model"], "judge-model");
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(body["seed"], 0);
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["max_tokens"], 9);
    assert_eq!(body["stop"], json!(["\n"]));
    assert_eq!(body["logprobs"], true);
    assert_eq!(body["top_logprobs"], 2);
    let lp = answer.logprobs.unwrap();
    assert_eq!(
        lp[0].top,
        vec![("yes".to_owned(), -0.1), ("no".to_owned(), -2.4)]
    );
}
