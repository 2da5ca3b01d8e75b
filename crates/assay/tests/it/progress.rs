//! The progress line and the summary table of a judged run, on a
//! pseudo-terminal.

use crate::common::{output, read_json};
use crate::judged::{rag_row, Fixture, KEY};
use serde_json::Value;

/// Runs `assay eval` on a pseudo-terminal (`script`, util-linux) against
/// the fixture's judge and returns what the terminal showed.
fn eval_on_a_terminal(fx: &Fixture, out: &str) -> String {
    let data = fx.data(&[rag_row()]);
    let cmd = format!(
        "{} eval {} -m faithfulness,bleu --judge openai:judge-model --base-url {} --out {} \
         --cache {} --price judge-model=1000/2000",
        env!("CARGO_BIN_EXE_assay"),
        data.display(),
        fx.server.base_url(),
        fx.path(out).display(),
        fx.path("cache.sqlite").display(),
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("OPENAI_API_KEY", KEY)
        .env("ASSAY_HOME", fx.dir.path())
        .output()
        .expect("script");
    let screen = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{screen}");
    screen
}

/// The line the run's own summary says the progress should end on.
fn expected_line(summary: &Value) -> String {
    let outputs = summary["outputs"].as_array().unwrap();
    let count = |key: &str| {
        outputs
            .iter()
            .map(|o| o[key].as_u64().unwrap())
            .sum::<u64>()
    };
    let run = &summary["usage"]["run"];
    format!(
        "| {} scored {} skipped {} failed | judge {} calls {} cached {}+{} tokens cost {:.4}",
        count("n_scored"),
        count("n_skipped"),
        count("n_failed"),
        run["calls"],
        run["cache_hits"],
        run["prompt_tokens"],
        run["completion_tokens"],
        run["cost"].as_f64().unwrap(),
    )
}

#[test]
fn a_judged_run_shows_outcomes_calls_cache_hits_tokens_and_cost() {
    let fx = Fixture::content_reading();
    // One sample: its only update comes after all its calls, so the line
    // shows the run's final numbers.
    let screen = eval_on_a_terminal(&fx, "first");
    let summary = read_json(&fx.path("first").join("summary.json"));
    let run = &summary["usage"]["run"];
    let (prompt, completion) = (
        run["prompt_tokens"].as_f64().unwrap(),
        run["completion_tokens"].as_f64().unwrap(),
    );
    let cost = (prompt * 1000.0 + completion * 2000.0) / 1e6;
    assert!(cost > 0.0 && (run["cost"].as_f64().unwrap() - cost).abs() < 1e-12);
    let line = expected_line(&summary);
    assert!(
        line.contains("| 2 scored 0 skipped 0 failed | judge 2 calls 0 cached"),
        "{line}"
    );
    assert!(
        screen.contains("100% 1 rows") && screen.contains(&line),
        "{screen}\nwant {line}"
    );

    // Each judged output carries its metric's tokens and cost, in
    // summary.json and in the table; lexical outputs have none.
    let per_metric = &summary["usage"]["per_metric"]["faithfulness"];
    let faithfulness = output(&summary, "faithfulness");
    for key in ["prompt_tokens", "completion_tokens", "cost"] {
        assert_eq!(faithfulness[key], per_metric[key], "{key}: {faithfulness}");
    }
    assert!(output(&summary, "bleu").get("prompt_tokens").is_none());
    // Shares of calls: numbers, whole here (one metric).
    let tokens = format!(
        "{}+{}",
        per_metric["prompt_tokens"].as_f64().unwrap(),
        per_metric["completion_tokens"].as_f64().unwrap()
    );
    let cost = format!("{:.4}", per_metric["cost"].as_f64().unwrap());
    // The last two cells of an output's row: tokens and cost.
    let tail = |name: &str| -> Vec<String> {
        let row = screen
            .lines()
            .find(|l| l.starts_with(&format!("{name} ↑")))
            .unwrap_or_else(|| panic!("no {name} row: {screen}"));
        let cells: Vec<String> = row.split_whitespace().map(String::from).collect();
        cells[cells.len() - 2..].to_vec()
    };
    assert_eq!(tail("faithfulness"), [tokens, cost]);
    assert_eq!(tail("bleu"), ["-", "-"]);
    // Under the table: ragas_score (one judged metric: none, and why),
    // then the usage per metric and for the run.
    assert!(
        screen.contains(
            "ragas_score - (ragas_score needs at least two higher-is-better metrics, the run has 1)"
        ),
        "{screen}"
    );
    let usage_row = |name: &str| {
        screen
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .map(|l| l.split_whitespace().skip(1).take(2).collect::<Vec<_>>())
    };
    assert!(
        screen.contains(
            "judge usage (a call shared by n metrics counts 1/n for each; sharing saved 0):"
        ),
        "{screen}"
    );
    assert_eq!(
        usage_row("run"),
        Some(vec!["2", "2"]),
        "calls, calls if unshared: {screen}"
    );

    let screen = eval_on_a_terminal(&fx, "again");
    let line = expected_line(&read_json(&fx.path("again").join("summary.json")));
    assert!(
        line.contains("judge 2 calls 2 cached 0+0 tokens cost 0.0000"),
        "the rerun is served from the cache: {line}"
    );
    assert!(screen.contains(&line), "{screen}\nwant {line}");
}
