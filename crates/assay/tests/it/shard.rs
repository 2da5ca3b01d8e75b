//! `eval --shard K/N` and `assay merge`: the shards of the parity set, and
//! of a judged run against the loopback judge, merged, are the unsharded run.

use crate::common::{assay, output, read_json, repo, results, stderr};
use crate::judged::{finished, ok, rag_row, Fixture};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

fn eval(data: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "eval",
        data.to_str().unwrap(),
        "-m",
        "rouge,bleu,chrf",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    assay(&args, None)
}

/// Shard `k` of each of `ks` run into `tmp/shard-K`, each with `extra`;
/// the manifests record their shard.
fn shards(data: &Path, tmp: &Path, ks: &[&str], extra: &[&str]) -> Vec<PathBuf> {
    ks.iter()
        .map(|k| {
            let dir = tmp.join(format!("shard-{}", &k[..1]));
            ok(&eval(data, &dir, &[&["--shard", k][..], extra].concat()));
            assert_eq!(read_json(&dir.join("manifest.json"))["shard"], *k);
            dir
        })
        .collect()
}

fn merge(dirs: &[PathBuf], out: &Path) -> Output {
    merge_with(dirs, out, &[])
}

fn merge_with(dirs: &[PathBuf], out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["merge"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    assay(&args, None)
}

#[test]
fn three_shards_merged_equal_the_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("public.jsonl");
    std::fs::copy(
        repo().join("crates/assay-text/tests/data/parity/public.jsonl"),
        &data,
    )
    .unwrap();
    let full = tmp.path().join("full");
    ok(&eval(&data, &full, &["--set", "bleu.smoothing=method3"]));
    // Given out of order: merge orders by row.
    let shards = shards(
        &data,
        tmp.path(),
        &["3/3", "1/3", "2/3"],
        &["--set", "bleu.smoothing=method3"],
    );
    let whole = results(&full);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for dir in &shards {
        let ids: BTreeSet<String> = results(dir)
            .iter()
            .map(|r| r["sample_id"].as_str().unwrap().to_string())
            .collect();
        assert!(ids.len() > 300, "{}: {} samples", dir.display(), ids.len());
        assert!(seen.is_disjoint(&ids), "a sample is in two shards");
        seen.extend(ids);
    }
    assert_eq!(seen.len() * 6, whole.len(), "every sample is in a shard");

    let merged = tmp.path().join("merged");
    ok(&merge(&shards, &merged));
    assert_eq!(results(&merged), whole);

    let (a, b) = (
        read_json(&full.join("summary.json")),
        read_json(&merged.join("summary.json")),
    );
    assert_eq!(a["rows"], b["rows"]);
    let names: Vec<&str> = a["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 6);
    for name in names {
        let (x, y) = (output(&a, name), output(&b, name));
        for key in [
            "n_scored",
            "n_skipped",
            "n_failed",
            "metric",
            "direction",
            "min",
            "max",
        ] {
            assert_eq!(x[key], y[key], "{name} {key}");
        }
        for key in ["mean", "std"] {
            let (u, v) = (x[key].as_f64().unwrap(), y[key].as_f64().unwrap());
            assert!((u - v).abs() <= 1e-12, "{name} {key}: {u} vs {v}");
        }
        assert_eq!(x["ci95"], y["ci95"], "{name}");
    }
    // Corpus scores need every row's statistics: merge scores them again
    // over the input, with the run's parameters (a non-default smoothing).
    assert_eq!(a["corpus"].as_array().unwrap().len(), 2, "{}", a["corpus"]);
    assert_eq!(b["corpus"], a["corpus"]);
    assert!(b.get("corpus_note").is_none());
    let manifest = read_json(&merged.join("manifest.json"));
    assert!(manifest.get("shard").is_none());
    assert_eq!(manifest["merged_from"].as_array().unwrap().len(), 3);
    assert_eq!(
        manifest["metrics"],
        read_json(&full.join("manifest.json"))["metrics"]
    );

    // An input that changed since the shards ran is not read: the corpus
    // scores are missing, and the summary says why.
    let original = std::fs::read_to_string(&data).unwrap();
    let mut text = original.clone();
    text.push_str(r#"{"id": "late", "response": "a b", "reference": "a b"}"#);
    std::fs::write(&data, text).unwrap();
    let again = tmp.path().join("merged-again");
    ok(&merge(&shards, &again));
    let c = read_json(&again.join("summary.json"));
    assert_eq!(c["corpus"], Value::Array(Vec::new()));
    assert!(
        c["corpus_note"]
            .as_str()
            .unwrap()
            .contains("changed since the shards ran"),
        "{}",
        c["corpus_note"]
    );

    // The shards ran elsewhere: `--input` names this machine's copy.
    let copy = tmp.path().join("copy-of-public.jsonl");
    std::fs::write(&copy, &original).unwrap();
    let elsewhere = tmp.path().join("merged-elsewhere");
    ok(&merge_with(
        &shards,
        &elsewhere,
        &["--input", copy.to_str().unwrap()],
    ));
    let d = read_json(&elsewhere.join("summary.json"));
    assert_eq!(d["corpus"], a["corpus"]);
    assert_eq!(
        read_json(&elsewhere.join("manifest.json"))["input"]["path"],
        copy.to_str().unwrap()
    );
}

#[test]
fn merge_refuses_what_is_not_one_run_in_whole_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data.jsonl");
    std::fs::write(
        &data,
        (1..=20)
            .map(|i| format!("{{\"id\": \"q{i}\", \"response\": \"a b c {i}\", \"reference\": \"a b d {i}\"}}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let dir = |name: &str| tmp.path().join(name);
    ok(&eval(&data, &dir("one"), &["--shard", "1/2"]));
    ok(&eval(&data, &dir("two"), &["--shard", "2/2"]));
    ok(&eval(
        &data,
        &dir("two-smoothed"),
        &["--shard", "2/2", "--set", "bleu.smoothing=method1"],
    ));
    ok(&eval(&data, &dir("other-n"), &["--shard", "2/3"]));
    ok(&eval(&data, &dir("whole"), &[]));

    let refused = |dirs: &[&str], says: &str| {
        let dirs: Vec<PathBuf> = dirs.iter().map(|d| dir(d)).collect();
        let o = merge(&dirs, &dir("merged"));
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{says}: {}", stderr(&o));
        assert!(!dir("merged").exists());
    };
    refused(
        &["one", "two-smoothed"],
        "differ at /metrics/1/params/smoothing",
    );
    refused(&["one"], "shards missing: 2/2");
    refused(&["one", "one"], "shard 1/2 is given twice");
    refused(&["one", "other-n"], "different N");
    refused(&["one", "whole"], "not run with --shard");

    ok(&merge(&[dir("two"), dir("one")], &dir("merged")));
    assert_eq!(results(&dir("merged")), results(&dir("whole")));
}

#[test]
fn judged_shards_merged_equal_the_unsharded_run() {
    let fx = Fixture::content_reading();
    let rows: Vec<Value> = (0..12)
        .map(|i| {
            let mut row = rag_row();
            row["id"] = json!(format!("s{i}"));
            if i % 3 == 0 {
                row["response"] = json!(format!("Paris is the capital of France. Row {i}"));
            }
            row
        })
        .collect();
    let data = fx.data(&rows);
    let (a, b) = shards_merged_equal_the_whole(
        &fx,
        &data,
        "faithfulness,context_precision,rouge",
        &["faithfulness", "context_precision", "rouge1"],
        12 * 6,
    );
    // The harmonic mean of the judged means, from the merged means.
    assert!(
        a["ragas_score"]["value"].as_f64().is_some(),
        "{}",
        a["ragas_score"]
    );
    assert_eq!(a["ragas_score"]["metrics"], b["ragas_score"]["metrics"]);
    let (u, v) = (
        a["ragas_score"]["value"].as_f64().unwrap(),
        b["ragas_score"]["value"].as_f64().unwrap(),
    );
    assert!((u - v).abs() <= 1e-12, "ragas_score: {u} vs {v}");
}

/// Runs `metrics` over `data` whole and in three shards, merges the
/// shards, and checks that the merged run is the whole one: the same
/// records (`n_records` of them), in row order, and for each of `outputs`
/// the same count and mean. Returns both summaries.
fn shards_merged_equal_the_whole(
    fx: &Fixture,
    data: &Path,
    metrics: &str,
    outputs: &[&str],
    n_records: usize,
) -> (Value, Value) {
    // A shard may hold no row a metric scores.
    finished(&fx.eval(data, metrics, "full", &[]), &fx.path("full"));
    let shards: Vec<PathBuf> = (1..=3)
        .map(|k| {
            let name = format!("shard-{k}");
            let o = fx.eval(data, metrics, &name, &["--shard", &format!("{k}/3")]);
            finished(&o, &fx.path(&name));
            fx.path(&name)
        })
        .collect();
    let merged = fx.path("merged");
    ok(&merge(&shards, &merged));

    // The judged loop writes in completion order: compare per record.
    let by_key = |dir: &Path| -> BTreeMap<(String, String), Value> {
        results(dir)
            .into_iter()
            .map(|r| {
                let key = (r["sample_id"].to_string(), r["metric"].to_string());
                (key, r)
            })
            .collect()
    };
    let whole = by_key(&fx.path("full"));
    assert_eq!(whole.len(), n_records);
    assert_eq!(by_key(&merged), whole);
    let rows_of: Vec<u64> = results(&merged)
        .iter()
        .map(|r| r["row"].as_u64().unwrap())
        .collect();
    assert!(rows_of.is_sorted(), "merged results are ordered by row");
    let (a, b) = (
        read_json(&fx.path("full").join("summary.json")),
        read_json(&merged.join("summary.json")),
    );
    for name in outputs {
        let (x, y) = (output(&a, name), output(&b, name));
        assert_eq!(x["n_scored"], y["n_scored"], "{name}");
        let (u, v) = (x["mean"].as_f64().unwrap(), y["mean"].as_f64().unwrap());
        assert!((u - v).abs() <= 1e-12, "{name}: {u} vs {v}");
    }
    assert_eq!(b["usage"]["shards"].as_array().unwrap().len(), 3);
    (a, b)
}

/// Conversations and agent traces shard and merge like RAG rows: the
/// judged conversation metrics and the deterministic tool-call ones over
/// the agent example.
#[test]
fn conversation_shards_merged_equal_the_unsharded_run() {
    let fx = Fixture::content_reading();
    let data = repo().join("examples/agent.jsonl");
    let rows = std::fs::read_to_string(&data).unwrap().lines().count();
    let metrics = [
        "knowledge_retention",
        "conversation_completeness",
        "agent_goal_accuracy",
        "topic_adherence",
        "tool_call_accuracy",
    ];
    let (a, _) = shards_merged_equal_the_whole(
        &fx,
        &data,
        &metrics.join(","),
        &[
            "knowledge_retention",
            "conversation_completeness",
            "tool_call_accuracy",
        ],
        rows * metrics.len(),
    );
    assert!(
        output(&a, "knowledge_retention")["n_scored"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// A run whose references come from `--references` is read again the same
/// way: the merge's corpus scores join the file's references to the rows
/// (the unsharded run's scores, not those of rows without references),
/// and the report shows the joined reference. A side file changed since
/// the run is named where the corpus scores would be.
#[test]
fn a_merge_and_a_report_read_the_references_the_run_joined() {
    let tmp = tempfile::tempdir().unwrap();
    let parity =
        std::fs::read_to_string(repo().join("crates/assay-text/tests/data/parity/public.jsonl"))
            .unwrap();
    let (mut rows, mut refs) = (String::new(), String::new());
    for (i, line) in parity.lines().take(60).enumerate() {
        let row: Value = serde_json::from_str(line).unwrap();
        let id = format!("r{i}");
        rows += &format!("{}\n", json!({"id": id, "response": row["prediction"]}));
        refs += &format!("{}\n", json!({"id": id, "reference": row["references"][0]}));
    }
    let data = tmp.path().join("rows.jsonl");
    let references = tmp.path().join("refs.jsonl");
    std::fs::write(&data, rows).unwrap();
    std::fs::write(&references, refs).unwrap();
    let with_refs = ["--references", references.to_str().unwrap()];
    let full = tmp.path().join("full");
    ok(&eval(&data, &full, &with_refs));
    let shards = shards(&data, tmp.path(), &["1/2", "2/2"], &with_refs);
    let merged = tmp.path().join("merged");
    ok(&merge(&shards, &merged));
    let corpus = |dir: &Path| read_json(&dir.join("summary.json"))["corpus"].clone();
    assert!(!corpus(&full).as_array().unwrap().is_empty());
    assert_eq!(corpus(&merged), corpus(&full));

    ok(&assay(&["report", full.to_str().unwrap()], None));
    let html = std::fs::read_to_string(full.join("report.html")).unwrap();
    let first: Value = serde_json::from_str(parity.lines().next().unwrap()).unwrap();
    let reference = first["references"][0].as_str().unwrap();
    let shown = serde_json::to_string(&reference[..reference.len().min(40)]).unwrap();
    assert!(
        html.contains(shown.trim_matches('"')),
        "the joined reference is shown"
    );

    std::fs::write(&references, "").unwrap();
    let again = tmp.path().join("again");
    ok(&merge(&shards, &again));
    let summary = read_json(&again.join("summary.json"));
    assert_eq!(summary["corpus"], json!([]));
    let note = summary["corpus_note"].as_str().unwrap();
    assert!(note.contains("refs.jsonl changed since the run"), "{note}");
}

/// A merged run is judged as a run is: an output whose shards scored
/// nothing fails the merge with exit code 5, naming it and why.
#[test]
fn a_merge_whose_output_scored_nothing_exits_5() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("bare.jsonl");
    let rows: Vec<String> = (0..20)
        .map(|i| json!({"id": format!("r{i}"), "response": "The tower is 330 metres tall."}))
        .map(|r| r.to_string())
        .collect();
    std::fs::write(&data, rows.join("\n")).unwrap();
    let dirs: Vec<PathBuf> = ["1/2", "2/2"]
        .iter()
        .map(|k| {
            let dir = tmp.path().join(format!("shard-{}", &k[..1]));
            let o = eval(&data, &dir, &["--shard", k]);
            assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
            dir
        })
        .collect();
    let o = merge(&dirs, &tmp.path().join("merged"));
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.lines().any(|l| l
            .starts_with("nothing scored: bleu: 20 skipped, 0 failed (first, row ")
            && l.contains("missing required field 'reference'")),
        "{err}"
    );
}
