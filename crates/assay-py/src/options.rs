//! The options of `assay.evaluate` and `assay.calibrate`, read once from
//! the mapping of their keyword arguments into `assay-config`'s typed
//! configuration. A keyword is named by its [`Field`] (in Python's words),
//! so a mistake names it as the caller wrote it (`concurrency`,
//! `params["rouge.types"]`), and a keyword no reader takes is an error:
//! the Python signature and this reader cannot drift apart unseen.

use crate::convert::{report_error, usage, UsageError};
use assay_config::{EvalConfig, Field, JudgeConfig, ModelPrice, UsageError as Mistake, Words};
use assay_core::{Original, Source, Stitch};
use assay_engine::Reasons;
use assay_llm::{CacheLocation, Secret};
use assay_metrics::params::ParamError;
use assay_metrics::{AnyId, Setting};
use assay_report::gates::Condition;
use pyo3::conversion::FromPyObjectOwned;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyMapping, PyTuple};
use std::path::PathBuf;
use std::str::FromStr;

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

    /// The text of `field`'s keyword parsed into its type.
    fn parsed<T: FromStr>(&mut self, field: Field) -> PyResult<Option<T>>
    where
        T::Err: std::fmt::Display,
    {
        let text: Option<String> = self.field(field.clone())?;
        text.map(|t| t.parse::<T>().map_err(|e| usage(Mistake::of(field, e))))
            .transpose()
    }

    /// A boolean keyword; absent or `None` is false.
    fn flag(&mut self, field: Field) -> PyResult<bool> {
        Ok(self.field::<bool>(field)?.unwrap_or(false))
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

    /// The judge keywords (`judge`, `embedder`, `base_url`, `api_key`,
    /// `concurrency`, `rpm`, `tpm`, `max_retries`, `timeout`, `cache`,
    /// `prompts`, `prices`, `repeats`, `reasons`, `protocol`, `grounding`,
    /// `grounding_label`, `alignment`, `language`).
    pub(crate) fn judge(&mut self) -> PyResult<JudgeConfig> {
        let default = JudgeConfig::default();
        let prices = self
            .pairs("prices", "a mapping of MODEL to \"IN/OUT\"")?
            .into_iter()
            .map(|(model, price)| {
                let named = |e: PyErr| UsageError::new_err(format!("prices: {e}"));
                let model: String = model.extract().map_err(named)?;
                let price: String = price.extract().map_err(named)?;
                let field = Field::Price(model.clone());
                let price = price.parse().map_err(|e| usage(Mistake::of(field, e)))?;
                Ok(ModelPrice { model, price })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let reasons = match self.field::<String>(Field::Reasons)?.as_deref() {
            None | Some("composed") => Reasons::Composed,
            Some("llm") => Reasons::Llm,
            Some(other) => {
                return Err(usage(Mistake::of(
                    Field::Reasons,
                    format!("{other:?}: expected \"composed\" or \"llm\""),
                )))
            }
        };
        Ok(JudgeConfig {
            judge: self.parsed(Field::Judge)?,
            embedder: self.parsed(Field::Embedder)?,
            base_url: self.field(Field::BaseUrl)?,
            api_key: self.field::<String>(Field::ApiKey)?.map(Secret::new),
            concurrency: self
                .field(Field::Concurrency)?
                .unwrap_or(default.concurrency),
            rpm: self.field(Field::Rpm)?,
            tpm: self.field(Field::Tpm)?,
            max_retries: self.field(Field::MaxRetries)?,
            timeout: self.field(Field::Timeout)?,
            cache: self.cache()?,
            prompts: self.field(Field::Prompts)?,
            prices,
            repeats: self.field(Field::Repeats)?.unwrap_or(default.repeats),
            batch_export: false,
            reasons,
            protocol: self.parsed(Field::Protocol)?,
            grounding: self.field(Field::Grounding)?,
            grounding_label: self.field(Field::GroundingLabel)?,
            alignment: self.field(Field::Alignment)?,
            language: self.field(Field::Language)?,
        })
    }

    /// `cache`: `True` or absent, the default place; `False`, none; else a
    /// path.
    fn cache(&mut self) -> PyResult<CacheLocation> {
        let name = Field::Cache.named(Words::Python);
        let Some(value) = self.left.get_item(&name)? else {
            return Ok(CacheLocation::Default);
        };
        if value.is_instance_of::<PyBool>() {
            self.left.del_item(&name)?;
            return Ok(if value.is_truthy()? {
                CacheLocation::Default
            } else {
                CacheLocation::Disabled
            });
        }
        Ok(self
            .field::<PathBuf>(Field::Cache)?
            .map_or(CacheLocation::Default, CacheLocation::Path))
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

    /// The keywords of `assay.evaluate`, and `rows`/`name`, which say what
    /// the file `data` holds: rows given in memory (messages name them
    /// "data row N") or a copy of the file `name`.
    /// What `evaluate` does once the run has run: `gates`
    /// (`[(OUTPUT, ">= 0.7"), ...]`), `max_failed_fraction`,
    /// `calibration` and `report`, as the command line's flags.
    pub(crate) fn after_run(&mut self) -> PyResult<assay_run::Finish> {
        let gates: Vec<(String, String)> = self.take("gates")?.unwrap_or_default();
        let conditions = gates
            .iter()
            .map(|(name, comparison)| Condition::parse(name, comparison))
            .collect::<Result<Vec<_>, _>>()
            .map_err(report_error)?;
        Ok(assay_run::Finish {
            conditions,
            max_failed_fraction: self.take("max_failed_fraction")?,
            calibration: self.take("calibration")?,
            report: self.take("report")?.unwrap_or(false),
        })
    }

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
            out: self.field(Field::Out)?,
            input_format: self.parsed(Field::InputFormat)?,
            references: self.field(Field::References)?,
            logs: self.field(Field::Logs)?,
            stitch: match self.field::<bool>(Field::Stitch)? {
                Some(false) => Stitch::Off,
                None | Some(true) => Stitch::On,
            },
            strict: self.flag(Field::Strict)?,
            threads: self.field(Field::Threads)?,
            force_new: self.flag(Field::ForceNew)?,
            shard: self.parsed(Field::Shard)?,
            judge: self.judge()?,
        })
    }
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
