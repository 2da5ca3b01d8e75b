//! What a run tells its caller while it goes: progress, and notes about
//! the run directory. The engine itself prints nothing.

use assay_core::Accumulator;
use assay_llm::{PriceTable, UsageLedger};

/// Where a run is, handed to [`Observer::progress`].
pub struct Progress<'a> {
    /// Rows read and finished so far.
    pub rows: u64,
    /// Bytes of the input read so far, and its size when known (not for
    /// standard input): the share done, for an ETA.
    pub bytes_read: u64,
    pub total_bytes: Option<u64>,
    /// Every output's outcomes so far, in the run's output order.
    pub outputs: &'a [Accumulator],
    /// The judge's and embedder's calls and tokens so far, and the prices
    /// that turn them into cost (runs with judged metrics only).
    pub usage: Option<(&'a UsageLedger, &'a PriceTable)>,
}

/// Receives a run's progress. Every method has a default that does
/// nothing, so an observer implements only what it shows.
pub trait Observer: Send {
    /// Called after each batch of rows (lexical runs) or each finished
    /// sample (judged runs): often, so an observer that draws should
    /// throttle itself.
    fn progress(&mut self, _progress: &Progress<'_>) {}

    /// Something the caller may want to tell the user: a resumed run, a
    /// torn line cut off, a run moved aside.
    fn note(&mut self, _message: &str) {}

    /// The run has stopped reading rows; no more progress follows.
    fn finish(&mut self) {}
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {}
