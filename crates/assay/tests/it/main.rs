//! End-to-end tests of the `assay` binary: real files in, run directory out.

mod align;
mod batch;
mod calibrate;
mod common;
mod compare;
mod config_file;
mod conversation;
mod eval;
mod faults;
mod gates;
mod grounding;
mod judged;
mod languages;
mod metrics_cmd;
mod parity;
mod progress;
mod prompts_adapt;
mod real_server;
mod reasons;
mod report;
mod resume;
mod rubric;
mod secrets;
mod shard;
mod traces;
mod usage;
