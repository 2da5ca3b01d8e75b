//! Runs metrics over a dataset: rows are read in batches, scored on all
//! worker threads, and written to `results.jsonl` in row order before the
//! next batch is read, so memory stays flat and finished work is on disk.

use crate::config::{EvalConfig, Strictness, UsageError};
use crate::progress::Progress;
use crate::rundir::{RunDir, MANIFEST, RESULTS, SUMMARY};
use anyhow::{Context, Result};
use assay_core::{
    dataset, Accumulator, Failure, FailureKind, Outcome, OutcomeRecord, Row, Sample, Source,
    Summary,
};
use assay_metrics::{Corpus, CorpusScore, Direction, Metric, Scorer};
use serde::Serialize;
use serde_json::{json, Value};
use std::borrow::Cow;

/// Rows scored between two writes of `results.jsonl`.
const BATCH: usize = 1024;

/// Version of `summary.json` and `manifest.json`.
pub const FORMAT_VERSION: u32 = 1;

/// One metric output (`rouge1`, `bleu`, ...) and its statistics.
#[derive(Serialize)]
pub struct OutputSummary {
    pub name: String,
    pub metric: String,
    pub direction: Direction,
    #[serde(flatten)]
    pub summary: Summary,
}

/// `summary.json`.
#[derive(Serialize)]
pub struct RunSummary {
    pub format_version: u32,
    pub rows: u64,
    pub outputs: Vec<OutputSummary>,
    pub corpus: Vec<CorpusScore>,
}

pub fn run(cfg: &EvalConfig) -> Result<RunSummary> {
    let mut rows =
        dataset::open(&cfg.source, cfg.input_format).map_err(|e| UsageError(e.to_string()))?;
    if cfg.out.join(RESULTS).exists() {
        return Err(UsageError(format!(
            "{} already holds a run; a run directory is never overwritten (choose another --out)",
            cfg.out.display()
        ))
        .into());
    }
    let mut dir = RunDir::create(&cfg.out)?;
    dir.write_json(MANIFEST, &manifest(cfg)?)?;

    let names: Vec<(usize, String)> = cfg
        .metrics
        .iter()
        .enumerate()
        .flat_map(|(i, m)| m.outputs().into_iter().map(move |name| (i, name)))
        .collect();
    let mut accumulators = vec![Accumulator::default(); names.len()];
    let threads = cfg.threads.max(1);
    let mut scorers: Vec<Vec<Scorer>> = (0..threads)
        .map(|_| cfg.metrics.iter().map(Metric::scorer).collect())
        .collect();
    let total_bytes = match &cfg.source {
        Source::Path(p) => std::fs::metadata(p).ok().map(|m| m.len()),
        Source::Stdin => None,
    };
    let mut progress = Progress::new(total_bytes);
    let mut n_rows = 0u64;
    let mut batch: Vec<Row> = Vec::with_capacity(BATCH);
    let mut stop: Option<String> = None;

    loop {
        batch.clear();
        batch.extend(rows.by_ref().take(BATCH));
        if batch.is_empty() {
            break;
        }
        if cfg.strict == Strictness::StopAtFirst {
            if let Some(pos) = batch.iter().position(Result::is_err) {
                if let Some(Err(e)) = batch.drain(pos..).next() {
                    stop = Some(e.to_string());
                }
            }
        }
        let scored = score_batch(&batch, &mut scorers, names.len());
        for (row, outcomes) in batch.iter().zip(&scored) {
            // A row that could not be read has no id of its own: its row number stands in.
            let (id, row_no) = match row {
                Ok((s, _)) => (Cow::Borrowed(s.id.as_str()), s.row),
                Err(e) => (Cow::Owned(e.row.to_string()), e.row),
            };
            for ((_, name), (outcome, acc)) in names
                .iter()
                .zip(outcomes.iter().zip(accumulators.iter_mut()))
            {
                dir.append(&OutcomeRecord::new(&id, row_no, name, outcome))?;
                acc.add(outcome);
            }
        }
        dir.flush()?;
        n_rows += batch.len() as u64;
        progress.update(n_rows, rows.bytes_read());
        if stop.is_some() {
            break;
        }
    }
    progress.finish();

    let mut corpora: Vec<Corpus> = Vec::new();
    for per_thread in scorers {
        for (i, scorer) in per_thread.into_iter().enumerate() {
            let c = scorer.into_corpus();
            match corpora.get_mut(i) {
                Some(acc) => acc.merge(c),
                None => corpora.push(c),
            }
        }
    }
    let summary = RunSummary {
        format_version: FORMAT_VERSION,
        rows: n_rows,
        outputs: names
            .iter()
            .zip(&accumulators)
            .map(|((i, name), acc)| OutputSummary {
                name: name.clone(),
                metric: cfg.metrics[*i].id().to_string(),
                direction: cfg.metrics[*i].spec().direction,
                summary: acc.summary(),
            })
            .collect(),
        corpus: corpora.iter().flat_map(Corpus::finalize).collect(),
    };
    dir.write_json(SUMMARY, &summary)?;
    if let Some(message) = stop {
        return Err(UsageError(format!(
            "{message}\n(stopped by --strict; {n_rows} rows before it are in {})",
            dir.path().display()
        ))
        .into());
    }
    Ok(summary)
}

/// Scores a batch on the worker threads; element `i` holds row `i`'s
/// outcomes in output order.
fn score_batch(batch: &[Row], scorers: &mut [Vec<Scorer>], n_outputs: usize) -> Vec<Vec<Outcome>> {
    if batch.is_empty() {
        return Vec::new();
    }
    let chunk = batch.len().div_ceil(scorers.len());
    if scorers.len() == 1 || batch.len() < 2 {
        return score_rows(batch, &mut scorers[0], n_outputs);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = batch
            .chunks(chunk)
            .zip(scorers.iter_mut())
            .map(|(rows, sc)| s.spawn(move || score_rows(rows, sc, n_outputs)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

fn score_rows(rows: &[Row], scorers: &mut [Scorer], n_outputs: usize) -> Vec<Vec<Outcome>> {
    rows.iter()
        .map(|row| match row {
            Ok((sample, _)) => score_sample(sample, scorers),
            Err(e) => vec![
                Outcome::Failed(Failure {
                    kind: FailureKind::Input,
                    message: e.to_string(),
                });
                n_outputs
            ],
        })
        .collect()
}

fn score_sample(sample: &Sample, scorers: &mut [Scorer]) -> Vec<Outcome> {
    scorers.iter_mut().flat_map(|s| s.score(sample)).collect()
}

fn manifest(cfg: &EvalConfig) -> Result<Value> {
    let (path, sha256) = match &cfg.source {
        Source::Path(p) => (
            p.display().to_string(),
            Some(
                assay_core::hash::sha256_file(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            ),
        ),
        Source::Stdin => ("-".to_string(), None),
    };
    Ok(json!({
        "format_version": FORMAT_VERSION,
        "assay_version": env!("CARGO_PKG_VERSION"),
        "input": {"path": path, "sha256": sha256},
        "metrics": cfg.metrics.iter().map(|m| json!({
            "id": m.id().to_string(),
            "params": m.params_json(),
            "signature": m.signature().to_string(),
            "outputs": m.outputs(),
        })).collect::<Vec<_>>(),
    }))
}
