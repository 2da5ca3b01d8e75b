//! CI gates: a bound on an output's mean (`--fail-under METRIC=VALUE` and
//! `--fail-over METRIC=VALUE` on the command line, `{"OUTPUT": ">= 0.7"}`
//! in Python) and a bound on the failed fraction of every output. Resolved
//! against the run's outputs (before it starts on the command line, so a
//! typo costs no judge calls) and checked against its summary.
//!
//! ```
//! use assay_engine::OutputName;
//! use assay_metrics::Direction;
//! use assay_report::gates::{Condition, Gates};
//!
//! let outputs = [OutputName {
//!     name: "rouge1".into(),
//!     metric: "rouge".into(),
//!     direction: Direction::HigherIsBetter,
//! }];
//! let gates = Gates::resolve(&[Condition::parse("rouge1", ">= 0.4")?], None, &outputs)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::{Error, Result};
use assay_engine::{OutputName, RunSummary};
use assay_metrics::Direction;

/// How a mean must compare with a gate's value to pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `>=`, `--fail-under`.
    AtLeast,
    /// `>`.
    Above,
    /// `<=`, `--fail-over`.
    AtMost,
    /// `<`.
    Below,
}

impl Bound {
    const ALL: [Bound; 4] = [Bound::AtLeast, Bound::AtMost, Bound::Above, Bound::Below];

    fn symbol(self) -> &'static str {
        match self {
            Bound::AtLeast => ">=",
            Bound::Above => ">",
            Bound::AtMost => "<=",
            Bound::Below => "<",
        }
    }

    /// The symbol of the comparison that fails.
    fn negated(self) -> &'static str {
        match self {
            Bound::AtLeast => "<",
            Bound::Above => "<=",
            Bound::AtMost => ">",
            Bound::Below => ">=",
        }
    }

    fn holds(self, mean: f64, value: f64) -> bool {
        match self {
            Bound::AtLeast => mean >= value,
            Bound::Above => mean > value,
            Bound::AtMost => mean <= value,
            Bound::Below => mean < value,
        }
    }

    /// The direction of the metrics this bound makes sense for.
    fn direction(self) -> Direction {
        match self {
            Bound::AtLeast | Bound::Above => Direction::HigherIsBetter,
            Bound::AtMost | Bound::Below => Direction::LowerIsBetter,
        }
    }

    /// The same bound the other way round, for the error that suggests it.
    fn flipped(self) -> Bound {
        match self {
            Bound::AtLeast => Bound::AtMost,
            Bound::Above => Bound::Below,
            Bound::AtMost => Bound::AtLeast,
            Bound::Below => Bound::Above,
        }
    }
}

/// How the caller spelled a condition, so that errors and verdicts speak
/// in their words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spelling {
    /// `--fail-under NAME=VALUE` or `--fail-over NAME=VALUE`.
    Flag,
    /// `NAME: ">= VALUE"`.
    Comparison,
}

/// One bound on one output's (or single-output metric's) mean, parsed but
/// not yet resolved against a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    name: String,
    bound: Bound,
    value: f64,
    /// The value as typed, for the verdict's line.
    typed: String,
    spelling: Spelling,
}

impl Condition {
    /// `--fail-under NAME=VALUE`: the mean must be at least VALUE.
    pub fn fail_under(raw: &str) -> Result<Condition> {
        Condition::flag(Bound::AtLeast, raw)
    }

    /// `--fail-over NAME=VALUE`: the mean must be at most VALUE.
    pub fn fail_over(raw: &str) -> Result<Condition> {
        Condition::flag(Bound::AtMost, raw)
    }

    fn flag(bound: Bound, raw: &str) -> Result<Condition> {
        let flag = flag_of(bound);
        let (name, typed) = raw.split_once('=').ok_or_else(|| {
            Error::Usage(format!(
                "{flag} {raw}: expected METRIC=VALUE, e.g. {flag} rouge1=0.4"
            ))
        })?;
        let value = number(typed)
            .ok_or_else(|| Error::Usage(format!("{flag} {raw}: '{typed}' is not a number")))?;
        Ok(Condition {
            name: name.to_string(),
            bound,
            value,
            typed: typed.trim().to_string(),
            spelling: Spelling::Flag,
        })
    }

    /// A comparison such as `">= 0.7"`, `"> 0.5"`, `"<= 0.2"` or
    /// `"< 0.1"` on the output (or single-output metric) `name`.
    pub fn parse(name: &str, comparison: &str) -> Result<Condition> {
        let text = comparison.trim();
        let parsed = Bound::ALL.into_iter().find_map(|bound| {
            let rest = text.strip_prefix(bound.symbol())?;
            Some((bound, rest.trim(), number(rest)?))
        });
        let Some((bound, typed, value)) = parsed else {
            return Err(Error::Usage(format!(
                "gate {name}: {comparison:?}: expected '>= X', '> X', '<= X' or '< X'"
            )));
        };
        Ok(Condition {
            name: name.to_string(),
            bound,
            value,
            typed: typed.to_string(),
            spelling: Spelling::Comparison,
        })
    }

    /// The condition as its caller wrote it.
    fn spelled(&self) -> String {
        match self.spelling {
            Spelling::Flag => format!("{} {}={}", flag_of(self.bound), self.name, self.typed),
            Spelling::Comparison => {
                format!(
                    "gate {} '{} {}'",
                    self.name,
                    self.bound.symbol(),
                    self.typed
                )
            }
        }
    }

    /// The bound alone, as the caller wrote it: `--fail-under 0.4` or
    /// `'>= 0.4'`.
    fn bound_spelled(&self) -> String {
        match self.spelling {
            Spelling::Flag => format!("{} {}", flag_of(self.bound), self.typed),
            Spelling::Comparison => format!("'{} {}'", self.bound.symbol(), self.typed),
        }
    }

    /// The same condition with its bound flipped, spelled as the caller
    /// would write it.
    fn flipped(&self) -> String {
        let (name, typed, bound) = (&self.name, &self.typed, self.bound.flipped());
        match self.spelling {
            Spelling::Flag => format!("{} {name}={typed}", flag_of(bound)),
            Spelling::Comparison => format!("'{} {typed}'", bound.symbol()),
        }
    }
}

fn flag_of(bound: Bound) -> &'static str {
    match bound {
        Bound::AtLeast | Bound::Above => "--fail-under",
        Bound::AtMost | Bound::Below => "--fail-over",
    }
}

fn number(text: &str) -> Option<f64> {
    text.trim().parse().ok().filter(|v: &f64| v.is_finite())
}

/// A condition resolved to one output of the run.
#[derive(Debug)]
struct Threshold {
    output: String,
    condition: Condition,
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
    /// The output a threshold held to; none for the failed-fraction gate.
    pub output: Option<String>,
    pub line: String,
}

impl Gates {
    /// Checks that every condition names an output of the run (or a
    /// metric with one output) whose direction suits its bound, and that
    /// the failed fraction is a fraction: a usage [`Error`] otherwise.
    pub fn resolve(
        conditions: &[Condition],
        max_failed_fraction: Option<f64>,
        outputs: &[OutputName],
    ) -> Result<Gates> {
        let thresholds = conditions
            .iter()
            .map(|c| threshold(c, outputs))
            .collect::<Result<Vec<_>>>()?;
        if let Some(f) = max_failed_fraction {
            if !(0.0..=1.0).contains(&f) {
                return Err(Error::Usage(format!(
                    "--max-failed-fraction {f}: expected a fraction from 0 to 1"
                )));
            }
        }
        Ok(Gates {
            thresholds,
            max_failed_fraction,
        })
    }

    /// The outputs of a written summary, to resolve gates against after
    /// the run.
    pub fn outputs_of(summary: &RunSummary) -> Vec<OutputName> {
        summary
            .outputs
            .iter()
            .map(|o| OutputName {
                name: o.name.clone(),
                metric: o.metric.clone(),
                direction: o.direction,
            })
            .collect()
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
                        output: None,
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
                    output: None,
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
    let c = &t.condition;
    let output = Some(t.output.clone());
    let Some(mean) = mean else {
        return GateResult {
            verdict: Verdict::Failed,
            output,
            line: format!(
                "gate failed: {} has no scored sample, so no mean to hold to {}",
                t.output,
                c.bound_spelled()
            ),
        };
    };
    let (verdict, word, op) = if c.bound.holds(mean, c.value) {
        (Verdict::Passed, "passed", c.bound.symbol())
    } else {
        (Verdict::Failed, "failed", c.bound.negated())
    };
    GateResult {
        verdict,
        output,
        line: format!("gate {word}: {} mean {mean:.4} {op} {}", t.output, c.typed),
    }
}

/// Finds the output a condition names.
fn threshold(c: &Condition, outputs: &[OutputName]) -> Result<Threshold> {
    let (name, spelled) = (c.name.as_str(), c.spelled());
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
            return Err(Error::Usage(format!(
                "{spelled}: '{name}' is not an output of this run (outputs: {})",
                names.join(", ")
            )));
        }
        (None, several) => {
            let names: Vec<&str> = several.iter().map(|o| o.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "{spelled}: metric '{name}' has several outputs ({}); name one",
                names.join(", ")
            )));
        }
    };
    if *direction != c.bound.direction() {
        return Err(Error::Usage(format!(
            "{spelled}: {output} is {}, so use {}",
            match direction {
                Direction::HigherIsBetter => "higher-is-better",
                Direction::LowerIsBetter => "lower-is-better",
            },
            c.flipped()
        )));
    }
    Ok(Threshold {
        output: output.clone(),
        condition: c.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs() -> Vec<OutputName> {
        let out = |name: &str, metric: &str, direction| OutputName {
            name: name.into(),
            metric: metric.into(),
            direction,
        };
        vec![
            out("rouge1", "rouge", Direction::HigherIsBetter),
            out("rouge2", "rouge", Direction::HigherIsBetter),
            out("bias", "bias", Direction::LowerIsBetter),
        ]
    }

    #[test]
    fn a_comparison_parses_each_of_its_four_bounds() {
        let bound = |text: &str| Condition::parse("x", text).map(|c| (c.bound, c.value));
        assert_eq!(bound(">= 0.7").unwrap(), (Bound::AtLeast, 0.7));
        assert_eq!(bound(" > .5 ").unwrap(), (Bound::Above, 0.5));
        assert_eq!(bound("<=1e-1").unwrap(), (Bound::AtMost, 0.1));
        assert_eq!(bound("< 2").unwrap(), (Bound::Below, 2.0));
        for bad in ["at least 0.5", ">= x", "= 0.5", ">= inf", ""] {
            let e = bound(bad).unwrap_err().to_string();
            assert!(e.contains("expected '>= X'"), "{bad}: {e}");
        }
    }

    #[test]
    fn strict_and_loose_bounds_differ_only_at_the_value() {
        let gates = |text: &str| {
            Gates::resolve(
                &[Condition::parse("rouge1", text).unwrap()],
                None,
                &outputs(),
            )
            .unwrap()
        };
        let t = |text: &str, mean| check_threshold(&gates(text).thresholds[0], Some(mean));
        assert_eq!(t(">= 0.5", 0.5).verdict, Verdict::Passed);
        let strict = t("> 0.5", 0.5);
        assert_eq!(strict.verdict, Verdict::Failed);
        assert_eq!(strict.line, "gate failed: rouge1 mean 0.5000 <= 0.5");
        assert_eq!(t("> 0.5", 0.51).verdict, Verdict::Passed);
    }

    #[test]
    fn a_gate_against_its_metric_s_direction_names_the_bound_to_use() {
        let e = Gates::resolve(
            &[Condition::parse("bias", ">= 0.2").unwrap()],
            None,
            &outputs(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "gate bias '>= 0.2': bias is lower-is-better, so use '<= 0.2'"
        );
        let e = Gates::resolve(
            &[Condition::fail_under("bias=0.2").unwrap()],
            None,
            &outputs(),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--fail-under bias=0.2: bias is lower-is-better, so use --fail-over bias=0.2"
        );
        assert!(e.is_usage());
    }

    #[test]
    fn a_metric_with_several_outputs_must_name_one() {
        let e = Gates::resolve(
            &[Condition::parse("rouge", ">= 0.2").unwrap()],
            None,
            &outputs(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("has several outputs (rouge1, rouge2)"), "{e}");
        let e = Gates::resolve(
            &[Condition::parse("bleu", ">= 0.2").unwrap()],
            None,
            &outputs(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("'bleu' is not an output of this run"), "{e}");
    }
}
