//! `assay`: parse flags, resolve them into a run, run it, render it.
//!
//! Exit codes: 0 success; 2 bad usage or input (unknown metric, bad
//! parameter, unreadable file, a bad row under `--strict`, judged metrics
//! without `--judge`); 3 an internal or output error (e.g. the run
//! directory cannot be written), or a run stopped because the judge refused
//! the credentials (`auth`: every later call would fail the same way).

mod calibrate;
mod cli;
mod config;
mod correct;
mod engine;
mod judging;
mod progress;
mod render;
mod rundir;

use clap::Parser;
use cli::{CacheAction, Cli, Command, OutputFormat};
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
            let calibration = args
                .calibration
                .as_deref()
                .map(correct::Calibration::load)
                .transpose()?;
            if let Some(c) = &calibration {
                c.check(&args.metrics)?;
            }
            let cfg = config::resolve(*args)?;
            let summary = engine::run(&cfg)?;
            let corrected = calibration.map(|c| c.apply(&cfg.out)).transpose()?;
            match cfg.format {
                OutputFormat::Table => {
                    print!("{}", render::summary_table(&summary));
                    if let Some(c) = &corrected {
                        println!("\n{}", c.line);
                    }
                }
                OutputFormat::Json => {
                    let mut v = serde_json::to_value(&summary)?;
                    if let Some(c) = corrected {
                        v["calibrated"] = c.json;
                    }
                    println!("{}", serde_json::to_string_pretty(&v)?)
                }
            }
            eprintln!("run directory: {}", cfg.out.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Calibrate(args) => {
            print!("{}", calibrate::run(*args)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
