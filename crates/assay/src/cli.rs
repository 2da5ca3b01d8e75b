//! The command line as typed: plain values, no interpretation. `config`
//! turns it into a resolved run; nothing else reads flags.

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
    Eval(EvalArgs),
    /// List every metric with its definition, required fields and parameters.
    Metrics(MetricsArgs),
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// JSONL, JSON array or CSV file of samples; `-` reads standard input.
    pub data: String,
    /// Comma-separated metric ids, e.g. `rouge,bleu,chrf` (see `assay metrics`).
    #[arg(long, short, value_delimiter = ',', required = true)]
    pub metrics: Vec<String>,
    /// A metric parameter, `METRIC.PARAM=VALUE`; repeatable.
    #[arg(long = "set", value_name = "METRIC.PARAM=VALUE")]
    pub settings: Vec<String>,
    /// Run directory [default: runs/<UTC timestamp>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Input format, when the file extension does not say it.
    #[arg(long, value_name = "jsonl|json|csv")]
    pub input_format: Option<String>,
    /// Stop at the first bad row (exit code 2) instead of recording it as failed.
    #[arg(long)]
    pub strict: bool,
    /// Worker threads [default: all cores].
    #[arg(long)]
    pub threads: Option<usize>,
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
