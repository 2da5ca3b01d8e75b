//! Training the grounding model from labelled JSONL files (the schema of
//! `../shared/data/train/README.md`): each response split into sentences
//! (`assay_text::sentences`), each sentence a claim against the row's
//! question and contexts, labelled:
//!
//! - from spans where the file has them (XSum: a sentence is unsupported
//!   when at least two annotators marked a span in it);
//! - else from the response's label: every sentence of a supported
//!   response is supported; an unsupported response of one sentence is
//!   an unsupported claim; an unsupported response of several sentences
//!   says not which, and is left out. BEGIN's "Generic" responses make no
//!   claim and are left out.
//!
//! Rows are grouped by source document; five folds by group (the group's
//! SHA-256) give the cross-validated figures in the model's provenance,
//! then the model is fitted on every claim. Same files, same model, bit
//! for bit.

use crate::features::{Features, Support, NAMES};
use crate::fit::{fit, roc_auc};
use crate::Model;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The model format's version: bumped with any change to the features.
pub const VERSION: u32 = 1;

/// The L2 penalty on the standardised weights.
pub const L2: f64 = 1.0;

/// Newton steps at most (it converges in about ten).
pub(crate) const ITERATIONS: usize = 100;

/// Folds of the cross-validation.
const FOLDS: u8 = 5;

/// The training files, in the order they are read.
pub const FILES: [&str; 5] = [
    "xsum_hallucination_spans.jsonl",
    "summedits_sample.jsonl",
    "begin_dialogue.jsonl",
    "wice_claims.jsonl",
    "halueval_qa_extra.jsonl",
];

/// Where a model came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub files: Vec<FileUse>,
    pub l2: f64,
    /// How the cross-validation split the claims.
    pub split: String,
    /// Out-of-fold ROC-AUC per fold, of P(supported) for the supported
    /// claims.
    pub folds: Vec<f64>,
    /// Out-of-fold ROC-AUC per source.
    pub sources: BTreeMap<String, f64>,
}

/// One training file: its hash and what was taken from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileUse {
    pub name: String,
    pub sha256: String,
    pub rows: usize,
    pub claims: usize,
    pub supported: usize,
}

/// Why training could not run.
#[derive(Debug)]
pub enum TrainError {
    Read(String, std::io::Error),
    Row {
        file: String,
        line: usize,
        problem: String,
    },
}

impl std::fmt::Display for TrainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrainError::Read(path, e) => write!(f, "{path}: {e}"),
            TrainError::Row {
                file,
                line,
                problem,
            } => write!(f, "{file}, line {line}: {problem}"),
        }
    }
}

impl std::error::Error for TrainError {}

/// One labelled claim of the training files, with the texts that should
/// support it (the row's question and contexts).
#[derive(Clone, Debug)]
pub struct LabelledClaim {
    /// The row's `source`, else its file's name.
    pub source: String,
    /// The source document: claims of one document share a fold.
    pub group: String,
    pub text: String,
    pub support: Arc<[String]>,
    pub supported: bool,
}

impl LabelledClaim {
    /// Its cross-validation fold, `0..FOLDS`.
    pub fn fold(&self) -> u8 {
        fold_of(&self.group, &self.source)
    }
}

/// One labelled claim's features.
struct Claim {
    source: String,
    group: String,
    supported: bool,
    values: [f64; NAMES.len()],
}

/// The claims of one row, as (sentence, supported) pairs.
pub(crate) fn labelled_sentences(
    response: &str,
    hallucinated: bool,
    spans: Option<&[(usize, usize)]>,
) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut from = 0;
    let sentences = assay_text::sentences::split_sentences(response);
    for s in &sentences {
        let start = response[from..].find(s).map_or(from, |i| from + i);
        let end = start + s.len();
        from = end;
        let supported = match spans {
            Some(spans) => !spans.iter().any(|(a, b)| *a < end && *b > start),
            None if !hallucinated => true,
            None if sentences.len() == 1 => false,
            None => continue,
        };
        out.push((s.to_string(), supported));
    }
    out
}

/// The byte offset of each character offset of `text` (its length past
/// the end): labelled spans count characters.
///
/// ```
/// let at = assay_grounding::train::byte_offsets("Ünï. x");
/// assert_eq!((at(0), at(1), at(5), at(99)), (0, 2, 7, 8));
/// ```
pub fn byte_offsets(text: &str) -> impl Fn(u64) -> usize + '_ {
    let bytes: Vec<usize> = text
        .char_indices()
        .map(|(b, _)| b)
        .chain([text.len()])
        .collect();
    move |c| bytes.get(c as usize).copied().unwrap_or(text.len())
}

/// Byte ranges of the spans at least two annotators marked (XSum's
/// offsets are in characters).
fn majority_spans(response: &str, spans: &[Value]) -> Vec<(usize, usize)> {
    let at = byte_offsets(response);
    let marked: Vec<(usize, usize, &str)> = spans
        .iter()
        .filter_map(|s| {
            Some((
                at(s.get("start")?.as_u64()?),
                at(s.get("end")?.as_u64()?),
                s.get("annotator")?.as_str()?,
            ))
        })
        .collect();
    // A byte is in a majority span when two annotators' spans hold it.
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &(a, b, who) in &marked {
        for &(c, d, other) in &marked {
            let (lo, hi) = (a.max(c), b.min(d));
            if who < other && lo < hi {
                out.push((lo, hi));
            }
        }
    }
    out
}

/// The document a row's group is named by.
fn group(file: &str, row: &Value) -> String {
    let meta = |k: &str| {
        row.get("meta")
            .and_then(|m| m.get(k))
            .map(|v| v.to_string())
    };
    let id = row.get("id").and_then(Value::as_str).unwrap_or("");
    match file {
        "xsum_hallucination_spans.jsonl" => id.split('-').nth(2).unwrap_or(id).to_string(),
        "summedits_sample.jsonl" => meta("summedits_id")
            .map(|s| {
                s.trim_matches('"')
                    .rsplit_once('_')
                    .map_or(s.clone(), |(d, _)| d.to_string())
            })
            .unwrap_or_default(),
        "wice_claims.jsonl" => meta("wice_id")
            .map(|s| {
                s.trim_matches('"')
                    .split('-')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default(),
        "halueval_qa_extra.jsonl" => meta("halueval_index").unwrap_or_default(),
        _ => row
            .get("retrieved_contexts")
            .map(|c| c.to_string())
            .unwrap_or_default(),
    }
}

pub(crate) fn fold_of(group: &str, source: &str) -> u8 {
    Sha256::digest(format!("{source}\n{group}").as_bytes())[0] % FOLDS
}

fn read_claims(
    dir: &Path,
    file: &str,
    claims: &mut Vec<LabelledClaim>,
) -> Result<FileUse, TrainError> {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| TrainError::Read(path.display().to_string(), e))?;
    let mut use_ = FileUse {
        name: file.to_string(),
        sha256: Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        rows: 0,
        claims: 0,
        supported: 0,
    };
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |problem: &str| TrainError::Row {
            file: file.to_string(),
            line: i + 1,
            problem: problem.to_string(),
        };
        let row: Value = serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
        use_.rows += 1;
        let labels = row.get("labels").ok_or_else(|| bad("no labels"))?;
        if labels.get("begin_label").and_then(Value::as_str) == Some("Generic") {
            continue;
        }
        let hallucinated = labels
            .get("hallucinated")
            .and_then(Value::as_bool)
            .ok_or_else(|| bad("labels.hallucinated is not a boolean"))?;
        let response = row
            .get("response")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("response is not a string"))?;
        let spans = match (file, labels.get("spans").and_then(Value::as_array)) {
            ("xsum_hallucination_spans.jsonl", Some(spans)) => {
                Some(majority_spans(response, spans))
            }
            _ => None,
        };
        let mut texts: Vec<String> = Vec::new();
        if let Some(q) = row.get("user_input").and_then(Value::as_str) {
            texts.push(q.to_string());
        }
        if let Some(c) = row.get("retrieved_contexts").and_then(Value::as_array) {
            texts.extend(c.iter().filter_map(Value::as_str).map(str::to_string));
        }
        let support: Arc<[String]> = texts.into();
        let source = row
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or(file)
            .to_string();
        let group = group(file, &row);
        for (sentence, supported) in labelled_sentences(response, hallucinated, spans.as_deref()) {
            use_.claims += 1;
            use_.supported += usize::from(supported);
            claims.push(LabelledClaim {
                source: source.clone(),
                group: group.clone(),
                text: sentence,
                support: Arc::clone(&support),
                supported,
            });
        }
    }
    Ok(use_)
}

/// The labelled claims of the files of `dir` ([`FILES`]), in order, and
/// what was taken from each file.
pub fn labelled_claims(dir: &Path) -> Result<(Vec<LabelledClaim>, Vec<FileUse>), TrainError> {
    let mut claims = Vec::new();
    let mut files = Vec::new();
    for file in FILES {
        files.push(read_claims(dir, file, &mut claims)?);
    }
    Ok((claims, files))
}

/// Trains the model on the files of `dir` ([`FILES`]).
pub fn train(dir: &Path) -> Result<Model, TrainError> {
    let (labelled, files) = labelled_claims(dir)?;
    let mut claims: Vec<Claim> = Vec::with_capacity(labelled.len());
    // A row's claims follow each other and share its texts: its support
    // is built once.
    let mut support: Option<(Arc<[String]>, Support)> = None;
    for c in labelled {
        let row_support = match &support {
            Some((texts, built)) if Arc::ptr_eq(texts, &c.support) => built,
            _ => {
                let built = Support::new(c.support.iter().map(String::as_str));
                &support.insert((Arc::clone(&c.support), built)).1
            }
        };
        claims.push(Claim {
            values: Features::of(&c.text, row_support).values,
            source: c.source,
            group: c.group,
            supported: c.supported,
        });
    }
    let rows = |keep: &dyn Fn(&Claim) -> bool| -> Vec<(Vec<f64>, bool)> {
        claims
            .iter()
            .filter(|c| keep(c))
            .map(|c| (c.values.to_vec(), c.supported))
            .collect()
    };
    let mut out_of_fold = vec![0.0; claims.len()];
    let mut folds = Vec::new();
    for k in 0..FOLDS {
        let held = |c: &Claim| fold_of(&c.group, &c.source) == k;
        let model = fit(&rows(&|c| !held(c)), L2, ITERATIONS);
        let (mut scores, mut labels) = (Vec::new(), Vec::new());
        for (i, c) in claims.iter().enumerate().filter(|(_, c)| held(c)) {
            out_of_fold[i] = model.probability(&c.values);
            scores.push(out_of_fold[i]);
            labels.push(c.supported);
        }
        folds.push(roc_auc(&scores, &labels).unwrap_or(f64::NAN));
    }
    let mut sources = BTreeMap::new();
    let names: std::collections::BTreeSet<&str> =
        claims.iter().map(|c| c.source.as_str()).collect();
    for name in names {
        let (scores, labels): (Vec<f64>, Vec<bool>) = claims
            .iter()
            .zip(&out_of_fold)
            .filter(|(c, _)| c.source == name)
            .map(|(c, p)| (*p, c.supported))
            .unzip();
        if let Some(auc) = roc_auc(&scores, &labels) {
            sources.insert(name.to_string(), auc);
        }
    }
    let labels: Vec<bool> = claims.iter().map(|c| c.supported).collect();
    let threshold = best_threshold(&out_of_fold, &labels);
    let fitted = fit(&rows(&|_| true), L2, ITERATIONS);
    Ok(Model {
        version: VERSION,
        features: NAMES.iter().map(|s| s.to_string()).collect(),
        mean: fitted.mean,
        scale: fitted.scale,
        weights: fitted.weights,
        bias: fitted.bias,
        threshold,
        provenance: Provenance {
            files,
            l2: L2,
            split: format!(
                "{FOLDS} folds by source document (the first byte of the SHA-256 of source and document, mod {FOLDS})"
            ),
            folds,
            sources,
        },
    })
}

/// The score from which "supported" is predicted with the best balanced
/// accuracy (the mean of the two classes' recalls), the lowest of ties.
pub(crate) fn best_threshold(scores: &[f64], labels: &[bool]) -> f64 {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let pos = labels.iter().filter(|l| **l).count() as f64;
    let neg = labels.len() as f64 - pos;
    // Predicting "supported" from order[i] on: below it, the negatives
    // are right and the positives wrong.
    let (mut best, mut at) = (f64::NEG_INFINITY, 0.5);
    let (mut neg_below, mut pos_below) = (0.0, 0.0);
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || scores[i] != scores[order[k - 1]] {
            let balanced = ((pos - pos_below) / pos + neg_below / neg) / 2.0;
            if balanced > best {
                (best, at) = (balanced, scores[i]);
            }
        }
        if labels[i] {
            pos_below += 1.0;
        } else {
            neg_below += 1.0;
        }
    }
    at
}

/// The model as `model/grounding.json` holds it.
pub fn to_json(model: &Model) -> String {
    let mut text = serde_json::to_string_pretty(model).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_take_their_label_from_spans_or_from_the_response() {
        let r = "Rome is in Italy. It has ten million people.";
        let spans = [(22, 44)];
        assert_eq!(
            labelled_sentences(r, true, Some(&spans)),
            [
                ("Rome is in Italy.".into(), true),
                ("It has ten million people.".into(), false)
            ]
        );
        assert_eq!(labelled_sentences(r, false, None).len(), 2);
        assert!(labelled_sentences(r, true, None).is_empty());
        assert_eq!(
            labelled_sentences("Rome is in Spain.", true, None),
            [("Rome is in Spain.".into(), false)]
        );
    }

    #[test]
    fn the_threshold_is_the_one_of_best_balanced_accuracy() {
        let scores = [0.1, 0.2, 0.3, 0.4, 0.6, 0.7];
        let labels = [false, false, true, false, true, true];
        // From 0.3: recall of positives 1, of negatives 2/3 -> 0.833;
        // from 0.6: 2/3 and 1 -> 0.833 too; the lowest is taken.
        assert_eq!(best_threshold(&scores, &labels), 0.3);
    }

    #[test]
    fn a_span_counts_where_two_annotators_marked_it() {
        let spans = serde_json::json!([
            {"start": 0, "end": 10, "annotator": "a"},
            {"start": 5, "end": 20, "annotator": "b"},
            {"start": 30, "end": 40, "annotator": "c"}
        ]);
        let r = "x".repeat(50);
        assert_eq!(majority_spans(&r, spans.as_array().unwrap()), [(5, 10)]);
    }
}
