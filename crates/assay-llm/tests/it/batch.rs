//! Batch files: export as OpenAI Batch JSONL, import answers into the cache.

use std::sync::Arc;

use assay_llm::{export_batch, import_batch, Cache, FailureKind, Judge, Source};
use serde_json::{json, Value};

use crate::server::{chat_body, Server};
use crate::{client, options, request, temp_dir, verdict_schema};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exported_requests_come_back_through_the_cache() {
    let server = Server::start(|_, _| panic!("no request may reach the server")).await;
    let opts = options(&server);
    let model = client(&opts, "judge-model");
    let requests = vec![
        request("one").with_schema(verdict_schema()),
        request("two").with_schema(verdict_schema()),
        request("one").with_schema(verdict_schema()),
    ];

    let mut file = Vec::new();
    assert_eq!(
        export_batch(&model, &requests, &mut file).unwrap(),
        2,
        "duplicates are written once"
    );
    let lines: Vec<Value> = String::from_utf8(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let dir = temp_dir("batch");
    let cache = Arc::new(Cache::open(dir.path().join("c.sqlite")).unwrap());
    let judge = Judge::new(
        Arc::new(client(&opts, "judge-model")),
        Some(Arc::clone(&cache)),
        1,
    );
    for (line, req) in lines.iter().zip(&requests) {
        assert_eq!(line["custom_id"], judge.key(req).as_str());
        assert_eq!(line["method"], "POST");
        assert_eq!(line["url"], "/v1/chat/completions");
        assert_eq!(line["body"], model.request_body(req));
        assert_eq!(line["body"]["response_format"]["type"], "json_schema");
    }

    // A batch output file: a valid answer, a schema violation, an unknown id.
    let output = [
        json!({"id": "b1", "custom_id": lines[0]["custom_id"], "error": null,
               "response": {"status_code": 200, "body": chat_body("{\"verdict\": 1}", "stop")}}),
        json!({"id": "b2", "custom_id": lines[1]["custom_id"], "error": null,
               "response": {"status_code": 200, "body": chat_body("{\"verdict\": 7}", "stop")}}),
        json!({"id": "b3", "custom_id": "0".repeat(64), "error": null,
               "response": {"status_code": 200, "body": chat_body("{}", "stop")}}),
    ]
    .iter()
    .map(Value::to_string)
    .collect::<Vec<_>>()
    .join("\n");
    let report = import_batch(&model, &cache, &requests, output.as_bytes()).unwrap();
    assert_eq!(
        (report.stored, report.unknown, report.failed.len()),
        (1, 1, 1)
    );
    assert_eq!(report.failed[0].0, judge.key(&requests[1]));
    assert_eq!(report.failed[0].1.kind(), FailureKind::Parse);

    let answer = judge.chat(&requests[0]).await.unwrap();
    assert_eq!(answer.source, Source::Cache);
    assert_eq!(answer.json, Some(json!({"verdict": 1})));
    assert_eq!(server.count(), 0);
}

#[test]
fn a_malformed_batch_line_names_its_line() {
    let dir = temp_dir("badbatch");
    let opts = assay_llm::ProviderOptions {
        base_url: Some("http://127.0.0.1:9/v1".into()),
        ..Default::default()
    };
    let model = client(&opts, "m");
    let cache = Cache::open(dir.path().join("c.sqlite")).unwrap();
    let err = import_batch(
        &model,
        &cache,
        &[],
        "\n{\"custom_id\": \"x\"}\nnot json\n".as_bytes(),
    )
    .unwrap_err();
    assert_eq!(err.kind(), FailureKind::Config);
    assert!(
        err.detail().starts_with("batch output line 3:"),
        "{}",
        err.detail()
    );
}
