//! CI gates on real runs: `--fail-under`, `--fail-over` and
//! `--max-failed-fraction`, their exit codes and their one-line reasons.

use crate::common::{eval, output, read_json, repo, stderr};
use crate::judged::{rag_row, Fixture};
use std::path::Path;

fn mean(run: &Path, name: &str) -> f64 {
    output(&read_json(&run.join("summary.json")), name)["mean"]
        .as_f64()
        .unwrap()
}

#[test]
fn gates_pass_and_fail_on_a_real_run() {
    let tmp = tempfile::tempdir().unwrap();
    let example = repo().join("examples/rag_qa.jsonl");
    let passing = tmp.path().join("pass");
    let o = eval(
        &example,
        "rouge,bleu",
        &passing,
        &["--fail-under", "rouge1=0.3", "--fail-under", "bleu=0.05"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = String::from_utf8(o.stdout).unwrap();
    let (rouge1, bleu) = (mean(&passing, "rouge1"), mean(&passing, "bleu"));
    assert!(
        table.contains(&format!("gate passed: rouge1 mean {rouge1:.4} >= 0.3\n"))
            && table.contains(&format!("gate passed: bleu mean {bleu:.4} >= 0.05\n")),
        "{table}"
    );

    // One gate above the run's mean: exit 1 once everything is written.
    let failing = tmp.path().join("fail");
    let over = format!("bleu={:.4}", bleu + 0.01);
    let o = eval(
        &example,
        "rouge,bleu",
        &failing,
        &[
            "--fail-under",
            "rouge1=0.3",
            "--fail-under",
            &over,
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let reason = format!("gate failed: bleu mean {bleu:.4} < {:.4}\n", bleu + 0.01);
    assert!(err.contains(&reason), "{err}");
    assert!(err.contains("gate passed: rouge1"), "{err}");
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(printed, read_json(&failing.join("summary.json")));
    assert_eq!(mean(&failing, "bleu"), bleu, "the run itself is complete");

    // A row set with nothing scored has no mean to pass.
    let no_reference = tmp.path().join("q8.jsonl");
    let q8 = std::fs::read_to_string(&example)
        .unwrap()
        .lines()
        .find(|l| l.contains("\"q8\""))
        .unwrap()
        .to_string();
    std::fs::write(&no_reference, q8).unwrap();
    let o = eval(
        &no_reference,
        "bleu",
        &tmp.path().join("empty"),
        &["--fail-under", "bleu=0.1"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(
        table.contains(
            "gate failed: bleu has no scored sample, so no mean to hold to --fail-under 0.1"
        ),
        "{table}"
    );
}

#[test]
fn max_failed_fraction_is_checked_per_output() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data.jsonl");
    let mut text = std::fs::read_to_string(repo().join("examples/rag_qa.jsonl")).unwrap();
    text.push_str("\n{not json\n");
    std::fs::write(&data, text).unwrap();
    let o = eval(
        &data,
        "bleu,chrf",
        &tmp.path().join("strict"),
        &["--max-failed-fraction", "0.05"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let table = String::from_utf8(o.stdout).unwrap();
    let fraction = 1.0 / 11.0;
    for name in ["bleu", "chrf"] {
        let line = format!("gate failed: {name} failed 1 of 11 outcomes ({fraction:.4} > 0.05)\n");
        assert!(table.contains(&line), "{table}");
    }
    let o = eval(
        &data,
        "bleu,chrf",
        &tmp.path().join("lenient"),
        &["--max-failed-fraction", "0.1"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(
        table.contains(&format!(
            "gate passed: failed fraction at most 0.1 for every output (highest: bleu {fraction:.4})"
        )),
        "{table}"
    );
}

#[test]
fn bad_gates_exit_2_before_the_run_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let example = repo().join("examples/rag_qa.jsonl");
    let cases: [(&[&str], &str); 6] = [
        (
            &["--fail-under", "nosuch=0.5"],
            "'nosuch' is not an output of this run (outputs: rouge1, rouge2, rougeL, rougeLsum, bleu)",
        ),
        (
            &["--fail-under", "rouge=0.5"],
            "metric 'rouge' has several outputs (rouge1, rouge2, rougeL, rougeLsum); name one",
        ),
        (
            &["--fail-over", "rouge1=0.5"],
            "rouge1 is higher-is-better, so use --fail-under rouge1=0.5",
        ),
        (&["--fail-under", "bleu=high"], "'high' is not a number"),
        (&["--fail-under", "bleu"], "expected METRIC=VALUE"),
        (
            &["--max-failed-fraction", "1.5"],
            "expected a fraction from 0 to 1",
        ),
    ];
    for (i, (flags, message)) in cases.iter().enumerate() {
        let out = tmp.path().join(format!("run{i}"));
        let o = eval(&example, "rouge,bleu", &out, flags);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{flags:?}: {}", stderr(&o));
        assert!(!out.exists(), "{flags:?}: no run was started");
    }
}

#[test]
fn a_lower_is_better_judged_metric_takes_fail_over() {
    let fx = Fixture::content_reading();
    let data = fx.data(&[rag_row()]);
    let o = fx.eval(
        &data,
        "hallucination",
        "wrong",
        &["--fail-under", "hallucination=0.5"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("hallucination is lower-is-better, so use --fail-over hallucination=0.5"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        fx.server.count(),
        0,
        "no judge call before the gates are valid"
    );

    let o = fx.eval(
        &data,
        "hallucination",
        "loose",
        &["--fail-over", "hallucination=1"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = mean(&fx.path("loose"), "hallucination");
    assert!(
        stderr(&o).contains(&format!("gate passed: hallucination mean {m:.4} <= 1\n")),
        "{}",
        stderr(&o)
    );
    let below = format!("hallucination={:.4}", m - 0.05);
    let o = fx.eval(&data, "hallucination", "tight", &["--fail-over", &below]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "gate failed: hallucination mean {m:.4} > {:.4}",
            m - 0.05
        )),
        "{}",
        stderr(&o)
    );
}
