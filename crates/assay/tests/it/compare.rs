//! `assay compare` on real runs made by `assay eval`: the difference of
//! means checked against one computed here from the two results files.

use crate::common::{assay, repo, results, stderr};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The bundled example as rows.
fn example_rows() -> Vec<Value> {
    std::fs::read_to_string(repo().join("examples/rag_qa.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write_rows(path: &Path, rows: &[Value]) {
    let text: Vec<String> = rows.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n")).unwrap();
}

/// `assay eval DATA -m METRICS --out OUT EXTRA...`, which must succeed.
fn eval(data: &Path, metrics: &str, out: &Path, extra: &[&str]) {
    let o = crate::common::eval(data, metrics, out, extra);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn compare_json(a: &Path, b: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["compare", a.to_str().unwrap(), b.to_str().unwrap()];
    args.extend_from_slice(&["--format", "json"]);
    args.extend_from_slice(extra);
    let o = assay(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn entry<'a>(comparison: &'a Value, name: &str) -> &'a Value {
    comparison["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {comparison}"))
}

/// Sample id -> value of `output`, scored records only.
fn scored(dir: &Path, output: &str) -> BTreeMap<String, f64> {
    results(dir)
        .into_iter()
        .filter(|r| r["metric"] == output && r["status"] == "scored")
        .map(|r| {
            (
                r["sample_id"].as_str().unwrap().to_string(),
                r["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Two runs of the example: B changes three responses, drops `q1` and
/// adds `extra`.
fn two_runs(tmp: &Path, extra_b: &[&str]) -> (PathBuf, PathBuf) {
    let rows = example_rows();
    let data_a = tmp.join("a.jsonl");
    write_rows(&data_a, &rows);
    let mut rows_b: Vec<Value> = rows.into_iter().filter(|r| r["id"] != "q1").collect();
    rows_b[0]["response"] = Value::from("I do not know.");
    rows_b[2]["response"] = Value::from("Paris, probably.");
    rows_b[4]["response"] = Value::from("");
    let mut extra = rows_b[1].clone();
    extra["id"] = Value::from("extra");
    rows_b.push(extra);
    let data_b = tmp.join("b.jsonl");
    write_rows(&data_b, &rows_b);
    let (a, b) = (tmp.join("run-a"), tmp.join("run-b"));
    eval(&data_a, "rouge,bleu", &a, &[]);
    eval(&data_b, "rouge,bleu", &b, extra_b);
    (a, b)
}

#[test]
fn compare_pairs_shared_samples_and_matches_an_independent_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(tmp.path(), &[]);
    let c = compare_json(&a, &b, &["--top", "2"]);
    for output in ["rouge1", "rouge2", "rougeL", "rougeLsum", "bleu"] {
        let (va, vb) = (scored(&a, output), scored(&b, output));
        let pairs: Vec<(String, f64, f64)> = va
            .iter()
            .filter_map(|(id, x)| vb.get(id).map(|y| (id.clone(), *x, *y)))
            .collect();
        let n = pairs.len() as f64;
        let want = pairs.iter().map(|(_, x, y)| y - x).sum::<f64>() / n;
        let e = entry(&c, output);
        // q1 only in A, `extra` only in B, q8 has no reference (skipped in both).
        assert_eq!(e["n_shared"], 8, "{e}");
        assert_eq!(
            (e["n_only_a"].as_u64(), e["n_only_b"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(e["n_not_scored_in_both"], 1, "{e}");
        let d = &e["difference"];
        let diff = d["diff"].as_f64().unwrap();
        assert!((diff - want).abs() < 1e-12, "{output}: {diff} vs {want}");
        let mean_a = pairs.iter().map(|p| p.1).sum::<f64>() / n;
        assert!((d["mean_a"].as_f64().unwrap() - mean_a).abs() < 1e-12);
        let (low, high) = (
            d["ci95"]["low"].as_f64().unwrap(),
            d["ci95"]["high"].as_f64().unwrap(),
        );
        assert!(low <= diff && diff <= high && low < high, "{output}: {d}");
        assert!(diff < 0.0, "worse responses score lower: {output} {diff}");
        assert_eq!(e["comparable"], true, "{e}");
        assert_eq!(e["signature_a"], e["signature_b"]);
        // The most changed: the largest |B - A| first, at most two of
        // them, unchanged samples left out, with both values.
        let mut moves: Vec<(f64, &String)> = pairs
            .iter()
            .map(|(id, x, y)| ((y - x).abs(), id))
            .filter(|m| m.0 > 0.0)
            .collect();
        moves.sort_by(|p, q| q.0.total_cmp(&p.0));
        let listed = e["most_changed"].as_array().unwrap();
        assert_eq!(listed.len(), moves.len().min(2), "{e}");
        assert_eq!(listed[0]["sample_id"], *moves[0].1, "{e}");
        assert_eq!(
            listed[0]["a"].as_f64().unwrap(),
            va[moves[0].1],
            "the value in A"
        );
        assert_eq!(listed[0]["b"].as_f64().unwrap(), vb[moves[0].1]);
    }
    assert_eq!(
        compare_json(&a, &b, &["--top", "2"]),
        c,
        "the comparison, interval included, is reproducible"
    );
    let table = assay(&["compare", a.to_str().unwrap(), b.to_str().unwrap()], None);
    let text = String::from_utf8(table.stdout).unwrap();
    let rouge1 = text.lines().find(|l| l.starts_with("rouge1 ↑")).unwrap();
    let want = format!(
        "{:+.4}",
        entry(&c, "rouge1")["difference"]["diff"].as_f64().unwrap()
    );
    assert!(rouge1.contains(&want) && rouge1.ends_with("same"), "{text}");
    assert!(text.contains("most changed, rouge1:"), "{text}");
}

#[test]
fn different_parameters_make_a_metric_not_comparable_and_say_which() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(tmp.path(), &["--set", "bleu.smoothing=method1"]);
    let data = tmp.path().join("a.jsonl");
    let with_chrf = tmp.path().join("run-c");
    eval(&data, "rouge,chrf", &with_chrf, &[]);

    let c = compare_json(&a, &b, &[]);
    let bleu = entry(&c, "bleu");
    assert_eq!(bleu["comparable"], false, "{bleu}");
    assert_eq!(bleu["differing_keys"], serde_json::json!(["smooth"]));
    assert!(bleu["signature_b"]
        .as_str()
        .unwrap()
        .contains("smooth:method1"));
    assert_eq!(entry(&c, "rouge1")["comparable"], true);

    let c = compare_json(&a, &with_chrf, &[]);
    assert_eq!(entry(&c, "bleu")["presence"], "only_a");
    assert_eq!(entry(&c, "chrf")["presence"], "only_b");
    assert!(entry(&c, "chrf").get("difference").is_none());
    let same = entry(&c, "rouge1")["difference"]["diff"].as_f64().unwrap();
    assert_eq!(same, 0.0, "the same data scores the same");

    let o = assay(&["compare", a.to_str().unwrap(), b.to_str().unwrap()], None);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("differs: smooth"), "{text}");
    assert!(
        text.contains("bleu: the signatures differ")
            && text.contains(bleu["signature_a"].as_str().unwrap())
            && text.contains(bleu["signature_b"].as_str().unwrap()),
        "{text}"
    );
}

#[test]
fn unreadable_runs_exit_2_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("a.jsonl");
    write_rows(&data, &example_rows());
    let a = tmp.path().join("run-a");
    eval(&data, "bleu", &a, &[]);
    let missing = tmp.path().join("nope");
    let o = assay(
        &["compare", a.to_str().unwrap(), missing.to_str().unwrap()],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{}", missing.join("manifest.json").display())),
        "{}",
        stderr(&o)
    );

    let b = tmp.path().join("run-b");
    std::fs::create_dir(&b).unwrap();
    std::fs::copy(a.join("manifest.json"), b.join("manifest.json")).unwrap();
    std::fs::write(b.join("results.jsonl"), "{\"not\": \"a record\"}\n").unwrap();
    let o = assay(&["compare", a.to_str().unwrap(), b.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("results.jsonl:1:"), "{}", stderr(&o));
}
