//! `assay generate`: a test set from the bundled documents, against the
//! loopback judge. Every row's contexts are spans of its document; the
//! mix and the spread over documents are exact; a second run is answered
//! by the cache; `assay eval` scores the set once an application fills
//! the responses; a judge whose every answer is unsupported makes no row
//! and exits 5, each candidate kept with its reason.

use crate::common::{assay, read_json, read_jsonl, repo, stderr};
use crate::judged::{ok, Fixture, KEY};
use assay_classifier::{Classifier, Options};
use assay_generate::check::Candidate;
use assay_test_server::{chat, judge, Reply};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;

/// `assay generate examples/docs --out OUT` against the fixture's judge,
/// with the fixture's `ASSAY_HOME` seeing the fetched local models (the
/// embedder of the duplicate check).
fn command(fx: &Fixture, out: &Path, extra: &[&str]) -> std::process::Command {
    command_on(fx, &repo().join("examples/docs"), out, extra)
}

/// [`command`] on other documents.
fn command_on(fx: &Fixture, docs: &Path, out: &Path, extra: &[&str]) -> std::process::Command {
    let models = fx.path("models");
    if !models.exists() {
        std::os::unix::fs::symlink(assay_local::models_dir(), &models).unwrap();
    }
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_assay"));
    command
        .arg("generate")
        .arg(docs)
        .args(["--out", out.to_str().unwrap()])
        .args([
            "--judge",
            "openai:judge-model",
            "--base-url",
            &fx.server.base_url(),
        ])
        .args(["--cache", fx.path("cache.sqlite").to_str().unwrap()])
        .args(["--max-retries", "0"])
        .args(extra)
        .env("OPENAI_API_KEY", KEY)
        .env("ASSAY_HOME", fx.path(""));
    command
}

fn generate(fx: &Fixture, out: &Path, extra: &[&str]) -> Output {
    command(fx, out, extra).output().unwrap()
}

#[test]
fn a_test_set_from_the_bundled_documents_that_eval_scores() {
    let fx = Fixture::content_reading();
    let out = fx.path("set.jsonl");
    let o = generate(&fx, &out, &["--size", "9", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Progress at each tenth of the plan, on stderr.
    let notes = stderr(&o);
    assert!(
        notes.contains("generate: 1 of 9 questions asked"),
        "{notes}"
    );
    assert!(
        notes.contains("generate: 8 of 9 questions asked"),
        "{notes}"
    );
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), 9);
    // Each context is its document's text between its character offsets.
    for row in &rows {
        let contexts = row["reference_contexts"].as_array().unwrap();
        let spans = row["reference_context_spans"].as_array().unwrap();
        assert_eq!(contexts.len(), spans.len());
        for (c, s) in contexts.iter().zip(spans) {
            let text = std::fs::read_to_string(s["document"].as_str().unwrap()).unwrap();
            let (a, b) = (
                s["start"].as_u64().unwrap() as usize,
                s["end"].as_u64().unwrap() as usize,
            );
            let span: String = text.chars().skip(a).take(b - a).collect();
            assert_eq!(c.as_str().unwrap(), span);
        }
        let answer = row["reference"].as_str().unwrap();
        let first = answer.split_whitespace().next().unwrap();
        assert!(
            contexts.iter().any(|c| c.as_str().unwrap().contains(first)),
            "{row}"
        );
    }
    // The default mix of 9: 4.5, 2.25, 2.25 -> 5, 2, 2; three documents, 3 each.
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["made"], 9);
    assert_eq!(summary["generator"], rows[0]["meta"]["generator"]);
    // Questions were compared by meaning too, with the local embedder.
    assert_eq!(summary["embedder"], "local:all-minilm-l6-v2");
    assert!(summary["generator"]
        .as_str()
        .unwrap()
        .ends_with("embedder=local:all-minilm-l6-v2 same_meaning_from=0.95"));
    assert_eq!(
        summary["by_type"],
        json!({"abstract": 2, "multi_hop": 2, "single_hop": 5})
    );
    let per_document: Vec<u64> = summary["by_document"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(per_document, [3, 3, 3]);
    let calls = summary["judge"]["calls"].as_u64().unwrap();
    assert!(calls >= 9, "{summary}");
    assert_eq!(
        fx.asked("generate_single_hop")
            + fx.asked("generate_multi_hop")
            + fx.asked("generate_abstract"),
        calls as usize
    );

    // Again: the same requests, each answered by the cache, the same set.
    let again = fx.path("again.jsonl");
    let o = generate(&fx, &again, &["--size", "9", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let second = read_json(&fx.path("again.summary.json"));
    assert_eq!(second["judge"]["cache_hits"], second["judge"]["calls"]);
    let strip = |rows: Vec<serde_json::Value>| -> Vec<serde_json::Value> {
        rows.into_iter()
            .map(|mut r| {
                r["meta"]["generator"] = json!(null);
                r
            })
            .collect()
    };
    assert_eq!(strip(read_jsonl(&again)), strip(rows.clone()));
    // A run under a budget asks one by one, and takes the answers in the
    // same order as the first requests sent at once.
    let one_by_one = fx.path("one.jsonl");
    let o = generate(
        &fx,
        &one_by_one,
        &["--size", "9", "--seed", "3", "--max-calls", "1000"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(strip(read_jsonl(&one_by_one)), strip(rows.clone()));

    // A toy application answers with the first context; eval scores it.
    let filled = fx.path("filled.jsonl");
    let lines: Vec<String> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r["response"] = r["reference_contexts"][0].clone();
            r["retrieved_contexts"] = r["reference_contexts"].clone();
            r.to_string()
        })
        .collect();
    std::fs::write(&filled, lines.join("\n")).unwrap();
    let run = fx.path("run");
    let o = assay(
        &[
            "eval",
            filled.to_str().unwrap(),
            "-m",
            "rouge,bleu",
            "--out",
            run.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["rows"], 9, "{summary}");
}

/// `conversation` in the mix: scenarios with DeepEval's golden fields,
/// each from its own prompt; once an application holds the conversation,
/// `agent_goal_accuracy` reads the scenario's outcome as the desired one.
#[test]
fn conversational_scenarios_are_made_and_their_conversations_scored() {
    let fx = Fixture::content_reading();
    let out = fx.path("set.jsonl");
    let o = generate(
        &fx,
        &out,
        &["--size", "6", "--mix", "single_hop=0.5,conversation=0.5"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(
        summary["by_type"],
        json!({"conversation": 3, "single_hop": 3})
    );
    // One call a scenario kept, and one for each rejected.
    let rejected = read_jsonl(&fx.path("set.rejected.jsonl"));
    let retried = rejected
        .iter()
        .filter(|r| r["question_type"] == "conversation")
        .count();
    assert_eq!(fx.asked("generate_conversation"), 3 + retried);
    let rows = read_jsonl(&out);
    let conversations: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["question_type"] == "conversation")
        .collect();
    assert_eq!(conversations.len(), 3);
    for r in &conversations {
        let persona = r["persona"].as_str().unwrap();
        assert_eq!(r["user_description"], persona);
        assert_eq!(
            r["scenario"],
            format!("{persona} wants to know what the source says.")
        );
        assert_eq!(r["expected_outcome"], r["reference"]);
    }
    assert!(rows
        .iter()
        .filter(|r| r["question_type"] == "single_hop")
        .all(|r| r.get("scenario").is_none()));

    // A toy assistant answers the first message with the first context.
    let held: Vec<serde_json::Value> = conversations
        .iter()
        .map(|r| {
            json!({
                "id": r["id"],
                "reference": r["expected_outcome"],
                "messages": [
                    {"role": "user", "content": r["user_input"]},
                    {"role": "assistant", "content": r["reference_contexts"][0]},
                ],
            })
        })
        .collect();
    let data = fx.data(&held);
    ok(&fx.eval(&data, "agent_goal_accuracy", "run", &[]));
    let scored = crate::common::results(&fx.path("run"));
    assert_eq!(scored.len(), 3);
    for r in &scored {
        let row = held.iter().find(|h| h["id"] == r["sample_id"]).unwrap();
        assert_eq!(r["value"], 1.0, "{r}");
        assert_eq!(r["details"]["against_reference"], true, "{r}");
        assert_eq!(r["details"]["desired_outcome"], row["reference"], "{r}");
    }
}

/// `--closed-book`: each candidate that passes the other checks is asked
/// of the judge without its contexts; one the judge answers as the
/// reference does is rejected (exit 5 when none is left), one it does not
/// know is kept; the dry run counts the call.
#[test]
fn a_question_the_judge_answers_without_its_context_is_rejected() {
    let judge_knows = |known: bool| {
        move |req: &assay_test_server::Recorded, _: usize| match judge::prompt_name(req) {
            Some("generate_single_hop") => chat(
                &judge::citing(
                    req,
                    json!({"question": "What is the capital of France?",
                            "answer": "Paris is the capital of France."}),
                )
                .to_string(),
            ),
            Some("generate_closed_book") => chat(
                &json!({"known": known,
                            "answer": if known { "The capital of France is Paris." } else { "" }})
                .to_string(),
            ),
            _ => Reply::json(500, json!({"error": "unexpected"})),
        }
    };
    let docs = tempfile::tempdir().unwrap();
    std::fs::write(
        docs.path().join("france.md"),
        "# France\n\nParis is the capital of France and its largest city, on the Seine, \
         with about two million people in the city itself and twelve million around it.\n",
    )
    .unwrap();
    let args = ["--size", "1", "--mix", "single_hop=1", "--closed-book"];

    let fx = Fixture::new(judge_knows(true));
    let out = fx.path("set.jsonl");
    let o = command_on(&fx, docs.path(), &out, &args).output().unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let rejected = read_jsonl(&fx.path("set.rejected.jsonl"));
    assert_eq!(rejected.len(), 3, "{rejected:?}");
    assert!(
        rejected.iter().all(|r| r["rejection"]
            == json!({"reason": "answerable_without_context",
                      "answer": "The capital of France is Paris."})),
        "{rejected:?}"
    );
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(
        summary["rejected"],
        json!({"answerable_without_context": 3})
    );
    assert!(summary["generator"]
        .as_str()
        .unwrap()
        .contains("closed_book@v1"));
    // The closed-book request holds the question and not the context; the
    // same question again is answered from the cache.
    let closed: Vec<String> = fx
        .chats()
        .iter()
        .filter(|r| judge::prompt_name(r) == Some("generate_closed_book"))
        .map(|r| {
            r.body["messages"][1]["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(closed.len(), 1);
    assert_eq!(summary["judge"]["cache_hits"], 2);
    assert!(closed
        .iter()
        .all(|u| u == "question:\nWhat is the capital of France?"));

    let fx = Fixture::new(judge_knows(false));
    let out = fx.path("set.jsonl");
    let o = command_on(&fx, docs.path(), &out, &args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_jsonl(&out).len(), 1);

    let plan = fx.path("plan.jsonl");
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let o = command_on(&fx, docs.path(), &plan, &dry).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout);
    // Two calls a candidate, up to three attempts on each of five chunks.
    assert!(printed.contains("judge calls: 2 to 30"), "{printed}");
}

/// `--evolution`: each question draws one of the evolutions named, its
/// instruction is in the request the judge reads, the row names it, and
/// the plan is otherwise the one without them.
#[test]
fn evolutions_make_each_question_harder_one_way() {
    let fx = Fixture::content_reading();
    let (plain, evolved) = (fx.path("plain.jsonl"), fx.path("evolved.jsonl"));
    let o = generate(&fx, &plain, &["--size", "6"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = fx.chats().len();
    let o = generate(
        &fx,
        &evolved,
        &[
            "--size",
            "6",
            "--evolution",
            "reasoning",
            "--evolution",
            "comparative",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = read_jsonl(&evolved);
    assert_eq!(rows.len(), 6);
    for (row, plain) in rows.iter().zip(read_jsonl(&plain)) {
        assert!(
            row["evolution"] == "reasoning" || row["evolution"] == "comparative",
            "{row}"
        );
        assert_eq!(
            row["reference_context_spans"],
            plain["reference_context_spans"]
        );
        assert_eq!(plain["evolution"], serde_json::Value::Null);
    }
    let systems: Vec<String> = fx.chats()[before..]
        .iter()
        .map(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        systems.iter().all(|s| s.contains("Then make the question")),
        "{systems:?}"
    );
    let summary = read_json(&fx.path("evolved.summary.json"));
    assert!(summary["generator"]
        .as_str()
        .unwrap()
        .contains("evolutions@v1=reasoning,comparative"));
    let o = generate(&fx, &evolved, &["--evolution", "harder"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not an evolution"), "{}", stderr(&o));
}

/// A remote judge is sent every question's first request at once (its
/// answers delayed, they overlap), and the rows are those of a run that
/// asks one by one.
#[test]
fn first_requests_go_to_a_remote_judge_at_once() {
    let fx = Fixture::new(|req, _| judge::reply(req).after(std::time::Duration::from_millis(50)));
    let o = generate(&fx, &fx.path("a.jsonl"), &["--size", "6"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        fx.server.peak_in_flight() > 1,
        "{}",
        fx.server.peak_in_flight()
    );
}

#[test]
fn a_judge_whose_answers_are_never_supported_makes_no_row_and_exits_5() {
    let fx = Fixture::new(|req, _| {
        if judge::prompt_name(req).is_some_and(|p| p.starts_with("generate_")) {
            let invented = json!({"question": "Who won the 1954 World Cup?", "answer": "West Germany won the 1954 World Cup in Bern."});
            return chat(&judge::citing(req, invented).to_string());
        }
        Reply::json(500, json!({"error": "unexpected"}))
    });
    let out = fx.path("set.jsonl");
    let o = generate(&fx, &out, &["--size", "3"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(read_jsonl(&out).is_empty());
    let rejected = read_jsonl(&fx.path("set.rejected.jsonl"));
    // Three questions, three attempts on each of five chunks of their
    // own document, then of another.
    assert_eq!(rejected.len(), 90);
    let asked_in = |q: usize| {
        let mut documents: Vec<&str> = rejected[q * 30..(q + 1) * 30]
            .iter()
            .map(|r| r["document"].as_str().unwrap())
            .collect();
        documents.dedup();
        documents.len()
    };
    assert!((0..3).all(|q| asked_in(q) == 2), "{rejected:?}");
    assert!(
        rejected
            .iter()
            .all(|r| r["rejection"]["reason"] == "unsupported"),
        "{rejected:?}"
    );
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["made"], 0);
    assert_eq!(summary["not_made"].as_array().unwrap().len(), 3);
    let printed = String::from_utf8_lossy(&o.stdout);
    assert!(
        printed.contains("not made: ")
            && printed.contains("no candidate kept in 30 attempts over 10 chunks of 2 documents"),
        "{printed}"
    );
}

/// A judge that cannot make a question of one document (here every
/// answer it gives about the French one is unsupported): that
/// document's questions move to the others, each of which takes at most
/// one beyond its quota, and the set is whole.
#[test]
fn questions_a_document_cannot_give_move_to_the_others_within_one_of_their_quota() {
    let fx = Fixture::new(|req, _| {
        let about_french = judge::prompt_name(req).is_some_and(|p| p.starts_with("generate_"))
            && req.body["messages"][0]["content"]
                .as_str()
                .is_some_and(|system| system.contains("answer in French."));
        if about_french {
            let invented = json!({"question": "Who won the 1954 World Cup?", "answer": "West Germany won the 1954 World Cup in Bern."});
            return chat(&judge::citing(req, invented).to_string());
        }
        judge::reply(req)
    });
    let out = fx.path("set.jsonl");
    let o = generate(&fx, &out, &["--size", "6", "--mix", "single_hop=1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["made"], 6, "{summary}");
    let counts: Vec<u64> = summary["by_document"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .collect();
    // Quotas of two each; the French document's two went one to each
    // of the others.
    assert_eq!(counts, [3, 3], "{summary}");
    assert!(read_jsonl(&out)
        .iter()
        .all(|r| !r["reference_context_spans"][0]["document"]
            .as_str()
            .unwrap()
            .contains("fr_")));
}

/// An alignment file, which the generator's checks do not use, is a
/// usage error before any call or file, on a dry run too.
#[test]
fn an_alignment_the_checks_would_not_use_is_refused() {
    let fx = Fixture::content_reading();
    for dry in [false, true] {
        let out = fx.path("set.jsonl");
        let value = fx.path("align.json").to_string_lossy().into_owned();
        let mut args = vec!["--size", "2", "--alignment", value.as_str()];
        if dry {
            args.push("--dry-run");
        }
        let o = generate(&fx, &out, &args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("--alignment: assay generate checks its answers"),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
}

/// `--grounding DIR`: the model, not the lexical verdict, reads whether
/// an answer is supported, against its contexts alone. Every claim of a
/// kept row is one the model supports; a candidate rejected as
/// unsupported has a claim it does not, with the model's best window as
/// the evidence; the model is in the generator's signature.
#[test]
fn a_grounding_model_reads_the_answers_against_their_contexts() {
    let fx = Fixture::content_reading();
    let out = fx.path("set.jsonl");
    // A tiny random ModernBERT whose P(supported) falls on both sides of
    // 0.5 for the loopback judge's answers.
    let dir = repo().join("crates/assay-classifier/tests/fixtures/modernbert");
    let o = generate(
        &fx,
        &out,
        &[
            "--size",
            "9",
            "--seed",
            "3",
            "--grounding",
            dir.to_str().unwrap(),
        ],
    );
    let model = Classifier::load(&dir, &Options::default()).unwrap();
    let supported = |question: &str, answer: &str, contexts: &[&str]| -> Vec<bool> {
        let claims = Candidate {
            question: question.into(),
            answer: answer.into(),
        }
        .claims();
        let texts: Vec<&str> = claims.iter().map(String::as_str).collect();
        let verified = model.verify(&texts, contexts).unwrap();
        verified.iter().map(|v| v.probability >= 0.5).collect()
    };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = read_jsonl(&out);
    for row in &rows {
        let contexts: Vec<&str> = row["reference_contexts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let question = row["user_input"].as_str().unwrap();
        let answer = row["reference"].as_str().unwrap();
        assert!(
            supported(question, answer, &contexts).iter().all(|s| *s),
            "{row}"
        );
    }
    let rejected = read_jsonl(&fx.path("set.rejected.jsonl"));
    let unsupported: Vec<_> = rejected
        .iter()
        .filter(|r| r["rejection"]["reason"] == "unsupported")
        .collect();
    assert!(!unsupported.is_empty(), "{rejected:?}");
    for r in &unsupported {
        let evidence = r["rejection"]["evidence"].as_str().unwrap();
        assert!(
            evidence.starts_with("P(supported) 0.") && evidence.contains("best window: \""),
            "{evidence}"
        );
    }
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["made"], rows.len(), "{}", stderr(&o));
    assert!(
        summary["generator"]
            .as_str()
            .unwrap()
            .contains(&format!("grounding={}", model.identity())),
        "{summary}"
    );
}

/// `--max-calls 2`: two answers, then the rest named as not made, and
/// what was made written; `--max-cost` without the judge's price is a
/// usage error before any call.
#[test]
fn a_budget_stops_the_generation_and_keeps_what_was_made() {
    let fx = Fixture::content_reading();
    let out = fx.path("set.jsonl");
    let o = generate(&fx, &out, &["--size", "6", "--max-calls", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["judge"]["calls"], 2);
    assert_eq!(summary["stopped"], "max_calls");
    assert_eq!(
        read_jsonl(&out).len(),
        summary["made"].as_u64().unwrap() as usize
    );
    let not_made: Vec<&str> = summary["not_made"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(
        summary["made"].as_u64().unwrap() as usize + not_made.len(),
        6
    );
    let budget = not_made
        .iter()
        .filter(|l| l.contains("budget: stopped at max_calls"))
        .count();
    assert!(budget >= 4, "{summary}");
    let o = generate(
        &fx,
        &fx.path("cost.jsonl"),
        &["--size", "2", "--max-cost", "0.01"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--price MODEL=IN/OUT"),
        "{}",
        stderr(&o)
    );
    let priced = generate(
        &fx,
        &fx.path("priced.jsonl"),
        &[
            "--size",
            "4",
            "--max-cost",
            "0.0000001",
            "--price",
            "judge-model=1/1",
        ],
    );
    assert_eq!(priced.status.code(), Some(0), "{}", stderr(&priced));
    let summary = read_json(&fx.path("priced.summary.json"));
    assert_eq!(summary["stopped"], "max_cost");
    assert!(
        summary["judge"]["cost"].as_f64().unwrap() >= 0.0000001,
        "{summary}"
    );
}

/// A generation killed while the judge holds its fourth request is
/// resumed by the same command: the three answers before it come from
/// the cache, only the rest are asked, and the set is whole.
/// `assay generate --size 6 --out set.jsonl` running while the judge
/// holds its fourth request. Under a budget the questions are asked one
/// by one, so the three before the held one are answered (and cached).
fn held_at_the_fourth_request() -> (Fixture, std::process::Child) {
    let fx = Fixture::new(|req, n| {
        let reply = judge::reply(req);
        if n == 3 {
            reply.after(std::time::Duration::from_secs(600))
        } else {
            reply
        }
    });
    let mut child = command(
        &fx,
        &fx.path("set.jsonl"),
        &["--size", "6", "--max-calls", "1000"],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    // The server logs a request before it answers: the fourth is held.
    while fx.chats().len() < 4 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its fourth request"
        );
        std::thread::yield_now();
    }
    (fx, child)
}

#[test]
fn a_killed_generation_resumes_without_asking_again() {
    let (fx, mut child) = held_at_the_fourth_request();
    let out = fx.path("set.jsonl");
    child.kill().unwrap();
    child.wait().unwrap();
    let before = fx.chats().len();
    let o = generate(&fx, &out, &["--size", "6"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["made"], 6);
    // What the first run was answered, the second takes from the cache;
    // the judge is asked only for the rest.
    let (calls, hits) = (
        summary["judge"]["calls"].as_u64().unwrap() as usize,
        summary["judge"]["cache_hits"].as_u64().unwrap() as usize,
    );
    assert_eq!(hits, 3, "{summary}");
    assert_eq!(fx.chats().len() - before, calls - hits, "{summary}");
}

/// Ctrl-C (SIGINT) while the judge holds a request: the generation stops
/// at once with exit code 130, and writes the questions made before it
/// with the rest named as interrupted.
#[test]
fn ctrl_c_stops_a_generation_and_keeps_what_was_made() {
    let (fx, mut child) = held_at_the_fourth_request();
    let out = fx.path("set.jsonl");
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["stopped"], "interrupted");
    // Three answers came back before the held one; each made a question
    // or was rejected, and the held request's question is not made.
    assert_eq!(summary["judge"]["calls"], 3);
    let made = summary["made"].as_u64().unwrap() as usize;
    assert!((1..=3).contains(&made), "{summary}");
    assert_eq!(read_jsonl(&out).len(), made);
    let not_made = summary["not_made"].as_array().unwrap();
    assert_eq!(not_made.len(), 6 - made);
    assert!(not_made.iter().all(|l| l
        .as_str()
        .unwrap()
        .ends_with("interrupted before this question")));
}

/// `--critic MIN`: each question that passes the checks is scored by the
/// judge; below MIN it is rejected with the critic's feedback, which the
/// next attempt's request carries. The loopback critic scores its own
/// questions ("What does the source say ...?") 0.3: at 0.5 none is kept
/// (exit 5), at 0.2 all are, at two calls each.
#[test]
fn a_critic_rejects_questions_below_its_minimum_and_says_why() {
    let fx = Fixture::content_reading();
    let strict = fx.path("strict.jsonl");
    let o = generate(&fx, &strict, &["--size", "2", "--critic", "0.5"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let summary = read_json(&fx.path("strict.summary.json"));
    assert_eq!(summary["made"], 0);
    // Two questions, three attempts on each of five chunks of two
    // documents; eleven of the loopback's answers (split at ". " only) join
    // several sentences of a chunk (a list's items, a page's front
    // matter), which no one sentence of it holds.
    assert_eq!(
        summary["rejected"],
        json!({"low_quality": 49, "unsupported": 11})
    );
    let rejected = read_jsonl(&fx.path("strict.rejected.jsonl"));
    assert_eq!(
        rejected[0]["rejection"],
        json!({"reason": "low_quality", "score": 0.3, "feedback": "Name the subject instead of the source."})
    );
    assert!(summary["generator"]
        .as_str()
        .unwrap()
        .contains("critic@v1>=0.5"));
    // Each retry tells the judge the critic's feedback, where the critic
    // rejected the attempt before it.
    let retries: Vec<String> = fx
        .chats()
        .iter()
        .filter_map(|r| r.body["messages"][1]["content"].as_str().map(String::from))
        .filter(|user| user.contains("attempt:\n2"))
        .collect();
    // The second attempt on each of ten chunks, for each question.
    assert_eq!(retries.len(), 20);
    let first_unsupported = rejected
        .iter()
        .filter(|r| r["attempt"].as_u64().unwrap() % 3 == 1)
        .filter(|r| r["rejection"]["reason"] == "unsupported")
        .count();
    let told = |why: &str| retries.iter().filter(|user| user.contains(why)).count();
    assert_eq!(
        told("why it was rejected:\na reviewer scored it 0.30 of 1: Name the subject instead of the source."),
        20 - first_unsupported
    );
    assert_eq!(
        told("why it was rejected:\nthe context does not state"),
        first_unsupported
    );

    let lenient = fx.path("lenient.jsonl");
    let o = generate(&fx, &lenient, &["--size", "2", "--critic", "0.2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = read_json(&fx.path("lenient.summary.json"));
    assert_eq!(summary["made"], 2);
    // A question and its critique each, both from the first run's cache.
    assert_eq!(summary["judge"]["calls"], 4);
    assert_eq!(summary["judge"]["cache_hits"], 4);
    // The server saw one critique per distinct question that reached the
    // critic: a question made again on another chunk would be critiqued
    // from the cache.
    let mut questions: Vec<&str> = rejected
        .iter()
        .filter(|r| r["rejection"]["reason"] == "low_quality")
        .map(|r| r["candidate"]["question"].as_str().unwrap())
        .collect();
    questions.sort_unstable();
    questions.dedup();
    assert_eq!(fx.asked("generate_critic"), questions.len());

    let o = generate(&fx, &lenient, &["--size", "2", "--critic", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--critic 2: the critic scores from 0 to 1"));
}

/// What is no source for a question is set aside before any call and
/// counted: a page's navigation and footer (left out when reading it), a
/// Markdown file's raw HTML table, and its reference list. The questions
/// made come from the rest.
#[test]
fn navigation_markup_and_reference_lists_are_no_sources() {
    let docs = tempfile::tempdir().unwrap();
    let prose = "Radium was discovered by Marie and Pierre Curie in December 1898, \
                 in a residue of the uranium ore pitchblende, four years after polonium.";
    std::fs::write(
        docs.path().join("radium.html"),
        format!(
            "<html><body><nav><ul><li>Main page</li><li>Random article about anything</li></ul></nav>\
             <h1>Radium</h1><p>{prose}</p>\
             <div role=\"navigation\" class=\"navbox\"><table><tr><td>Polonium Astatine Radon \
             Francium Actinium Thorium Protactinium Uranium Neptunium Plutonium</td></tr></table></div>\
             <div id=\"footer\" role=\"contentinfo\">Text is available under the Creative Commons \
             Attribution-ShareAlike License; additional terms may apply.</div></body></html>"
        ),
    )
    .unwrap();
    let row = "<tr><td data-sort-value=\"1.2\">1.2</td><td data-sort-value=\"13.4.1995\">13. Apr. 1995</td></tr>";
    std::fs::write(
        docs.path().join("polonium.md"),
        format!(
            "# Polonium\n\nPolonium was named after Poland, the homeland of Marie Curie, who \
             found it with Pierre Curie in July 1898 in the same pitchblende.\n\n\
             ## Isotopes\n\n<table class=\"wikitable\">{}</table>\n\n\
             ## References\n\n1. Curie P, Curie M: Sur une substance nouvelle radio-active, \
             contenue dans la pechblende. Comptes Rendus 1898, 127:175-8.\n",
            row.repeat(3)
        ),
    )
    .unwrap();
    let fx = Fixture::content_reading();
    let plan = fx.path("plan.jsonl");
    let dry = [
        "--size",
        "2",
        "--mix",
        "single_hop=1",
        "--dry-run",
        "--format",
        "json",
    ];
    let o = command_on(&fx, docs.path(), &plan, &dry).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        summary["chunks"],
        json!({"asked_about": 2, "near_duplicates": 0, "too_small": 0,
               "markup": 1, "apparatus": 1}),
        "{summary}"
    );

    let out = fx.path("set.jsonl");
    let o = command_on(&fx, docs.path(), &out, &dry[..4])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), 2);
    for row in &rows {
        let context = row["reference_contexts"][0].as_str().unwrap();
        assert!(
            context == prose || context.starts_with("Polonium was named"),
            "{row}"
        );
    }
}

/// `--round-trip`: each specific question that passes the other checks is
/// asked of the judge again with its contexts; a reference answer that
/// disagrees with the judge's is rejected with the judge's answer (and the
/// next attempt is told it), one the judge finds no answer for too, one
/// that agrees is kept. Abstract questions are not asked again.
#[test]
fn a_reference_answer_the_judge_reads_otherwise_is_rejected() {
    // The loopback judge reads off the sentence its question is about:
    // every specific candidate that reaches the check is asked once more.
    let fx = Fixture::content_reading();
    let out = fx.path("set.jsonl");
    let o = generate(&fx, &out, &["--size", "8", "--round-trip"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), 8);
    let specific = rows
        .iter()
        .filter(|r| r["question_type"] != "abstract")
        .count();
    let summary = read_json(&fx.path("set.summary.json"));
    let after: u64 = ["unanswered", "inconsistent"]
        .iter()
        .filter_map(|r| summary["rejected"][r].as_u64())
        .sum();
    assert!(specific > 0 && specific < rows.len(), "{rows:?}");
    assert_eq!(
        fx.asked("generate_round_trip") as u64,
        specific as u64 + after
    );
    assert!(summary["generator"]
        .as_str()
        .unwrap()
        .contains("round_trip@v1>=0.5"));
    for r in fx
        .chats()
        .iter()
        .filter(|r| judge::prompt_name(r) == Some("generate_round_trip"))
    {
        let user = r.body["messages"][1]["content"].as_str().unwrap();
        let question = user.rsplit_once("question:\n").unwrap().1;
        assert!(user.starts_with("context"), "{user}");
        let kept = rows.iter().find(|row| row["user_input"] == question);
        if let Some(row) = kept {
            let context = row["reference_contexts"][0].as_str().unwrap();
            let first = context
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap();
            assert!(user.contains(first.trim()), "{user}\n{row}");
        }
    }

    let reader = |said: Value| {
        move |req: &assay_test_server::Recorded, _: usize| match judge::prompt_name(req) {
            Some("generate_single_hop") => chat(
                &judge::citing(
                    req,
                    json!({"question": "What year was radium found by the Curies?",
                        "answer": "Marie and Pierre Curie discovered radium in 1898."}),
                )
                .to_string(),
            ),
            Some("generate_round_trip") => chat(&said.to_string()),
            _ => Reply::json(500, json!({"error": "unexpected"})),
        }
    };
    let docs = tempfile::tempdir().unwrap();
    std::fs::write(
        docs.path().join("radium.md"),
        "# Radium\n\nRadium was discovered by Marie and Pierre Curie in 1898 in the mineral \
         pitchblende, and isolated as a metal by Marie Curie and André-Louis Debierne in 1910.\n",
    )
    .unwrap();
    let args = ["--size", "1", "--mix", "single_hop=1", "--round-trip"];
    let run = |said: Value| {
        let fx = Fixture::new(reader(said));
        let out = fx.path("set.jsonl");
        let o = command_on(&fx, docs.path(), &out, &args).output().unwrap();
        (fx, o)
    };

    let (fx, o) = run(json!({"answered": true, "answer": "1910"}));
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let rejected = read_jsonl(&fx.path("set.rejected.jsonl"));
    assert_eq!(rejected.len(), 3, "{rejected:?}");
    assert!(
        rejected.iter().all(|r| r["rejection"]
            == json!({"reason": "inconsistent", "answer": "1910", "agreement": 0.0})),
        "{rejected:?}"
    );
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["rejected"], json!({"inconsistent": 3}));
    let retries: Vec<String> = fx
        .chats()
        .iter()
        .filter_map(|r| r.body["messages"][1]["content"].as_str().map(String::from))
        .filter(|user| user.contains("attempt:\n"))
        .collect();
    assert_eq!(retries.len(), 2);
    assert!(retries.iter().all(|u| u.contains(
        "why it was rejected:\na reader of the context answered it \"1910\", not as its answer did"
    )));

    let (fx, o) = run(json!({"answered": false, "answer": ""}));
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let summary = read_json(&fx.path("set.summary.json"));
    assert_eq!(summary["rejected"], json!({"unanswered": 3}));

    let (fx, o) = run(json!({"answered": true, "answer": "in 1898"}));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(read_jsonl(&fx.path("set.jsonl")).len(), 1);

    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let o = command_on(&fx, docs.path(), &fx.path("plan.jsonl"), &dry)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = String::from_utf8_lossy(&o.stdout);
    // Two calls a candidate, up to three attempts on each of five chunks.
    assert!(printed.contains("judge calls: 2 to 30"), "{printed}");
}
