//! The engine in-process: runs, resume, cancel, the run-directory lock,
//! shards and merge, and run directories written by earlier versions.

mod common;
mod fixture;
mod props;
mod run;
mod tool_calls;
