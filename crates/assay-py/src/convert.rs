//! Between Python and the libraries: the exceptions a call raises, the
//! engine's and the configuration's errors as those exceptions, an
//! argument parsed into its type, and JSON values as Python objects. The
//! calls (`evaluate`, `review`) and their keywords (`options`) share these.

use assay_config::{Field, UsageError as Mistake, Words};
use assay_engine::EngineError;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use serde_json::Value;
use std::str::FromStr;

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

/// A mistake in the caller's arguments, named as Python names them
/// (`params["rouge.types"]`, `judge`).
pub(crate) fn usage(e: Mistake) -> PyErr {
    UsageError::new_err(e.in_words(Words::Python))
}

/// `raw`, the value of `field` when given, parsed into its type.
pub(crate) fn parse<T: FromStr>(field: Field, raw: Option<&str>) -> PyResult<Option<T>>
where
    T::Err: std::fmt::Display,
{
    raw.map(|r| r.parse::<T>().map_err(|e| usage(Mistake::of(field, e))))
        .transpose()
}

/// A JSON value as the Python object `json.loads` would give.
pub(crate) fn to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_py_any(py)?,
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_py_any(py)?,
            (None, Some(u)) => u.into_py_any(py)?,
            _ => n.as_f64().unwrap_or(f64::NAN).into_py_any(py)?,
        },
        Value::String(s) => s.into_py_any(py)?,
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_python(py, v)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

pub(crate) fn report_error(e: assay_report::Error) -> PyErr {
    match e {
        assay_report::Error::Engine(e) => engine_error(e),
        e if e.is_usage() => UsageError::new_err(e.to_string()),
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

pub(crate) fn calibrate_error(e: assay_calibrate::Error) -> PyErr {
    match e {
        assay_calibrate::Error::Engine(e) => engine_error(e),
        assay_calibrate::Error::Config(e) => usage(e),
        e if e.is_usage() => UsageError::new_err(e.to_string()),
        e => PyRuntimeError::new_err(e.to_string()),
    }
}

/// An evaluation's error as Python raises it.
pub(crate) fn eval_error(e: assay_run::Error) -> PyErr {
    match e {
        assay_run::Error::Config(e) => usage(e),
        assay_run::Error::Engine(e) => engine_error(e),
        assay_run::Error::Calibration(e) => calibrate_error(e),
        assay_run::Error::Report(e) => report_error(e),
    }
}
