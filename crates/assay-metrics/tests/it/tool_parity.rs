//! The tool-call metrics against ragas 0.4.3 and DeepEval 4.3.1 on the
//! parity set `tests/data/tool_calls/cases.jsonl` (made by `generate.py`
//! beside it, whose provenance is `provenance.json`): every case, every
//! parameter setting, within 1e-12; where the reference raised (`{"error":
//! ...}`, on null arguments), assay fails that sample as bad input.

use assay_core::{Failure, FailureKind, Outcome, Sample};
use assay_metrics::{Metric, MetricId};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

const TOL: f64 = 1e-12;

/// The kinds of input a new user found assay disagreeing on (issue 45),
/// by their cases' id prefix: each must keep many cases.
const KINDS: [&str; 4] = ["nested-order-", "repr-string-", "same-tool-", "null-args-"];

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tool_calls")
}

/// `a=x,b=y` (as the generator names settings) as parameters.
fn params(setting: &str) -> BTreeMap<String, String> {
    setting
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn tool_call_metrics_equal_the_references() {
    let text = std::fs::read_to_string(data().join("cases.jsonl")).unwrap();
    let mut metrics: BTreeMap<(String, String), Metric> = BTreeMap::new();
    let (mut compared, mut max_diff, mut cases, mut errors) = (0usize, 0.0f64, 0usize, 0usize);
    let mut failures = Vec::new();
    let mut per_kind = [0usize; KINDS.len()];
    for (line, row) in text.lines().enumerate() {
        let row: Value = serde_json::from_str(row).unwrap();
        let id = row["id"].as_str().unwrap();
        for (n, kind) in per_kind.iter_mut().zip(KINDS) {
            *n += usize::from(id.starts_with(kind));
        }
        let sample = Sample::from_json(line as u64 + 1, row.as_object().unwrap()).unwrap();
        cases += 1;
        for (metric, settings) in row["expected"].as_object().unwrap() {
            for (setting, want) in settings.as_object().unwrap() {
                let m = metrics
                    .entry((metric.clone(), setting.clone()))
                    .or_insert_with(|| {
                        let id: MetricId = metric.parse().unwrap();
                        Metric::configure(id, &params(setting)).unwrap()
                    });
                let outcome = &m.scorer().score(&sample)[..];
                compared += 1;
                if let Some(error) = want.get("error") {
                    errors += 1;
                    // Each reference raises on null arguments only.
                    if !matches!(
                        outcome,
                        [Outcome::Failed(Failure {
                            kind: FailureKind::Input,
                            message,
                        })] if message.contains("null")
                    ) {
                        failures.push(format!(
                            "{} {metric} [{setting}]: got {outcome:?}, want a failure ({error})",
                            row["id"]
                        ));
                    }
                    continue;
                }
                let want = want.as_f64().unwrap();
                let got = match outcome {
                    [Outcome::Scored { value, .. }] => *value,
                    other => {
                        failures.push(format!(
                            "{} {metric} [{setting}]: got {other:?}, want {want}",
                            row["id"]
                        ));
                        continue;
                    }
                };
                let diff = (got - want).abs();
                max_diff = max_diff.max(diff);
                if diff > TOL {
                    failures.push(format!(
                        "{} {metric} [{setting}]: got {got}, want {want}",
                        row["id"]
                    ));
                }
            }
        }
    }
    eprintln!(
        "tool-call parity: {cases} cases, {compared} values ({errors} reference errors), \
         max |diff| {max_diff:e}"
    );
    assert!(
        cases >= 400 && compared >= cases * 11,
        "{cases} cases, {compared} values"
    );
    assert!(per_kind.iter().all(|&n| n >= 80), "{KINDS:?}: {per_kind:?}");
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn provenance_names_the_references() {
    let p: Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("provenance.json")).unwrap())
            .unwrap();
    assert_eq!(
        (p["ragas"].as_str(), p["deepeval"].as_str()),
        (Some("0.4.3"), Some("4.3.1"))
    );
    assert!(p["seed"].is_u64() && p["command"].as_str().unwrap().contains("generate.py"));
}
