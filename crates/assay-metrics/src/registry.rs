//! Every metric users can name, lexical or judged, with its documentation,
//! parsed once at the boundary. It keeps no list of its own: [`AnyId`]
//! joins the lexical and tool-call metrics of [`crate::lexical`] and the
//! judged ones of [`crate::judged::registry`].

use crate::id::UnknownMetric;
use crate::judged::{JudgedId, JudgedMetric};
use crate::params::ParamSpec;
use crate::spec::Direction;
use crate::unit::MetricId;
use assay_core::Field;
use std::fmt;
use std::str::FromStr;

/// Any metric id users can type: a lexical metric, scored from the sample
/// alone, or a judged one, scored from a judge's answers.
///
/// ```
/// use assay_metrics::{AnyId, judged::JudgedId};
/// assert_eq!("bleu".parse::<AnyId>().unwrap(), AnyId::Lexical(assay_metrics::lexical::bleu::ID));
/// assert_eq!("faithfulness".parse::<AnyId>().unwrap(), AnyId::Judged(assay_metrics::judged::faithfulness::ID));
/// assert!("nope".parse::<AnyId>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnyId {
    Lexical(MetricId),
    Judged(JudgedId),
}

impl AnyId {
    /// Every metric, lexical first, in the order `assay metrics` lists them.
    pub fn all() -> impl Iterator<Item = AnyId> {
        MetricId::all()
            .map(AnyId::Lexical)
            .chain(JudgedId::all().map(AnyId::Judged))
    }

    pub fn name(self) -> &'static str {
        match self {
            AnyId::Lexical(id) => id.name(),
            AnyId::Judged(id) => id.name(),
        }
    }

    /// The metric's documentation and contract.
    pub fn doc(self) -> MetricDoc {
        match self {
            AnyId::Lexical(id) => {
                let s = id.spec();
                MetricDoc {
                    id: self,
                    summary: s.summary,
                    definition: s.definition.to_string(),
                    required: s.required.to_vec(),
                    params: s.params,
                    direction: direction_text(s.direction).to_string(),
                    empty_inputs: s.empty_inputs,
                    outputs: s.outputs.to_string(),
                }
            }
            AnyId::Judged(id) => {
                let def = id.def();
                let prompts: Vec<String> = def.prompts.iter().map(|p| p.path()).collect();
                MetricDoc {
                    id: self,
                    summary: def.summary,
                    definition: format!(
                        "judged by a chat model (--judge) with the prompt files {}; scored by a pure \
                         function of the validated answers (see the crate docs of assay_metrics::judged::{})",
                        prompts.join(", "),
                        id.name()
                    ),
                    required: JudgedMetric::default_for(id).required(),
                    params: def.params,
                    direction: def.per_output.as_ref().map_or_else(
                        || direction_text(def.direction).to_string(),
                        |o| o.direction.to_string(),
                    ),
                    empty_inputs: def.empty_inputs,
                    outputs: def
                        .per_output
                        .as_ref()
                        .map_or(id.name(), |o| o.outputs)
                        .to_string(),
                }
            }
        }
    }
}

fn direction_text(d: Direction) -> &'static str {
    match d {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    }
}

/// What `assay metrics` shows for one metric.
#[derive(Clone, Debug)]
pub struct MetricDoc {
    pub id: AnyId,
    pub summary: &'static str,
    pub definition: String,
    pub required: Vec<Field>,
    pub params: &'static [ParamSpec],
    /// Whether a larger value is better, in words.
    pub direction: String,
    pub empty_inputs: &'static str,
    pub outputs: String,
}

impl fmt::Display for AnyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<MetricId> for AnyId {
    fn from(id: MetricId) -> AnyId {
        AnyId::Lexical(id)
    }
}

impl From<JudgedId> for AnyId {
    fn from(id: JudgedId) -> AnyId {
        AnyId::Judged(id)
    }
}

impl FromStr for AnyId {
    type Err = UnknownMetric;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AnyId::all()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMetric(s.to_string()))
    }
}
