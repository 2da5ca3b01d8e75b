//! What a metric scored from the sample alone (lexical or tool-call) is:
//! its id ([`MetricId`]) and entry ([`MetricSpec`]), the [`Unit`] its
//! module's `configure` makes, and how a configured [`Metric`] scores
//! samples on each thread ([`Scorer`]) and adds up corpus-level
//! statistics ([`Corpus`]). The metrics themselves, one module each, are
//! listed in [`crate::lexical::LEXICAL`].

use crate::params::{ParamError, ParamSpec, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, Signature, SkipReason};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::any::Any;
use std::collections::BTreeMap;

/// A lexical or tool-call metric, by the id users type: its entry in
/// [`crate::lexical::LEXICAL`]; judged metrics are
/// [`crate::judged::JudgedId`]s, and [`crate::AnyId`] is either. Ids
/// compare by name and order as the registry lists them.
///
/// ```
/// use assay_metrics::MetricId;
/// let id: MetricId = "string_similarity".parse().unwrap();
/// assert_eq!(id.to_string(), "string_similarity");
/// assert_eq!(id, assay_metrics::lexical::string_similarity::ID);
/// ```
#[derive(Clone, Copy)]
pub struct MetricId(&'static MetricSpec);

impl MetricId {
    pub const fn of(spec: &'static MetricSpec) -> MetricId {
        MetricId(spec)
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The metric's entry.
    pub fn spec(self) -> &'static MetricSpec {
        self.0
    }
}

crate::id::by_name!(MetricId);

/// How a lexical metric is made from its parameters' values.
pub type Configure = fn(&Values) -> Result<Box<dyn Unit>, ParamError>;

/// A metric's documentation and contract, and how it is configured.
#[derive(Clone, Copy, Debug)]
pub struct MetricSpec {
    /// The id users type.
    pub name: &'static str,
    /// One line: what the number means.
    pub summary: &'static str,
    /// How it is computed, and which reference implementation it equals.
    pub definition: &'static str,
    /// Fields a row must have; [`Field::References`] is satisfied by
    /// `reference` or `references`.
    pub required: &'static [Field],
    pub params: &'static [ParamSpec],
    pub direction: Direction,
    /// What it gives on empty strings and lists.
    pub empty_inputs: &'static str,
    /// Names of the outcomes it writes per sample.
    pub outputs: &'static str,
    /// The parameters added after run format 1, which a manifest holds
    /// only when they differ from their defaults.
    pub added_params: &'static [&'static str],
    pub configure: Configure,
}

/// A lexical metric with its parameters resolved: what its module's
/// `configure` makes.
pub trait Unit: Send + std::fmt::Debug + CloneUnit {
    /// Names of the outcomes written per sample, in order; most metrics
    /// write one, named by their id.
    fn outputs(&self) -> Vec<String>;
    /// Every parameter's value, defaults included, for the manifest.
    fn params_json(&self) -> Value;
    /// The signature of its numbers: it changes whenever anything that can
    /// change them changes.
    fn signature(&self) -> Signature;
    /// A scorer for one thread.
    fn scorer(&self) -> Box<dyn UnitScorer>;
    /// Whether it also has a corpus-level score, made from every row's
    /// statistics.
    fn has_corpus_score(&self) -> bool {
        false
    }
}

/// A copy of a boxed [`Unit`].
pub trait CloneUnit {
    fn clone_unit(&self) -> Box<dyn Unit>;
}

impl<T: Unit + Clone + 'static> CloneUnit for T {
    fn clone_unit(&self) -> Box<dyn Unit> {
        Box::new(self.clone())
    }
}

/// Scores samples on one thread, keeping what a corpus score needs.
pub trait UnitScorer: Send {
    /// The outcomes of a sample that has the metric's required fields.
    fn score(&mut self, sample: &Sample) -> Vec<Outcome>;
    /// This thread's corpus statistics, for a metric that has a corpus
    /// score.
    fn into_corpus(self: Box<Self>) -> Option<Box<dyn CorpusStats>> {
        None
    }
}

/// One metric's corpus statistics, added up across threads.
pub trait CorpusStats: Send {
    /// Adds another thread's statistics of the same metric.
    fn merge(&mut self, other: Box<dyn CorpusStats>);
    /// The corpus score, when anything was scored.
    fn finalize(&self, name: &str) -> Option<CorpusScore>;
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// A metric with its parameters resolved.
#[derive(Debug)]
pub struct Metric {
    id: MetricId,
    unit: Box<dyn Unit>,
}

impl Clone for Metric {
    fn clone(&self) -> Metric {
        Metric {
            id: self.id,
            unit: self.unit.clone_unit(),
        }
    }
}

impl Metric {
    /// Resolves `given` (param name -> value) against the metric's spec.
    pub fn configure(id: MetricId, given: &BTreeMap<String, String>) -> Result<Metric, ParamError> {
        let spec = id.spec();
        let values = Values::resolve(id, spec.params, None, given)?;
        Ok(Metric {
            id,
            unit: (spec.configure)(&values)?,
        })
    }

    pub fn id(&self) -> MetricId {
        self.id
    }

    pub fn spec(&self) -> &'static MetricSpec {
        self.id.spec()
    }

    /// Whether the metric also has a corpus-level score (corpus BLEU,
    /// sacreBLEU, chrF), made from every row's statistics.
    pub fn has_corpus_score(&self) -> bool {
        self.unit.has_corpus_score()
    }

    /// Names of the outcomes written per sample, in order.
    pub fn outputs(&self) -> Vec<String> {
        self.unit.outputs()
    }

    /// Every parameter's value, defaults included, for the manifest;
    /// except the parameters added after run format 1
    /// ([`MetricSpec::added_params`]), which appear only when they differ
    /// from their defaults. At their defaults the numbers, and the
    /// signature, are those of a run from before them, which then still
    /// resumes and merges (a resumed run's manifest must be its own).
    pub fn params_json(&self) -> Value {
        let mut params = self.unit.params_json();
        if let Some(map) = params.as_object_mut() {
            let spec = self.spec();
            for p in spec
                .params
                .iter()
                .filter(|p| spec.added_params.contains(&p.name))
            {
                let at_default = map.get(p.name).is_some_and(|v| match v {
                    Value::String(s) => s == p.default,
                    Value::Bool(b) => p.default.parse::<bool>() == Ok(*b),
                    Value::Number(n) => {
                        n.as_u64().is_some() && p.default.parse().ok() == n.as_u64()
                    }
                    _ => false,
                });
                if at_default {
                    map.remove(p.name);
                }
            }
        }
        params
    }

    /// The signature of this metric's numbers: it changes whenever anything
    /// that can change them changes (parameters, reference semantics, the
    /// implementation's version).
    pub fn signature(&self) -> Signature {
        self.unit.signature()
    }

    /// A scorer for one thread; its corpus statistics add up across threads.
    pub fn scorer(&self) -> Scorer {
        Scorer {
            metric: self.clone(),
            outputs: self.outputs().len(),
            unit: self.unit.scorer(),
        }
    }
}

/// Scores samples for one metric on one thread.
pub struct Scorer {
    metric: Metric,
    outputs: usize,
    unit: Box<dyn UnitScorer>,
}

impl Scorer {
    /// The outcomes of one sample, one per [`Metric::outputs`] name: each
    /// skipped, naming the field, when the sample lacks one the metric
    /// requires.
    pub fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        if let Some(missing) = self
            .metric
            .spec()
            .required
            .iter()
            .find(|f| !sample.has(**f))
        {
            return skipped(*missing, self.outputs);
        }
        self.unit.score(sample)
    }

    /// This thread's corpus-level statistics.
    pub fn into_corpus(self) -> Corpus {
        Corpus {
            name: self.metric.id.name(),
            stats: self.unit.into_corpus(),
        }
    }
}

/// Corpus-level statistics of one metric, summed over threads.
pub struct Corpus {
    name: &'static str,
    stats: Option<Box<dyn CorpusStats>>,
}

impl Corpus {
    /// Adds another thread's statistics.
    pub fn merge(&mut self, other: Corpus) {
        match (&mut self.stats, other.stats) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (mine @ None, theirs) => *mine = theirs,
            (Some(_), None) => {}
        }
    }

    /// The corpus score, when the metric has one and anything was scored.
    pub fn finalize(&self) -> Option<CorpusScore> {
        self.stats.as_ref()?.finalize(self.name)
    }
}

/// A corpus-level score, as written in `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CorpusScore {
    pub name: String,
    /// In [0, 1].
    pub value: f64,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
    /// The reference implementation's own signature, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// `n` outcomes skipped for the missing `field`.
pub(crate) fn skipped(field: Field, n: usize) -> Vec<Outcome> {
    vec![Outcome::Skipped(SkipReason::MissingField(field)); n]
}
