//! Batch mode end to end: `eval --batch export` rounds against the cache,
//! batch output files answered by the same content-reading judge as the
//! loopback server, `assay batch import`, and a final run whose results
//! equal a live run's.

use crate::common::{assay, read_json, results, results_by_key, stderr};
use crate::judged::{ok, rag_row, Fixture, KEY};
use assay_test_server::{chat_body, judge, Recorded};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Judged metrics of one and two dependency levels, and a lexical one.
const METRICS: &str =
    "faithfulness,context_precision,context_recall,answer_relevance,answer_correctness,bias,rouge";
/// Factual overlap only: embeddings are not in a batch file (they are sent
/// live), and these runs must send nothing at all.
const NO_EMBEDDINGS: [&str; 2] = ["--set", "answer_correctness.weights=1,0"];

fn rows() -> Vec<Value> {
    let mut opinion = rag_row();
    opinion["id"] = json!("opinion");
    opinion["response"] = json!("Paris is the capital of France. I think the tower is stupid");
    let mut no_reference = rag_row();
    no_reference["id"] = json!("no-reference");
    no_reference.as_object_mut().unwrap().remove("reference");
    vec![rag_row(), opinion, no_reference]
}

/// The batch output file for a requests file: each line answered as the
/// loopback judge answers the same body, in a shuffled order (a batch
/// service returns lines in any order).
fn answer_batch(requests: &Path, status: impl Fn(usize) -> u16) -> String {
    let text = std::fs::read_to_string(requests).unwrap();
    let mut lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(n, line)| {
            let line: Value = serde_json::from_str(line).unwrap();
            assert_eq!(line["url"], "/v1/chat/completions");
            let req = Recorded {
                path: "/v1/chat/completions".into(),
                headers: Vec::new(),
                body: line["body"].clone(),
                at: std::time::Instant::now(),
            };
            let content = judge::answer(judge::prompt_name(&req).unwrap(), req.last_message());
            json!({
                "id": format!("batch_req_{n}"),
                "custom_id": line["custom_id"],
                "response": {"status_code": status(n), "request_id": format!("r{n}"),
                             "body": chat_body(&content.to_string(), "stop")},
                "error": null,
            })
            .to_string()
        })
        .collect();
    lines.reverse();
    lines.join("\n") + "\n"
}

fn import(fx: &Fixture, output: &str, out: &Path) -> Output {
    let path = fx.path(output);
    assay(
        &[
            "batch",
            "import",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    )
}

/// (sample_id, metric) -> (status, value, details) of a run's results.
fn outcomes(out: &Path) -> BTreeMap<(String, String), (Value, Value, Value)> {
    results(out)
        .into_iter()
        .map(|r| {
            (
                (
                    r["sample_id"].as_str().unwrap().to_string(),
                    r["metric"].as_str().unwrap().to_string(),
                ),
                (
                    r["status"].clone(),
                    r["value"].clone(),
                    r["details"].clone(),
                ),
            )
        })
        .collect()
}

/// Runs `eval --batch export` (with `extra` flags) into the run directory
/// `export` round after round, answering each round's requests file as the
/// loopback judge would and importing it, until a round finds every answer
/// in the cache; checks that no round sends a request. The number of
/// rounds that exported requests, and the run directory.
fn export_rounds(fx: &Fixture, data: &Path, extra: &[&str], live_calls: usize) -> (usize, PathBuf) {
    // Every round is the same command on the same run directory: each one
    // resumes the run and goes as far as the cache allows.
    let mut rounds = 0;
    let last = loop {
        let o = fx.eval(
            data,
            METRICS,
            "export",
            &[extra, &["--batch", "export"]].concat(),
        );
        ok(&o);
        assert_eq!(fx.server.count(), live_calls, "export mode sent a request");
        let out = fx.path("export");
        let manifest = read_json(&out.join("manifest.json"));
        assert_eq!(manifest["batch"]["mode"], "export");
        let requests = out.join(format!("batch/round-{}.requests.jsonl", rounds + 1));
        if !requests.exists() {
            assert!(
                stderr(&o).contains("answered from the cache"),
                "{}",
                stderr(&o)
            );
            break out;
        }
        rounds += 1;
        let text = std::fs::read_to_string(&requests).unwrap();
        assert!(!text.contains(KEY), "the API key is in the batch file");
        let ids: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["custom_id"].clone())
            .collect();
        let distinct: BTreeSet<String> = ids.iter().map(Value::to_string).collect();
        assert_eq!(distinct.len(), ids.len(), "duplicate requests exported");
        assert!(stderr(&o).contains("assay batch import"), "{}", stderr(&o));
        // Samples waiting for the batch have their lexical outcomes only.
        let written = outcomes(&out);
        assert!(written
            .keys()
            .all(|(_, metric)| metric.starts_with("rouge")));
        assert_eq!(written.len(), 3 * 4);

        let output = format!("output-{rounds}.jsonl");
        std::fs::write(fx.path(&output), answer_batch(&requests, |_| 200)).unwrap();
        let o = import(fx, &output, &out);
        ok(&o);
        let said = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            said.starts_with(&format!("stored {} answers in ", ids.len())),
            "{said}"
        );
        assert!(said.contains("; 0 failed; 0 matched no"), "{said}");
        assert!(rounds < 5, "the rounds do not end");
    };
    (rounds, last)
}

fn clear_cache(fx: &Fixture) {
    let cache = fx.path("cache.sqlite");
    ok(&assay(
        &["cache", "clear", "--cache", cache.to_str().unwrap()],
        None,
    ));
}

/// (sample_id, metric) -> reason of a run's results.
fn reasons(out: &Path) -> BTreeMap<(String, String), Value> {
    results_by_key(out)
        .into_iter()
        .map(|(key, r)| (key, r["reason"].clone()))
        .collect()
}

fn requests_file(out: &Path) -> PathBuf {
    out.join("batch/round-1.requests.jsonl")
}

#[test]
fn batch_rounds_end_with_the_results_of_a_live_run() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    ok(&fx.eval(&data, METRICS, "live", &NO_EMBEDDINGS));
    let live_calls = fx.server.count();
    assert!(live_calls > 0);
    clear_cache(&fx);

    let (rounds, last) = export_rounds(&fx, &data, &NO_EMBEDDINGS, live_calls);
    // Statements first, then the verdicts that read them.
    assert_eq!(rounds, 2);
    assert_eq!(fx.server.count(), live_calls);

    // A normal run now finds every answer in the cache and sends nothing.
    ok(&fx.eval(&data, METRICS, "final", &NO_EMBEDDINGS));
    assert_eq!(fx.server.count(), live_calls);
    let live = outcomes(&fx.path("live"));
    assert_eq!(live.len(), 3 * (4 + 6), "{live:?}");
    assert!(live.values().any(|(status, _, _)| status == "skipped"));
    // One of the two statements of the response is in the contexts.
    let faithfulness = &live[&("eiffel".to_string(), "faithfulness".to_string())];
    assert_eq!(
        (&faithfulness.0, &faithfulness.1),
        (&json!("scored"), &json!(0.5))
    );
    for run in [fx.path("final"), last] {
        assert_eq!(outcomes(&run), live, "{}", run.display());
    }
}

#[test]
fn a_failed_batch_answer_stays_out_of_the_cache_and_is_exported_again() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    ok(&fx.eval(&data, "faithfulness", "r1", &["--batch", "export"]));
    let first = std::fs::read_to_string(requests_file(&fx.path("r1"))).unwrap();
    // Statements of the response: one request.
    assert_eq!(first.lines().count(), 1);
    std::fs::write(
        fx.path("out.jsonl"),
        answer_batch(&requests_file(&fx.path("r1")), |_| 500),
    )
    .unwrap();
    let o = import(&fx, "out.jsonl", &fx.path("r1"));
    ok(&o);
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(said.starts_with("stored 0 answers"), "{said}");
    assert!(said.contains("; 1 failed;"), "{said}");
    assert!(
        said.contains("rejected: batch answer has status 500"),
        "{said}"
    );

    ok(&fx.eval(&data, "faithfulness", "r2", &["--batch", "export"]));
    let again = std::fs::read_to_string(requests_file(&fx.path("r2"))).unwrap();
    assert_eq!(again, first);
    assert_eq!(fx.server.count(), 0);
}

#[test]
fn batch_export_needs_a_server_judge_and_the_cache() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let local = assay(
        &[
            "eval",
            data.to_str().unwrap(),
            "-m",
            "faithfulness",
            "--judge",
            "local",
            "--batch",
            "export",
            "--out",
            fx.path("a").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(local.status.code(), Some(2), "{}", stderr(&local));
    assert!(
        stderr(&local).contains("not the in-process local model"),
        "{}",
        stderr(&local)
    );
    let lexical = assay(
        &[
            "eval",
            data.to_str().unwrap(),
            "-m",
            "rouge",
            "--batch",
            "export",
            "--out",
            fx.path("b").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(lexical.status.code(), Some(2));
    assert!(
        stderr(&lexical).contains("no judged metric"),
        "{}",
        stderr(&lexical)
    );
    let bad_import = import(&fx, "missing.jsonl", &fx.path("nothing"));
    assert_eq!(bad_import.status.code(), Some(2));
    assert!(stderr(&bad_import).contains("manifest.json"));
}

#[test]
fn llm_reasons_take_one_more_batch_round_and_end_as_a_live_run() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    let flags = [&NO_EMBEDDINGS[..], &["--reasons", "llm"]].concat();
    ok(&fx.eval(&data, METRICS, "live", &flags));
    let live_calls = fx.server.count();
    clear_cache(&fx);

    let (rounds, last) = export_rounds(&fx, &data, &flags, live_calls);
    // Statements, then verdicts, then the reasons of the scored outcomes.
    assert_eq!(rounds, 3);
    let live = outcomes(&fx.path("live"));
    let prose = live
        .values()
        .filter(|(status, _, details)| status == "scored" && details["composed_reason"].is_string())
        .count();
    assert!(prose > 0, "{live:?}");
    assert_eq!(outcomes(&last), live);
    assert_eq!(reasons(&last), reasons(&fx.path("live")));
    assert_eq!(fx.server.count(), live_calls);
}
