//! The assay run engine: scores a dataset with lexical and judged metrics
//! into a run directory, resumably, and reports progress to the caller.
//!
//! The command line and the Python package are thin over this crate; a
//! Rust program can use it alone. It prints nothing, installs no signal
//! handler, never exits the process and starts no runtime inside a
//! runtime: [`run`] is async and runs on the caller's runtime,
//! [`run_blocking`] starts one of its own.
//!
//! Scoring two samples with ROUGE-L:
//!
//! ```
//! use assay_engine::{run_blocking, CancelToken, Existing, RunOptions, Silent, Strictness};
//! use assay_metrics::{Metric, MetricId};
//! use std::collections::BTreeMap;
//!
//! let dir = tempfile::tempdir()?;
//! let data = dir.path().join("data.jsonl");
//! std::fs::write(
//!     &data,
//!     "{\"id\":\"a\",\"response\":\"the cat sat\",\"reference\":\"the cat sat down\"}\n\
//!      {\"id\":\"b\",\"response\":\"a dog\",\"reference\":\"the cat\"}\n",
//! )?;
//! let mut params = BTreeMap::new();
//! params.insert("types".to_string(), "rougeL".to_string());
//! let options = RunOptions {
//!     source: assay_core::Source::Path(data),
//!     input_format: None,
//!     input: Default::default(),
//!     metrics: vec![Metric::configure(assay_metrics::lexical::rouge::ID, &params)?],
//!     judged: None,
//!     out: dir.path().join("run"),
//!     strict: Strictness::RecordAndContinue,
//!     threads: 1,
//!     existing: Existing::Resume,
//!     shard: None,
//! };
//! let summary = run_blocking(&options, &mut Silent, &CancelToken::new())?;
//! let rouge_l = &summary.outputs[0];
//! assert_eq!(rouge_l.name, "rougeL");
//! // F-measures 6/7 and 0: the mean of the two samples.
//! let mean = rouge_l.summary.stats.as_ref().unwrap().mean;
//! assert!((mean - 3.0 / 7.0).abs() < 1e-12);
//! assert!(summary.complete);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Judged metrics need a judge: any [`assay_llm::ChatModel`] wrapped in an
//! [`assay_llm::Judge`] (an OpenAI-compatible server through
//! [`assay_llm::Judge::connect`], or the in-process model of
//! `assay-local`), in a [`JudgedRun`]:
//!
//! ```no_run
//! use assay_engine::{
//!     run, CancelToken, Existing, JudgedRun, ModelChoice, Reasons, RunOptions, Silent, Strictness,
//! };
//! use assay_llm::{Judge, Limiter, PriceTable, ProviderOptions};
//! use assay_metrics::judged::{JudgedId, JudgedMetric, PromptSet};
//! use std::collections::BTreeMap;
//! use std::sync::Arc;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let spec: ModelChoice = "vllm:qwen2.5-7b-instruct".parse()?;
//! let ModelChoice::Http(model) = &spec else { unreachable!() };
//! let provider = ProviderOptions {
//!     base_url: Some("http://127.0.0.1:8000/v1".into()),
//!     ..ProviderOptions::default()
//! };
//! let limiter = Arc::new(Limiter::from_options(&provider));
//! let prompts = PromptSet::builtin()?;
//! let faithfulness = JudgedMetric::configure(assay_metrics::judged::faithfulness::ID, &BTreeMap::new(), &prompts)?;
//! let judged = JudgedRun {
//!     metrics: vec![faithfulness],
//!     prompts,
//!     judge: Judge::connect(model, &provider, None, limiter)?,
//!     judge_spec: spec,
//!     embedder: None,
//!     options: provider,
//!     prices: PriceTable::default(),
//!     repeats: 1,
//!     export: None,
//!     reasons: Reasons::Composed,
//! };
//! let options = RunOptions {
//!     source: assay_core::Source::Path("rag.jsonl".into()),
//!     input_format: None,
//!     input: Default::default(),
//!     metrics: Vec::new(),
//!     judged: Some(Arc::new(judged)),
//!     out: "runs/faithfulness".into(),
//!     strict: Strictness::RecordAndContinue,
//!     threads: 2,
//!     existing: Existing::Resume,
//!     shard: None,
//! };
//! let summary = run(&options, &mut Silent, &CancelToken::new()).await?;
//! println!("{}", serde_json::to_string_pretty(&summary)?);
//! # Ok(())
//! # }
//! ```

pub mod adapt;
pub mod batch;
mod cache;
mod cancel;
mod error;
pub mod generate;
mod judging;
pub mod log;
pub mod merge;
mod observer;
mod options;
mod run;
pub mod rundir;
pub mod shard;

pub use cache::open_cache;
pub use cancel::CancelToken;
pub use error::{EngineError, Result};
pub use log::{OutputSummary, OutputUsage, RagasSummary, RepeatSpread, RunManifest, RunSummary};
pub use observer::{Observer, Progress, Silent};
pub use options::{JudgedRun, ModelChoice, OutputName, Reasons, RunOptions, Strictness};
pub use run::{run, run_blocking};
pub use rundir::Existing;
pub use shard::Shard;
