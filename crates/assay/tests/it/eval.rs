use crate::common::{assay, read_json, repo, results, stderr};
use serde_json::Value;

#[test]
fn bundled_example_scores_every_row_and_skips_the_one_without_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let example = repo().join("examples/rag_qa.jsonl");
    let o = assay(
        &[
            "eval",
            example.to_str().unwrap(),
            "--metrics",
            "rouge,bleu,chrf,exact_match",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(
        table.lines().next().unwrap().starts_with("metric"),
        "{table}"
    );
    let rows = results(&out);
    // 10 rows x (4 rouge types + bleu + chrf + exact_match)
    assert_eq!(rows.len(), 70);
    for r in &rows {
        assert_eq!(r["format_version"], 1);
        match r["status"].as_str().unwrap() {
            "scored" => {
                let v = r["value"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&v), "{r}");
            }
            "skipped" => {
                assert_eq!(r["sample_id"], "q8");
                assert!(r["reason"].as_str().unwrap().contains("'reference'"), "{r}");
            }
            other => panic!("unexpected status {other}: {r}"),
        }
    }
    let exact: Vec<&Value> = rows
        .iter()
        .filter(|r| r["metric"] == "exact_match" && r["status"] == "scored")
        .collect();
    assert_eq!(
        exact.iter().filter(|r| r["value"] == 1.0).count(),
        1,
        "only q7 matches exactly"
    );
    let summary = read_json(&out.join("summary.json"));
    let rouge1 = summary["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "rouge1")
        .unwrap();
    assert_eq!(
        (rouge1["n_scored"].as_u64(), rouge1["n_skipped"].as_u64()),
        (Some(9), Some(1))
    );
    let mean = rouge1["mean"].as_f64().unwrap();
    let (lo, hi) = (
        rouge1["ci95"]["low"].as_f64().unwrap(),
        rouge1["ci95"]["high"].as_f64().unwrap(),
    );
    assert!(lo <= mean && mean <= hi, "{rouge1}");
    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["input"]["sha256"].as_str().unwrap().len(), 64);
    let sigs: Vec<&str> = manifest["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["signature"].as_str().unwrap())
        .collect();
    let v = env!("CARGO_PKG_VERSION");
    assert_eq!(
        sigs[0],
        format!("rouge|v1|stem:no|tok:rouge-score|multiref:max|assay:{v}")
    );
    assert_eq!(sigs[1], format!("bleu|v1|tok:regex|weights:0.25,0.25,0.25,0.25|smooth:method0|tiny:zero|ref:nltk-3.10.4|assay:{v}"));
}

#[test]
fn signatures_follow_parameters() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let example = repo().join("examples/rag_qa.jsonl");
    let o = assay(
        &[
            "eval",
            example.to_str().unwrap(),
            "-m",
            "rouge,bleu",
            "--set",
            "rouge.use_stemmer=true",
            "--set",
            "bleu.smoothing=method1",
            "--set",
            "bleu.weights=0.5,0.5",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest = read_json(&out.join("manifest.json"));
    let m = manifest["metrics"].as_array().unwrap();
    assert!(m[0]["signature"]
        .as_str()
        .unwrap()
        .contains("|stem:porter-nltk|"));
    assert!(m[1]["signature"]
        .as_str()
        .unwrap()
        .contains("|weights:0.5,0.5|smooth:method1|"));
    assert_eq!(m[1]["params"]["weights"], serde_json::json!([0.5, 0.5]));
}

const BAD: &str = "{\"id\": \"ok1\", \"answer\": \"a b c\", \"ground_truth\": \"a b c\"}\n\
{\"id\": \"broken\", \"answer\": \n\
{\"id\": \"typed\", \"answer\": [\"not\", \"text\"], \"ground_truth\": \"x\"}\n\
{\"id\": \"ok2\", \"answer\": \"d e\", \"ground_truth\": \"d f\"}\n";

#[test]
fn bad_rows_fail_alone_with_file_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("bad.jsonl");
    std::fs::write(&data, BAD).unwrap();
    let out = tmp.path().join("run");
    let o = assay(
        &[
            "eval",
            data.to_str().unwrap(),
            "-m",
            "exact_match",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = results(&out);
    let status: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["sample_id"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        status,
        [
            ("ok1", "scored"),
            ("2", "failed"),
            ("3", "failed"),
            ("ok2", "scored")
        ]
    );
    assert_eq!(rows[1]["error"]["kind"], "input");
    let msg = rows[1]["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!("{}:2: invalid JSON", data.display())),
        "{msg}"
    );
    let msg = rows[2]["error"]["message"].as_str().unwrap();
    assert!(
        msg.ends_with(":3: field 'answer': expected a string, got a list"),
        "{msg}"
    );
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["outputs"][0]["failed_by_kind"]["input"], 2);
}

#[test]
fn strict_stops_at_the_first_bad_row_with_exit_code_2() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("bad.jsonl");
    std::fs::write(&data, BAD).unwrap();
    let out = tmp.path().join("run");
    let o = assay(
        &[
            "eval",
            data.to_str().unwrap(),
            "-m",
            "exact_match",
            "--strict",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}:2: invalid JSON", data.display())),
        "{err}"
    );
    let rows = results(&out);
    assert_eq!(rows.len(), 1, "the row before the bad one is kept");
    assert_eq!(rows[0]["sample_id"], "ok1");
}

#[test]
fn stdin_csv_and_json_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let csv =
        "question,answer,ground_truths\nq,Paris is big,\"[\"\"Paris is big\"\", \"\"Lyon\"\"]\"\n";
    let o = assay(
        &[
            "eval",
            "-",
            "--input-format",
            "csv",
            "-m",
            "string_similarity,string_presence",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
        ],
        Some(csv.as_bytes()),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["rows"], 1);
    assert_eq!(summary["outputs"][0]["mean"], 1.0);
    let rows = results(&out);
    assert_eq!(rows[0]["details"]["best_reference"], 0);
    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["input"]["path"], "-");
}

#[test]
fn usage_errors_exit_2_and_say_what_is_wrong() {
    let example = repo().join("examples/rag_qa.jsonl");
    let ex = example.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["eval", ex, "-m", "rouge,nope"],
            "unknown metric 'nope'",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--set", "rouge.stem=true"],
            "--set rouge.stem: rouge has no parameter 'stem' (known: types, use_stemmer, tokenizer)",
        ),
        (
            vec!["eval", ex, "-m", "bleu", "--set", "bleu.smoothing=method9"],
            "bleu.smoothing=method9",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--set", "rouge.types=rouge0"],
            "rouge.types=rouge0",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--set", "bleu.weights=1"],
            "--set bleu.weights=1: metric 'bleu' is not among the metrics of the run",
        ),
        (
            vec!["eval", "/nonexistent.jsonl", "-m", "rouge"],
            "/nonexistent.jsonl",
        ),
        // The judge options, as their declaration parses and checks them,
        // whether or not a metric calls the judge.
        (
            vec!["eval", ex, "-m", "rouge", "--concurrency", "many"],
            "--concurrency <N>",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--concurrency", "0"],
            "--concurrency: must be at least 1",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--timeout", "0"],
            "--timeout: must be a positive number of seconds",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--max-tokens", "0"],
            "--max-tokens: must be at least 1",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--grounding-label", "yes"],
            "--grounding-label: names a label of the grounding model",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--price", "gpt=cheap"],
            "gpt=cheap",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--cache", "c.sqlite", "--no-cache"],
            "cannot be used with",
        ),
        (
            vec!["eval", ex, "-m", "rouge", "--reasons", "long"],
            "[possible values: composed, llm]",
        ),
    ] {
        let o = assay(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn an_existing_run_is_never_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let example = repo().join("examples/rag_qa.jsonl");
    let args = [
        "eval",
        example.to_str().unwrap(),
        "-m",
        "exact_match",
        "--out",
        out.to_str().unwrap(),
    ];
    assert!(assay(&args, None).status.success());
    let before = std::fs::read(out.join("results.jsonl")).unwrap();
    // The same command finds the run finished: nothing is written again.
    let o = assay(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), before);
    // Another manifest is refused, naming what differs.
    let mut other = args;
    other[3] = "string_presence";
    let o = assay(&other, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(r#"metrics[0].id: "exact_match" -> "string_presence""#)
            && err.contains("--force-new"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("results.jsonl")).unwrap(), before);
}

#[test]
fn progress_shows_on_a_terminal_only() {
    let tmp = tempfile::tempdir().unwrap();
    let example = repo().join("examples/rag_qa.jsonl");
    let quiet = assay(
        &[
            "eval",
            example.to_str().unwrap(),
            "-m",
            "bleu",
            "--out",
            tmp.path().join("a").to_str().unwrap(),
        ],
        None,
    );
    assert!(
        !stderr(&quiet).contains("ETA"),
        "no progress bar when stderr is not a terminal"
    );
    // `script` (util-linux) runs the command on a pseudo-terminal.
    let cmd = format!(
        "{} eval {} -m bleu --out {}",
        env!("CARGO_BIN_EXE_assay"),
        example.display(),
        tmp.path().join("b").display()
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let screen = String::from_utf8_lossy(&o.stdout);
    assert!(
        screen.contains("100% 10 rows") && screen.contains("ETA 0:00:00"),
        "{screen}"
    );
}
