//! `assay`: parse flags, resolve them into a run, run it, render it (the
//! command line as a library, so that the Python package can ship it).
//!
//! Exit codes: 0 success; 2 bad usage or input (unknown metric, bad
//! parameter, unreadable file, a bad row under `--strict`, judged metrics
//! without `--judge`, a gate on an unknown output or in the wrong
//! direction, an unreadable run directory given to `compare`); 3 an
//! internal or output error (e.g. the run directory cannot be written); 4
//! the judge cannot serve the run, so it stopped at once: it refused the
//! credentials, or it answered nothing and failed in a way no retry fixes
//! (connection refused, unknown host, TLS, unknown model; what is done is
//! kept: the same command resumes); 1 a CI gate failed (`--fail-under`,
//! `--fail-over`, `--max-failed-fraction`); 130 interrupted by Ctrl-C
//! (what is done is kept: the same command resumes). The first that
//! applies wins, in that order: gates are only checked on a run that
//! finished without error or interruption. A run directory held by
//! another assay process is a usage error (2).
//!
//! The run itself is the `assay-engine` library's, calibration the
//! `assay-calibrate` library's, reports, comparisons and gates the
//! `assay-report` library's; this binary parses flags, calls them and
//! renders.

mod cli;
mod config;
mod interrupt;
mod progress;
mod render;

use assay_calibrate::calibrate::{CalibrateOptions, Data};
use assay_calibrate::correct;
use assay_report::gates::{self, Condition};
use assay_report::{compare, html as report};

use clap::Parser;
use cli::{BatchAction, CacheAction, Cli, Command, OutputFormat};

/// Runs the command line `args` (the program name first) and returns its
/// exit code: what `assay`'s `main` and the Python package's `assay`
/// command both call.
pub fn main_with<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            let usage = e.downcast_ref::<config::UsageError>().is_some()
                || e.downcast_ref::<assay_engine::EngineError>()
                    .is_some_and(assay_engine::EngineError::is_usage)
                || e.downcast_ref::<assay_report::Error>()
                    .is_some_and(assay_report::Error::is_usage)
                || e.downcast_ref::<assay_calibrate::Error>()
                    .is_some_and(assay_calibrate::Error::is_usage);
            let judge_unavailable = matches!(
                e.downcast_ref::<assay_engine::EngineError>(),
                Some(assay_engine::EngineError::JudgeUnavailable { .. })
            );
            if usage {
                2
            } else if judge_unavailable {
                4
            } else {
                3
            }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Metrics(args) => {
            match args.format {
                OutputFormat::Table => print!("{}", render::metrics_table()),
                OutputFormat::Json => {
                    println!("{}", serde_json::to_string_pretty(&render::metrics_json())?)
                }
            }
            Ok(0)
        }
        Command::Cache(args) => {
            let location = args.cache.map_or(
                assay_llm::CacheLocation::Default,
                assay_llm::CacheLocation::Path,
            );
            let Some(cache) = config::cache(location)? else {
                return Ok(0);
            };
            match args.action {
                CacheAction::Stats => print!("{}", render::cache_stats(&cache.stats()?)),
                CacheAction::Clear => {
                    let n = cache.clear()?;
                    println!("removed {n} entries from {}", cache.path().display());
                }
            }
            Ok(0)
        }
        Command::Eval(mut args) => {
            let with_report = args.report;
            let gate_args = std::mem::take(&mut args.gates);
            let calibration = args
                .calibration
                .as_deref()
                .map(correct::Calibration::load)
                .transpose()?;
            if let Some(c) = &calibration {
                c.check(&args.metrics)?;
            }
            let config::Eval {
                options: cfg,
                format,
            } = config::resolve(*args)?;
            let conditions = gate_args
                .fail_under
                .iter()
                .map(|raw| Condition::fail_under(raw))
                .chain(
                    gate_args
                        .fail_over
                        .iter()
                        .map(|raw| Condition::fail_over(raw)),
                )
                .collect::<Result<Vec<_>, _>>()?;
            let gates =
                gates::Gates::resolve(&conditions, gate_args.max_failed_fraction, &cfg.outputs())?;
            let cancel = assay_engine::CancelToken::new();
            interrupt::cancel_on_ctrl_c(&cancel)?;
            let summary =
                assay_engine::run_blocking(&cfg, &mut progress::Progress::new(), &cancel)?;
            // An interrupted run is judged when it is finished, not before.
            let verdicts = if summary.complete {
                gates.check(&summary)
            } else {
                Vec::new()
            };
            let corrected = calibration.map(|c| c.apply(&cfg.out)).transpose()?;
            match format {
                OutputFormat::Table => {
                    print!("{}", render::summary_table(&summary));
                    if let Some(c) = &corrected {
                        println!("\n{}", c.line);
                    }
                    print!("{}", render::gate_lines(&verdicts));
                }
                OutputFormat::Json => {
                    let mut v = serde_json::to_value(&summary)?;
                    if let Some(c) = corrected {
                        v["calibrated"] = c.json;
                    }
                    println!("{}", serde_json::to_string_pretty(&v)?);
                    eprint!("{}", render::gate_lines(&verdicts));
                }
            }
            eprintln!("run directory: {}", cfg.out.display());
            if !summary.complete {
                eprintln!(
                    "interrupted: the summary above covers what is done; resume with the same command"
                );
                return Ok(130);
            }
            if let Some(export) = cfg.judged.as_ref().and_then(|j| j.export.as_ref()) {
                eprintln!("{}", export.finish(&cfg.out)?);
            }
            if with_report {
                let path = report::write(&cfg.out, cfg.input_format)?;
                eprintln!("report: {}", path.display());
            }
            if verdicts.iter().any(|v| v.verdict == gates::Verdict::Failed) {
                return Ok(1);
            }
            Ok(0)
        }
        Command::Report(args) => {
            let path = report::write(&args.dir, args.input_format)?;
            eprintln!("report: {}", path.display());
            Ok(0)
        }
        Command::Compare(args) => {
            let comparison = compare::compare(&args.a, &args.b, args.top)?;
            for w in &comparison.warnings {
                eprintln!("warning: {w}");
            }
            match args.format {
                OutputFormat::Table => print!("{}", render::compare_table(&comparison)),
                OutputFormat::Json => {
                    println!("{}", serde_json::to_string_pretty(&comparison)?)
                }
            }
            Ok(0)
        }
        Command::Batch(args) => match args.action {
            BatchAction::Import { file, out, cache } => {
                print!("{}", assay_engine::batch::import(&file, &out, cache)?);
                Ok(0)
            }
        },
        Command::Merge(args) => {
            eprintln!(
                "{}",
                assay_engine::merge::merge(&args.dirs, &args.out, args.input.as_deref())?
            );
            Ok(0)
        }
        Command::Align(args) => {
            let data = labelled_data(args.set, args.data)?;
            let done = assay_calibrate::align::align(&assay_calibrate::align::AlignOptions {
                data,
                labels: args.labels,
                true_means_supported: args.true_means == Some(cli::TrueMeans::Supported),
                out: args.out,
            })?;
            match args.format {
                OutputFormat::Json => println!("{}", done.alignment.to_json()),
                OutputFormat::Table => print!("{}", render::alignment(&done.alignment)),
            }
            eprintln!("alignment file: {}", done.path.display());
            Ok(0)
        }
        Command::Calibrate(args) => {
            let data = labelled_data(args.set, args.data)?;
            let options = CalibrateOptions {
                metric: args.metric,
                data,
                labels: args.labels,
                high_score_means: args
                    .high_score_means
                    .map(|h| h == cli::HighScoreMeans::True),
                task: args.task,
                limit: args.limit,
                offset: args.offset,
                out: args.out,
                judge: config::judge_config(&args.judge),
                threads: args.threads,
            };
            let cancel = assay_engine::CancelToken::new();
            interrupt::cancel_on_ctrl_c(&cancel)?;
            let done = assay_calibrate::calibrate::calibrate(
                &options,
                &mut progress::Progress::new(),
                &cancel,
            )?;
            eprintln!("run directory: {}", done.dir.display());
            match args.format {
                OutputFormat::Json => {
                    println!("{}", serde_json::to_string_pretty(&done.doc)?)
                }
                OutputFormat::Table => {
                    print!("{}{}", done.heading(), render::align(&done.table))
                }
            }
            Ok(0)
        }
    }
}

/// The labelled rows `calibrate` and `align` read: a built-in set or a
/// file, exactly one.
fn labelled_data(set: Option<String>, data: Option<std::path::PathBuf>) -> anyhow::Result<Data> {
    match (set, data) {
        (Some(name), None) => Ok(Data::Set(name)),
        (None, Some(path)) => Ok(Data::File(path)),
        _ => Err(config::UsageError::general("give one of --set NAME or --data FILE").into()),
    }
}
