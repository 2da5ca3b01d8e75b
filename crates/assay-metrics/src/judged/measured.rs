//! How far to trust a judged metric: its agreement with people as
//! measured with `assay calibrate` on the labelled sets of
//! `data/calibration/`, beside the best trivial baseline on the same rows
//! (`data/agreement.json`, written from those runs; the README lists the
//! commands). Only figures that hold whatever the judge model are kept:
//! under [`Protocol::Grounding`] the grounding verdicts come from the
//! grounding model alone.

use crate::judged::prompt::Protocol;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// One measured figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub metric: String,
    pub protocol: Protocol,
    /// The labelled set (`assay calibrate --set`).
    pub set: String,
    pub rows: usize,
    /// `roc_auc`, `paired_accuracy`, `spearman`, ...
    pub figure: String,
    pub value: f64,
    pub ci95: [f64; 2],
    /// The baseline's name (`lexical_roc_auc`, ...) and value.
    pub baseline: String,
    pub baseline_value: f64,
}

impl Agreement {
    /// One line a person reads: "RAGTruth ROC-AUC 0.67 [0.61, 0.73],
    /// word-count baseline 0.69 (298 rows)".
    pub fn describe(&self) -> String {
        format!(
            "{} {} {:.2} [{:.2}, {:.2}], {} {:.2} ({} rows)",
            self.set,
            self.figure,
            self.value,
            self.ci95[0],
            self.ci95[1],
            self.baseline,
            self.baseline_value,
            self.rows
        )
    }
}

/// Every committed figure.
pub fn all() -> &'static [Agreement] {
    static ALL: OnceLock<Vec<Agreement>> = OnceLock::new();
    // Checked by this module's tests: a broken file cannot be released.
    ALL.get_or_init(|| {
        serde_json::from_str(include_str!("../../data/agreement.json"))
            .expect("data/agreement.json is a list of figures")
    })
}

/// The figures of `metric` under `protocol`.
pub fn of(metric: &str, protocol: Protocol) -> Vec<&'static Agreement> {
    all()
        .iter()
        .filter(|a| a.metric == metric && a.protocol == protocol)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_names_a_known_metric_and_lies_in_its_interval() {
        assert!(!all().is_empty());
        for a in all() {
            assert!(
                crate::judged::JudgedId::all().any(|id| id.name() == a.metric),
                "{}",
                a.metric
            );
            assert!(a.ci95[0] <= a.value && a.value <= a.ci95[1], "{a:?}");
        }
        let f = of("faithfulness", Protocol::Grounding);
        assert!(f.iter().any(|a| a.set == "ragtruth"));
        assert!(of("faithfulness", Protocol::Listed).is_empty());
    }
}
