//! chrF and chrF++: character (and word) n-gram F-scores, exact against
//! sacreBLEU 2.6.0's CHRF (`assay_text::chrf`); chrF++ is chrF with
//! `word_order` 2 by default, the same metric under its own id.

use super::sacrebleu::parse_case;
use super::{texts, undefined, Summed, Summing};
use crate::params::{parse_bool, ParamError, ParamSpec, Values};
use crate::spec::Direction;
use crate::unit::{CorpusScore, CorpusStats, Unit, UnitScorer};
use crate::unit::{MetricId, MetricSpec};
use assay_core::{Field, Outcome, Sample, Signature};
use assay_text::chrf::{self, ChrfConfig, ChrfStats, Whitespace};
use assay_text::sacrebleu::{Case, SACREBLEU_VERSION};
use serde_json::{json, Value};

pub const CHRF_ID: MetricId = MetricId::of(&CHRF);
pub const CHRFPP_ID: MetricId = MetricId::of(&CHRFPP);

/// chrF's parameters after `word_order`, the same for chrF and chrF++.
const CHRF_SPACE_AND_CASE: [ParamSpec; 2] = [
    ParamSpec {
        name: "whitespace",
        default: "false",
        doc:
            "keep white space in character n-grams (sacreBLEU whitespace=True; signature space:yes)",
    },
    ParamSpec {
        name: "lowercase",
        default: "false",
        doc: "lowercase both texts first (Python's str.lower(); signature case:lc)",
    },
];

const CHRF_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "word_order",
        default: "0",
        doc: "word n-gram orders added to the 6 character orders, 0 to 9 (2 is chrF++)",
    },
    CHRF_SPACE_AND_CASE[0],
    CHRF_SPACE_AND_CASE[1],
];

const CHRFPP_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "word_order",
        default: "2",
        doc: "word n-gram orders added to the 6 character orders, 0 to 9",
    },
    CHRF_SPACE_AND_CASE[0],
    CHRF_SPACE_AND_CASE[1],
];

pub const CHRF: MetricSpec = MetricSpec {
    name: "chrf",
    summary: "character n-gram F-score (chrF2), scaled to [0, 1]",
    definition: "sacrebleu 2.6.0 CHRF(word_order, whitespace, lowercase).sentence_score: character order 6, \
                 beta 2, the best reference's statistics; / 100. Corpus chrF in the summary.",
    required: &[Field::Response, Field::References],
    params: CHRF_PARAMS,
    direction: Direction::HigherIsBetter,
    empty_inputs: "0 when either side is empty",
    outputs: "chrf",
    added_params: ADDED,
    configure: configure_chrf,
};

pub const CHRFPP: MetricSpec = MetricSpec {
    name: "chrfpp",
    summary: "chrF++: chrF plus word unigrams and bigrams, scaled to [0, 1]",
    definition:
        "sacrebleu 2.6.0 CHRF(word_order=2, whitespace, lowercase).sentence_score; / 100. Corpus \
                 chrF++ in the summary.",
    required: &[Field::Response, Field::References],
    params: CHRFPP_PARAMS,
    direction: Direction::HigherIsBetter,
    empty_inputs: "0 when either side is empty",
    outputs: "chrfpp",
    added_params: ADDED,
    configure: configure_chrfpp,
};

/// The parameters added after run format 1.
const ADDED: &[&str] = &["word_order", "whitespace", "lowercase"];

#[derive(Clone, Debug)]
struct Chrf {
    id: MetricId,
    config: ChrfConfig,
}

fn configure_chrf(values: &Values) -> Result<Box<dyn Unit>, ParamError> {
    configure(CHRF_ID, values)
}

fn configure_chrfpp(values: &Values) -> Result<Box<dyn Unit>, ParamError> {
    configure(CHRFPP_ID, values)
}

fn configure(id: MetricId, values: &Values) -> Result<Box<dyn Unit>, ParamError> {
    Ok(Box::new(Chrf {
        id,
        config: ChrfConfig {
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
        },
    }))
}

impl Unit for Chrf {
    fn outputs(&self) -> Vec<String> {
        vec![self.id.name().to_string()]
    }

    fn params_json(&self) -> Value {
        json!({
            "word_order": self.config.word_order,
            "whitespace": self.config.whitespace == Whitespace::Included,
            "lowercase": self.config.case == Case::Lower,
        })
    }

    fn signature(&self) -> Signature {
        let c = &self.config;
        Signature::new(self.id.name(), 1)
            .with("nrefs", "var")
            .with("case", c.case)
            .with("eff", "yes")
            .with("nc", c.char_order)
            .with("nw", c.word_order)
            .with("beta", c.beta)
            .with(
                "space",
                match c.whitespace {
                    Whitespace::Excluded => "no",
                    Whitespace::Included => "yes",
                },
            )
            .with("version", SACREBLEU_VERSION)
    }

    fn scorer(&self) -> Box<dyn UnitScorer> {
        Summing::start(self.config, corpus)
    }

    fn has_corpus_score(&self) -> bool {
        true
    }
}

impl UnitScorer for Summing<ChrfStats, ChrfConfig> {
    fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        let (response, references) = match texts(sample, 1) {
            Ok(texts) => texts,
            Err(skipped) => return skipped,
        };
        vec![
            match chrf::segment_stats(response, &references, &self.config) {
                Ok(stats) => {
                    let score = chrf::finalize(&stats, &self.config);
                    self.sums.add(sample.row, references.len(), stats);
                    Outcome::scored(score / 100.0, json!({"score": score}))
                }
                Err(e) => undefined(e),
            },
        ]
    }

    fn into_corpus(self: Box<Self>) -> Option<Box<dyn CorpusStats>> {
        Some(self)
    }
}

/// Corpus chrF with sacreBLEU's signature.
fn corpus(c: &Summed<ChrfStats>, config: &ChrfConfig, name: &str) -> Option<CorpusScore> {
    if c.rows == 0 {
        return None;
    }
    let score = chrf::finalize(&c.total, config);
    Some(CorpusScore {
        name: name.to_string(),
        value: score / 100.0,
        details: json!({"score": score}),
        signature: Some(config.signature(c.nrefs())),
    })
}
