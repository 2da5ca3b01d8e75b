//! Samples, readers, outcomes, aggregation.
