//! What follows a run, from Python: `calibrate`, `compare`, `report` and
//! the gates of `assert_scores`, each the same library call the command
//! line makes (`assay-calibrate`, `assay-report`), returning Python
//! objects.

use crate::convert::{calibrate_error, parse, report_error, to_python, UsageError};
use crate::evaluate::drive;
use crate::options::Keywords;
use assay_calibrate::calibrate::{CalibrateOptions, Data};
use assay_config::{EvalOption, Field};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::path::PathBuf;

/// Refits the grounding verdict on labelled rows (as `assay align`):
/// the built-in set `set` or the JSONL `data`, label field `labels`;
/// writes the alignment file `out` and returns what it holds.
#[pyfunction]
#[pyo3(signature = (out, set=None, data=None, labels=None, true_means_supported=false))]
pub fn align(
    py: Python<'_>,
    out: PathBuf,
    set: Option<String>,
    data: Option<PathBuf>,
    labels: Option<String>,
    true_means_supported: bool,
) -> PyResult<Py<PyAny>> {
    let data = match (set, data) {
        (Some(name), None) => Data::Set(name),
        (None, Some(path)) => Data::File(path),
        _ => return Err(UsageError::new_err("give one of set= or data=")),
    };
    let options = assay_calibrate::align::AlignOptions {
        data,
        labels,
        true_means_supported,
        out,
    };
    let done = py
        .detach(|| assay_calibrate::align::align(&options))
        .map_err(calibrate_error)?;
    let value = serde_json::to_value(&done.alignment)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    to_python(py, &value)
}

/// Writes `DIR/report.html` for the run directory `dir` and returns its
/// path.
#[pyfunction]
#[pyo3(signature = (dir, input_format=None))]
pub fn report(py: Python<'_>, dir: PathBuf, input_format: Option<&str>) -> PyResult<PathBuf> {
    let format = parse(Field::Eval(EvalOption::InputFormat), input_format)?;
    py.detach(|| assay_report::html::write(&dir, format))
        .map_err(report_error)
}

/// Compares the runs in `a` and `b` sample by sample (as `assay compare`)
/// and returns the comparison as a dict.
#[pyfunction]
#[pyo3(signature = (a, b, top=10))]
pub fn compare(py: Python<'_>, a: PathBuf, b: PathBuf, top: usize) -> PyResult<Py<PyAny>> {
    let comparison = py
        .detach(|| assay_report::compare::compare(&a, &b, top))
        .map_err(report_error)?;
    let value =
        serde_json::to_value(&comparison).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    to_python(py, &value)
}

/// Runs a judged metric over human-labelled rows (a built-in `set` or a
/// `data` file with a `labels` field) and returns `calibration.json`'s
/// content as a dict, as `assay calibrate` does. `options` maps
/// `assay.calibrate`'s keyword names to their values: `metric`, `set` or
/// `data`, `labels`, `high_score_means`, `task`, `limit`, `offset`,
/// `out`, `threads`, and the judge keywords of `evaluate`.
#[pyfunction]
#[pyo3(signature = (options, progress=None, stop=None))]
pub fn calibrate(
    py: Python<'_>,
    options: &Bound<'_, PyAny>,
    progress: Option<Py<PyAny>>,
    stop: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let mut keywords = Keywords::new(options)?;
    let data = match (keywords.take("set")?, keywords.take("data")?) {
        (Some(name), None) => Data::Set(name),
        (None, Some(path)) => Data::File(path),
        _ => return Err(UsageError::new_err("give one of set=NAME or data=FILE")),
    };
    let options = CalibrateOptions {
        metric: keywords
            .take("metric")?
            .ok_or_else(|| UsageError::new_err("metric: no metric given"))?,
        data,
        labels: keywords.take("labels")?,
        high_score_means: keywords.take("high_score_means")?,
        task: keywords.take("task")?,
        limit: keywords.take("limit")?,
        offset: keywords.take("offset")?.unwrap_or(0),
        out: keywords.field(Field::Eval(EvalOption::Out))?,
        threads: keywords.field(Field::Eval(EvalOption::Threads))?,
        judge: keywords.declared()?,
    };
    keywords.finish()?;
    let done = drive(py, progress, stop, move |observer, cancel| {
        assay_calibrate::calibrate::calibrate(&options, observer, cancel)
    })?
    .map_err(calibrate_error)?;
    to_python(py, &done.doc)
}
