//! Turns the parsed command line into an [`assay_config::EvalConfig`] and
//! the [`Finish`] of `assay-run`; the resolution (metrics, models,
//! limits) and the run are the libraries'.

use crate::cli::{BatchMode, EvalArgs, JudgeArgs, OutputFormat};
use anyhow::Result;
use assay_config::{EvalConfig, JudgeConfig};
use assay_llm::CacheLocation;
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
        judge: judge_config(&args.judge),
        data: assay_core::Source::parse(&args.data),
        metrics: args.metrics,
        settings: args.settings,
        out: args.out,
        input_format: args.input_format,
        references: args.references,
        logs: args.logs,
        stitch: if args.no_stitch {
            assay_core::Stitch::Off
        } else {
            assay_core::Stitch::On
        },
        strict: args.strict,
        threads: args.threads,
        force_new: args.force_new,
        shard: args.shard,
    };
    Ok(Eval {
        config,
        finish,
        format: args.format,
    })
}

/// The judge flags as the library names them.
pub fn judge_config(args: &JudgeArgs) -> JudgeConfig {
    JudgeConfig {
        judge: args.judge.clone(),
        embedder: args.embedder.clone(),
        base_url: args.base_url.clone(),
        api_key: None,
        concurrency: args.concurrency,
        rpm: args.rpm,
        tpm: args.tpm,
        max_retries: args.max_retries,
        timeout: args.timeout,
        cache: if args.no_cache {
            CacheLocation::Disabled
        } else {
            args.cache
                .clone()
                .map_or(CacheLocation::Default, CacheLocation::Path)
        },
        prompts: args.prompts.clone(),
        prices: args.prices.clone(),
        repeats: args.repeats,
        batch_export: args.batch == Some(BatchMode::Export),
        reasons: args.reasons.into(),
        protocol: args.protocol,
        grounding: args.grounding.clone(),
        grounding_label: args.grounding_label.clone(),
        alignment: args.alignment.clone(),
        language: args.language.clone(),
    }
}
