//! `assay align` refits the grounding verdict on labelled rows and writes
//! the alignment file; `eval --alignment FILE` judges with it, names it in
//! the signatures, and no longer prints the figures measured without it.

use crate::common::{assay, eval, read_json, read_jsonl, repo, results, stderr};
use assay_grounding::align::Alignment;
use assay_grounding::{Model, Support};
use serde_json::Value;

#[test]
fn an_alignment_is_made_from_labels_and_judges_the_run_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("aligned.json");
    let o = assay(
        &[
            "align",
            "--set",
            "halueval-qa",
            "--out",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("pooled over the held-out folds (300 rows)"),
        "{table}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let a = Alignment::parse(&text).unwrap();
    assert_eq!(a.evaluation.rows, 300);
    assert_eq!(a.evaluation.folds.len(), 5);
    let tested: usize = a.evaluation.folds.iter().map(|f| f.rows).sum();
    assert_eq!(tested, 300, "every row is tested in exactly one fold");
    assert_ne!(a.model.weights, Model::builtin().weights);
    // Every row's task is `rag`: its figures are the pooled ones.
    let [rag] = &a.evaluation.tasks[..] else {
        panic!("{:?}", a.evaluation.tasks)
    };
    assert_eq!((rag.task.as_str(), rag.rows), ("rag", 300));
    assert_eq!(rag.after, Some(a.evaluation.after));
    assert_eq!(rag.novelty, Some(a.evaluation.novelty));

    let out = dir.path().join("run");
    let data = repo().join("examples/rag_qa.jsonl");
    let o = eval(
        &data,
        "faithfulness",
        &out,
        &["--alignment", file.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = read_jsonl(&data);
    let mut checked = 0;
    for r in results(&out).iter().filter(|r| r["status"] == "scored") {
        let row = rows.iter().find(|x| x["id"] == r["sample_id"]).unwrap();
        let mut texts = vec![row["user_input"].as_str().unwrap()];
        texts.extend(
            row["retrieved_contexts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap()),
        );
        let support = Support::new(texts);
        for s in r["details"]["statements"].as_array().unwrap() {
            let want = a.model.judge(s["statement"].as_str().unwrap(), &support);
            let got = s["yes_probability"].as_f64().unwrap();
            assert!((got - want.probability).abs() < 1e-12, "{s}");
            checked += 1;
        }
    }
    assert!(checked >= 8, "{checked} statements checked");
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains(&Alignment::identity(&text)), "{manifest}");
    assert_eq!(
        read_json(&out.join("summary.json"))["agreement"],
        serde_json::json!([])
    );
}

#[test]
fn bad_labels_and_bad_alignment_files_are_usage_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("labels.jsonl");
    std::fs::write(
        &data,
        "{\"response\": \"Rome is in Italy.\", \"labels\": {\"hallucinated\": false}}\n\
         {\"response\": \"Rome is in Spain.\", \"labels\": {\"hallucinated\": \"yes\"}}\n",
    )
    .unwrap();
    let out = dir.path().join("a.json");
    let o = assay(
        &[
            "align",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 2: labels.hallucinated: not true or false"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"format\": \"assay-alignment\"}").unwrap();
    let o = eval(
        &repo().join("examples/rag_qa.jsonl"),
        "faithfulness",
        &dir.path().join("run"),
        &["--alignment", bad.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--alignment") && e.contains("bad.json") && e.contains("not an alignment"),
        "{e}"
    );
}

/// RAGTruth's rows are grouped by its own task, as `assay calibrate`
/// groups them, and each task's figures are printed beside the pooled
/// ones.
#[test]
fn an_alignment_reports_each_task_of_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("aligned.json");
    let o = assay(
        &[
            "align",
            "--set",
            "ragtruth",
            "--out",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let a = Alignment::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let tasks: Vec<(&str, usize)> = a
        .evaluation
        .tasks
        .iter()
        .map(|t| (t.task.as_str(), t.rows))
        .collect();
    assert_eq!(tasks, [("Data2txt", 130), ("QA", 68), ("Summary", 100)]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("per task, the same scores:"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("QA ") && l.contains(" 68 ")),
        "{table}"
    );
}

/// Labelled rows in the calibrate format: towers and the years they
/// opened, half of them with the year or the city changed.
fn tower_rows() -> String {
    let cities = ["Paris", "Berlin", "Tokyo", "Sydney", "Toronto"];
    (0..30)
        .map(|i| {
            let city = cities[i % cities.len()];
            let year = 1850 + i;
            let (response, hallucinated) = match i % 3 {
                0 => (format!("The tower of {city} opened in {year}."), false),
                1 => (format!("The tower of {city} opened in {}.", year + 40), true),
                _ => (format!("The tower of {city} is made of glass."), true),
            };
            serde_json::json!({
                "id": format!("t{i}"),
                "user_input": format!("When did the tower of {city} open?"),
                "response": response,
                "retrieved_contexts": [format!("The tower of {city} opened in {year}. The tower of {city} is made of steel.")],
                "labels": {"hallucinated": hallucinated},
                "meta": {"source_id": i},
            })
            .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_llm_judge_reads_the_labelled_claims_nearest_the_row_s_statements() {
    use crate::judged::{by_metric, ok, rag_row, Fixture};
    use assay_test_server::judge;
    let fx = Fixture::content_reading();
    let labelled = fx.path("labelled.jsonl");
    std::fs::write(&labelled, tower_rows()).unwrap();
    let file = fx.path("aligned.json");
    let o = assay(
        &[
            "align",
            "--data",
            labelled.to_str().unwrap(),
            "--out",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let a = Alignment::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(a.demonstrations.len(), 30, "one claim per row");
    let glass = a
        .demonstrations
        .iter()
        .find(|d| d.statement == "The tower of Paris is made of glass.")
        .unwrap();
    assert_eq!(glass.verdict, "no", "its closest sentence speaks of it");
    assert_eq!(
        glass.context, "The tower of Paris is made of steel.",
        "the sentence that holds most of its words"
    );

    let data = fx.data(&[rag_row()]);
    let aligned = ["--alignment", file.to_str().unwrap()];
    for (protocol, prompt) in [
        ("listed", "faithfulness_verdicts"),
        ("per-item", "statement_support"),
    ] {
        let before = fx.chats().len();
        let out = format!("run-{protocol}");
        ok(&fx.eval(
            &data,
            "faithfulness",
            &out,
            &[&["--protocol", protocol][..], &aligned].concat(),
        ));
        let asked: Vec<_> = fx.chats()[before..]
            .iter()
            .filter(|r| judge::prompt_name(r) == Some(prompt))
            .cloned()
            .collect();
        assert!(!asked.is_empty(), "{protocol}: {prompt} was asked");
        for req in &asked {
            let messages = req.body["messages"].as_array().unwrap();
            let text = |m: &Value| m["content"].as_str().unwrap().to_string();
            let n = messages.len();
            // The demonstrations come after the prompt file's examples,
            // right before the sample: three pairs, the same for each of
            // the row's statements, nearest first: the tower of Paris
            // made of glass (it shares "Paris" with one statement and
            // "made" with the other).
            let demos = &messages[n - 7..n - 1];
            let asked_about = text(&messages[n - 1]);
            for pair in demos.chunks(2) {
                assert_eq!(pair[0]["role"], "user");
                assert_eq!(pair[1]["role"], "assistant");
                assert!(
                    text(&pair[0]).contains("The tower of "),
                    "{}",
                    text(&pair[0])
                );
            }
            assert!(asked_about.contains("Eiffel"), "{asked_about}");
            assert!(
                text(&demos[0]).contains("The tower of Paris is made of glass."),
                "{}",
                text(&demos[0])
            );
            assert!(text(&demos[1]).contains("\"no\""), "{}", text(&demos[1]));
            assert_eq!(
                demos,
                &asked[0].body["messages"].as_array().unwrap()[n - 7..n - 1]
            );
        }
        let record = &by_metric(&fx.path(&out), "eiffel")["faithfulness"];
        assert_eq!(record["status"], "scored", "{record}");
        // The alignment is in the signature: the cache and a resumed run
        // tell these verdicts from those asked without it.
        let manifest = read_json(&fx.path(&out).join("manifest.json")).to_string();
        assert!(
            manifest.contains("|demonstrations:aligned@sha256:"),
            "{manifest}"
        );
    }

    // Without the alignment no request carries a demonstration.
    let before = fx.chats().len();
    ok(&fx.eval(&data, "faithfulness", "plain", &[]));
    for req in &fx.chats()[before..] {
        assert!(
            !req.body.to_string().contains("The tower of"),
            "{}",
            req.body
        );
    }
}
