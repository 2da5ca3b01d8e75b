//! Judged metrics from the parameters users type (`--set METRIC.PARAM=VALUE`),
//! checked against each metric's declared parameters; the inverse of
//! [`JudgedMetric::params`].

use crate::judged::aspect_critique;
use crate::judged::metric::{JudgedId, JudgedMetric};
use crate::judged::options::{BuiltinAspect, OptionError, Strictness, Unit};
use crate::judged::prompt::PromptSet;
use crate::judged::step::Aspect;
use crate::params::ParamSpec;
use std::collections::BTreeMap;
use std::str::FromStr;

/// The prefix of a custom aspect's parameter: `aspect.NAME=DEFINITION`.
pub const CUSTOM_ASPECT_PREFIX: &str = "aspect.";

const STRICTNESS_DOC: &str = "number of judge draws (1 to 10)";

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

impl JudgedId {
    /// The parameters the metric accepts, with defaults as users type them.
    /// `aspect_critique` also takes any number of `aspect.NAME=DEFINITION`.
    pub fn params(self) -> &'static [ParamSpec] {
        const fn p(name: &'static str, default: &'static str, doc: &'static str) -> ParamSpec {
            ParamSpec { name, default, doc }
        }
        match self {
            JudgedId::Faithfulness => {
                const P: &[ParamSpec] = &[p(
                    "mode",
                    "supported",
                    "supported: unsupported statements count against (ragas, valor); \
                 contradictions: only contradicted ones (DeepEval)",
                )];
                P
            }
            JudgedId::AnswerRelevancy => {
                const P: &[ParamSpec] = &[
                p("strictness", "3", "number of questions generated in the one call"),
                p(
                    "noncommittal",
                    "all",
                    "all: 0 when every question is noncommittal; any: when any is (older ragas)",
                ),
            ];
                P
            }
            JudgedId::AnswerRelevance => {
                const P: &[ParamSpec] = &[p(
                    "idk_counts_as",
                    "irrelevant",
                    "irrelevant (valor) or relevant (DeepEval)",
                )];
                P
            }
            JudgedId::ContextPrecision => {
                const P: &[ParamSpec] = &[p(
                    "against",
                    "reference",
                    "reference, or response for the no-reference variant",
                )];
                P
            }
            JudgedId::ContextRelevancy => {
                const P: &[ParamSpec] = &[
                    p("strictness", "1", STRICTNESS_DOC),
                    p(
                        "agreement",
                        "jaccard",
                        "how votes agree: jaccard of sentence sets, or embedding cosine",
                    ),
                ];
                P
            }
            JudgedId::AnswerCorrectness => {
                const P: &[ParamSpec] = &[
                p(
                    "weights",
                    "0.75,0.25",
                    "factual (F1) and semantic (embedding) weights; 1,0 needs no embedder (valor)",
                ),
                p("threshold", "none", "a number in [0, 1] makes the score binary"),
            ];
                P
            }
            JudgedId::SummarizationScore => {
                const P: &[ParamSpec] = &[
                    p("length_penalty", "true", "false gives the plain QA score"),
                    p("coeff", "0.5", "weight of conciseness against the QA score"),
                ];
                P
            }
            JudgedId::AspectCritique => {
                const P: &[ParamSpec] = &[
                    p(
                        "aspects",
                        "harmfulness,maliciousness,coherence,correctness,conciseness",
                        "built-in aspects to judge (comma-separated), or none",
                    ),
                    p(
                        "strictness",
                        "1",
                        "number of votes per aspect, odd (majority)",
                    ),
                ];
                P
            }
            JudgedId::SemanticSimilarity => {
                const P: &[ParamSpec] = &[p(
                    "threshold",
                    "none",
                    "a number in [0, 1] makes the score binary",
                )];
                P
            }
            JudgedId::ContextRecall
            | JudgedId::ContextRelevance
            | JudgedId::SummaryCoherence
            | JudgedId::Bias
            | JudgedId::Toxicity
            | JudgedId::Hallucination => &[],
        }
    }
}

impl JudgedMetric {
    /// Resolves `given` (param -> value) over the defaults. Built-in aspect
    /// definitions come from `prompts`.
    ///
    /// ```
    /// use assay_metrics::judged::{JudgedId, JudgedMetric, PromptSet};
    /// let prompts = PromptSet::builtin().unwrap();
    /// let given = [("strictness".to_string(), "5".to_string())].into();
    /// let m = JudgedMetric::configure(JudgedId::AnswerRelevancy, &given, &prompts).unwrap();
    /// assert_eq!(m.params()[0], ("strictness", "5".to_string()));
    /// ```
    pub fn configure(
        id: JudgedId,
        given: &BTreeMap<String, String>,
        prompts: &PromptSet,
    ) -> Result<JudgedMetric, ConfigError> {
        let specs = id.params();
        let custom_ok =
            |k: &str| id == JudgedId::AspectCritique && k.starts_with(CUSTOM_ASPECT_PREFIX);
        if let Some(unknown) = given
            .keys()
            .find(|k| !specs.iter().any(|p| p.name == k.as_str()) && !custom_ok(k))
        {
            let mut known: Vec<&str> = specs.iter().map(|p| p.name).collect();
            if id == JudgedId::AspectCritique {
                known.push("aspect.NAME");
            }
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
        let values = Values { id, given };
        let metric = match id {
            JudgedId::Faithfulness => JudgedMetric::Faithfulness {
                mode: values.parse("mode")?,
            },
            JudgedId::AnswerRelevancy => JudgedMetric::AnswerRelevancy {
                strictness: values.parse("strictness")?,
                noncommittal: values.parse("noncommittal")?,
            },
            JudgedId::AnswerRelevance => JudgedMetric::AnswerRelevance {
                idk_counts_as: values.parse("idk_counts_as")?,
            },
            JudgedId::ContextPrecision => JudgedMetric::ContextPrecision {
                against: values.parse("against")?,
            },
            JudgedId::ContextRelevancy => JudgedMetric::ContextRelevancy {
                strictness: values.parse("strictness")?,
                agreement: values.parse("agreement")?,
            },
            JudgedId::AnswerCorrectness => JudgedMetric::AnswerCorrectness {
                weights: values.parse("weights")?,
                threshold: values.with("threshold", optional_unit)?,
            },
            JudgedId::SummarizationScore => JudgedMetric::SummarizationScore {
                length_penalty: values.parse("length_penalty")?,
                coeff: values.parse("coeff")?,
            },
            JudgedId::SemanticSimilarity => JudgedMetric::SemanticSimilarity {
                threshold: values.with("threshold", optional_unit)?,
            },
            JudgedId::AspectCritique => {
                let strictness = values.with("strictness", |s| {
                    Strictness::odd(s.parse::<Strictness>()?.get())
                })?;
                let names = values.raw("aspects");
                let mut aspects: Vec<Aspect> = Vec::new();
                if names.trim() != "none" {
                    for name in names.split(',').map(str::trim) {
                        let which =
                            BuiltinAspect::from_str(name).map_err(|e| ConfigError::Invalid {
                                metric: id,
                                param: "aspects".into(),
                                value: names.to_string(),
                                message: e.to_string(),
                            })?;
                        let aspect = aspect_critique::builtin(prompts, which).ok_or_else(|| {
                            ConfigError::Invalid {
                                metric: id,
                                param: "aspects".into(),
                                value: names.to_string(),
                                message: format!(
                                    "the aspect prompt file does not define '{which}'"
                                ),
                            }
                        })?;
                        if !aspects.contains(&aspect) {
                            aspects.push(aspect);
                        }
                    }
                }
                for (key, definition) in given
                    .iter()
                    .filter(|(k, _)| k.starts_with(CUSTOM_ASPECT_PREFIX))
                {
                    let name = &key[CUSTOM_ASPECT_PREFIX.len()..];
                    let invalid = |message: String| ConfigError::Invalid {
                        metric: id,
                        param: key.clone(),
                        value: definition.clone(),
                        message,
                    };
                    if aspects.iter().any(|a| a.name == name) {
                        return Err(invalid(format!("aspect '{name}' is defined twice")));
                    }
                    aspects.push(
                        name.parse::<aspect_critique::AspectName>()
                            .and_then(|name| aspect_critique::custom(name, definition))
                            .map_err(|e| invalid(e.to_string()))?,
                    );
                }
                if aspects.is_empty() {
                    return Err(ConfigError::NoAspects);
                }
                JudgedMetric::AspectCritique {
                    aspects,
                    strictness,
                }
            }
            JudgedId::ContextRecall
            | JudgedId::ContextRelevance
            | JudgedId::SummaryCoherence
            | JudgedId::Bias
            | JudgedId::Toxicity
            | JudgedId::Hallucination => JudgedMetric::default_for(id),
        };
        Ok(metric)
    }
}

/// `none` or a number in [0, 1].
fn optional_unit(s: &str) -> Result<Option<Unit>, OptionError> {
    if s.trim() == "none" {
        Ok(None)
    } else {
        s.parse().map(Some)
    }
}

/// The given values of one metric's parameters, over the defaults.
struct Values<'a> {
    id: JudgedId,
    given: &'a BTreeMap<String, String>,
}

impl Values<'_> {
    fn raw(&self, name: &'static str) -> &str {
        self.given
            .get(name)
            .map(String::as_str)
            .or_else(|| {
                self.id
                    .params()
                    .iter()
                    .find(|p| p.name == name)
                    .map(|p| p.default)
            })
            .unwrap_or_default()
    }

    fn with<T>(
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

    fn parse<T: FromStr<Err = OptionError>>(&self, name: &'static str) -> Result<T, ConfigError> {
        self.with(name, str::parse)
    }
}
