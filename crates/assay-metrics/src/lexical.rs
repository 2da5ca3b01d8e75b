//! The configured lexical metrics: parameters resolved, signatures, and
//! per-thread scorers that turn a [`Sample`] into outcomes and accumulate
//! corpus-level statistics.

use crate::params::{parse_bool, parse_f64_list, ParamError, Values};
use crate::spec::MetricSpec;
use crate::specs::spec;
use crate::tools::{self, ToolMetric};
use crate::MetricId;
use assay_core::{Failure, FailureKind, Outcome, Sample, Signature, SkipReason};
use assay_text::bleu::{self, BleuStats, Smoothing};
use assay_text::chrf::{self, ChrfConfig, ChrfStats, Whitespace};
use assay_text::rouge::{Prf, RougeScorer, RougeTokenizer, RougeType, Stemming};
use assay_text::sacrebleu::{
    self, Case, EffectiveOrder, NRefs, SacreBleuConfig, SacreBleuStats, SacreTokenizer,
};
use assay_text::string::{self, StringDistance};
use assay_text::tokenize::BleuTokenizer;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Version of the reference implementations whose numbers we reproduce,
/// recorded in signatures.
const NLTK: &str = "nltk-3.10.4";
const SACREBLEU: &str = sacrebleu::SACREBLEU_VERSION;

/// A metric with its parameters resolved.
#[derive(Clone, Debug)]
pub struct Metric {
    id: MetricId,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// The scorer is built (and its types checked) once, then cloned per
    /// thread; boxed because it carries its working buffers.
    Rouge(Box<RougeScorer>),
    Bleu {
        weights: Vec<f64>,
        smoothing: Smoothing,
        tokenizer: BleuTokenizer,
    },
    Sacrebleu(SacreBleuConfig),
    Chrf(ChrfConfig),
    ExactMatch,
    StringPresence,
    StringSimilarity {
        distance: StringDistance,
    },
    /// A tool-call metric, scored from the conversation (`crate::tools`).
    Tool(ToolMetric),
}

impl Metric {
    /// Resolves `given` (param name -> value) against the metric's spec.
    pub fn configure(id: MetricId, given: &BTreeMap<String, String>) -> Result<Metric, ParamError> {
        let values = Values::resolve(id, spec(id).params, None, given)?;
        let kind = match id {
            MetricId::Rouge => {
                let types = values.get("types", parse_rouge_types)?;
                let stemming = values.get("use_stemmer", |s| {
                    parse_bool(s).map(|on| if on { Stemming::Porter } else { Stemming::Off })
                })?;
                let tokenizer = values.parse::<RougeTokenizer>("tokenizer")?;
                Kind::Rouge(Box::new(
                    values
                        .get("types", |_| RougeScorer::new(&types, stemming))?
                        .with_tokenizer(tokenizer),
                ))
            }
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
            MetricId::Sacrebleu => Kind::Sacrebleu(SacreBleuConfig {
                tokenizer: values.parse::<SacreTokenizer>("tokenize")?,
                case: values.get("lowercase", parse_case)?,
            }),
            MetricId::Chrf | MetricId::Chrfpp => Kind::Chrf(ChrfConfig {
                word_order: values.get("word_order", |s| {
                    s.parse::<usize>()
                        .ok()
                        .filter(|n| *n <= 9)
                        .ok_or("expected a whole number from 0 to 9")
                })?,
                case: values.get("lowercase", parse_case)?,
                whitespace: values.get("whitespace", |s| {
                    parse_bool(s).map(|on| {
                        if on {
                            Whitespace::Included
                        } else {
                            Whitespace::Excluded
                        }
                    })
                })?,
                ..ChrfConfig::CHRF
            }),
            MetricId::ExactMatch => Kind::ExactMatch,
            MetricId::StringPresence => Kind::StringPresence,
            MetricId::StringSimilarity => Kind::StringSimilarity {
                distance: values.get("distance", str::parse::<StringDistance>)?,
            },
            MetricId::ToolCallAccuracy => Kind::Tool(ToolMetric::Accuracy(
                tools::tool_call_accuracy::Params::configure(&values)?,
            )),
            MetricId::ToolCallF1 => Kind::Tool(ToolMetric::F1),
            MetricId::ToolCorrectness => Kind::Tool(ToolMetric::Correctness(
                tools::tool_correctness::Params::configure(&values)?,
            )),
        };
        Ok(Metric { id, kind })
    }

    pub fn id(&self) -> MetricId {
        self.id
    }

    pub fn spec(&self) -> &'static MetricSpec {
        spec(self.id)
    }

    /// Whether the metric also has a corpus-level score (corpus BLEU,
    /// sacreBLEU, chrF), made from every row's statistics.
    pub fn has_corpus_score(&self) -> bool {
        matches!(
            self.kind,
            Kind::Bleu { .. } | Kind::Sacrebleu(_) | Kind::Chrf(_)
        )
    }

    /// Names of the outcomes written per sample, in order.
    pub fn outputs(&self) -> Vec<String> {
        match &self.kind {
            Kind::Rouge(scorer) => scorer.types().iter().map(ToString::to_string).collect(),
            _ => vec![self.id.to_string()],
        }
    }

    /// Every parameter's value, defaults included, for the manifest;
    /// except that the parameters added after run format 1 (rouge's
    /// `tokenizer`, sacrebleu's `tokenize` and `lowercase`, chrF's
    /// `word_order`, `whitespace` and `lowercase`) appear only when they
    /// differ from their defaults. At their defaults the numbers, and the
    /// signature, are those of a run from before them, which then still
    /// resumes and merges (a resumed run's manifest must be its own).
    pub fn params_json(&self) -> Value {
        let mut params = match &self.kind {
            Kind::Rouge(scorer) => json!({
                "types": scorer.types().iter().map(ToString::to_string).collect::<Vec<_>>(),
                "use_stemmer": scorer.stemming() == Stemming::Porter,
                "tokenizer": scorer.tokenizer().to_string(),
            }),
            Kind::Bleu {
                weights,
                smoothing,
                tokenizer,
            } => json!({
                "weights": weights, "smoothing": smoothing.to_string(), "tokenizer": tokenizer.to_string(),
            }),
            Kind::Sacrebleu(config) => json!({
                "tokenize": config.tokenizer.to_string(),
                "lowercase": config.case == Case::Lower,
            }),
            Kind::Chrf(config) => json!({
                "word_order": config.word_order,
                "whitespace": config.whitespace == Whitespace::Included,
                "lowercase": config.case == Case::Lower,
            }),
            Kind::StringSimilarity { distance } => json!({"distance": distance.to_string()}),
            Kind::Tool(tool) => tool.params_json(),
            Kind::ExactMatch | Kind::StringPresence => json!({}),
        };
        if let (Some(map), Some(added)) = (params.as_object_mut(), added_params(self.id)) {
            for p in self
                .spec()
                .params
                .iter()
                .filter(|p| added.contains(&p.name))
            {
                let at_default = map.get(p.name).is_some_and(|v| match v {
                    Value::String(s) => s == p.default,
                    Value::Bool(b) => p.default.parse::<bool>() == Ok(*b),
                    Value::Number(n) => {
                        n.as_u64().is_some() && p.default.parse().ok() == n.as_u64()
                    }
                    _ => false,
                });
                if at_default {
                    map.remove(p.name);
                }
            }
        }
        params
    }

    /// The signature of this metric's numbers: it changes whenever anything
    /// that can change them changes (parameters, reference semantics, the
    /// implementation's version).
    pub fn signature(&self) -> Signature {
        let name = self.id.name();
        match &self.kind {
            Kind::Rouge(scorer) => Signature::new(name, 1)
                .with(
                    "stem",
                    if scorer.stemming() == Stemming::Porter {
                        "porter-nltk"
                    } else {
                        "no"
                    },
                )
                .with(
                    "tok",
                    match scorer.tokenizer() {
                        RougeTokenizer::Default => "rouge-score",
                        other => other.name(),
                    },
                )
                .with("multiref", "max"),
            Kind::Bleu {
                weights,
                smoothing,
                tokenizer,
            } => Signature::new(name, 1)
                .with("tok", tokenizer)
                .with(
                    "weights",
                    weights
                        .iter()
                        .map(|w| format!("{w}"))
                        .collect::<Vec<_>>()
                        .join(","),
                )
                .with("smooth", smoothing)
                .with("tiny", "zero")
                .with("ref", NLTK),
            Kind::Sacrebleu(config) => Signature::new(name, 1)
                .with("nrefs", "var")
                .with("case", config.case)
                .with("eff", "yes")
                .with("tok", config.tokenizer)
                .with("smooth", "exp")
                .with("version", SACREBLEU),
            Kind::Chrf(config) => Signature::new(name, 1)
                .with("nrefs", "var")
                .with("case", config.case)
                .with("eff", "yes")
                .with("nc", config.char_order)
                .with("nw", config.word_order)
                .with("beta", config.beta)
                .with(
                    "space",
                    match config.whitespace {
                        Whitespace::Excluded => "no",
                        Whitespace::Included => "yes",
                    },
                )
                .with("version", SACREBLEU),
            Kind::ExactMatch | Kind::StringPresence => {
                Signature::new(name, 1).with("multiref", "any")
            }
            Kind::StringSimilarity { distance } => Signature::new(name, 1)
                .with("distance", distance)
                .with("multiref", "max"),
            Kind::Tool(tool) => tool.signature(),
        }
    }

    /// A scorer for one thread; its corpus statistics add up across threads.
    pub fn scorer(&self) -> Scorer {
        let state = match &self.kind {
            Kind::Rouge(scorer) => State::Rouge(scorer.clone()),
            Kind::Bleu { .. } => State::Bleu(Summed::default()),
            Kind::Sacrebleu(_) => State::Sacrebleu(Summed::default()),
            Kind::Chrf(_) => State::Chrf(Summed::default()),
            Kind::ExactMatch
            | Kind::StringPresence
            | Kind::StringSimilarity { .. }
            | Kind::Tool(_) => State::Stateless,
        };
        Scorer {
            metric: self.clone(),
            state,
        }
    }
}

/// The parameters of `id` added after run format 1, which the manifest
/// holds only when set to another value than their default.
fn added_params(id: MetricId) -> Option<&'static [&'static str]> {
    match id {
        MetricId::Rouge => Some(&["tokenizer"]),
        MetricId::Sacrebleu => Some(&["tokenize", "lowercase"]),
        MetricId::Chrf | MetricId::Chrfpp => Some(&["word_order", "whitespace", "lowercase"]),
        _ => None,
    }
}

fn parse_case(s: &str) -> Result<Case, String> {
    parse_bool(s).map(|on| if on { Case::Lower } else { Case::Mixed })
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
    Rouge(Box<RougeScorer>),
    Bleu(Summed<BleuStats>),
    Sacrebleu(Summed<SacreBleuStats>),
    Chrf(Summed<ChrfStats>),
    Stateless,
}

/// Corpus statistics: the sum over rows, how many references rows had (for
/// sacreBLEU's `nrefs`), and the last row's own statistics, which nltk's
/// corpus BLEU hands to its smoothing methods 4 to 7.
#[derive(Clone, Debug, Default)]
struct Summed<S> {
    total: S,
    rows: u64,
    refs: Option<(usize, usize)>,
    last: Option<(u64, S)>,
}

impl<S: Clone + for<'a> std::ops::AddAssign<&'a S>> Summed<S> {
    fn add(&mut self, row: u64, n_refs: usize, stats: S) {
        self.merge(Summed {
            total: stats.clone(),
            rows: 1,
            refs: Some((n_refs, n_refs)),
            last: Some((row, stats)),
        });
    }

    fn merge(&mut self, other: Summed<S>) {
        self.total += &other.total;
        self.rows += other.rows;
        self.refs = match (self.refs, other.refs) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (mine, theirs) => mine.or(theirs),
        };
        if other.last.as_ref().map(|l| l.0) >= self.last.as_ref().map(|l| l.0) {
            self.last = other.last;
        }
    }

    fn nrefs(&self) -> NRefs {
        let (lo, hi) = self.refs.unwrap_or_default();
        NRefs::of([lo, hi])
    }
}

impl Scorer {
    /// The outcomes of one sample, one per [`Metric::outputs`] name.
    pub fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        let n = self.metric.outputs().len();
        if let Some(missing) = self
            .metric
            .spec()
            .required
            .iter()
            .find(|f| !sample.has(**f))
        {
            return vec![Outcome::Skipped(SkipReason::MissingField(*missing)); n];
        }
        if let Kind::Tool(tool) = &self.metric.kind {
            return vec![tool.score(sample)];
        }
        let (Some(response), Some(references)) =
            (sample.response.as_deref(), sample.reference_list())
        else {
            return vec![
                Outcome::Skipped(SkipReason::MissingField(assay_core::Field::Response));
                n
            ];
        };
        match (&self.metric.kind, &mut self.state) {
            (Kind::Rouge(_), State::Rouge(scorer)) => scorer
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
                        corpus.add(sample.row, references.len(), stats);
                        outcome
                    }
                    Err(e) => undefined(e),
                };
                vec![outcome]
            }
            (Kind::Sacrebleu(config), State::Sacrebleu(corpus)) => vec![match config.segment_stats(response, &references) {
                Ok(stats) => {
                    let score = sacrebleu::finalize(&stats, EffectiveOrder::On);
                    corpus.add(sample.row, references.len(), stats);
                    Outcome::scored(score.score / 100.0, sacrebleu_details(&score))
                }
                Err(e) => undefined(e),
            }],
            (Kind::Chrf(config), State::Chrf(corpus)) => vec![match chrf::segment_stats(response, &references, config) {
                Ok(stats) => {
                    let score = chrf::finalize(&stats, config);
                    corpus.add(sample.row, references.len(), stats);
                    Outcome::scored(score / 100.0, json!({"score": score}))
                }
                Err(e) => undefined(e),
            }],
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
    Bleu(Summed<BleuStats>),
    Sacrebleu(Summed<SacreBleuStats>),
    Chrf(Summed<ChrfStats>),
}

/// A corpus-level score, as written in `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CorpusScore {
    pub name: String,
    /// In [0, 1].
    pub value: f64,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// The reference implementation's own signature, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Corpus {
    /// Adds another thread's statistics.
    pub fn merge(&mut self, other: Corpus) {
        match (&mut self.kind, other.kind) {
            (CorpusKind::Bleu(mine), CorpusKind::Bleu(theirs)) => mine.merge(theirs),
            (CorpusKind::Sacrebleu(mine), CorpusKind::Sacrebleu(theirs)) => mine.merge(theirs),
            (CorpusKind::Chrf(mine), CorpusKind::Chrf(theirs)) => mine.merge(theirs),
            _ => {}
        }
    }

    /// The corpus score, when the metric has one and anything was scored.
    pub fn finalize(&self) -> Option<CorpusScore> {
        let name = self.metric.id.to_string();
        match (&self.kind, &self.metric.kind) {
            (
                CorpusKind::Bleu(c),
                Kind::Bleu {
                    weights, smoothing, ..
                },
            ) => {
                let (_, last) = c.last.as_ref()?;
                let value = bleu::finalize(&c.total, last, weights, *smoothing).ok()?;
                Some(CorpusScore {
                    name,
                    value,
                    details: json!({"matches": c.total.numerators, "totals": c.total.denominators,
                                    "hyp_len": c.total.hyp_len, "ref_len": c.total.ref_len, "rows": c.rows}),
                    signature: None,
                })
            }
            (CorpusKind::Sacrebleu(c), Kind::Sacrebleu(config)) if c.rows > 0 => {
                let score = sacrebleu::finalize(&c.total, EffectiveOrder::Off);
                Some(CorpusScore {
                    name,
                    value: score.score / 100.0,
                    details: sacrebleu_details(&score),
                    signature: Some(config.signature(c.nrefs(), EffectiveOrder::Off)),
                })
            }
            (CorpusKind::Chrf(c), Kind::Chrf(config)) if c.rows > 0 => {
                let score = chrf::finalize(&c.total, config);
                Some(CorpusScore {
                    name,
                    value: score / 100.0,
                    details: json!({"score": score}),
                    signature: Some(config.signature(c.nrefs())),
                })
            }
            _ => None,
        }
    }
}

fn sacrebleu_details(score: &sacrebleu::BleuScore) -> Value {
    json!({"score": score.score, "counts": score.counts, "totals": score.totals,
           "precisions": score.precisions, "bp": score.bp, "sys_len": score.sys_len, "ref_len": score.ref_len})
}
