//! `assay calibrate` and `assay eval --calibration` against the loopback
//! content-reading judge: the figures in `calibration.json` are recomputed
//! here from the run's `results.jsonl` and the labels.

use crate::common::{read_json, repo, results, stderr};
use crate::judged::{ok, Fixture, KEY};
use assay_calibrate::agreement::{
    annotator_agreement, best_threshold, half_of, kendall_tau_b, preference_agreement, roc_auc,
    spearman, Confusion, Half, Preference,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

/// `assay calibrate ARGS --format json` against the fixture's server.
fn calibrate(fx: &Fixture, out: &str, args: &[&str]) -> Output {
    let mut all = vec!["calibrate", "--format", "json"];
    all.extend_from_slice(args);
    assay_at(fx, out, &all)
}

/// `assay ARGS` (a subcommand and its arguments) against the fixture's
/// server, writing to `out`.
fn assay_at(fx: &Fixture, out: &str, args: &[&str]) -> Output {
    let base_url = fx.server.base_url();
    let (out, cache) = (fx.path(out), fx.path("cache.sqlite"));
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .args(["--judge", "openai:judge-model"])
        .args(["--embedder", "openai:embed-model", "--base-url", &base_url])
        .args(["--out", out.to_str().unwrap()])
        .args(["--cache", cache.to_str().unwrap(), "--max-retries", "0"])
        .env("OPENAI_API_KEY", KEY)
        .env("ASSAY_HOME", fx.dir.path())
        .output()
        .unwrap()
}

/// sample id -> score of `metric` in the run at `dir`.
fn scores(dir: &Path, metric: &str) -> BTreeMap<String, f64> {
    results(dir)
        .into_iter()
        .filter(|r| r["metric"] == metric && r["status"] == "scored")
        .map(|r| {
            (
                r["sample_id"].as_str().unwrap().to_string(),
                r["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The rows of a built-in set, by id.
fn labelled(file: &str) -> BTreeMap<String, Value> {
    std::fs::read_to_string(repo().join("data/calibration").join(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["id"].as_str().unwrap().to_string(), r))
        .collect()
}

fn figure<'a>(cal: &'a Value, group: &str, name: &str) -> &'a Value {
    let g = cal["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == group)
        .unwrap_or_else(|| panic!("no group {group} in {}", cal["groups"]));
    &g["figures"][name]
}

fn assert_value(cal: &Value, group: &str, name: &str, want: f64) {
    let got = figure(cal, group, name)["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{group}/{name}: {}", figure(cal, group, name)));
    assert!(
        (got - want).abs() < 1e-12,
        "{group}/{name}: {got} vs {want}"
    );
    let ci = &figure(cal, group, name)["ci95"];
    assert!(
        ci["low"].as_f64().unwrap() <= got + 1e-12 && got <= ci["high"].as_f64().unwrap() + 1e-12,
        "{group}/{name}: {got} outside {ci}"
    );
}

#[test]
fn ragtruth_faithfulness_figures_follow_from_results_and_labels() {
    let fx = Fixture::content_reading();
    let o = calibrate(
        &fx,
        "cal",
        &[
            "--set",
            "ragtruth",
            "--metric",
            "faithfulness",
            "--limit",
            "10",
        ],
    );
    ok(&o);
    let dir = fx.path("cal");
    let cal = read_json(&dir.join("calibration.json"));
    assert_eq!(cal, serde_json::from_slice::<Value>(&o.stdout).unwrap());
    let rows = labelled("meta/ragtruth_sample.jsonl");
    let scored = scores(&dir, "faithfulness");
    // --limit 10 is label-balanced: 5 hallucinated, 5 not.
    let ids: Vec<&String> = scored.keys().collect();
    let hallucinated = |id: &str| rows[id]["labels"]["hallucinated"].as_bool().unwrap();
    let n_run = results(&dir).len();
    assert_eq!(n_run, 10);
    assert_eq!(cal["counts"]["selected"], 10);
    assert_eq!(
        ids.len() as u64,
        cal["counts"]["used"].as_u64().unwrap(),
        "{}",
        cal["counts"]
    );
    let selected: Vec<String> = results(&dir)
        .iter()
        .map(|r| r["sample_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(selected.iter().filter(|id| hallucinated(id)).count(), 5);
    // Faithfulness is high when faithful: positive = not hallucinated.
    assert_eq!(cal["label"]["positive"], "faithful");
    let item = |id: &&String| (scored[*id], !hallucinated(id));
    let (s, y): (Vec<f64>, Vec<bool>) = ids.iter().map(item).unzip();
    assert_value(&cal, "overall", "roc_auc", roc_auc(&s, &y).unwrap());
    // The baseline: the responses' lengths alone, in the better direction.
    let length = |id: &&String| rows[*id]["response"].as_str().unwrap().chars().count() as f64;
    let by_length = roc_auc(&ids.iter().map(length).collect::<Vec<_>>(), &y).unwrap();
    assert_value(
        &cal,
        "overall",
        "length_roc_auc",
        by_length.max(1.0 - by_length),
    );
    // The lexical baseline: the share of the response's content words
    // that its question and contexts lack, in the better direction.
    let novelty = |id: &&String| {
        use assay_grounding::features::{is_stop_word, words};
        let r = &rows[*id];
        let contexts: Vec<&str> = r["retrieved_contexts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let source = format!(
            "{}\n{}",
            r["user_input"].as_str().unwrap_or(""),
            contexts.join("\n")
        );
        let known: std::collections::HashSet<String> = words(&source).into_iter().collect();
        let content: Vec<String> = words(r["response"].as_str().unwrap())
            .into_iter()
            .filter(|w| !is_stop_word(w))
            .collect();
        content.iter().filter(|w| !known.contains(*w)).count() as f64 / content.len() as f64
    };
    let by_words = roc_auc(&ids.iter().map(novelty).collect::<Vec<_>>(), &y).unwrap();
    assert_value(
        &cal,
        "overall",
        "lexical_roc_auc",
        by_words.max(1.0 - by_words),
    );
    let half = |h: Half| -> (Vec<f64>, Vec<bool>) {
        ids.iter().filter(|id| half_of(id) == h).map(item).unzip()
    };
    let (ts, ty) = half(Half::Tune);
    let (es, ey) = half(Half::Evaluate);
    match best_threshold(&ts, &ty) {
        Ok(t) => {
            assert_eq!(cal["threshold"]["value"].as_f64(), Some(t));
            let c = Confusion::count(es.iter().map(|x| *x >= t).zip(ey.iter().copied()));
            assert_eq!(
                cal["confusion"],
                json!({"tp": c.tp, "fp": c.fp, "tn": c.tn, "fn": c.fn_})
            );
            assert_value(&cal, "overall", "accuracy", c.accuracy().unwrap());
            match c.kappa() {
                Ok(k) => assert_value(&cal, "overall", "kappa", k),
                Err(why) => assert_eq!(
                    figure(&cal, "overall", "kappa")["undefined"],
                    why.to_string()
                ),
            }
        }
        Err(why) => assert_eq!(cal["threshold"]["value"]["undefined"], why.to_string()),
    }
    // Per task: RAGTruth's own tasks, each a subset of the overall.
    let groups: Vec<&str> = cal["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups.last(), Some(&"overall"));
    assert!(groups
        .iter()
        .all(|g| ["QA", "Summary", "Data2txt", "overall"].contains(g)));
    let table = &cal["tables"][0];
    assert_eq!(table["columns"][0], "task");
    assert_eq!(table["rows"].as_array().unwrap().len(), groups.len());
}

/// Rows the content-reading judge scores perfectly: faithful responses
/// are in their context, hallucinated ones are not and mention cheese.
fn separable_rows() -> Vec<Value> {
    (0..12)
        .map(|i| {
            let hallucinated = i % 2 == 1;
            let response = if hallucinated {
                format!("Tower {i} is made of cheese")
            } else {
                format!("Tower {i} is in Paris")
            };
            json!({
                "id": format!("row-{i}"),
                "task": if i < 6 { "first" } else { "second" },
                "response": response,
                "retrieved_contexts": [format!("Tower {i} is in Paris"), "Cheese is tasty"],
                "labels": {"hallucinated": hallucinated},
            })
        })
        .collect()
}

#[test]
fn score_direction_is_right_for_faithfulness_and_hallucination() {
    let fx = Fixture::content_reading();
    let data = fx.data(&separable_rows());
    let data = data.to_str().unwrap();
    for (metric, high, positive) in [
        ("faithfulness", "false", "not hallucinated"),
        ("hallucination", "true", "hallucinated"),
    ] {
        let args = [
            "--data",
            data,
            "--labels",
            "hallucinated",
            "--high-score-means",
            high,
            "--metric",
            metric,
        ];
        let o = calibrate(&fx, metric, &args);
        ok(&o);
        let cal = read_json(&fx.path(metric).join("calibration.json"));
        assert_eq!(cal["label"]["positive"], positive);
        for group in ["first", "second", "overall"] {
            assert_value(&cal, group, "roc_auc", 1.0);
        }
        assert_value(&cal, "overall", "accuracy", 1.0);
        assert_value(&cal, "overall", "kappa", 1.0);
        assert_eq!(cal["counts"]["used"], 12);
    }
    // The wrong direction is measured as such.
    let o = calibrate(
        &fx,
        "reversed",
        &[
            "--data",
            data,
            "--labels",
            "hallucinated",
            "--high-score-means",
            "true",
            "-m",
            "faithfulness",
        ],
    );
    ok(&o);
    let cal = read_json(&fx.path("reversed").join("calibration.json"));
    assert_value(&cal, "overall", "roc_auc", 0.0);
    // The table on stdout: a row per task, then overall.
    let o = assay_at(
        &fx,
        "table",
        &[
            "calibrate",
            "--data",
            data,
            "--labels",
            "hallucinated",
            "--high-score-means",
            "false",
            "-m",
            "faithfulness",
        ],
    );
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("faithfulness against "), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("task") && l.contains("roc_auc")),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("overall ") && l.contains("1.000 [1.000, 1.000]")),
        "{text}"
    );
}

#[test]
fn ragchecker_preferences_and_summeval_ratings() {
    let fx = Fixture::content_reading();
    let o = calibrate(
        &fx,
        "pairs",
        &[
            "--set",
            "ragchecker",
            "-m",
            "answer_correctness",
            "--limit",
            "6",
        ],
    );
    ok(&o);
    let dir = fx.path("pairs");
    let cal = read_json(&dir.join("calibration.json"));
    let s = scores(&dir, "answer_correctness");
    assert_eq!(results(&dir).len(), 12, "two samples per pair");
    let rows = labelled("rag/ragchecker_meta_eval_pairs.jsonl");
    // > 0 means response_b is better: compare with score(b) - score(a).
    let pairs: Vec<Preference> = rows
        .iter()
        .filter(|(id, _)| s.contains_key(&format!("{id}#a")))
        .map(|(id, r)| Preference {
            judge: s[&format!("{id}#b")] - s[&format!("{id}#a")],
            annotators: r["labels"]["correctness_pref"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect(),
        })
        .collect();
    assert_eq!(pairs.len(), 6);
    let check = |name: &str, want: assay_calibrate::agreement::Stat| match want {
        Ok(v) => assert_value(&cal, "overall", name, v),
        Err(why) => assert_eq!(figure(&cal, "overall", name)["undefined"], why.to_string()),
    };
    check("judge_annotator_agreement", preference_agreement(&pairs));
    check("annotator_annotator_agreement", annotator_agreement(&pairs));

    // The loopback judge rates every summary 4: no correlation can be
    // measured, and the file says why.
    let o = calibrate(
        &fx,
        "ratings",
        &[
            "--set",
            "summeval",
            "-m",
            "summary_coherence",
            "--limit",
            "5",
        ],
    );
    ok(&o);
    let cal = read_json(&fx.path("ratings").join("calibration.json"));
    assert_eq!(cal["label"]["field"], "expert_coherence");
    for name in ["spearman", "kendall_tau_b"] {
        assert_eq!(
            figure(&cal, "overall", name)["undefined"],
            "undefined because every score is the same"
        );
    }
    // The lexical baseline sees the summaries, not the judge: its
    // Spearman with the ratings is defined even where the judge's is not.
    let lexical = figure(&cal, "overall", "lexical_spearman");
    let rho = lexical["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("{lexical}"));
    assert!((-1.0..=1.0).contains(&rho), "{lexical}");
    assert!(figure(&cal, "overall", "lexical_kendall_tau_b")["value"].is_f64());
    // With graded labels that vary, the numbers are scipy's definitions.
    let rated = scores(&fx.path("ratings"), "summary_coherence");
    assert!(rated.values().all(|v| *v == 0.75));
    assert!(spearman(&[0.75; 3], &[1.0, 2.0, 3.0]).is_err());
    assert!(kendall_tau_b(&[0.75; 3], &[1.0, 2.0, 3.0]).is_err());
}

#[test]
fn bad_calibrate_usage_is_a_clear_error() {
    let fx = Fixture::content_reading();
    let o = calibrate(&fx, "x", &["--set", "summeval", "-m", "bias"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no built-in mapping of bias on summeval"),
        "{}",
        stderr(&o)
    );
    let mut rows = separable_rows();
    rows[3]["labels"]["hallucinated"] = json!("yes");
    let data = fx.data(&rows);
    let o = calibrate(
        &fx,
        "y",
        &[
            "--data",
            data.to_str().unwrap(),
            "--labels",
            "hallucinated",
            "--high-score-means",
            "false",
            "-m",
            "faithfulness",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("data.jsonl:4: field 'labels.hallucinated': expected true or false"),
        "{err}"
    );
    assert!(
        fx.server.requests().is_empty(),
        "no call before the input is checked"
    );
}

#[test]
fn eval_reports_the_corrected_prevalence() {
    let fx = Fixture::content_reading();
    let cal = fx.path("calibration.json");
    std::fs::write(
        &cal,
        json!({
            "format_version": 1,
            "metric": "faithfulness",
            "output": "faithfulness",
            "label": {"kind": "binary", "positive": "faithful", "field": "hallucinated"},
            "threshold": {"value": 0.5},
            "confusion": {"tp": 40, "fn": 10, "tn": 45, "fp": 5},
        })
        .to_string(),
    )
    .unwrap();
    // Faithfulness 1, 1, 0.5 and 0: three of four at or above 0.5.
    let row = |id: &str, response: &str| json!({"id": id, "response": response, "retrieved_contexts": ["A is B", "C is D"]});
    let data = fx.data(&[
        row("a", "A is B"),
        row("b", "C is D"),
        row("c", "A is B. E is F"),
        row("d", "E is F"),
    ]);
    let o = fx.eval(
        &data,
        "faithfulness",
        "run",
        &["--calibration", cal.to_str().unwrap()],
    );
    ok(&o);
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    let summary = read_json(&fx.path("run").join("summary.json"));
    let c = &summary["calibrated"];
    assert_eq!(&printed["calibrated"], c);
    assert_eq!(c["raw"], 0.75);
    assert_eq!(
        (c["n_scored"].clone(), c["n_positive"].clone()),
        (json!(4), json!(3))
    );
    // Rogan-Gladen with sensitivity 40/50 and specificity 45/50.
    let want = (0.75 + 0.9 - 1.0) / (0.8 + 0.9 - 1.0);
    let got = c["corrected"]["value"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    let ci = &c["corrected"]["ci95"];
    assert!(ci["low"].as_f64().unwrap() < got && got < ci["high"].as_f64().unwrap());

    let (data, cal) = (data.to_str().unwrap(), cal.to_str().unwrap());
    let o = assay_at(
        &fx,
        "table",
        &["eval", data, "-m", "faithfulness", "--calibration", cal],
    );
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("faithful 0.75 raw -> {want:.2} corrected [")),
        "{text}"
    );

    // A calibration of a metric the run does not score is refused.
    let o = assay_at(
        &fx,
        "other",
        &["eval", data, "-m", "answer_relevance", "--calibration", cal],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("calibrates faithfulness, which is not in --metrics"));
}

#[test]
fn halueval_pairs_stay_together_and_are_compared() {
    let fx = Fixture::content_reading();
    let o = calibrate(
        &fx,
        "qa",
        &["--set", "halueval-qa", "-m", "faithfulness", "--limit", "6"],
    );
    ok(&o);
    let dir = fx.path("qa");
    let cal = read_json(&dir.join("calibration.json"));
    let rows = labelled("meta/halueval_qa_sample.jsonl");
    let s = scores(&dir, "faithfulness");
    // Question -> (score of the right answer, of the hallucinated one).
    let mut by_question: BTreeMap<String, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for r in results(&dir) {
        let row = &rows[r["sample_id"].as_str().unwrap()];
        let q = by_question
            .entry(row["meta"]["halueval_index"].to_string())
            .or_default();
        let score = s.get(r["sample_id"].as_str().unwrap()).copied();
        if row["labels"]["hallucinated"] == true {
            q.1 = score;
        } else {
            q.0 = score;
        }
    }
    assert_eq!(by_question.len(), 3, "6 rows are 3 whole questions");
    let pairs: Vec<(f64, f64)> = by_question
        .values()
        .filter_map(|(a, b)| Some((a.as_ref().copied()?, b.as_ref().copied()?)))
        .collect();
    let wins: f64 = pairs
        .iter()
        .map(|(right, wrong)| match right.total_cmp(wrong) {
            std::cmp::Ordering::Greater => 1.0,
            std::cmp::Ordering::Equal => 0.5,
            std::cmp::Ordering::Less => 0.0,
        })
        .sum();
    assert_eq!(pairs.len(), 3, "every answer is scored");
    assert_value(
        &cal,
        "overall",
        "paired_accuracy",
        wins / pairs.len() as f64,
    );
}
