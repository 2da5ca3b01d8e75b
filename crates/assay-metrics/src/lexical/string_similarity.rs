//! ragas' NonLLMStringSimilarity: 1 minus a normalised edit distance,
//! with rapidfuzz's semantics (`assay_text::string`).

use super::texts;
use crate::params::{ParamError, ParamSpec, Values};
use crate::spec::Direction;
use crate::unit::{MetricId, MetricSpec};
use crate::unit::{Unit, UnitScorer};
use assay_core::{Field, Outcome, Sample, Signature};
use assay_text::string::{self, StringDistance};
use serde_json::{json, Value};

pub const ID: MetricId = MetricId::of(&SPEC);

pub const SPEC: MetricSpec = MetricSpec {
    name: "string_similarity",
    summary: "1 - normalised edit distance between response and reference",
    definition: "ragas NonLLMStringSimilarity with rapidfuzz 3.x semantics over Unicode code points; \
                 several references: the best.",
    required: &[Field::Response, Field::References],
    params: &[ParamSpec {
        name: "distance",
        default: "levenshtein",
        doc: "levenshtein (normalised by the longer length), hamming (unequal lengths padded), jaro, jaro_winkler",
    }],
    direction: Direction::HigherIsBetter,
    empty_inputs: "1 when both are empty, 0 when exactly one is",
    outputs: "string_similarity",
    added_params: &[],
    configure,
};

#[derive(Clone, Debug)]
struct Similarity(StringDistance);

fn configure(values: &Values) -> Result<Box<dyn Unit>, ParamError> {
    Ok(Box::new(Similarity(
        values.get("distance", str::parse::<StringDistance>)?,
    )))
}

impl Unit for Similarity {
    fn outputs(&self) -> Vec<String> {
        vec![ID.name().to_string()]
    }

    fn params_json(&self) -> Value {
        json!({"distance": self.0.to_string()})
    }

    fn signature(&self) -> Signature {
        Signature::new(ID.name(), 1)
            .with("distance", self.0)
            .with("multiref", "max")
    }

    fn scorer(&self) -> Box<dyn UnitScorer> {
        Box::new(self.clone())
    }
}

impl UnitScorer for Similarity {
    fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        let (response, references) = match texts(sample, 1) {
            Ok(texts) => texts,
            Err(skipped) => return skipped,
        };
        let (best, value) = references
            .iter()
            .map(|r| string::similarity(r, response, self.0))
            .enumerate()
            .fold(
                (0, f64::NEG_INFINITY),
                |acc, (i, v)| {
                    if v > acc.1 {
                        (i, v)
                    } else {
                        acc
                    }
                },
            );
        vec![Outcome::scored(value, json!({"best_reference": best}))]
    }
}
