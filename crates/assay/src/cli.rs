//! The command line, each value parsed into its type by clap (a bad one
//! is clap's error, naming the flag). `config` turns it into a resolved
//! run; nothing else reads flags.

use assay_core::Format;
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
    /// Make a test set from documents: questions, reference answers and
    /// their contexts, as rows `assay eval` reads.
    Generate(Box<GenerateArgs>),
}

/// `assay generate`: a test set from documents.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Documents: Markdown, text, HTML or PDF files, or folders of them.
    #[arg(required = true, value_name = "DOCS")]
    pub documents: Vec<PathBuf>,
    /// Questions to make.
    #[arg(long, default_value_t = 20)]
    pub size: usize,
    /// The test set (JSONL); the rejected candidates go beside it in
    /// FILE.rejected.jsonl, the counts in FILE.summary.json.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The question types' shares, of single_hop, multi_hop, abstract and conversation [default: single_hop=0.5,multi_hop=0.25,abstract=0.25].
    #[arg(long, value_name = "TYPE=SHARE,...")]
    pub mix: Option<assay_generate::quota::Mix>,
    /// The seed of the plan (which chunk, persona, style and length each
    /// question gets).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The largest chunk, in estimated tokens (4 characters each).
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub chunk_tokens: usize,
    /// Who asks the questions (repeatable) [default: three built-in personas].
    #[arg(long = "persona", value_name = "TEXT")]
    pub personas: Vec<String>,
    /// Make the questions harder this way (repeatable; each question draws
    /// one of those named): reasoning, multi_context, concretizing,
    /// constrained, comparative, hypothetical, in_breadth.
    #[arg(long = "evolution", value_name = "NAME")]
    pub evolutions: Vec<assay_generate::evolve::Evolution>,
    /// Print the plan and the judge calls it needs, and stop before any call.
    #[arg(long)]
    pub dry_run: bool,
    /// Stop after N judge answers; what was made is written.
    #[arg(long, value_name = "N")]
    pub max_calls: Option<usize>,
    /// Stop once the calls made cost this much, at the judge's price
    /// (`--price MODEL=IN/OUT`, per million tokens); what was made is
    /// written.
    #[arg(long, value_name = "COST")]
    pub max_cost: Option<f64>,
    /// Ask the judge to score each question that passes the checks for
    /// self-containment and clarity (0 to 1, after DeepEval's filtration),
    /// and keep those scored MIN or more.
    #[arg(long, value_name = "MIN")]
    pub critic: Option<f64>,
    /// Ask the judge each question alone, without its contexts, and reject
    /// those it answers as the reference does (common knowledge, not a
    /// test of the contexts).
    #[arg(long)]
    pub closed_book: bool,
    /// Ask the judge each specific (single-hop and multi-hop) question again
    /// with its contexts, and reject those whose reference answer does not
    /// agree with the judge's (an answer that does not answer its question,
    /// or names the wrong one of two things).
    #[arg(long)]
    pub round_trip: bool,
    #[command(flatten)]
    pub judged: Judged,
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
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// A configuration file of run and judge options (TOML, keyed by
    /// their Python keywords; a `pyproject.toml` gives its `[tool.assay]`
    /// table); the flags given win over it. See docs/cli.md.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub options: EvalFlags,
    #[command(flatten)]
    pub judge: JudgeArgs,
    #[command(flatten)]
    pub finish: FinishFlags,
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
    #[command(flatten)]
    pub judged: Judged,
}

/// The label value a high score predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HighScoreMeans {
    True,
    False,
}

/// What a command that asks a judge takes besides its own flags (`assay
/// calibrate`, `assay generate`).
#[derive(Debug, Args)]
pub struct Judged {
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// A configuration file of judge options (TOML, keyed by their Python
    /// keywords; a `pyproject.toml` gives its `[tool.assay]` table); the
    /// flags given win over it. See docs/cli.md.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Worker threads, and the local judge's and embedder's CPU threads [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// What a run reads and how it runs: the flags `assay-config` declares
/// for [`EvalOptions`](assay_config::EvalOptions).
pub type EvalFlags = crate::flags::Flags<assay_config::EvalOptions>;

/// What is done once the run has run (gates, calibration, report): the
/// flags `assay-config` declares for
/// [`FinishOptions`](assay_config::FinishOptions).
pub type FinishFlags = crate::flags::Flags<assay_config::FinishOptions>;

/// How judged metrics reach their models: the flags `assay-config`
/// declares for [`JudgeConfig`](assay_config::JudgeConfig). The API key
/// is read from `OPENAI_API_KEY` or `ASSAY_API_KEY` only, never from a
/// flag.
pub type JudgeArgs = crate::flags::Flags<assay_config::JudgeConfig>;

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
