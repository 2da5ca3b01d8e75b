//! The bundled multilingual example (`examples/multilingual.jsonl`):
//! every grounding metric, with the default judge, is right on each row
//! of a language the grounding verdict reads, and skips each row of
//! another language naming it; `--language` says the language instead.

use crate::common::{eval, repo, results, stderr};
use serde_json::Value;
use std::collections::BTreeMap;

const METRICS: &str =
    "faithfulness,context_recall,context_precision,hallucination,answer_correctness";

/// What a person sees at a glance, per metric: the row's `meta.expected`.
fn expected(row: &Value, metric: &str) -> bool {
    let e = &row["meta"]["expected"];
    match metric {
        "faithfulness" => e["faithful"].as_bool().unwrap(),
        "context_recall" | "context_precision" => e["context_useful"].as_bool().unwrap(),
        "hallucination" => e["contradicts_context"].as_bool().unwrap(),
        "answer_correctness" => e["correct"].as_bool().unwrap(),
        other => panic!("{other}"),
    }
}

fn rows() -> BTreeMap<String, Value> {
    std::fs::read_to_string(repo().join("examples/multilingual.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["id"].as_str().unwrap().to_string(), r))
        .collect()
}

/// The example's rows in `language`, written to `dir/LANGUAGE.jsonl`.
fn rows_in(dir: &std::path::Path, language: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{language}.jsonl"));
    let lines: Vec<String> = rows()
        .values()
        .filter(|r| r["meta"]["language"] == language)
        .map(Value::to_string)
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

#[test]
fn the_grounding_metrics_are_right_or_skip_naming_the_language() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = eval(
        &repo().join("examples/multilingual.jsonl"),
        METRICS,
        &out,
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = rows();
    let mut checked: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in results(&out) {
        let row = &rows[r["sample_id"].as_str().unwrap()];
        let language = row["meta"]["language"].as_str().unwrap();
        let metric = r["metric"].as_str().unwrap();
        let tally = checked.entry(if ["en", "fr", "de", "es"].contains(&language) {
            "read"
        } else {
            "skipped"
        });
        match language {
            "en" | "fr" | "de" | "es" => {
                assert_eq!(r["status"], "scored", "{r}");
                let high = r["value"].as_f64().unwrap() >= 0.5;
                // Hallucination is high when the response contradicts.
                assert_eq!(
                    high,
                    expected(row, metric),
                    "{metric} on {}: {r}",
                    row["id"]
                );
                tally.or_default().0 += 1;
            }
            _ => {
                assert_eq!(r["status"], "skipped", "{r}");
                let name = match language {
                    "zh" => "Mandarin",
                    "ja" => "Japanese",
                    _ => "Arabic",
                };
                let reason = r["reason"].as_str().unwrap();
                assert!(
                    reason.starts_with(&format!("unsupported_language: {name}: ")),
                    "{reason}"
                );
                tally.or_default().1 += 1;
            }
        }
    }
    // 4 languages and 3 others, 6 rows each, 5 metrics.
    assert_eq!(checked["read"].0, 4 * 6 * 5);
    assert_eq!(checked["skipped"].1, 3 * 6 * 5);
}

#[test]
fn a_language_given_for_every_row_is_read_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = rows_in(dir.path(), "de");
    let out = dir.path().join("run");
    let o = eval(&data, "faithfulness", &out, &["--language", "German"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let scored = results(&out)
        .iter()
        .filter(|r| r["status"] == "scored")
        .count();
    assert_eq!(scored, 6);
    // Read as English, the German negation is not one.
    let out = dir.path().join("run-en");
    let o = eval(&data, "faithfulness", &out, &["--language", "en"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let negated = results(&out)
        .into_iter()
        .find(|r| r["sample_id"] == "de-negated")
        .unwrap();
    assert_eq!(negated["value"], 1.0, "{negated}");
    let o = eval(
        &data,
        "faithfulness",
        &dir.path().join("zh"),
        &["--language", "zh"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "--language: zh: the grounding verdict reads English, French, German, Spanish"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_run_whose_metric_skips_every_row_exits_5_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = rows_in(dir.path(), "zh");
    let out = dir.path().join("run");
    let o = eval(&data, "faithfulness,rouge", &out, &[]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("nothing scored: "))
        .collect();
    // ROUGE reads any script: only faithfulness scored nothing.
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("nothing scored: faithfulness: 6 skipped, 0 failed (first, row "),
        "{err}"
    );
    assert!(lines[0].contains("unsupported_language: Mandarin"), "{err}");
    // The run is kept whole: the same command resumes it with the same verdict.
    let again = eval(&data, "faithfulness,rouge", &out, &[]);
    assert_eq!(again.status.code(), Some(5), "{}", stderr(&again));
}
