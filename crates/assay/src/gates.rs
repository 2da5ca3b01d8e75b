//! CI gates: `--fail-under METRIC=VALUE`, `--fail-over METRIC=VALUE` and
//! `--max-failed-fraction F`, resolved against the run's outputs before it
//! starts (so a typo costs no judge calls) and checked against its summary
//! once it is written.

use crate::cli::GateArgs;
use crate::config::UsageError;
use anyhow::Result;
use assay_engine::{OutputName, RunOptions, RunSummary};
use assay_metrics::Direction;

/// Which side of a threshold fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    /// `--fail-under`: a mean below the value fails.
    Under,
    /// `--fail-over`: a mean above the value fails.
    Over,
}

impl Bound {
    fn flag(self) -> &'static str {
        match self {
            Bound::Under => "--fail-under",
            Bound::Over => "--fail-over",
        }
    }

    /// The direction of the metrics this bound makes sense for.
    fn direction(self) -> Direction {
        match self {
            Bound::Under => Direction::HigherIsBetter,
            Bound::Over => Direction::LowerIsBetter,
        }
    }
}

/// One threshold on one output's mean.
#[derive(Debug)]
struct Threshold {
    output: String,
    bound: Bound,
    value: f64,
    /// The value as typed, for the report line.
    typed: String,
}

/// The gates of a run, resolved against its outputs.
#[derive(Debug)]
pub struct Gates {
    thresholds: Vec<Threshold>,
    /// Per output: failed outcomes over all its outcomes.
    max_failed_fraction: Option<f64>,
}

/// Whether a gate held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Failed,
}

/// One gate's verdict and its one-line reason.
#[derive(Debug)]
pub struct GateResult {
    pub verdict: Verdict,
    pub line: String,
}

impl Gates {
    /// Parses the gate flags and checks every named output exists in the
    /// run and that its direction suits the flag: a [`UsageError`] (exit
    /// code 2) otherwise.
    pub fn resolve(args: &GateArgs, options: &RunOptions) -> Result<Gates> {
        let outputs = options.outputs();
        let mut thresholds = Vec::new();
        let flags = args
            .fail_under
            .iter()
            .map(|raw| (Bound::Under, raw))
            .chain(args.fail_over.iter().map(|raw| (Bound::Over, raw)));
        for (bound, raw) in flags {
            thresholds.push(threshold(bound, raw, &outputs).map_err(UsageError)?);
        }
        if let Some(f) = args.max_failed_fraction {
            if !(0.0..=1.0).contains(&f) {
                return Err(UsageError(format!(
                    "--max-failed-fraction {f}: expected a fraction from 0 to 1"
                ))
                .into());
            }
        }
        Ok(Gates {
            thresholds,
            max_failed_fraction: args.max_failed_fraction,
        })
    }

    /// Checks every gate against the run's summary, in the order given:
    /// thresholds, then the failed fraction.
    pub fn check(&self, summary: &RunSummary) -> Vec<GateResult> {
        let mut results: Vec<GateResult> = self
            .thresholds
            .iter()
            .map(|t| {
                let mean = summary
                    .outputs
                    .iter()
                    .find(|o| o.name == t.output)
                    .and_then(|o| o.summary.stats.as_ref())
                    .map(|s| s.mean);
                check_threshold(t, mean)
            })
            .collect();
        if let Some(max) = self.max_failed_fraction {
            let fractions = summary.outputs.iter().map(|o| {
                let s = &o.summary;
                let total = s.n_scored + s.n_skipped + s.n_failed;
                let fraction = if total == 0 {
                    0.0
                } else {
                    s.n_failed as f64 / total as f64
                };
                (o.name.as_str(), s.n_failed, total, fraction)
            });
            let mut worst: Option<(&str, f64)> = None;
            let mut any_failed = false;
            for (name, failed, total, fraction) in fractions {
                if fraction > max {
                    any_failed = true;
                    results.push(GateResult {
                        verdict: Verdict::Failed,
                        line: format!(
                            "gate failed: {name} failed {failed} of {total} outcomes ({fraction:.4} > {max})"
                        ),
                    });
                }
                if worst.is_none_or(|(_, w)| fraction > w) {
                    worst = Some((name, fraction));
                }
            }
            if !any_failed {
                let highest = worst.map_or(String::new(), |(name, f)| {
                    format!(" (highest: {name} {f:.4})")
                });
                results.push(GateResult {
                    verdict: Verdict::Passed,
                    line: format!(
                        "gate passed: failed fraction at most {max} for every output{highest}"
                    ),
                });
            }
        }
        results
    }
}

fn check_threshold(t: &Threshold, mean: Option<f64>) -> GateResult {
    let Some(mean) = mean else {
        return GateResult {
            verdict: Verdict::Failed,
            line: format!(
                "gate failed: {} has no scored sample, so no mean to hold to {} {}",
                t.output,
                t.bound.flag(),
                t.typed
            ),
        };
    };
    let (failed, op_failed, op_passed) = match t.bound {
        Bound::Under => (mean < t.value, "<", ">="),
        Bound::Over => (mean > t.value, ">", "<="),
    };
    let (verdict, word, op) = if failed {
        (Verdict::Failed, "failed", op_failed)
    } else {
        (Verdict::Passed, "passed", op_passed)
    };
    GateResult {
        verdict,
        line: format!("gate {word}: {} mean {mean:.4} {op} {}", t.output, t.typed),
    }
}

/// Parses `METRIC=VALUE` and finds the output it names.
fn threshold(bound: Bound, raw: &str, outputs: &[OutputName]) -> Result<Threshold, String> {
    let flag = bound.flag();
    let (name, typed) = raw
        .split_once('=')
        .ok_or_else(|| format!("{flag} {raw}: expected METRIC=VALUE, e.g. {flag} rouge1=0.4"))?;
    let value: f64 = typed
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("{flag} {raw}: '{typed}' is not a number"))?;
    let by_output = outputs.iter().find(|o| o.name == name);
    let of_metric: Vec<_> = outputs.iter().filter(|o| o.metric == name).collect();
    let OutputName {
        name: output,
        direction,
        ..
    } = match (by_output, of_metric.as_slice()) {
        (Some(o), _) => o,
        (None, [o]) => *o,
        (None, []) => {
            let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
            return Err(format!(
                "{flag} {raw}: '{name}' is not an output of this run (outputs: {})",
                names.join(", ")
            ));
        }
        (None, several) => {
            let names: Vec<&str> = several.iter().map(|o| o.name.as_str()).collect();
            return Err(format!(
                "{flag} {raw}: metric '{name}' has several outputs ({}); name one",
                names.join(", ")
            ));
        }
    };
    if *direction != bound.direction() {
        let other = match bound {
            Bound::Under => Bound::Over,
            Bound::Over => Bound::Under,
        };
        return Err(format!(
            "{flag} {raw}: {output} is {}, so use {} {output}={typed}",
            match direction {
                Direction::HigherIsBetter => "higher-is-better",
                Direction::LowerIsBetter => "lower-is-better",
            },
            other.flag()
        ));
    }
    Ok(Threshold {
        output: output.clone(),
        bound,
        value,
        typed: typed.trim().to_string(),
    })
}
