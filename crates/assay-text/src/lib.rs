//! Lexical text metrics that reproduce their Python references exactly.
//!
//! Pure, synchronous code with no model or I/O dependencies, so it builds
//! fast and can be used alone. Each metric follows the sacreBLEU shape:
//! sufficient statistics per segment that add up, and one `finalize`.

pub mod bleu;
pub mod chrf;
pub mod porter;
pub mod rouge;
pub mod sacrebleu;
pub mod sentences;
pub mod string;
pub mod tokenize;
