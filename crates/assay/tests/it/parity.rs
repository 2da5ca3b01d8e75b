//! The whole parity set through `assay eval`: every per-pair value and the
//! corpus scores equal the Python references (to 1e-9, after scaling).

use crate::common::{read_json, repo, results, stderr};
use serde_json::Value;
use std::collections::HashMap;

const TOL: f64 = 1e-9;

fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() <= TOL, "{what}: got {got}, want {want}");
}

fn parity_dir() -> std::path::PathBuf {
    repo().join("crates/assay-text/tests/data/parity")
}

/// Runs `assay eval` on the parity set; `extra` are further arguments.
fn run(metrics: &str, extra: &[&str]) -> (tempfile::TempDir, Vec<Value>, Value) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let data = parity_dir().join("public.jsonl");
    let o = crate::common::eval(&data, metrics, &out, extra);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = results(&out);
    let summary = read_json(&out.join("summary.json"));
    (tmp, rows, summary)
}

fn expected() -> (HashMap<String, Value>, Value) {
    let e = read_json(&parity_dir().join("public.expected.json"));
    let pairs = e["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap().to_string(), p.clone()))
        .collect();
    (pairs, e["corpus"].clone())
}

#[test]
fn lexical_metrics_equal_the_references_end_to_end() {
    let (pairs, corpus) = expected();
    let (_t, rows, summary) = run(
        "rouge,bleu,sacrebleu,chrf,chrfpp",
        &["--set", "bleu.tokenizer=whitespace", "--threads", "2"],
    );
    assert_eq!(rows.len(), pairs.len() * 8);
    for r in &rows {
        assert_eq!(r["status"], "scored", "{r}");
        let exp = &pairs[r["sample_id"].as_str().unwrap()];
        let metric = r["metric"].as_str().unwrap();
        let got = r["value"].as_f64().unwrap();
        let what = format!("{} {metric}", r["sample_id"]);
        match metric {
            "bleu" => {
                let want = exp["nltk_bleu"].as_f64().unwrap();
                close(got, if want < 1e-9 { 0.0 } else { want }, &what);
            }
            "sacrebleu" => close(
                got,
                exp["sacrebleu_bleu"]["score"].as_f64().unwrap() / 100.0,
                &what,
            ),
            "chrf" => close(got, exp["sacrebleu_chrf"].as_f64().unwrap() / 100.0, &what),
            "chrfpp" => close(
                got,
                exp["sacrebleu_chrfpp"].as_f64().unwrap() / 100.0,
                &what,
            ),
            rouge => {
                for k in ["precision", "recall", "fmeasure"] {
                    close(
                        r["details"][k].as_f64().unwrap(),
                        exp["rouge"][rouge][k].as_f64().unwrap(),
                        &format!("{what} {k}"),
                    );
                }
                close(
                    got,
                    exp["rouge"][rouge]["fmeasure"].as_f64().unwrap(),
                    &what,
                );
            }
        }
    }
    let corpus_of = |name: &str| {
        summary["corpus"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone()
    };
    close(
        corpus_of("bleu")["value"].as_f64().unwrap(),
        corpus["nltk_corpus_bleu"].as_f64().unwrap(),
        "corpus bleu",
    );
    let sb = corpus_of("sacrebleu");
    close(
        sb["value"].as_f64().unwrap(),
        corpus["sacrebleu_corpus_bleu"]["score"].as_f64().unwrap() / 100.0,
        "corpus sacrebleu",
    );
    assert_eq!(
        sb["signature"],
        corpus["sacrebleu_corpus_bleu"]["signature"]
    );
    let cf = corpus_of("chrf");
    close(
        cf["value"].as_f64().unwrap(),
        corpus["sacrebleu_corpus_chrf"]["score"].as_f64().unwrap() / 100.0,
        "corpus chrf",
    );
    assert_eq!(
        cf["signature"],
        corpus["sacrebleu_corpus_chrf"]["signature"]
    );
    let cpp = corpus_of("chrfpp");
    close(
        cpp["value"].as_f64().unwrap(),
        corpus["sacrebleu_corpus_chrfpp"]["score"].as_f64().unwrap() / 100.0,
        "corpus chrF++",
    );
    for t in ["rouge1", "rouge2", "rougeL", "rougeLsum"] {
        let o = summary["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == t)
            .unwrap();
        close(
            o["mean"].as_f64().unwrap(),
            corpus["rouge_mean_f"]["rouge"][t].as_f64().unwrap(),
            t,
        );
    }
}

#[test]
fn stemmed_rouge_and_smoothed_bleu_end_to_end_single_threaded() {
    let (pairs, corpus) = expected();
    let (_t, rows, summary) = run(
        "rouge,bleu",
        &[
            "--set",
            "rouge.use_stemmer=true",
            "--set",
            "bleu.tokenizer=whitespace",
            "--set",
            "bleu.smoothing=method1",
            "--threads",
            "1",
        ],
    );
    for r in &rows {
        let exp = &pairs[r["sample_id"].as_str().unwrap()];
        let got = r["value"].as_f64().unwrap();
        match r["metric"].as_str().unwrap() {
            "bleu" => close(
                got,
                exp["nltk_bleu_method1"].as_f64().unwrap(),
                "bleu method1",
            ),
            rouge => close(
                got,
                exp["rouge_stem"][rouge]["fmeasure"].as_f64().unwrap(),
                rouge,
            ),
        }
    }
    let bleu = summary["corpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "bleu")
        .unwrap();
    close(
        bleu["value"].as_f64().unwrap(),
        corpus["nltk_corpus_bleu_method1"].as_f64().unwrap(),
        "corpus bleu method1",
    );
}
