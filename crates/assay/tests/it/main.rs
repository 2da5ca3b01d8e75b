//! End-to-end tests of the `assay` binary: real files in, run directory out.

mod calibrate;
mod common;
mod eval;
mod judged;
mod metrics_cmd;
mod parity;
