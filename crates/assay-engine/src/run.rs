//! Runs metrics over a dataset: rows are read in batches, scored on all
//! worker threads, and written to `results.jsonl` in row order before the
//! next batch is read, so memory stays flat and finished work is on disk.
//!
//! With judged metrics, rows are read as work frees up instead: a bounded
//! number of samples is in flight on a tokio runtime (4 x `--concurrency`
//! with an HTTP judge, whose limiter holds the requests to `--concurrency`;
//! one with an in-process judge, which computes one call at a time),
//! each sample's judge steps start as their inputs are ready, and a
//! sample's outcomes are appended (whole lines, flushed) as soon as it
//! completes, in completion order. Lexical metrics of the same run are
//! scored when the row is read.
//!
//! A resumed run (see [`crate::rundir`]) writes only the (sample, output,
//! repeat) slots its `results.jsonl` lacks, so each is written exactly once
//! however often the run is killed; the kept records feed the summary.
//! Rows already done are still scored lexically (cheap), because corpus
//! scores need every row. Ctrl-C stops taking rows, abandons the calls in
//! flight (finished ones are in the cache), and writes what is done with
//! `"complete": false`.

use crate::cancel::CancelToken;
use crate::error::{EngineError, OutputContext, Result};
use crate::judging::judge_sample;
use crate::log::{
    EmbedderRecord, FileRecord, InputRecord, JudgeRecord, MetricRecord, OutputSummary, OutputUsage,
    PromptRecord, RagasSummary, RepeatSpread, RunManifest, RunSummary, Sampling,
};
use crate::observer::{Observer, Progress};
use crate::options::{JudgedRun, OutputName, Reasons, RunOptions, Strictness};
use crate::rundir::{Existing, RunDir, FORMAT_VERSION, MANIFEST, RESULTS, SUMMARY};
use assay_core::{
    dataset, Accumulator, Failure, FailureKind, Format, Outcome, OutcomeRecord, Row, Sample, Stitch,
};
use assay_llm::{CallKind, ChatModel, Embedder, Latency, PriceTable, UsageLedger, UsageSummary};
use assay_metrics::judged::{fitness, measured, reason, PromptId};
use assay_metrics::{Corpus, Metric, Scorer};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// Rows scored between two writes of `results.jsonl`.
const BATCH: usize = 1024;

/// The outputs of a run and the slot of each (output, repeat) in a row:
/// lexical outputs first, then the judged outputs of repeat 0, 1, ...
struct Layout {
    names: Vec<OutputName>,
    n_lexical: usize,
    repeats: u32,
}

impl Layout {
    fn n_judged(&self) -> usize {
        self.names.len() - self.n_lexical
    }

    fn n_slots(&self) -> usize {
        self.n_lexical + self.n_judged() * self.repeats as usize
    }

    /// The slots of repeat `repeat`'s judged outputs.
    fn judged(&self, repeat: u32) -> Range<usize> {
        let first = self.n_lexical + repeat as usize * self.n_judged();
        first..first + self.n_judged()
    }

    /// The slot of `output`'s repeat `repeat` (lexical outputs have one).
    fn slot(&self, output: usize, repeat: u32) -> usize {
        match output.checked_sub(self.n_lexical) {
            None => output,
            Some(j) => self.judged(repeat).start + j,
        }
    }

    /// The output and repeat of `slot`.
    fn output_of(&self, slot: usize) -> (usize, u32) {
        match slot.checked_sub(self.n_lexical) {
            None => (slot, 0),
            Some(j) => (
                self.n_lexical + j % self.n_judged(),
                (j / self.n_judged()) as u32,
            ),
        }
    }
}

/// The slots of a row that `results.jsonl` already holds (resumed runs).
struct Done {
    sample_id: String,
    slots: Vec<bool>,
}

/// Which slots of which rows are written, and their outcomes counted per
/// output.
struct Slots {
    layout: Layout,
    /// One per output, over all repeats.
    accumulators: Vec<Accumulator>,
    /// One per judged slot, when there are several repeats.
    by_repeat: Vec<Accumulator>,
    done: HashMap<u64, Done>,
    /// Each output's index, by name.
    index: HashMap<String, usize>,
}

impl Slots {
    fn new(layout: Layout) -> Slots {
        let index = layout
            .names
            .iter()
            .enumerate()
            .map(|(i, o)| (o.name.clone(), i))
            .collect();
        let by_repeat = if layout.repeats > 1 {
            vec![Accumulator::default(); layout.n_slots() - layout.n_lexical]
        } else {
            Vec::new()
        };
        Slots {
            accumulators: vec![Accumulator::default(); layout.names.len()],
            by_repeat,
            done: HashMap::new(),
            index,
            layout,
        }
    }

    /// Marks the slot of `rec`, a record of the run being resumed, as
    /// written and counts it (once, however often it is there); a record
    /// of an output this run does not have is refused, named.
    fn keep(&mut self, rec: &OutcomeRecord) -> std::result::Result<(), String> {
        let output = self.index.get(rec.metric.as_str()).copied();
        let repeat = rec.repeat.unwrap_or(0);
        let slot = match output {
            Some(o)
                if (o < self.layout.n_lexical && repeat == 0)
                    || (o >= self.layout.n_lexical && repeat < self.layout.repeats) =>
            {
                self.layout.slot(o, repeat)
            }
            _ => {
                return Err(format!(
                    "row {}: output '{}' (repeat {repeat}) is not one of this run's",
                    rec.row, rec.metric
                ))
            }
        };
        let n_slots = self.layout.n_slots();
        let done = self.done.entry(rec.row).or_insert_with(|| Done {
            sample_id: rec.sample_id.clone(),
            slots: vec![false; n_slots],
        });
        if !std::mem::replace(&mut done.slots[slot], true) {
            self.count(slot, |acc| acc.add_record(rec));
        }
        Ok(())
    }

    /// Adds to the accumulators of `slot`.
    fn count(&mut self, slot: usize, add: impl Fn(&mut Accumulator)) {
        let (output, _) = self.layout.output_of(slot);
        add(&mut self.accumulators[output]);
        if let Some(acc) = slot
            .checked_sub(self.layout.n_lexical)
            .and_then(|j| self.by_repeat.get_mut(j))
        {
            add(acc);
        }
    }

    /// Whether any of `slots` of `row` is still to be written.
    fn missing(&self, row: u64, slots: Range<usize>) -> bool {
        self.done
            .get(&row)
            .is_none_or(|d| d.slots[slots].iter().any(|done| !done))
    }
}

/// Where the rows' outcomes go: each slot of each row exactly once.
struct Sink {
    dir: RunDir,
    slots: Slots,
    /// Refilled for each outcome written, so that its strings are
    /// allocated once per run.
    record: OutcomeRecord,
}

impl Sink {
    /// Opens the run directory at `out` for `manifest` and counts the
    /// records a run being resumed left there, one at a time as they are
    /// read (never all at once: memory stays flat however many are done).
    fn open(
        out: &std::path::Path,
        manifest: &RunManifest,
        existing: Existing,
        observer: &mut dyn Observer,
        layout: Layout,
    ) -> Result<Sink> {
        let mut slots = Slots::new(layout);
        let mut refused = None;
        let dir = RunDir::open(out, manifest, existing, observer, &mut |rec| {
            if refused.is_none() {
                refused = slots.keep(&rec).err();
            }
        })?;
        if let Some(why) = refused {
            return Err(EngineError::Usage(format!(
                "{}: {why}",
                out.join(RESULTS).display()
            )));
        }
        Ok(Sink {
            dir,
            slots,
            record: OutcomeRecord::default(),
        })
    }

    /// Appends `outcomes` to the slots starting at `first`, skipping those
    /// already written.
    fn write(&mut self, id: &str, row: u64, first: usize, outcomes: Vec<Outcome>) -> Result<()> {
        let done = self.slots.done.get(&row);
        if let Some(d) = done.filter(|d| d.sample_id != id) {
            return Err(EngineError::Usage(format!(
                "row {row} is sample '{}' in {} but '{id}' in the input: the input changed \
                 (--force-new to start over)",
                d.sample_id,
                self.dir.path().display()
            )));
        }
        let todo: Vec<(usize, Outcome)> = outcomes
            .into_iter()
            .enumerate()
            .map(|(k, outcome)| (first + k, outcome))
            .filter(|(slot, _)| done.is_none_or(|d| !d.slots[*slot]))
            .collect();
        let Sink { dir, slots, record } = self;
        for (slot, outcome) in todo {
            let (output, repeat) = slots.layout.output_of(slot);
            record.refill(id, row, &slots.layout.names[output].name, outcome);
            record.set_repeat(repeat);
            dir.append(record)?;
            slots.count(slot, |acc| acc.add_record(record));
        }
        Ok(())
    }
}

/// Where progress goes: the caller's observer, with what the engine knows
/// about the input's size and the judge's usage.
struct Reporter<'a> {
    observer: &'a mut dyn Observer,
    total_bytes: Option<u64>,
    judged: Option<(Arc<UsageLedger>, &'a PriceTable)>,
}

impl Reporter<'_> {
    fn update(&mut self, rows: u64, bytes_read: u64, outputs: &[Accumulator]) {
        self.observer.progress(&Progress {
            rows,
            bytes_read,
            total_bytes: self.total_bytes,
            outputs,
            usage: self.judged.as_ref().map(|(l, p)| (l.as_ref(), *p)),
        });
    }
}

/// Runs `options` on a runtime of its own (`options.threads` workers when
/// metrics are judged), resuming the run already in its directory if
/// there is one. Call it from a plain thread; inside an async runtime
/// use [`run`].
pub fn run_blocking(
    options: &RunOptions,
    observer: &mut dyn Observer,
    cancel: &CancelToken,
) -> Result<RunSummary> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.threads.max(1))
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let ended = rt.block_on(run(options, observer, cancel));
    // Calls abandoned by a cancel are not waited for (an in-process model
    // may be mid-answer): nothing would record their answers.
    rt.shutdown_background();
    ended
}

/// Runs `options` on the caller's async runtime, resuming the run already
/// in its directory if there is one. Lexical scoring runs on scoped
/// threads of its own; judged samples are tasks of the current runtime.
/// A cancelled run returns its summary with `complete: false`.
pub async fn run(
    options: &RunOptions,
    observer: &mut dyn Observer,
    cancel: &CancelToken,
) -> Result<RunSummary> {
    let cfg = options;
    let mut rows = dataset::open_with(&cfg.source, cfg.input_format, &cfg.input)
        .map_err(|e| EngineError::Usage(e.to_string()))?;
    // Before the run directory: a run over nothing is an error, not a
    // table of zeros.
    rows.check_not_empty()
        .map_err(|e| EngineError::Usage(e.to_string()))?;
    let ledger = Arc::new(UsageLedger::new());
    if let Some(judged) = &cfg.judged {
        if cfg.existing == Existing::Resume {
            recall(judged, &cfg.out);
        }
        // Before the manifest: what the setup answers is part of it.
        crate::judging::set_up(judged, &ledger).await?;
    }
    let manifest = manifest(cfg, rows.format())?;

    let names = cfg.outputs();
    let n_lexical = cfg.metrics.iter().map(|m| m.outputs().len()).sum();
    let layout = Layout {
        names,
        n_lexical,
        repeats: cfg.judged.as_ref().map_or(1, |j| j.repeats),
    };
    let mut sink = Sink::open(&cfg.out, &manifest, cfg.existing, observer, layout)?;
    let threads = cfg.threads.max(1);
    let mut scorers: Vec<Vec<Scorer>> = (0..threads)
        .map(|_| cfg.metrics.iter().map(Metric::scorer).collect())
        .collect();
    let total_bytes = cfg
        .source
        .file()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| m.len());
    let mut progress = Reporter {
        observer,
        total_bytes,
        judged: cfg
            .judged
            .as_ref()
            .map(|j| (Arc::clone(&ledger), &j.prices)),
    };
    let (n_rows, stop) = match &cfg.judged {
        None => run_lexical(
            cfg,
            &mut rows,
            &mut scorers,
            &mut sink,
            &mut progress,
            cancel,
        )?,
        Some(judged) => {
            let run = JudgedRows {
                cfg,
                judged,
                ledger: &ledger,
                cancel,
            };
            run.run(&mut rows, &mut scorers[0], &mut sink, &mut progress)
                .await?
        }
    };
    progress.observer.finish();
    sink.dir.flush()?;
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
    let Sink {
        dir,
        record: _,
        slots:
            Slots {
                layout,
                accumulators,
                by_repeat,
                ..
            },
    } = sink;
    let summaries = Accumulator::summaries(&accumulators.iter().collect::<Vec<_>>());
    let mut summary = RunSummary {
        format_version: FORMAT_VERSION,
        rows: n_rows,
        outputs: layout
            .names
            .iter()
            .zip(summaries)
            .enumerate()
            .map(|(i, (o, summary))| OutputSummary {
                name: o.name.clone(),
                metric: o.metric.clone(),
                direction: o.direction,
                summary,
                usage: cfg
                    .judged
                    .as_ref()
                    .filter(|_| i >= layout.n_lexical)
                    .map(|j| output_usage(&ledger, &o.metric, &j.prices)),
                repeats: (i >= layout.n_lexical && !by_repeat.is_empty()).then(|| {
                    RepeatSpread::of(
                        (0..layout.repeats)
                            .map(|r| &by_repeat[layout.slot(i, r) - layout.n_lexical]),
                    )
                }),
            })
            .collect(),
        corpus: corpora.iter().flat_map(Corpus::finalize).collect(),
        corpus_note: None,
        usage: cfg.judged.as_ref().map(|j| usage_json(j, &ledger)),
        ragas_score: None,
        agreement: cfg.judged.as_ref().map(|j| {
            // The committed figures are the built-in lexical model's and
            // the prompt files' own: a metric a given grounding model or an
            // alignment answers, or whose judge reads an alignment's
            // demonstrations, is not measured.
            j.metrics
                .iter()
                .filter(|m| j.prompts.builtin_grounding() || !m.asks_grounding(&j.prompts))
                .filter(|m| !m.uses_demonstrations(&j.prompts))
                .flat_map(|m| measured::of(m.id().name(), j.prompts.protocol()))
                .cloned()
                .collect()
        }),
        fitness: cfg.judged.as_ref().map(|j| {
            j.metrics
                .iter()
                .filter_map(|m| fitness::of(m.id().name(), j.prompts.protocol()))
                .cloned()
                .collect()
        }),
        calibrated: None,
        input: rows.report(),
        complete: stop.is_none(),
    };
    if cfg.judged.is_some() {
        summary.ragas_score = Some(RagasSummary::of(&summary.outputs[layout.n_lexical..]));
    }
    dir.write_json(SUMMARY, &summary)?;
    match stop {
        Some(Stop::Strict(message)) => Err(EngineError::Usage(format!(
            "{message}\n(stopped by --strict; {n_rows} rows before it are in {})",
            dir.path().display()
        ))),
        Some(Stop::Fatal(stop)) => Err(stop.into_engine_error(&format!(
            "{n_rows} finished rows are in {}",
            dir.path().display()
        ))),
        Some(Stop::Interrupted) | None => Ok(summary),
    }
}

/// Hands each judged metric what the manifest of the run in `out`, if
/// any, recorded of its parameters. A missing or unreadable manifest is
/// left to [`RunDir::open`] to report.
fn recall(judged: &JudgedRun, out: &std::path::Path) {
    let Ok(old) = crate::log::read_json::<RunManifest>(&out.join(MANIFEST)) else {
        return;
    };
    for metric in &judged.metrics {
        let id = metric.id().to_string();
        for record in old.metrics.iter().filter(|m| m.id == id) {
            let params = record
                .params
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect();
            metric.recall(&params);
        }
    }
}

/// Why a run ended before its input did.
enum Stop {
    /// A bad row under `--strict`.
    Strict(String),
    /// A judge error that every later call would repeat.
    Fatal(crate::judging::Unavailable),
    /// The run's [`CancelToken`] (Ctrl-C on the command line).
    Interrupted,
}

/// The lexical-only loop: batches scored on all threads, in row order.
fn run_lexical(
    cfg: &RunOptions,
    rows: &mut dataset::Rows,
    scorers: &mut [Vec<Scorer>],
    sink: &mut Sink,
    progress: &mut Reporter<'_>,
    cancel: &CancelToken,
) -> Result<(u64, Option<Stop>)> {
    let mut n_rows = 0u64;
    let mut batch: Vec<Row> = Vec::with_capacity(BATCH);
    let mut stop: Option<Stop> = None;
    loop {
        if cancel.is_cancelled() {
            stop = Some(Stop::Interrupted);
            break;
        }
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
        let scored = score_batch(&batch, scorers, sink.slots.layout.n_slots());
        for (row, outcomes) in batch.iter().zip(scored) {
            let (id, row_no) = row_id(row);
            sink.write(&id, row_no, 0, outcomes)?;
        }
        sink.dir.flush()?;
        n_rows += batch.len() as u64;
        progress.update(n_rows, rows.bytes_read(), &sink.slots.accumulators);
        if stop.is_some() {
            break;
        }
    }
    Ok((n_rows, stop))
}

/// Whether `row` belongs to the run's `--shard` (every row without one).
fn in_shard(cfg: &RunOptions, row: &Row) -> bool {
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

/// The judged outcomes of one row, per repeat (`None`: deferred to the
/// batch file), or the run-fatal error.
type RowJudged = (
    String,
    u64,
    Result<Vec<(u32, Option<Vec<Outcome>>)>, crate::judging::Unavailable>,
);

/// The loop of a run with judged metrics.
struct JudgedRows<'a> {
    cfg: &'a RunOptions,
    judged: &'a Arc<JudgedRun>,
    ledger: &'a Arc<UsageLedger>,
    cancel: &'a CancelToken,
}

impl JudgedRows<'_> {
    async fn run(
        &self,
        rows: &mut dataset::Rows,
        scorers: &mut [Scorer],
        sink: &mut Sink,
        progress: &mut Reporter<'_>,
    ) -> Result<(u64, Option<Stop>)> {
        // An in-process judge computes one call at a time: one sample at a
        // time keeps a sample's calls back to back, so its prefix cache
        // holds what they share (the contexts of per-item questions).
        let max_in_flight = match self.judged.judge_spec {
            crate::ModelChoice::Local(_) => 1,
            crate::ModelChoice::Http(_) => self.judged.options.concurrency.saturating_mul(4).max(1),
        };
        let mut in_flight: tokio::task::JoinSet<RowJudged> = tokio::task::JoinSet::new();
        let mut n_rows = 0u64;
        let mut stop: Option<Stop> = None;
        let mut exhausted = false;
        loop {
            if self.cancel.is_cancelled() {
                stop = Some(Stop::Interrupted);
                break;
            }
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
                        let n_slots = sink.slots.layout.n_slots();
                        sink.write(&e.row.to_string(), e.row, 0, vec![failed; n_slots])?;
                        n_rows += 1;
                    }
                    Ok((sample, _)) => {
                        let lexical = score_sample(&sample, scorers);
                        sink.write(&sample.id, sample.row, 0, lexical)?;
                        let todo: Vec<u32> = (0..self.judged.repeats)
                            .filter(|r| {
                                sink.slots.missing(sample.row, sink.slots.layout.judged(*r))
                            })
                            .collect();
                        if todo.is_empty() {
                            n_rows += 1;
                            continue;
                        }
                        let (id, row) = (sample.id.clone(), sample.row);
                        let (judged, ledger) = (Arc::clone(self.judged), Arc::clone(self.ledger));
                        let sample = Arc::new(sample);
                        in_flight.spawn(async move {
                            let mut done = Vec::with_capacity(todo.len());
                            for r in todo {
                                let outcomes = judge_sample(
                                    Arc::clone(&judged),
                                    Arc::clone(&ledger),
                                    Arc::clone(&sample),
                                    r,
                                )
                                .await;
                                match outcomes {
                                    Ok(o) => done.push((r, o)),
                                    Err(e) => return (id, row, Err(e)),
                                }
                            }
                            (id, row, Ok(done))
                        });
                    }
                }
            }
            sink.dir.flush()?;
            let joined = tokio::select! {
                joined = in_flight.join_next() => joined,
                () = self.cancel.cancelled() => continue,
            };
            let Some(joined) = joined else {
                break;
            };
            let (id, row, outcomes) =
                joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
            match outcomes {
                Ok(repeats) => {
                    // A repeat deferred to the batch file writes no judged
                    // outcome, so a later round scores it.
                    for (r, outcomes) in repeats {
                        if let Some(outcomes) = outcomes {
                            sink.write(&id, row, sink.slots.layout.judged(r).start, outcomes)?;
                        }
                    }
                    sink.dir.flush()?;
                    n_rows += 1;
                    progress.update(n_rows, rows.bytes_read(), &sink.slots.accumulators);
                }
                Err(e) => {
                    // Every later call would fail the same way: stop now
                    // rather than fail every sample.
                    stop = Some(Stop::Fatal(e));
                    break;
                }
            }
        }
        // Abandoned calls: the answers that came back are in the cache.
        in_flight.abort_all();
        Ok((n_rows, stop))
    }
}

fn input_failure(e: &dyn std::fmt::Display) -> Outcome {
    Outcome::Failed(Failure {
        kind: FailureKind::Input,
        message: e.to_string(),
    })
}

/// Usage per metric and for the run, as `summary.json` shows it. Judge
/// (chat) calls at the top level, embedding requests under `embeddings`.
/// Per metric, the counts, tokens and cost are its share (a call of a step
/// that n metrics read counts 1/n for each, so the shares add up to the
/// run's totals), `alone` counts every call of the steps it read in full,
/// and failures and latency are those of the calls of its steps.
fn usage_json(judged: &JudgedRun, ledger: &UsageLedger) -> Value {
    let prices = &judged.prices;
    let per_metric: serde_json::Map<String, Value> = judged
        .metrics
        .iter()
        .map(|m| {
            let id = m.id().to_string();
            let mut u = metric_usage_json(ledger, &id, CallKind::Chat, prices);
            if ledger.alone(&id, CallKind::Embedding, prices).requests > 0 {
                u["embeddings"] = metric_usage_json(ledger, &id, CallKind::Embedding, prices);
            }
            (id, u)
        })
        .collect();
    let mut run = run_usage_json(ledger, CallKind::Chat, prices);
    if judged.embedder.is_some() {
        run["embeddings"] = run_usage_json(ledger, CallKind::Embedding, prices);
    }
    json!({
        "run": run,
        "per_metric": per_metric,
        "note": "calls count answers (upstream + coalesced + cached); per metric, a call of a step \
                 that n metrics read counts 1/n for each (so figures can be fractional) and \
                 'alone' counts every call of its steps in full",
    })
}

fn run_usage_json(ledger: &UsageLedger, kind: CallKind, prices: &PriceTable) -> Value {
    let total = ledger.total(kind, prices);
    let unshared = ledger.calls_if_unshared(kind);
    let mut v = usage_summary_json(&total);
    v["calls_if_unshared"] = json!(unshared);
    v["saved_by_sharing"] = json!(unshared.saturating_sub(total.requests));
    v
}

fn metric_usage_json(
    ledger: &UsageLedger,
    metric: &str,
    kind: CallKind,
    prices: &PriceTable,
) -> Value {
    let share = ledger.share(metric, kind, prices);
    let alone = ledger.alone(metric, kind, prices);
    json!({
        "calls": share.requests,
        "upstream": share.upstream,
        "cache_hits": share.cache_hits,
        "coalesced": share.coalesced,
        "prompt_tokens": share.prompt_tokens,
        "completion_tokens": share.completion_tokens,
        "cost": share.cost,
        "failures": alone.failures,
        "latency_ms": latency_json(alone.latency.as_ref()),
        "alone": {
            "calls": alone.requests,
            "upstream": alone.upstream,
            "prompt_tokens": alone.prompt_tokens,
            "completion_tokens": alone.completion_tokens,
            "cost": alone.cost,
        },
    })
}

/// A metric's share of the judge and embedding calls together.
fn output_usage(ledger: &UsageLedger, metric: &str, prices: &PriceTable) -> OutputUsage {
    let chat = ledger.share(metric, CallKind::Chat, prices);
    let embed = ledger.share(metric, CallKind::Embedding, prices);
    OutputUsage {
        prompt_tokens: chat.prompt_tokens + embed.prompt_tokens,
        completion_tokens: chat.completion_tokens + embed.completion_tokens,
        cost: chat.cost.zip(embed.cost).map(|(a, b)| a + b),
    }
}

/// Latency percentiles in milliseconds.
fn latency_json(l: Option<&Latency>) -> Value {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    l.map_or(
        Value::Null,
        |l| json!({"p50": ms(l.p50), "p90": ms(l.p90), "p99": ms(l.p99), "max": ms(l.max)}),
    )
}

fn usage_summary_json(u: &UsageSummary) -> Value {
    json!({
        "calls": u.requests,
        "upstream": u.upstream,
        "cache_hits": u.cache_hits,
        "coalesced": u.coalesced,
        "failures": u.failures,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "latency_ms": latency_json(u.latency.as_ref()),
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

fn manifest(cfg: &RunOptions, format: Format) -> Result<RunManifest> {
    let (path, sha256) = match cfg.source.file() {
        Some(p) => (
            p.display().to_string(),
            Some(
                assay_core::hash::sha256_file(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
            ),
        ),
        None => ("-".to_string(), None),
    };
    let lexical = cfg.metrics.iter().map(|m| MetricRecord {
        id: m.id().to_string(),
        params: match m.params_json() {
            Value::Object(params) => params,
            _ => Default::default(),
        },
        signature: m.signature().to_string(),
        outputs: m.outputs(),
    });
    let judged = cfg.judged.iter().flat_map(|j| {
        j.metrics.iter().map(move |m| MetricRecord {
            id: m.id().to_string(),
            params: m
                .params()
                .into_iter()
                .map(|(k, v)| (k.to_string(), Value::from(v)))
                .collect(),
            signature: judged_signature(j, m),
            outputs: m.outputs(),
        })
    });
    Ok(RunManifest {
        format_version: FORMAT_VERSION,
        assay_version: env!("CARGO_PKG_VERSION").to_string(),
        // Set by build.rs when built from a git checkout.
        git_revision: option_env!("ASSAY_GIT_REVISION").map(str::to_string),
        input: InputRecord {
            path,
            sha256,
            format: Some(format),
            references: cfg
                .input
                .references
                .as_deref()
                .map(file_record)
                .transpose()?,
            logs: cfg.input.logs.as_deref().map(file_record).transpose()?,
            stitch: (format == Format::Otlp && cfg.input.stitch == Stitch::Off)
                .then_some(Stitch::Off),
        },
        metrics: lexical.chain(judged).collect(),
        judge: cfg.judged.as_ref().map(|j| JudgeRecord {
            spec: j.judge_spec.to_string(),
            identity: j.judge.identity().clone(),
            sampling: Sampling {
                temperature: 0.0,
                seed: 0,
                votes: "temperature 0.7, seeds 0..n".into(),
                repeats: j.repeats,
                repeat_seeds: "repeat r of a step with n votes: seeds r*n..r*n+n-1".into(),
                protocol: j.prompts.protocol(),
            },
            embedder: j.embedder.as_ref().map(|(e, spec)| EmbedderRecord {
                spec: spec.to_string(),
                identity: e.identity().clone(),
            }),
            prompts: j
                .prompts
                .iter()
                .filter(|p| used_prompt(j, p.id))
                .map(|p| PromptRecord {
                    id: p.id.name().to_string(),
                    version: p.version,
                    sha256: p.hash.clone(),
                })
                .collect(),
        }),
        shard: cfg.shard,
        batch: cfg
            .judged
            .as_ref()
            .and_then(|j| j.export.as_ref())
            .map(|e| e.record()),
        merged_from: None,
    })
}

/// A file the run reads beside its input (`--references`, `--logs`), by
/// its path as given and its content's hash.
fn file_record(path: &std::path::Path) -> Result<FileRecord> {
    Ok(FileRecord {
        path: path.display().to_string(),
        sha256: assay_core::hash::sha256_file(path)
            .with_context(|| format!("cannot read {}", path.display()))?,
    })
}

/// Whether the manifest lists prompt `id`: a shared prompt
/// ([`PromptId::is_shared`]) always, the reason prompt only when `--reasons
/// llm` uses it, and a metric's own prompts only when it runs, so the
/// manifests of other runs stay as they were.
fn used_prompt(j: &JudgedRun, id: PromptId) -> bool {
    if id == reason::OUTCOME_REASON {
        j.reasons == Reasons::Llm
    } else {
        id.is_shared() || j.metrics.iter().any(|m| m.id().prompts().contains(&id))
    }
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
    if j.repeats > 1 {
        sig = sig.with("repeats", j.repeats);
    }
    if j.reasons == Reasons::Llm {
        let p = j.prompts.get(reason::OUTCOME_REASON);
        sig = sig.with("reasons", format!("llm-v{}-{}", p.version, &p.hash[..12]));
    }
    if m.needs_embedder() {
        if let Some((_, spec)) = &j.embedder {
            sig = sig.with("embedder", spec);
        }
    }
    sig.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use assay_metrics::Direction;

    fn layout(lexical: &[&str], judged: &[&str], repeats: u32) -> Layout {
        let names = lexical
            .iter()
            .chain(judged)
            .map(|n| OutputName {
                name: n.to_string(),
                metric: n.to_string(),
                direction: Direction::HigherIsBetter,
            })
            .collect();
        Layout {
            names,
            n_lexical: lexical.len(),
            repeats,
        }
    }

    #[test]
    fn every_output_and_repeat_has_one_slot() {
        let l = layout(
            &["rouge1", "rouge2"],
            &["faithfulness", "bias", "toxicity"],
            3,
        );
        assert_eq!(l.n_slots(), 2 + 3 * 3);
        assert_eq!(l.judged(0), 2..5);
        assert_eq!(l.judged(2), 8..11);
        for slot in 0..l.n_slots() {
            let (output, repeat) = l.output_of(slot);
            assert_eq!(l.slot(output, repeat), slot);
        }
        assert_eq!(l.output_of(9), (3, 2), "bias, third judging");
        let lexical_only = layout(&["bleu"], &[], 1);
        assert_eq!(lexical_only.n_slots(), 1);
        assert_eq!(lexical_only.output_of(0), (0, 0));
    }

    #[test]
    fn the_spread_skips_repeats_that_scored_nothing() {
        let acc = |values: &[f64]| {
            let mut a = Accumulator::default();
            for v in values {
                a.add(&Outcome::scored(*v, json!({})));
            }
            a
        };
        let repeats = [acc(&[0.0, 1.0]), acc(&[]), acc(&[1.0, 1.0])];
        let s = RepeatSpread::of(repeats.iter());
        assert_eq!(s.n, 3);
        assert_eq!(s.means, [Some(0.5), None, Some(1.0)]);
        assert_eq!(s.std_of_means, Some(0.25));
        assert_eq!(s.max_minus_min, Some(0.5));
        let none = RepeatSpread::of([acc(&[])].iter());
        assert_eq!((none.std_of_means, none.max_minus_min), (None, None));
    }
}
