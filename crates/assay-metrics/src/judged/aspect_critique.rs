//! `aspect_critique` (ragas; seed 002, "Aspect Critiques"): yes/no verdicts
//! on named aspects of the response: the built-in harmfulness,
//! maliciousness, coherence, correctness and conciseness, and any
//! user-defined aspect (name + definition). One outcome per aspect,
//! `aspect_critique/NAME`, 1 for yes and 0 for no.
//!
//! Steps: [`steps::aspect_verdict`] per aspect (`prompts/aspect_verdict.json`,
//! whose `definitions` hold the built-in aspects' texts). `strictness`
//! (odd, default 1) really takes that many votes (temperature > 0,
//! distinct seeds) and the majority wins; ragas has ignored it since 0.1.
//!
//! Harmfulness and maliciousness are lower-is-better (yes is bad); the
//! others, and custom aspects, higher-is-better.
//!
//! Empty inputs: an empty response is judged as it is.

use crate::judged::common::{misaligned, scored};
use crate::judged::metric::{JudgedDef, JudgedId, JudgedMetric, MetricUnit, PerOutput};
use crate::judged::options::{BuiltinAspect, OptionError, Strictness};
use crate::judged::prompt::{sha256_hex, PromptId, PromptSet};
use crate::judged::step::{Aspect, InputError, Inputs, Label, StepKey, Verdict};
use crate::judged::steps;
use crate::params::param;
use crate::params::{ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample};
use serde_json::json;

pub const PROMPTS: &[PromptId] = &[steps::ASPECT_VERDICT];

pub const EMPTY_INPUTS: &str = "an empty response is judged as it is";

/// The prefix of a custom aspect's parameter: `aspect.NAME=DEFINITION`.
pub const CUSTOM_ASPECT_PREFIX: &str = "aspect.";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "aspect_critique",
    summary: "1 if the judge says the response has the aspect, else 0, per aspect",
    direction: Direction::HigherIsBetter,
    required: &[Field::Response],
    needs_contexts: false,
    prompts: PROMPTS,
    params: &[
        param(
            "aspects",
            "harmfulness,maliciousness,coherence,correctness,conciseness",
            "built-in aspects to judge (comma-separated), or none",
        ),
        param(
            "strictness",
            "1",
            "number of votes per aspect, odd (majority)",
        ),
    ],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || {
        JudgedMetric::new(AspectCritique {
            aspects: Vec::new(),
            strictness: Strictness::ONE,
        })
    },
    configure: Some(configure),
    named_params: Some(CUSTOM_ASPECT_PREFIX),
    per_output: Some(PerOutput {
        outputs: "aspect_critique/ASPECT, one per selected aspect",
        direction:
            "per aspect: lower is better for harmfulness and maliciousness, higher for the others",
    }),
};

/// The metric from its parameters' values.
fn configure(values: &Values, prompts: &PromptSet) -> Result<JudgedMetric, ParamError> {
    let strictness = values.get("strictness", |s| {
        Strictness::odd(s.parse::<Strictness>()?.get())
    })?;
    let names = values.raw("aspects");
    let mut aspects: Vec<Aspect> = Vec::new();
    if names.trim() != "none" {
        for name in names.split(',').map(str::trim) {
            let which = name
                .parse::<BuiltinAspect>()
                .map_err(|e| values.invalid("aspects", names, e))?;
            let aspect = builtin(prompts, which).ok_or_else(|| {
                values.invalid(
                    "aspects",
                    names,
                    format!("the aspect prompt file does not define '{which}'"),
                )
            })?;
            if !aspects.contains(&aspect) {
                aspects.push(aspect);
            }
        }
    }
    for (key, definition) in values
        .given()
        .iter()
        .filter(|(k, _)| k.starts_with(CUSTOM_ASPECT_PREFIX))
    {
        let name = &key[CUSTOM_ASPECT_PREFIX.len()..];
        let invalid = |message: String| values.invalid(key, definition, message);
        if aspects.iter().any(|a| a.name == name) {
            return Err(invalid(format!("aspect '{name}' is defined twice")));
        }
        aspects.push(
            name.parse::<AspectName>()
                .and_then(|name| custom(name, definition))
                .map_err(|e| invalid(e.to_string()))?,
        );
    }
    if aspects.is_empty() {
        return Err(ParamError::NoAspects);
    }
    Ok(JudgedMetric::new(AspectCritique {
        aspects,
        strictness,
    }))
}

/// The metric with its parameters.
#[derive(Debug)]
pub struct AspectCritique {
    pub aspects: Vec<Aspect>,
    pub strictness: Strictness,
}

impl AspectCritique {
    fn step(&self, aspect: &Aspect) -> StepKey {
        steps::aspect_verdict(aspect.clone(), self.strictness.get())
    }
}

impl MetricUnit for AspectCritique {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, _: &Sample) -> Vec<StepKey> {
        self.aspects.iter().map(|a| self.step(a)).collect()
    }

    /// Aspects differ: yes is bad for harmfulness and maliciousness.
    fn directions(&self) -> Vec<(String, Direction)> {
        self.aspects
            .iter()
            .map(|a| (outcome_name(&a.name), direction(&a.name)))
            .collect()
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        self.aspects
            .iter()
            .map(|a| {
                Ok((
                    outcome_name(&a.name),
                    score(a, inputs.verdicts(&self.step(a))?),
                ))
            })
            .collect()
    }

    /// Aspects are named with a hash of their definitions.
    fn params(&self) -> Vec<(String, String)> {
        let aspects = self
            .aspects
            .iter()
            .map(|a| format!("{}={}", a.name, &sha256_hex(a.definition.as_bytes())[..8]))
            .collect::<Vec<_>>()
            .join(",");
        vec![
            ("aspects".into(), aspects),
            ("strictness".into(), self.strictness.to_string()),
        ]
    }

    /// The aspect's own definition.
    fn definition(&self, output: &str, _: &PromptSet) -> Option<String> {
        self.aspects
            .iter()
            .find(|a| outcome_name(&a.name) == output)
            .map(|a| a.definition.clone())
    }
}

/// The outcome name of an aspect.
pub fn outcome_name(aspect: &str) -> String {
    format!("aspect_critique/{aspect}")
}

/// A built-in aspect with its definition from the prompt set (an override
/// of `aspect_verdict.json` may reword it); `None` if the file lacks it.
pub fn builtin(prompts: &PromptSet, which: BuiltinAspect) -> Option<Aspect> {
    prompts
        .get(steps::ASPECT_VERDICT)
        .definitions
        .get(which.name())
        .map(|d| Aspect {
            name: which.name().to_string(),
            definition: d.clone(),
        })
}

/// Every built-in aspect the prompt set defines, in [`BuiltinAspect::ALL`]
/// order: the default aspects of `aspect_critique`.
pub fn builtin_all(prompts: &PromptSet) -> Vec<Aspect> {
    BuiltinAspect::ALL
        .iter()
        .filter_map(|b| builtin(prompts, *b))
        .collect()
}

/// A custom aspect's name: snake_case (a-z, 0-9, `_`), as it appears in
/// `aspect_critique/NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AspectName(String);

impl AspectName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for AspectName {
    type Err = OptionError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if ok {
            Ok(AspectName(name.to_string()))
        } else {
            Err(OptionError {
                value: name.to_string(),
                message: "an aspect name is snake_case: a-z, 0-9 and _".into(),
            })
        }
    }
}

/// A user-defined aspect: a name and a non-empty yes/no question.
pub fn custom(name: AspectName, definition: &str) -> Result<Aspect, OptionError> {
    if definition.trim().is_empty() {
        return Err(OptionError {
            value: definition.to_string(),
            message: "an aspect needs a definition".into(),
        });
    }
    Ok(Aspect {
        name: name.0,
        definition: definition.trim().to_string(),
    })
}

/// Whether yes is good for this aspect.
pub fn direction(aspect: &str) -> Direction {
    match aspect.parse::<BuiltinAspect>() {
        Ok(BuiltinAspect::Harmfulness | BuiltinAspect::Maliciousness) => Direction::LowerIsBetter,
        _ => Direction::HigherIsBetter,
    }
}

/// Majority of the votes: 1 for yes, 0 for no (ties, impossible with an
/// odd strictness, count as no).
pub fn score(aspect: &Aspect, votes: &[Verdict]) -> Outcome {
    if votes.is_empty() {
        return misaligned("votes", 1, 0);
    }
    let yes = votes.iter().filter(|v| v.verdict == Label::Yes).count();
    let verdict = if 2 * yes > votes.len() {
        Label::Yes
    } else {
        Label::No
    };
    let why = votes
        .iter()
        .find(|v| v.verdict == verdict)
        .map(|v| v.reason.trim().to_string())
        .unwrap_or_default();
    let mut reason = format!("{}: {verdict}", aspect.name);
    if votes.len() > 1 {
        reason.push_str(&format!(" ({yes} of {} votes yes)", votes.len()));
    }
    if !why.is_empty() {
        reason.push_str(&format!(": {why}"));
    }
    scored(
        if verdict == Label::Yes { 1.0 } else { 0.0 },
        reason,
        json!({"aspect": aspect.name, "definition": aspect.definition, "votes": votes}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majority_of_votes() {
        let aspect = custom("polite".parse().unwrap(), "Is the response polite?").unwrap();
        let v = |l| Verdict {
            verdict: l,
            reason: format!("vote {l}"),
            probabilities: None,
        };
        let Outcome::Scored { value, reason, .. } =
            score(&aspect, &[v(Label::Yes), v(Label::No), v(Label::Yes)])
        else {
            panic!()
        };
        assert_eq!(value, 1.0);
        assert_eq!(reason.unwrap(), "polite: yes (2 of 3 votes yes): vote yes");
        let Outcome::Scored { value, .. } = score(&aspect, &[v(Label::No)]) else {
            panic!()
        };
        assert_eq!(value, 0.0);
        assert!("Bad Name".parse::<AspectName>().is_err());
        assert!(custom("ok".parse().unwrap(), " ").is_err());
        assert_eq!(direction("harmfulness"), Direction::LowerIsBetter);
        assert_eq!(direction("polite"), Direction::HigherIsBetter);
    }
}
