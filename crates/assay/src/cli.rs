//! The command line, each value parsed into its type by clap (a bad one
//! is clap's error, naming the flag). `config` turns it into a resolved
//! run; nothing else reads flags.

use assay_config::ModelPrice;
use assay_core::Format;
use assay_engine::{ModelChoice, Shard};
use assay_metrics::judged::Protocol;
use assay_metrics::{AnyId, Setting};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Score the outputs of LLM applications: RAG answers, summaries, question answering.
#[derive(Debug, Parser)]
#[command(name = "assay", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score a dataset with a list of metrics and write a run directory.
    Eval(Box<EvalArgs>),
    /// List every metric with its definition, required fields and parameters.
    Metrics(MetricsArgs),
    /// Inspect or empty the judge's response cache.
    Cache(CacheArgs),
    /// Write DIR/report.html: a self-contained page of a run's scores,
    /// samples, reasons, verdicts and failures.
    Report(ReportArgs),
    /// Compare two run directories: per output the difference of means on
    /// the samples both share, with a paired bootstrap CI.
    Compare(CompareArgs),
    /// Load the answers of an OpenAI Batch / `vllm run-batch` output file
    /// into the cache of a run made with `--batch export`.
    Batch(BatchArgs),
    /// Combine the run directories of `--shard K/N` runs into one.
    Merge(MergeArgs),
    /// Measure a judged metric's agreement with human labels; writes calibration.json.
    Calibrate(Box<CalibrateArgs>),
    /// Refit the grounding verdict on your labelled rows, measured before
    /// and after on held-out folds; writes the file `eval --alignment` reads.
    Align(AlignArgs),
    /// Work on prompt folders (`--prompts DIR`).
    Prompts(PromptsArgs),
}

#[derive(Debug, Args)]
pub struct PromptsArgs {
    #[command(subcommand)]
    pub action: PromptsAction,
}

#[derive(Debug, Subcommand)]
pub enum PromptsAction {
    /// Write a prompts folder whose instructions and examples the judge
    /// translated into LANG, the originals kept in DIR/original/; use it
    /// with `eval --prompts DIR`.
    Adapt(Box<AdaptArgs>),
}

/// `assay prompts adapt`: the language to write the prompts in is the
/// judge options' `--language` (its English name or code: de, German,
/// deu), required here.
#[derive(Debug, Args)]
pub struct AdaptArgs {
    /// The folder to write (new, or one this command wrote before).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Only these prompts, comma-separated (e.g. faithfulness_verdicts,statements) [default: all].
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub only: Vec<String>,
    /// CPU threads of a local judge [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// `assay align`: the grounding verdict refitted on labelled rows.
#[derive(Debug, Args)]
pub struct AlignArgs {
    /// A built-in labelled set: ragtruth, halueval-qa, halueval-general, summeval.
    #[arg(long = "set", value_name = "NAME", conflicts_with = "data")]
    pub set: Option<String>,
    /// Your own labelled JSONL (the schema of data/calibration/README.md).
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// The yes/no label field (under `labels`, else at the top level) [default: hallucinated].
    #[arg(long, value_name = "FIELD")]
    pub labels: Option<String>,
    /// What a true label means [default: unsupported, as `hallucinated` does].
    #[arg(long, value_enum, value_name = "MEANING")]
    pub true_means: Option<TrueMeans>,
    /// The alignment file to write.
    #[arg(long, short, value_name = "FILE")]
    pub out: PathBuf,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

/// What a true label of `assay align` means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TrueMeans {
    Supported,
    Unsupported,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run directory.
    pub dir: PathBuf,
    /// The input's format, when its file extension does not say it.
    #[arg(long, value_name = "jsonl|json|csv|otlp")]
    pub input_format: Option<Format>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline run directory.
    pub a: PathBuf,
    /// The run compared with it (differences are B - A).
    pub b: PathBuf,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// How many of the most-changed samples to list per output.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

#[derive(Debug, Args)]
pub struct BatchArgs {
    #[command(subcommand)]
    pub action: BatchAction,
}

#[derive(Debug, Subcommand)]
pub enum BatchAction {
    /// Store the answers of a batch output file in the cache of run DIR.
    Import {
        /// The batch output file (JSONL, one answer per line).
        file: PathBuf,
        /// The run directory whose `--batch export` wrote the requests.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The cache to fill [default: the one the export used].
        #[arg(long, value_name = "PATH")]
        cache: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The run directories of the shards, in any order.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// The merged run directory.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// This machine's copy of the input, when it is not at the path the
    /// shards recorded (its sha256 must match): merge reads it again for
    /// the corpus-level scores.
    #[arg(long, value_name = "PATH")]
    pub input: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
    /// The cache file [default: $ASSAY_HOME/cache.sqlite, else ~/.cache/assay/cache.sqlite].
    #[arg(long, global = true)]
    pub cache: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, Subcommand)]
pub enum CacheAction {
    /// Entries, tokens and size of the cache.
    Stats,
    /// Delete every entry.
    Clear,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// JSONL, JSON array or CSV file of samples; `-` reads standard input.
    pub data: String,
    /// Comma-separated metric ids, e.g. `rouge,bleu,chrf` (see `assay metrics`).
    #[arg(long, short, value_delimiter = ',', required = true)]
    pub metrics: Vec<AnyId>,
    /// A metric parameter, `METRIC.PARAM=VALUE`; repeatable.
    #[arg(long = "set", value_name = "METRIC.PARAM=VALUE")]
    pub settings: Vec<Setting>,
    /// Run directory [default: runs/<UTC timestamp>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Input format, when the file extension does not say it (an OTLP
    /// trace export is recognised by its first key).
    #[arg(long, value_name = "jsonl|json|csv|otlp")]
    pub input_format: Option<Format>,
    /// A JSONL or CSV file of references joined onto the samples: each row
    /// names its sample by `trace_id`, `sample_id` or `id` and gives
    /// `reference_tool_calls`, `reference`, `reference_topics`, ...
    #[arg(long, value_name = "FILE")]
    pub references: Option<PathBuf>,
    /// The OTLP logs export (`{"resourceLogs": ...}`) of an OTLP trace
    /// export whose spans carry no messages: its GenAI events
    /// (`gen_ai.user.message`, `gen_ai.choice`, ...) give each span its
    /// messages, joined by trace and span id.
    #[arg(long, value_name = "FILE")]
    pub logs: Option<PathBuf>,
    /// Read each LLM call of an OTLP export that has no common parent span
    /// as its own row, instead of stitching the calls into conversations.
    #[arg(long)]
    pub no_stitch: bool,
    /// Stop at the first bad row (exit code 2) instead of recording it as failed.
    #[arg(long)]
    pub strict: bool,
    /// Worker threads, and the local judge's and embedder's CPU threads [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub judge: JudgeArgs,
    /// Also write the run's HTML report, DIR/report.html (see `assay report`).
    #[arg(long)]
    pub report: bool,
    /// Start over in an `--out` that holds a run made with another manifest;
    /// its files are moved to `DIR/superseded-N/`, never deleted.
    #[arg(long)]
    pub force_new: bool,
    /// Score only shard K of N (1-based): the rows whose sample id hashes
    /// (FNV-1a 64) to K-1 modulo N. `assay merge` combines the shards.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// A calibration.json of a binary judgement (from `assay calibrate`):
    /// also report the raw rate and the prevalence corrected for the
    /// judge's sensitivity and specificity, with its interval.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    #[command(flatten)]
    pub gates: GateArgs,
}

/// CI gates, checked once the run is written: exit code 1 when one fails.
#[derive(Debug, Default, Args)]
pub struct GateArgs {
    /// Fail when an output's mean is below VALUE (higher-is-better
    /// metrics); METRIC is an output name or a single-output metric id.
    #[arg(long, value_name = "METRIC=VALUE")]
    pub fail_under: Vec<String>,
    /// Fail when an output's mean is above VALUE (lower-is-better metrics).
    #[arg(long, value_name = "METRIC=VALUE")]
    pub fail_over: Vec<String>,
    /// Fail when more than this fraction (0 to 1) of any output's outcomes failed.
    #[arg(long, value_name = "F")]
    pub max_failed_fraction: Option<f64>,
}

/// `assay calibrate`: a judged metric against human labels.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// A built-in labelled set: ragtruth, halueval-qa, halueval-general, summeval, ragchecker.
    #[arg(long = "set", value_name = "NAME", conflicts_with = "data")]
    pub set: Option<String>,
    /// Your own labelled JSONL (the schema of data/calibration/README.md).
    #[arg(long, value_name = "FILE", requires = "labels")]
    pub data: Option<PathBuf>,
    /// The label field (under `labels`, else at the top level) [default: the built-in mapping].
    #[arg(long, value_name = "FIELD")]
    pub labels: Option<String>,
    /// For a yes/no label named by --labels: the value a high score predicts.
    #[arg(long, value_enum)]
    pub high_score_means: Option<HighScoreMeans>,
    /// The judged metric to calibrate, e.g. faithfulness.
    #[arg(long, short)]
    pub metric: String,
    /// Only the rows of this task (RAGTruth: QA, Summary, Data2txt; others: the `task` field).
    #[arg(long)]
    pub task: Option<String>,
    /// At most N rows (pairs), a label-balanced subset chosen by SHA-256 of the ids.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Leave out the first N rows of that label-balanced order: `--offset 100
    /// --limit 40` gives 40 rows to tune on that a `--limit 100` run never sees.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: usize,
    /// Run directory [default: runs/calibrate-<unix time>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Worker threads, and the local judge's and embedder's CPU threads [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// The label value a high score predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HighScoreMeans {
    True,
    False,
}

/// How judged metrics reach their models. The API key is read from
/// `OPENAI_API_KEY` or `ASSAY_API_KEY` only, never from a flag.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// The chat model of judged metrics: openai:MODEL, ollama:MODEL,
    /// vllm:MODEL, llamacpp:MODEL, local (Qwen2.5-Coder-0.5B in-process),
    /// local:smollm2-135m or local:/path/model.gguf [default: local].
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<ModelChoice>,
    /// The embedding model of metrics that compare embeddings: the same
    /// remote forms, or local (all-MiniLM-L6-v2 in-process) [default: local].
    #[arg(long, value_name = "SPEC")]
    pub embedder: Option<ModelChoice>,
    /// The provider's base URL (ending in /v1) instead of its default.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    /// Requests per minute.
    #[arg(long)]
    pub rpm: Option<u32>,
    /// Tokens per minute: a request reserves an estimate (body bytes / 4 +
    /// max_tokens) and is settled with the usage its answer reports.
    #[arg(long)]
    pub tpm: Option<u32>,
    /// Retries of a transient failure (429, 5xx, timeout, connection) [default: 6].
    #[arg(long)]
    pub max_retries: Option<u32>,
    /// Seconds per attempt of one call [default: 60].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// The response cache [default: $ASSAY_HOME/cache.sqlite, else ~/.cache/assay/cache.sqlite].
    #[arg(long, value_name = "PATH", conflicts_with = "no_cache")]
    pub cache: Option<PathBuf>,
    /// Use no response cache.
    #[arg(long)]
    pub no_cache: bool,
    /// A folder of prompt files replacing the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// A model's price per million tokens, MODEL=IN/OUT; repeatable. None is assumed.
    #[arg(long = "price", value_name = "MODEL=IN/OUT")]
    pub prices: Vec<ModelPrice>,
    /// Judge every sample N times, repeat r with seed r, and report the
    /// spread of the means per metric (judge noise).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeats: u32,
    /// `export`: answer judge calls from the cache only and write every
    /// missing request to DIR/batch/ as OpenAI Batch JSONL instead of
    /// sending it (see `assay batch import`).
    #[arg(long, value_enum, value_name = "MODE")]
    pub batch: Option<BatchMode>,
    /// How a scored outcome's reason is written: `composed` from the
    /// judge's verdicts, no extra call; `llm`: one more judge call per
    /// scored outcome writes it in prose (the composed one stays in
    /// `details.composed_reason`).
    #[arg(long, value_enum, value_name = "HOW", default_value_t = Reasons::Composed)]
    pub reasons: Reasons,
    /// How closed verdicts (statement supported, context contradicted, ...)
    /// are asked: `listed`, the whole list in one call with a reason before
    /// each verdict (ragas' prompts); `per-item`, one short call per item
    /// whose verdict is read with its probabilities; `likelihood`, as
    /// per-item, but whether the response is grounded in its contexts
    /// (faithfulness, hallucination) is read from how much likelier the
    /// contexts make its words, local judges only; `grounding`, as
    /// per-item, but grounding, contradiction, usefulness and statement
    /// matches are answered by the trained grounding model and toxicity
    /// and bias by a word screen, no judge asked [default: grounding for
    /// a local judge, listed for a remote one].
    #[arg(long, value_name = "HOW")]
    pub protocol: Option<Protocol>,
    /// A grounding model: a Hugging Face folder of a sequence classifier
    /// (NLI cross-encoder, MiniCheck; BERT, RoBERTa, DeBERTa-v2/v3 or
    /// ModernBERT) that answers every closed grounding question of every
    /// metric (faithfulness, context_recall, context_precision,
    /// hallucination, answer_correctness's matches), whatever the judge.
    #[arg(long, value_name = "DIR")]
    pub grounding: Option<PathBuf>,
    /// The grounding model's label that means supported, by name or index
    /// [default: the one its id2label calls entailment, supported,
    /// consistent, ...].
    #[arg(long, value_name = "LABEL", requires = "grounding")]
    pub grounding_label: Option<String>,
    /// An alignment file (`assay align`): the lexical grounding verdict's
    /// combiner refitted on your labels, in place of the built-in one.
    #[arg(long, value_name = "FILE")]
    pub alignment: Option<PathBuf>,
    /// The language of every row (en, fr, de, es, or their names), for
    /// the lexical grounding verdict; by default each row's is detected,
    /// and a row in a language it cannot read is skipped.
    #[arg(long, value_name = "LANG")]
    pub language: Option<String>,
}

/// How judge calls that are not in the cache are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BatchMode {
    /// Write them to a batch file; send nothing.
    Export,
}

/// Who writes the `reason` of a scored judged outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Reasons {
    /// Composed from the verdicts, without a call.
    Composed,
    /// Written by the judge in one more call per scored outcome.
    Llm,
}

impl From<Reasons> for assay_engine::Reasons {
    fn from(r: Reasons) -> Self {
        match r {
            Reasons::Composed => assay_engine::Reasons::Composed,
            Reasons::Llm => assay_engine::Reasons::Llm,
        }
    }
}

#[derive(Debug, Args)]
pub struct MetricsArgs {
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
}
