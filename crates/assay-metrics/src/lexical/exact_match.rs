//! ragas' ExactMatch: the response equals a reference.

use super::Indicator;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use crate::unit::Unit;
use crate::unit::{MetricId, MetricSpec};
use assay_core::Field;
use assay_text::string;

pub const ID: MetricId = MetricId::of(&SPEC);

pub const SPEC: MetricSpec = MetricSpec {
    name: "exact_match",
    summary: "1 if the response equals a reference exactly, else 0",
    definition:
        "ragas ExactMatch: reference == response, compared as Unicode strings; several references: \
                 1 if any matches.",
    required: &[Field::Response, Field::References],
    params: &[],
    direction: Direction::HigherIsBetter,
    empty_inputs: "1 when response and reference are both empty",
    outputs: "exact_match",
    added_params: &[],
    configure,
};

fn configure(_: &Values) -> Result<Box<dyn Unit>, ParamError> {
    Ok(Box::new(Indicator {
        id: ID,
        matches: string::exact_match,
    }))
}
