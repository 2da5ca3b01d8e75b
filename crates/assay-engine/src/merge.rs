//! Shards and merge: `eval --shard K/N` scores a deterministic slice of the
//! dataset (one of N machines), `assay merge DIR... --out DIR` combines the
//! shards' run directories into the run the whole dataset would have made.
//!
//! A row belongs to shard K (1-based) iff the FNV-1a 64-bit hash of its
//! sample id's UTF-8 bytes, modulo N, is K - 1. FNV-1a is fixed by its
//! definition (offset basis 0xcbf29ce484222325, prime 0x100000001b3), so
//! the slices are the same on every platform and in every version. A row
//! that could not be read has its row number as id, as in `results.jsonl`.

use crate::config::UsageError;
use crate::engine::FORMAT_VERSION;
use crate::rundir::{Existing, RunDir, MANIFEST, RESULTS, SUMMARY};
use anyhow::Result;
use assay_core::results::read_results;
use assay_core::{dataset, Accumulator, OutcomeRecord, Source};
use assay_metrics::{AnyId, CorpusScore, Metric, Scorer};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Shard `index` of `count`, 1-based: `--shard 2/3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    index: u64,
    count: u64,
}

impl Shard {
    /// Whether the row with this sample id belongs to the shard.
    pub fn holds(&self, sample_id: &str) -> bool {
        fnv1a64(sample_id.as_bytes()) % self.count == self.index - 1
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("--shard {s}: expected K/N with 1 <= K <= N, e.g. 2/3");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<u64>().map_err(|_| bad())?,
            n.trim().parse::<u64>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Corpus scores (corpus BLEU, sacreBLEU, chrF) need every row's n-gram
/// statistics, which the shards' summaries cannot add up. Merge scores the
/// lexical metrics that have one again over the whole input (cheap: no
/// judge), once the input's sha256 matches the manifest; otherwise the
/// merged summary says why they are missing.
fn corpus_scores(manifest: &Value) -> Result<Vec<CorpusScore>, String> {
    let mut metrics = Vec::new();
    for m in manifest["metrics"].as_array().into_iter().flatten() {
        let Some(Ok(AnyId::Lexical(id))) = m["id"].as_str().map(str::parse::<AnyId>) else {
            continue;
        };
        // The manifest's parameters, back in the form `--set` takes.
        let params: BTreeMap<String, String> = m["params"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), param_text(v)))
            .collect();
        metrics.push(Metric::configure(id, &params).map_err(|e| e.to_string())?);
    }
    metrics.retain(Metric::has_corpus_score);
    if metrics.is_empty() {
        return Ok(Vec::new());
    }
    let mut scorers: Vec<Scorer> = metrics.iter().map(Metric::scorer).collect();
    let path = manifest["input"]["path"]
        .as_str()
        .filter(|p| *p != "-")
        .ok_or("the input was standard input, which merge cannot read again")?;
    let recorded = manifest["input"]["sha256"].as_str().unwrap_or_default();
    let actual = assay_core::hash::sha256_file(Path::new(path))
        .map_err(|e| format!("cannot read the input {path}: {e}"))?;
    if actual != recorded {
        return Err(format!("the input {path} changed since the shards ran"));
    }
    let rows =
        dataset::open(&Source::Path(PathBuf::from(path)), None).map_err(|e| e.to_string())?;
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
    manifest: Value,
    summary: Value,
}

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))?;
    Ok(serde_json::from_str(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())))?)
}

fn read_shard(dir: &Path) -> Result<ShardRun> {
    let manifest = read_json(&dir.join(MANIFEST))?;
    let shard = manifest["shard"]
        .as_str()
        .ok_or_else(|| UsageError(format!("{}: not run with --shard", dir.display())))?
        .parse::<Shard>()
        .map_err(|e| UsageError(format!("{}: {e}", dir.display())))?;
    let summary = read_json(&dir.join(SUMMARY)).map_err(|e| {
        UsageError(format!(
            "{e} (a shard without {SUMMARY} did not finish; run it again)"
        ))
    })?;
    if summary["complete"] == false {
        return Err(UsageError(format!(
            "{}: the shard's run was interrupted; finish it with the same command first",
            dir.display()
        ))
        .into());
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
fn comparable(manifest: &Value) -> Value {
    let mut m = manifest.clone();
    if let Some(obj) = m.as_object_mut() {
        obj.remove("shard");
    }
    if let Some(input) = m.get_mut("input").and_then(Value::as_object_mut) {
        input.remove("path");
    }
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

/// `assay merge DIR... --out DIR`. Refuses (exit 2) shards whose manifests
/// differ in anything but the shard, and sets of shards that do not cover
/// 1..N exactly once.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<()> {
    let shards = dirs
        .iter()
        .map(|d| read_shard(d))
        .collect::<Result<Vec<_>>>()?;
    let first = &shards[0];
    let reference = comparable(&first.manifest);
    for s in &shards[1..] {
        if let Some(at) = first_difference(&reference, &comparable(&s.manifest), "") {
            return Err(UsageError(format!(
                "{} and {} are not shards of one run: their manifests differ at {at}",
                first.dir.join(MANIFEST).display(),
                s.dir.join(MANIFEST).display()
            ))
            .into());
        }
    }
    let count = first.shard.count;
    let mut by_index: BTreeMap<u64, &ShardRun> = BTreeMap::new();
    for s in &shards {
        if s.shard.count != count {
            return Err(UsageError(format!(
                "{} is shard {} but {} is shard {}: different N",
                s.dir.display(),
                s.shard,
                first.dir.display(),
                first.shard
            ))
            .into());
        }
        if let Some(other) = by_index.insert(s.shard.index, s) {
            return Err(UsageError(format!(
                "shard {} is given twice: {} and {}",
                s.shard,
                other.dir.display(),
                s.dir.display()
            ))
            .into());
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| !by_index.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(UsageError(format!("shards missing: {}", missing.join(", "))).into());
    }

    let mut records: Vec<OutcomeRecord> = Vec::new();
    for s in by_index.values() {
        let path = s.dir.join(RESULTS);
        let log = read_results(&path).map_err(|e| UsageError(e.to_string()))?;
        if log.torn_bytes > 0 {
            return Err(UsageError(format!(
                "{} ends in a torn line: that shard did not finish; run it again",
                path.display()
            ))
            .into());
        }
        records.extend(log.records);
    }
    // Stable: a row's outputs keep the order their shard wrote them in.
    records.sort_by_key(|r| r.row);

    let outputs = first.summary["outputs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut accumulators: Vec<Accumulator> = vec![Accumulator::default(); outputs.len()];
    let position: BTreeMap<&str, usize> = outputs
        .iter()
        .enumerate()
        .filter_map(|(i, o)| Some((o["name"].as_str()?, i)))
        .collect();
    for r in &records {
        let i = *position.get(r.metric.as_str()).ok_or_else(|| {
            UsageError(format!(
                "sample {:?} has an outcome of {:?}, which no shard's summary lists",
                r.sample_id, r.metric
            ))
        })?;
        accumulators[i].add_record(r);
    }
    if out.join(RESULTS).exists() {
        return Err(UsageError(format!(
            "{} already holds a run; merge writes a new run directory (choose another --out)",
            out.display()
        ))
        .into());
    }
    let shard_list: Vec<Value> = by_index
        .values()
        .map(|s| json!({"shard": s.shard.to_string(), "dir": s.dir.display().to_string()}))
        .collect();
    let mut manifest = comparable(&first.manifest);
    manifest["input"]["path"] = first.manifest["input"]["path"].clone();
    manifest["merged_from"] = Value::Array(shard_list);
    let (mut dir, _) = RunDir::open(out, &manifest, Existing::StartOver)?;
    for r in &records {
        dir.append(r)?;
    }
    dir.flush()?;

    let rows: u64 = shards
        .iter()
        .map(|s| s.summary["rows"].as_u64().unwrap_or(0))
        .sum();
    let merged_outputs: Vec<Value> = outputs
        .iter()
        .zip(&accumulators)
        .map(|(o, acc)| -> Result<Value> {
            let mut entry = Map::new();
            for key in ["name", "metric", "direction"] {
                entry.insert(key.to_string(), o[key].clone());
            }
            if let Value::Object(stats) = serde_json::to_value(acc.summary())? {
                entry.extend(stats);
            }
            Ok(Value::Object(entry))
        })
        .collect::<Result<_>>()?;
    let mut summary = json!({
        "format_version": FORMAT_VERSION,
        "rows": rows,
        "outputs": merged_outputs,
        "complete": true,
    });
    match corpus_scores(&first.manifest) {
        Ok(corpus) => summary["corpus"] = serde_json::to_value(corpus)?,
        Err(why) => {
            summary["corpus"] = json!([]);
            summary["corpus_note"] = json!(format!("corpus-level scores are missing: {why}"));
        }
    }
    if first.summary.get("usage").is_some() {
        // Latency percentiles do not add up across machines: each shard's
        // usage is kept as it was measured.
        summary["usage"] = json!({"shards": by_index.values().map(|s| json!({
            "shard": s.shard.to_string(),
            "usage": s.summary["usage"],
        })).collect::<Vec<_>>()});
    }
    dir.write_json(SUMMARY, &summary)?;
    eprintln!(
        "merged {count} shards ({} outcomes of {rows} rows) into {}",
        records.len(),
        out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn every_id_is_in_exactly_one_shard() {
        let shards: Vec<Shard> = ["1/3", "2/3", "3/3"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let mut sizes = [0usize; 3];
        for i in 0..3000 {
            let id = format!("q{i}");
            let holders: Vec<usize> = (0..3).filter(|&k| shards[k].holds(&id)).collect();
            assert_eq!(holders.len(), 1, "{id}");
            sizes[holders[0]] += 1;
        }
        // FNV-1a spreads sequential ids: no shard is empty or holds most rows.
        assert!(sizes.iter().all(|&n| n > 800), "{sizes:?}");
    }

    #[test]
    fn shards_parse_and_print_back() {
        let s: Shard = "2/3".parse().unwrap();
        assert_eq!(s.to_string(), "2/3");
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert!(err.contains("expected K/N"), "{bad}: {err}");
        }
    }

    #[test]
    fn differences_are_named_by_pointer() {
        let a = json!({"metrics": [{"id": "bleu", "params": {"smoothing": "method0"}}], "shard": "1/2"});
        let b = json!({"metrics": [{"id": "bleu", "params": {"smoothing": "method1"}}], "shard": "2/2"});
        assert_eq!(
            first_difference(&comparable(&a), &comparable(&b), "").as_deref(),
            Some("/metrics/0/params/smoothing")
        );
        assert_eq!(first_difference(&comparable(&a), &comparable(&a), ""), None);
    }
}
