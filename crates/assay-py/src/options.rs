//! The options of `assay.evaluate` and `assay.calibrate`, read once from
//! the mapping of their keyword arguments into `assay-config`'s typed
//! configuration. A keyword is named by its [`Field`] (in Python's words),
//! so a mistake names it as the caller wrote it (`concurrency`,
//! `params["rouge.types"]`), and a keyword no reader takes is an error:
//! the Python signature and this reader cannot drift apart unseen.

use crate::convert::{report_error, usage, UsageError};
use assay_config::options::{Declared, Kept};
use assay_config::{EvalConfig, Field, FinishOptions, UsageError as Mistake, Words};
use assay_core::{Original, Source};

use assay_metrics::params::ParamError;
use assay_metrics::{AnyId, Setting};
use assay_report::gates::Condition;
use pyo3::conversion::FromPyObjectOwned;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyTuple};
use std::path::PathBuf;

/// The keyword arguments not yet read.
pub(crate) struct Keywords<'py> {
    left: Bound<'py, PyDict>,
}

impl<'py> Keywords<'py> {
    /// A copy of `options` (a mapping of keyword names to values), so that
    /// reading takes nothing from the caller's dict.
    pub(crate) fn new(options: &Bound<'py, PyAny>) -> PyResult<Keywords<'py>> {
        let left = PyDict::new(options.py());
        left.update(options.cast::<PyMapping>()?)?;
        Ok(Keywords { left })
    }

    /// The value of keyword `name`, taken out; `None` when it is absent or
    /// `None`.
    pub(crate) fn take<T: FromPyObjectOwned<'py>>(&mut self, name: &str) -> PyResult<Option<T>> {
        let Some(value) = self.left.get_item(name)? else {
            return Ok(None);
        };
        self.left.del_item(name)?;
        if value.is_none() {
            return Ok(None);
        }
        value.extract::<T>().map(Some).map_err(|e| {
            let e: PyErr = e.into();
            UsageError::new_err(format!("{name}: {}", e.value(value.py())))
        })
    }

    /// The value of `field`'s keyword.
    pub(crate) fn field<T: FromPyObjectOwned<'py>>(&mut self, field: Field) -> PyResult<Option<T>> {
        self.take(&field.named(Words::Python))
    }

    /// The items of keyword `name`, a mapping (`what` says of what);
    /// none when it is absent or `None`.
    fn pairs(
        &mut self,
        name: &str,
        what: &str,
    ) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let expected = || UsageError::new_err(format!("{name}: expected {what}"));
        let Some(mapping) = self
            .take::<Bound<'py, PyMapping>>(name)
            .map_err(|_| expected())?
        else {
            return Ok(Vec::new());
        };
        mapping.items()?.extract().map_err(|_: PyErr| expected())
    }

    /// Fails naming every keyword left unread.
    pub(crate) fn finish(self) -> PyResult<()> {
        let left: Vec<String> = self
            .left
            .keys()
            .iter()
            .map(|k| k.str().map(|s| s.to_string()))
            .collect::<PyResult<_>>()?;
        if left.is_empty() {
            return Ok(());
        }
        Err(UsageError::new_err(format!(
            "unknown keyword argument{} {}",
            if left.len() == 1 { "" } else { "s" },
            left.join(", ")
        )))
    }

    /// The keywords of a configuration `assay-config` declares (the
    /// judge's: `judge`, `concurrency`, `cache`, ...), each given as the
    /// declaration parses it: a `bool` as a switch, a mapping as its
    /// `KEY=VALUE` items, a list as its items, anything else as its `str()`.
    pub(crate) fn declared<C: Declared>(&mut self) -> PyResult<C> {
        let mut config = C::default();
        let mut kept = Vec::new();
        for &option in C::all() {
            let spec = C::spec(option);
            if !spec.how.python {
                continue;
            }
            let Some(value) = self.left.get_item(spec.name)? else {
                continue;
            };
            self.left.del_item(spec.name)?;
            let mistake = |e: String| usage(Mistake::of(C::field(option), e));
            for given in given(&value, &C::shown(option).annotation)?.map_err(mistake)? {
                kept.push((option, given));
            }
        }
        config
            .give_over(&kept)
            .map_err(|(option, e)| usage(Mistake::of(C::field(option), e)))?;
        Ok(config)
    }

    /// `params`: `{"METRIC.PARAM": value}`, a value being text, a number, a
    /// boolean or a list of them (written as `--set` takes it).
    fn settings(&mut self) -> PyResult<Vec<Setting>> {
        self.pairs("params", "a mapping of \"METRIC.PARAM\" to a value")?
            .into_iter()
            .map(|(key, value)| {
                let key: String = key.extract().map_err(|_| {
                    UsageError::new_err(format!("params: the key {key} is not a string"))
                })?;
                let value = param_text(&value)?;
                Setting::new(&key, &value).map_err(|e| {
                    let message = match e {
                        ParamError::Syntax(_) => "expected a key METRIC.PARAM".to_string(),
                        other => other.to_string(),
                    };
                    usage(Mistake::of(
                        Field::Setting {
                            key,
                            value: Some(value),
                        },
                        message,
                    ))
                })
            })
            .collect()
    }

    /// What `evaluate` does once the run has run: `gates`
    /// (`[(OUTPUT, ">= 0.7"), ...]`), `max_failed_fraction`,
    /// `calibration` and `report`, as the command line's flags.
    pub(crate) fn after_run(&mut self) -> PyResult<assay_run::Finish> {
        let gates: Vec<(String, String)> = self.take("gates")?.unwrap_or_default();
        let mut finish = assay_run::Finish::from(self.declared::<FinishOptions>()?);
        for (name, comparison) in &gates {
            finish
                .conditions
                .push(Condition::parse(name, comparison).map_err(report_error)?);
        }
        Ok(finish)
    }

    /// The keywords of `assay.evaluate`, and `rows`/`name`, which say what
    /// the file `data` holds: rows given in memory (messages name them
    /// "data row N") or a copy of the file `name`.
    pub(crate) fn eval(&mut self) -> PyResult<EvalConfig> {
        let data: PathBuf = self
            .field(Field::Data)?
            .ok_or_else(|| usage(Mistake::of(Field::Data, "no data given")))?;
        let data = match (
            self.take::<bool>("rows")?.unwrap_or(false),
            self.take("name")?,
        ) {
            (false, None) => Source::Path(data),
            (true, None) => Source::Copy {
                path: data,
                of: Original::Rows,
            },
            (false, Some(name)) => Source::Copy {
                path: data,
                of: Original::File(name),
            },
            (true, Some(_)) => {
                return Err(usage(Mistake::of(
                    Field::Data,
                    "rows in memory have no file name",
                )))
            }
        };
        let metrics: Vec<String> = self.field(Field::Metrics)?.unwrap_or_default();
        let metrics = metrics
            .iter()
            .map(|m| {
                m.parse::<AnyId>()
                    .map_err(|e| usage(Mistake::of(Field::Metrics, e)))
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(EvalConfig {
            data,
            metrics,
            settings: self.settings()?,
            options: self.declared()?,
            judge: self.declared()?,
        })
    }
}

/// What a keyword's value gives an option of Python type `annotation`:
/// nothing for `None`; an error when a number is given for text or text
/// for a number.
fn given(value: &Bound<'_, PyAny>, annotation: &str) -> PyResult<Result<Vec<Kept>, String>> {
    if value.is_none() {
        return Ok(Ok(Vec::new()));
    }
    if value.is_instance_of::<PyBool>() {
        return Ok(Ok(vec![Kept::Switch(value.is_truthy()?)]));
    }
    if let Ok(mapping) = value.cast::<PyMapping>() {
        return mapping
            .items()?
            .iter()
            .map(|item| {
                let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
                Ok(Kept::Text(format!("{}={}", k.str()?, v.str()?)))
            })
            .collect::<PyResult<_>>()
            .map(Ok);
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        return value
            .try_iter()?
            .map(|v| Ok(Kept::Text(v?.str()?.to_string())))
            .collect::<PyResult<_>>()
            .map(Ok);
    }
    let number = value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>();
    let numeric = annotation.starts_with("int") || annotation.starts_with("float");
    if number != numeric {
        return Ok(Err(format!(
            "expected {annotation}, not {}",
            value.get_type().name()?
        )));
    }
    Ok(Ok(vec![Kept::Text(value.str()?.to_string())]))
}

/// A parameter's value as `--set` takes it: `true`/`false`, a list
/// joined by commas, else its `str()`.
fn param_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if value.is_instance_of::<PyBool>() {
        return Ok(if value.is_truthy()? { "true" } else { "false" }.to_string());
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .map(|v| param_text(&v?))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(items.join(","));
    }
    Ok(value.str()?.to_string())
}

/// `assay.config_file(path, judge_only=False)`: the options of a
/// configuration file (TOML keyed by the keywords, or a `pyproject.toml`'s
/// `[tool.assay]` table), checked as `assay eval --config` checks them, as
/// a dict of keywords: `assay.evaluate(data, metrics,
/// **assay.config_file("assay.toml"))`. A keyword given besides one of the
/// file's is Python's own error, never silently one or the other;
/// `judge_only=True` gives only the judge options, which
/// `assay.calibrate` takes.
#[pyfunction]
#[pyo3(signature = (path, judge_only = false))]
pub(crate) fn config_file(py: Python<'_>, path: PathBuf, judge_only: bool) -> PyResult<Py<PyAny>> {
    let file = assay_config::file::ConfigFile::read(&path).map_err(usage)?;
    let keywords = file.keywords(judge_only).map_err(usage)?;
    crate::convert::to_python(py, &serde_json::Value::Object(keywords))
}
