//! `assay eval` against a judge that misbehaves: a loopback server
//! injecting every fault of `assay_test_server::faults` on a seeded
//! schedule, an endpoint that refuses every connection, one that refuses
//! the key, and one that answers and then goes away. Each case ends with
//! the documented exit code, every sample with exactly one outcome per
//! output, and a bounded number of requests.

use crate::common::{output, read_json, repo, results, stderr};
use crate::judged::{eval_command, Fixture, KEY};
use assay_test_server::faults::{Fault, Schedule};
use assay_test_server::{context_exceeded, error, judge, Reply, Server};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

/// The default RAG suite (the engine bench's, and the README's).
const RAG_SUITE: &str = "faithfulness,answer_relevancy,context_precision,context_recall";

fn example() -> PathBuf {
    repo().join("examples/rag_qa.jsonl")
}

fn example_ids() -> Vec<String> {
    std::fs::read_to_string(example())
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Outcomes of a run by (sample id, output), asserting none is written
/// twice.
fn outcomes(out: &Path) -> BTreeMap<(String, String), Value> {
    let mut by_key = BTreeMap::new();
    for r in results(out) {
        let key = (
            r["sample_id"].as_str().unwrap().to_string(),
            r["metric"].as_str().unwrap().to_string(),
        );
        assert!(
            by_key.insert(key.clone(), r).is_none(),
            "{key:?} written twice"
        );
    }
    by_key
}

/// `assay eval` of the example with `metrics` against `base_url` (the
/// key in the environment only), writing into `dir`.
fn eval_at(base_url: &str, dir: &Path, metrics: &str, extra: &[&str]) -> Output {
    eval_command(&example(), metrics, base_url, dir)
        .args(["--out", dir.join("run").to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

/// A loopback address whose port was just free: nothing listens there.
fn closed_port() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The one `error:` line of a stopped run.
fn error_line(o: &Output) -> String {
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

#[test]
fn a_judge_that_refuses_every_connection_stops_at_once_and_the_same_command_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let addr = closed_port();
    let base_url = format!("http://{addr}/v1");
    let extra = ["--concurrency", "1"];
    let o = eval_at(&base_url, dir.path(), "faithfulness", &extra);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let line = error_line(&o);
    assert!(
        line.contains(&base_url) && line.contains("connection") && line.contains("refused"),
        "{line}"
    );
    assert!(line.contains("answered nothing"), "{line}");
    assert!(!stderr(&o).contains(KEY) && !String::from_utf8_lossy(&o.stdout).contains(KEY));
    // One attempt per call, each call the first of a sample in flight (at
    // most 4 x --concurrency): no retries of a judge that never answered.
    let summary = read_json(&dir.path().join("run/summary.json"));
    assert_eq!(summary["complete"], false);
    let failed = summary["usage"]["run"]["failures"]["connection"]
        .as_u64()
        .unwrap();
    assert!((1..=4).contains(&failed), "{failed} failed calls");
    assert_eq!(summary["usage"]["run"]["upstream"], 0);
    // No judged outcome was written for a sample that was not judged.
    assert!(outcomes(&dir.path().join("run")).is_empty());

    // The judge comes up where the run looked for it: the same command
    // resumes and finishes, one outcome per sample.
    let rt = runtime();
    let server = rt.block_on(Server::start_at(&addr, |req, _| judge::reply(req)));
    let o = eval_at(&base_url, dir.path(), "faithfulness", &extra);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let done = outcomes(&dir.path().join("run"));
    let ids = example_ids();
    assert_eq!(done.len(), ids.len());
    assert!(ids
        .iter()
        .all(|id| done.contains_key(&(id.clone(), "faithfulness".into()))));
    assert!(server.count() > 0);
    drop(server);
}

#[test]
fn a_judge_that_refuses_the_key_stops_the_same_way() {
    let fx = Fixture::new(|r, _| {
        // Echo the credential, as some servers do, to prove it is masked.
        error(
            401,
            &format!(
                "Incorrect API key provided: {}",
                r.header("authorization").unwrap_or("")
            ),
        )
    });
    let o = eval_at(
        &fx.server.base_url(),
        fx.dir.path(),
        "faithfulness",
        &["--concurrency", "1"],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let line = error_line(&o);
    assert!(
        line.contains(&fx.server.base_url()) && line.contains("refused the credentials"),
        "{line}"
    );
    assert!(!stderr(&o).contains(KEY), "{}", stderr(&o));
    assert!(fx.server.count() <= 4, "{} requests", fx.server.count());
}

/// A judge that answered and then went away is an outage, not a wrong
/// setting: its calls are retried, then fail as `connection`, the run
/// ends (exit 0) with one outcome per sample.
#[test]
fn a_judge_that_answered_and_then_refuses_connections_fails_outcomes_not_the_run() {
    const ANSWERED: usize = 6;
    let fx = Fixture::new(|req, n| {
        if n < ANSWERED {
            judge::reply(req)
        } else {
            Reply::Shutdown
        }
    });
    let o = eval_at(
        &fx.server.base_url(),
        fx.dir.path(),
        "faithfulness",
        &["--concurrency", "1", "--max-retries", "1"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let done = outcomes(&fx.path("run"));
    assert_eq!(done.len(), example_ids().len(), "one outcome per sample");
    let kinds: Vec<&str> = done
        .values()
        .map(|r| r["error"]["kind"].as_str().unwrap_or("scored"))
        .collect();
    assert!(kinds.contains(&"scored"), "{kinds:?}");
    assert!(kinds.contains(&"connection"), "{kinds:?}");
    assert!(
        kinds.iter().all(|k| ["scored", "connection"].contains(k)),
        "{kinds:?}"
    );
    // The requests it answered and the one it went away on; nothing after.
    assert_eq!(fx.server.count(), ANSWERED + 1);
}

/// What a run of the suite against a judge with `schedule` did.
struct Measured {
    outcomes: BTreeMap<(String, String), Value>,
    requests: usize,
    code: Option<i32>,
}

fn suite_against(schedule: Option<Arc<Schedule>>) -> Measured {
    let fx = Fixture::new(move |req, _| match &schedule {
        Some(s) => s.answer(req, judge::reply(req)),
        None => judge::reply(req),
    });
    // A stalled body is given up after 5 s of an attempt.
    let o = eval_at(
        &fx.server.base_url(),
        fx.dir.path(),
        RAG_SUITE,
        &["--timeout", "5"],
    );
    let summary = read_json(&fx.path("run/summary.json"));
    for name in RAG_SUITE.split(',') {
        output(&summary, name);
    }
    Measured {
        outcomes: outcomes(&fx.path("run")),
        requests: fx.server.count(),
        code: o.status.code(),
    }
}

/// One attempt in five faulty, drawn from every fault but the oversized
/// body (which is not retried: the same request would get the same body),
/// seeded so the same attempts fail each run: the suite still scores at
/// least 99% of its outcomes, each sample has one outcome per output, and
/// the judge sees no more requests than the clean run's plus the faulty
/// attempts.
#[test]
fn one_faulty_attempt_in_five_still_scores_the_rag_suite() {
    let clean = suite_against(None);
    assert_eq!(clean.code, Some(0));
    let mix: Vec<Fault> = Fault::ALL
        .into_iter()
        .filter(|f| *f != Fault::HugeBody)
        .collect();
    let schedule = Arc::new(Schedule::new(33, 200, &mix));
    let faulty = suite_against(Some(Arc::clone(&schedule)));
    assert_eq!(faulty.code, Some(0));

    let keys: Vec<_> = faulty.outcomes.keys().collect();
    assert_eq!(keys, clean.outcomes.keys().collect::<Vec<_>>());
    assert_eq!(keys.len(), example_ids().len() * 4);
    // Of the outcomes a healthy judge scores (the rest are skipped for
    // want of a field, faults or not), the share still scored.
    let is_scored = |r: &Value| r["error"].is_null() && !r["value"].is_null();
    let scorable: Vec<_> = clean
        .outcomes
        .iter()
        .filter(|(_, r)| is_scored(r))
        .map(|(k, _)| k)
        .collect();
    assert!(
        scorable.len() >= keys.len() / 2,
        "{} scorable",
        scorable.len()
    );
    let scored = scorable
        .iter()
        .filter(|k| is_scored(&faulty.outcomes[**k]))
        .count();
    let fraction = scored as f64 / scorable.len() as f64;

    let injected = schedule.injected();
    let failed_attempts: usize = injected
        .iter()
        .filter(|(f, _)| f.is_failure())
        .map(|(_, n)| n)
        .sum();
    eprintln!(
        "scored {scored}/{} ({fraction:.4}) of the outcomes a healthy judge scores; requests {} \
         (clean run {}), faulty attempts {failed_attempts}, by fault {injected:?}",
        scorable.len(),
        faulty.requests,
        clean.requests
    );
    let unscored: Vec<String> = faulty
        .outcomes
        .values()
        .filter(|r| !is_scored(r))
        .map(|r| format!("{} {}: {}", r["sample_id"], r["metric"], r["error"]))
        .collect();
    assert!(
        fraction >= 0.99,
        "scored fraction {fraction}: {unscored:#?}"
    );
    assert!(
        injected.len() >= mix.len() / 2,
        "a mix of faults: {injected:?}"
    );
    // Each faulty attempt costs one more request, and nothing else does
    // (a healthy attempt never times out: 5 s against a loopback judge),
    // so the retries are bounded by the faults.
    assert!(
        faulty.requests <= clean.requests + failed_attempts,
        "{} requests, {} clean + {failed_attempts} faulty",
        faulty.requests,
        clean.requests
    );
    assert!(
        failed_attempts * 10 >= faulty.requests,
        "faults were injected"
    );
}

/// A request longer than the server's context window is llama-server's
/// 400 (`exceed_context_size_error`, measured from the real server in
/// `real_server.rs`): that row's outcomes fail as `rejected`, each request
/// asked once, and every other row is scored as by a judge with room.
#[test]
fn a_request_beyond_the_context_window_fails_its_row_alone_asked_once() {
    /// Characters of the last message that fit (about four a token).
    const WINDOW: usize = 4 * 512;
    let fx = Fixture::new(|req, _| {
        let n = req.last_message().chars().count();
        if n > WINDOW {
            context_exceeded(n / 4, WINDOW / 4)
        } else {
            judge::reply(req)
        }
    });
    let mut rows: Vec<Value> = std::fs::read_to_string(example())
        .unwrap()
        .lines()
        .take(3)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut long = rows[0].clone();
    long["id"] = "too-long".into();
    long["retrieved_contexts"] = vec!["Einstein was born in Ulm. ".repeat(200)].into();
    rows.push(long);
    let data = fx.data(&rows);
    let metrics = "faithfulness,context_precision";
    let o = fx.eval(&data, metrics, "run", &["--protocol", "per-item"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let done = outcomes(&fx.path("run"));
    assert_eq!(
        done.len(),
        rows.len() * 2,
        "one outcome per sample and output"
    );
    for ((id, metric), r) in &done {
        if id == "too-long" {
            assert_eq!(r["error"]["kind"], "rejected", "{metric}: {r}");
            let message = r["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("exceeds the available context size"),
                "{r}"
            );
        } else {
            assert!(r["error"].is_null(), "{id} {metric}: {r}");
        }
    }
    // A 400 is not retried: no request of the long row was sent twice.
    let long: Vec<String> = fx
        .chats()
        .iter()
        .filter(|r| r.last_message().chars().count() > WINDOW)
        .map(|r| r.body.to_string())
        .collect();
    assert!(!long.is_empty());
    let distinct: std::collections::BTreeSet<&String> = long.iter().collect();
    assert_eq!(distinct.len(), long.len(), "a rejected request asked again");
}
