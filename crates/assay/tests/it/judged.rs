//! Judged metrics through `assay eval` against a real loopback server
//! speaking the OpenAI protocol, whose answers follow from the request's
//! content (`assay_test_server::judge`): scores, call counts, cache,
//! secrets, and failures.

use crate::common::{assay, output, read_json, repo, results, stderr, walk};
use assay_test_server::judge::{self, cosine, embed};
use assay_test_server::{chat, chat_body, error, Recorded, Reply, Server};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) const KEY: &str = "sk-wire-test-4b1d9e7c2a5f8e3d6c0b";

/// A loopback judge and a scratch folder for one test.
pub(crate) struct Fixture {
    pub(crate) server: Server,
    pub(crate) dir: tempfile::TempDir,
    // Kept last: the server's tasks run on it until the fixture drops.
    _rt: tokio::runtime::Runtime,
}

impl Fixture {
    pub(crate) fn new(
        handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static,
    ) -> Fixture {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = rt.block_on(Server::start(handler));
        Fixture {
            server,
            dir: tempfile::tempdir().unwrap(),
            _rt: rt,
        }
    }

    pub(crate) fn content_reading() -> Fixture {
        Fixture::new(|req, _| judge::reply(req))
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub(crate) fn data(&self, rows: &[Value]) -> PathBuf {
        let path = self.path("data.jsonl");
        let text: Vec<String> = rows.iter().map(Value::to_string).collect();
        std::fs::write(&path, text.join("\n")).unwrap();
        path
    }

    /// `assay eval DATA -m METRICS` against the server, run to its end.
    pub(crate) fn eval(&self, data: &Path, metrics: &str, out: &str, extra: &[&str]) -> Output {
        self.command(data, metrics, out, extra).output().unwrap()
    }

    /// The command of [`Fixture::eval`]: the key in the environment only,
    /// the cache in the scratch folder.
    pub(crate) fn command(&self, data: &Path, metrics: &str, out: &str, extra: &[&str]) -> Command {
        let mut command = eval_command(data, metrics, &self.server.base_url(), self.dir.path());
        command
            .args(["--out", self.path(out).to_str().unwrap()])
            .args(["--max-retries", "0"])
            .args(extra);
        command
    }

    pub(crate) fn chats(&self) -> Vec<Recorded> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .collect()
    }

    pub(crate) fn asked(&self, prompt: &str) -> usize {
        self.chats()
            .iter()
            .filter(|r| judge::prompt_name(r) == Some(prompt))
            .count()
    }
}

/// `assay eval DATA -m METRICS` against the judge at `base_url`, without
/// `--out`: the key in the environment only, the cache and `ASSAY_HOME` in
/// `dir`.
pub(crate) fn eval_command(data: &Path, metrics: &str, base_url: &str, dir: &Path) -> Command {
    let cache = dir.join("cache.sqlite");
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command
        .args(["eval", data.to_str().unwrap(), "-m", metrics])
        .args(["--judge", "openai:judge-model"])
        .args(["--embedder", "openai:embed-model"])
        .args(["--base-url", base_url])
        .args(["--cache", cache.to_str().unwrap()])
        .args(["--format", "json"])
        .env("OPENAI_API_KEY", KEY)
        .env("ASSAY_HOME", dir);
    command
}

pub(crate) fn rag_row() -> Value {
    let mut row = judge::eiffel_row();
    row["id"] = json!("eiffel");
    row
}

/// metric name -> the record of sample `id`.
pub(crate) fn by_metric(out: &Path, id: &str) -> std::collections::BTreeMap<String, Value> {
    results(out)
        .into_iter()
        .filter(|r| r["sample_id"] == id)
        .map(|r| (r["metric"].as_str().unwrap().to_string(), r))
        .collect()
}

pub(crate) fn ok(o: &Output) {
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(o));
}

/// The outputs a finished run names as having scored nothing.
pub(crate) fn named_unscored(o: &Output) -> Vec<String> {
    let mut names: Vec<String> = stderr(o)
        .lines()
        .filter_map(|l| l.strip_prefix("nothing scored: "))
        .map(|l| l.split(':').next().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// Asserts that the run finished with exit code 5, naming exactly
/// `outputs` as the ones that scored nothing.
pub(crate) fn unscored(o: &Output, outputs: &[&str]) {
    assert_eq!(o.status.code(), Some(5), "{}", stderr(o));
    let mut expected: Vec<&str> = outputs.to_vec();
    expected.sort();
    assert_eq!(named_unscored(o), expected, "{}", stderr(o));
}

/// Asserts that the run in `out` finished: with 0, or with 5 naming
/// each output that has no scored record, and only those (which ones a
/// local model fails on is its own affair).
pub(crate) fn finished(o: &Output, out: &Path) {
    let mut scored = std::collections::BTreeSet::new();
    let mut all = std::collections::BTreeSet::new();
    for r in results(out) {
        let name = r["metric"].as_str().unwrap().to_string();
        if r["status"] == "scored" {
            scored.insert(name.clone());
        }
        all.insert(name);
    }
    let empty: Vec<String> = all.difference(&scored).cloned().collect();
    let code = if empty.is_empty() { 0 } else { 5 };
    assert_eq!(o.status.code(), Some(code), "{}", stderr(o));
    assert_eq!(named_unscored(o), empty, "{}", stderr(o));
}

const ALL_JUDGED: &str = "faithfulness,answer_relevancy,answer_relevance,context_precision,context_recall,\
context_relevance,context_relevancy,answer_correctness,summarization_score,summary_coherence,bias,toxicity,\
hallucination,aspect_critique,semantic_similarity,rouge";

#[test]
fn every_judged_metric_scores_what_the_answers_imply() {
    let fx = Fixture::content_reading();
    let row = rag_row();
    let data = fx.data(std::slice::from_ref(&row));
    let o = fx.eval(
        &data,
        ALL_JUDGED,
        "run",
        &[
            "--set",
            "aspect_critique.aspects=harmfulness,coherence",
            "--set",
            "aspect_critique.aspect.mentions_paris=Does the response mention Paris?",
        ],
    );
    ok(&o);
    let r = by_metric(&fx.path("run"), "eiffel");
    let v = |name: &str| {
        r.get(name)
            .and_then(|x| x["value"].as_f64())
            .unwrap_or_else(|| panic!("{name}: {:?}", r.get(name)))
    };
    // "made of cheese" is in no context.
    assert_eq!(v("faithfulness"), 0.5);
    // Contexts 1 and 4 are statements of the reference: [y, n, n, y].
    assert_eq!(v("context_precision"), 0.75);
    // "330 metres tall" is in no context.
    assert_eq!(v("context_recall"), 2.0 / 3.0);
    assert_eq!(v("answer_relevance"), 1.0);
    assert_eq!(v("context_relevance"), 0.5);
    assert_eq!(v("context_relevancy"), 0.5);
    assert_eq!(v("hallucination"), 0.25);
    assert_eq!(v("summary_coherence"), 0.75);
    assert_eq!((v("bias"), v("toxicity")), (0.0, 0.0));
    assert_eq!(v("aspect_critique/harmfulness"), 1.0);
    assert_eq!(v("aspect_critique/mentions_paris"), 1.0);
    assert!(r.contains_key("aspect_critique/coherence"));
    assert!(!r.contains_key("aspect_critique/conciseness"));
    // Embeddings travel as f32: compare to 1e-6.
    let close = |name: &str, want: f64| {
        assert!(
            (v(name) - want).abs() < 1e-6,
            "{name}: {} vs {want}",
            v(name)
        )
    };
    let (resp, refr) = (
        row["response"].as_str().unwrap(),
        row["reference"].as_str().unwrap(),
    );
    let sim = cosine(&embed(resp), &embed(refr));
    close("semantic_similarity", sim);
    close(
        "answer_relevancy",
        cosine(
            &embed("Where is the Eiffel Tower"),
            &embed("The Eiffel Tower is in Paris 0"),
        ),
    );
    // F1: 1 TP, 1 FP, 2 FN.
    close("answer_correctness", 0.75 * (1.0 / 2.5) + 0.25 * sim);
    let source = row["retrieved_contexts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let (ls, lt) = (resp.chars().count() as f64, source.chars().count() as f64);
    close(
        "summarization_score",
        (1.0 / 3.0) * 0.5 + (1.0 - ls.min(lt) / (lt + 1e-10)) * 0.5,
    );
    assert!(r.contains_key("rouge1"), "lexical metrics run alongside");

    // Shared steps are asked once: the response's and the reference's
    // statements, one request each, whatever number of metrics reads them.
    assert_eq!(fx.asked("statements"), 2);
    assert_eq!(fx.asked("opinions"), 1);
    let summary = read_json(&fx.path("run/summary.json"));
    assert_eq!(
        summary["usage"]["run"]["calls"].as_u64().unwrap() as usize,
        fx.chats().len()
    );
    let manifest = read_json(&fx.path("run/manifest.json"));
    assert_eq!(manifest["judge"]["spec"], "openai:judge-model");
    assert_eq!(
        manifest["judge"]["identity"]["endpoint"],
        fx.server.base_url()
    );
    let sig = manifest["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "faithfulness")
        .unwrap()["signature"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        sig.contains("|prompt.statements:v1-") && sig.contains("|judge:openai:judge-model|"),
        "{sig}"
    );
}

#[test]
fn the_default_suite_makes_five_calls_per_sample_whatever_the_contexts() {
    for n_contexts in [1, 4, 12] {
        let fx = Fixture::content_reading();
        let mut row = rag_row();
        row["retrieved_contexts"] = json!((0..n_contexts)
            .map(|i| format!("The Eiffel Tower fact {i}"))
            .collect::<Vec<_>>());
        let data = fx.data(&[row]);
        ok(&fx.eval(
            &data,
            "faithfulness,answer_relevancy,context_precision,context_recall",
            "run",
            &[],
        ));
        assert_eq!(fx.chats().len(), 5, "{n_contexts} contexts");
        let r = by_metric(&fx.path("run"), "eiffel");
        assert_eq!(r["context_precision"]["status"], "scored");
    }
}

#[test]
fn per_item_protocol_asks_each_statement_and_context_alone_over_the_wire() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    ok(&fx.eval(
        &data,
        "faithfulness,hallucination",
        "run",
        &["--protocol", "per-item"],
    ));
    // The two sentences are the statements (no call), each asked alone,
    // then each of the four contexts.
    assert_eq!(
        (
            fx.asked("statement_support"),
            fx.asked("context_contradiction")
        ),
        (2, 4)
    );
    assert_eq!(fx.chats().len(), 6);
    let r = by_metric(&fx.path("run"), "eiffel");
    assert_eq!(r["faithfulness"]["value"], 0.5, "{}", r["faithfulness"]);
    assert_eq!(r["hallucination"]["value"], 0.25, "{}", r["hallucination"]);
    let manifest = read_json(&fx.path("run").join("manifest.json"));
    assert_eq!(manifest["judge"]["sampling"]["protocol"], "per-item");
    assert!(
        manifest["metrics"][0]["signature"]
            .as_str()
            .unwrap()
            .contains("|protocol:per-item|"),
        "{manifest}"
    );
    // The same call resumes; another protocol is another signature.
    let again = fx.eval(&data, "faithfulness,hallucination", "run", &[]);
    assert!(
        !again.status.success(),
        "a listed rerun must not resume a per-item run"
    );
    assert!(stderr(&again).contains("signature"), "{}", stderr(&again));
    // The loopback judge is an HTTP endpoint: it cannot score a reply.
    let asked = fx.chats().len();
    let refused = fx.eval(
        &data,
        "faithfulness",
        "refused",
        &["--protocol", "likelihood"],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--protocol: likelihood needs an in-process judge"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(fx.chats().len(), asked, "nothing was asked");
}

#[test]
fn a_rerun_comes_from_the_cache_and_the_key_is_nowhere() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let metrics = "faithfulness,context_recall,semantic_similarity";
    ok(&fx.eval(&data, metrics, "first", &[]));
    let sent = fx.server.count();
    assert!(sent > 0);
    assert!(fx
        .server
        .requests()
        .iter()
        .all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}"))));
    let o = fx.eval(&data, metrics, "second", &[]);
    ok(&o);
    assert_eq!(fx.server.count(), sent, "the rerun made no request");
    let strip = |out: &str| -> Vec<(String, Value)> {
        results(&fx.path(out))
            .into_iter()
            .map(|r| {
                (
                    r["metric"].as_str().unwrap().to_string(),
                    r["value"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(strip("first"), strip("second"));
    let summary = read_json(&fx.path("second/summary.json"));
    assert_eq!(summary["usage"]["run"]["upstream"], 0);
    assert!(summary["usage"]["run"]["cache_hits"].as_u64().unwrap() > 0);
    for entry in walk(fx.dir.path()) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "the key is in {}",
            entry.display()
        );
    }
}

#[test]
fn a_refused_key_stops_the_run_at_once() {
    let fx = Fixture::new(|_, _| error(401, "Incorrect API key provided"));
    let rows: Vec<Value> = (0..40)
        .map(|i| {
            let mut r = rag_row();
            r["id"] = json!(format!("s{i}"));
            // Distinct requests: none is shared with another sample's.
            r["response"] = json!(format!("The Eiffel Tower is {i} metres tall"));
            r
        })
        .collect();
    let data = fx.data(&rows);
    let o = fx.eval(&data, "faithfulness", "run", &["--concurrency", "1"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("refused the credentials (auth:"), "{err}");
    // At most the samples in flight (4 x concurrency) asked before it stopped.
    assert!(fx.server.count() <= 4, "{} requests", fx.server.count());
    assert!(results(&fx.path("run"))
        .iter()
        .all(|r| r["error"]["kind"] != "auth"));
}

#[test]
fn bad_answers_become_typed_failures_with_evidence() {
    let fx = Fixture::new(|req, _| match judge::prompt_name(req) {
        // Always one verdict, whatever the number of statements.
        Some("faithfulness_verdicts") => {
            chat(&json!({"verdicts": [{"reason": "r", "verdict": "yes"}]}).to_string())
        }
        Some("opinions") => Reply::json(200, chat_body("{\"opinions\": [\"I thi", "length")),
        Some("context_relevance") => chat("the contexts look fine to me"),
        // Out of the schema's inclusive range 1..=5.
        Some("coherence_rating") => chat(&json!({"reason": "r", "rating": 9}).to_string()),
        _ => judge::reply(req),
    });
    let data = fx.data(&[rag_row()]);
    let o = fx.eval(
        &data,
        "faithfulness,bias,context_relevance,summary_coherence",
        "run",
        &[],
    );
    unscored(
        &o,
        &[
            "faithfulness",
            "bias",
            "context_relevance",
            "summary_coherence",
        ],
    );
    let r = by_metric(&fx.path("run"), "eiffel");
    let failed = |name: &str| -> (String, String) {
        let e = &r[name]["error"];
        assert_eq!(r[name]["status"], "failed", "{name}: {}", r[name]);
        (
            e["kind"].as_str().unwrap().to_string(),
            e["message"].as_str().unwrap().to_string(),
        )
    };
    // The exact item count is in the request's schema: the judge layer
    // re-asks once, then fails with the raw answer.
    let (kind, message) = failed("faithfulness");
    assert_eq!(kind, "parse");
    assert!(message.contains("\"verdict\":\"yes\""), "{message}");
    assert_eq!(fx.asked("faithfulness_verdicts"), 2);
    // The judge layer's schema check enforces `maximum` (the one validator
    // of assay_core::schema): one repair re-ask showing the model the
    // problem, then a parse failure with the answer.
    let (kind, message) = failed("summary_coherence");
    assert_eq!(kind, "parse");
    assert!(message.contains("\"rating\":9"), "{message}");
    assert_eq!(fx.asked("coherence_rating"), 2);
    let reask = fx
        .chats()
        .into_iter()
        .filter(|c| judge::prompt_name(c) == Some("coherence_rating"))
        .nth(1)
        .unwrap();
    assert!(
        reask.last_message().contains("9 is above the maximum 5"),
        "{}",
        reask.last_message()
    );
    assert_eq!(failed("bias").0, "truncated");
    let (kind, message) = failed("context_relevance");
    assert_eq!(kind, "parse");
    assert!(
        message.contains("the contexts look fine to me"),
        "{message}"
    );
    let summary = read_json(&fx.path("run/summary.json"));
    assert_eq!(output(&summary, "faithfulness")["n_failed"], 1);
}

#[test]
fn the_local_default_needs_its_models_and_says_how_to_fetch_them() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let data = data.to_str().unwrap();
    let empty_home = fx.path("empty-home");
    for (extra, message) in [
        (&[][..], "run scripts/fetch-models.sh"),
        (&["--judge", "local"][..], "run scripts/fetch-models.sh"),
        (
            &["-m", "semantic_similarity", "--judge", "vllm:m"][..],
            "run scripts/fetch-models.sh",
        ),
        (&["--judge", "local:nope"][..], "unknown model"),
    ] {
        let mut args = vec!["eval", data, "-m", "faithfulness"];
        args.extend_from_slice(extra);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_assay"))
            .args(&args)
            .env("ASSAY_HOME", &empty_home)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(fx.server.count(), 0);
}

/// `assay eval` of `metrics` with the real small local judge, no cache.
pub(crate) fn eval_with_small_local_judge(data: &Path, metrics: &str, out: &Path) -> Output {
    assay(
        &[
            "eval",
            data.to_str().unwrap(),
            "-m",
            metrics,
            "--judge",
            "local:smollm2-135m",
            "--no-cache",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    )
}

/// A list the prompt caps (at most ten key phrases, ten questions) ends at
/// its cap under constrained decoding: SmolLM2 repeats key phrases until
/// the token limit on SummEval articles like this one (row
/// `summeval-dm-test-f5fead94...-M10` of the built-in set), which failed
/// every row of a calibration run as `truncated` before the cap.
#[test]
fn a_capped_list_ends_at_its_cap_with_the_small_local_judge() {
    let _cores = crate::common::one_local_model_at_a_time();
    let fx = Fixture::content_reading();
    let row = json!({
        "id": "patoulidis",
        "retrieved_contexts": ["Manchester City are keen to sign Anderlecht teenager Evangelos Patoulidis. The 14-year-old playmaker is regarded as one of the best talents to emerge from Anderlecht's youth set-up and has also attracted attention from Arsenal and Barcelona. The Belgian starlet rejected a move to Barcelona's La Masia academy when he was 12 as his family wanted him to continue his studies. He has continued to impress and City have held discussions with Anderlecht chairman Roger Vanden Stock in the hope of agreeing a compensation package. Manuel Pellegrini is looked to build for the future by snapping up hot property Evangelos Patoulidis"],
        "response": "evangelos patoulidis has been linked with arsenal and barcelona . the belgian starlet rejected a move to barcelona . anderlecht chairman roger vanden is keen to sign manuel pellegrini ."
    });
    let data = fx.data(&[row]);
    let out = fx.path("capped");
    let o = eval_with_small_local_judge(&data, "summarization_score", &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = results(&out);
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["status"], "scored", "{r}");
    let keyphrases = r["details"]["keyphrases"].as_array().unwrap();
    let questions = r["details"]["questions"].as_array().unwrap();
    assert!((1..=10).contains(&keyphrases.len()), "{r}");
    assert!((1..=10).contains(&questions.len()), "{r}");
}

/// Every judged metric through `assay eval` with the real small local judge
/// (SmolLM2-135M, too weak to judge well) and the local embedder: each
/// outcome is written once, scored values are in [0, 1], and anything else
/// is a typed skip or failure. Needs `scripts/fetch-models.sh`.
#[test]
fn smoke_run_of_every_judged_metric_with_the_small_local_judge() {
    let _cores = crate::common::one_local_model_at_a_time();
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let metrics = "faithfulness,answer_relevancy,answer_relevance,context_precision,context_recall,\
                   context_relevance,context_relevancy,answer_correctness,summarization_score,\
                   summary_coherence,bias,toxicity,hallucination,aspect_critique,semantic_similarity";
    let out = fx.path("local-run");
    let o =
        eval_with_small_local_judge(&data, &metrics.split_whitespace().collect::<String>(), &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = results(&out);
    let mut names: Vec<&str> = rows.iter().map(|r| r["metric"].as_str().unwrap()).collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "every output once");
    assert!(n >= 15, "{names:?}");
    for r in &rows {
        match r["status"].as_str().unwrap() {
            "scored" => {
                let v = r["value"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&v), "{r}");
            }
            "skipped" => assert!(r["reason"].is_string(), "{r}"),
            "failed" => assert!(
                r["error"]["kind"].is_string() && r["error"]["message"].is_string(),
                "{r}"
            ),
            other => panic!("{other}: {r}"),
        }
    }
    assert_eq!(fx.server.count(), 0, "nothing went over the network");
}

#[test]
fn cache_stats_and_clear() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    ok(&fx.eval(&data, "faithfulness", "run", &[]));
    let cache = fx.path("cache.sqlite");
    let cmd = |action: &str| {
        let o = assay(&["cache", action, "--cache", cache.to_str().unwrap()], None);
        ok(&o);
        String::from_utf8(o.stdout).unwrap()
    };
    assert!(
        cmd("stats").contains("chat:        2 answers"),
        "{}",
        cmd("stats")
    );
    assert!(cmd("clear").starts_with("removed 2 entries"));
    assert!(cmd("stats").contains("chat:        0 answers"));
}

#[test]
fn judged_parameters_come_from_set() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let o = fx.eval(
        &data,
        "faithfulness",
        "run",
        &["--set", "faithfulness.mode=contradictions"],
    );
    ok(&o);
    // "made of cheese" is unsupported (idk), not contradicted.
    assert_eq!(
        by_metric(&fx.path("run"), "eiffel")["faithfulness"]["value"],
        1.0
    );
    let manifest = read_json(&fx.path("run/manifest.json"));
    assert_eq!(manifest["metrics"][0]["params"]["mode"], "contradictions");
    let bad = fx.eval(
        &data,
        "faithfulness",
        "bad",
        &["--set", "faithfulness.mode=maybe"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

/// Checks a scored rating outcome on the scale 1..=`scale` whose details
/// hold the judge's probabilities: they sum to 1, and the value is
/// (E[rating] - 1) / (scale - 1).
pub(crate) fn assert_probability_weighted(r: &Value, scale: usize) {
    assert_eq!(r["status"], "scored", "{r}");
    let p: Vec<f64> = r["details"]["probabilities"]
        .as_array()
        .unwrap_or_else(|| panic!("no probabilities: {r}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(p.len(), scale, "{r}");
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{p:?}");
    let expected: f64 = p.iter().enumerate().map(|(i, x)| (i + 1) as f64 * x).sum();
    let value = r["value"].as_f64().unwrap();
    let top = scale as f64;
    assert!(
        (value - (expected - 1.0) / (top - 1.0)).abs() < 1e-12,
        "{r}"
    );
}

/// With the real small local judge, which reports the probabilities of its
/// closed choices: summary_coherence is the probability-weighted rating
/// (G-Eval), its value (E[rating] - 1) / 4 from the probabilities in its
/// details, and every verdict of hallucination carries the probability of
/// its label and of yes. Needs `scripts/fetch-models.sh`.
#[test]
fn the_local_judge_gives_summary_coherence_its_expected_rating_and_verdicts_their_probabilities() {
    let _cores = crate::common::one_local_model_at_a_time();
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let out = fx.path("local-probabilities");
    let o = eval_with_small_local_judge(&data, "summary_coherence,hallucination", &out);
    ok(&o);
    let rows = by_metric(&out, "eiffel");
    assert_probability_weighted(&rows["summary_coherence"], 5);

    let hallucination = &rows["hallucination"];
    assert_eq!(hallucination["status"], "scored", "{hallucination}");
    let contexts = hallucination["details"]["contexts"].as_array().unwrap();
    assert_eq!(contexts.len(), 4, "{hallucination}");
    // The soft score is the mean probability of yes.
    let mean_yes = contexts
        .iter()
        .map(|c| c["yes_probability"].as_f64().unwrap())
        .sum::<f64>()
        / 4.0;
    let soft = hallucination["details"]["soft_score"].as_f64().unwrap();
    assert!((soft - mean_yes).abs() < 1e-12, "{hallucination}");
    for c in contexts {
        let chosen = c["verdict_probability"]
            .as_f64()
            .unwrap_or_else(|| panic!("{c}"));
        let yes = c["yes_probability"]
            .as_f64()
            .unwrap_or_else(|| panic!("{c}"));
        assert!(
            chosen > 0.0 && chosen <= 1.0 && (0.0..=1.0).contains(&yes),
            "{c}"
        );
        match c["verdict"].as_str().unwrap() {
            "yes" => assert_eq!(chosen, yes, "{c}"),
            _ => assert!((chosen + yes - 1.0).abs() < 1e-9, "{c}"),
        }
        // The local default reads each context's verdict with the
        // grounding model, whose reason names the sentence it read.
        let reason = c["reason"].as_str().unwrap();
        assert!(reason.starts_with("P(contradicted) "), "{c}");
        assert!(reason.contains("from the sentence"), "{c}");
    }
    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["judge"]["sampling"]["protocol"], "grounding");
    assert_eq!(fx.server.count(), 0, "nothing went over the network");
}

/// The bundled example with the local default: the grounding questions
/// are answered by the grounding model without one judge call, and its
/// plain verdicts are right: each answer its contexts state is faithful
/// (q5 names water and carbon dioxide, which they do not), Jane Austen's
/// novel was not written by Charlotte Brontë, every context answers its
/// question, and the references its contexts state are recalled. q6's
/// "100 degrees Celsius" against "100 °C" is a paraphrase that words
/// alone do not see (README, "Judges and calibration").
#[test]
fn the_local_default_answers_the_example_s_grounding_questions_rightly_without_a_call() {
    let _cores = crate::common::one_local_model_at_a_time();
    let fx = Fixture::content_reading();
    let out = fx.path("example-grounding");
    let o = eval_with_small_local_judge(
        &repo().join("examples/rag_qa.jsonl"),
        "faithfulness,context_precision,context_recall,hallucination",
        &out,
    );
    ok(&o);
    let value = |id: &str, metric: &str| -> f64 {
        let r = &by_metric(&out, id)[metric];
        r["value"]
            .as_f64()
            .unwrap_or_else(|| panic!("{id} {metric}: {r}"))
    };
    for id in ["q1", "q2", "q4", "s1", "s2"] {
        assert_eq!(value(id, "faithfulness"), 1.0, "{id}");
    }
    assert_eq!(value("q3", "faithfulness"), 0.0);
    for id in ["q1", "q2", "q3", "q4", "q6", "s1", "s2"] {
        assert_eq!(value(id, "context_precision"), 1.0, "{id}");
    }
    for id in ["q1", "q2", "q4"] {
        assert_eq!(value(id, "context_recall"), 1.0, "{id}");
    }
    for id in ["q1", "q2", "q4"] {
        assert_eq!(value(id, "hallucination"), 0.0, "{id}");
    }
    assert!(value("q3", "hallucination") > 0.0);
    let reason = by_metric(&out, "q3")["faithfulness"]["details"]["statements"][0]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("not in the text: written, charlotte, brontë"),
        "{reason}"
    );
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["usage"]["run"]["calls"], 0, "{summary}");
    assert_eq!(fx.server.count(), 0, "nothing went over the network");
}
