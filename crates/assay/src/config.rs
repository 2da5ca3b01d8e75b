//! Turns the parsed command line into an [`assay_config::EvalConfig`] and
//! the [`Finish`] of `assay-run`; the resolution (metrics, models,
//! limits) and the run are the libraries'.

use crate::cli::{EvalArgs, JudgeArgs, OutputFormat};
use crate::flags::Flags;
use anyhow::Result;
use assay_config::file::ConfigFile;
use assay_config::options::Declared;
use assay_config::{EvalConfig, JudgeConfig};
use assay_run::Finish;
use std::path::Path;

pub use assay_config::{cache, UsageError};

/// `eval`'s flags as the library reads them: the run's configuration,
/// what to do once it has run, and how to show it.
pub struct Eval {
    pub config: EvalConfig,
    pub finish: Finish,
    pub format: OutputFormat,
}

pub fn eval(args: EvalArgs) -> Result<Eval> {
    let file = read(args.config.as_deref())?;
    let finish = Finish::from(over(&args.finish, file.as_ref())?);
    let config = EvalConfig {
        data: assay_core::Source::parse(&args.data),
        metrics: args.metrics,
        settings: args.settings,
        options: over(&args.options, file.as_ref())?,
        judge: over(&args.judge, file.as_ref())?,
    };
    Ok(Eval {
        config,
        finish,
        format: args.format,
    })
}

/// The judge flags as the library names them, over the options of
/// `--config FILE` where one is given.
pub fn judge_config(args: &JudgeArgs, config: Option<&Path>) -> Result<JudgeConfig> {
    over(args, read(config)?.as_ref())
}

/// `--config FILE`, read and checked.
fn read(config: Option<&Path>) -> Result<Option<ConfigFile>> {
    Ok(config.map(ConfigFile::read).transpose()?)
}

/// The flags given over the file's options, or over the defaults.
fn over<C: Declared + Clone>(flags: &Flags<C>, file: Option<&ConfigFile>) -> Result<C> {
    match file {
        None => Ok(flags.config.clone()),
        Some(file) => Ok(flags.over(file.options()?).map_err(UsageError::general)?),
    }
}
