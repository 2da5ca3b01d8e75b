//! ROUGE: n-gram and longest-common-subsequence overlap with the
//! reference, exact against rouge-score 0.1.2 (`assay_text::rouge`).

use super::texts;
use crate::params::{parse_bool, ParamError, ParamSpec, Values};
use crate::spec::Direction;
use crate::unit::{MetricId, MetricSpec};
use crate::unit::{Unit, UnitScorer};
use assay_core::{Details, Field, Outcome, Sample, Signature};
use assay_text::rouge::{Prf, RougeScorer, RougeTokenizer, RougeType, Stemming};
use serde_json::{json, Value};

pub const ID: MetricId = MetricId::of(&SPEC);

pub const SPEC: MetricSpec = MetricSpec {
    name: "rouge",
    summary: "n-gram and longest-common-subsequence overlap with the reference (F-measure)",
    definition: "rouge-score 0.1.2 RougeScorer.score_multi(references, response): lowercased ASCII \
                 alphanumeric tokens, optional NLTK Porter stemming of tokens longer than 3 characters; \
                 per ROUGE type the reference with the best F (first on ties); value = F, details = P/R/F. \
                 rouge-score's tokenizer finds no token in text without ASCII letters or digits (Chinese, \
                 Arabic, Hindi, Russian...): for such text set tokenizer=unicode (or char, whitespace), \
                 assay's own tokenizers, which rouge-score does not have.",
    required: &[Field::Response, Field::References],
    params: &[
        ParamSpec {
            name: "types",
            default: "rouge1,rouge2,rougeL,rougeLsum",
            doc: "comma-separated ROUGE types: rouge1..rouge9, rougeL, rougeLsum (summary-level LCS over lines)",
        },
        ParamSpec {
            name: "use_stemmer",
            default: "false",
            doc: "apply NLTK's Porter stemmer (NLTK_EXTENSIONS mode) to tokens longer than 3 characters",
        },
        ParamSpec {
            name: "tokenizer",
            default: "default",
            doc: "default: rouge-score's (lowercased runs of [a-z0-9]); unicode: lowercased runs of letters, \
                  marks and digits of any script, each Chinese character and kana a token; whitespace: \
                  lowercased str.split(), for pre-segmented text; char: each lowercased letter, mark or digit \
                  a token. The stemmer applies to [a-z0-9] tokens only",
        },
    ],
    direction: Direction::HigherIsBetter,
    empty_inputs: "0 when either side has no tokens (including text with no ASCII letters or digits)",
    outputs: "rouge1, rouge2, rougeL, rougeLsum (one per type)",
    added_params: &["tokenizer"],
    configure,
};

/// The scorer is built (and its types checked) once, then cloned per
/// thread; boxed because it carries its working buffers.
#[derive(Clone, Debug)]
struct Rouge(Box<RougeScorer>);

fn configure(values: &Values) -> Result<Box<dyn Unit>, ParamError> {
    let types = values.get("types", parse_types)?;
    let stemming = values.get("use_stemmer", |s| {
        parse_bool(s).map(|on| if on { Stemming::Porter } else { Stemming::Off })
    })?;
    let tokenizer = values.parse::<RougeTokenizer>("tokenizer")?;
    Ok(Box::new(Rouge(Box::new(
        values
            .get("types", |_| RougeScorer::new(&types, stemming))?
            .with_tokenizer(tokenizer),
    ))))
}

fn parse_types(s: &str) -> Result<Vec<RougeType>, String> {
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

impl Unit for Rouge {
    fn outputs(&self) -> Vec<String> {
        self.0.types().iter().map(ToString::to_string).collect()
    }

    fn params_json(&self) -> Value {
        json!({
            "types": self.outputs(),
            "use_stemmer": self.0.stemming() == Stemming::Porter,
            "tokenizer": self.0.tokenizer().to_string(),
        })
    }

    fn signature(&self) -> Signature {
        Signature::new(ID.name(), 1)
            .with(
                "stem",
                if self.0.stemming() == Stemming::Porter {
                    "porter-nltk"
                } else {
                    "no"
                },
            )
            .with(
                "tok",
                match self.0.tokenizer() {
                    RougeTokenizer::Default => "rouge-score",
                    other => other.name(),
                },
            )
            .with("multiref", "max")
    }

    fn scorer(&self) -> Box<dyn UnitScorer> {
        Box::new(self.clone())
    }
}

impl UnitScorer for Rouge {
    fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        let (response, references) = match texts(sample, self.0.types().len()) {
            Ok(texts) => texts,
            Err(skipped) => return skipped,
        };
        self.0
            .score_multi(&references, response)
            .into_iter()
            .map(|prf: Prf| {
                Outcome::scored(
                    prf.fmeasure,
                    Details::numbers(
                        &["precision", "recall", "fmeasure"],
                        [prf.precision, prf.recall, prf.fmeasure],
                    ),
                )
            })
            .collect()
    }
}
