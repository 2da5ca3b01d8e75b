//! The grounding verdict aligned to a user's own labels: the logistic
//! combiner of the lexical [`Features`] refitted on the claims of their
//! labelled rows, measured before and after on folds held out by source
//! document, and kept as a versioned [`Alignment`] file whose hash enters
//! every signature that uses it.
//!
//! Only the combiner is refitted, on the same features: measured on the
//! shared RAGTruth rows, features of the texts' form (a question, a record
//! context, the contexts' length) made the held-out figure worse (0.653
//! against 0.674, both under a fixed penalty of 1), and so did labelling
//! every sentence of a row with the row's label where it has no spans
//! (0.648), and so did fitting the
//! weights to the rows' labels through their mean (0.665). What helped is
//! a stronger penalty: a few hundred rows are few for eleven weights. The
//! penalty is chosen from [`PENALTIES`] on the training folds alone (each
//! held out in turn), never on the fold being tested.
//!
//! A row's claims are its response's sentences, labelled as
//! [`crate::train`] labels them (from spans where the row has them, else
//! from the response's label). A row is scored as faithfulness scores it
//! softly: the mean P(supported) of its sentences, each capped where it
//! has a slot or record conflict, as the verdict caps it. The same claims, each
//! with its closest sentence, are kept as [`crate::demonstrations`] for
//! LLM judges.
//!
//! ```
//! use assay_grounding::align::{align, Row};
//! let row = |i: usize, response: &str, hallucinated: bool| Row {
//!     id: format!("r{i}"),
//!     group: format!("doc{}", i % 10),
//!     question: String::new(),
//!     contexts: vec!["The bridge opened in 1932 and is 1,149 metres long.".into()],
//!     response: response.into(),
//!     hallucinated,
//!     spans: None,
//!     task: None,
//! };
//! let rows: Vec<Row> = (0..40)
//!     .map(|i| if i % 2 == 0 {
//!         row(i, "The bridge opened in 1932.", false)
//!     } else {
//!         row(i, "The bridge opened in 1951.", true)
//!     })
//!     .collect();
//! let a = align(&rows, "rows.jsonl", "0000").unwrap();
//! assert_eq!(a.evaluation.rows, 40);
//! assert!(a.evaluation.after >= 0.99);
//! let wrong = a.demonstrations.iter().find(|d| d.statement.contains("1951")).unwrap();
//! assert_eq!(wrong.verdict, "no");
//! assert_eq!(wrong.context, "The bridge opened in 1932 and is 1,149 metres long.");
//! ```

use crate::demonstrations::Demonstration;
use crate::features::{novelty, Features, Support, NAMES};
use crate::fit::{fit, roc_auc};
use crate::train::{self, FileUse, Provenance};
use crate::Model;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The file format's name and version.
pub const FORMAT: &str = "assay-alignment";
pub const VERSION: u32 = 1;

/// Folds of the before-and-after evaluation.
pub const FOLDS: u8 = 5;

/// The L2 penalties a refit chooses among, smallest first (the built-in
/// model's is the first).
pub const PENALTIES: [f64; 4] = [1.0, 10.0, 100.0, 1000.0];

/// One labelled row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: String,
    /// The source document: rows of one document share a fold.
    pub group: String,
    pub question: String,
    pub contexts: Vec<String>,
    pub response: String,
    pub hallucinated: bool,
    /// Byte ranges of `response` that people marked unsupported, where the
    /// row has them.
    pub spans: Option<Vec<(usize, usize)>>,
    /// The row's task, where it names one: the figures are also given per
    /// task.
    pub task: Option<String>,
}

/// A refit combiner and how it was made and measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Alignment {
    pub format: String,
    pub version: u32,
    /// The model it was refitted from.
    pub base: String,
    /// The refitted combiner: the base's features, weights fitted on the
    /// user's claims; its provenance names the data.
    pub model: Model,
    pub evaluation: Evaluation,
    /// Labelled claims for LLM judges' prompts ([`crate::demonstrations`]),
    /// at most [`MAX_DEMONSTRATIONS`] of the rows' claims.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub demonstrations: Vec<Demonstration>,
}

/// Before and after on held-out folds, beside the trivial baselines on
/// the same rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// How rows were split: which trained, which tested.
    pub split: String,
    /// Rows scored (those with at least one sentence).
    pub rows: usize,
    /// Pooled ROC-AUC of the rows' scores for "faithful" (not
    /// hallucinated): the base model's, and each row's out-of-fold score
    /// from the combiner fitted without its fold.
    pub before: f64,
    pub after: f64,
    /// The word-count baseline (share of the response's content words
    /// its texts lack, low for faithful) and the length baseline (the
    /// better of short first and long first).
    pub novelty: f64,
    pub length: f64,
    pub folds: Vec<FoldFigures>,
    /// The same figures per task, where rows name their task (files
    /// written before these were kept have none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskFigures>,
}

/// Before, after and the baselines on the rows of one task, from the same
/// out-of-fold scores as the pooled figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskFigures {
    pub task: String,
    pub rows: usize,
    pub before: Option<f64>,
    pub after: Option<f64>,
    pub novelty: Option<f64>,
    pub length: Option<f64>,
}

/// One held-out fold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FoldFigures {
    pub fold: u8,
    /// Rows tested in this fold, and claims trained on without it.
    pub rows: usize,
    pub trained_claims: usize,
    /// The penalty chosen on the other folds.
    #[serde(default)]
    pub l2: f64,
    pub before: Option<f64>,
    pub after: Option<f64>,
}

/// Why rows cannot be aligned.
#[derive(Debug, PartialEq)]
pub enum AlignError {
    /// Fewer claims of one label than a fit needs.
    TooFew {
        supported: usize,
        unsupported: usize,
    },
}

impl std::error::Error for AlignError {}

impl std::fmt::Display for AlignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AlignError::TooFew {
                supported,
                unsupported,
            } => write!(
                f,
                "too few labelled claims to fit: {supported} supported and {unsupported} \
                 unsupported (at least {MIN_CLAIMS} of each)"
            ),
        }
    }
}

/// Claims of each label a fit needs.
pub const MIN_CLAIMS: usize = 10;

/// Demonstrations an alignment keeps at most: beyond a few thousand the
/// file grows and the nearest ones hardly change. Which are kept is fixed
/// by their statements' SHA-256, not by the rows' order.
pub const MAX_DEMONSTRATIONS: usize = 2000;

/// A row's claims with their features and labels (where the row gives
/// them), and all its sentences' features for scoring it.
struct Prepared {
    fold: u8,
    task: Option<String>,
    hallucinated: bool,
    labelled: Vec<(Vec<f64>, bool)>,
    demonstrations: Vec<Demonstration>,
    /// Each sentence's features, and whether it has a slot conflict (the
    /// rule caps its probability as the verdict does).
    sentences: Vec<([f64; NAMES.len()], bool)>,
    novelty: f64,
    length: f64,
}

fn prepare(row: &Row) -> Prepared {
    let contexts: Vec<&str> = row.contexts.iter().map(String::as_str).collect();
    let texts: Vec<&str> = std::iter::once(row.question.as_str())
        .chain(contexts.iter().copied())
        .collect();
    let support = Support::new(texts.iter().copied());
    let features = |s: &str| {
        let f = Features::of(s, &support);
        (f.values, f.conflict.is_some())
    };
    let mut labelled = Vec::new();
    let mut demonstrations = Vec::new();
    for (s, supported) in
        train::labelled_sentences(&row.response, row.hallucinated, row.spans.as_deref())
    {
        let f = Features::of(&s, &support);
        labelled.push((f.values.to_vec(), supported));
        // As the grounding verdict labels an unsupported statement: `no`
        // where its closest sentence speaks of the same thing.
        let verdict = match (supported, f.best_sentence_recall() >= 0.5) {
            (true, _) => "yes",
            (false, true) => "no",
            (false, false) => "idk",
        };
        if let Some(context) = f.best_sentence {
            demonstrations.push(Demonstration {
                question: row.question.clone(),
                context,
                statement: s,
                verdict: verdict.to_string(),
            });
        }
    }
    let sentences = assay_text::sentences::split_sentences(&row.response)
        .into_iter()
        .map(features)
        .collect();
    Prepared {
        fold: train::fold_of(&row.group, "alignment"),
        task: row.task.clone(),
        hallucinated: row.hallucinated,
        labelled,
        demonstrations,
        sentences,
        novelty: novelty(&row.response, &texts),
        length: row.response.chars().count() as f64,
    }
}

/// The mean over a row's sentences of `p`, capped where a sentence has a
/// slot conflict: the row as faithfulness scores it softly.
fn score(sentences: &[([f64; NAMES.len()], bool)], p: impl Fn(&[f64]) -> f64) -> f64 {
    sentences
        .iter()
        .map(|(x, conflict)| crate::capped(p(x), *conflict))
        .sum::<f64>()
        / sentences.len() as f64
}

/// Refits the builtin model's combiner on `rows` (read from `file`, whose
/// SHA-256 is `sha256`) and measures it on held-out folds.
pub fn align(rows: &[Row], file: &str, sha256: &str) -> Result<Alignment, AlignError> {
    let base = Model::builtin();
    let prepared: Vec<Prepared> = rows.iter().map(prepare).collect();
    let claims = |keep: &dyn Fn(&Prepared) -> bool| -> Vec<(Vec<f64>, bool)> {
        prepared
            .iter()
            .filter(|p| keep(p))
            .flat_map(|p| p.labelled.iter().cloned())
            .collect()
    };
    let all = claims(&|_| true);
    let supported = all.iter().filter(|(_, l)| *l).count();
    if supported < MIN_CLAIMS || all.len() - supported < MIN_CLAIMS {
        return Err(AlignError::TooFew {
            supported,
            unsupported: all.len() - supported,
        });
    }
    let scored: Vec<&Prepared> = prepared
        .iter()
        .filter(|p| !p.sentences.is_empty())
        .collect();
    let faithful: Vec<bool> = scored.iter().map(|p| !p.hallucinated).collect();
    let before: Vec<f64> = scored
        .iter()
        .map(|p| score(&p.sentences, |x| base.probability(x)))
        .collect();
    let mut after = vec![0.0; scored.len()];
    let mut folds = Vec::new();
    let mut out_of_fold: Vec<(f64, bool)> = Vec::new();
    for k in 0..FOLDS {
        let train_rows = claims(&|p| p.fold != k);
        let others: Vec<u8> = (0..FOLDS).filter(|f| *f != k).collect();
        let l2 = choose_penalty(&prepared, &others);
        let fitted = fit(&train_rows, l2, train::ITERATIONS);
        let (mut b, mut a, mut l) = (Vec::new(), Vec::new(), Vec::new());
        for (i, p) in scored.iter().enumerate().filter(|(_, p)| p.fold == k) {
            after[i] = score(&p.sentences, |x| fitted.probability(x));
            b.push(before[i]);
            a.push(after[i]);
            l.push(faithful[i]);
        }
        for p in prepared.iter().filter(|p| p.fold == k) {
            out_of_fold.extend(p.labelled.iter().map(|(x, s)| (fitted.probability(x), *s)));
        }
        folds.push(FoldFigures {
            fold: k,
            rows: l.len(),
            trained_claims: train_rows.len(),
            l2,
            before: roc_auc(&b, &l),
            after: roc_auc(&a, &l),
        });
    }
    let novelty: Vec<f64> = scored.iter().map(|p| -p.novelty).collect();
    let length: Vec<f64> = scored.iter().map(|p| p.length).collect();
    let auc = |s: &[f64]| roc_auc(s, &faithful).unwrap_or(f64::NAN);
    let length_auc = auc(&length);
    let mut names: Vec<&String> = scored.iter().filter_map(|p| p.task.as_ref()).collect();
    names.sort();
    names.dedup();
    let tasks = names
        .into_iter()
        .map(|task| {
            let of = |s: &[f64]| -> (Vec<f64>, Vec<bool>) {
                scored
                    .iter()
                    .zip(s.iter().zip(&faithful))
                    .filter(|(p, _)| p.task.as_ref() == Some(task))
                    .map(|(_, (x, y))| (*x, *y))
                    .unzip()
            };
            let auc = |s: &[f64]| {
                let (x, y) = of(s);
                roc_auc(&x, &y)
            };
            TaskFigures {
                task: task.clone(),
                rows: of(&before).0.len(),
                before: auc(&before),
                after: auc(&after),
                novelty: auc(&novelty),
                length: auc(&length).map(|a| a.max(1.0 - a)),
            }
        })
        .collect();
    let every: Vec<u8> = (0..FOLDS).collect();
    let l2 = choose_penalty(&prepared, &every);
    let fitted = fit(&all, l2, train::ITERATIONS);
    let mut demonstrations: Vec<(String, &Demonstration)> = prepared
        .iter()
        .flat_map(|p| &p.demonstrations)
        .map(|d| (hex(&Sha256::digest(d.statement.as_bytes())), d))
        .collect();
    demonstrations.sort_by(|a, b| a.0.cmp(&b.0));
    let (scores, labels): (Vec<f64>, Vec<bool>) = out_of_fold.into_iter().unzip();
    let split = format!(
        "{FOLDS} folds by source document (the first byte of the SHA-256 of the row's group, mod {FOLDS}): \
         each fold's rows tested by a combiner trained on the other folds' claims, with the L2 penalty \
         chosen by cross-validation over those folds alone; the file's combiner is then trained on \
         every claim, with the penalty chosen over all folds"
    );
    Ok(Alignment {
        format: FORMAT.to_string(),
        version: VERSION,
        base: Model::builtin_identity().to_string(),
        model: Model {
            version: base.version,
            features: base.features.clone(),
            mean: fitted.mean,
            scale: fitted.scale,
            weights: fitted.weights,
            bias: fitted.bias,
            threshold: train::best_threshold(&scores, &labels),
            provenance: Provenance {
                files: vec![FileUse {
                    name: file.to_string(),
                    sha256: sha256.to_string(),
                    rows: rows.len(),
                    claims: all.len(),
                    supported,
                }],
                l2,
                split: split.clone(),
                // A fold with no rows has no figure.
                folds: folds.iter().filter_map(|f| f.after).collect(),
                sources: Default::default(),
            },
        },
        evaluation: Evaluation {
            split,
            rows: scored.len(),
            before: auc(&before),
            after: auc(&after),
            novelty: auc(&novelty),
            length: length_auc.max(1.0 - length_auc),
            folds,
            tasks,
        },
        demonstrations: demonstrations
            .into_iter()
            .take(MAX_DEMONSTRATIONS)
            .map(|(_, d)| d.clone())
            .collect(),
    })
}

/// The penalty of [`PENALTIES`] under which combiners trained without
/// one of `folds` rank that fold's rows best (pooled ROC-AUC of their
/// scores for faithful rows); a tie goes to the smaller penalty.
fn choose_penalty(prepared: &[Prepared], folds: &[u8]) -> f64 {
    let mut best = (PENALTIES[0], f64::NEG_INFINITY);
    for l2 in PENALTIES {
        let (mut scores, mut labels) = (Vec::new(), Vec::new());
        for &k in folds {
            let train: Vec<(Vec<f64>, bool)> = prepared
                .iter()
                .filter(|p| p.fold != k && folds.contains(&p.fold))
                .flat_map(|p| p.labelled.iter().cloned())
                .collect();
            if !train.iter().any(|(_, s)| *s) || train.iter().all(|(_, s)| *s) {
                continue;
            }
            let fitted = fit(&train, l2, train::ITERATIONS);
            for p in prepared
                .iter()
                .filter(|p| p.fold == k && !p.sentences.is_empty())
            {
                scores.push(score(&p.sentences, |x| fitted.probability(x)));
                labels.push(!p.hallucinated);
            }
        }
        if let Some(auc) = roc_auc(&scores, &labels) {
            if auc > best.1 {
                best = (l2, auc);
            }
        }
    }
    best.0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Alignment {
    /// The file's text, as `assay align` writes it.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads an alignment file's text, checking its format and version.
    pub fn parse(text: &str) -> Result<Alignment, String> {
        let a: Alignment =
            serde_json::from_str(text).map_err(|e| format!("not an alignment: {e}"))?;
        if a.format != FORMAT || a.version != VERSION {
            return Err(format!(
                "format {} version {}: this assay reads {FORMAT} version {VERSION}",
                a.format, a.version
            ));
        }
        if a.model.features != NAMES || a.model.weights.len() != NAMES.len() {
            return Err("its features are not this assay's grounding features".into());
        }
        Ok(a)
    }

    /// What names it in signatures and cache keys: the SHA-256 of its
    /// file's text.
    pub fn identity(text: &str) -> String {
        format!(
            "aligned@sha256:{}",
            hex(&Sha256::digest(text.as_bytes())[..8])
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_with_folds_that_test_no_row_reads_back() {
        // Two documents: at most two of the five folds test a row.
        let rows: Vec<Row> = (0..40)
            .map(|i| Row {
                id: format!("r{i}"),
                group: format!("doc{}", i % 2),
                question: String::new(),
                contexts: vec!["The bridge opened in 1932.".into()],
                response: if i % 4 < 2 {
                    "The bridge opened in 1932.".into()
                } else {
                    "The bridge opened in 1951.".into()
                },
                hallucinated: i % 4 >= 2,
                spans: None,
                task: None,
            })
            .collect();
        let a = align(&rows, "rows.jsonl", "0000").unwrap();
        assert!(a.evaluation.folds.iter().any(|f| f.after.is_none()));
        assert_eq!(Alignment::parse(&a.to_json()).unwrap(), a);
    }

    /// Rows are scored as the verdict scores them: the two answers read
    /// alike word for word (the word-count baseline ranks them at chance),
    /// only the cap of a claim the record marks false tells them apart.
    #[test]
    fn rows_are_scored_with_the_conflict_cap() {
        let record = "{'name': 'Blue Fig', 'wifi': False, 'parking': True}";
        let rows: Vec<Row> = (0..40)
            .map(|i| Row {
                id: format!("r{i}"),
                group: format!("doc{}", i % 10),
                question: String::new(),
                contexts: vec![record.into()],
                response: if i % 2 == 0 {
                    "Blue Fig offers parking.".into()
                } else {
                    "Blue Fig offers wifi.".into()
                },
                hallucinated: i % 2 == 1,
                spans: None,
                task: None,
            })
            .collect();
        let a = align(&rows, "rows.jsonl", "0000").unwrap();
        assert_eq!(a.evaluation.before, 1.0);
        assert_eq!(a.evaluation.after, 1.0);
        assert_eq!(a.evaluation.novelty, 0.5);
    }

    /// Where every penalty ranks the held-out rows perfectly, the smallest
    /// is chosen, for each fold and for the file's combiner; a file
    /// written before penalties were chosen reads back with none.
    #[test]
    fn the_penalty_is_the_smallest_of_the_best() {
        let rows: Vec<Row> = (0..60)
            .map(|i| Row {
                id: format!("r{i}"),
                group: format!("doc{}", i % 12),
                question: String::new(),
                contexts: vec!["The bridge opened in 1932 and is 1,149 metres long.".into()],
                response: if i % 2 == 0 {
                    "The bridge opened in 1932.".into()
                } else {
                    "The tunnel closed in 1951 after floods.".into()
                },
                hallucinated: i % 2 == 1,
                spans: None,
                task: None,
            })
            .collect();
        let a = align(&rows, "rows.jsonl", "0000").unwrap();
        assert!(a.evaluation.folds.iter().all(|f| f.l2 == PENALTIES[0]));
        assert_eq!(a.model.provenance.l2, PENALTIES[0]);
        let mut old: serde_json::Value = serde_json::from_str(&a.to_json()).unwrap();
        for fold in old["evaluation"]["folds"].as_array_mut().unwrap() {
            fold.as_object_mut().unwrap().remove("l2").unwrap();
        }
        let read = Alignment::parse(&old.to_string()).unwrap();
        assert!(read.evaluation.folds.iter().all(|f| f.l2 == 0.0));
    }
}
