//! Secrets and paths. With an API key in the environment, nothing a run
//! writes (run directory, cache and its logs, report, calibration) and
//! nothing it prints holds the key, whatever the judge answers: refusals,
//! 5xx and malformed answers that quote the key it was sent included, as
//! OpenAI's 401 and proxies echoing the `Authorization` header do. And no
//! sample id, parameter, prompt folder or output path makes `assay` write
//! outside the run directory and the cache's folder.

use crate::common::{stderr, walk};
use crate::judged::{rag_row, Fixture, KEY};
use assay_test_server::{chat, echo_credential, error, judge, Recorded, Reply};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Bytes of the key in a row that count as a leak: a key cut short (an
/// excerpt's limit) or masked but for a few characters still gives away
/// this much.
const LEAK_BYTES: usize = 10;

/// Where `bytes` hold the key, or any `LEAK_BYTES` of it in a row.
fn leak(bytes: &[u8]) -> Option<usize> {
    KEY.as_bytes()
        .windows(LEAK_BYTES)
        .find_map(|part| bytes.windows(part.len()).position(|w| w == part))
}

/// Asserts that no file under `dir` and nothing `outputs` printed holds
/// the key; returns what they hold, as text, to look for the echo in.
fn assert_key_nowhere(dir: &Path, outputs: &[&Output]) -> String {
    let mut seen = String::new();
    // Links are followed where they point, inside `dir`.
    let files = walk(dir)
        .into_iter()
        .filter(|p| !std::fs::symlink_metadata(p).unwrap().is_symlink());
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        if let Some(at) = leak(&bytes) {
            let around = &bytes[at.saturating_sub(80)..(at + 80).min(bytes.len())];
            panic!(
                "the key is in {} at byte {at}: {}",
                path.display(),
                String::from_utf8_lossy(around)
            );
        }
        seen.push_str(&String::from_utf8_lossy(&bytes));
    }
    for o in outputs {
        for (name, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
            if let Some(at) = leak(bytes) {
                panic!("the key is in {name} at byte {at}: {}", stderr(o));
            }
            seen.push_str(&String::from_utf8_lossy(bytes));
        }
    }
    seen
}

/// A judge that answers embeddings as the content-reading judge does and
/// chats with `chat_reply`.
fn chats_with(req: &Recorded, chat_reply: impl Fn(&Recorded) -> Reply) -> Reply {
    if req.path.ends_with("/embeddings") {
        judge::reply(req)
    } else {
        chat_reply(req)
    }
}

/// One way a judge quotes the key back, and what `assay eval` then does.
struct Echo {
    name: &'static str,
    reply: fn(&Recorded) -> Reply,
    /// The exit code of `assay eval`: 4 when it stops at once, 5 when it
    /// finishes with every call failed (nothing scored).
    code: i32,
    /// The kind of the failed outcomes, for a run that goes on.
    kind: Option<&'static str>,
    /// Text of the echo that must reach what the run writes or prints,
    /// so that the echo was seen and masked, not lost.
    shown: &'static str,
}

const ECHOES: [Echo; 8] = [
    Echo {
        name: "401 quoting the key",
        reply: |r| echo_credential(r, 401),
        code: 4,
        kind: None,
        shown: "Incorrect API key provided: ****",
    },
    Echo {
        name: "403 quoting the key",
        reply: |r| echo_credential(r, 403),
        code: 4,
        kind: None,
        shown: "Incorrect API key provided: ****",
    },
    Echo {
        name: "500 quoting the key",
        reply: |r| echo_credential(r, 500),
        code: 5,
        kind: Some("server"),
        shown: "Incorrect API key provided: ****",
    },
    Echo {
        name: "400 quoting the key",
        reply: |r| echo_credential(r, 400),
        code: 5,
        kind: Some("rejected"),
        shown: "Incorrect API key provided: ****",
    },
    Echo {
        // The key straddles the end of the excerpt an error detail keeps.
        name: "500 quoting the key across the excerpt's end",
        reply: |r| error(502, &format!("{}{}", ".".repeat(390), r.credential())),
        code: 5,
        kind: Some("server"),
        shown: "HTTP 502",
    },
    Echo {
        name: "200 whose answer quotes the key",
        reply: |r| chats_with(r, |r| chat(&format!("Your key is {}", r.credential()))),
        code: 5,
        kind: Some("parse"),
        shown: "Your key is ****",
    },
    Echo {
        // A gateway flattening its refusal into the message, where a
        // completion has an object: the parser's error quotes it.
        name: "200 whose body quotes the key where a completion's fields go",
        reply: |r| {
            chats_with(r, |r| {
                Reply::json(
                    200,
                    json!({"choices": [{"message": format!("denied: Bearer {}", r.credential())}]}),
                )
            })
        },
        code: 5,
        kind: Some("invalid_response"),
        shown: "denied: Bearer ****",
    },
    Echo {
        // A header line without a colon: the HTTP parser's error quotes it.
        name: "malformed head quoting the key",
        reply: |r| {
            Reply::raw(format!(
                "HTTP/1.1 200 OK\r\nx-echo Bearer {}\r\ncontent-length: 2\r\n\r\n{{}}",
                r.credential()
            ))
        },
        code: 5,
        kind: Some("connection"),
        shown: "x-echo Bearer ****",
    },
];

fn rows() -> Vec<Value> {
    (0..3)
        .map(|i| {
            let mut row = rag_row();
            row["id"] = json!(format!("s{i}"));
            row["response"] = json!(format!("The Eiffel Tower is {} metres tall.", 300 + i));
            row
        })
        .collect()
}

fn report(run: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["report", run.to_str().unwrap()])
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap()
}

/// Against each judge of [`ECHOES`], `assay eval` of a chat metric and an
/// embedding one, then `assay report`: the run ends as documented, the
/// echo shows masked, and the key is in no file of the run, the cache, its
/// logs or the report, nor on stdout or stderr.
#[test]
fn a_judge_quoting_the_key_back_leaves_it_in_no_file_and_no_message() {
    for echo in ECHOES {
        let fx = Fixture::new(move |r, _| (echo.reply)(r));
        let data = fx.data(&rows());
        let o = fx.eval(
            &data,
            "faithfulness,semantic_similarity",
            "run",
            &["--concurrency", "1"],
        );
        assert_eq!(
            o.status.code(),
            Some(echo.code),
            "{}: {}",
            echo.name,
            stderr(&o)
        );
        assert!(
            fx.server.requests().iter().all(|r| r.credential() == KEY),
            "{}: the judge was sent the key",
            echo.name
        );
        let mut outputs = vec![o];
        if let Some(kind) = echo.kind {
            let kinds: Vec<Value> = crate::common::results(&fx.path("run"))
                .iter()
                .map(|r| r["error"]["kind"].clone())
                .collect();
            assert!(kinds.contains(&json!(kind)), "{}: {kinds:?}", echo.name);
            let r = report(&fx.path("run"));
            assert!(r.status.success(), "{}: {}", echo.name, stderr(&r));
            assert!(fx.path("run/report.html").exists());
            outputs.push(r);
        }
        let seen = assert_key_nowhere(fx.dir.path(), &outputs.iter().collect::<Vec<_>>());
        assert!(
            seen.contains(echo.shown),
            "{}: {:?} is not among what the run wrote or printed",
            echo.name,
            echo.shown
        );
    }
}

/// `assay ARGS` with the key in the environment, `ASSAY_HOME` at `home`,
/// run in `cwd`.
fn assay_in(cwd: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .current_dir(cwd)
        .env("OPENAI_API_KEY", KEY)
        .env("ASSAY_HOME", home)
        .output()
        .unwrap()
}

/// A healthy judge, every command that writes: `assay eval --report`, its
/// resumed rerun from the cache, `assay report`, `assay calibrate`,
/// `assay cache stats`. The judge was sent the key; it is in no file and
/// no output.
#[test]
fn every_command_of_a_healthy_run_leaves_the_key_nowhere() {
    let fx = Fixture::content_reading();
    let data = fx.data(&rows());
    let metrics = "faithfulness,answer_relevancy,context_recall,semantic_similarity";
    let first = fx.eval(&data, metrics, "run", &["--report"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let rerun = fx.eval(&data, metrics, "run", &[]);
    assert!(rerun.status.success(), "{}", stderr(&rerun));
    let sent = fx.server.count();
    assert!(sent > 0 && fx.server.requests().iter().all(|r| r.credential() == KEY));
    let report = report(&fx.path("run"));
    assert!(report.status.success(), "{}", stderr(&report));
    let (base_url, cache) = (fx.server.base_url(), fx.path("cache.sqlite"));
    let calibrate = assay_in(
        fx.dir.path(),
        fx.dir.path(),
        &[
            "calibrate",
            "--set",
            "ragtruth",
            "--limit",
            "4",
            "-m",
            "faithfulness",
            "--judge",
            "openai:judge-model",
            "--base-url",
            &base_url,
            "--cache",
            cache.to_str().unwrap(),
            "--out",
            fx.path("calibration").to_str().unwrap(),
        ],
    );
    assert!(calibrate.status.success(), "{}", stderr(&calibrate));
    assert!(fx.path("calibration/calibration.json").exists());
    assert!(fx.server.count() > sent, "calibration asked the judge");
    let stats = assay_in(
        fx.dir.path(),
        fx.dir.path(),
        &["cache", "--cache", cache.to_str().unwrap(), "stats"],
    );
    assert!(stats.status.success(), "{}", stderr(&stats));
    let outputs = [&first, &rerun, &report, &calibrate, &stats];
    assert_key_nowhere(fx.dir.path(), &outputs);
}

/// What a folder holds: each file's bytes, each link's target.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    walk(dir)
        .into_iter()
        .map(|path| {
            let held = match std::fs::read_link(&path) {
                Ok(target) => target.into_os_string().into_encoded_bytes(),
                Err(_) => std::fs::read(&path).unwrap(),
            };
            (path, held)
        })
        .collect()
}

/// Sample ids that are paths (up and out of the run directory, absolute,
/// with separators, NUL, `.` and `..`), a parameter naming a path, a
/// prompt folder holding a link to a prompt elsewhere and a link to a
/// folder elsewhere, relative `--out` paths, `--report`, `--batch export`,
/// `--force-new` and `assay report`: every file that appears or changes
/// under the scratch folder is in a run directory or the cache's folder
/// (`ASSAY_HOME`), and nothing appears where the ids point.
#[test]
fn no_input_id_parameter_or_prompt_folder_makes_assay_write_outside_the_run_and_the_cache() {
    let fx = Fixture::content_reading();
    let root = fx.dir.path().canonicalize().unwrap();
    let (work, home, elsewhere) = (root.join("work"), root.join("home"), root.join("elsewhere"));
    for dir in [&work, &home, &elsewhere] {
        std::fs::create_dir(dir).unwrap();
    }
    // Beyond the scratch folder: only its absence can be checked.
    let beyond = std::env::temp_dir().join(format!("assay-escape-{}", std::process::id()));
    let abs = root.join("escaped-abs");
    let ids = [
        "../../../escaped-rel".to_owned(),
        format!("../../../../../../../../../..{}", beyond.display()),
        abs.display().to_string(),
        "a/b\\c".to_owned(),
        "nul\u{0}id/..".to_owned(),
        "..".to_owned(),
        ".".to_owned(),
        "~/escaped-home".to_owned(),
    ];
    let rows: Vec<Value> = ids
        .iter()
        .map(|id| {
            let mut row = rag_row();
            row["id"] = json!(id);
            row
        })
        .collect();
    let data = work.join("data.jsonl");
    let lines: Vec<String> = rows.iter().map(Value::to_string).collect();
    std::fs::write(&data, lines.join("\n")).unwrap();
    // A prompt override that is a link to a file elsewhere, and a link
    // to a folder elsewhere.
    let builtin = crate::common::repo().join("crates/assay-metrics/prompts/statements.json");
    let mut prompt: Value = serde_json::from_slice(&std::fs::read(builtin).unwrap()).unwrap();
    prompt["version"] = json!(7);
    let linked = elsewhere.join("statements.json");
    std::fs::write(&linked, prompt.to_string()).unwrap();
    let prompts = work.join("prompts");
    std::fs::create_dir(&prompts).unwrap();
    std::os::unix::fs::symlink(&linked, prompts.join("statements.json")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, prompts.join("..escape")).unwrap();

    let before = snapshot(&root);
    let base_url = fx.server.base_url();
    let eval = |out: &str, metrics: &str, extra: &[&str]| {
        let mut args = vec!["eval", "data.jsonl", "-m", metrics, "--out", out];
        args.extend_from_slice(&[
            "--judge",
            "openai:judge-model",
            "--embedder",
            "openai:embed-model",
            "--base-url",
            &base_url,
            "--prompts",
            "prompts",
            "--format",
            "json",
        ]);
        args.extend_from_slice(extra);
        assay_in(&work, &home, &args)
    };
    // A parameter whose name is a path is refused before anything is
    // written; one whose value is a path is only text.
    let refused = eval(
        "runs/refused",
        "aspect_critique",
        &["--set", "aspect_critique.aspect.../../escaped-param=Is it?"],
    );
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("snake_case"),
        "{}",
        stderr(&refused)
    );
    let param = [
        "--set",
        "aspect_critique.aspects=none",
        "--set",
        "aspect_critique.aspect.escaped=Is it ../../escaped-param?",
    ];
    let metrics = "faithfulness,semantic_similarity,aspect_critique,rouge";
    let mut outputs = vec![eval(
        "runs/r",
        metrics,
        &[&param[..], &["--report"]].concat(),
    )];
    outputs.push(eval("runs/r", "faithfulness", &["--force-new"]));
    outputs.push(eval(
        "runs/../runs/batch",
        "context_recall",
        &["--batch", "export"],
    ));
    outputs.push(assay_in(&work, &home, &["report", "runs/r"]));
    for o in &outputs {
        assert!(o.status.success(), "{}", stderr(o));
    }
    outputs.push(refused);
    assert_key_nowhere(&root, &outputs.iter().collect::<Vec<_>>());

    // Every id was scored, with the prompt the link points to.
    let scored: BTreeSet<String> = crate::common::results(&work.join("runs/r/superseded-1"))
        .iter()
        .filter(|r| r["metric"] == "faithfulness" && r["status"] == "scored")
        .map(|r| r["sample_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(scored, ids.iter().cloned().collect());
    let manifest = crate::common::read_json(&work.join("runs/r/manifest.json"));
    let statements = manifest["judge"]["prompts"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["id"] == "statements"));
    assert_eq!(
        statements.map(|p| &p["version"]),
        Some(&json!(7)),
        "{manifest}"
    );

    let runs = work.join("runs");
    let after = snapshot(&root);
    let changed: Vec<&PathBuf> = after
        .iter()
        .filter(|(path, held)| before.get(*path) != Some(held))
        .map(|(path, _)| path)
        .collect();
    assert!(
        changed.iter().any(|p| p.starts_with(&home)),
        "the cache is in ASSAY_HOME"
    );
    let outside: Vec<&&PathBuf> = changed
        .iter()
        .filter(|p| !p.starts_with(&runs) && !p.starts_with(&home))
        .collect();
    assert!(
        outside.is_empty(),
        "written outside the runs and the cache: {outside:?}"
    );
    let gone: Vec<&PathBuf> = before.keys().filter(|p| !after.contains_key(*p)).collect();
    assert!(gone.is_empty(), "removed: {gone:?}");
    assert!(!beyond.exists() && !abs.exists());
}
