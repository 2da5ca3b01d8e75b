//! `--grounding DIR`: a sequence classifier from a Hugging Face folder
//! answers the closed grounding questions, under the local default judge
//! and under a remote one, with its best window as the evidence; a broken
//! folder stops the run before any row with exit code 2.

use crate::common::{eval, read_json, read_jsonl, repo, results, stderr};
use crate::judged::{by_metric, ok, rag_row, Fixture};
use assay_classifier::{Classifier, Options};
use serde_json::Value;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    repo()
        .join("crates/assay-classifier/tests/fixtures")
        .join(name)
}

fn contexts(row: &Value) -> Vec<String> {
    row["retrieved_contexts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

/// Each faithfulness statement's probability is the model's for its
/// best window of the contexts, and its reason quotes that window.
fn check_statements(record: &Value, contexts: &[String], model: &Classifier) {
    let statements = record["details"]["statements"].as_array().unwrap();
    assert!(!statements.is_empty(), "{record}");
    let sources: Vec<&str> = contexts.iter().map(String::as_str).collect();
    for s in statements {
        let claim = s["statement"].as_str().unwrap();
        let want = model.verify(&[claim], &sources).unwrap().remove(0);
        let got = s["yes_probability"].as_f64().unwrap();
        assert!(
            (got - want.probability).abs() < 1e-9,
            "{claim}: {got} vs {want:?}"
        );
        let reason = s["reason"].as_str().unwrap();
        let start: String = want.evidence.chars().take(20).collect();
        assert!(
            reason.contains(&format!("best window: \"{start}")),
            "{reason}"
        );
    }
}

#[test]
fn a_grounding_model_answers_under_the_local_judge_with_its_windows() {
    // An NLI cross-encoder, HHEM's shape (a T5 encoder read through its
    // prompt) and MiniCheck-Flan-T5's (a T5 text-to-text model).
    for name in ["bert", "hhem", "minicheck-t5"] {
        answers_under_the_local_judge(name);
    }
}

fn answers_under_the_local_judge(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let data = repo().join("examples/rag_qa.jsonl");
    let o = eval(
        &data,
        "faithfulness,context_recall,context_precision,hallucination",
        &out,
        &["--grounding", fixture(name).to_str().unwrap()],
    );
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let model = Classifier::load(&fixture(name), &Options::default()).unwrap();
    let rows = read_jsonl(&data);
    let records = results(&out);
    let mut checked = 0;
    for r in records.iter().filter(|r| r["metric"] == "faithfulness") {
        let row = rows.iter().find(|x| x["id"] == r["sample_id"]).unwrap();
        if r["status"] == "scored" {
            check_statements(r, &contexts(row), &model);
            checked += 1;
        }
    }
    assert!(checked >= 5, "{name}: {checked} faithfulness rows scored");
    // The model's identity is in every grounding metric's signature, and
    // the figures measured for the lexical model are not printed for it.
    let manifest = read_json(&out.join("manifest.json"));
    let text = manifest.to_string();
    assert!(text.contains(model.identity()), "{text}");
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["agreement"], serde_json::json!([]), "{summary}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("faithfulness        not measured")
            || stderr(&o).contains("faithfulness        not measured"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Under a remote judge (the listed protocol) the judge still writes the
/// statements, but no verdict is asked of it: the model gives them.
#[test]
fn a_grounding_model_answers_in_place_of_a_remote_judge() {
    let fx = Fixture::content_reading();
    let row = rag_row();
    let data = fx.data(std::slice::from_ref(&row));
    let o = fx.eval(
        &data,
        "faithfulness",
        "run",
        &["--grounding", fixture("deberta-v2").to_str().unwrap()],
    );
    ok(&o);
    assert!(fx.asked("statements") >= 1);
    assert_eq!(fx.asked("faithfulness_verdicts"), 0);
    let model = Classifier::load(&fixture("deberta-v2"), &Options::default()).unwrap();
    let r = by_metric(&fx.path("run"), "eiffel");
    check_statements(&r["faithfulness"], &contexts(&row), &model);
}

/// summarization_score's answers: the judge writes the keyphrases and
/// the closed questions, the model answers each question ("{question}
/// Yes.") from the summary, and the score is the count of its yeses.
#[test]
fn a_grounding_model_answers_the_summary_s_closed_questions() {
    let fx = Fixture::content_reading();
    let row = rag_row();
    let data = fx.data(std::slice::from_ref(&row));
    let folder = fixture("deberta-v2");
    let o = fx.eval(
        &data,
        "summarization_score",
        "run",
        &["--grounding", folder.to_str().unwrap()],
    );
    ok(&o);
    assert_eq!(fx.asked("keyphrases"), 1);
    assert_eq!(fx.asked("closed_questions"), 1);
    assert_eq!(fx.asked("summary_answers") + fx.asked("summary_answer"), 0);
    let model = Classifier::load(&folder, &Options::default()).unwrap();
    let r = &by_metric(&fx.path("run"), "eiffel")["summarization_score"];
    let questions = r["details"]["questions"].as_array().unwrap();
    assert!(!questions.is_empty(), "{r}");
    let summary = row["response"].as_str().unwrap();
    let mut yes = 0;
    for q in questions {
        let claim = format!("{} Yes.", q["question"].as_str().unwrap());
        let want = model
            .verify(&[claim.as_str()], &[summary])
            .unwrap()
            .remove(0);
        let got = q["yes_probability"].as_f64().unwrap();
        assert!(
            (got - want.probability).abs() < 1e-9,
            "{claim}: {got} vs {want:?}"
        );
        yes += usize::from(q["verdict"] == "yes");
        assert_eq!(q["verdict"] == "yes", want.probability >= 0.5, "{q}");
    }
    let qa = r["details"]["qa_score"].as_f64().unwrap();
    assert_eq!(qa, yes as f64 / questions.len() as f64);
    let manifest = read_json(&fx.path("run/manifest.json")).to_string();
    assert!(manifest.contains(model.identity()), "{manifest}");
}

#[test]
fn a_broken_model_folder_stops_the_run_before_any_row() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(fixture("bert").join(f), model.join(f)).unwrap();
    }
    let out = dir.path().join("run");
    let o = eval(
        &repo().join("examples/rag_qa.jsonl"),
        "faithfulness",
        &out,
        &["--grounding", model.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("--grounding"), "{e}");
    assert!(e.contains(&model.display().to_string()), "{e}");
    assert!(e.contains("no weights"), "{e}");
    assert!(!out.join("results.jsonl").exists());
}

/// `--embedder local:DIR` with a sentence-transformers folder the built-in
/// BERT embedder does not read (an XLM-RoBERTa with a SentencePiece
/// tokenizer, the multilingual models' shape): semantic_similarity is the
/// cosine of that model's vectors, and the manifest names the model.
#[test]
fn a_multilingual_embedder_folder_embeds_for_the_embedding_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let data = repo().join("examples/multilingual.jsonl");
    let model_dir = fixture("embed-xlm-roberta");
    let spec = format!("local:{}", model_dir.display());
    let o = eval(&data, "semantic_similarity", &out, &["--embedder", &spec]);
    assert!(o.status.success(), "{}", stderr(&o));
    let model = assay_classifier::embed::SentenceEncoder::load(&model_dir, 1).unwrap();
    let rows = read_jsonl(&data);
    let mut checked = 0;
    for r in results(&out).iter().filter(|r| r["status"] == "scored") {
        let row = rows.iter().find(|x| x["id"] == r["sample_id"]).unwrap();
        let (Some(response), Some(reference)) =
            (row["response"].as_str(), row["reference"].as_str())
        else {
            continue;
        };
        let (v, _) = model
            .embed(&[response.to_string(), reference.to_string()])
            .unwrap();
        let cosine: f64 = v[0].iter().zip(&v[1]).map(|(a, b)| (a * b) as f64).sum();
        let got = r["value"].as_f64().unwrap();
        assert!(
            (got - cosine.clamp(0.0, 1.0)).abs() < 1e-5,
            "{}: {got} vs {cosine}",
            r["sample_id"]
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked} rows checked");
    let manifest = read_json(&out.join("manifest.json")).to_string();
    assert!(manifest.contains("embed-xlm-roberta"), "{manifest}");
}
