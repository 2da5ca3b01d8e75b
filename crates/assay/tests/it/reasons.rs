//! `--reasons llm` and the repair of voted steps, through `assay eval`
//! against the content-reading loopback judge.

use crate::common::{assay, read_json, results_by_key, stderr};
use crate::judged::{ok, rag_row, unscored, Fixture};
use assay_test_server::judge::{self, reason_for};
use assay_test_server::{chat, error, Recorded, Reply};
use serde_json::{json, Value};

const METRICS: &str = "faithfulness,context_recall,hallucination";

/// The eiffel sample, and one without a reference (context_recall skips).
fn two_rows() -> Vec<Value> {
    let mut no_ref = rag_row();
    no_ref["id"] = json!("no-ref");
    no_ref["response"] = json!("The Eiffel Tower is in Paris");
    no_ref.as_object_mut().unwrap().remove("reference");
    vec![rag_row(), no_ref]
}

fn prompt_of(req: &Recorded) -> Option<&str> {
    judge::prompt_name(req)
}

/// The sample's own user message of a request (repair re-asks append
/// messages after it): the last user message opening with `slot:`.
fn sample_message<'r>(req: &'r Recorded, slot: &str) -> &'r str {
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.starts_with(&format!("{slot}:\n")))
        .unwrap_or("")
}

/// A repair re-ask: the conversation goes on after the sample's message.
fn is_repair(req: &Recorded) -> bool {
    req.last_message().starts_with("Your ")
}

/// The metric a reason request explains.
fn explained_metric(req: &Recorded) -> String {
    judge::sections(sample_message(req, "metric"))["metric"].clone()
}

#[test]
fn llm_reasons_take_one_call_per_scored_outcome_and_a_rerun_is_cached() {
    let fx = Fixture::content_reading();
    let data = fx.data(&two_rows());
    ok(&fx.eval(&data, METRICS, "composed", &[]));
    let steps = fx.server.count();
    assert!(fx
        .chats()
        .iter()
        .all(|r| prompt_of(r) != Some("outcome_reason")));
    let composed = results_by_key(&fx.path("composed"));

    ok(&fx.eval(&data, METRICS, "llm", &["--reasons", "llm"]));
    // The steps come from the cache; every new request is a reason.
    let extra: Vec<Recorded> = fx.server.requests().split_off(steps);
    assert!(extra.iter().all(|r| prompt_of(r) == Some("outcome_reason")));
    let llm = results_by_key(&fx.path("llm"));
    let scored: Vec<&Value> = llm.values().filter(|r| r["status"] == "scored").collect();
    assert_eq!(scored.len(), 5, "2 samples x 3 metrics, one skipped");
    assert_eq!(extra.len(), scored.len(), "one call per scored outcome");
    let mut explained: Vec<String> = extra.iter().map(explained_metric).collect();
    explained.sort();
    assert_eq!(
        explained,
        [
            "context_recall",
            "faithfulness",
            "faithfulness",
            "hallucination",
            "hallucination"
        ]
    );
    for (key, row) in &llm {
        let before = &composed[key];
        assert_eq!(row["status"], before["status"], "{key:?}");
        assert_eq!(row["value"], before["value"], "{key:?}");
        if row["status"] != "scored" {
            assert_eq!(
                row["reason"], before["reason"],
                "{key:?}: no call, no change"
            );
            continue;
        }
        // The request shows the score to 4 decimals.
        let value = (row["value"].as_f64().unwrap() * 1e4).round() / 1e4;
        let better = if key.1 == "hallucination" {
            "lower"
        } else {
            "higher"
        };
        // The judge quotes the metric and score it was given.
        let prose = reason_for(
            &key.1,
            &format!("{value} (from 0 to 1, {better} is better)"),
        );
        assert_eq!(row["reason"], json!(prose), "{key:?}");
        assert_eq!(
            row["details"]["composed_reason"], before["reason"],
            "{key:?}: the composed reason is kept"
        );
    }
    let skipped = &llm[&("no-ref".to_string(), "context_recall".to_string())];
    assert_eq!(skipped["status"], "skipped");

    let summary = read_json(&fx.path("llm/summary.json"));
    assert_eq!(summary["usage"]["run"]["upstream"], json!(extra.len()));
    let manifest = read_json(&fx.path("llm/manifest.json"));
    let signature = manifest["metrics"][0]["signature"].as_str().unwrap();
    assert!(signature.contains("|reasons:llm-v1-"), "{signature}");
    assert!(manifest["judge"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["id"] == "outcome_reason"));
    let plain = read_json(&fx.path("composed/manifest.json"));
    assert!(!plain.to_string().contains("outcome_reason"));
    assert!(!plain.to_string().contains("reasons:"));

    // Same command again: every call from the cache, the same reasons.
    let sent = fx.server.count();
    ok(&fx.eval(&data, METRICS, "again", &["--reasons", "llm"]));
    assert_eq!(fx.server.count(), sent, "the rerun made no request");
    assert_eq!(results_by_key(&fx.path("again")), llm);

    // The report shows the prose, and the composed reason among the details.
    let o = assay(&["report", fx.path("llm").to_str().unwrap()], None);
    ok(&o);
    let html = std::fs::read_to_string(fx.path("llm/report.html")).unwrap();
    assert!(html.contains("composed_reason"));
    assert!(html.contains(&reason_for(
        "hallucination",
        "0.25 (from 0 to 1, lower is better)"
    )));

    // A run of one mode is not resumed in the other.
    let o = fx.eval(&data, METRICS, "composed", &["--reasons", "llm"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("another manifest"), "{}", stderr(&o));
}

#[test]
fn a_failed_reason_call_keeps_the_score_and_its_composed_reason() {
    let fx = Fixture::new(|req, _| {
        if prompt_of(req) != Some("outcome_reason") {
            return judge::reply(req);
        }
        match explained_metric(req).as_str() {
            "faithfulness" => error(500, "the reason writer is down"),
            // Over the length cap, every time.
            "hallucination" => chat(&json!({"reason": "very ".repeat(200)}).to_string()),
            _ => judge::reply(req),
        }
    });
    let data = fx.data(&[rag_row()]);
    ok(&fx.eval(&data, METRICS, "run", &["--reasons", "llm"]));
    let r = results_by_key(&fx.path("run"));
    let get = |m: &str| &r[&("eiffel".to_string(), m.to_string())];

    let f = get("faithfulness");
    assert_eq!(
        (f["status"].as_str(), f["value"].as_f64()),
        (Some("scored"), Some(0.5))
    );
    assert!(
        f["reason"]
            .as_str()
            .unwrap()
            .starts_with("1 of 2 statements"),
        "the composed reason: {}",
        f["reason"]
    );
    assert_eq!(f["details"]["reason_error"]["kind"], "server");
    assert!(f["details"].get("composed_reason").is_none());

    let h = get("hallucination");
    assert_eq!(
        (h["status"].as_str(), h["value"].as_f64()),
        (Some("scored"), Some(0.25))
    );
    let e = &h["details"]["reason_error"];
    assert_eq!(e["kind"], "mismatch");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("characters (at most 400)"),
        "{e}"
    );
    // One repair re-ask showing the judge the problem, then the failure.
    let asked: Vec<Recorded> = fx
        .chats()
        .into_iter()
        .filter(|c| {
            prompt_of(c) == Some("outcome_reason") && explained_metric(c) == "hallucination"
        })
        .collect();
    assert_eq!(asked.len(), 2);
    assert!(
        asked[1].last_message().contains("out of range"),
        "{}",
        asked[1].last_message()
    );

    let c = get("context_recall");
    assert!(
        c["reason"]
            .as_str()
            .unwrap()
            .starts_with("context_recall scored"),
        "{c}"
    );
    assert!(c["details"].get("reason_error").is_none());
}

/// Sentence extraction as the content-reading judge answers it from the
/// sample's message, except: `bad` answers for the vote with seed 1.
fn voting_judge(bad: fn(&Recorded) -> Option<Reply>) -> Fixture {
    Fixture::new(move |req, _| {
        if prompt_of(req) != Some("sentence_extraction") {
            return judge::reply(req);
        }
        if req.body["seed"] == 1 {
            if let Some(reply) = bad(req) {
                return reply;
            }
        }
        let answer = judge::answer("sentence_extraction", sample_message(req, "question"));
        chat(&answer.to_string())
    })
}

/// Sentences beside "insufficient information": valid JSON for the
/// schema, a contradiction for the step.
fn contradiction() -> Reply {
    chat(
        &json!({"insufficient_information": true, "sentences": ["The Eiffel Tower is in Paris"]})
            .to_string(),
    )
}

fn extraction_calls(fx: &Fixture) -> Vec<Recorded> {
    fx.chats()
        .into_iter()
        .filter(|c| prompt_of(c) == Some("sentence_extraction"))
        .collect()
}

#[test]
fn an_invalid_vote_is_asked_again_alone_then_fails_with_its_answer() {
    let strict = ["--set", "context_relevancy.strictness=3"];
    // Once wrong, then right: the repaired vote counts like the others.
    let fx = voting_judge(|req| (!is_repair(req)).then(contradiction));
    let data = fx.data(&[rag_row()]);
    ok(&fx.eval(&data, "context_relevancy", "run", &strict));
    let r = results_by_key(&fx.path("run"));
    let row = &r[&("eiffel".to_string(), "context_relevancy".to_string())];
    assert_eq!(row["status"], "scored", "{row}");
    // 2 of the 4 context sentences, the 3 votes alike.
    assert_eq!(row["value"], 0.5);
    assert_eq!(row["details"]["agreement"], 1.0);
    let calls = extraction_calls(&fx);
    assert_eq!(calls.len(), 4, "3 votes and one repair of vote 2");
    let repair: Vec<&Recorded> = calls.iter().filter(|c| is_repair(c)).collect();
    assert_eq!(repair.len(), 1);
    assert_eq!(repair[0].body["seed"], 1, "the vote keeps its seed");
    assert!(
        repair[0]
            .last_message()
            .contains("expected none when insufficient_information is true"),
        "{}",
        repair[0].last_message()
    );

    // Always wrong: after the repair, a mismatch with the vote's answer.
    let fx = voting_judge(|_| Some(contradiction()));
    let data = fx.data(&[rag_row()]);
    unscored(
        &fx.eval(&data, "context_relevancy", "run", &strict),
        &["context_relevancy"],
    );
    let r = results_by_key(&fx.path("run"));
    let row = &r[&("eiffel".to_string(), "context_relevancy".to_string())];
    assert_eq!(row["status"], "failed", "{row}");
    assert_eq!(row["error"]["kind"], "mismatch");
    let message = row["error"]["message"].as_str().unwrap();
    assert!(message.contains("vote 2"), "{message}");
    assert!(
        message.contains("\"insufficient_information\":true"),
        "{message}"
    );
    assert_eq!(
        extraction_calls(&fx).len(),
        3,
        "vote 1, vote 2 and its repair: vote 3 is not asked once the step failed"
    );
}
