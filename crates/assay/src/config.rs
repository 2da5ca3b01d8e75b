//! Turns the parsed command line into an [`assay_config::EvalConfig`] and
//! the [`Finish`] of `assay-run`; the resolution (metrics, models,
//! limits) and the run are the libraries'.

use crate::cli::{EvalArgs, JudgeArgs, OutputFormat};
use anyhow::Result;
use assay_config::{EvalConfig, JudgeConfig};
use assay_report::gates::Condition;
use assay_run::Finish;

pub use assay_config::{cache, UsageError};

/// `eval`'s flags as the library reads them: the run's configuration,
/// what to do once it has run, and how to show it.
pub struct Eval {
    pub config: EvalConfig,
    pub finish: Finish,
    pub format: OutputFormat,
}

pub fn eval(args: EvalArgs) -> Result<Eval> {
    let gates = &args.gates;
    let conditions = gates
        .fail_under
        .iter()
        .map(|raw| Condition::fail_under(raw))
        .chain(gates.fail_over.iter().map(|raw| Condition::fail_over(raw)))
        .collect::<Result<Vec<_>, _>>()?;
    let finish = Finish {
        conditions,
        max_failed_fraction: gates.max_failed_fraction,
        calibration: args.calibration.clone(),
        report: args.report,
    };
    let config = EvalConfig {
        data: assay_core::Source::parse(&args.data),
        metrics: args.metrics,
        settings: args.settings,
        options: args.options.0,
        judge: judge_config(&args.judge),
    };
    Ok(Eval {
        config,
        finish,
        format: args.format,
    })
}

/// The judge flags as the library names them.
pub fn judge_config(args: &JudgeArgs) -> JudgeConfig {
    args.0.clone()
}
