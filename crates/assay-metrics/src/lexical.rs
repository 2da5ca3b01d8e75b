//! The configured lexical metrics: parameters resolved, signatures, and
//! per-thread scorers that turn a [`Sample`] into outcomes and accumulate
//! corpus-level statistics.

use crate::params::{parse_bool, parse_f64_list, ParamError, Values};
use crate::spec::{spec, MetricSpec};
use crate::MetricId;
use assay_core::{Failure, FailureKind, Outcome, Sample, Signature, SkipReason};
use assay_text::bleu::{self, BleuStats, Smoothing};
use assay_text::chrf::{self, ChrfStats};
use assay_text::rouge::{Prf, RougeScorer, RougeType, Stemming};
use assay_text::sacrebleu::{self, SacreBleuStats};
use assay_text::string::{self, StringDistance};
use assay_text::tokenize::BleuTokenizer;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Version of the reference implementations whose numbers we reproduce,
/// recorded in signatures.
const NLTK: &str = "nltk-3.10.4";
const SACREBLEU: &str = "2.6.0";

/// A metric with its parameters resolved.
#[derive(Clone, Debug)]
pub struct Metric {
    id: MetricId,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Rouge { types: Vec<RougeType>, stemming: Stemming },
    Bleu { weights: Vec<f64>, smoothing: Smoothing, tokenizer: BleuTokenizer },
    Sacrebleu,
    Chrf { word_order: usize },
    ExactMatch,
    StringPresence,
    StringSimilarity { distance: StringDistance },
}

impl Metric {
    /// Resolves `given` (param name -> value) against the metric's spec.
    pub fn configure(id: MetricId, given: &BTreeMap<String, String>) -> Result<Metric, ParamError> {
        let values = Values::resolve(id, spec(id).params, given)?;
        let kind = match id {
            MetricId::Rouge => Kind::Rouge {
                types: values.get("types", parse_rouge_types)?,
                stemming: values.get("use_stemmer", |s| {
                    parse_bool(s).map(|on| if on { Stemming::Porter } else { Stemming::Off })
                })?,
            },
            MetricId::Bleu => Kind::Bleu {
                weights: values.get("weights", |s| {
                    parse_f64_list(s).and_then(|w| {
                        if w.is_empty() || w.len() > 16 {
                            Err("expected 1 to 16 weights".to_string())
                        } else {
                            Ok(w)
                        }
                    })
                })?,
                smoothing: values.get("smoothing", str::parse::<Smoothing>)?,
                tokenizer: values.get("tokenizer", str::parse::<BleuTokenizer>)?,
            },
            MetricId::Sacrebleu => Kind::Sacrebleu,
            MetricId::Chrf => Kind::Chrf { word_order: 0 },
            MetricId::Chrfpp => Kind::Chrf { word_order: 2 },
            MetricId::ExactMatch => Kind::ExactMatch,
            MetricId::StringPresence => Kind::StringPresence,
            MetricId::StringSimilarity => Kind::StringSimilarity {
                distance: values.get("distance", str::parse::<StringDistance>)?,
            },
        };
        Ok(Metric { id, kind })
    }

    pub fn id(&self) -> MetricId {
        self.id
    }

    pub fn spec(&self) -> &'static MetricSpec {
        spec(self.id)
    }

    /// Names of the outcomes written per sample, in order.
    pub fn outputs(&self) -> Vec<String> {
        match &self.kind {
            Kind::Rouge { types, .. } => types.iter().map(ToString::to_string).collect(),
            _ => vec![self.id.to_string()],
        }
    }

    /// Every parameter's value, defaults included, for the manifest.
    pub fn params_json(&self) -> Value {
        match &self.kind {
            Kind::Rouge { types, stemming } => json!({
                "types": types.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "use_stemmer": *stemming == Stemming::Porter,
            }),
            Kind::Bleu { weights, smoothing, tokenizer } => json!({
                "weights": weights, "smoothing": smoothing.to_string(), "tokenizer": tokenizer.to_string(),
            }),
            Kind::StringSimilarity { distance } => json!({"distance": distance.to_string()}),
            Kind::Sacrebleu | Kind::Chrf { .. } | Kind::ExactMatch | Kind::StringPresence => json!({}),
        }
    }

    /// The signature of this metric's numbers: it changes whenever anything
    /// that can change them changes (parameters, reference semantics, the
    /// implementation's version).
    pub fn signature(&self) -> Signature {
        let name = self.id.name();
        match &self.kind {
            Kind::Rouge { stemming, .. } => Signature::new(name, 1)
                .with("stem", if *stemming == Stemming::Porter { "porter-nltk" } else { "no" })
                .with("tok", "rouge-score")
                .with("multiref", "max"),
            Kind::Bleu { weights, smoothing, tokenizer } => Signature::new(name, 1)
                .with("tok", tokenizer)
                .with("weights", weights.iter().map(|w| format!("{w}")).collect::<Vec<_>>().join(","))
                .with("smooth", smoothing)
                .with("tiny", "zero")
                .with("ref", NLTK),
            Kind::Sacrebleu => Signature::new(name, 1)
                .with("nrefs", "var")
                .with("case", "mixed")
                .with("eff", "yes")
                .with("tok", "13a")
                .with("smooth", "exp")
                .with("version", SACREBLEU),
            Kind::Chrf { word_order } => Signature::new(name, 1)
                .with("nrefs", "var")
                .with("case", "mixed")
                .with("eff", "yes")
                .with("nc", 6)
                .with("nw", word_order)
                .with("space", "no")
                .with("version", SACREBLEU),
            Kind::ExactMatch | Kind::StringPresence => Signature::new(name, 1).with("multiref", "any"),
            Kind::StringSimilarity { distance } => Signature::new(name, 1)
                .with("distance", distance)
                .with("multiref", "max"),
        }
    }

    /// A scorer for one thread; its corpus statistics add up across threads.
    pub fn scorer(&self) -> Scorer {
        let state = match &self.kind {
            Kind::Rouge { types, stemming } => State::Rouge(RougeScorer::new(types, *stemming)),
            Kind::Bleu { .. } => State::Bleu(None),
            Kind::Sacrebleu => State::Sacrebleu(SacreBleuStats::default()),
            Kind::Chrf { .. } => State::Chrf(ChrfStats::default()),
            Kind::ExactMatch | Kind::StringPresence | Kind::StringSimilarity { .. } => State::Stateless,
        };
        Scorer {
            metric: self.clone(),
            state,
        }
    }
}

fn parse_rouge_types(s: &str) -> Result<Vec<RougeType>, String> {
    let mut types: Vec<RougeType> = Vec::new();
    for t in s.split(',').map(str::trim) {
        let t: RougeType = t.parse().map_err(|e| format!("{e}"))?;
        if types.contains(&t) {
            return Err(format!("'{t}' listed twice"));
        }
        types.push(t);
    }
    Ok(types)
}

/// Scores samples for one metric on one thread.
pub struct Scorer {
    metric: Metric,
    state: State,
}

enum State {
    Rouge(RougeScorer),
    /// nltk's corpus BLEU: the sum of all statistics, and the last row's
    /// own (its smoothing methods 4 to 7 read the last pair).
    Bleu(Option<BleuCorpus>),
    Sacrebleu(SacreBleuStats),
    Chrf(ChrfStats),
    Stateless,
}

#[derive(Clone, Debug)]
struct BleuCorpus {
    total: BleuStats,
    last_row: u64,
    last: BleuStats,
}

impl Scorer {
    /// The outcomes of one sample, one per [`Metric::outputs`] name.
    pub fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        let n = self.metric.outputs().len();
        if let Some(missing) = self.metric.spec().required.iter().find(|f| !sample.has(**f)) {
            return vec![Outcome::Skipped(SkipReason::MissingField(*missing)); n];
        }
        let (Some(response), Some(references)) = (sample.response.as_deref(), sample.reference_list()) else {
            return vec![Outcome::Skipped(SkipReason::MissingField(assay_core::Field::Response)); n];
        };
        match (&self.metric.kind, &mut self.state) {
            (Kind::Rouge { .. }, State::Rouge(scorer)) => scorer
                .score_multi(&references, response)
                .into_iter()
                .map(|prf: Prf| {
                    Outcome::scored(
                        prf.fmeasure,
                        json!({"precision": prf.precision, "recall": prf.recall, "fmeasure": prf.fmeasure}),
                    )
                })
                .collect(),
            (Kind::Bleu { weights, smoothing, tokenizer }, State::Bleu(corpus)) => {
                let hyp = tokenizer.tokenize(response);
                let refs: Vec<Vec<&str>> = references.iter().map(|r| tokenizer.tokenize(r)).collect();
                let order = smoothing.required_order(weights.len());
                let outcome = match bleu::segment_stats(&hyp, &refs, order) {
                    Ok(stats) => {
                        let outcome = match bleu::finalize(&stats, &stats, weights, *smoothing) {
                            Ok(v) => Outcome::scored(
                                bleu::zero_below_1e9(v),
                                json!({"matches": stats.numerators, "totals": stats.denominators,
                                       "hyp_len": stats.hyp_len, "ref_len": stats.ref_len}),
                            ),
                            Err(e) => undefined(e),
                        };
                        add_bleu(corpus, sample.row, stats);
                        outcome
                    }
                    Err(e) => undefined(e),
                };
                vec![outcome]
            }
            (Kind::Sacrebleu, State::Sacrebleu(total)) => {
                let stats = sacrebleu::segment_stats(response, &references);
                let score = sacrebleu::sentence_score(&stats);
                *total += &stats;
                vec![Outcome::scored(
                    score.score / 100.0,
                    json!({"score": score.score, "counts": score.counts, "totals": score.totals,
                           "precisions": score.precisions, "bp": score.bp,
                           "sys_len": score.sys_len, "ref_len": score.ref_len}),
                )]
            }
            (Kind::Chrf { word_order }, State::Chrf(total)) => {
                let (score, stats) = chrf::sentence(response, &references, *word_order);
                *total += &stats;
                vec![Outcome::scored(score / 100.0, json!({"score": score}))]
            }
            (Kind::ExactMatch, _) => vec![indicator(references.iter().position(|r| string::exact_match(r, response)))],
            (Kind::StringPresence, _) => vec![indicator(references.iter().position(|r| string::string_presence(r, response)))],
            (Kind::StringSimilarity { distance }, _) => {
                let (best, value) = references
                    .iter()
                    .map(|r| string::similarity(r, response, *distance))
                    .enumerate()
                    .fold((0, f64::NEG_INFINITY), |acc, (i, v)| if v > acc.1 { (i, v) } else { acc });
                vec![Outcome::scored(value, json!({"best_reference": best}))]
            }
            _ => unreachable!("a scorer's state is built from its own metric's kind"),
        }
    }

    /// This thread's corpus-level statistics.
    pub fn into_corpus(self) -> Corpus {
        let kind = match self.state {
            State::Bleu(stats) => CorpusKind::Bleu(stats),
            State::Sacrebleu(stats) => CorpusKind::Sacrebleu(stats),
            State::Chrf(stats) => CorpusKind::Chrf(stats),
            State::Rouge(_) | State::Stateless => CorpusKind::None,
        };
        Corpus {
            metric: self.metric,
            kind,
        }
    }
}

fn add_bleu(corpus: &mut Option<BleuCorpus>, row: u64, stats: BleuStats) {
    match corpus {
        None => {
            *corpus = Some(BleuCorpus {
                total: stats.clone(),
                last_row: row,
                last: stats,
            })
        }
        Some(c) => {
            c.total += &stats;
            if row >= c.last_row {
                c.last_row = row;
                c.last = stats;
            }
        }
    }
}

fn undefined(e: impl std::fmt::Display) -> Outcome {
    Outcome::Failed(Failure {
        kind: FailureKind::Undefined,
        message: e.to_string(),
    })
}

/// 1 when some reference matched (its index in details), else 0.
fn indicator(matched: Option<usize>) -> Outcome {
    match matched {
        Some(i) => Outcome::scored(1.0, json!({"matched_reference": i})),
        None => Outcome::scored(0.0, json!({})),
    }
}

/// Corpus-level statistics of one metric, summed over threads.
pub struct Corpus {
    metric: Metric,
    kind: CorpusKind,
}

enum CorpusKind {
    None,
    Bleu(Option<BleuCorpus>),
    Sacrebleu(SacreBleuStats),
    Chrf(ChrfStats),
}

/// A corpus-level score, as written in `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct CorpusScore {
    pub name: String,
    /// In [0, 1].
    pub value: f64,
    #[serde(skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// The reference implementation's own signature, where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Corpus {
    /// Adds another thread's statistics.
    pub fn merge(&mut self, other: Corpus) {
        match (&mut self.kind, other.kind) {
            (CorpusKind::Bleu(mine), CorpusKind::Bleu(Some(theirs))) => {
                let BleuCorpus { total, last_row, last } = theirs;
                match mine {
                    None => *mine = Some(BleuCorpus { total, last_row, last }),
                    Some(m) => {
                        m.total += &total;
                        if last_row >= m.last_row {
                            m.last_row = last_row;
                            m.last = last;
                        }
                    }
                }
            }
            (CorpusKind::Sacrebleu(mine), CorpusKind::Sacrebleu(theirs)) => *mine += &theirs,
            (CorpusKind::Chrf(mine), CorpusKind::Chrf(theirs)) => *mine += &theirs,
            _ => {}
        }
    }

    /// The corpus score, when the metric has one and anything was scored.
    pub fn finalize(&self) -> Option<CorpusScore> {
        let name = self.metric.id.to_string();
        match (&self.kind, &self.metric.kind) {
            (CorpusKind::Bleu(Some(c)), Kind::Bleu { weights, smoothing, .. }) => {
                let value = bleu::finalize(&c.total, &c.last, weights, *smoothing).ok()?;
                Some(CorpusScore {
                    name,
                    value,
                    details: json!({"matches": c.total.numerators, "totals": c.total.denominators,
                                    "hyp_len": c.total.hyp_len, "ref_len": c.total.ref_len}),
                    signature: None,
                })
            }
            (CorpusKind::Sacrebleu(stats), _) if !stats.is_empty() => {
                let s = sacrebleu::corpus_score(stats);
                Some(CorpusScore {
                    name,
                    value: s.score / 100.0,
                    details: json!({"score": s.score, "counts": s.counts, "totals": s.totals,
                                    "precisions": s.precisions, "bp": s.bp, "sys_len": s.sys_len, "ref_len": s.ref_len}),
                    signature: Some(sacrebleu::CORPUS_SIGNATURE.to_string()),
                })
            }
            (CorpusKind::Chrf(stats), Kind::Chrf { word_order }) if !stats.is_empty() => {
                let score = chrf::corpus_score(stats);
                Some(CorpusScore {
                    name,
                    value: score / 100.0,
                    details: json!({"score": score}),
                    signature: Some(chrf::signature(*word_order)),
                })
            }
            _ => None,
        }
    }
}
