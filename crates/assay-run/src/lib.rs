//! One evaluation, end to end (and a test set's generation:
//! [`generate`]): [`evaluate`] resolves an
//! [`EvalConfig`], runs it, and finishes the run directory the way
//! `assay eval` does, for the command line and Python's
//! `assay.evaluate` alike: the gates checked against the finished run,
//! the prevalence corrected with a judge calibration, a batch export's
//! requests written, and the HTML report. Nothing is printed: the
//! caller shows the [`Evaluated`] it gets back.

pub mod generate;

use assay_calibrate::correct::Calibration;
use assay_config::EvalConfig;
use assay_core::visit_results;
use assay_engine::log::OutputSummary;
use assay_engine::{CancelToken, Observer, RunSummary};
use assay_report::gates::{Condition, GateResult, Gates, Verdict};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What is done with a run once it has run.
#[derive(Clone, Debug, Default)]
pub struct Finish {
    /// Bounds on outputs' means (`--fail-under`, `--fail-over`), checked
    /// once the run is complete.
    pub conditions: Vec<Condition>,
    /// The largest share of failed outcomes an output may have.
    pub max_failed_fraction: Option<f64>,
    /// A judge calibration (`assay calibrate`'s `calibration.json`)
    /// whose correction is applied to its metric's prevalence.
    pub calibration: Option<PathBuf>,
    /// Write the HTML report into the run directory.
    pub report: bool,
}

impl From<assay_config::FinishOptions> for Finish {
    /// The declared options' finish: the bounds of `--fail-under` and
    /// then of `--fail-over`.
    fn from(o: assay_config::FinishOptions) -> Finish {
        Finish {
            conditions: o.fail_under.0.into_iter().chain(o.fail_over.0).collect(),
            max_failed_fraction: o.max_failed_fraction,
            calibration: o.calibration,
            report: o.report,
        }
    }
}

/// A run and what finishing it gave.
#[derive(Debug)]
pub struct Evaluated {
    /// The run's summary, with the corrected prevalence in
    /// `calibrated` where a calibration was given.
    pub summary: RunSummary,
    pub out: PathBuf,
    /// Each gate's verdict; none while the run is interrupted (a run is
    /// judged when it is finished, not before).
    pub gates: Vec<GateResult>,
    /// The calibration's correction in words, for the summary table.
    pub calibrated: Option<String>,
    /// What the batch export wrote, where the run exports its requests.
    pub export: Option<String>,
    /// The HTML report written.
    pub report: Option<PathBuf>,
    /// One line per output of a finished run that has outcomes but
    /// scored none (every one skipped or failed), with the first row's reason: a
    /// run that measured nothing must not pass for one that did. Empty
    /// for a batch export, whose judged outcomes come later.
    pub unscored: Vec<String>,
}

impl Evaluated {
    /// Whether some gate failed.
    pub fn failed_gate(&self) -> bool {
        self.gates.iter().any(|g| g.verdict == Verdict::Failed)
    }

    /// The command line's exit code: 130 while interrupted, 1 when a gate
    /// failed, 5 when an output scored nothing, else 0.
    pub fn exit_code(&self) -> u8 {
        if !self.summary.complete {
            130
        } else if self.failed_gate() {
            1
        } else if !self.unscored.is_empty() {
            5
        } else {
            0
        }
    }
}

/// Why an evaluation could not be made or finished.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] assay_config::UsageError),
    #[error(transparent)]
    Engine(#[from] assay_engine::EngineError),
    #[error(transparent)]
    Calibration(#[from] assay_calibrate::Error),
    #[error(transparent)]
    Report(#[from] assay_report::Error),
}

impl Error {
    /// Whether the caller's input is at fault (exit code 2 on the command
    /// line) rather than the machine.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Config(_) => true,
            Error::Engine(e) => e.is_usage(),
            Error::Calibration(e) => e.is_usage(),
            Error::Report(e) => e.is_usage(),
        }
    }
}

/// Resolves `config`, checks what `finish` asks against it before any
/// row is read (a gate on an output the run lacks, a calibration of
/// another metric), runs it, and finishes the run directory.
pub fn evaluate(
    config: EvalConfig,
    finish: &Finish,
    observer: &mut dyn Observer,
    cancel: &CancelToken,
) -> Result<Evaluated, Error> {
    let calibration = finish
        .calibration
        .as_deref()
        .map(Calibration::load)
        .transpose()?;
    if let Some(c) = &calibration {
        c.check(&config.metrics)?;
    }
    let options = assay_config::resolve(config)?;
    let gates = Gates::resolve(
        &finish.conditions,
        finish.max_failed_fraction,
        &options.outputs(),
    )?;
    let mut summary = assay_engine::run_blocking(&options, observer, cancel)?;
    let mut calibrated = None;
    if let Some(c) = calibration {
        let corrected = c.apply(&options.out)?;
        summary.calibrated = Some(corrected.json);
        calibrated = Some(corrected.line);
    }
    let (mut checked, mut export, mut report) = (Vec::new(), None, None);
    let mut unscored = Vec::new();
    if summary.complete {
        checked = gates.check(&summary);
        if let Some(e) = options.judged.as_ref().and_then(|j| j.export.as_ref()) {
            export = Some(e.finish(&options.out)?);
        } else {
            unscored = self::unscored(&summary, &options.out);
        }
        if finish.report {
            report = Some(assay_report::html::write(
                &options.out,
                options.input_format,
            )?);
        }
    }
    Ok(Evaluated {
        summary,
        out: options.out.clone(),
        gates: checked,
        calibrated,
        export,
        report,
        unscored,
    })
}

/// A line for each output of `summary` (of the run directory `out`) that
/// has outcomes but scored none, naming what its first outcome says went
/// wrong: [`Evaluated::unscored`], and the same for a merged run.
pub fn unscored(summary: &RunSummary, out: &Path) -> Vec<String> {
    let empty: Vec<&OutputSummary> = summary
        .outputs
        .iter()
        // A shard may be given no row at all: that is not a failure.
        .filter(|o| o.summary.n_scored == 0 && o.summary.n_skipped + o.summary.n_failed > 0)
        .collect();
    if empty.is_empty() {
        return Vec::new();
    }
    let mut first: BTreeMap<String, String> = BTreeMap::new();
    // The reasons are a courtesy: a results file that cannot be read
    // leaves the counts, which the summary holds.
    let _ = visit_results(&out.join(assay_engine::rundir::RESULTS), |r| {
        let why = match (&r.reason, &r.error) {
            (Some(reason), _) => reason.clone(),
            (None, Some(e)) => e.message.clone(),
            (None, None) => return,
        };
        first
            .entry(r.metric.clone())
            .or_insert_with(|| format!("row {}: {why}", r.row));
    });
    empty
        .into_iter()
        .map(|o| {
            let s = &o.summary;
            let mut line = format!(
                "nothing scored: {}: {} skipped, {} failed",
                o.name, s.n_skipped, s.n_failed
            );
            if let Some(why) = first.get(&o.name) {
                line.push_str(&format!(" (first, {why})"));
            }
            line
        })
        .collect()
}
