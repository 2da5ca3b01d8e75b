//! Judged metrics from the parameters users type (`--set METRIC.PARAM=VALUE`),
//! checked against each metric's declared parameters; the inverse of
//! [`JudgedMetric::params`].

use crate::judged::metric::{JudgedId, JudgedMetric};
use crate::judged::options::{OptionError, Unit};
use crate::judged::prompt::PromptSet;
use crate::params::ParamSpec;
use std::collections::BTreeMap;
use std::str::FromStr;

/// The prefix of a custom aspect's parameter: `aspect.NAME=DEFINITION`.
pub const CUSTOM_ASPECT_PREFIX: &str = "aspect.";

pub(crate) const STRICTNESS_DOC: &str = "number of judge draws (1 to 10)";

/// A bad parameter of a judged metric.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{metric}: unknown parameter '{param}' (known: {known})")]
    Unknown {
        metric: JudgedId,
        param: String,
        known: String,
    },
    #[error("{metric}.{param}={value}: {message}")]
    Invalid {
        metric: JudgedId,
        param: String,
        value: String,
        message: String,
    },
    #[error("aspect_critique: no aspect selected (aspects=none and no aspect.NAME=DEFINITION)")]
    NoAspects,
}

/// A parameter's declaration, for the metrics' `DEF`s.
pub(crate) const fn param(
    name: &'static str,
    default: &'static str,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec { name, default, doc }
}

impl JudgedMetric {
    /// Resolves `given` (param -> value) over the defaults. Built-in aspect
    /// definitions come from `prompts`.
    ///
    /// ```
    /// use assay_metrics::judged::{answer_relevancy, JudgedMetric, PromptSet};
    /// let prompts = PromptSet::builtin().unwrap();
    /// let given = [("strictness".to_string(), "5".to_string())].into();
    /// let m = JudgedMetric::configure(answer_relevancy::ID, &given, &prompts).unwrap();
    /// assert_eq!(m.params()[0], ("strictness".to_string(), "5".to_string()));
    /// ```
    pub fn configure(
        id: JudgedId,
        given: &BTreeMap<String, String>,
        prompts: &PromptSet,
    ) -> Result<JudgedMetric, ConfigError> {
        let def = id.def();
        let named_ok = |k: &str| def.named_params.is_some_and(|prefix| k.starts_with(prefix));
        if let Some(unknown) = given
            .keys()
            .find(|k| !def.params.iter().any(|p| p.name == k.as_str()) && !named_ok(k))
        {
            let mut known: Vec<String> = def.params.iter().map(|p| p.name.to_string()).collect();
            known.extend(def.named_params.map(|prefix| format!("{prefix}NAME")));
            return Err(ConfigError::Unknown {
                metric: id,
                param: unknown.clone(),
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                },
            });
        }
        (def.configure)(&Values { id, given }, prompts)
    }
}

/// The `configure` of a metric without parameters: its default.
pub(crate) fn defaults_only(
    values: &Values<'_>,
    _: &PromptSet,
) -> Result<JudgedMetric, ConfigError> {
    Ok((values.id.def().default)())
}

/// `none` or a number in [0, 1].
pub(crate) fn optional_unit(s: &str) -> Result<Option<Unit>, OptionError> {
    if s.trim() == "none" {
        Ok(None)
    } else {
        s.parse().map(Some)
    }
}

/// The inverse of [`optional_unit`]: `none` or the number.
pub(crate) fn optional_text(value: Option<Unit>) -> String {
    value.map_or("none".to_string(), |u| u.to_string())
}

/// The given values of one metric's parameters, over the defaults.
pub struct Values<'a> {
    id: JudgedId,
    /// Every parameter given, named ones included.
    pub(crate) given: &'a BTreeMap<String, String>,
}

impl Values<'_> {
    pub(crate) fn raw(&self, name: &'static str) -> &str {
        self.given
            .get(name)
            .map(String::as_str)
            .or_else(|| {
                self.id
                    .def()
                    .params
                    .iter()
                    .find(|p| p.name == name)
                    .map(|p| p.default)
            })
            .unwrap_or_default()
    }

    pub(crate) fn with<T>(
        &self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Result<T, OptionError>,
    ) -> Result<T, ConfigError> {
        let raw = self.raw(name);
        parse(raw).map_err(|e| ConfigError::Invalid {
            metric: self.id,
            param: name.to_string(),
            value: raw.to_string(),
            message: e.message,
        })
    }

    pub(crate) fn parse<T: FromStr<Err = OptionError>>(
        &self,
        name: &'static str,
    ) -> Result<T, ConfigError> {
        self.with(name, str::parse)
    }
}
