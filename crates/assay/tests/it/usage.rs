//! What `summary.json` says a judged run cost, against what the loopback
//! server saw: shared steps split among the metrics that read them,
//! embedding requests counted like judge calls, and `ragas_score`.

use crate::common::{output, read_json};
use crate::judged::{ok, Fixture};
use assay_test_server::judge;
use serde_json::{json, Value};

/// `n` RAG rows with distinct texts, so that no request repeats across
/// samples and every answer is one upstream call.
fn rows(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut row = judge::eiffel_row();
            row["id"] = json!(format!("s{i}"));
            row["user_input"] = json!(format!("Where is the Eiffel Tower {i}"));
            row["response"] = json!(format!(
                "The Eiffel Tower is in Paris. The Eiffel Tower is made of cheese {i}"
            ));
            row["reference"] = json!(format!(
                "The Eiffel Tower is in Paris. The Eiffel Tower opened in 1889. It is {i} metres tall"
            ));
            row
        })
        .collect()
}

fn close(got: &Value, want: f64, what: &str) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {got}"));
    assert!((got - want).abs() < 1e-9, "{what}: {got} != {want}");
}

fn count(fx: &Fixture, path_end: &str) -> usize {
    fx.server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with(path_end))
        .count()
}

#[test]
fn shared_steps_are_split_evenly_and_the_shares_add_up_to_the_run() {
    let fx = Fixture::content_reading();
    let n = 3;
    let data = fx.data(&rows(n));
    let metrics = [
        "faithfulness",
        "answer_relevance",
        "answer_correctness",
        "context_recall",
    ];
    let o = fx.eval(
        &data,
        &metrics.join(","),
        "run",
        &["--price", "judge-model=1/2"],
    );
    ok(&o);
    let summary = read_json(&fx.path("run/summary.json"));
    let usage = &summary["usage"];
    let run = &usage["run"];
    let chats = fx.chats().len();
    assert_eq!(run["calls"], json!(chats), "{run}");

    // Per sample: the response's statements are read by faithfulness,
    // answer_relevance and answer_correctness; the reference's by
    // answer_correctness and context_recall (which then judges those
    // statements); every other step by one metric.
    let n = n as f64;
    let want = [
        ("faithfulness", 1.0 / 3.0 + 1.0, 2.0),
        ("answer_relevance", 1.0 / 3.0 + 1.0, 2.0),
        ("answer_correctness", 1.0 / 3.0 + 1.0 / 2.0 + 1.0, 3.0),
        ("context_recall", 1.0 / 2.0 + 1.0, 2.0),
    ];
    for (metric, share, alone) in want {
        let u = &usage["per_metric"][metric];
        close(&u["calls"], share * n, metric);
        close(&u["alone"]["calls"], alone * n, metric);
    }
    assert_eq!(chats as f64, 6.0 * n, "six judge steps per sample");
    assert_eq!(run["calls_if_unshared"], json!(9 * 3));
    assert_eq!(run["saved_by_sharing"], json!(3 * 3));

    // The shares add up to the run's exact totals, and each judged output
    // carries its metric's share.
    for key in [
        "calls",
        "upstream",
        "prompt_tokens",
        "completion_tokens",
        "cost",
    ] {
        let sum: f64 = metrics
            .iter()
            .map(|m| usage["per_metric"][m][key].as_f64().unwrap())
            .sum();
        close(&json!(sum), run[key].as_f64().unwrap(), key);
    }
    for m in ["faithfulness", "context_recall"] {
        for key in ["prompt_tokens", "completion_tokens", "cost"] {
            assert_eq!(
                output(&summary, m)[key],
                usage["per_metric"][m][key],
                "{m} {key}"
            );
        }
    }
}

#[test]
fn embedding_requests_are_counted_like_judge_calls() {
    let fx = Fixture::content_reading();
    let n = 2;
    let data = fx.data(&rows(n));
    let metrics = "answer_relevancy,semantic_similarity,answer_correctness";
    let prices = ["--price", "embed-model=2/0", "--price", "judge-model=1/1"];
    ok(&fx.eval(&data, metrics, "run", &prices));
    let summary = read_json(&fx.path("run/summary.json"));
    let usage = &summary["usage"];
    let emb = &usage["run"]["embeddings"];
    let requests = count(&fx, "/embeddings");
    assert_eq!(emb["upstream"], json!(requests), "{emb}");
    // Per sample: answer_relevancy embeds the question and its generated
    // questions; semantic_similarity and answer_correctness share the
    // embeddings of the response and of the reference. The two samples'
    // generated questions are the same texts (the test judge derives
    // them from the first statement), so one sample's set is served by
    // the other's request: a call, not a request.
    let calls = 4 * n as u64;
    assert_eq!(emb["calls"], json!(calls), "{emb}");
    assert_eq!(requests as u64, calls - 1);
    let served: u64 = ["upstream", "cache_hits", "coalesced"]
        .iter()
        .map(|k| emb[k].as_u64().unwrap())
        .sum();
    assert_eq!(served, calls);
    let chats = fx.chats().len();
    assert_eq!(usage["run"]["calls"], json!(chats), "judge calls apart");
    // The test server reports 3 prompt tokens per embeddings request.
    let tokens = 3 * requests;
    assert_eq!(emb["prompt_tokens"], json!(tokens));
    close(&emb["cost"], tokens as f64 * 2.0 / 1e6, "embedding cost");
    assert!(emb["latency_ms"]["p50"].as_f64().is_some(), "{emb}");
    assert_eq!(emb["calls_if_unshared"], json!(calls + 2 * n as u64));

    let share = |m: &str| &usage["per_metric"][m]["embeddings"];
    let nf = n as f64;
    for (metric, calls, alone) in [
        ("answer_relevancy", 2.0, 2.0),
        ("semantic_similarity", 1.0, 2.0),
        ("answer_correctness", 1.0, 2.0),
    ] {
        close(&share(metric)["calls"], calls * nf, metric);
        close(&share(metric)["alone"]["calls"], alone * nf, metric);
    }
    // semantic_similarity makes no judge call: its tokens and cost are its
    // share of the embeddings (half of two requests per sample).
    let sim = output(&summary, "semantic_similarity");
    close(
        &sim["prompt_tokens"],
        3.0 * nf,
        "semantic_similarity tokens",
    );
    close(
        &sim["cost"],
        3.0 * nf * 2.0 / 1e6,
        "semantic_similarity cost",
    );

    // A rerun is served from the cache: no request reaches the server.
    ok(&fx.eval(&data, metrics, "again", &prices));
    let again = read_json(&fx.path("again/summary.json"));
    let emb = &again["usage"]["run"]["embeddings"];
    assert_eq!(count(&fx, "/embeddings"), requests);
    assert_eq!(
        (&emb["calls"], &emb["cache_hits"], &emb["upstream"]),
        (&json!(calls), &json!(calls), &json!(0))
    );
}

#[test]
fn ragas_score_is_the_harmonic_mean_of_the_higher_is_better_judged_means() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows(2));
    // hallucination is lower-is-better and rouge lexical: neither counts.
    let metrics = "faithfulness,context_precision,context_recall,hallucination,rouge";
    ok(&fx.eval(&data, metrics, "run", &[]));
    let summary = read_json(&fx.path("run/summary.json"));
    let used = ["faithfulness", "context_precision", "context_recall"];
    let means: Vec<f64> = used
        .iter()
        .map(|m| output(&summary, m)["mean"].as_f64().unwrap())
        .collect();
    assert!(means.iter().all(|m| *m > 0.0), "{means:?}");
    let harmonic = used.len() as f64 / means.iter().map(|m| 1.0 / m).sum::<f64>();
    let ragas = &summary["ragas_score"];
    close(&ragas["value"], harmonic, "ragas_score");
    assert_eq!(ragas["metrics"], json!(used));
    assert!(ragas.get("reason").is_none(), "{ragas}");

    // One higher-is-better judged metric: no score, and why.
    ok(&fx.eval(&data, "faithfulness,hallucination,rouge", "one", &[]));
    let ragas = &read_json(&fx.path("one/summary.json"))["ragas_score"];
    assert_eq!(ragas["value"], Value::Null, "{ragas}");
    assert_eq!(ragas["metrics"], json!(["faithfulness"]));
    assert_eq!(
        ragas["reason"],
        "ragas_score needs at least two higher-is-better metrics, the run has 1"
    );
}
