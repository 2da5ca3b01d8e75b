//! The HTML report of a run directory: one self-contained `report.html`
//! (inline CSS, inline script, SVG charts; nothing fetched when it opens).
//!
//! Untrusted text (dataset fields, judge answers, metric and sample names)
//! reaches the page by two roads only, so both can be audited: Rust puts
//! text into HTML through [`escape_html`], and the samples travel as JSON
//! inside a `<script type="application/json">` written by [`script_json`],
//! which the page's script turns into DOM nodes with `textContent`.
//!
//! Bounded size and memory: `results.jsonl` is read as a stream; the table
//! and detail views embed the first [`MAX_SAMPLES`] samples (by row) and
//! cut any text longer than [`MAX_TEXT`] characters with a visible marker;
//! the header, the charts, the statistics and the count of failures cover
//! the whole run.

use crate::{Error, Result};
use assay_core::dataset::{self, Format, InputOptions, Source};
use assay_core::{visit_results, Field, OutcomeRecord, Sample, Status};
use assay_engine::rundir::{MANIFEST, RESULTS, SUMMARY};
use assay_engine::{RunManifest, RunSummary};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The report's file name inside the run directory.
pub const REPORT: &str = "report.html";
/// Written by calibration, rendered when present.
const CALIBRATION: &str = "calibration.json";
/// Samples embedded in the table and detail view.
pub const MAX_SAMPLES: usize = 5_000;
/// Characters kept of one embedded text.
pub const MAX_TEXT: usize = 4_000;
/// Failures listed in the failures section.
const MAX_FAILURES: usize = 200;
/// Bars of each histogram, over [0, 1].
const BINS: usize = 10;

const TEMPLATE: &str = include_str!("../assets/report.html");
const STYLE: &str = include_str!("../assets/report.css");
const SCRIPT: &str = include_str!("../assets/report.js");

/// Writes `DIR/report.html` from the run directory `dir` and returns its
/// path. `input_format` overrides the format the manifest records (a run
/// of an earlier assay recorded none: then the extension or first byte
/// decides, as for `eval`).
pub fn write(dir: &Path, input_format: Option<Format>) -> Result<PathBuf> {
    let manifest_path = dir.join(MANIFEST);
    if !manifest_path.exists() {
        return Err(Error::Usage(format!(
            "{} is not a run directory: it has no {MANIFEST}",
            dir.display()
        )));
    }
    // Read as the run-log types, which check them, then shown as JSON.
    let typed: RunManifest = assay_engine::log::read_json(&manifest_path)?;
    let input_format = input_format.or(typed.input.format);
    let input = check_input(&typed);
    let manifest = serde_json::to_value(&typed).unwrap_or_default();
    let summary = match dir.join(SUMMARY) {
        p if p.exists() => Some(
            serde_json::to_value(assay_engine::log::read_json::<RunSummary>(&p)?)
                .unwrap_or_default(),
        ),
        _ => None,
    };
    let calibration = match dir.join(CALIBRATION) {
        p if p.exists() => Some(read_json(&p)?),
        _ => None,
    };
    let results = Results::read(&dir.join(RESULTS))?;
    let html = render(&Run {
        dir,
        manifest: &manifest,
        summary: summary.as_ref(),
        calibration: calibration.as_ref(),
        results: &results,
        input: &input,
        input_format,
    })?;
    let path = dir.join(REPORT);
    let tmp = dir.join(format!(".{REPORT}.tmp"));
    fs::write(&tmp, html).map_err(Error::io("write", &tmp))?;
    fs::rename(&tmp, &path).map_err(Error::io("write", &path))?;
    Ok(path)
}

fn read_json(path: &Path) -> Result<Value> {
    let text = fs::read_to_string(path).map_err(Error::io("read", path))?;
    serde_json::from_str(&text).map_err(|source| Error::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Escapes text for HTML element content and quoted attribute values:
/// `<a href="x">` becomes `&lt;a href=&quot;x&quot;&gt;`.
pub fn escape_html(text: &str) -> String {
    replace_chars(text, |c| match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    })
}

/// JSON for the inside of a `<script>` element: `<`, `>` and `&` become
/// `\u003c` and so on, so no string can close the element or open a
/// comment; U+2028 and U+2029 are escaped for older script parsers. Those
/// characters occur only inside JSON strings, where the escapes mean the
/// same characters.
pub fn script_json(value: &Value) -> String {
    replace_chars(&value.to_string(), |c| match c {
        '<' => Some("\\u003c"),
        '>' => Some("\\u003e"),
        '&' => Some("\\u0026"),
        '\u{2028}' => Some("\\u2028"),
        '\u{2029}' => Some("\\u2029"),
        _ => None,
    })
}

/// `text` with each character that `replace` maps swapped for its mapping.
fn replace_chars(text: &str, replace: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match replace(c) {
            Some(r) => out.push_str(r),
            None => out.push(c),
        }
    }
    out
}

/// Whether the input named in the manifest is still the one scored.
#[derive(Debug, PartialEq)]
enum Input {
    /// Same SHA-256 as at run time, and its side files too: its fields can
    /// be shown, read as the run read them.
    Verified(PathBuf, InputOptions),
    Changed {
        path: String,
        now: String,
    },
    Unreadable {
        path: String,
        error: String,
    },
    /// Read from standard input, or no input recorded.
    Unavailable(String),
}

impl Input {
    fn note(&self) -> String {
        match self {
            Input::Verified(p, _) => format!("{}: unchanged since the run", p.display()),
            Input::Changed { path, now } => format!(
                "{path} has changed since the run (sha256 now {now}): its fields are not shown"
            ),
            Input::Unreadable { path, error } => {
                format!("{path} cannot be read ({error}): its fields are not shown")
            }
            Input::Unavailable(why) => format!("{why}: fields are not shown"),
        }
    }
}

fn check_input(manifest: &RunManifest) -> Input {
    let path = manifest.input.path.as_str();
    let Some(recorded) = manifest.input.sha256.as_deref() else {
        return Input::Unavailable(match path {
            "-" => "the input was read from standard input".into(),
            _ => "the manifest records no input file".into(),
        });
    };
    match assay_core::hash::sha256_file(Path::new(path)) {
        Ok(now) if now == recorded => match manifest.input.options() {
            Ok(options) => Input::Verified(PathBuf::from(path), options),
            Err(why) => Input::Unavailable(why),
        },
        Ok(now) => Input::Changed {
            path: path.into(),
            now,
        },
        Err(e) => Input::Unreadable {
            path: path.into(),
            error: e.to_string(),
        },
    }
}

/// Everything the report is made from.
struct Run<'a> {
    dir: &'a Path,
    manifest: &'a Value,
    summary: Option<&'a Value>,
    calibration: Option<&'a Value>,
    results: &'a Results,
    input: &'a Input,
    input_format: Option<Format>,
}

fn render(run: &Run) -> Result<String> {
    let outputs = output_names(run.summary, &run.results.outputs);
    let data = embedded_data(run, &outputs)?;
    let title = format!("assay report: {}", run.dir.display());
    Ok(fill(
        TEMPLATE,
        &[
            ("title", &escape_html(&title)),
            ("style", STYLE),
            ("header", &header(run)),
            ("charts", &charts(run, &outputs)),
            ("agreement", &agreement(run.summary)),
            ("signatures", &signatures(run.manifest)),
            ("corpus", &corpus(run.summary)),
            ("calibration", &calibration(run.calibration)),
            ("failures", &failures(run.results)),
            ("data", &script_json(&data)),
            ("script", SCRIPT),
        ],
    ))
}

/// Replaces each `{{name}}` of `template` in one pass, so text put in is
/// never scanned for placeholders again.
fn fill(template: &str, parts: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &after[..end];
        match parts.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => out.push_str(text),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Output names in the summary's order, then any others in results order.
fn output_names(summary: Option<&Value>, seen: &[String]) -> Vec<String> {
    let mut names: Vec<String> = summary
        .and_then(|s| s["outputs"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|o| o["name"].as_str().map(str::to_string))
        .collect();
    for name in seen {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// What the report keeps of `results.jsonl`: the outcomes of the first
/// [`MAX_SAMPLES`] rows, the first [`MAX_FAILURES`] failures, and counts.
#[derive(Default)]
struct Results {
    /// Output names in order of first appearance.
    outputs: Vec<String>,
    /// Histogram counts of scored values, per output.
    bins: BTreeMap<String, [u64; BINS]>,
    /// Row -> (sample id, output -> outcome), for the lowest rows only.
    samples: BTreeMap<u64, (String, Map<String, Value>)>,
    rows: HashSet<u64>,
    failures: Vec<OutcomeRecord>,
    n_failed: usize,
    /// A last line without its newline: the run was cut off mid-write.
    torn_bytes: u64,
}

impl Results {
    fn read(path: &Path) -> Result<Results> {
        let mut results = Results::default();
        let log = visit_results(path, |r| results.add(r))?;
        results.torn_bytes = log.torn_bytes;
        Ok(results)
    }

    fn add(&mut self, r: OutcomeRecord) {
        let counts = self.bins.entry(r.metric.clone()).or_insert_with(|| {
            self.outputs.push(r.metric.clone());
            [0; BINS]
        });
        if let (Status::Scored, Some(v)) = (r.status, r.value) {
            counts[bin(v)] += 1;
        }
        self.rows.insert(r.row);
        // Rows come in completion order; keeping the lowest MAX_SAMPLES
        // means a row dropped once is higher than all kept, forever.
        let full = self.samples.len() >= MAX_SAMPLES;
        if !full || self.samples.range(r.row..).next().is_some() {
            self.samples
                .entry(r.row)
                .or_insert_with(|| (r.sample_id.clone(), Map::new()))
                .1
                .insert(r.metric.clone(), outcome_json(&r));
            if self.samples.len() > MAX_SAMPLES {
                self.samples.pop_last();
            }
        }
        if r.status == Status::Failed {
            self.n_failed += 1;
            if self.failures.len() < MAX_FAILURES {
                self.failures.push(r);
            }
        }
    }
}

/// An outcome as the page's script reads it, texts clipped.
fn outcome_json(r: &OutcomeRecord) -> Value {
    let mut outcome = Map::new();
    outcome.insert("status".into(), json!(r.status));
    if let Some(v) = r.value {
        outcome.insert("value".into(), json!(v));
    }
    if let Some(reason) = &r.reason {
        outcome.insert("reason".into(), Value::String(clip(reason)));
    }
    if let Some(d) = &r.details {
        outcome.insert("details".into(), clip_value(&d.to_json()));
    }
    if let Some(e) = &r.error {
        outcome.insert(
            "error".into(),
            json!({"kind": e.kind.name(), "message": clip(&e.message)}),
        );
    }
    outcome.into()
}

fn header(run: &Run) -> String {
    let m = run.manifest;
    let mut rows: Vec<(String, String)> = vec![
        ("run directory".into(), run.dir.display().to_string()),
        ("input".into(), run.input.note()),
    ];
    if let Some(sha) = m["input"]["sha256"].as_str() {
        rows.push(("input sha256".into(), sha.into()));
    }
    if let Some(judge) = m["judge"].as_object() {
        rows.push(("judge".into(), scalar_text(&judge["spec"])));
        if let Some(spec) = judge.get("embedder").and_then(|e| e["spec"].as_str()) {
            rows.push(("embedder".into(), spec.into()));
        }
    }
    if let Some(r) = run.summary.and_then(|s| s.get("ragas_score")) {
        let text = match r["value"].as_f64() {
            Some(v) => format!("{v:.4} (harmonic mean of {})", list_text(&r["metrics"])),
            None => format!("- ({})", r["reason"].as_str().unwrap_or("")),
        };
        rows.push(("ragas_score".into(), text));
    }
    // Fields other engineers add to the manifest (`complete`, `repeats`,
    // `git_revision`...) show up without a change here.
    if let Some(obj) = m.as_object() {
        for (k, v) in obj {
            if !matches!(k.as_str(), "input" | "metrics" | "judge") {
                rows.push((k.clone(), scalar_text(v)));
            }
        }
    }
    let mut html = String::from("<dl class=\"facts\">");
    for (k, v) in &rows {
        let _ = write!(
            html,
            "<dt>{}</dt><dd>{}</dd>",
            escape_html(k),
            escape_html(v)
        );
    }
    html.push_str("</dl>");
    html
}

/// Each judged metric's measured agreement with people, beside its
/// baseline, so that a reader knows how far to trust the scores above.
fn agreement(summary: Option<&Value>) -> String {
    let Some(list) = summary.and_then(|s| s["agreement"].as_array()) else {
        return String::new();
    };
    let rows: Vec<Vec<Value>> = list
        .iter()
        .map(|a| {
            vec![
                a["metric"].clone(),
                a["set"].clone(),
                Value::from(format!(
                    "{} {:.2} [{:.2}, {:.2}]",
                    a["figure"].as_str().unwrap_or(""),
                    a["value"].as_f64().unwrap_or(f64::NAN),
                    a["ci95"][0].as_f64().unwrap_or(f64::NAN),
                    a["ci95"][1].as_f64().unwrap_or(f64::NAN)
                )),
                Value::from(format!(
                    "{} {:.2}",
                    a["baseline"].as_str().unwrap_or(""),
                    a["baseline_value"].as_f64().unwrap_or(f64::NAN)
                )),
                a["rows"].clone(),
            ]
        })
        .collect();
    let mut html = String::from(
        "<h3>Agreement with people</h3><p class=\"note\">Measured with <code>assay calibrate</code> \
         on labelled sets, beside the best trivial baseline on the same rows; a judged metric \
         not listed was not measured with this judge and protocol.</p>",
    );
    html.push_str(&table(
        &["metric", "set", "figure", "baseline", "rows"],
        &rows,
    ));
    html
}

/// The metrics with their outputs and signatures, after the scores.
fn signatures(m: &Value) -> String {
    let metrics: Vec<Vec<Value>> = m["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| {
            vec![
                x["id"].clone(),
                Value::from(list_text(&x["outputs"])),
                x["signature"].clone(),
            ]
        })
        .collect();
    table(&["metric", "outputs", "signature"], &metrics)
}

/// A JSON list as `a, b, c`.
fn list_text(v: &Value) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .map(scalar_text)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A JSON value as plain text: strings without quotes, null as empty,
/// lists and objects as compact JSON.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A table of escaped cells; numbers right-aligned to three decimals
/// unless whole.
fn table<S: AsRef<str>>(columns: &[S], rows: &[Vec<Value>]) -> String {
    let mut html = String::from("<table class=\"plain\"><thead><tr>");
    for c in columns {
        let _ = write!(html, "<th>{}</th>", escape_html(c.as_ref()));
    }
    html.push_str("</tr></thead><tbody>");
    for row in rows {
        html.push_str("<tr>");
        for cell in row {
            match cell {
                Value::Number(n) => {
                    let _ = write!(html, "<td class=\"num\">{}</td>", number(n.as_f64()));
                }
                other => {
                    let _ = write!(html, "<td>{}</td>", escape_html(&scalar_text(other)));
                }
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
    html
}

fn number(x: Option<f64>) -> String {
    match x {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x}"),
        Some(x) => format!("{x:.4}"),
        None => String::new(),
    }
}

/// One card per output: its statistics and the histogram of its scores.
fn charts(run: &Run, outputs: &[String]) -> String {
    let stats = |name: &str| -> Option<&Value> {
        run.summary?["outputs"]
            .as_array()?
            .iter()
            .find(|o| o["name"] == name)
    };
    let mut html = String::new();
    for name in outputs {
        let counts = run.results.bins.get(name).copied().unwrap_or_default();
        let line = match stats(name) {
            Some(s) => format!(
                "mean {} (95% CI {}–{}), scored {}, skipped {}, failed {}{}",
                number(s["mean"].as_f64()),
                number(s["ci95"]["low"].as_f64()),
                number(s["ci95"]["high"].as_f64()),
                scalar_text(&s["n_scored"]),
                scalar_text(&s["n_skipped"]),
                scalar_text(&s["n_failed"]),
                match s["direction"].as_str() {
                    Some(d) => format!(", {}", d.replace('_', " ")),
                    None => String::new(),
                }
            ),
            None => format!("scored {} (no summary.json)", counts.iter().sum::<u64>()),
        };
        let _ = write!(
            html,
            "<figure class=\"chart\"><figcaption><b>{}</b><br>{}</figcaption>{}</figure>",
            escape_html(name),
            escape_html(&line),
            histogram(&counts)
        );
    }
    html
}

/// The histogram bar of a score: [`BINS`] equal bins over [0, 1], with 1
/// in the last.
fn bin(score: f64) -> usize {
    ((score.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1)
}

/// An inline SVG bar chart of the score distribution.
fn histogram(counts: &[u64; BINS]) -> String {
    const W: f64 = 300.0;
    const H: f64 = 120.0;
    const LEFT: f64 = 44.0;
    const BASE: f64 = 100.0;
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let bar = (W - LEFT - 6.0) / BINS as f64;
    let mut svg = format!(
        "<svg class=\"hist\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\">"
    );
    for (i, &n) in counts.iter().enumerate() {
        let h = (BASE - 8.0) * n as f64 / max as f64;
        let x = LEFT + i as f64 * bar;
        let lo = i as f64 / BINS as f64;
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\"><title>{lo:.1}–{:.1}: {n}</title></rect>",
            BASE - h,
            bar - 2.0,
            lo + 1.0 / BINS as f64
        );
    }
    let _ = write!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{BASE}\" x2=\"{}\" y2=\"{BASE}\"/>\
         <text x=\"{LEFT}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">0.5</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">1</text>\
         <text x=\"{}\" y=\"12\" text-anchor=\"end\">{max}</text>",
        W - 6.0,
        BASE + 14.0,
        LEFT + (W - LEFT - 6.0) / 2.0,
        BASE + 14.0,
        W - 6.0,
        BASE + 14.0,
        LEFT - 4.0,
    );
    if counts.iter().all(|&n| n == 0) {
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"55\" text-anchor=\"middle\">nothing scored</text>",
            W / 2.0
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Corpus-level scores and judge usage from `summary.json`.
fn corpus(summary: Option<&Value>) -> String {
    let Some(summary) = summary else {
        return "<p class=\"note\">No summary.json: the run did not finish.</p>".into();
    };
    let mut html = String::new();
    if let Some(scores) = summary["corpus"].as_array().filter(|a| !a.is_empty()) {
        let rows: Vec<Vec<Value>> = scores
            .iter()
            .map(|c| {
                vec![
                    c["name"].clone(),
                    c["value"].clone(),
                    c["signature"].clone(),
                ]
            })
            .collect();
        html.push_str("<h3>Corpus scores</h3>");
        html.push_str(&table(&["metric", "value", "signature"], &rows));
    }
    if let Some(usage) = summary.get("usage").filter(|u| !u.is_null()) {
        let pretty = serde_json::to_string_pretty(usage).unwrap_or_default();
        let _ = write!(
            html,
            "<details><summary>Judge usage</summary><pre>{}</pre></details>",
            escape_html(&pretty)
        );
    }
    html
}

/// The tables of `calibration.json`, each `{title, columns, rows}`.
fn calibration(file: Option<&Value>) -> String {
    let Some(tables) = file.and_then(|c| c["tables"].as_array()) else {
        return String::new();
    };
    let mut html = String::from("<section id=\"calibration\"><h2>Calibration</h2>");
    for t in tables {
        let columns: Vec<String> = t["columns"]
            .as_array()
            .into_iter()
            .flatten()
            .map(scalar_text)
            .collect();
        let rows: Vec<Vec<Value>> = t["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r.as_array().cloned().unwrap_or_default())
            .collect();
        let _ = write!(html, "<h3>{}</h3>", escape_html(&scalar_text(&t["title"])));
        html.push_str(&table(&columns, &rows));
    }
    html.push_str("</section>");
    html
}

/// The failed outcomes with their kind and evidence, the first
/// [`MAX_FAILURES`] in full.
fn failures(results: &Results) -> String {
    if results.n_failed == 0 {
        return "<p>No failures.</p>".into();
    }
    let rows: Vec<Vec<Value>> = results
        .failures
        .iter()
        .map(|r| {
            let (kind, message) = r
                .error
                .as_ref()
                .map(|e| (e.kind.name(), clip(&e.message)))
                .unwrap_or_default();
            vec![
                Value::from(r.sample_id.as_str()),
                Value::from(r.row),
                Value::from(r.metric.as_str()),
                Value::from(kind),
                Value::from(message),
            ]
        })
        .collect();
    let mut html = format!("<p>{} failed outcomes.</p>", results.n_failed);
    html.push_str(&table(
        &["sample", "row", "output", "kind", "evidence"],
        &rows,
    ));
    if results.n_failed > MAX_FAILURES {
        let _ = write!(
            html,
            "<p class=\"note\">The first {MAX_FAILURES} are listed; results.jsonl has them all.</p>"
        );
    }
    html
}

/// Text cut to [`MAX_TEXT`] characters, with a marker saying how much went.
fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        None => text.to_string(),
        Some((at, _)) => format!(
            "{}… [cut: {} more characters]",
            &text[..at],
            text[at..].chars().count()
        ),
    }
}

/// `value` with every string clipped.
fn clip_value(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(clip(s)),
        Value::Array(items) => items.iter().map(clip_value).collect(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), clip_value(v)))
            .collect::<Map<_, _>>()
            .into(),
        other => other.clone(),
    }
}

/// The JSON the page's script renders the samples table and details from.
fn embedded_data(run: &Run, outputs: &[String]) -> Result<Value> {
    let shown = &run.results.samples;
    let total = run.results.rows.len();
    let fields = match run.input {
        Input::Verified(path, options) => {
            Some(input_fields(path, run.input_format, options, shown)?)
        }
        _ => None,
    };
    let samples: Vec<Value> = shown
        .iter()
        .map(|(row, (id, outcomes))| {
            json!({
                "id": id,
                "row": row,
                "fields": fields.as_ref().map(|f| f.get(row).cloned().unwrap_or(Value::Null)),
                "outcomes": outcomes,
            })
        })
        .collect();
    let mut notes = Vec::new();
    if run.results.torn_bytes > 0 {
        notes.push(format!(
            "results.jsonl ends with a partial line ({} bytes): the run was cut off.",
            run.results.torn_bytes
        ));
    }
    if total > shown.len() {
        notes.push(format!(
            "The first {} of {total} samples are shown; the charts and statistics cover all.",
            shown.len()
        ));
    }
    if fields.is_none() {
        notes.push(format!("Input: {}.", run.input.note()));
    }
    notes.push(format!(
        "Texts longer than {MAX_TEXT} characters are cut, with a marker."
    ));
    Ok(
        json!({"outputs": outputs, "samples": samples, "notes": notes, "input_read": fields.is_some()}),
    )
}

/// The input fields of the rows in `wanted`, keyed by row; rows that could
/// not be read are absent (their outcomes say why).
fn input_fields<T>(
    path: &Path,
    format: Option<Format>,
    options: &InputOptions,
    wanted: &BTreeMap<u64, T>,
) -> Result<BTreeMap<u64, Value>> {
    let last = wanted.keys().next_back().copied().unwrap_or(0);
    let rows = dataset::open_with(&Source::Path(path.to_path_buf()), format, options)
        .map_err(|e| Error::Usage(format!("cannot read the input {}: {e}", path.display())))?;
    let mut fields = BTreeMap::new();
    for row in rows {
        let Ok((sample, _)) = row else { continue };
        if sample.row > last {
            break;
        }
        if wanted.contains_key(&sample.row) {
            fields.insert(sample.row, sample_fields(&sample));
        }
    }
    Ok(fields)
}

/// Tool calls as `[{"name", "args"}]`.
fn calls<'c>(calls: impl Iterator<Item = &'c assay_core::ToolCall>) -> Value {
    Value::Array(
        calls
            .map(|c| json!({"name": c.name, "args": c.args}))
            .collect(),
    )
}

/// The sample's present fields, by canonical name, clipped.
fn sample_fields(s: &Sample) -> Value {
    let text = |t: &Option<String>| t.as_ref().map(|t| json!(t));
    let list = |l: &Option<Vec<String>>| l.as_ref().map(|l| json!(l));
    Field::ALL
        .into_iter()
        .filter_map(|field| {
            let value = match field {
                Field::UserInput => text(&s.user_input),
                Field::Response => text(&s.response),
                Field::RetrievedContexts => list(&s.retrieved_contexts),
                Field::Reference => text(&s.reference),
                Field::References => list(&s.references),
                Field::ReferenceContexts => list(&s.reference_contexts),
                Field::Messages => s.messages.as_ref().map(|c| {
                    let messages: Vec<Value> = c
                        .messages
                        .iter()
                        .map(|m| {
                            json!({"role": m.role.name(), "content": m.content,
                                   "tool_calls": calls(m.tool_calls.iter())})
                        })
                        .collect();
                    json!(messages)
                }),
                Field::ReferenceToolCalls => s
                    .reference_tool_calls
                    .as_ref()
                    .and_then(|r| r.as_ref().ok())
                    .map(|r| calls(r.iter())),
                Field::ChatbotRole => text(&s.chatbot_role),
                Field::ReferenceTopics => list(&s.reference_topics),
            }?;
            Some((field.name().to_string(), clip_value(&value)))
        })
        .collect::<Map<_, _>>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_html_covers_markup_and_quotes() {
        assert_eq!(
            escape_html(r#"<script>alert("x") & 'y'</script>"#),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(escape_html("plain é ü"), "plain é ü");
    }

    #[test]
    fn script_json_cannot_close_its_element_and_round_trips() {
        let text = "</script><script>alert(1)</script> <!-- a\u{2028}b\u{2029}c & d > e";
        let value = json!({"response": text, "list": [text]});
        let embedded = script_json(&value);
        for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
            assert!(!embedded.contains(bad), "{bad:?} left in {embedded}");
        }
        let back: Value = serde_json::from_str(&embedded).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn fill_replaces_placeholders_once() {
        let out = fill(
            "<p>{{a}}</p>{{b}}{{unknown}}",
            &[("a", "{{b}}"), ("b", "B")],
        );
        assert_eq!(out, "<p>{{b}}</p>B{{unknown}}");
    }

    #[test]
    fn clip_marks_what_it_cuts() {
        let long = "é".repeat(MAX_TEXT + 5);
        let cut = clip(&long);
        assert!(cut.ends_with("… [cut: 5 more characters]"), "{cut}");
        assert_eq!(cut.chars().filter(|&c| c == 'é').count(), MAX_TEXT);
        assert_eq!(clip("short"), "short");
    }

    #[test]
    fn scores_fall_in_ten_bins_with_one_in_the_last() {
        assert_eq!(
            [0.0, 0.05, 0.1, 0.55, 0.99, 1.0, -0.5, 1.5].map(bin),
            [0, 0, 1, 5, 9, 9, 0, 9]
        );
    }

    #[test]
    fn big_runs_embed_the_first_samples_and_say_so() {
        let n = MAX_SAMPLES as u64 + 2;
        let outcome = assay_core::Outcome::scored(0.5, json!({}));
        let mut results = Results::default();
        // Outcomes arrive out of row order: one output backwards, one forwards.
        for (row, metric) in (1..=n)
            .rev()
            .map(|r| (r, "bleu"))
            .chain((1..=n).map(|r| (r, "chrf")))
        {
            results.add(OutcomeRecord::new(
                &format!("s{row}"),
                row,
                metric,
                outcome.clone(),
            ));
        }
        let manifest = json!({});
        let run = Run {
            dir: Path::new("run"),
            manifest: &manifest,
            summary: None,
            calibration: None,
            results: &results,
            input: &Input::Unavailable("read from standard input".into()),
            input_format: None,
        };
        let outputs = output_names(None, &results.outputs);
        assert_eq!(outputs, ["bleu", "chrf"]);
        assert_eq!(results.bins["chrf"][5], n);
        let data = embedded_data(&run, &outputs).unwrap();
        let samples = data["samples"].as_array().unwrap();
        assert_eq!(samples.len(), MAX_SAMPLES);
        assert_eq!(
            (&samples[0]["id"], &samples[0]["row"]),
            (&json!("s1"), &json!(1))
        );
        let last = &samples[MAX_SAMPLES - 1];
        assert_eq!(last["row"], json!(MAX_SAMPLES));
        assert_eq!(last["outcomes"].as_object().unwrap().len(), 2);
        let notes = data["notes"].to_string();
        let expected = format!("The first {MAX_SAMPLES} of {n} samples");
        assert!(notes.contains(&expected), "{notes}");
        assert!(notes.contains("standard input"), "{notes}");
        assert_eq!(data["input_read"], json!(false));
    }

    #[test]
    fn input_status_says_changed_or_missing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.jsonl");
        fs::write(&path, "{}\n").unwrap();
        let sha = assay_core::hash::sha256_file(&path).unwrap();
        let with_input = |path: &str, sha: Option<&str>| -> RunManifest {
            serde_json::from_value(json!({
                "format_version": 1, "assay_version": "0.1.0", "metrics": [], "judge": null,
                "input": {"path": path, "sha256": sha},
            }))
            .unwrap()
        };
        let manifest = |sha: &str| with_input(path.to_str().unwrap(), Some(sha));
        assert_eq!(
            check_input(&manifest(&sha)),
            Input::Verified(path.clone(), InputOptions::default())
        );
        assert!(matches!(check_input(&manifest("0")), Input::Changed { .. }));
        fs::remove_file(&path).unwrap();
        let missing = check_input(&manifest(&sha)).note();
        assert!(missing.contains("cannot be read"), "{missing}");
        let stdin = check_input(&with_input("-", None)).note();
        assert!(stdin.contains("standard input"), "{stdin}");
    }
}
