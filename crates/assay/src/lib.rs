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
mod flags;
mod generate;
mod interrupt;
mod progress;
mod render;

use assay_calibrate::calibrate::{CalibrateOptions, Data};

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
                    .is_some_and(assay_calibrate::Error::is_usage)
                || e.downcast_ref::<assay_run::Error>()
                    .is_some_and(assay_run::Error::is_usage);
            let judge_unavailable = matches!(
                e.downcast_ref::<assay_engine::EngineError>(),
                Some(assay_engine::EngineError::JudgeUnavailable { .. })
            ) || matches!(
                e.downcast_ref::<assay_run::Error>(),
                Some(assay_run::Error::Engine(
                    assay_engine::EngineError::JudgeUnavailable { .. }
                ))
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
        Command::Eval(args) => {
            let config::Eval {
                config,
                finish,
                format,
            } = config::eval(*args)?;
            let cancel = assay_engine::CancelToken::new();
            interrupt::cancel_on_ctrl_c(&cancel)?;
            let done =
                assay_run::evaluate(config, &finish, &mut progress::Progress::new(), &cancel)?;
            match format {
                OutputFormat::Table => {
                    print!("{}", render::summary_table(&done.summary));
                    if let Some(line) = &done.calibrated {
                        println!("\n{line}");
                    }
                    print!("{}", render::gate_lines(&done.gates));
                }
                OutputFormat::Json => {
                    println!("{}", serde_json::to_string_pretty(&done.summary)?);
                    eprint!("{}", render::gate_lines(&done.gates));
                }
            }
            for line in &done.unscored {
                eprintln!("{line}");
            }
            eprintln!("run directory: {}", done.out.display());
            if !done.summary.complete {
                eprintln!(
                    "interrupted: the summary above covers what is done; resume with the same command"
                );
            }
            if let Some(note) = &done.export {
                eprintln!("{note}");
            }
            if let Some(path) = &done.report {
                eprintln!("report: {}", path.display());
            }
            Ok(done.exit_code())
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
            let path = args.out.join(assay_engine::rundir::SUMMARY);
            let summary: assay_engine::RunSummary =
                serde_json::from_str(&std::fs::read_to_string(&path)?)?;
            let unscored = assay_run::unscored(&summary, &args.out);
            for line in &unscored {
                eprintln!("{line}");
            }
            Ok(if unscored.is_empty() { 0 } else { 5 })
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
        Command::Generate(args) => generate::generate(*args),
        Command::Prompts(args) => match args.action {
            cli::PromptsAction::Adapt(args) => adapt_prompts(*args),
        },
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
                judge: config::judge_config(&args.judged.judge, args.judged.config.as_deref())?,
                threads: args.judged.threads,
            };
            let cancel = assay_engine::CancelToken::new();
            interrupt::cancel_on_ctrl_c(&cancel)?;
            let done = assay_calibrate::calibrate::calibrate(
                &options,
                &mut progress::Progress::new(),
                &cancel,
            )?;
            eprintln!("run directory: {}", done.dir.display());
            match args.judged.format {
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
/// `assay prompts adapt`: 0 when every prompt was translated, 1 when some
/// was not (each named on stderr).
fn adapt_prompts(args: cli::AdaptArgs) -> anyhow::Result<u8> {
    use assay_metrics::judged::prompt::{PromptId, PromptSet};
    let named = args.judge.config.language.clone().ok_or_else(|| {
        config::UsageError::general("--language: which language to translate the prompts into")
    })?;
    let language = assay_grounding::language::english_name(&named).ok_or_else(|| {
        config::UsageError::general(format!(
            "--language: {named}: not a language assay knows (give its English name, or its ISO 639-1 or 639-3 code)"
        ))
    })?;
    let ids: Vec<PromptId> = if args.only.is_empty() {
        PromptId::all().collect()
    } else {
        args.only
            .iter()
            .map(|name| {
                name.parse::<PromptId>()
                    .map_err(|e| config::UsageError::general(format!("--only: {e}")))
            })
            .collect::<Result<_, _>>()?
    };
    let threads = assay_config::threads(args.threads)?;
    // Here the language is the prompts', not the rows' of a run.
    let judge = assay_config::JudgeConfig {
        language: None,
        ..config::judge_config(&args.judge, None)?
    };
    let run = assay_config::judged_run(Vec::new(), PromptSet::builtin()?, &judge, threads)?;
    let done = assay_engine::adapt::adapt_prompts(
        &run.judge,
        args.judge.config.prompts.as_deref(),
        &ids,
        language,
        &args.out,
    )?;
    for (id, why) in &done.failed {
        eprintln!("not translated: {id}: {why}");
    }
    println!(
        "translated {} of {} prompts into {language}: {} (originals in {}/); use it with --prompts",
        done.written.len(),
        ids.len(),
        done.out.display(),
        assay_engine::adapt::ORIGINALS
    );
    Ok(if done.failed.is_empty() { 0 } else { 1 })
}

fn labelled_data(set: Option<String>, data: Option<std::path::PathBuf>) -> anyhow::Result<Data> {
    match (set, data) {
        (Some(name), None) => Ok(Data::Set(name)),
        (None, Some(path)) => Ok(Data::File(path)),
        _ => Err(config::UsageError::general("give one of --set NAME or --data FILE").into()),
    }
}
