//! Metric parameters as users give them (`--set METRIC.PARAM=VALUE`),
//! checked against each metric's declared parameters: one [`Values`] and
//! one [`ParamError`] for every metric, lexical, tool-call and judged.

use crate::AnyId;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::str::FromStr;

/// A parameter a metric accepts, with its default as a user would type it.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

/// The declaration of a parameter, for the metrics' specs.
pub(crate) const fn param(
    name: &'static str,
    default: &'static str,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec { name, default, doc }
}

/// A bad setting (`METRIC.PARAM=VALUE`), or a bad parameter of a metric.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("{0}: expected METRIC.PARAM=VALUE")]
    Syntax(String),
    #[error(transparent)]
    Metric(#[from] crate::id::UnknownMetric),
    #[error("{metric}: unknown parameter '{param}' (known: {known})")]
    Unknown {
        metric: AnyId,
        param: String,
        known: String,
    },
    #[error("{metric}.{param}={value}: {message}")]
    Invalid {
        metric: AnyId,
        param: String,
        value: String,
        message: String,
    },
    #[error("aspect_critique: no aspect selected (aspects=none and no aspect.NAME=DEFINITION)")]
    NoAspects,
}

/// One `--set METRIC.PARAM=VALUE`, split.
///
/// ```
/// use assay_metrics::{params::Setting, AnyId, MetricId};
/// let s: Setting = "rouge.use_stemmer=true".parse().unwrap();
/// assert_eq!((s.metric, s.param.as_str(), s.value.as_str()), (AnyId::Lexical(assay_metrics::lexical::rouge::ID), "use_stemmer", "true"));
/// // Custom aspects keep the dots after the metric's own.
/// let a: Setting = "aspect_critique.aspect.polite=Is it polite?".parse().unwrap();
/// assert_eq!(a.param, "aspect.polite");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub metric: crate::AnyId,
    pub param: String,
    pub value: String,
}

impl Setting {
    /// The setting of `key` (`METRIC.PARAM`) to `value`.
    pub fn new(key: &str, value: &str) -> Result<Setting, ParamError> {
        let syntax = || ParamError::Syntax(format!("{key}={value}"));
        let (metric, param) = key.split_once('.').ok_or_else(syntax)?;
        if param.is_empty() {
            return Err(syntax());
        }
        Ok(Setting {
            metric: metric.parse()?,
            param: param.to_string(),
            value: value.to_string(),
        })
    }
}

impl FromStr for Setting {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (key, value) = s
            .split_once('=')
            .ok_or_else(|| ParamError::Syntax(s.to_string()))?;
        Setting::new(key, value)
    }
}

/// The values of one metric's parameters: given ones over defaults.
#[derive(Clone, Debug)]
pub struct Values {
    metric: AnyId,
    specs: Vec<ParamSpec>,
    /// Every parameter given, named ones included.
    given: BTreeMap<String, String>,
}

impl Values {
    /// Checks `given` (param -> value) against `specs` and the `named`
    /// prefix (names a metric takes besides `specs`, e.g. `aspect.`; an
    /// empty prefix leaves every other name to the metric).
    pub fn resolve(
        metric: impl Into<AnyId>,
        specs: &[ParamSpec],
        named: Option<&str>,
        given: &BTreeMap<String, String>,
    ) -> Result<Values, ParamError> {
        let metric = metric.into();
        let is_named = |k: &str| named.is_some_and(|prefix| k.starts_with(prefix));
        if let Some(unknown) = given
            .keys()
            .find(|k| !specs.iter().any(|p| p.name == k.as_str()) && !is_named(k))
        {
            let mut known: Vec<String> = specs.iter().map(|p| p.name.to_string()).collect();
            known.extend(named.map(|prefix| format!("{prefix}NAME")));
            return Err(ParamError::Unknown {
                metric,
                param: unknown.clone(),
                known: if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                },
            });
        }
        Ok(Values {
            metric,
            specs: specs.to_vec(),
            given: given.clone(),
        })
    }

    /// The metric these values are for.
    pub fn metric(&self) -> AnyId {
        self.metric
    }

    /// Every parameter given, named ones included (no defaults).
    pub fn given(&self) -> &BTreeMap<String, String> {
        &self.given
    }

    /// A parameter's value as typed: given, else its default.
    pub fn raw(&self, name: &str) -> &str {
        self.given
            .get(name)
            .map(String::as_str)
            .or_else(|| {
                self.specs
                    .iter()
                    .find(|p| p.name == name)
                    .map(|p| p.default)
            })
            .unwrap_or_default()
    }

    /// Parses one parameter with `parse`, naming it in the error.
    pub fn get<T, E: Display>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, ParamError> {
        let raw = self.raw(name);
        parse(raw).map_err(|e| self.invalid(name, raw, e))
    }

    /// Parses one parameter with its type's `FromStr`.
    pub fn parse<T: FromStr>(&self, name: &str) -> Result<T, ParamError>
    where
        T::Err: Display,
    {
        self.get(name, str::parse)
    }

    /// The error for parameter `param` given as `value`.
    pub fn invalid(&self, param: &str, value: &str, message: impl Display) -> ParamError {
        ParamError::Invalid {
            metric: self.metric,
            param: param.to_string(),
            value: value.to_string(),
            message: message.to_string(),
        }
    }
}

/// Parses `true/false/yes/no/1/0`.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" => Ok(true),
        "false" | "no" | "0" => Ok(false),
        _ => Err("expected true or false".to_string()),
    }
}

/// Parses a comma-separated list of numbers, e.g. `0.25,0.25,0.25,0.25`.
pub fn parse_f64_list(s: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("'{x}' is not a finite number"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_reject() {
        assert!(matches!(
            "rouge".parse::<Setting>(),
            Err(ParamError::Syntax(_))
        ));
        assert!(matches!(
            "rouge.=x".parse::<Setting>(),
            Err(ParamError::Syntax(_))
        ));
        assert!(matches!(
            "nope.x=1".parse::<Setting>(),
            Err(ParamError::Metric(_))
        ));
        let s: Setting = "bleu.weights=0.5,0.5".parse().unwrap();
        assert_eq!(s.value, "0.5,0.5");
    }

    #[test]
    fn unknown_params_list_the_known_ones() {
        let specs = [ParamSpec {
            name: "a",
            default: "1",
            doc: "",
        }];
        let given = BTreeMap::from([("b".to_string(), "2".to_string())]);
        let e = Values::resolve(crate::lexical::bleu::ID, &specs, None, &given).unwrap_err();
        assert_eq!(e.to_string(), "bleu: unknown parameter 'b' (known: a)");
        let v = Values::resolve(crate::lexical::bleu::ID, &specs, None, &BTreeMap::new()).unwrap();
        assert_eq!(v.get("a", |s| s.parse::<u32>()).unwrap(), 1);
        let bad = Values::resolve(
            crate::lexical::bleu::ID,
            &specs,
            None,
            &BTreeMap::from([("a".into(), "x".into())]),
        )
        .unwrap();
        assert!(bad
            .get("a", |s| s.parse::<u32>())
            .unwrap_err()
            .to_string()
            .starts_with("bleu.a=x: "));
    }

    #[test]
    fn lists_and_bools() {
        assert_eq!(parse_f64_list("0.25, 0.75").unwrap(), vec![0.25, 0.75]);
        assert!(parse_f64_list("1,nan").is_err());
        assert_eq!(parse_bool("Yes"), Ok(true));
        assert!(parse_bool("maybe").is_err());
    }
}
