//! `assay`: parse flags, resolve them into a run, run it, render it.
//!
//! Exit codes: 0 success; 2 bad usage or input (unknown metric, bad
//! parameter, unreadable file, a bad row under `--strict`); 3 an internal or
//! output error (e.g. the run directory cannot be written).

mod cli;
mod config;
mod engine;
mod progress;
mod render;
mod rundir;

use clap::Parser;
use cli::{Cli, Command, OutputFormat};
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
        Command::Eval(args) => {
            let cfg = config::resolve(args)?;
            let summary = engine::run(&cfg)?;
            match cfg.format {
                OutputFormat::Table => print!("{}", render::summary_table(&summary)),
                OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&summary)?),
            }
            eprintln!("run directory: {}", cfg.out.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}
