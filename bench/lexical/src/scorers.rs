//! The metrics and implementations being timed, behind one per-pair call.

use std::fmt;
use std::str::FromStr;

use assay_text::bleu::{self, BleuConfig};
use assay_text::chrf::{self, ChrfConfig};
use assay_text::rouge::{RougeScorer, RougeType, Stemming};
use assay_text::sacrebleu;

const ROUGE_TYPES: [&str; 4] = ["rouge1", "rouge2", "rougeL", "rougeLsum"];

/// A metric, named as in `reference.py`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Rouge,
    RougeStem,
    NltkBleu,
    SacrebleuBleu,
    Chrf,
}

impl Metric {
    pub const ALL: [Metric; 5] = [
        Metric::Rouge,
        Metric::RougeStem,
        Metric::NltkBleu,
        Metric::SacrebleuBleu,
        Metric::Chrf,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Metric::Rouge => "rouge",
            Metric::RougeStem => "rouge_stem",
            Metric::NltkBleu => "nltk_bleu",
            Metric::SacrebleuBleu => "sacrebleu_bleu",
            Metric::Chrf => "chrf",
        }
    }

    /// The implementations timed for this metric.
    pub fn implementations(self) -> Vec<Implementation> {
        [Implementation::Assay, Implementation::Rougers]
            .into_iter()
            .filter(|i| PairScorer::new(*i, self).is_some())
            .collect()
    }
}

impl FromStr for Metric {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Metric::ALL
            .into_iter()
            .find(|m| m.key() == s)
            .ok_or_else(|| format!("unknown metric {s:?}"))
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Who computes the metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implementation {
    Assay,
    Rougers,
}

impl Implementation {
    pub fn key(self) -> &'static str {
        match self {
            Implementation::Assay => "assay",
            Implementation::Rougers => "rougers",
        }
    }

    /// What exactly is computed per pair, for the report.
    pub fn describe(self, metric: Metric) -> String {
        let stem = if metric == Metric::RougeStem {
            "on"
        } else {
            "off"
        };
        match (self, metric) {
            (Implementation::Rougers, _) => format!(
                "rougers 0.2.1 RougeScorer::new([rouge1, rouge2, rougeL, rougeLsum], stemmer {stem})\
                 .score_multi(references, prediction): all references, best F per type, \
                 like rouge-score's score_multi; rougers tokenizes the prediction once"
            ),
            (Implementation::Assay, Metric::Rouge | Metric::RougeStem) => format!(
                "assay_text::rouge::RougeScorer::new([Rouge1, Rouge2, RougeL, RougeLsum], \
                 stemming {stem}).score_multi(references, prediction): all references, best F \
                 per type; tokenizes the prediction once; with stemming, memoises stems across calls"
            ),
            (Implementation::Assay, Metric::NltkBleu) => "assay_text::bleu::sentence_bleu(prediction, \
                 references, &BleuConfig::default()): nltk sentence_bleu on str.split() tokens, \
                 weights 0.25 x 4, no smoothing"
                .to_owned(),
            (Implementation::Assay, Metric::SacrebleuBleu) => {
                "assay_text::sacrebleu::sentence_bleu(prediction, references): 13a tokenizer, \
                 exp smoothing, effective order"
                    .to_owned()
            }
            (Implementation::Assay, Metric::Chrf) => "assay_text::chrf::sentence_chrf(prediction, \
                 references, &ChrfConfig::CHRF): char order 6, word order 0, beta 2"
                .to_owned(),
        }
    }
}

/// One thread's scorer for one (implementation, metric).
pub enum PairScorer {
    // Boxed: the scorer carries its caches inline.
    AssayRouge(Box<RougeScorer>),
    AssayNltkBleu(assay_text::bleu::BleuConfig),
    AssaySacrebleuBleu,
    AssayChrf,
    Rougers(rougers::RougeScorer),
}

impl PairScorer {
    /// `None` when the implementation does not provide the metric.
    pub fn new(implementation: Implementation, metric: Metric) -> Option<PairScorer> {
        match (implementation, metric) {
            (Implementation::Assay, Metric::Rouge | Metric::RougeStem) => {
                let stemming = if metric == Metric::RougeStem {
                    Stemming::Porter
                } else {
                    Stemming::Off
                };
                RougeScorer::new(&RougeType::DEFAULT, stemming)
                    .ok()
                    .map(|s| PairScorer::AssayRouge(Box::new(s)))
            }
            (Implementation::Assay, Metric::NltkBleu) => {
                Some(PairScorer::AssayNltkBleu(BleuConfig::default()))
            }
            (Implementation::Assay, Metric::SacrebleuBleu) => Some(PairScorer::AssaySacrebleuBleu),
            (Implementation::Assay, Metric::Chrf) => Some(PairScorer::AssayChrf),
            (Implementation::Rougers, Metric::Rouge | Metric::RougeStem) => {
                rougers::RougeScorer::new(ROUGE_TYPES, metric == Metric::RougeStem)
                    .ok()
                    .map(PairScorer::Rougers)
            }
            _ => None,
        }
    }

    /// The pair's score; for ROUGE the sum of the four F-measures. An error
    /// (no references) scores NaN, which poisons the checksum visibly.
    pub fn score(&mut self, prediction: &str, references: &[String]) -> f64 {
        match self {
            PairScorer::AssayRouge(scorer) => scorer
                .score_multi(references, prediction)
                .iter()
                .map(|prf| prf.fmeasure)
                .sum(),
            PairScorer::AssayNltkBleu(config) => {
                bleu::sentence_bleu(prediction, references, config).unwrap_or(f64::NAN)
            }
            PairScorer::AssaySacrebleuBleu => {
                sacrebleu::sentence_bleu(prediction, references).map_or(f64::NAN, |s| s.score)
            }
            PairScorer::AssayChrf => {
                chrf::sentence_chrf(prediction, references, &ChrfConfig::CHRF).unwrap_or(f64::NAN)
            }
            PairScorer::Rougers(scorer) => scorer
                .score_multi(references, prediction)
                .map_or(0.0, |scores| scores.iter().map(|(_, s)| s.fmeasure).sum()),
        }
    }
}
