//! A run corrected by a calibration (`assay eval --calibration FILE`): the prevalence behind a run's raw rate
//! of a binary judgement, corrected for the judge's sensitivity and
//! specificity as `assay calibrate` measured them (Rogan-Gladen), with an
//! interval that includes the calibration's own uncertainty.

use crate::agreement::{corrected_prevalence, Confusion};
use crate::calibrate::estimate_json;
use crate::{Error, Result};
use assay_core::{read_results, Status};
use assay_engine::rundir::{RESULTS, SUMMARY};
use assay_engine::RunSummary;
use assay_metrics::AnyId;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The parts of a `calibration.json` a correction needs.
#[derive(Debug)]
pub struct Calibration {
    path: PathBuf,
    metric: String,
    output: String,
    /// The class a score at or above the threshold predicts.
    positive: String,
    threshold: f64,
    confusion: Confusion,
}

impl Calibration {
    /// Reads `path`, refusing a calibration that is not of a binary
    /// judgement or has no threshold.
    pub fn load(path: &Path) -> Result<Calibration> {
        let name = path.display();
        let bad = |what: &str| Error::Usage(format!("--calibration {name}: {what}"));
        let text = std::fs::read_to_string(path).map_err(|e| bad(&e.to_string()))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| bad(&format!("not JSON: {e}")))?;
        let string = |field: &str| {
            field
                .split('.')
                .try_fold(&doc, |v, k| v.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| bad(&format!("field '{field}': expected a string")))
        };
        let kind = string("label.kind")?;
        if kind != "binary" {
            return Err(bad(&format!(
                "calibrates a {kind} label; a corrected rate needs a binary one"
            )));
        }
        let threshold = doc["threshold"]["value"].as_f64().ok_or_else(|| {
            bad(&format!(
                "field 'threshold.value': no threshold ({})",
                doc["threshold"]["value"]
            ))
        })?;
        let confusion: Confusion = serde_json::from_value(doc["confusion"].clone())
            .map_err(|e| bad(&format!("field 'confusion': {e}")))?;
        Ok(Calibration {
            path: path.to_path_buf(),
            metric: string("metric")?,
            output: string("output")?,
            positive: string("label.positive")?,
            threshold,
            confusion,
        })
    }

    /// Refuses a run that does not score the calibrated metric.
    pub fn check(&self, metrics: &[AnyId]) -> Result<()> {
        if metrics.iter().any(|m| m.to_string() == self.metric) {
            Ok(())
        } else {
            Err(Error::Usage(format!(
                "--calibration {} calibrates {}, which is not in --metrics",
                self.path.display(),
                self.metric
            )))
        }
    }

    /// The correction for the run in `dir`, also added to its
    /// `summary.json` as `calibrated`.
    pub fn apply(&self, dir: &Path) -> Result<Corrected> {
        let log = read_results(&dir.join(RESULTS))?;
        let scores: Vec<f64> = log
            .records
            .iter()
            .filter(|r| r.metric == self.output && r.status == Status::Scored)
            .filter_map(|r| r.value)
            .collect();
        let positives = scores.iter().filter(|s| **s >= self.threshold).count() as u64;
        let n = scores.len() as u64;
        let c = corrected_prevalence(positives, n, &self.confusion);
        let raw = ratio_cell(c.raw);
        let corrected = match (&c.corrected.value, &c.corrected.ci95) {
            (Ok(v), Some(ci)) => format!("{v:.2} corrected [{:.2}, {:.2}]", ci.low, ci.high),
            (Ok(v), None) => format!("{v:.2} corrected"),
            (Err(why), _) => format!("no corrected rate: {why}"),
        };
        let line = format!(
            "{} {raw} raw -> {corrected} ({} >= {}: {positives} of {n}; calibration {}: sensitivity {}, specificity {})",
            self.positive,
            self.output,
            self.threshold,
            self.path.display(),
            ratio_cell(self.confusion.sensitivity()),
            ratio_cell(self.confusion.specificity()),
        );
        let json = json!({
            "metric": self.metric,
            "positive": self.positive,
            "threshold": self.threshold,
            "n_scored": n,
            "n_positive": positives,
            "raw": c.raw.ok(),
            "corrected": estimate_json(&c.corrected),
            "calibration": {"file": self.path.display().to_string(), "confusion": self.confusion},
            "method": "Rogan-Gladen (p + spec - 1) / (sens + spec - 1) clipped to [0, 1]; 95% interval: parametric bootstrap drawing sens ~ Beta(TP+1, FN+1), spec ~ Beta(TN+1, FP+1) and p ~ Beta(k+1, n-k+1)",
        });
        let path = dir.join(SUMMARY);
        let mut summary: RunSummary = assay_engine::log::read_json(&path)?;
        summary.calibrated = Some(json.clone());
        assay_engine::log::write_json(&path, &summary)?;
        Ok(Corrected { line, json })
    }
}

fn ratio_cell(s: crate::agreement::Stat) -> String {
    s.map_or_else(|why| why.to_string(), |v| format!("{v:.2}"))
}

/// A run's corrected rate: a line to print and its `summary.json` entry.
pub struct Corrected {
    pub line: String,
    pub json: Value,
}
