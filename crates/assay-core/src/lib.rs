//! The data model of assay: samples and their fields, streaming dataset
//! readers, outcomes, per-metric aggregation and run signatures.
//!
//! No model code lives here: every other crate builds on these types.

pub mod aggregate;
pub mod chat;
pub mod conversation;
pub mod dataset;
pub mod hash;
mod json;
pub mod otlp;
pub mod outcome;
mod read;
pub mod references;
pub mod results;
pub mod sample;
pub mod schema;
pub mod signature;

pub use aggregate::{
    paired_difference, Accumulator, Coverage, IntervalMethod, PairedDifference, Summary,
};
pub use conversation::{Conversation, Message, Role, ToolCall};
pub use dataset::{
    Format, InputOptions, InputReport, Location, Original, Position, Row, RowError, Rows, Source,
};
pub use otlp::{Events, Stitch, Stitched};
pub use outcome::{
    Details, Failure, FailureKind, Outcome, OutcomeRecord, SkipReason, Status, UnknownFailureKind,
};
pub use references::ReferencesReport;
pub use results::{read_results, visit_results, ResultsLog};
pub use sample::{Field, Sample};
pub use signature::Signature;
