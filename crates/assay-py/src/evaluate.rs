//! `evaluate`: one run of the engine from Python's keywords. The models are
//! connected and the run goes on with the GIL released; the calling thread
//! wakes every 100 ms to hand progress to the Python callback and to check
//! for Ctrl-C, which cancels the run (what is done is kept) and is raised
//! as `KeyboardInterrupt` once the run has stopped.

use assay_config::{EvalConfig, JudgeConfig};
use assay_core::Coverage;
use assay_engine::{CancelToken, EngineError, Observer, Progress, Reasons};
use assay_llm::{CacheLocation, CallKind, Secret};
use assay_metrics::judged::Protocol;
use assay_metrics::Setting;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

create_exception!(
    assay,
    UsageError,
    PyValueError,
    "A bad metric, parameter, model spec, option or input, found before any judge call."
);
create_exception!(
    assay,
    JudgeUnavailableError,
    PyRuntimeError,
    "The judge cannot serve the run: it refused the credentials, or it answered nothing and \
     failed in a way no retry fixes (connection refused, unknown host, TLS, unknown model). \
     The run stopped at once and kept what it had done; the same call resumes."
);
create_exception!(
    assay,
    AuthError,
    JudgeUnavailableError,
    "The judge refused the credentials; the run stopped and kept what it had done."
);

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

/// Sends the run's progress to the waiting thread, at most every [`TICK`].
struct Forward {
    events: Sender<Event>,
    last: Option<Instant>,
}

impl Observer for Forward {
    fn progress(&mut self, p: &Progress<'_>) {
        if self.last.is_some_and(|t| t.elapsed() < TICK) {
            return;
        }
        self.last = Some(Instant::now());
        let mut coverage = Coverage::default();
        for acc in p.outputs {
            coverage += acc.coverage();
        }
        let usage = p
            .usage
            .map(|(ledger, prices)| ledger.total(CallKind::Chat, prices));
        let _ = self.events.send(Event::Progress(Snapshot {
            rows: p.rows,
            bytes_read: p.bytes_read,
            total_bytes: p.total_bytes,
            coverage,
            calls: usage.as_ref().map_or(0, |u| u.requests),
            cache_hits: usage.as_ref().map_or(0, |u| u.cache_hits),
            prompt_tokens: usage.as_ref().map_or(0, |u| u.prompt_tokens),
            completion_tokens: usage.as_ref().map_or(0, |u| u.completion_tokens),
            cost: usage.and_then(|u| u.cost),
        }));
    }

    fn note(&mut self, message: &str) {
        let _ = self.events.send(Event::Note(message.to_string()));
    }
}

pub(crate) fn engine_error(e: EngineError) -> PyErr {
    match e {
        EngineError::Usage(_) | EngineError::Locked { .. } => UsageError::new_err(e.to_string()),
        EngineError::JudgeUnavailable {
            kind: assay_core::FailureKind::Auth,
            ..
        } => AuthError::new_err(e.to_string()),
        EngineError::JudgeUnavailable { .. } => JudgeUnavailableError::new_err(e.to_string()),
        EngineError::Output(_) | EngineError::Internal(_) => PyRuntimeError::new_err(e.to_string()),
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

/// Runs one evaluation and returns `summary.json`'s content. `params` are
/// `("METRIC.PARAM", value)` pairs; `cache` is a path, or `None` for the
/// default place, unless `no_cache`. `progress(kind, payload)` is called
/// with `("progress", dict)` and `("note", str)`. `stop` (a
/// `threading.Event`) stops the run like Ctrl-C once set: another thread's
/// way to cancel it.
#[pyfunction]
#[pyo3(signature = (
    data, metrics, params, out, *, input_format=None, strict=false, threads=None,
    force_new=false, shard=None, judge=None, embedder=None, base_url=None, api_key=None, concurrency=16,
    rpm=None, tpm=None, max_retries=None, timeout=None, cache=None, no_cache=false,
    prompts=None, prices=Vec::new(), repeats=1, reasons="composed", protocol=None, progress=None, stop=None
))]
#[allow(clippy::too_many_arguments)]
pub fn evaluate(
    py: Python<'_>,
    data: String,
    metrics: Vec<String>,
    params: Vec<(String, String)>,
    out: PathBuf,
    input_format: Option<String>,
    strict: bool,
    threads: Option<usize>,
    force_new: bool,
    shard: Option<String>,
    judge: Option<String>,
    embedder: Option<String>,
    base_url: Option<String>,
    api_key: Option<String>,
    concurrency: usize,
    rpm: Option<u32>,
    tpm: Option<u32>,
    max_retries: Option<u32>,
    timeout: Option<f64>,
    cache: Option<PathBuf>,
    no_cache: bool,
    prompts: Option<PathBuf>,
    prices: Vec<String>,
    repeats: u32,
    reasons: &str,
    protocol: Option<&str>,
    progress: Option<Py<PyAny>>,
    stop: Option<Py<PyAny>>,
) -> PyResult<String> {
    let settings = params
        .iter()
        .map(|(k, v)| Setting::new(k, v))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| UsageError::new_err(e.to_string()))?;
    let reasons = match reasons {
        "composed" => Reasons::Composed,
        "llm" => Reasons::Llm,
        other => {
            return Err(UsageError::new_err(format!(
                "reasons={other:?}: expected \"composed\" or \"llm\""
            )))
        }
    };
    let protocol = parse_protocol(protocol)?;
    let config = EvalConfig {
        data,
        metrics,
        settings,
        out: Some(out),
        input_format,
        strict,
        threads,
        force_new,
        shard,
        judge: JudgeConfig {
            judge,
            embedder,
            base_url,
            api_key: api_key.map(Secret::new),
            concurrency,
            rpm,
            tpm,
            max_retries,
            timeout,
            cache: cache_location(cache, no_cache),
            prompts,
            prices,
            repeats,
            batch_export: false,
            reasons,
            protocol,
        },
    };
    // Connecting may load a local model: seconds, without the GIL.
    let options = py
        .detach(|| assay_config::resolve(config))
        .map_err(|e| UsageError::new_err(e.to_string()))?;
    let summary = drive(py, progress, stop, move |observer, cancel| {
        assay_engine::run_blocking(&options, observer, cancel)
    })?
    .map_err(engine_error)?;
    serde_json::to_string(&summary).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// `protocol=` as Python gives it.
pub(crate) fn parse_protocol(protocol: Option<&str>) -> PyResult<Option<Protocol>> {
    protocol
        .map(|p| p.parse::<Protocol>())
        .transpose()
        .map_err(|e| UsageError::new_err(format!("protocol={e}")))
}

/// `cache=` and `no_cache=` as one location.
pub(crate) fn cache_location(cache: Option<PathBuf>, no_cache: bool) -> CacheLocation {
    match (no_cache, cache) {
        (true, _) => CacheLocation::Disabled,
        (false, Some(path)) => CacheLocation::Path(path),
        (false, None) => CacheLocation::Default,
    }
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
            let mut forward = Forward { events, last: None };
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
/// `assay merge`) and returns the merged `summary.json`'s content. `input`
/// is this machine's copy of the input, when the shards ran elsewhere.
#[pyfunction]
#[pyo3(signature = (dirs, out, input=None))]
pub fn merge(
    py: Python<'_>,
    dirs: Vec<PathBuf>,
    out: PathBuf,
    input: Option<PathBuf>,
) -> PyResult<String> {
    if dirs.is_empty() {
        return Err(UsageError::new_err("merge: no shard directories given"));
    }
    py.detach(|| assay_engine::merge::merge(&dirs, &out, input.as_deref()))
        .map_err(engine_error)?;
    std::fs::read_to_string(out.join(assay_engine::rundir::SUMMARY))
        .map_err(|e| PyRuntimeError::new_err(format!("{}: {e}", out.display())))
}
