//! What `eval` and `metrics` print on stdout.

use crate::engine::RunSummary;
use assay_metrics::{Direction, SPECS};
use std::fmt::Write;

/// The summary as an aligned text table, then the corpus-level scores.
pub fn summary_table(summary: &RunSummary) -> String {
    let mut rows = vec![[
        "metric", "n", "skipped", "failed", "mean", "95% CI", "min", "max",
    ]
    .map(String::from)
    .to_vec()];
    for o in &summary.outputs {
        let s = &o.summary;
        let arrow = match o.direction {
            Direction::HigherIsBetter => "↑",
            Direction::LowerIsBetter => "↓",
        };
        let mut row = vec![
            format!("{} {arrow}", o.name),
            s.n_scored.to_string(),
            s.n_skipped.to_string(),
            failed_cell(s.n_failed, &s.failed_by_kind),
        ];
        match &s.stats {
            Some(st) => row.extend([
                format!("{:.4}", st.mean),
                format!("[{:.4}, {:.4}]", st.ci95.low, st.ci95.high),
                format!("{:.4}", st.min),
                format!("{:.4}", st.max),
            ]),
            None => row.extend(["-", "-", "-", "-"].map(String::from)),
        }
        rows.push(row);
    }
    let mut out = align(&rows);
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
    for spec in &SPECS {
        let _ = writeln!(out, "{}  ({})", spec.id, direction_word(spec.direction));
        let _ = writeln!(out, "  {}", spec.summary);
        let _ = writeln!(out, "  definition: {}", squash(spec.definition));
        let fields: Vec<String> = spec.required.iter().map(|f| f.to_string()).collect();
        let _ = writeln!(out, "  requires:   {}", fields.join(", "));
        let _ = writeln!(out, "  outputs:    {}", spec.outputs);
        let _ = writeln!(out, "  empty:      {}", spec.empty_inputs);
        for p in spec.params {
            let _ = writeln!(
                out,
                "  --set {}.{}={}  {}",
                spec.id, p.name, p.default, p.doc
            );
        }
        out.push('\n');
    }
    out
}

/// The same as JSON.
pub fn metrics_json() -> serde_json::Value {
    serde_json::Value::Array(
        SPECS
            .iter()
            .map(|s| {
                serde_json::json!({
                    "id": s.id.to_string(),
                    "summary": s.summary,
                    "definition": squash(s.definition),
                    "required": s.required.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
                    "direction": s.direction,
                    "outputs": s.outputs,
                    "empty_inputs": s.empty_inputs,
                    "params": s.params.iter().map(|p| serde_json::json!({"name": p.name, "default": p.default, "doc": p.doc})).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

fn direction_word(d: Direction) -> &'static str {
    match d {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    }
}

/// Collapses the runs of spaces left by wrapped string literals.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn align(rows: &[Vec<String>]) -> String {
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
