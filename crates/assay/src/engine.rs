//! Runs metrics over a dataset: rows are read in batches, scored on all
//! worker threads, and written to `results.jsonl` in row order before the
//! next batch is read, so memory stays flat and finished work is on disk.
//!
//! With judged metrics, rows are read as work frees up instead: a bounded
//! number of samples (4 x `--concurrency`) is in flight on a tokio runtime,
//! each sample's judge steps start as their inputs are ready, and a
//! sample's outcomes are appended (whole lines, flushed) as soon as it
//! completes, in completion order. Lexical metrics of the same run are
//! scored when the row is read.

use crate::config::{EvalConfig, JudgedRun, Strictness, UsageError};
use crate::judging::{judge_sample, Judged};
use crate::progress::Progress;
use crate::rundir::{RunDir, MANIFEST, RESULTS, SUMMARY};
use anyhow::{Context, Result};
use assay_core::{
    dataset, Accumulator, Failure, FailureKind, Outcome, OutcomeRecord, Row, Sample, Source,
    Summary,
};
use assay_llm::{ChatModel, Embedder, UsageLedger, UsageSummary};
use assay_metrics::{Corpus, CorpusScore, Direction, Metric, Scorer};
use serde::Serialize;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::Arc;

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
    /// Judge usage per metric and for the run (judged metrics only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
}

/// One output column: its name, metric and direction.
struct OutputName {
    name: String,
    metric: String,
    direction: Direction,
}

/// Where the rows' outcomes go.
struct Sink {
    dir: RunDir,
    accumulators: Vec<Accumulator>,
}

impl Sink {
    /// Appends `outcomes` of the outputs starting at `first`.
    fn write(
        &mut self,
        id: &str,
        row: u64,
        names: &[OutputName],
        first: usize,
        outcomes: &[Outcome],
    ) -> Result<()> {
        for ((name, acc), outcome) in names[first..]
            .iter()
            .zip(&mut self.accumulators[first..])
            .zip(outcomes)
        {
            self.dir
                .append(&OutcomeRecord::new(id, row, &name.name, outcome))?;
            acc.add(outcome);
        }
        Ok(())
    }
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
    let dir = RunDir::create(&cfg.out)?;
    dir.write_json(MANIFEST, &manifest(cfg)?)?;

    let mut names: Vec<OutputName> = cfg
        .metrics
        .iter()
        .flat_map(|m| {
            m.outputs().into_iter().map(move |name| OutputName {
                name,
                metric: m.id().to_string(),
                direction: m.spec().direction,
            })
        })
        .collect();
    let n_lexical = names.len();
    if let Some(judged) = &cfg.judged {
        for m in &judged.metrics {
            names.extend(
                m.directions()
                    .into_iter()
                    .map(|(name, direction)| OutputName {
                        name,
                        metric: m.id().to_string(),
                        direction,
                    }),
            );
        }
    }
    let mut sink = Sink {
        dir,
        accumulators: vec![Accumulator::default(); names.len()],
    };
    let threads = cfg.threads.max(1);
    let mut scorers: Vec<Vec<Scorer>> = (0..threads)
        .map(|_| cfg.metrics.iter().map(Metric::scorer).collect())
        .collect();
    let total_bytes = match &cfg.source {
        Source::Path(p) => std::fs::metadata(p).ok().map(|m| m.len()),
        Source::Stdin => None,
    };
    let mut progress = Progress::new(total_bytes);
    let ledger = Arc::new(UsageLedger::new());
    let (n_rows, stop) = match &cfg.judged {
        None => run_lexical(
            cfg,
            &mut rows,
            &mut scorers,
            &names,
            &mut sink,
            &mut progress,
        )?,
        Some(judged) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(threads)
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            let run = JudgedRows {
                cfg,
                judged,
                ledger: &ledger,
                names: &names,
                n_lexical,
            };
            rt.block_on(run.run(&mut rows, &mut scorers[0], &mut sink, &mut progress))?
        }
    };
    progress.finish();
    let dir = sink.dir;
    let accumulators = sink.accumulators;
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
            .map(|(o, acc)| OutputSummary {
                name: o.name.clone(),
                metric: o.metric.clone(),
                direction: o.direction,
                summary: acc.summary(),
            })
            .collect(),
        corpus: corpora.iter().flat_map(Corpus::finalize).collect(),
        usage: cfg.judged.as_ref().map(|j| usage_json(j, &ledger)),
    };
    dir.write_json(SUMMARY, &summary)?;
    match stop {
        Some(Stop::Strict(message)) => Err(UsageError(format!(
            "{message}\n(stopped by --strict; {n_rows} rows before it are in {})",
            dir.path().display()
        ))
        .into()),
        Some(Stop::Fatal(e)) => Err(anyhow::anyhow!(
            "the judge refused the run: {e}\n(check OPENAI_API_KEY / ASSAY_API_KEY; the run stopped \
             at once, {n_rows} finished rows are in {})",
            dir.path().display()
        )),
        None => Ok(summary),
    }
}

/// Why a run ended before its input did.
enum Stop {
    /// A bad row under `--strict`.
    Strict(String),
    /// A judge error that every later call would repeat (`auth`).
    Fatal(assay_llm::Error),
}

/// The lexical-only loop: batches scored on all threads, in row order.
fn run_lexical(
    cfg: &EvalConfig,
    rows: &mut dataset::Rows,
    scorers: &mut [Vec<Scorer>],
    names: &[OutputName],
    sink: &mut Sink,
    progress: &mut Progress,
) -> Result<(u64, Option<Stop>)> {
    let mut n_rows = 0u64;
    let mut batch: Vec<Row> = Vec::with_capacity(BATCH);
    let mut stop: Option<Stop> = None;
    loop {
        batch.clear();
        batch.extend(rows.by_ref().filter(|r| in_shard(cfg, r)).take(BATCH));
        if batch.is_empty() {
            break;
        }
        if cfg.strict == Strictness::StopAtFirst {
            if let Some(pos) = batch.iter().position(Result::is_err) {
                if let Some(Err(e)) = batch.drain(pos..).next() {
                    stop = Some(Stop::Strict(e.to_string()));
                }
            }
        }
        let scored = score_batch(&batch, scorers, names.len());
        for (row, outcomes) in batch.iter().zip(&scored) {
            let (id, row_no) = row_id(row);
            sink.write(&id, row_no, names, 0, outcomes)?;
        }
        sink.dir.flush()?;
        n_rows += batch.len() as u64;
        progress.update(n_rows, rows.bytes_read());
        if stop.is_some() {
            break;
        }
    }
    Ok((n_rows, stop))
}

/// Whether `row` belongs to the run's `--shard` (every row without one).
fn in_shard(cfg: &EvalConfig, row: &Row) -> bool {
    cfg.shard.is_none_or(|s| s.holds(&row_id(row).0))
}

/// A row's id and number; a row that could not be read has no id of its
/// own, so its row number stands in.
fn row_id(row: &Row) -> (Cow<'_, str>, u64) {
    match row {
        Ok((s, _)) => (Cow::Borrowed(s.id.as_str()), s.row),
        Err(e) => (Cow::Owned(e.row.to_string()), e.row),
    }
}

/// The loop of a run with judged metrics.
struct JudgedRows<'a> {
    cfg: &'a EvalConfig,
    judged: &'a Arc<JudgedRun>,
    ledger: &'a Arc<UsageLedger>,
    names: &'a [OutputName],
    n_lexical: usize,
}

impl JudgedRows<'_> {
    async fn run(
        &self,
        rows: &mut dataset::Rows,
        scorers: &mut [Scorer],
        sink: &mut Sink,
        progress: &mut Progress,
    ) -> Result<(u64, Option<Stop>)> {
        let max_in_flight = self.judged.options.concurrency.saturating_mul(4).max(1);
        let mut in_flight: tokio::task::JoinSet<(String, u64, Judged)> =
            tokio::task::JoinSet::new();
        let mut n_rows = 0u64;
        let mut stop: Option<Stop> = None;
        let mut exhausted = false;
        loop {
            while !exhausted && stop.is_none() && in_flight.len() < max_in_flight {
                let Some(row) = rows.next() else {
                    exhausted = true;
                    break;
                };
                if !in_shard(self.cfg, &row) {
                    continue;
                }
                match row {
                    Err(e) if self.cfg.strict == Strictness::StopAtFirst => {
                        stop = Some(Stop::Strict(e.to_string()));
                    }
                    Err(e) => {
                        let failed = input_failure(&e);
                        sink.write(
                            &e.row.to_string(),
                            e.row,
                            self.names,
                            0,
                            &vec![failed; self.names.len()],
                        )?;
                        n_rows += 1;
                    }
                    Ok((sample, _)) => {
                        let lexical = score_sample(&sample, scorers);
                        sink.write(&sample.id, sample.row, self.names, 0, &lexical)?;
                        let (id, row) = (sample.id.clone(), sample.row);
                        let work = judge_sample(
                            Arc::clone(self.judged),
                            Arc::clone(self.ledger),
                            Arc::new(sample),
                        );
                        in_flight.spawn(async move { (id, row, work.await) });
                    }
                }
            }
            sink.dir.flush()?;
            let Some(joined) = in_flight.join_next().await else {
                break;
            };
            let (id, row, outcomes) =
                joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
            match outcomes {
                Ok(outcomes) => {
                    // Deferred to the batch file: no judged outcome, so a
                    // later round scores the sample.
                    if let Some(outcomes) = outcomes {
                        sink.write(&id, row, self.names, self.n_lexical, &outcomes)?;
                        sink.dir.flush()?;
                    }
                    n_rows += 1;
                    progress.update(n_rows, rows.bytes_read());
                }
                Err(e) => {
                    // Every later call would fail the same way: stop now
                    // rather than fail every sample.
                    in_flight.abort_all();
                    stop = Some(Stop::Fatal(e));
                    break;
                }
            }
        }
        Ok((n_rows, stop))
    }
}

fn input_failure(e: &dyn std::fmt::Display) -> Outcome {
    Outcome::Failed(Failure {
        kind: FailureKind::Input,
        message: e.to_string(),
    })
}

/// Usage per metric and for the run, as `summary.json` shows it.
fn usage_json(judged: &JudgedRun, ledger: &UsageLedger) -> Value {
    let per_metric: serde_json::Map<String, Value> = judged
        .metrics
        .iter()
        .map(|m| {
            let id = m.id().to_string();
            let u = ledger.scope(&id, &judged.prices);
            (id, usage_summary_json(&u))
        })
        .collect();
    json!({
        "run": usage_summary_json(&ledger.total(&judged.prices)),
        "per_metric": per_metric,
        "note": "a step shared by several metrics counts under the first that needs it; embedding calls are not counted",
    })
}

fn usage_summary_json(u: &UsageSummary) -> Value {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    json!({
        "calls": u.requests,
        "upstream": u.upstream,
        "cache_hits": u.cache_hits,
        "coalesced": u.coalesced,
        "failures": u.failures,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "latency_ms": u.latency.as_ref().map(|l| json!({"p50": ms(l.p50), "p90": ms(l.p90), "p99": ms(l.p99), "max": ms(l.max)})),
        "cost": u.cost,
    })
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
            Err(e) => vec![input_failure(e); n_outputs],
        })
        .collect()
}

fn score_sample(sample: &Sample, scorers: &mut [Scorer]) -> Vec<Outcome> {
    scorers.iter_mut().flat_map(|s| s.score(sample)).collect()
}

fn manifest(cfg: &EvalConfig) -> Result<Value> {
    let mut manifest = manifest_core(cfg)?;
    if let Some(shard) = cfg.shard {
        manifest["shard"] = Value::from(shard.to_string());
    }
    if let Some(export) = cfg.judged.as_ref().and_then(|j| j.export.as_ref()) {
        manifest["batch"] = export.manifest_json();
    }
    Ok(manifest)
}

fn manifest_core(cfg: &EvalConfig) -> Result<Value> {
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
        })).chain(cfg.judged.iter().flat_map(|j| j.metrics.iter().map(move |m| json!({
            "id": m.id().to_string(),
            "params": m.params().into_iter().map(|(k, v)| (k.to_string(), Value::from(v))).collect::<serde_json::Map<_, _>>(),
            "signature": judged_signature(j, m),
            "outputs": m.outputs(),
        })))).collect::<Vec<_>>(),
        "judge": cfg.judged.as_ref().map(|j| json!({
            "spec": j.judge_spec.to_string(),
            "identity": j.judge.identity(),
            "sampling": {"temperature": 0.0, "seed": 0, "votes": "temperature 0.7, seeds 0..n"},
            "embedder": j.embedder.as_ref().map(|(e, spec)| json!({"spec": spec.to_string(), "identity": e.identity()})),
            "prompts": j.prompts.iter().map(|p| json!({"id": p.id.name(), "version": p.version, "sha256": p.hash})).collect::<Vec<_>>(),
        })),
    }))
}

/// The metric's signature with the models that judged it.
fn judged_signature(j: &JudgedRun, m: &assay_metrics::judged::JudgedMetric) -> String {
    let identity = j.judge.identity();
    let mut sig = m
        .signature(&j.prompts)
        .with("judge", &j.judge_spec)
        .with("base_url", &identity.endpoint)
        .with("judge_settings", &identity.settings)
        .with("seed", 0);
    if m.needs_embedder() {
        if let Some((_, spec)) = &j.embedder {
            sig = sig.with("embedder", spec);
        }
    }
    sig.to_string()
}
