//! sacreBLEU sentence and corpus BLEU, exact against sacreBLEU 2.6.0
//! (`assay_text::sacrebleu`).

use super::{texts, undefined, Summed, Summing};
use crate::params::{ParamError, ParamSpec, Values};
use crate::spec::Direction;
use crate::unit::{CorpusScore, CorpusStats, Unit, UnitScorer};
use crate::unit::{MetricId, MetricSpec};
use assay_core::{Field, Outcome, Sample, Signature};
use assay_text::sacrebleu::{
    self, BleuScore, Case, EffectiveOrder, SacreBleuConfig, SacreBleuStats, SacreTokenizer,
};
use serde_json::{json, Value};

pub const ID: MetricId = MetricId::of(&SPEC);

pub const SPEC: MetricSpec = MetricSpec {
    name: "sacrebleu",
    summary: "sacreBLEU sentence BLEU (13a tokenizer by default, exp smoothing, effective order), scaled to [0, 1]",
    definition: "sacrebleu 2.6.0 sentence_bleu(response, references, tokenize=..., lowercase=...) / 100; \
                 corpus BLEU (effective order off) and its sacreBLEU signature in the summary.",
    required: &[Field::Response, Field::References],
    params: &[
        ParamSpec {
            name: "tokenize",
            default: "13a",
            doc: "sacreBLEU's tokenizer: 13a (mteval-v13a); intl (mteval-v14: Unicode punctuation and \
                  symbols split off, numbers kept whole); zh (each Chinese character a token, then 13a's \
                  punctuation rules); char (each character a token); none (split on white space only). \
                  sacreBLEU's ja-mecab, ko-mecab and spm need external models and are not offered",
        },
        ParamSpec {
            name: "lowercase",
            default: "false",
            doc: "lowercase both texts first (Python's str.lower(); signature case:lc)",
        },
    ],
    direction: Direction::HigherIsBetter,
    empty_inputs: "0 for an empty response",
    outputs: "sacrebleu",
    added_params: &["tokenize", "lowercase"],
    configure,
};

#[derive(Clone, Debug)]
struct Sacrebleu(SacreBleuConfig);

fn configure(values: &Values) -> Result<Box<dyn Unit>, ParamError> {
    Ok(Box::new(Sacrebleu(SacreBleuConfig {
        tokenizer: values.parse::<SacreTokenizer>("tokenize")?,
        case: values.get("lowercase", parse_case)?,
    })))
}

/// `lowercase`: true or false, as sacreBLEU's case.
pub(crate) fn parse_case(s: &str) -> Result<Case, String> {
    crate::params::parse_bool(s).map(|on| if on { Case::Lower } else { Case::Mixed })
}

impl Unit for Sacrebleu {
    fn outputs(&self) -> Vec<String> {
        vec![ID.name().to_string()]
    }

    fn params_json(&self) -> Value {
        json!({
            "tokenize": self.0.tokenizer.to_string(),
            "lowercase": self.0.case == Case::Lower,
        })
    }

    fn signature(&self) -> Signature {
        Signature::new(ID.name(), 1)
            .with("nrefs", "var")
            .with("case", self.0.case)
            .with("eff", "yes")
            .with("tok", self.0.tokenizer)
            .with("smooth", "exp")
            .with("version", sacrebleu::SACREBLEU_VERSION)
    }

    fn scorer(&self) -> Box<dyn UnitScorer> {
        Summing::start(self.0, corpus)
    }

    fn has_corpus_score(&self) -> bool {
        true
    }
}

impl UnitScorer for Summing<SacreBleuStats, SacreBleuConfig> {
    fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        let (response, references) = match texts(sample, 1) {
            Ok(texts) => texts,
            Err(skipped) => return skipped,
        };
        vec![match self.config.segment_stats(response, &references) {
            Ok(stats) => {
                let score = sacrebleu::finalize(&stats, EffectiveOrder::On);
                self.sums.add(sample.row, references.len(), stats);
                Outcome::scored(score.score / 100.0, details(&score))
            }
            Err(e) => undefined(e),
        }]
    }

    fn into_corpus(self: Box<Self>) -> Option<Box<dyn CorpusStats>> {
        Some(self)
    }
}

/// Corpus BLEU (effective order off) with sacreBLEU's signature.
fn corpus(c: &Summed<SacreBleuStats>, config: &SacreBleuConfig, name: &str) -> Option<CorpusScore> {
    if c.rows == 0 {
        return None;
    }
    let score = sacrebleu::finalize(&c.total, EffectiveOrder::Off);
    Some(CorpusScore {
        name: name.to_string(),
        value: score.score / 100.0,
        details: details(&score),
        signature: Some(config.signature(c.nrefs(), EffectiveOrder::Off)),
    })
}

fn details(score: &BleuScore) -> Value {
    json!({"score": score.score, "counts": score.counts, "totals": score.totals,
           "precisions": score.precisions, "bp": score.bp, "sys_len": score.sys_len, "ref_len": score.ref_len})
}
