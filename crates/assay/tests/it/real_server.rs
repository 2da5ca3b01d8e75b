//! Judging through a real OpenAI-compatible server: llama.cpp's
//! `llama-server` (built by `scripts/build-llama-server.sh`) serving the
//! small GGUF the local judge runs in-process, asked as `llamacpp:` with
//! `--base-url`. Its structured outputs (the JSON Schema turned into a
//! grammar by the server), its usage and its errors go through the same
//! client as any provider's; the scores are compared with the same model
//! in-process.

use crate::common::{assay, repo, results_by_key, stderr};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MODEL: &str = "smollm2-135m-instruct-q4_1.gguf";

/// The server binary: built on first use, found built afterwards.
fn server_binary() -> PathBuf {
    let out = Command::new("bash")
        .arg(repo().join("scripts/build-llama-server.sh"))
        .stderr(Stdio::inherit())
        .output()
        .expect("run scripts/build-llama-server.sh");
    assert!(out.status.success(), "scripts/build-llama-server.sh failed");
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A running `llama-server`, stopped when dropped.
struct Server {
    child: Child,
    base_url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET of `path` on `port`: the status code, or `None` when nothing
/// answers yet.
fn get(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut status = String::new();
    BufReader::new(stream).read_line(&mut status).ok()?;
    status.split_whitespace().nth(1)?.parse().ok()
}

/// Starts the server on a free port with `context` tokens of context, and
/// waits until its `/health` says the model is loaded.
fn start(context: u32) -> Server {
    let model = assay_local::models_dir().join(MODEL);
    assert!(
        model.exists(),
        "{} is missing: run scripts/fetch-models.sh",
        model.display()
    );
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(server_binary())
        .args(["-m", model.to_str().unwrap(), "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "-c", &context.to_string()])
        .args(["-t", "2", "-np", "1", "--no-warmup"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start llama-server");
    // The server answers 503 while it loads the model, 200 once ready.
    let deadline = Instant::now() + Duration::from_secs(120);
    while get(port, "/health") != Some(200) {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("llama-server exited ({status}): {err}");
        }
        assert!(Instant::now() < deadline, "llama-server never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    Server {
        child,
        base_url: format!("http://127.0.0.1:{port}/v1"),
    }
}

const METRICS: &str = "context_precision,aspect_critique";

/// The first rows of the bundled example (to compare with the model
/// in-process) and, for the server alone, the same with a row whose
/// context is too long for its window.
fn data(dir: &Path) -> (PathBuf, PathBuf) {
    let example = std::fs::read_to_string(repo().join("examples/rag_qa.jsonl")).unwrap();
    let rows: Vec<&str> = example.lines().take(3).collect();
    let long = "Canberra is the capital of Australia. ".repeat(600);
    let too_long = serde_json::json!({"id": "too-long",
        "user_input": "What is the capital of Australia?",
        "response": "Canberra is the capital of Australia.",
        "reference": "Canberra is the capital of Australia.", "retrieved_contexts": [long]});
    let compared = dir.join("compared.jsonl");
    std::fs::write(&compared, rows.join("\n") + "\n").unwrap();
    let all = dir.join("all.jsonl");
    std::fs::write(&all, format!("{}\n{too_long}\n", rows.join("\n"))).unwrap();
    (compared, all)
}

fn run(data: &Path, out: &Path, judge: &[&str]) -> std::process::Output {
    let mut args = vec![
        "eval",
        data.to_str().unwrap(),
        "-m",
        METRICS,
        "--protocol",
        "listed",
        "--no-cache",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(judge);
    assay(&args, None)
}

/// `details` without the judge's probabilities, which only in-process
/// judges report.
fn verdicts_only(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.contains("probabilit") && *k != "soft_score")
                .map(|(k, v)| (k.clone(), verdicts_only(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(verdicts_only).collect()),
        other => other.clone(),
    }
}

#[test]
fn a_real_llama_server_judges_as_the_same_model_in_process() {
    let _cores = crate::common::one_local_model_at_a_time();
    let server = start(2048);
    let dir = tempfile::tempdir().unwrap();
    let (compared, all) = data(dir.path());
    let remote = dir.path().join("remote");
    let o = run(
        &all,
        &remote,
        &[
            "--judge",
            "llamacpp:smollm2",
            "--base-url",
            &server.base_url,
            // One request at a time for the server's one slot: more would
            // queue there and spend their attempts' time waiting. The
            // attempt bound is wide because the suite's other tests share
            // the two cores with the server.
            "--concurrency",
            "1",
            "--timeout",
            "600",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let got = results_by_key(&remote);
    // Structured outputs: the server holds the answer to the schema (as a
    // grammar), so no outcome of the rows that fit is a failure.
    for ((id, metric), r) in &got {
        if id != "too-long" {
            assert_eq!(r["status"], "scored", "{id} {metric}: {r}");
        }
    }
    // A request beyond the server's context is its 400: a typed failure of
    // that row's outcomes alone, asked once (a retry would get the same).
    let long: Vec<&Value> = got
        .iter()
        .filter(|((id, _), _)| id == "too-long")
        .map(|(_, r)| r)
        .collect();
    assert_eq!(long.len(), 6, "context_precision and five aspects");
    for r in &long {
        assert_eq!(r["error"]["kind"], "rejected", "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("exceeds the available context size"),
            "{r}"
        );
    }
    // Usage as the server counts it; the rejected calls counted as such.
    let summary: Value = crate::common::read_json(&remote.join("summary.json"));
    let usage = &summary["usage"]["run"];
    assert!(usage["prompt_tokens"].as_u64().unwrap() > 0, "{usage}");
    assert!(usage["completion_tokens"].as_u64().unwrap() > 0, "{usage}");
    assert_eq!(usage["failures"]["rejected"], 6, "{usage}");

    // The same model in-process, with the same protocol and prompts.
    let local = dir.path().join("local");
    let o = run(&compared, &local, &["--judge", "local:smollm2-135m"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = results_by_key(&local);
    assert_eq!(want.len(), 18);
    let (mut values, mut words) = (0, 0);
    for (key, w) in &want {
        let g = &got[key];
        values += usize::from(g["value"] == w["value"]);
        words += usize::from(verdicts_only(&g["details"]) == verdicts_only(&w["details"]));
    }
    eprintln!(
        "real server against in-process: {values} of {} values equal, {words} with every verdict and reason word for word",
        want.len()
    );
    // Both decode greedily under a grammar from the same schema; the
    // server's grammar and chat template are its own, so a reason may
    // be worded apart (measured: 18 of 18 values, 17 of 18 word for word).
    assert!(values * 10 >= want.len() * 9, "{values} of {}", want.len());
}
