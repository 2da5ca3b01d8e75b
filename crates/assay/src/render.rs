//! What `eval` and `metrics` print on stdout.

use assay_core::FailureKind;
use assay_engine::RunSummary;
use assay_metrics::judged::measured::Agreement;
use assay_metrics::{AnyId, Direction};
use assay_report::compare::{Comparison, Presence};
use assay_report::gates::GateResult;
use serde_json::Value;
use std::fmt::Write;

/// The summary as an aligned text table (per output: direction, mean, 95%
/// CI, coverage `scored/skipped/failed` with failures by kind, and judge
/// tokens and cost for judged metrics), then usage and corpus-level scores.
/// How far to trust each judged metric: its measured agreement with
/// people beside the best trivial baseline, or that none was measured.
fn agreement_lines(summary: &RunSummary, agreement: &[Agreement]) -> String {
    let mut out =
        String::from(
        "\nagreement with people (assay calibrate on the labelled sets, English rows only; README):\n",
    );
    let mut judged: Vec<&str> = Vec::new();
    for o in &summary.outputs {
        if o.usage.is_some() && !judged.contains(&o.metric.as_str()) {
            judged.push(&o.metric);
        }
    }
    for metric in judged {
        let declined = summary.outputs.iter().any(|o| {
            o.metric == metric
                && o.summary
                    .failed_by_kind
                    .contains_key(FailureKind::Unfit.name())
        });
        let measured = summary.fitness.iter().flatten();
        if let Some(fit) = measured.into_iter().find(|f| f.metric == metric) {
            let verdict = if declined {
                "declined: no number printed (the failures say which judge to use)"
            } else {
                "agreement with people not measured (no labelled conversations)"
            };
            let _ = writeln!(
                out,
                "  {metric:<19} {} right on {} of {} plain conversations \
                 (examples/conversations.jsonl); {verdict}",
                fit.judge, fit.right, fit.of
            );
            continue;
        }
        let figures: Vec<String> = agreement
            .iter()
            .filter(|a| a.metric == metric)
            .map(Agreement::describe)
            .collect();
        let line = if figures.is_empty() {
            format!(
                "not measured with this judge, protocol and grounding model \
                 (measure it: assay calibrate --set ragtruth --metric {metric} with this run's judge flags)"
            )
        } else {
            figures.join("; ")
        };
        let _ = writeln!(out, "  {metric:<19} {line}");
    }
    out
}

pub fn summary_table(summary: &RunSummary) -> String {
    let judged = summary.outputs.iter().any(|o| o.usage.is_some());
    let mut header = ["metric", "mean", "95% CI", "scored/skipped/failed"].to_vec();
    if judged {
        header.extend(["tokens", "cost"]);
    }
    let mut rows = vec![header.into_iter().map(String::from).collect::<Vec<_>>()];
    for o in &summary.outputs {
        let s = &o.summary;
        let mut row = vec![format!("{} {}", o.name, arrow(o.direction))];
        match &s.stats {
            Some(st) => row.extend([
                format!("{:.4}", st.mean),
                format!("[{:.4}, {:.4}]", st.ci95.low, st.ci95.high),
            ]),
            None => row.extend(["-", "-"].map(String::from)),
        }
        row.push(format!(
            "{}/{}/{}",
            s.n_scored,
            s.n_skipped,
            failed_cell(s.n_failed, &s.failed_by_kind)
        ));
        if judged {
            match &o.usage {
                Some(u) => row.extend([
                    format!(
                        "{}+{}",
                        count(&u.prompt_tokens.into()),
                        count(&u.completion_tokens.into())
                    ),
                    u.cost.map_or("-".into(), |c| format!("{c:.4}")),
                ]),
                None => row.extend(["-", "-"].map(String::from)),
            }
        }
        rows.push(row);
    }
    let mut out = align(&rows);
    if let Some(r) = &summary.ragas_score {
        match r.value {
            Some(v) => {
                let _ = writeln!(
                    out,
                    "ragas_score {v:.4} (harmonic mean of {})",
                    r.metrics.join(", ")
                );
            }
            None => {
                let _ = writeln!(out, "ragas_score - ({})", r.reason.as_deref().unwrap_or(""));
            }
        }
    }
    if let Some(agreement) = &summary.agreement {
        out.push_str(&agreement_lines(summary, agreement));
    }
    if let Some(usage) = &summary.usage {
        out.push_str(&usage_table("judge usage", usage, |u| u));
        if usage["run"].get("embeddings").is_some() {
            out.push_str(&usage_table("embedding usage", usage, |u| &u["embeddings"]));
        }
    }
    if let Some(input) = &summary.input {
        out.push_str("\ninput:\n");
        if let Some(stitched) = &input.stitched {
            let _ = writeln!(out, "  stitched    {stitched}");
        }
        if let Some(references) = &input.references {
            let _ = writeln!(out, "  references  {references}");
        }
    }
    if !summary.corpus.is_empty() {
        out.push_str("\ncorpus-level:\n");
        for c in &summary.corpus {
            let _ = write!(out, "  {:<10} {:.4}", c.name, c.value);
            if let Some(sig) = &c.signature {
                let _ = write!(out, "  {sig}");
            }
            out.push('\n');
        }
    }
    out
}

/// One usage block of `summary.json` (`pick` chooses judge calls or
/// embeddings) as a table: per metric its share of the calls and the calls
/// of its steps counted in full (`alone`), then the run, whose `alone` is
/// what the run would have asked with no step shared.
fn usage_table(title: &str, usage: &Value, pick: impl Fn(&Value) -> &Value) -> String {
    let mut lines = vec![[
        "", "calls", "alone", "upstream", "cached", "tokens", "p50", "cost",
    ]
    .map(String::from)
    .to_vec()];
    let per_metric = usage["per_metric"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, u)| (name.as_str(), pick(u), &pick(u)["alone"]["calls"]))
        .filter(|(_, u, _)| !u.is_null());
    let run = pick(&usage["run"]);
    for (name, u, alone) in per_metric.chain([("run", run, &run["calls_if_unshared"])]) {
        lines.push(vec![
            format!("  {name}"),
            count(&u["calls"]),
            count(alone),
            count(&u["upstream"]),
            count(&u["cache_hits"]),
            format!(
                "{}/{}",
                count(&u["prompt_tokens"]),
                count(&u["completion_tokens"])
            ),
            u["latency_ms"]["p50"]
                .as_f64()
                .map_or("-".into(), |ms| format!("{ms:.0} ms")),
            u["cost"].as_f64().map_or("-".into(), |c| format!("{c:.4}")),
        ]);
    }
    format!(
        "\n{title} (a call shared by n metrics counts 1/n for each; sharing saved {}):\n{}",
        count(&run["saved_by_sharing"]),
        align(&lines)
    )
}

/// A count that may be a share: whole numbers as such, else two decimals.
fn count(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.2}"),
        None => "-".into(),
    }
}

fn arrow(direction: Direction) -> &'static str {
    match direction {
        Direction::HigherIsBetter => "↑",
        Direction::LowerIsBetter => "↓",
    }
}

/// One line per gate, passing and failing, in the order given.
pub fn gate_lines(results: &[GateResult]) -> String {
    results.iter().map(|r| format!("{}\n", r.line)).collect()
}

/// `assay compare` as text: one row per output, then the signatures that
/// differ, then the samples that changed most.
pub fn compare_table(c: &Comparison) -> String {
    let mut out = format!("A: {}\nB: {}\n\n", c.a.display(), c.b.display());
    let mut rows = vec![[
        "output",
        "shared",
        "mean A",
        "mean B",
        "B - A",
        "95% CI of B - A",
        "only A/B",
        "unscored",
        "signature",
    ]
    .map(String::from)
    .to_vec()];
    for o in &c.outputs {
        let name = match o.direction {
            Some(d) => format!("{} {}", o.name, arrow(d)),
            None => o.name.clone(),
        };
        let mut row = vec![name, o.n_shared.to_string()];
        match &o.difference {
            Some(d) => row.extend([
                format!("{:.4}", d.mean_a),
                format!("{:.4}", d.mean_b),
                format!("{:+.4}", d.diff),
                format!("[{:+.4}, {:+.4}]", d.ci95.low, d.ci95.high),
            ]),
            None => row.extend(["-", "-", "-", "-"].map(String::from)),
        }
        row.push(format!("{}/{}", o.n_only_a, o.n_only_b));
        row.push(o.n_not_scored_in_both.to_string());
        row.push(match (o.presence, o.comparable) {
            (Presence::OnlyA, _) => "output only in A".into(),
            (Presence::OnlyB, _) => "output only in B".into(),
            (Presence::Both, true) => "same".into(),
            (Presence::Both, false) if o.differing_keys.is_empty() => "unknown".into(),
            (Presence::Both, false) => format!("differs: {}", o.differing_keys.join(", ")),
        });
        rows.push(row);
    }
    out.push_str(&align(&rows));
    let differing = c
        .outputs
        .iter()
        .filter(|o| o.presence == Presence::Both && !o.comparable);
    for o in differing {
        let _ =
            writeln!(
            out,
            "\n{}: the signatures differ, so the runs are not comparable on it\n  A: {}\n  B: {}",
            o.name,
            o.signature_a.as_deref().unwrap_or("(none in manifest.json)"),
            o.signature_b.as_deref().unwrap_or("(none in manifest.json)"),
        );
    }
    for o in c.outputs.iter().filter(|o| !o.most_changed.is_empty()) {
        let _ = writeln!(out, "\nmost changed, {}:", o.name);
        let mut lines = vec![["  sample", "A", "B", "B - A"].map(String::from).to_vec()];
        lines.extend(o.most_changed.iter().map(|ch| {
            vec![
                format!("  {}", ch.sample_id),
                format!("{:.4}", ch.a),
                format!("{:.4}", ch.b),
                format!("{:+.4}", ch.diff),
            ]
        }));
        out.push_str(&align(&lines));
    }
    out
}

fn failed_cell(n: u64, by_kind: &std::collections::BTreeMap<String, u64>) -> String {
    if n == 0 {
        return "0".into();
    }
    let kinds: Vec<String> = by_kind.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    format!("{n} ({})", kinds.join(" "))
}

/// Every metric with its definition, fields, parameters and defaults.
pub fn metrics_table() -> String {
    let mut out = String::new();
    for doc in AnyId::all().map(AnyId::doc) {
        let _ = writeln!(out, "{}  ({})", doc.id, doc.direction);
        let _ = writeln!(out, "  {}", doc.summary);
        let _ = writeln!(out, "  definition: {}", squash(&doc.definition));
        let fields: Vec<String> = doc.required.iter().map(|f| f.to_string()).collect();
        let _ = writeln!(out, "  requires:   {}", fields.join(", "));
        let _ = writeln!(out, "  outputs:    {}", doc.outputs);
        let _ = writeln!(out, "  empty:      {}", doc.empty_inputs);
        for p in doc.params {
            let _ = writeln!(
                out,
                "  --set {}.{}={}  {}",
                doc.id,
                p.name,
                p.default,
                squash(p.doc)
            );
        }
        if doc.id == AnyId::Judged(assay_metrics::judged::aspect_critique::ID) {
            let _ = writeln!(
                out,
                "  --set aspect_critique.aspect.NAME=DEFINITION  a custom aspect (repeatable)"
            );
        }
        out.push('\n');
    }
    out
}

/// The same as JSON.
pub fn metrics_json() -> serde_json::Value {
    serde_json::Value::Array(
        AnyId::all()
            .map(AnyId::doc)
            .map(|d| {
                serde_json::json!({
                    "id": d.id.to_string(),
                    "kind": match d.id { AnyId::Lexical(_) => "lexical", AnyId::Judged(_) => "judged" },
                    "summary": d.summary,
                    "definition": squash(&d.definition),
                    "required": d.required.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
                    "direction": d.direction,
                    "outputs": d.outputs,
                    "empty_inputs": d.empty_inputs,
                    "params": d.params.iter().map(|p| serde_json::json!({"name": p.name, "default": p.default, "doc": squash(p.doc)})).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// `assay cache stats`.
pub fn cache_stats(s: &assay_llm::CacheStats) -> String {
    format!(
        "cache:       {}\nchat:        {} answers ({} prompt + {} completion tokens paid for)\nembeddings:  {}\nsize:        {} bytes\n",
        s.path.display(),
        s.chat_entries,
        s.prompt_tokens,
        s.completion_tokens,
        s.embedding_entries,
        s.file_bytes
    )
}

/// Collapses the runs of spaces left by wrapped string literals.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn align(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell}{}", " ".repeat(w - cell.chars().count())))
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}

/// `assay align`'s table: the pooled held-out ROC-AUC before and after,
/// beside the baselines, then each fold.
pub fn alignment(a: &assay_grounding::align::Alignment) -> String {
    let e = &a.evaluation;
    let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.3}"));
    let mut rows = vec![[
        "fold",
        "rows tested",
        "claims trained",
        "L2 chosen",
        "before",
        "after",
    ]
    .map(String::from)
    .to_vec()];
    for fold in &e.folds {
        rows.push(vec![
            fold.fold.to_string(),
            fold.rows.to_string(),
            fold.trained_claims.to_string(),
            fold.l2.to_string(),
            f(fold.before),
            f(fold.after),
        ]);
    }
    let file = &a.model.provenance.files[0];
    let mut out = format!(
        "aligned on {} ({} rows, {} labelled claims, {} supported)\n\
         {}\n\
         ROC-AUC for faithful rows, pooled over the held-out folds ({} rows): before {:.3}, after {:.3}; \
         word-count baseline {:.3}, length baseline {:.3}\n{}\n",
        file.name,
        file.rows,
        file.claims,
        file.supported,
        e.split,
        e.rows,
        e.before,
        e.after,
        e.novelty,
        e.length,
        align(&rows)
    );
    if !e.tasks.is_empty() {
        let mut rows = vec![[
            "task",
            "rows",
            "before",
            "after",
            "word-count baseline",
            "length baseline",
        ]
        .map(String::from)
        .to_vec()];
        for t in &e.tasks {
            rows.push(vec![
                t.task.clone(),
                t.rows.to_string(),
                f(t.before),
                f(t.after),
                f(t.novelty),
                f(t.length),
            ]);
        }
        out.push_str(&format!("per task, the same scores:\n{}\n", align(&rows)));
    }
    out
}
