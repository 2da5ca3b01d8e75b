//! ragas' StringPresence: a reference occurs in the response.

use super::Indicator;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use crate::unit::Unit;
use crate::unit::{MetricId, MetricSpec};
use assay_core::Field;
use assay_text::string;

pub const ID: MetricId = MetricId::of(&SPEC);

pub const SPEC: MetricSpec = MetricSpec {
    name: "string_presence",
    summary: "1 if a reference occurs in the response as a substring, else 0",
    definition: "ragas StringPresence: reference in response; several references: 1 if any occurs.",
    required: &[Field::Response, Field::References],
    params: &[],
    direction: Direction::HigherIsBetter,
    empty_inputs: "1 for an empty reference (the empty string occurs everywhere, as in Python)",
    outputs: "string_presence",
    added_params: &[],
    configure,
};

fn configure(_: &Values) -> Result<Box<dyn Unit>, ParamError> {
    Ok(Box::new(Indicator {
        id: ID,
        matches: string::string_presence,
    }))
}
