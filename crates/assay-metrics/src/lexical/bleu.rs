//! nltk sentence and corpus BLEU, exact against nltk 3.10.4
//! (`assay_text::bleu`), with valor-lite's tokenizer by default.

use super::{texts, undefined, Summed, Summing};
use crate::params::{parse_f64_list, ParamError, ParamSpec, Values};
use crate::spec::Direction;
use crate::unit::{CorpusScore, CorpusStats, Unit, UnitScorer};
use crate::unit::{MetricId, MetricSpec};
use assay_core::{Field, Outcome, Sample, Signature};
use assay_text::bleu::{self, BleuStats, Smoothing};
use assay_text::tokenize::BleuTokenizer;
use serde_json::{json, Value};

pub const ID: MetricId = MetricId::of(&SPEC);

/// The version of nltk whose numbers it reproduces, in its signature.
const NLTK: &str = "nltk-3.10.4";

pub const SPEC: MetricSpec = MetricSpec {
    name: "bleu",
    summary: "n-gram precision against the references with a brevity penalty (nltk sentence BLEU)",
    definition: "nltk 3.10.4 sentence_bleu: counts clipped by the maximum in any one reference, closest \
                 reference length (ties: shorter), brevity penalty, weighted geometric mean of modified \
                 precisions; values below 1e-9 reported as 0 (valor-lite). Corpus BLEU (nltk corpus_bleu) \
                 in the summary.",
    required: &[Field::Response, Field::References],
    params: &[
        ParamSpec {
            name: "weights",
            default: "0.25,0.25,0.25,0.25",
            doc: "comma-separated n-gram weights; their count is the maximum order",
        },
        ParamSpec {
            name: "smoothing",
            default: "method0",
            doc: "nltk SmoothingFunction method0..method7 (epsilon 0.1, alpha 5, k 5)",
        },
        ParamSpec {
            name: "tokenizer",
            default: "regex",
            doc: "regex: valor-lite's \\w+|\\$[\\d]+|[^\\s\\.]+; whitespace: Python str.split()",
        },
    ],
    direction: Direction::HigherIsBetter,
    empty_inputs: "0 for an empty response (no unigram matches)",
    outputs: "bleu",
    added_params: &[],
    configure,
};

#[derive(Clone, Debug)]
struct Bleu {
    weights: Vec<f64>,
    smoothing: Smoothing,
    tokenizer: BleuTokenizer,
}

fn configure(values: &Values) -> Result<Box<dyn Unit>, ParamError> {
    Ok(Box::new(Bleu {
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
    }))
}

impl Unit for Bleu {
    fn outputs(&self) -> Vec<String> {
        vec![ID.name().to_string()]
    }

    fn params_json(&self) -> Value {
        json!({
            "weights": self.weights,
            "smoothing": self.smoothing.to_string(),
            "tokenizer": self.tokenizer.to_string(),
        })
    }

    fn signature(&self) -> Signature {
        Signature::new(ID.name(), 1)
            .with("tok", self.tokenizer)
            .with(
                "weights",
                self.weights
                    .iter()
                    .map(|w| format!("{w}"))
                    .collect::<Vec<_>>()
                    .join(","),
            )
            .with("smooth", self.smoothing)
            .with("tiny", "zero")
            .with("ref", NLTK)
    }

    fn scorer(&self) -> Box<dyn UnitScorer> {
        Summing::start(self.clone(), corpus_bleu)
    }

    fn has_corpus_score(&self) -> bool {
        true
    }
}

impl UnitScorer for Summing<BleuStats, Bleu> {
    fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        let (response, references) = match texts(sample, 1) {
            Ok(texts) => texts,
            Err(skipped) => return skipped,
        };
        let Bleu {
            weights,
            smoothing,
            tokenizer,
        } = &self.config;
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
                self.sums.add(sample.row, references.len(), stats);
                outcome
            }
            Err(e) => undefined(e),
        };
        vec![outcome]
    }

    fn into_corpus(self: Box<Self>) -> Option<Box<dyn CorpusStats>> {
        Some(self)
    }
}

/// nltk's corpus BLEU of the summed statistics, whose smoothing methods 4
/// to 7 also read the last row's.
fn corpus_bleu(c: &Summed<BleuStats>, config: &Bleu, name: &str) -> Option<CorpusScore> {
    let (_, last) = c.last.as_ref()?;
    let value = bleu::finalize(&c.total, last, &config.weights, config.smoothing).ok()?;
    Some(CorpusScore {
        name: name.to_string(),
        value,
        details: json!({"matches": c.total.numerators, "totals": c.total.denominators,
                        "hyp_len": c.total.hyp_len, "ref_len": c.total.ref_len, "rows": c.rows}),
        signature: None,
    })
}
