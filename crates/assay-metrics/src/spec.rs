//! What a lexical or tool-call metric is, needs and accepts: the types of
//! its entry in [`crate::specs::SPECS`], read by `assay metrics` (and so
//! the metrics reference) and by parameter checking.

use crate::params::ParamSpec;
use crate::MetricId;
use assay_core::Field;
use serde::{Deserialize, Serialize};

/// Whether a larger value is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

/// A metric's documentation and contract.
#[derive(Clone, Copy, Debug)]
pub struct MetricSpec {
    pub id: MetricId,
    /// One line: what the number means.
    pub summary: &'static str,
    /// How it is computed, and which reference implementation it equals.
    pub definition: &'static str,
    /// Fields a row must have; [`Field::References`] is satisfied by
    /// `reference` or `references`.
    pub required: &'static [Field],
    pub params: &'static [ParamSpec],
    pub direction: Direction,
    /// What it gives on empty strings and lists.
    pub empty_inputs: &'static str,
    /// Names of the outcomes it writes per sample.
    pub outputs: &'static str,
}
