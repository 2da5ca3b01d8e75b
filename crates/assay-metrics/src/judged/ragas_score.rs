//! `ragas_score` (seed 002): in the run summary, the harmonic mean of the
//! means of the run's higher-is-better metrics (at least two).
//! Lower-is-better metrics are left out (a harmonic mean of "good" and
//! "bad" directions means nothing). A mean of 0 makes the score 0.

use crate::spec::Direction;

/// One metric's mean over the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MetricMean<'a> {
    pub name: &'a str,
    pub mean: f64,
    pub direction: Direction,
}

/// The score and the metrics it used.
#[derive(Clone, Debug, PartialEq)]
pub struct RagasScore {
    pub value: f64,
    pub metrics: Vec<String>,
}

/// Why there is no ragas score.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RagasScoreError {
    #[error("ragas_score needs at least two higher-is-better metrics, the run has {0}")]
    TooFew(usize),
    #[error("ragas_score: mean of '{name}' is {mean}, not in [0, 1]")]
    NotAUnit { name: String, mean: f64 },
}

/// The harmonic mean of the higher-is-better means.
///
/// ```
/// use assay_metrics::judged::{ragas_score, MetricMean};
/// use assay_metrics::Direction::{HigherIsBetter, LowerIsBetter};
/// let means = [
///     MetricMean { name: "faithfulness", mean: 0.5, direction: HigherIsBetter },
///     MetricMean { name: "context_recall", mean: 1.0, direction: HigherIsBetter },
///     MetricMean { name: "toxicity", mean: 0.9, direction: LowerIsBetter },
/// ];
/// let s = ragas_score(&means).unwrap();
/// assert!((s.value - 2.0 / 3.0).abs() < 1e-12);
/// assert_eq!(s.metrics, ["faithfulness", "context_recall"]);
/// ```
pub fn ragas_score(means: &[MetricMean<'_>]) -> Result<RagasScore, RagasScoreError> {
    let used: Vec<&MetricMean<'_>> = means
        .iter()
        .filter(|m| m.direction == Direction::HigherIsBetter)
        .collect();
    if used.len() < 2 {
        return Err(RagasScoreError::TooFew(used.len()));
    }
    if let Some(bad) = used.iter().find(|m| !(0.0..=1.0).contains(&m.mean)) {
        return Err(RagasScoreError::NotAUnit {
            name: bad.name.to_string(),
            mean: bad.mean,
        });
    }
    let value = if used.iter().any(|m| m.mean == 0.0) {
        0.0
    } else {
        used.len() as f64 / used.iter().map(|m| 1.0 / m.mean).sum::<f64>()
    };
    Ok(RagasScore {
        value,
        metrics: used.iter().map(|m| m.name.to_string()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, mean: f64) -> MetricMean<'_> {
        MetricMean {
            name,
            mean,
            direction: Direction::HigherIsBetter,
        }
    }

    #[test]
    fn harmonic_mean_rules() {
        let s = ragas_score(&[m("a", 0.25), m("b", 0.5), m("c", 1.0)]).unwrap();
        assert!((s.value - 3.0 / (4.0 + 2.0 + 1.0)).abs() < 1e-15);
        assert_eq!(ragas_score(&[m("a", 0.0), m("b", 0.9)]).unwrap().value, 0.0);
        assert_eq!(ragas_score(&[m("a", 0.5)]), Err(RagasScoreError::TooFew(1)));
        assert!(matches!(
            ragas_score(&[m("a", 0.5), m("b", f64::NAN)]),
            Err(RagasScoreError::NotAUnit { .. })
        ));
    }
}
