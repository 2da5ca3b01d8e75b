//! `assay`: parse flags, resolve them into a run, run it, render it.
//!
//! Exit codes: 0 success; 2 bad usage or input (unknown metric, bad
//! parameter, unreadable file, a bad row under `--strict`, judged metrics
//! without `--judge`); 3 an internal or output error (e.g. the run
//! directory cannot be written), or a run stopped because the judge refused
//! the credentials (`auth`: every later call would fail the same way).

mod batch;
mod cli;
mod config;
mod engine;
mod judging;
mod merge;
mod progress;
mod render;
mod rundir;

use clap::Parser;
use cli::{BatchAction, CacheAction, Cli, Command, OutputFormat};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<config::UsageError>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(3)
            }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Metrics(args) => {
            match args.format {
                OutputFormat::Table => print!("{}", render::metrics_table()),
                OutputFormat::Json => {
                    println!("{}", serde_json::to_string_pretty(&render::metrics_json())?)
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Cache(args) => {
            let location = args.cache.map_or(
                assay_llm::CacheLocation::Default,
                assay_llm::CacheLocation::Path,
            );
            let Some(cache) = config::open_cache(location)? else {
                return Ok(ExitCode::SUCCESS);
            };
            match args.action {
                CacheAction::Stats => print!("{}", render::cache_stats(&cache.stats()?)),
                CacheAction::Clear => {
                    let n = cache.clear()?;
                    println!("removed {n} entries from {}", cache.path().display());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Eval(args) => {
            let cfg = config::resolve(*args)?;
            let summary = engine::run(&cfg)?;
            match cfg.format {
                OutputFormat::Table => print!("{}", render::summary_table(&summary)),
                OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&summary)?),
            }
            eprintln!("run directory: {}", cfg.out.display());
            if let Some(export) = cfg.judged.as_ref().and_then(|j| j.export.as_ref()) {
                export.finish(&cfg.out)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Batch(args) => match args.action {
            BatchAction::Import { file, out, cache } => {
                batch::import(&file, &out, cache)?;
                Ok(ExitCode::SUCCESS)
            }
        },
        Command::Merge(args) => {
            merge::merge(&args.dirs, &args.out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
