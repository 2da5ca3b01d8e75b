//! `evaluate`: one run of the engine from Python's keywords. The models are
//! connected and the run goes on with the GIL released; the calling thread
//! wakes every 100 ms to hand progress to the Python callback and to check
//! for Ctrl-C, which cancels the run (what is done is kept) and is raised
//! as `KeyboardInterrupt` once the run has stopped.

use crate::convert::{engine_error, eval_error, to_python, usage, UsageError};
use crate::options::Keywords;
use assay_config::{EvalOption, Field, UsageError as Mistake};
use assay_core::{read_results, Coverage};
use assay_engine::{CancelToken, Observer, Progress};
use assay_llm::CallKind;
use assay_report::gates::Verdict;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the waiting thread checks for Ctrl-C and draws progress.
const TICK: Duration = Duration::from_millis(100);

/// What the run reports to the waiting thread.
enum Event {
    Progress(Snapshot),
    Note(String),
}

/// Where the run is: the numbers a progress bar shows.
struct Snapshot {
    rows: u64,
    bytes_read: u64,
    total_bytes: Option<u64>,
    coverage: Coverage,
    calls: u64,
    cache_hits: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    cost: Option<f64>,
}

/// Sends the run's progress to the waiting thread, at most every [`TICK`];
/// the last snapshot held back is sent when the run ends (on drop), so the
/// final counts always arrive.
struct Forward {
    events: Sender<Event>,
    last: Option<Instant>,
    held: Option<Snapshot>,
}

impl Drop for Forward {
    fn drop(&mut self) {
        if let Some(s) = self.held.take() {
            let _ = self.events.send(Event::Progress(s));
        }
    }
}

impl Observer for Forward {
    fn progress(&mut self, p: &Progress<'_>) {
        let snapshot = Forward::snapshot(p);
        if self.last.is_some_and(|t| t.elapsed() < TICK) {
            self.held = Some(snapshot);
            return;
        }
        self.last = Some(Instant::now());
        self.held = None;
        let _ = self.events.send(Event::Progress(snapshot));
    }

    fn note(&mut self, message: &str) {
        let _ = self.events.send(Event::Note(message.to_string()));
    }
}

impl Forward {
    fn snapshot(p: &Progress<'_>) -> Snapshot {
        let mut coverage = Coverage::default();
        for acc in p.outputs {
            coverage += acc.coverage();
        }
        let usage = p
            .usage
            .map(|(ledger, prices)| ledger.total(CallKind::Chat, prices));
        Snapshot {
            rows: p.rows,
            bytes_read: p.bytes_read,
            total_bytes: p.total_bytes,
            coverage,
            calls: usage.as_ref().map_or(0, |u| u.requests),
            cache_hits: usage.as_ref().map_or(0, |u| u.cache_hits),
            prompt_tokens: usage.as_ref().map_or(0, |u| u.prompt_tokens),
            completion_tokens: usage.as_ref().map_or(0, |u| u.completion_tokens),
            cost: usage.and_then(|u| u.cost),
        }
    }
}

fn snapshot_dict<'py>(py: Python<'py>, s: &Snapshot) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("rows", s.rows)?;
    d.set_item("bytes_read", s.bytes_read)?;
    d.set_item("total_bytes", s.total_bytes)?;
    d.set_item("scored", s.coverage.scored)?;
    d.set_item("skipped", s.coverage.skipped)?;
    d.set_item("failed", s.coverage.failed)?;
    d.set_item("calls", s.calls)?;
    d.set_item("cache_hits", s.cache_hits)?;
    d.set_item("prompt_tokens", s.prompt_tokens)?;
    d.set_item("completion_tokens", s.completion_tokens)?;
    d.set_item("cost", s.cost)?;
    Ok(d)
}

/// Runs one evaluation as `assay eval` does ([`assay_run::evaluate`]) and
/// returns its summary (as `summary.json`, with `calibrated` where a
/// calibration was given), its outcome records (as `results.jsonl`, in
/// row order), each gate's `(passed, output or None, line)`, the
/// report's path, if one was written, and a line for each output that
/// scored nothing. `options` maps `assay.evaluate`'s
/// keyword names to their values (read by [`Keywords::after_run`] and
/// [`Keywords::eval`]); its `out` is required. `progress(kind,
/// payload)` is called with `("progress", dict)` and `("note", str)`.
/// `stop` (a `threading.Event`) stops the run like Ctrl-C once set:
/// another thread's way to cancel it.
#[pyfunction]
#[pyo3(signature = (options, progress=None, stop=None))]
pub fn evaluate(
    py: Python<'_>,
    options: &Bound<'_, PyAny>,
    progress: Option<Py<PyAny>>,
    stop: Option<Py<PyAny>>,
) -> PyResult<Evaluated> {
    let mut keywords = Keywords::new(options)?;
    let finish = keywords.after_run()?;
    let config = keywords.eval()?;
    keywords.finish()?;
    if config.options.out.is_none() {
        return Err(usage(Mistake::of(
            Field::Eval(EvalOption::Out),
            "no run directory given",
        )));
    }
    // Resolving may load a local model: seconds, on the worker thread,
    // without the GIL.
    let done = drive(py, progress, stop, move |observer, cancel| {
        assay_run::evaluate(config, &finish, observer, cancel)
    })?
    .map_err(eval_error)?;
    let summary = serde_json::to_value(&done.summary).map_err(internal)?;
    let gates = done
        .gates
        .into_iter()
        .map(|g| (g.verdict == Verdict::Passed, g.output, g.line))
        .collect();
    Ok((
        to_python(py, &summary)?,
        records(py, &done.out)?,
        gates,
        done.report,
        done.unscored,
    ))
}

/// What [`evaluate`] returns to Python.
type Evaluated = (
    Py<PyAny>,
    Py<PyAny>,
    Vec<(bool, Option<String>, String)>,
    Option<PathBuf>,
    Vec<String>,
);

/// The outcome records of the run in `dir`, in row order (and repeat
/// order within a row), as Python dicts.
fn records(py: Python<'_>, dir: &Path) -> PyResult<Py<PyAny>> {
    let path = dir.join(assay_engine::rundir::RESULTS);
    let mut records = if path.exists() {
        read_results(&path).map_err(internal)?.records
    } else {
        Vec::new()
    };
    records.sort_by_key(|r| (r.row, r.repeat.unwrap_or(0)));
    let list = PyList::empty(py);
    for r in &records {
        list.append(to_python(py, &serde_json::to_value(r).map_err(internal)?)?)?;
    }
    Ok(list.into_any().unbind())
}

fn internal(e: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// Runs `work` on its own thread with an observer that forwards progress
/// and a cancel token, while this thread (the GIL released between ticks)
/// hands progress to the Python callback and watches for Ctrl-C and the
/// `stop` event, either of which cancels the work; returns the work's
/// result once it has stopped, or the Python error that stopped it.
pub(crate) fn drive<T: Send + 'static>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    stop: Option<Py<PyAny>>,
    work: impl FnOnce(&mut dyn Observer, &CancelToken) -> T + Send + 'static,
) -> PyResult<T> {
    let cancel = CancelToken::new();
    let (events, received) = mpsc::channel();
    let worker = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            let mut forward = Forward {
                events,
                last: None,
                held: None,
            };
            work(&mut forward, &cancel)
        })
    };
    // Behind a lock only so that the closure run without the GIL may
    // borrow it (a receiver is not `Sync`); nothing else takes the lock.
    let received = Mutex::new(received);
    let mut stopped: Option<PyErr> = None;
    loop {
        let next = py.detach(|| {
            received
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .recv_timeout(TICK)
        });
        match next {
            Ok(event) => {
                if let (Some(callback), None) = (&progress, &stopped) {
                    let shown = match &event {
                        Event::Progress(s) => {
                            callback.call1(py, ("progress", snapshot_dict(py, s)?))
                        }
                        Event::Note(message) => callback.call1(py, ("note", message.as_str())),
                    };
                    // A callback that raises stops the run like Ctrl-C.
                    if let Err(e) = shown {
                        cancel.cancel();
                        stopped = Some(e);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if stopped.is_none() {
            if let Err(e) = py.check_signals() {
                cancel.cancel();
                stopped = Some(e);
            } else if let Some(event) = &stop {
                if event.call_method0(py, "is_set")?.is_truthy(py)? {
                    cancel.cancel();
                    stopped = Some(PyKeyboardInterrupt::new_err(
                        "stopped by the caller; what was done is kept",
                    ));
                }
            }
        }
    }
    let ended = py
        .detach(|| worker.join())
        .map_err(|_| PyRuntimeError::new_err("internal: the run's thread panicked"))?;
    match stopped {
        Some(e) => Err(e),
        None => Ok(ended),
    }
}

/// Merges the run directories of the shards of one run into `out` (as
/// `assay merge`) and returns the merged summary and records, as
/// `evaluate` does, and a line for each output that scored nothing. `input` is this machine's copy of the input, when the
/// shards ran elsewhere.
#[pyfunction]
#[pyo3(signature = (dirs, out, input=None))]
pub fn merge(
    py: Python<'_>,
    dirs: Vec<PathBuf>,
    out: PathBuf,
    input: Option<PathBuf>,
) -> PyResult<(Py<PyAny>, Py<PyAny>, Vec<String>)> {
    if dirs.is_empty() {
        return Err(UsageError::new_err("merge: no shard directories given"));
    }
    py.detach(|| assay_engine::merge::merge(&dirs, &out, input.as_deref()))
        .map_err(engine_error)?;
    let summary = std::fs::read_to_string(out.join(assay_engine::rundir::SUMMARY))
        .map_err(|e| internal(format!("{}: {e}", out.display())))?;
    let summary: assay_engine::RunSummary = serde_json::from_str(&summary).map_err(internal)?;
    let unscored = assay_run::unscored(&summary, &out);
    let summary = serde_json::to_value(&summary).map_err(internal)?;
    Ok((to_python(py, &summary)?, records(py, &out)?, unscored))
}
