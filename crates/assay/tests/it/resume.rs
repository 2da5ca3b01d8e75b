//! Resumable, reproducible runs: a run killed (`kill -9`) or interrupted
//! (Ctrl-C) at any point and run again with the same command ends with
//! every (sample, output) written exactly once, and the judge is never
//! asked again what it answered; another manifest is refused; signatures
//! follow what changes numbers; `--repeats` shows the judge's noise;
//! resuming takes no more memory for more outcomes done.

use crate::common::{assay, output, read_json, repo, results, stderr};
use crate::judged::{ok, rag_row, Fixture};
use assay_test_server::{chat, judge, Recorded, Reply};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Metrics of the kill tests: three judge calls per row, plus a lexical
/// output written when the row is read.
const METRICS: &str = "faithfulness,context_precision,rouge";

/// A content-reading judge that answers as many requests as it is allowed,
/// then holds every later one unanswered, and notes any request whose body
/// it already answered.
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
}

#[derive(Default)]
struct GateState {
    allowed: usize,
    answered: HashSet<String>,
    repeated: Vec<String>,
}

impl Gate {
    fn fixture(self: &Arc<Self>) -> Fixture {
        let gate = Arc::clone(self);
        Fixture::new(move |req, _| gate.reply(req))
    }

    fn reply(&self, req: &Recorded) -> Reply {
        let body = req.body.to_string();
        let mut st = self.state.lock().unwrap();
        if st.answered.contains(&body) {
            st.repeated.push(body.clone());
        }
        if st.allowed == 0 {
            // Held past any test's end: the client sees a call in flight.
            return chat("{}").after(Duration::from_secs(3600));
        }
        st.allowed -= 1;
        st.answered.insert(body);
        judge::reply(req)
    }

    /// Lets `n` more requests through.
    fn allow(&self, n: usize) {
        self.state.lock().unwrap().allowed = n;
    }

    fn answered(&self) -> usize {
        self.state.lock().unwrap().answered.len()
    }

    fn allowance_spent(&self) -> bool {
        self.state.lock().unwrap().allowed == 0
    }

    fn repeated(&self) -> Vec<String> {
        self.state.lock().unwrap().repeated.clone()
    }
}

/// Distinct RAG rows (every judge request differs), one of two supported
/// statements each.
fn rows(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let mut row = rag_row();
            row["id"] = json!(format!("s{i}"));
            row["response"] = json!(format!(
                "The Eiffel Tower is in Paris. The Eiffel Tower is made of cheese number {i}"
            ));
            row["reference"] = json!(format!(
                "{}. Row {i} is here",
                row["reference"].as_str().unwrap()
            ));
            row
        })
        .collect()
}

/// Chat answers in the cache, as `assay cache stats` reports them.
fn cached_answers(cache: &Path) -> usize {
    let o = assay(
        &["cache", "stats", "--cache", cache.to_str().unwrap()],
        None,
    );
    ok(&o);
    let text = String::from_utf8(o.stdout).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("chat:"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no chat count in {text}"))
}

/// Polls `done` until it holds or `child` exits; panics after a generous
/// deadline. Returns the child's status if it exited.
fn wait_for(child: &mut Child, mut done: impl FnMut() -> bool) -> Option<ExitStatus> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if done() {
            return None;
        }
        assert!(Instant::now() < deadline, "the run never got there");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// (sample_id, metric, repeat) -> (status, value) of a run directory,
/// asserting that each key is there once.
fn outcomes(out: &Path) -> BTreeMap<(String, String, u64), (Value, Value)> {
    let mut map = BTreeMap::new();
    for r in results(out) {
        let key = (
            r["sample_id"].as_str().unwrap().to_string(),
            r["metric"].as_str().unwrap().to_string(),
            r["repeat"].as_u64().unwrap_or(0),
        );
        let value = (r["status"].clone(), r["value"].clone());
        assert!(map.insert(key.clone(), value).is_none(), "{key:?} twice");
    }
    map
}

/// The long per-call timeout keeps held calls in flight (never failed)
/// for as long as a round lasts.
const SLOW_CALLS: [&str; 2] = ["--timeout", "3000"];

#[test]
fn killed_runs_resume_without_asking_an_answered_request_again() {
    let data_rows = rows(8);
    let reference = Fixture::content_reading();
    let ref_data = reference.data(&data_rows);
    ok(&reference.eval(&ref_data, METRICS, "run", &[]));
    let want = outcomes(&reference.path("run"));
    assert_eq!(want.len(), 8 * 6, "rouge1/2/L/Lsum and two judged outputs");

    let gate = Arc::new(Gate::default());
    let fx = gate.fixture();
    let data = fx.data(&data_rows);
    let cache = fx.path("cache.sqlite");
    // SplitMix64-style steps from a fixed seed: random kill points that
    // reproduce.
    let mut seed: u64 = 0x5EED;
    let mut next = || {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let z = (seed ^ (seed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z ^ (z >> 31)
    };
    for round in 0..4 {
        gate.allow(1 + (next() % 5) as usize);
        let mut child = fx
            .command(&data, METRICS, "run", &SLOW_CALLS)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Killed once every answer it was allowed is durable in the cache.
        let exited = wait_for(&mut child, || {
            gate.allowance_spent() && cached_answers(&cache) == gate.answered()
        });
        assert!(exited.is_none(), "round {round}: the run ended on its own");
        child.kill().unwrap();
        child.wait().unwrap();
    }
    let partial = gate.answered();
    assert!(partial > 0 && partial < reference.chats().len());

    gate.allow(usize::MAX);
    let o = fx.eval(&data, METRICS, "run", &SLOW_CALLS);
    ok(&o);
    assert!(stderr(&o).contains("resuming the run"), "{}", stderr(&o));
    assert_eq!(outcomes(&fx.path("run")), want);
    assert_eq!(gate.repeated(), Vec::<String>::new());
    assert_eq!(
        gate.answered(),
        reference.chats().len(),
        "every request answered once, none more"
    );
    let summary = read_json(&fx.path("run/summary.json"));
    assert_eq!(summary["complete"], true);
    assert_eq!(
        scores(output(&summary, "faithfulness")),
        scores(output(
            &read_json(&reference.path("run/summary.json")),
            "faithfulness"
        ))
    );
}

/// An output's summary without its tokens and cost: those count the calls
/// of the invocation that wrote the summary (README), and a resumed run
/// asks fewer than one that ran through.
fn scores(output: &Value) -> Value {
    let mut v = output.clone();
    if let Some(o) = v.as_object_mut() {
        for usage in ["prompt_tokens", "completion_tokens", "cost"] {
            o.remove(usage);
        }
    }
    v
}

#[test]
fn a_torn_last_line_is_cut_and_redone_from_the_cache() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows(2));
    ok(&fx.eval(&data, "faithfulness,rouge", "run", &[]));
    let want = outcomes(&fx.path("run"));
    let sent = fx.server.count();
    let path = fx.path("run/results.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.trim_end().rfind('\n').unwrap() + 1;
    // The last line half written, as a process killed mid-write leaves it.
    let half = &text[last..last + (text.len() - last) / 2];
    std::fs::write(&path, format!("{}{half}", &text[..last])).unwrap();

    let o = fx.eval(&data, "faithfulness,rouge", "run", &[]);
    ok(&o);
    assert!(
        stderr(&o).contains(&format!("cut a torn last line ({} bytes)", half.len())),
        "{}",
        stderr(&o)
    );
    assert_eq!(outcomes(&fx.path("run")), want);
    assert_eq!(fx.server.count(), sent, "redone from the cache");
    let summary = read_json(&fx.path("run/summary.json"));
    assert_eq!(output(&summary, "faithfulness")["n_scored"], 2);
    assert_eq!(output(&summary, "rouge1")["n_scored"], 2);
}

#[test]
fn another_manifest_is_refused_and_force_new_moves_the_run_aside() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    ok(&fx.eval(&data, "faithfulness", "run", &[]));
    let before = std::fs::read(fx.path("run/results.jsonl")).unwrap();
    let contradictions = ["--set", "faithfulness.mode=contradictions"];
    let o = fx.eval(&data, "faithfulness", "run", &contradictions);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(r#"metrics[0].params.mode: "supported" -> "contradictions""#)
            && err.contains("metrics[0].signature: ")
            && err.contains("--force-new"),
        "{err}"
    );
    assert_eq!(std::fs::read(fx.path("run/results.jsonl")).unwrap(), before);

    let mut args = contradictions.to_vec();
    args.push("--force-new");
    let o = fx.eval(&data, "faithfulness", "run", &args);
    ok(&o);
    assert!(stderr(&o).contains("superseded-1"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(fx.path("run/superseded-1/results.jsonl")).unwrap(),
        before
    );
    assert!(fx.path("run/superseded-1/manifest.json").exists());
    let now = outcomes(&fx.path("run"));
    assert_eq!(now.len(), 1);
    assert_eq!(now.values().next().unwrap().1, 1.0, "judged anew");
}

#[test]
fn ctrl_c_stops_cleanly_and_the_same_command_finishes() {
    let gate = Arc::new(Gate::default());
    let fx = gate.fixture();
    let data = fx.data(&rows(4));
    gate.allow(2);
    let mut child = fx
        .command(&data, METRICS, "run", &SLOW_CALLS)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let cache = fx.path("cache.sqlite");
    let exited = wait_for(&mut child, || {
        gate.allowance_spent() && cached_answers(&cache) == gate.answered()
    });
    assert!(exited.is_none(), "the run ended on its own");
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = wait_for(&mut child, || false);
    let o = child.wait_with_output().unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("resume with the same command"),
        "{}",
        stderr(&o)
    );
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(printed["complete"], false);
    let summary = read_json(&fx.path("run/summary.json"));
    assert_eq!(summary, printed);
    // Lexical outcomes of the rows read are there, each once.
    let partial = outcomes(&fx.path("run"));
    assert!(partial.keys().any(|(_, m, _)| m == "rouge1"));
    assert!(partial.len() < 4 * 6);

    gate.allow(usize::MAX);
    ok(&fx.eval(&data, METRICS, "run", &SLOW_CALLS));
    let all = outcomes(&fx.path("run"));
    assert_eq!(all.len(), 4 * 6);
    assert!(partial.iter().all(|(k, v)| all.get(k) == Some(v)));
    assert_eq!(read_json(&fx.path("run/summary.json"))["complete"], true);
    assert_eq!(gate.repeated(), Vec::<String>::new());
}

#[test]
fn signatures_change_with_what_changes_numbers_only() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let signature = |out: &str, command: &mut Command| -> String {
        let o = command.output().unwrap();
        ok(&o);
        let manifest = read_json(&fx.path(&format!("{out}/manifest.json")));
        manifest["metrics"][0]["signature"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let run = |out: &str, extra: &[&str]| {
        signature(out, &mut fx.command(&data, "faithfulness", out, extra))
    };
    let base = run("base", &[]);
    assert_eq!(run("concurrency", &["--concurrency", "3"]), base);
    assert_ne!(
        run("param", &["--set", "faithfulness.mode=contradictions"]),
        base
    );
    assert_ne!(run("repeats", &["--repeats", "2"]), base);

    let prompts = fx.path("prompts");
    std::fs::create_dir(&prompts).unwrap();
    let name = "faithfulness_verdicts.json";
    let builtin =
        std::fs::read_to_string(repo().join("crates/assay-metrics/prompts").join(name)).unwrap();
    let edited = builtin.replacen("For each statement", "For every statement", 1);
    assert_ne!(edited, builtin);
    std::fs::write(prompts.join(name), edited).unwrap();
    assert_ne!(
        run("prompt", &["--prompts", prompts.to_str().unwrap()]),
        base
    );

    // Another judge model: the same command with the model name swapped.
    let plain = fx.command(&data, "faithfulness", "model", &[]);
    let mut other = Command::new(plain.get_program());
    other.args(plain.get_args().map(|a| {
        if a == "openai:judge-model" {
            std::ffi::OsStr::new("openai:other-model")
        } else {
            a
        }
    }));
    for (k, v) in plain.get_envs() {
        other.env(k, v.unwrap());
    }
    assert_ne!(signature("model", &mut other), base);

    let manifest = read_json(&fx.path("base/manifest.json"));
    let rev = manifest["git_revision"].as_str().unwrap_or_default();
    assert!(
        rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()),
        "built from a checkout: {manifest}"
    );
    assert_eq!(manifest["judge"]["sampling"]["repeats"], 1);
    assert!(manifest["judge"]["identity"]["model"] == "judge-model");
}

#[test]
fn repeats_report_the_judge_noise() {
    // Odd seeds find every statement supported: faithfulness 1 instead of
    // 0.5, so repeats 0, 1, 2 give 0.5, 1, 0.5.
    let fx = Fixture::new(|req, _| {
        let odd = req.body["seed"].as_u64().is_some_and(|s| s % 2 == 1);
        if odd && judge::prompt_name(req) == Some("faithfulness_verdicts") {
            let mut answer = judge::answer("faithfulness_verdicts", req.last_message());
            for v in answer["verdicts"].as_array_mut().unwrap() {
                v["verdict"] = json!("yes");
            }
            return chat(&answer.to_string());
        }
        judge::reply(req)
    });
    let data = fx.data(&rows(2));
    let repeats = ["--repeats", "3"];
    ok(&fx.eval(&data, "faithfulness", "run", &repeats));
    let got = outcomes(&fx.path("run"));
    for id in ["s0", "s1"] {
        for (repeat, want) in [(0, 0.5), (1, 1.0), (2, 0.5)] {
            let key = (id.to_string(), "faithfulness".to_string(), repeat);
            assert_eq!(got[&key].1, want, "{key:?}");
        }
    }
    // Each repeat asks for itself: statements and verdicts, per row.
    assert_eq!(fx.chats().len(), 2 * 3 * 2);
    let summary = read_json(&fx.path("run/summary.json"));
    let faith = output(&summary, "faithfulness");
    assert_eq!(faith["n_scored"], 6);
    assert!((faith["mean"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    let spread = &faith["repeats"];
    assert_eq!(spread["n"], 3);
    assert_eq!(spread["means"], json!([0.5, 1.0, 0.5]));
    assert_eq!(spread["max_minus_min"], 0.5);
    let std = spread["std_of_means"].as_f64().unwrap();
    assert!((std - (1.0f64 / 18.0).sqrt()).abs() < 1e-12, "{std}");
    let manifest = read_json(&fx.path("run/manifest.json"));
    assert_eq!(manifest["judge"]["sampling"]["repeats"], 3);

    // The same command again: a finished run, nothing asked.
    let sent = fx.server.count();
    ok(&fx.eval(&data, "faithfulness", "run", &repeats));
    assert_eq!(fx.server.count(), sent);
    assert_eq!(outcomes(&fx.path("run")), got);
    let outputs = |s: &Value| -> Vec<Value> {
        s["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(scores)
            .collect()
    };
    assert_eq!(
        outputs(&read_json(&fx.path("run/summary.json"))),
        outputs(&summary)
    );
}

#[test]
fn a_run_directory_is_held_by_one_process_at_a_time() {
    let gate = Arc::new(Gate::default());
    let fx = gate.fixture();
    let data = fx.data(&rows(4));
    let mut first = fx
        .command(&data, METRICS, "run", &SLOW_CALLS)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The directory is taken before the first judge call, and no call is
    // answered: the first run holds it for as long as the test needs.
    let exited = wait_for(&mut first, || !fx.chats().is_empty());
    assert!(exited.is_none(), "the first run ended on its own");

    let second = fx.eval(&data, METRICS, "run", &SLOW_CALLS);
    assert_eq!(second.status.code(), Some(2), "{}", stderr(&second));
    let err = stderr(&second);
    assert!(
        err.contains(&fx.path("run").display().to_string())
            && err.contains(&format!("pid {}", first.id())),
        "{err}"
    );
    let written = std::fs::read_to_string(fx.path("run/results.jsonl")).unwrap();
    assert!(
        written.lines().all(|l| !l.contains("faithfulness")),
        "only the first run writes: {written}"
    );

    // Killed hard, the holder leaves no stale lock: the next run resumes.
    first.kill().unwrap();
    first.wait().unwrap();
    gate.allow(usize::MAX);
    let third = fx.eval(&data, METRICS, "run", &SLOW_CALLS);
    ok(&third);
    assert!(
        stderr(&third).contains("resuming the run"),
        "{}",
        stderr(&third)
    );
    assert_eq!(outcomes(&fx.path("run")).len(), 4 * 6);
}

/// The most resident memory (bytes) the process `pid` has used so far
/// (VmHWM: its own, since it started its program).
fn vm_hwm(pid: u32) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"));
    kb * 1024
}

/// The most resident memory (bytes) `command`, an eval that resumes a
/// finished run of `n` outcomes, has used once it has read them back.
/// Its standard output is a pipe already full, so the run waits at its
/// summary, alive, until the test has read the figure; it says it has
/// read the run back on standard error.
fn memory_after_resuming(mut command: Command, n: usize) -> i64 {
    let (mut held, mut full) = std::io::pipe().unwrap();
    // SAFETY: F_GETPIPE_SZ reads the pipe's capacity; no memory is passed.
    let capacity = unsafe { libc::fcntl(full.as_raw_fd(), libc::F_GETPIPE_SZ) };
    full.write_all(&vec![b'.'; usize::try_from(capacity).unwrap()])
        .unwrap();
    let mut child = command.stdout(full).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains(&format!(": {n} outcomes kept\n")) {
        assert!(stderr.read_line(&mut said).unwrap() > 0, "{said}");
    }
    assert!(said.contains("resuming the run"), "{said}");
    let used = vm_hwm(child.id());
    // Lets the summary out: the pipe's last writer is the child's.
    drop(command);
    held.read_to_end(&mut Vec::new()).unwrap();
    stderr.read_to_string(&mut said).unwrap();
    assert!(child.wait().unwrap().success(), "{said}");
    used
}

/// The outcomes already written are read back one at a time, not held:
/// resuming a finished run of ten times the samples takes no more memory
/// for them. (Held, they took about 8 times the size of `results.jsonl`:
/// here 81 MB after reading back 8.4 MB of results, against 21 MB for
/// 0.8 MB; in the soak, bench/soak, 124 MiB for 38,000 outcomes.)
#[test]
fn resuming_takes_no_more_memory_for_more_outcomes_done() {
    let fx = Fixture::content_reading();
    // Long responses: faithfulness lists each of their 120 statements in
    // its details and reason, about 14 KB per outcome.
    let row = |i: usize| {
        let mut row = rag_row();
        row["id"] = json!(format!("s{i}"));
        let statements: Vec<String> = (0..120)
            .map(|k| format!("Statement {k} of sample {i} is one of many in this response"))
            .collect();
        row["response"] = json!(statements.join(". "));
        row.to_string()
    };
    let mut measured = Vec::new();
    for n in [60, 600] {
        let data = fx.path(&format!("data-{n}.jsonl"));
        let text: Vec<String> = (0..n).map(row).collect();
        std::fs::write(&data, text.join("\n")).unwrap();
        let out = format!("run-{n}");
        ok(&fx.eval(&data, "faithfulness", &out, &[]));
        let results = fx.path(&out).join("results.jsonl");
        let written = std::fs::read(&results).unwrap();
        let used = memory_after_resuming(fx.command(&data, "faithfulness", &out, &[]), n);
        assert_eq!(
            std::fs::read(&results).unwrap(),
            written,
            "nothing more written"
        );
        measured.push((written.len() as i64, used));
    }
    let [(small_bytes, small_used), (big_bytes, big_used)] = measured[..] else {
        unreachable!()
    };
    eprintln!(
        "resumed {small_bytes} bytes of results in {small_used} bytes of memory, {big_bytes} in {big_used}"
    );
    // Held, the 540 more outcomes took several times their size in
    // results.jsonl; read one at a time, none of it.
    let more_results = big_bytes - small_bytes;
    assert!(more_results > 4 << 20, "{more_results} bytes of results");
    assert!(
        big_used - small_used < more_results / 4,
        "resuming {big_bytes} bytes of results took {big_used} bytes of memory, {small_bytes} \
         took {small_used}"
    );
}
