//! Calibration: runs a judged metric over human-labelled samples
//! through the normal run machinery (cache, run directory, report), joins
//! its scores with the labels and writes `calibration.json`: agreement per
//! task and overall, each figure with a 95% bootstrap interval.
//!
//! The built-in sets are the files of `data/calibration/`, embedded in the
//! binary (about 3.3 MB) so that an installed `assay` calibrates without
//! the repository or a download.

use crate::agreement::{
    annotator_agreement, best_threshold, bootstrap, half_of, kendall_tau_b, preference_agreement,
    roc_auc, spearman, Confusion, Estimate, Half, Preference, Stat, Undefined,
};
use crate::{Error, Result};
use assay_config::JudgeConfig;
use assay_core::Source;
use assay_core::{read_results, Status};
use assay_engine::rundir::RESULTS;
use assay_engine::{CancelToken, Existing, Observer, RunOptions, Strictness};
use assay_metrics::judged::{
    answer_correctness, faithfulness, hallucination, summarization_score, summary_coherence,
    JudgedId, JudgedMetric, PromptSet, SOFT_SCORE,
};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Version of `calibration.json`.
pub const FORMAT_VERSION: u32 = 1;
/// The file `calibrate` writes in the run directory.
pub const CALIBRATION: &str = "calibration.json";
/// The samples `calibrate` derives from the labelled rows, in the run
/// directory (the run's input).
const SAMPLES: &str = "calibration-samples.jsonl";

/// A labelled set shipped with assay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinSet {
    RagTruth,
    HaluEvalQa,
    HaluEvalGeneral,
    SummEval,
    RagChecker,
}

const SETS: [BuiltinSet; 5] = [
    BuiltinSet::RagTruth,
    BuiltinSet::HaluEvalQa,
    BuiltinSet::HaluEvalGeneral,
    BuiltinSet::SummEval,
    BuiltinSet::RagChecker,
];

impl BuiltinSet {
    pub fn name(self) -> &'static str {
        match self {
            BuiltinSet::RagTruth => "ragtruth",
            BuiltinSet::HaluEvalQa => "halueval-qa",
            BuiltinSet::HaluEvalGeneral => "halueval-general",
            BuiltinSet::SummEval => "summeval",
            BuiltinSet::RagChecker => "ragchecker",
        }
    }

    /// The file under `data/calibration/`.
    fn file(self) -> &'static str {
        match self {
            BuiltinSet::RagTruth => "meta/ragtruth_sample.jsonl",
            BuiltinSet::HaluEvalQa => "meta/halueval_qa_sample.jsonl",
            BuiltinSet::HaluEvalGeneral => "meta/halueval_general_sample.jsonl",
            BuiltinSet::SummEval => "meta/summeval_sample.jsonl",
            BuiltinSet::RagChecker => "rag/ragchecker_meta_eval_pairs.jsonl",
        }
    }

    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            BuiltinSet::RagTruth => {
                include_bytes!("../../../data/calibration/meta/ragtruth_sample.jsonl")
            }
            BuiltinSet::HaluEvalQa => {
                include_bytes!("../../../data/calibration/meta/halueval_qa_sample.jsonl")
            }
            BuiltinSet::HaluEvalGeneral => {
                include_bytes!("../../../data/calibration/meta/halueval_general_sample.jsonl")
            }
            BuiltinSet::SummEval => {
                include_bytes!("../../../data/calibration/meta/summeval_sample.jsonl")
            }
            BuiltinSet::RagChecker => {
                include_bytes!("../../../data/calibration/rag/ragchecker_meta_eval_pairs.jsonl")
            }
        }
    }

    /// The field rows are grouped by ("per task"): RAGTruth's own task
    /// (QA, Summary, Data2txt) is finer than the schema's `task`.
    pub(crate) fn group_field(self) -> &'static str {
        match self {
            BuiltinSet::RagTruth => "meta.ragtruth_task",
            _ => "task",
        }
    }

    /// The field pairing rows of one question: HaluEval QA has a right and
    /// a hallucinated answer to each, and a paired comparison is immune to
    /// the style gap between them (short spans against sentences).
    fn pair_field(self) -> Option<&'static str> {
        match self {
            BuiltinSet::HaluEvalQa => Some("meta.halueval_index"),
            _ => None,
        }
    }
}

impl std::str::FromStr for BuiltinSet {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        SETS.into_iter().find(|set| set.name() == s).ok_or_else(|| {
            let names: Vec<&str> = SETS.iter().map(|s| s.name()).collect();
            format!("unknown set '{s}' (built-in: {})", names.join(", "))
        })
    }
}

/// How a label is compared with the scores.
#[derive(Clone, Debug, PartialEq)]
pub enum Mapping {
    /// A yes/no label: a score at or above a threshold predicts the label
    /// value `high`, and the class so predicted is called `positive`.
    Binary {
        field: String,
        high: bool,
        positive: String,
    },
    /// A rating: rank correlation with the score.
    Graded { field: String },
    /// A list of annotators' preferences between `response` (a) and
    /// `response_b` (b), > 0 when b is better: sign agreement with
    /// score(b) - score(a).
    Pairwise { field: String },
}

impl Mapping {
    fn field(&self) -> &str {
        match self {
            Mapping::Binary { field, .. }
            | Mapping::Graded { field }
            | Mapping::Pairwise { field } => field,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Mapping::Binary { .. } => "binary",
            Mapping::Graded { .. } => "graded",
            Mapping::Pairwise { .. } => "pairwise",
        }
    }

    fn describe(&self) -> String {
        match self {
            Mapping::Binary {
                field,
                high,
                positive,
            } => format!(
                "binary: a score >= the threshold predicts labels.{field} = {high} ('{positive}')"
            ),
            Mapping::Graded { field } => {
                format!("graded: rank correlation of the score with labels.{field}")
            }
            Mapping::Pairwise { field } => format!(
                "pairwise: sign of score(response_b) - score(response) against each annotator's labels.{field} (> 0: response_b better; 0: no preference, not counted)"
            ),
        }
    }
}

/// The built-in mapping of `metric` on `set`, if there is one.
pub fn builtin_mapping(metric: JudgedId, set: BuiltinSet) -> Option<Mapping> {
    use BuiltinSet::*;
    let binary = |high: bool, positive: &str| Mapping::Binary {
        field: "hallucinated".into(),
        high,
        positive: positive.into(),
    };
    let graded = |field: &str| Mapping::Graded {
        field: field.into(),
    };
    // Faithfulness is high when faithful: a high score predicts
    // hallucinated = false. Hallucination is high when contradicted.
    let grounding = matches!(set, RagTruth | HaluEvalQa);
    if metric == faithfulness::ID && grounding {
        Some(binary(false, "faithful"))
    } else if metric == hallucination::ID && grounding {
        Some(binary(true, "hallucinated"))
    } else if metric == summary_coherence::ID && set == SummEval {
        Some(graded("expert_coherence"))
    } else if [summarization_score::ID, faithfulness::ID].contains(&metric) && set == SummEval {
        Some(graded("expert_consistency"))
    } else if metric == answer_correctness::ID && set == RagChecker {
        Some(Mapping::Pairwise {
            field: "correctness_pref".into(),
        })
    } else {
        None
    }
}

const BUILTIN_LIST: &str = "faithfulness and hallucination on ragtruth and halueval-qa; \
summary_coherence on summeval (expert_coherence); summarization_score and faithfulness on \
summeval (expert_consistency); answer_correctness on ragchecker (correctness_pref)";

/// A human label of one row.
#[derive(Clone, Debug, PartialEq)]
enum Label {
    Binary(bool),
    Graded(f64),
    Pairwise(Vec<f64>),
}

impl Label {
    /// The stratum `--limit` balances over: the class, the rating rounded,
    /// or the sign of the mean preference.
    fn stratum(&self) -> i64 {
        match self {
            Label::Binary(b) => i64::from(*b),
            Label::Graded(x) => x.round() as i64,
            Label::Pairwise(v) => {
                let sum: f64 = v.iter().sum();
                (sum > 0.0) as i64 - (sum < 0.0) as i64
            }
        }
    }
}

/// One labelled row, read and checked.
struct Labelled {
    id: String,
    group: String,
    label: Label,
    /// The rows of one question share it (see [`BuiltinSet::pair_field`]).
    pair: Option<String>,
    /// The row's sample fields for the run.
    sample: serde_json::Map<String, Value>,
    /// The second response of a pairwise row.
    response_b: Option<Value>,
}

/// Where the labelled rows come from.
enum Origin {
    Builtin(BuiltinSet),
    File(PathBuf),
}

impl Origin {
    fn describe(&self) -> String {
        match self {
            Origin::Builtin(set) => format!("{} (data/calibration/{})", set.name(), set.file()),
            Origin::File(p) => p.display().to_string(),
        }
    }
}

fn usage(msg: impl std::fmt::Display) -> Error {
    Error::Usage(msg.to_string())
}

/// A dotted path (`meta.ragtruth_task`) into a row.
pub(crate) fn lookup<'a>(row: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(row, |v, key| v.get(key))
}

/// The label field: under `labels`, else at the top level.
fn label_value<'a>(row: &'a Value, field: &str) -> Option<&'a Value> {
    lookup(row, &format!("labels.{field}")).or_else(|| lookup(row, field))
}

/// Reads the label of a row as `mapping` wants it.
fn parse_label(value: &Value, mapping: &Mapping) -> std::result::Result<Label, String> {
    let number = |v: &Value| v.as_f64().filter(|x| x.is_finite());
    match mapping {
        Mapping::Binary { .. } => value
            .as_bool()
            .map(Label::Binary)
            .ok_or_else(|| format!("expected true or false, got {value}")),
        Mapping::Graded { .. } => number(value)
            .map(Label::Graded)
            .ok_or_else(|| format!("expected a number, got {value}")),
        Mapping::Pairwise { .. } => value
            .as_array()
            .and_then(|a| a.iter().map(number).collect::<Option<Vec<f64>>>())
            .filter(|a| !a.is_empty())
            .map(Label::Pairwise)
            .ok_or_else(|| format!("expected a list of numbers, got {value}")),
    }
}

/// The sample fields a metric can read; labels and provenance stay out.
const SAMPLE_FIELDS: [&str; 5] = [
    "user_input",
    "response",
    "retrieved_contexts",
    "reference",
    "references",
];

fn read_rows(
    text: &str,
    origin: &Origin,
    mapping: &Mapping,
    group_field: &str,
    pair_field: Option<&str>,
) -> Result<Vec<Labelled>> {
    let mut rows = Vec::new();
    let name = origin.describe();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{name}:{}", i + 1);
        let row: Value =
            serde_json::from_str(line).map_err(|e| usage(format!("{at}: invalid JSON: {e}")))?;
        let id = match row.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => (i + 1).to_string(),
        };
        let field = mapping.field();
        let raw = label_value(&row, field).ok_or_else(|| {
            usage(format!(
                "{at}: no label field '{field}' (under 'labels' or top level)"
            ))
        })?;
        let label = parse_label(raw, mapping)
            .map_err(|e| usage(format!("{at}: field 'labels.{field}': {e}")))?;
        let response_b = match mapping {
            Mapping::Pairwise { .. } => Some(
                row.get("response_b")
                    .filter(|v| v.is_string())
                    .cloned()
                    .ok_or_else(|| {
                        usage(format!("{at}: field 'response_b': a pairwise label needs the second response as a string"))
                    })?,
            ),
            _ => None,
        };
        let group = match lookup(&row, group_field) {
            Some(Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => "(none)".to_string(),
        };
        let sample = SAMPLE_FIELDS
            .iter()
            .filter_map(|k| row.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        let pair = pair_field
            .and_then(|f| lookup(&row, f))
            .filter(|v| !v.is_null())
            .map(Value::to_string);
        rows.push(Labelled {
            id,
            group,
            label,
            pair,
            sample,
            response_b,
        });
    }
    Ok(rows)
}

/// Rows `offset..offset + limit` of a label-balanced order: the rows of
/// each label stratum (class, rounded rating, or preference sign) sorted
/// by SHA-256 of their id (of their pair key, when they have one, so that
/// the two rows of a question are taken together), then taken in turn
/// from each stratum. The same data, offset and limit always give the
/// same subset, and an offset of N leaves out exactly the rows that a
/// limit of N selects: rows to tune on stay apart from rows to report.
fn balanced_subset(rows: Vec<Labelled>, offset: usize, limit: Option<usize>) -> Vec<Labelled> {
    let mut strata: BTreeMap<i64, Vec<(String, Labelled)>> = BTreeMap::new();
    for row in rows {
        strata.entry(row.label.stratum()).or_default().push((
            assay_core::hash::sha256_hex(row.pair.as_ref().unwrap_or(&row.id).as_bytes()),
            row,
        ));
    }
    let mut queues: Vec<std::vec::IntoIter<(String, Labelled)>> = strata
        .into_values()
        .map(|mut v| {
            v.sort_by(|a, b| (&a.0, &a.1.id).cmp(&(&b.0, &b.1.id)));
            v.into_iter()
        })
        .collect();
    let in_turn = std::iter::from_fn(|| {
        let round: Vec<Labelled> = queues
            .iter_mut()
            .filter_map(|q| q.next().map(|(_, row)| row))
            .collect();
        (!round.is_empty()).then_some(round)
    })
    .flatten()
    .skip(offset);
    match limit {
        Some(limit) => in_turn.take(limit).collect(),
        None => in_turn.collect(),
    }
}

/// The ids a row's samples get in the run: pairwise rows give two.
fn sample_ids(row: &Labelled) -> Vec<String> {
    match row.response_b {
        Some(_) => vec![format!("{}#a", row.id), format!("{}#b", row.id)],
        None => vec![row.id.clone()],
    }
}

fn write_samples(rows: &[Labelled], path: &Path) -> Result<()> {
    let mut text = String::new();
    for row in rows {
        let ids = sample_ids(row);
        let mut a = row.sample.clone();
        a.insert("id".into(), Value::from(ids[0].clone()));
        text.push_str(&Value::Object(a.clone()).to_string());
        text.push('\n');
        if let Some(b) = &row.response_b {
            a.insert("id".into(), Value::from(ids[1].clone()));
            a.insert("response".into(), b.clone());
            text.push_str(&Value::Object(a).to_string());
            text.push('\n');
        }
    }
    std::fs::write(path, text).map_err(Error::io("write", path))
}

/// What became of a row in the run.
enum Joined {
    /// Its score (pairwise: score(b) - score(a)).
    Scored(f64),
    Skipped,
    Failed,
}

fn join(rows: &[Labelled], dir: &Path, output: &str) -> Result<Vec<Joined>> {
    let log = read_results(&dir.join(RESULTS))?;
    // Under `--repeats`, a sample's repeats are judged alike and their
    // scores averaged: the calibration of the judge as the run used it.
    let mut by_id: BTreeMap<&str, Vec<(Status, Option<f64>)>> = BTreeMap::new();
    for r in log.records.iter().filter(|r| r.metric == output) {
        // The soft score, where the judge's probabilities gave one, ranks
        // finer than the count-based value (see `SOFT_SCORE`).
        let soft = r.details.as_ref().and_then(|d| d.number(SOFT_SCORE));
        by_id
            .entry(r.sample_id.as_str())
            .or_default()
            .push((r.status, soft.or(r.value)));
    }
    Ok(rows
        .iter()
        .map(|row| {
            let outcomes: Vec<Option<Joined>> = sample_ids(row)
                .iter()
                .map(|id| by_id.get(id.as_str()).map(|repeats| of_repeats(repeats)))
                .collect();
            let values: Option<Vec<f64>> = outcomes
                .iter()
                .map(|o| match o {
                    Some(Joined::Scored(v)) => Some(*v),
                    _ => None,
                })
                .collect();
            match values.as_deref() {
                Some([v]) => Joined::Scored(*v),
                Some([a, b]) => Joined::Scored(b - a),
                _ if outcomes
                    .iter()
                    .any(|o| matches!(o, None | Some(Joined::Failed))) =>
                {
                    Joined::Failed
                }
                _ => Joined::Skipped,
            }
        })
        .collect())
}

/// One sample's outcome over its repeats: the mean when every repeat was
/// scored, else failed if one failed, else skipped.
fn of_repeats(repeats: &[(Status, Option<f64>)]) -> Joined {
    let scored: Option<Vec<f64>> = repeats
        .iter()
        .map(|(status, v)| v.filter(|_| *status == Status::Scored))
        .collect();
    match scored {
        Some(vs) if !vs.is_empty() => Joined::Scored(vs.iter().sum::<f64>() / vs.len() as f64),
        _ if repeats.iter().any(|(s, _)| *s == Status::Failed) => Joined::Failed,
        _ => Joined::Skipped,
    }
}

/// The ROC-AUC of a judge that sees nothing but one number of each item
/// (`of`), ranking low first or high first, whichever does better on all
/// the items (the direction is chosen once, not per resample). A labelled
/// set whose classes differ in that number (the response's length, its
/// words the contexts lack) rewards a judge for it alone; a judge's
/// `roc_auc` means more the further it is above this.
fn baseline(items: &[BinaryItem], of: fn(&BinaryItem) -> f64) -> Estimate {
    let auc = |xs: &[BinaryItem], sign: f64| {
        let (s, p): (Vec<f64>, Vec<bool>) = xs.iter().map(|i| (sign * of(i), i.positive)).unzip();
        roc_auc(&s, &p)
    };
    let sign = match auc(items, 1.0) {
        Ok(a) if a < 0.5 => -1.0,
        _ => 1.0,
    };
    bootstrap(items, |xs| auc(xs, sign))
}

/// The lexical baseline: the share of the response's content words
/// (lower-cased, stop words left out) that appear nowhere in its question
/// or contexts; 0 for a response without content words.
fn novelty(sample: &serde_json::Map<String, Value>) -> f64 {
    let text = |v: Option<&Value>| -> String {
        match v {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    };
    let field = |names: &[&str]| names.iter().find_map(|n| sample.get(*n));
    let question = text(field(&["user_input", "question"]));
    let contexts = text(field(&["retrieved_contexts", "contexts"]));
    assay_grounding::features::novelty(&text(sample.get("response")), &[&question, &contexts])
}

/// A scored item of a binary label: its half, score and whether it is
/// of the class a high score predicts.
#[derive(Clone, Copy)]
struct BinaryItem {
    half: Half,
    score: f64,
    positive: bool,
    /// The number of its pair, if it has one.
    pair: Option<usize>,
    /// Its response's length in characters, for the length baseline.
    length: f64,
    /// Its response's [`novelty`], for the lexical baseline.
    lexical: f64,
}

fn unzip_binary(items: &[BinaryItem]) -> (Vec<f64>, Vec<bool>) {
    items.iter().map(|i| (i.score, i.positive)).unzip()
}

/// One row of figures: a group (a task, or `overall`) and its estimates.
struct GroupFigures {
    group: String,
    n: usize,
    figures: Vec<(&'static str, Estimate)>,
}

/// A figure computed from a confusion matrix.
type ConfusionFigure = fn(&Confusion) -> Stat;

/// The thresholded figures.
const THRESHOLDED: [(&str, ConfusionFigure); 7] = [
    ("accuracy", Confusion::accuracy),
    ("balanced_accuracy", Confusion::balanced_accuracy),
    ("precision", Confusion::precision),
    ("recall", Confusion::sensitivity),
    ("specificity", Confusion::specificity),
    ("f1", Confusion::f1),
    ("kappa", Confusion::kappa),
];

fn confusion_at(items: &[BinaryItem], threshold: f64) -> Confusion {
    Confusion::count(items.iter().map(|i| (i.score >= threshold, i.positive)))
}

/// Binary figures of one group: the thresholded ones on its evaluation
/// half, ROC-AUC on all of it.
fn binary_figures(items: &[BinaryItem], threshold: Stat) -> Vec<(&'static str, Estimate)> {
    let evaluate: Vec<BinaryItem> = items
        .iter()
        .filter(|i| i.half == Half::Evaluate)
        .copied()
        .collect();
    let mut out: Vec<(&'static str, Estimate)> = THRESHOLDED
        .into_iter()
        .map(|(name, f)| {
            let stat = |xs: &[BinaryItem]| f(&confusion_at(xs, threshold?));
            (name, bootstrap(&evaluate, stat))
        })
        .collect();
    out.push((
        "roc_auc",
        bootstrap(items, |xs| {
            let (s, p) = unzip_binary(xs);
            roc_auc(&s, &p)
        }),
    ));
    out.push(("length_roc_auc", baseline(items, |i| i.length)));
    out.push(("lexical_roc_auc", baseline(items, |i| i.lexical)));
    let pairs = positive_negative_pairs(items);
    if !pairs.is_empty() {
        // The share of pairs whose positive row scores above its negative
        // one (ties half), resampling pairs.
        let paired = |xs: &[(f64, f64)]| -> Stat {
            if xs.is_empty() {
                return Err(Undefined::NoItems);
            }
            let wins: f64 = xs
                .iter()
                .map(|(pos, neg)| match pos.total_cmp(neg) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                })
                .sum();
            Ok(wins / xs.len() as f64)
        };
        out.push(("paired_accuracy", bootstrap(&pairs, paired)));
    }
    out
}

/// (positive score, negative score) of each pair with exactly one scored
/// row of each class.
fn positive_negative_pairs(items: &[BinaryItem]) -> Vec<(f64, f64)> {
    let mut by: BTreeMap<usize, Vec<&BinaryItem>> = BTreeMap::new();
    for i in items {
        if let Some(p) = i.pair {
            by.entry(p).or_default().push(i);
        }
    }
    by.into_values()
        .filter_map(|v| match v.as_slice() {
            [a, b] if a.positive != b.positive => Some(if a.positive {
                (a.score, b.score)
            } else {
                (b.score, a.score)
            }),
            _ => None,
        })
        .collect()
}

/// Spearman and Kendall of (score, rating, lexical baseline) items: the
/// judge's, and beside them the lexical baseline's (the share of the
/// response's content words its sources hold, 1 - [`novelty`]).
fn graded_figures(items: &[(f64, f64, f64)]) -> Vec<(&'static str, Estimate)> {
    let on = |f: fn(&[f64], &[f64]) -> Stat, score: fn(&(f64, f64, f64)) -> f64| {
        bootstrap(items, move |xs: &[(f64, f64, f64)]| {
            let (s, y): (Vec<f64>, Vec<f64>) = xs.iter().map(|i| (score(i), i.1)).unzip();
            f(&s, &y)
        })
    };
    vec![
        ("spearman", on(spearman, |i| i.0)),
        ("kendall_tau_b", on(kendall_tau_b, |i| i.0)),
        ("lexical_spearman", on(spearman, |i| 1.0 - i.2)),
        ("lexical_kendall_tau_b", on(kendall_tau_b, |i| 1.0 - i.2)),
    ]
}

fn pairwise_figures(pairs: &[Preference]) -> Vec<(&'static str, Estimate)> {
    vec![
        (
            "judge_annotator_agreement",
            bootstrap(pairs, preference_agreement),
        ),
        (
            "annotator_annotator_agreement",
            bootstrap(pairs, annotator_agreement),
        ),
    ]
}

/// Figures per group (sorted), then overall.
fn per_group<T: Clone>(
    items: &[(String, T)],
    figures: impl Fn(&[T]) -> Vec<(&'static str, Estimate)>,
) -> Vec<GroupFigures> {
    let mut by: BTreeMap<&str, Vec<T>> = BTreeMap::new();
    for (g, item) in items {
        by.entry(g).or_default().push(item.clone());
    }
    let all: Vec<T> = items.iter().map(|(_, i)| i.clone()).collect();
    by.into_iter()
        .map(|(g, v)| (g.to_string(), v))
        .chain([("overall".to_string(), all)])
        .map(|(group, v)| GroupFigures {
            n: v.len(),
            figures: figures(&v),
            group,
        })
        .collect()
}

fn stat_json(s: &Stat) -> Value {
    match s {
        Ok(v) => json!(v),
        Err(why) => json!({"undefined": why.to_string()}),
    }
}

/// `{"value", "ci95"}`, or `{"undefined": why}`.
pub(crate) fn estimate_json(e: &Estimate) -> Value {
    match e.value {
        Ok(v) => json!({"value": v, "ci95": e.ci95}),
        Err(_) => stat_json(&e.value),
    }
}

/// `0.720 [0.660, 0.780]`, or why it has no value.
fn estimate_cell(e: &Estimate) -> String {
    match (&e.value, &e.ci95) {
        (Ok(v), Some(ci)) => format!("{v:.3} [{:.3}, {:.3}]", ci.low, ci.high),
        (Ok(v), None) => format!("{v:.3}"),
        (Err(why), _) => why.to_string(),
    }
}

/// What to calibrate, on which labelled rows, with which judge.
#[derive(Clone, Debug)]
pub struct CalibrateOptions {
    /// The judged metric, e.g. `faithfulness`.
    pub metric: String,
    pub data: Data,
    /// The label field (under `labels`, else at the top level); none: the
    /// built-in mapping of the metric on a built-in set.
    pub labels: Option<String>,
    /// For a yes/no label named by `labels`: the value a high score
    /// predicts.
    pub high_score_means: Option<bool>,
    /// Only the rows of this task (RAGTruth: QA, Summary, Data2txt; others:
    /// the `task` field).
    pub task: Option<String>,
    /// At most this many rows (pairs): a label-balanced subset chosen by
    /// SHA-256 of the ids.
    pub limit: Option<usize>,
    /// Leave out the first rows of that label-balanced order.
    pub offset: usize,
    /// The run directory; none: `runs/calibrate-<unix time>`.
    pub out: Option<PathBuf>,
    pub judge: JudgeConfig,
    /// Worker threads, and a local model's CPU threads; none: all cores.
    pub threads: Option<usize>,
}

/// The labelled rows to calibrate on.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// A built-in set by name: ragtruth, halueval-qa, halueval-general,
    /// summeval, ragchecker.
    Set(String),
    /// Your own labelled JSONL (the schema of `data/calibration/README.md`).
    File(PathBuf),
}

/// A finished calibration: what `calibration.json` holds, and where.
#[derive(Clone, Debug)]
pub struct Calibrated {
    /// The run directory.
    pub dir: PathBuf,
    /// The document written to `DIR/calibration.json`.
    pub doc: Value,
    /// The figures as a table: a header, then one row per task.
    pub table: Vec<Vec<String>>,
}

impl Calibrated {
    /// The lines above the table: what was compared, how many rows, and
    /// the threshold where there is one.
    pub fn heading(&self) -> String {
        let d = &self.doc;
        let counts = &d["counts"];
        let mut s = format!(
            "{} against {}: {}\nrows used {}, skipped {}, failed {}\n",
            d["metric"].as_str().unwrap_or_default(),
            d["data"].as_str().unwrap_or_default(),
            d["label"]["definition"].as_str().unwrap_or_default(),
            counts["used"],
            counts["skipped"],
            counts["failed"]
        );
        if let Some(t) = d.get("threshold") {
            s.push_str(&format!(
                "threshold {} (chosen on {} rows, evaluated on {})\n",
                t["value"], t["n_tune"], t["n_evaluate"]
            ));
        }
        s
    }
}

/// Runs the judged metric over the labelled rows (resuming the run
/// directory like any run), joins its scores with the labels, and writes
/// `calibration.json`. A cancelled run is a usage [`Error`] that says the
/// same call resumes it.
pub fn calibrate(
    options: &CalibrateOptions,
    observer: &mut dyn Observer,
    cancel: &CancelToken,
) -> Result<Calibrated> {
    let metric: JudgedId = options.metric.parse().map_err(|_| {
        usage(format!(
            "metric {}: not a judged metric (see `assay metrics`)",
            options.metric
        ))
    })?;
    let (origin, text) = match &options.data {
        Data::Set(name) => {
            let set: BuiltinSet = name.parse().map_err(usage)?;
            let text = String::from_utf8_lossy(set.bytes()).into_owned();
            (Origin::Builtin(set), text)
        }
        Data::File(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
            (Origin::File(path.clone()), text)
        }
    };
    let mapping = resolve_mapping(metric, &origin, options, &text)?;
    let group_field = match &origin {
        Origin::Builtin(set) => set.group_field(),
        Origin::File(_) => "task",
    };
    let pair_field = match &origin {
        Origin::Builtin(set) => set.pair_field(),
        Origin::File(_) => None,
    };
    let mut rows = read_rows(&text, &origin, &mapping, group_field, pair_field)?;
    let n_rows = rows.len();
    if let Some(task) = &options.task {
        let known: std::collections::BTreeSet<String> =
            rows.iter().map(|r| r.group.clone()).collect();
        rows.retain(|r| &r.group == task);
        if rows.is_empty() {
            return Err(usage(format!(
                "--task {task}: no row has {group_field} = {task} (there are: {})",
                known.into_iter().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    if options.limit.is_some() || options.offset > 0 {
        rows = balanced_subset(rows, options.offset, options.limit);
    }
    if rows.is_empty() {
        return Err(usage("no labelled rows to calibrate on"));
    }
    let out = match &options.out {
        Some(dir) => dir.clone(),
        None => PathBuf::from("runs").join(format!(
            "calibrate-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        )),
    };
    // The samples file is the same for the same selection, so the run's
    // manifest is too: an interrupted calibration resumes like any run.
    std::fs::create_dir_all(&out).map_err(Error::io("create run directory", &out))?;
    let samples = out.join(SAMPLES);
    write_samples(&rows, &samples)?;
    let prompts = match &options.judge.prompts {
        Some(dir) => PromptSet::load_dir(dir),
        None => PromptSet::builtin(),
    }
    .map_err(usage)?;
    let judged = JudgedMetric::configure(metric, &BTreeMap::new(), &prompts).map_err(usage)?;
    let threads = assay_config::threads(options.threads).map_err(Error::Config)?;
    let judged = assay_config::judged_run(vec![judged], prompts, &options.judge, threads)
        .map_err(Error::Config)?;
    // As the run's manifest names it: a local model file without its path.
    let judge_spec = judged.judge_spec.to_string();
    let run = RunOptions {
        source: Source::Path(samples),
        input_format: None,
        input: Default::default(),
        metrics: Vec::new(),
        judged: Some(Arc::new(judged)),
        out: out.clone(),
        strict: Strictness::RecordAndContinue,
        threads,
        existing: Existing::Resume,
        shard: None,
    };
    let summary = assay_engine::run_blocking(&run, observer, cancel)?;
    if !summary.complete {
        return Err(usage(format!(
            "interrupted: what is done is in {}; the same command resumes it",
            out.display()
        )));
    }
    let joined = join(&rows, &out, metric.name())?;
    let (mut skipped, mut failed) = (0usize, 0usize);
    // (group, score, label) of every scored row.
    let mut scored: Vec<(&Labelled, f64)> = Vec::new();
    for (row, j) in rows.iter().zip(&joined) {
        match j {
            Joined::Scored(score) => scored.push((row, *score)),
            Joined::Skipped => skipped += 1,
            Joined::Failed => failed += 1,
        }
    }
    let mut doc = json!({
        "format_version": FORMAT_VERSION,
        "metric": metric.name(),
        "output": metric.name(),
        "data": origin.describe(),
        "data_sha256": assay_core::hash::sha256_hex(text.as_bytes()),
        "judge": judge_spec,
        "score": "details.soft_score (the expected score under the judge's verdict probabilities) where the outcome has one, else the value",
        "label": {
            "field": mapping.field(),
            "kind": mapping.kind(),
            "definition": mapping.describe(),
        },
        "selection": {
            "task": options.task,
            "group_field": group_field,
            "limit": options.limit,
            "offset": options.offset,
            "limit_method": "label-balanced: per label stratum (class, rounded rating, or sign of the mean preference) rows sorted by sha256(id), taken in turn; the first `offset` of that order left out",
        },
        "counts": {"rows_in_data": n_rows, "selected": rows.len(), "used": scored.len(), "skipped": skipped, "failed": failed},
        "bootstrap": {"resamples": assay_core::aggregate::BOOTSTRAP_RESAMPLES, "seed": assay_core::aggregate::BOOTSTRAP_SEED, "method": "percentile; items resampled (pairs for preferences); resamples where a figure is undefined are left out and counted"},
    });
    let figures: Vec<GroupFigures> = match &mapping {
        Mapping::Binary { high, positive, .. } => {
            let pair_numbers: BTreeMap<&str, usize> = scored
                .iter()
                .filter_map(|(row, _)| row.pair.as_deref())
                .enumerate()
                .map(|(i, p)| (p, i))
                .collect();
            let items: Vec<(String, BinaryItem)> = scored
                .iter()
                .map(|(row, score)| {
                    let item = BinaryItem {
                        half: half_of(&row.id),
                        score: *score,
                        positive: row.label == Label::Binary(*high),
                        pair: row.pair.as_deref().map(|p| pair_numbers[p]),
                        length: row
                            .sample
                            .get("response")
                            .and_then(Value::as_str)
                            .map_or(0.0, |r| r.chars().count() as f64),
                        lexical: novelty(&row.sample),
                    };
                    (row.group.clone(), item)
                })
                .collect();
            let half = |h: Half| -> Vec<BinaryItem> {
                items
                    .iter()
                    .map(|(_, i)| *i)
                    .filter(|i| i.half == h)
                    .collect()
            };
            let (tune, evaluate) = (half(Half::Tune), half(Half::Evaluate));
            let (s, p) = unzip_binary(&tune);
            let threshold = best_threshold(&s, &p);
            doc["label"]["positive"] = json!(positive);
            doc["label"]["high_score_predicts"] = json!(high);
            doc["threshold"] = json!({
                "value": stat_json(&threshold),
                "rule": "predicted positive when score >= value; chosen for the best balanced accuracy on the tune half (first byte of sha256(id) even), the lowest of ties; the thresholded figures are on the other half",
                "n_tune": tune.len(),
                "n_evaluate": evaluate.len(),
            });
            doc["confusion"] = match threshold {
                Ok(t) => json!(confusion_at(&evaluate, t)),
                Err(why) => json!({"undefined": why.to_string()}),
            };
            per_group(&items, |v| binary_figures(v, threshold))
        }
        Mapping::Graded { .. } => {
            let items: Vec<(String, (f64, f64, f64))> = scored
                .iter()
                .filter_map(|(row, score)| match row.label {
                    Label::Graded(y) => {
                        Some((row.group.clone(), (*score, y, novelty(&row.sample))))
                    }
                    _ => None,
                })
                .collect();
            per_group(&items, graded_figures)
        }
        Mapping::Pairwise { .. } => {
            let items: Vec<(String, Preference)> = scored
                .iter()
                .filter_map(|(row, score)| match &row.label {
                    Label::Pairwise(v) => Some((
                        row.group.clone(),
                        Preference {
                            judge: *score,
                            annotators: v.clone(),
                        },
                    )),
                    _ => None,
                })
                .collect();
            per_group(&items, pairwise_figures)
        }
    };
    doc["groups"] = figures
        .iter()
        .map(|g| {
            let figures: serde_json::Map<String, Value> = g
                .figures
                .iter()
                .map(|(k, e)| (k.to_string(), estimate_json(e)))
                .collect();
            json!({"group": g.group, "n": g.n, "figures": figures})
        })
        .collect();
    let table = table(&figures);
    doc["tables"] = json!([{
        "title": format!("{} against {} ({}), 95% bootstrap intervals", metric.name(), origin.describe(), mapping.describe()),
        "columns": table[0],
        "rows": table[1..],
    }]);
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    let path = out.join(CALIBRATION);
    std::fs::write(&path, &text).map_err(Error::io("write", &path))?;
    Ok(Calibrated {
        dir: out,
        doc,
        table,
    })
}

/// The table of figures: a header, then one row per group.
fn table(groups: &[GroupFigures]) -> Vec<Vec<String>> {
    let mut rows = vec![["task", "n"].map(String::from).to_vec()];
    if let Some(first) = groups.first() {
        rows[0].extend(first.figures.iter().map(|(k, _)| k.to_string()));
    }
    for g in groups {
        let mut row = vec![g.group.clone(), g.n.to_string()];
        row.extend(g.figures.iter().map(|(_, e)| estimate_cell(e)));
        rows.push(row);
    }
    rows
}

fn resolve_mapping(
    metric: JudgedId,
    origin: &Origin,
    options: &CalibrateOptions,
    text: &str,
) -> Result<Mapping> {
    let builtin = match origin {
        Origin::Builtin(set) => builtin_mapping(metric, *set),
        Origin::File(_) => None,
    };
    let Some(field) = &options.labels else {
        return builtin.ok_or_else(|| {
            usage(format!(
                "no built-in mapping of {} on {}; name the label with --labels FIELD (built-in: {BUILTIN_LIST})",
                metric.name(),
                origin.describe()
            ))
        });
    };
    if let Some(m) = builtin.filter(|m| m.field() == field && options.high_score_means.is_none()) {
        return Ok(m);
    }
    // The kind follows the label's first value.
    let first = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .find_map(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|row| label_value(&row, field).cloned())
        .ok_or_else(|| {
            usage(format!(
                "{}: the first row has no label field '{field}'",
                origin.describe()
            ))
        })?;
    match first {
        Value::Bool(_) => {
            let high = options.high_score_means.ok_or_else(|| {
                usage(format!(
                    "labels.{field} is yes/no: say which value a high score of {} predicts (--high-score-means true|false)",
                    metric.name()
                ))
            })?;
            Ok(Mapping::Binary {
                field: field.clone(),
                high,
                positive: if high {
                    field.clone()
                } else {
                    format!("not {field}")
                },
            })
        }
        Value::Number(_) => Ok(Mapping::Graded {
            field: field.clone(),
        }),
        Value::Array(_) => Ok(Mapping::Pairwise {
            field: field.clone(),
        }),
        other => Err(usage(format!(
            "labels.{field}: expected true/false, a number or a list of preferences, got {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_s_repeats_are_averaged_and_a_failed_repeat_fails_it() {
        let score = |repeats: &[(Status, Option<f64>)]| match of_repeats(repeats) {
            Joined::Scored(v) => format!("scored {v}"),
            Joined::Failed => "failed".into(),
            Joined::Skipped => "skipped".into(),
        };
        let (s, f, k) = (Status::Scored, Status::Failed, Status::Skipped);
        assert_eq!(score(&[(s, Some(1.0)), (s, Some(0.0))]), "scored 0.5");
        assert_eq!(score(&[(s, Some(0.25))]), "scored 0.25");
        assert_eq!(score(&[(s, Some(1.0)), (f, None)]), "failed");
        assert_eq!(score(&[(k, None), (k, None)]), "skipped");
        assert_eq!(score(&[(s, Some(1.0)), (k, None)]), "skipped");
    }

    fn row(id: &str, label: Label, pair: Option<&str>) -> Labelled {
        Labelled {
            id: id.into(),
            group: "rag".into(),
            label,
            pair: pair.map(String::from),
            sample: serde_json::Map::new(),
            response_b: None,
        }
    }

    #[test]
    fn the_limit_balances_labels_and_keeps_pairs() {
        let rows: Vec<Labelled> = (0..20)
            .map(|i| row(&format!("r{i}"), Label::Binary(i % 4 == 0), None))
            .collect();
        let subset = balanced_subset(rows, 0, Some(6));
        let positives = subset
            .iter()
            .filter(|r| r.label == Label::Binary(true))
            .count();
        assert_eq!((subset.len(), positives), (6, 3));
        let again: Vec<Labelled> = (0..20)
            .rev()
            .map(|i| row(&format!("r{i}"), Label::Binary(i % 4 == 0), None))
            .collect();
        let ids = |v: &[Labelled]| v.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(&balanced_subset(again, 0, Some(6))),
            ids(&subset),
            "order-free"
        );
        // Pairs share their sort key, so the two classes come pair by pair.
        let paired: Vec<Labelled> = (0..10)
            .flat_map(|q| {
                let key = q.to_string();
                [
                    row(&format!("q{q}-right"), Label::Binary(false), Some(&key)),
                    row(&format!("q{q}-wrong"), Label::Binary(true), Some(&key)),
                ]
            })
            .collect();
        let subset = balanced_subset(paired, 0, Some(4));
        let mut pairs: Vec<&str> = subset.iter().filter_map(|r| r.pair.as_deref()).collect();
        pairs.dedup();
        assert_eq!(pairs.len(), 2, "{:?}", ids(&subset));
    }

    #[test]
    fn an_offset_leaves_out_what_the_same_limit_selects() {
        let rows = || -> Vec<Labelled> {
            (0..20)
                .map(|i| row(&format!("r{i}"), Label::Binary(i % 4 == 0), None))
                .collect()
        };
        let ids = |v: &[Labelled]| v.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
        let whole = ids(&balanced_subset(rows(), 0, None));
        assert_eq!(whole.len(), 20, "no limit keeps every row");
        assert_eq!(ids(&balanced_subset(rows(), 0, Some(6))), whole[..6]);
        let next = balanced_subset(rows(), 6, Some(4));
        assert_eq!(ids(&next), whole[6..10]);
        let positives = next
            .iter()
            .filter(|r| r.label == Label::Binary(true))
            .count();
        assert_eq!(positives, 2, "the next rows are balanced too");
        // Past the rarer class, the rest comes from the other one.
        let rest = balanced_subset(rows(), 10, None);
        assert_eq!(ids(&rest), whole[10..]);
        assert!(rest.iter().all(|r| r.label == Label::Binary(false)));
    }

    #[test]
    fn builtin_mappings_know_the_score_direction() {
        let high = |m, s| match builtin_mapping(m, s) {
            Some(Mapping::Binary { high, .. }) => Some(high),
            _ => None,
        };
        // Faithfulness is high when faithful; hallucination when contradicted.
        assert_eq!(high(faithfulness::ID, BuiltinSet::RagTruth), Some(false));
        assert_eq!(high(hallucination::ID, BuiltinSet::HaluEvalQa), Some(true));
        assert_eq!(
            builtin_mapping(answer_correctness::ID, BuiltinSet::RagChecker),
            Some(Mapping::Pairwise {
                field: "correctness_pref".into()
            })
        );
        assert_eq!(
            builtin_mapping(assay_metrics::judged::bias::ID, BuiltinSet::SummEval),
            None
        );
        for set in SETS {
            assert_eq!(set.name().parse::<BuiltinSet>(), Ok(set));
            assert!(!set.bytes().is_empty());
        }
    }
}
