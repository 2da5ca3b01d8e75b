//! What a run is: typed options, built by the caller (the command line's
//! flags, the Python keywords) and validated before any row is read.

use crate::batch::Export;
use crate::rundir::Existing;
use crate::shard::Shard;
use assay_core::{Format, InputOptions, Source};
use assay_llm::{CachedEmbedder, Judge, ModelSpec, PriceTable, ProviderOptions};
use assay_metrics::judged::{JudgedMetric, PromptSet};
use assay_metrics::{Direction, Metric};
use std::path::PathBuf;
use std::sync::Arc;

/// Everything a run needs, validated.
pub struct RunOptions {
    pub source: Source,
    /// The input's format; `None`: from the extension, else the first byte.
    pub input_format: Option<Format>,
    /// References joined onto the rows, and how trace calls are stitched.
    pub input: InputOptions,
    /// The lexical metrics.
    pub metrics: Vec<Metric>,
    /// The judged metrics and their models; `None` when none is asked for.
    pub judged: Option<Arc<JudgedRun>>,
    /// The run directory.
    pub out: PathBuf,
    pub strict: Strictness,
    /// Worker threads for lexical scoring and the judged runtime.
    pub threads: usize,
    /// What to do with a run already in `out`.
    pub existing: Existing,
    /// Only the rows of this shard are scored and written.
    pub shard: Option<Shard>,
}

/// One output column of a run: its name, metric and direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputName {
    pub name: String,
    pub metric: String,
    pub direction: Direction,
}

impl RunOptions {
    /// Every output of the run, lexical first, in the order of the
    /// metrics: the columns of `results.jsonl` and `summary.json`.
    pub fn outputs(&self) -> Vec<OutputName> {
        let lexical = self.metrics.iter().flat_map(|m| {
            let (metric, direction) = (m.id().to_string(), m.spec().direction);
            m.outputs().into_iter().map(move |name| OutputName {
                name,
                metric: metric.clone(),
                direction,
            })
        });
        let judged = self.judged.iter().flat_map(|j| {
            j.metrics.iter().flat_map(|m| {
                let metric = m.id().to_string();
                m.directions()
                    .into_iter()
                    .map(move |(name, direction)| OutputName {
                        name,
                        metric: metric.clone(),
                        direction,
                    })
            })
        });
        lexical.chain(judged).collect()
    }
}

/// The judged metrics of a run, with their connected models.
pub struct JudgedRun {
    pub metrics: Vec<JudgedMetric>,
    pub prompts: PromptSet,
    pub judge: Judge,
    /// The judge as manifests and signatures name it: an in-process model
    /// file by its file name, never its path, which differs between
    /// machines (the model's SHA-256 is in the judge's identity).
    pub judge_spec: ModelChoice,
    /// The embedder, and its name as for `judge_spec`.
    pub embedder: Option<(CachedEmbedder, ModelChoice)>,
    pub options: ProviderOptions,
    pub prices: PriceTable,
    /// How many times each sample is judged (at least 1).
    pub repeats: u32,
    /// Batch export: the judge answers from the cache only, and this
    /// collects the requests it could not answer.
    pub export: Option<Export>,
    /// Whether scored outcomes get a judge-written reason.
    pub reasons: Reasons,
}

/// A judge or embedder as the user names it (`--judge`, `judge=`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelChoice {
    /// An OpenAI-compatible server: `openai:`, `ollama:`, `vllm:`, `llamacpp:`.
    Http(ModelSpec),
    /// An in-process model, `local` or `local:NAME` (the name, if given).
    Local(Option<String>),
}

impl std::str::FromStr for ModelChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "local" => Ok(ModelChoice::Local(None)),
            Some(("local", name)) if !name.is_empty() => {
                Ok(ModelChoice::Local(Some(name.to_string())))
            }
            _ => s
                .parse::<ModelSpec>()
                .map(ModelChoice::Http)
                .map_err(|e| e.to_string()),
        }
    }
}

impl std::fmt::Display for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelChoice::Http(spec) => spec.fmt(f),
            ModelChoice::Local(None) => f.write_str("local"),
            ModelChoice::Local(Some(name)) => write!(f, "local:{name}"),
        }
    }
}

/// What a bad row does to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strictness {
    /// Record it as a failed outcome and go on.
    RecordAndContinue,
    /// Stop the run with [`crate::EngineError::Usage`].
    StopAtFirst,
}

/// Who writes the `reason` of a scored judged outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reasons {
    /// Composed from the verdicts, without a call.
    Composed,
    /// Written by the judge in one more call per scored outcome.
    Llm,
}
