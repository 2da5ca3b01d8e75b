//! `assay compare DIR_A DIR_B`: how two runs differ, output by output, on
//! the samples they share.
//!
//! The two `results.jsonl` are joined on (sample id, output name). Per
//! output: the means of both runs on the samples scored in both, their
//! difference (B - A) with a paired bootstrap interval, the samples that
//! only one run has, whether the two runs' signatures for that metric
//! agree (and which keys differ when not), and the samples whose value
//! moved most.

use crate::{Error, Result};
use assay_core::{paired_difference, OutcomeRecord, PairedDifference, Status};
use assay_engine::log::read_json;
use assay_engine::rundir::{MANIFEST, RESULTS, SUMMARY};
use assay_engine::{RunManifest, RunSummary};
use assay_metrics::Direction;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Which run an output or sample appears in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    Both,
    OnlyA,
    OnlyB,
}

/// The comparison of two run directories.
#[derive(Debug, Serialize)]
pub struct Comparison {
    pub a: PathBuf,
    pub b: PathBuf,
    pub outputs: Vec<OutputComparison>,
    /// Problems met on the way that do not stop the comparison (a torn
    /// last line of a killed run).
    pub warnings: Vec<String>,
}

/// One output (`rouge1`, `faithfulness`, ...) in both runs.
#[derive(Debug, Serialize)]
pub struct OutputComparison {
    pub name: String,
    pub presence: Presence,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// True when the metric has the same signature in both manifests: the
    /// same metric, parameters, version and judge.
    pub comparable: bool,
    pub signature_a: Option<String>,
    pub signature_b: Option<String>,
    /// The signature keys whose values differ (`metric` and `version` for
    /// the leading name and version).
    pub differing_keys: Vec<String>,
    /// Samples scored in both runs.
    pub n_shared: u64,
    /// Samples of this output that only run A (B) has.
    pub n_only_a: u64,
    pub n_only_b: u64,
    /// Samples in both runs that are skipped or failed in at least one.
    pub n_not_scored_in_both: u64,
    /// Absent when no sample is scored in both.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difference: Option<PairedDifference>,
    /// The shared samples whose value changed most, largest |B - A| first.
    pub most_changed: Vec<Change>,
}

/// One sample's value in both runs.
#[derive(Debug, Serialize)]
pub struct Change {
    pub sample_id: String,
    pub a: f64,
    pub b: f64,
    pub diff: f64,
}

/// What one run directory holds, read for comparing.
struct Run {
    /// Output name -> its metric's signature, from the manifest.
    signatures: HashMap<String, String>,
    /// Output name -> its direction, from the summary when there is one
    /// (a killed run has none).
    directions: HashMap<String, Direction>,
    /// Output names in the order the run wrote them.
    order: Vec<String>,
    /// Output name -> sample id -> its value (`None` unless scored).
    values: HashMap<String, BTreeMap<String, Option<f64>>>,
}

/// Reads both runs and compares them; `top` is how many most-changed
/// samples to list per output. An unreadable or malformed file is a
/// usage [`Error`] naming it.
pub fn compare(a: &Path, b: &Path, top: usize) -> Result<Comparison> {
    let mut warnings = Vec::new();
    let run_a = Run::read(a, &mut warnings)?;
    let run_b = Run::read(b, &mut warnings)?;
    let mut names = run_a.order.clone();
    names.extend(
        run_b
            .order
            .iter()
            .filter(|n| !run_a.values.contains_key(*n))
            .cloned(),
    );
    let outputs = names
        .into_iter()
        .map(|name| compare_output(&run_a, &run_b, name, top))
        .collect();
    Ok(Comparison {
        a: a.to_path_buf(),
        b: b.to_path_buf(),
        outputs,
        warnings,
    })
}

fn compare_output(a: &Run, b: &Run, name: String, top: usize) -> OutputComparison {
    let empty = BTreeMap::new();
    let values_a = a.values.get(&name).unwrap_or(&empty);
    let values_b = b.values.get(&name).unwrap_or(&empty);
    let presence = match (values_a.is_empty(), values_b.is_empty()) {
        (false, true) => Presence::OnlyA,
        (true, false) => Presence::OnlyB,
        _ => Presence::Both,
    };
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    let mut n_not_scored = 0;
    for (id, va) in values_a {
        match (va, values_b.get(id)) {
            (_, None) => {}
            (Some(va), Some(Some(vb))) => {
                pairs.push((*va, *vb));
                changes.push(Change {
                    sample_id: id.clone(),
                    a: *va,
                    b: *vb,
                    diff: vb - va,
                });
            }
            _ => n_not_scored += 1,
        }
    }
    let n_only_a = values_a
        .keys()
        .filter(|id| !values_b.contains_key(*id))
        .count();
    let n_only_b = values_b
        .keys()
        .filter(|id| !values_a.contains_key(*id))
        .count();
    // Largest move first; ties in sample-id order (the map's), so the list
    // is reproducible.
    changes.sort_by(|x, y| y.diff.abs().total_cmp(&x.diff.abs()));
    changes.retain(|c| c.diff != 0.0);
    changes.truncate(top);
    let signature_a = a.signatures.get(&name).cloned();
    let signature_b = b.signatures.get(&name).cloned();
    let (comparable, differing_keys) = match (&signature_a, &signature_b) {
        (Some(sa), Some(sb)) => (sa == sb, differing_keys(sa, sb)),
        _ => (false, Vec::new()),
    };
    OutputComparison {
        direction: a
            .directions
            .get(&name)
            .or_else(|| b.directions.get(&name))
            .copied(),
        name,
        presence,
        comparable,
        signature_a,
        signature_b,
        differing_keys,
        n_shared: pairs.len() as u64,
        n_only_a: n_only_a as u64,
        n_only_b: n_only_b as u64,
        n_not_scored_in_both: n_not_scored,
        difference: paired_difference(&pairs),
        most_changed: changes,
    }
}

/// The keys of two signatures (`name|vN|key:value|...`) whose values differ,
/// in the order they first appear.
fn differing_keys(a: &str, b: &str) -> Vec<String> {
    let parts = |sig: &str| -> Vec<(String, String)> {
        sig.split('|')
            .enumerate()
            .map(|(i, part)| match (i, part.split_once(':')) {
                (0, _) => ("metric".to_string(), part.to_string()),
                (1, _) => ("version".to_string(), part.to_string()),
                (_, Some((k, v))) => (k.to_string(), v.to_string()),
                (_, None) => (part.to_string(), String::new()),
            })
            .collect()
    };
    let (pa, pb) = (parts(a), parts(b));
    let lookup = |ps: &[(String, String)], key: &str| {
        ps.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    let mut keys: Vec<String> = Vec::new();
    for (k, _) in pa.iter().chain(&pb) {
        if !keys.contains(k) && lookup(&pa, k) != lookup(&pb, k) {
            keys.push(k.clone());
        }
    }
    keys
}

impl Run {
    fn read(dir: &Path, warnings: &mut Vec<String>) -> Result<Run> {
        let manifest: RunManifest = read_json(&dir.join(MANIFEST))?;
        let mut signatures = HashMap::new();
        for m in manifest.metrics {
            for output in m.outputs {
                signatures.insert(output, m.signature.clone());
            }
        }
        let summary_path = dir.join(SUMMARY);
        let mut directions = HashMap::new();
        if summary_path.exists() {
            let summary: RunSummary = read_json(&summary_path)?;
            for o in summary.outputs {
                directions.insert(o.name, o.direction);
            }
        }
        let results_path = dir.join(RESULTS);
        let log =
            assay_core::read_results(&results_path).map_err(|e| Error::Usage(e.to_string()))?;
        if log.torn_bytes > 0 {
            warnings.push(format!(
                "{}: the last {} bytes are a torn line (a killed run?) and are left out",
                results_path.display(),
                log.torn_bytes
            ));
        }
        let mut order = Vec::new();
        let mut values: HashMap<String, BTreeMap<String, Option<f64>>> = HashMap::new();
        for OutcomeRecord {
            sample_id,
            metric,
            status,
            value,
            ..
        } in log.records
        {
            let per_sample = values.entry(metric.clone()).or_insert_with(|| {
                order.push(metric.clone());
                BTreeMap::new()
            });
            let value = value.filter(|_| status == Status::Scored);
            if per_sample.insert(sample_id.clone(), value).is_some() {
                return Err(usage(
                    &results_path,
                    &format!(
                        "sample '{sample_id}' appears twice for output '{metric}'; \
                         compare joins runs on sample ids, so they must be unique"
                    ),
                ));
            }
        }
        Ok(Run {
            signatures,
            directions,
            order,
            values,
        })
    }
}

fn usage(file: &Path, why: &dyn std::fmt::Display) -> Error {
    Error::Usage(format!("cannot read {}: {why}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_keys_name_what_changed() {
        let a = "bleu|v1|weights:0.25,0.25,0.25,0.25|smoothing:method0|assay:0.1.0";
        let b = "bleu|v1|weights:0.25,0.25,0.25,0.25|smoothing:method1|assay:0.1.0";
        assert_eq!(differing_keys(a, b), ["smoothing"]);
        assert!(differing_keys(a, a).is_empty());
        let c = "bleu|v2|base_url:http://x:1/v1|assay:0.1.0";
        let d = "bleu|v2|base_url:http://y:1/v1|assay:0.1.0";
        assert_eq!(differing_keys(c, d), ["base_url"]);
        assert_eq!(
            differing_keys(a, c),
            ["version", "weights", "smoothing", "base_url"]
        );
    }
}
