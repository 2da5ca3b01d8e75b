//! The lexical and tool-call metrics: scored from the sample alone, each
//! one module declaring its id, definition, parameters and documentation
//! ([`MetricSpec`]) and its scoring ([`Unit`], see [`crate::unit`]),
//! registered by its line in [`LEXICAL`], with the helpers they share.
//! The judged metrics are in [`crate::judged`]; [`crate::registry`]
//! joins both for users.

pub mod bleu;
pub mod chrf;
pub mod exact_match;
pub mod rouge;
pub mod sacrebleu;
pub mod string_presence;
pub mod string_similarity;

use crate::id::UnknownMetric;
use crate::tools;
use crate::unit::{skipped, CorpusScore, CorpusStats, MetricId, MetricSpec, Unit, UnitScorer};
use assay_core::{Failure, FailureKind, Field, Outcome, Sample, Signature};
use assay_text::sacrebleu::NRefs;
use serde_json::Value;
use std::any::Any;
use std::str::FromStr;

/// Every lexical and tool-call metric, in the order `assay metrics` lists
/// them (before the judged ones); a metric is registered by its line here.
pub static LEXICAL: &[&MetricSpec] = &[
    &rouge::SPEC,
    &bleu::SPEC,
    &sacrebleu::SPEC,
    &chrf::CHRF,
    &chrf::CHRFPP,
    &exact_match::SPEC,
    &string_presence::SPEC,
    &string_similarity::SPEC,
    &tools::tool_call_accuracy::SPEC,
    &tools::tool_call_f1::SPEC,
    &tools::tool_correctness::SPEC,
];

impl MetricId {
    /// Every lexical and tool-call metric, in the order `assay metrics`
    /// lists them (before the judged ones).
    pub fn all() -> impl Iterator<Item = MetricId> {
        LEXICAL.iter().map(|s| MetricId::of(s))
    }

    fn position(self) -> usize {
        LEXICAL
            .iter()
            .position(|s| s.name == self.name())
            .unwrap_or(usize::MAX)
    }
}

crate::id::in_registry_order!(MetricId);

/// Lexical ids only; [`crate::AnyId`] parses every metric.
impl FromStr for MetricId {
    type Err = UnknownMetric;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MetricId::all()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMetric(s.to_string()))
    }
}

/// The response and references of a sample a text metric scores, or its
/// `n` outcomes skipped for the missing one.
pub(crate) fn texts(sample: &Sample, n: usize) -> Result<(&str, Vec<&str>), Vec<Outcome>> {
    match (sample.response.as_deref(), sample.reference_list()) {
        (Some(response), Some(references)) => Ok((response, references)),
        _ => Err(skipped(Field::Response, n)),
    }
}

/// A sample's score that its reference implementation leaves undefined.
pub(crate) fn undefined(e: impl std::fmt::Display) -> Outcome {
    Outcome::Failed(Failure {
        kind: FailureKind::Undefined,
        message: e.to_string(),
    })
}

/// Corpus statistics: the sum over rows, how many references rows had (for
/// sacreBLEU's `nrefs`), and the last row's own statistics, which nltk's
/// corpus BLEU hands to its smoothing methods 4 to 7.
#[derive(Clone, Debug, Default)]
pub(crate) struct Summed<S> {
    pub total: S,
    pub rows: u64,
    refs: Option<(usize, usize)>,
    pub last: Option<(u64, S)>,
}

impl<S: Clone + for<'a> std::ops::AddAssign<&'a S>> Summed<S> {
    pub fn add(&mut self, row: u64, n_refs: usize, stats: S) {
        self.merge(Summed {
            total: stats.clone(),
            rows: 1,
            refs: Some((n_refs, n_refs)),
            last: Some((row, stats)),
        });
    }

    fn merge(&mut self, other: Summed<S>) {
        self.total += &other.total;
        self.rows += other.rows;
        self.refs = match (self.refs, other.refs) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (mine, theirs) => mine.or(theirs),
        };
        if other.last.as_ref().map(|l| l.0) >= self.last.as_ref().map(|l| l.0) {
            self.last = other.last;
        }
    }

    pub fn nrefs(&self) -> NRefs {
        let (lo, hi) = self.refs.unwrap_or_default();
        NRefs::of([lo, hi])
    }
}

/// The corpus statistics of a metric whose rows' statistics add up, with
/// the configuration that finalizes them.
pub(crate) struct Summing<S, C> {
    pub sums: Summed<S>,
    pub config: C,
    pub finalize: fn(&Summed<S>, &C, &str) -> Option<CorpusScore>,
}

impl<S: Default, C> Summing<S, C> {
    /// A thread's scorer of a metric whose rows' statistics add up, and
    /// are made a corpus score by `finalize`.
    pub fn start(
        config: C,
        finalize: fn(&Summed<S>, &C, &str) -> Option<CorpusScore>,
    ) -> Box<Self> {
        Box::new(Summing {
            sums: Summed::default(),
            config,
            finalize,
        })
    }
}

impl<S, C> CorpusStats for Summing<S, C>
where
    S: Clone + Send + 'static + for<'a> std::ops::AddAssign<&'a S>,
    C: Send + 'static,
{
    fn merge(&mut self, other: Box<dyn CorpusStats>) {
        if let Ok(other) = other.into_any().downcast::<Summing<S, C>>() {
            self.sums.merge(other.sums);
        }
    }

    fn finalize(&self, name: &str) -> Option<CorpusScore> {
        (self.finalize)(&self.sums, &self.config, name)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// A metric that is 1 when the response matches some reference (its
/// index in the details), else 0: exact match, string presence.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Indicator {
    pub id: MetricId,
    /// Whether `(reference, response)` match.
    pub matches: fn(&str, &str) -> bool,
}

impl Unit for Indicator {
    fn outputs(&self) -> Vec<String> {
        vec![self.id.name().to_string()]
    }

    fn params_json(&self) -> Value {
        serde_json::json!({})
    }

    fn signature(&self) -> Signature {
        Signature::new(self.id.name(), 1).with("multiref", "any")
    }

    fn scorer(&self) -> Box<dyn UnitScorer> {
        Box::new(*self)
    }
}

impl UnitScorer for Indicator {
    fn score(&mut self, sample: &Sample) -> Vec<Outcome> {
        let (response, references) = match texts(sample, 1) {
            Ok(texts) => texts,
            Err(skipped) => return skipped,
        };
        vec![
            match references.iter().position(|r| (self.matches)(r, response)) {
                Some(i) => Outcome::scored(1.0, serde_json::json!({"matched_reference": i})),
                None => Outcome::scored(0.0, serde_json::json!({})),
            },
        ]
    }
}
