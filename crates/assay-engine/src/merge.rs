//! Merge: `assay merge DIR... --out DIR` combines the run directories of
//! the shards of one run (see [`crate::shard`]) into the run the whole
//! dataset would have made.

use crate::error::{EngineError, Result};
use crate::log::{read_json, MergedShard, OutputSummary, RagasSummary, RunManifest, RunSummary};
use crate::observer::Silent;
use crate::rundir::{Existing, RunDir, FORMAT_VERSION, MANIFEST, RESULTS, SUMMARY};
use crate::shard::Shard;
use assay_core::results::read_results;
use assay_core::{dataset, Accumulator, OutcomeRecord, Source};
use assay_metrics::{AnyId, CorpusScore, Metric, Scorer};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Corpus scores (corpus BLEU, sacreBLEU, chrF) need every row's n-gram
/// statistics, which the shards' summaries cannot add up. Merge scores the
/// lexical metrics that have one again over the whole input (cheap: no
/// judge), once the input's sha256 matches the manifest; otherwise the
/// merged summary says why they are missing. `input` is where this machine
/// has the input, when not at the manifest's path.
fn corpus_scores(manifest: &RunManifest, input: Option<&Path>) -> Result<Vec<CorpusScore>, String> {
    let mut metrics = Vec::new();
    for m in &manifest.metrics {
        let Ok(AnyId::Lexical(id)) = m.id.parse::<AnyId>() else {
            continue;
        };
        // The manifest's parameters, back in the form `--set` takes.
        let params: BTreeMap<String, String> = m
            .params
            .iter()
            .map(|(k, v)| (k.clone(), param_text(v)))
            .collect();
        metrics.push(Metric::configure(id, &params).map_err(|e| e.to_string())?);
    }
    metrics.retain(Metric::has_corpus_score);
    if metrics.is_empty() {
        return Ok(Vec::new());
    }
    let mut scorers: Vec<Scorer> = metrics.iter().map(Metric::scorer).collect();
    let path = match input {
        Some(path) => path.to_str().ok_or("the input's path is not UTF-8")?,
        None => Some(manifest.input.path.as_str())
            .filter(|p| *p != "-")
            .ok_or("the input was standard input, which merge cannot read again")?,
    };
    let recorded = manifest.input.sha256.as_deref().unwrap_or_default();
    let actual = assay_core::hash::sha256_file(Path::new(path))
        .map_err(|e| format!("cannot read the input {path}: {e}"))?;
    if actual != recorded {
        return Err(format!("the input {path} changed since the shards ran"));
    }
    let options = manifest.input.options()?;
    let rows = dataset::open_with(
        &Source::Path(PathBuf::from(path)),
        manifest.input.format,
        &options,
    )
    .map_err(|e| e.to_string())?;
    for (sample, _) in rows.flatten() {
        for scorer in &mut scorers {
            scorer.score(&sample);
        }
    }
    Ok(scorers
        .into_iter()
        .filter_map(|s| s.into_corpus().finalize())
        .collect())
}

/// A manifest parameter as `--set` writes it: lists comma-separated.
fn param_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(param_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// One shard's run directory, read.
struct ShardRun {
    dir: PathBuf,
    shard: Shard,
    manifest: RunManifest,
    summary: RunSummary,
}

fn read_shard(dir: &Path) -> Result<ShardRun> {
    let manifest: RunManifest = read_json(&dir.join(MANIFEST))?;
    let shard = manifest
        .shard
        .ok_or_else(|| EngineError::Usage(format!("{}: not run with --shard", dir.display())))?;
    let summary: RunSummary = read_json(&dir.join(SUMMARY)).map_err(|e| {
        EngineError::Usage(format!(
            "{e} (a shard without {SUMMARY} did not finish; run it again)"
        ))
    })?;
    if !summary.complete {
        return Err(EngineError::Usage(format!(
            "{}: the shard's run was interrupted; finish it with the same command first",
            dir.display()
        )));
    }
    Ok(ShardRun {
        dir: dir.to_path_buf(),
        shard,
        manifest,
        summary,
    })
}

/// The manifest without what may differ between shards: the shard, and
/// where each machine kept its copy of the input (its sha256 must agree).
fn comparable(manifest: &RunManifest) -> RunManifest {
    let mut m = manifest.clone();
    m.shard = None;
    m.input.path.clear();
    m
}

/// The first place where `a` and `b` differ, as a JSON pointer.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(u), Some(v)) => first_difference(u, v, &format!("{at}/{k}")),
                _ => Some(format!("{at}/{k}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, &format!("{at}/{i}"))),
        _ => (a != b).then(|| at.to_string()),
    }
}

/// `assay merge DIR... --out DIR [--input PATH]`. Refuses (exit 2) shards
/// whose manifests differ in anything but the shard, and sets of shards
/// that do not cover 1..N exactly once. `input` is this machine's copy of
/// the input (its sha256 must be the manifests'), for when the shards ran
/// elsewhere. Returns a line that says what was merged.
pub fn merge(dirs: &[PathBuf], out: &Path, input: Option<&Path>) -> Result<String> {
    let shards = dirs
        .iter()
        .map(|d| read_shard(d))
        .collect::<Result<Vec<_>>>()?;
    let first = &shards[0];
    let reference = serde_json::to_value(comparable(&first.manifest))?;
    for s in &shards[1..] {
        let other = serde_json::to_value(comparable(&s.manifest))?;
        if let Some(at) = first_difference(&reference, &other, "") {
            return Err(EngineError::Usage(format!(
                "{} and {} are not shards of one run: their manifests differ at {at}",
                first.dir.join(MANIFEST).display(),
                s.dir.join(MANIFEST).display()
            )));
        }
    }
    let count = first.shard.count;
    let mut by_index: BTreeMap<u64, &ShardRun> = BTreeMap::new();
    for s in &shards {
        if s.shard.count != count {
            return Err(EngineError::Usage(format!(
                "{} is shard {} but {} is shard {}: different N",
                s.dir.display(),
                s.shard,
                first.dir.display(),
                first.shard
            )));
        }
        if let Some(other) = by_index.insert(s.shard.index, s) {
            return Err(EngineError::Usage(format!(
                "shard {} is given twice: {} and {}",
                s.shard,
                other.dir.display(),
                s.dir.display()
            )));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| !by_index.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(EngineError::Usage(format!(
            "shards missing: {}",
            missing.join(", ")
        )));
    }

    let mut records: Vec<OutcomeRecord> = Vec::new();
    for s in by_index.values() {
        let path = s.dir.join(RESULTS);
        let log = read_results(&path).map_err(|e| EngineError::Usage(e.to_string()))?;
        if log.torn_bytes > 0 {
            return Err(EngineError::Usage(format!(
                "{} ends in a torn line: that shard did not finish; run it again",
                path.display()
            )));
        }
        records.extend(log.records);
    }
    // Stable: a row's outputs keep the order their shard wrote them in.
    records.sort_by_key(|r| r.row);

    let outputs = &first.summary.outputs;
    let mut accumulators: Vec<Accumulator> = vec![Accumulator::default(); outputs.len()];
    let position: BTreeMap<&str, usize> = outputs
        .iter()
        .enumerate()
        .map(|(i, o)| (o.name.as_str(), i))
        .collect();
    for r in &records {
        let i = *position.get(r.metric.as_str()).ok_or_else(|| {
            EngineError::Usage(format!(
                "sample {:?} has an outcome of {:?}, which no shard's summary lists",
                r.sample_id, r.metric
            ))
        })?;
        accumulators[i].add_record(r);
    }
    if out.join(RESULTS).exists() {
        return Err(EngineError::Usage(format!(
            "{} already holds a run; merge writes a new run directory (choose another --out)",
            out.display()
        )));
    }
    let mut manifest = comparable(&first.manifest);
    manifest.input.path = match input {
        Some(path) => path.display().to_string(),
        None => first.manifest.input.path.clone(),
    };
    manifest.merged_from = Some(
        by_index
            .values()
            .map(|s| MergedShard {
                shard: s.shard.to_string(),
                dir: s.dir.display().to_string(),
            })
            .collect(),
    );
    let mut dir = RunDir::open(
        out,
        &manifest,
        Existing::StartOver,
        &mut Silent,
        &mut |_| {},
    )?;
    for r in &records {
        dir.append(r)?;
    }
    dir.flush()?;

    let rows: u64 = shards.iter().map(|s| s.summary.rows).sum();
    let (corpus, corpus_note) = match corpus_scores(&first.manifest, input) {
        Ok(corpus) => (corpus, None),
        Err(why) => (
            Vec::new(),
            Some(format!("corpus-level scores are missing: {why}")),
        ),
    };
    let mut summary = RunSummary {
        format_version: FORMAT_VERSION,
        rows,
        // Usage and the spread over repeats are per machine: the shards'
        // usage is kept below as it was measured.
        outputs: outputs
            .iter()
            .zip(Accumulator::summaries(
                &accumulators.iter().collect::<Vec<_>>(),
            ))
            .map(|(o, summary)| OutputSummary {
                name: o.name.clone(),
                metric: o.metric.clone(),
                direction: o.direction,
                summary,
                usage: None,
                repeats: None,
            })
            .collect(),
        corpus,
        corpus_note,
        // Latency percentiles do not add up across machines: each shard's
        // usage is kept as it was measured.
        usage: first.summary.usage.as_ref().map(|_| {
            json!({"shards": by_index.values().map(|s| json!({
                "shard": s.shard.to_string(),
                "usage": s.summary.usage,
            })).collect::<Vec<_>>()})
        }),
        ragas_score: None,
        // The shards ran one configuration.
        agreement: first.summary.agreement.clone(),
        fitness: first.summary.fitness.clone(),
        calibrated: None,
        input: None,
        complete: true,
    };
    if first.summary.ragas_score.is_some() {
        // Over the judged outputs, which follow the lexical ones, as in a run.
        let lexical = summary
            .outputs
            .iter()
            .take_while(|o| matches!(o.metric.parse::<AnyId>(), Ok(AnyId::Lexical(_))))
            .count();
        summary.ragas_score = Some(RagasSummary::of(&summary.outputs[lexical..]));
    }
    dir.write_json(SUMMARY, &summary)?;
    Ok(format!(
        "merged {count} shards ({} outcomes of {rows} rows) into {}",
        records.len(),
        out.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_named_by_pointer() {
        let a = json!({"metrics": [{"id": "bleu", "params": {"smoothing": "method0"}}]});
        let b = json!({"metrics": [{"id": "bleu", "params": {"smoothing": "method1"}}]});
        assert_eq!(
            first_difference(&a, &b, "").as_deref(),
            Some("/metrics/0/params/smoothing")
        );
        assert_eq!(first_difference(&a, &a, ""), None);
    }
}
