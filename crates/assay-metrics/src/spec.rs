//! Whether a metric's larger values are better, for lexical and judged
//! metrics alike.

use serde::{Deserialize, Serialize};

/// Whether a larger value is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}
