//! How the in-process judges do on plain conversations, and what a metric
//! they are unfit for does instead of printing a number no one should
//! believe: it fails every row with kind `unfit`, saying what was measured
//! and which judge to use, and asks nothing.
//!
//! The measurement is the bundled plain conversations
//! (`examples/conversations.jsonl`), each row carrying the verdicts a
//! person gives at a glance in `meta.expected`: a fact the user gave kept
//! or forgotten, a reply relevant or not, a goal reached or not, a tool
//! called with the right or the wrong arguments. `data/fitness.json` holds
//! how many the default local judge got right per metric; one it got any
//! wrong is declined under [`Protocol::Grounding`] (the default of
//! in-process judges). `--protocol per-item` asks the local model anyway,
//! which is also how the figures are measured again.

use crate::judged::metric::{JudgedDef, JudgedMetric, MetricUnit};
use crate::judged::prompt::{PromptSet, Protocol};
use crate::judged::step::{InputError, Inputs, StepKey};
use crate::spec::Direction;
use assay_core::{Failure, FailureKind, Field, Outcome, Sample};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// One metric's verdicts on the plain conversations, with the judge that
/// gave them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fitness {
    pub metric: String,
    /// The judge measured (`local:qwen2.5-coder-0.5b`).
    pub judge: String,
    /// Rows whose value was on the right side of 0.5.
    pub right: usize,
    /// Rows with an expected verdict for the metric.
    pub of: usize,
    /// What it got wrong, in a few words (none when it got all right).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong: Option<String>,
}

impl Fitness {
    /// Whether it got some verdict wrong, and so declines.
    pub fn unfit(&self) -> bool {
        self.right < self.of
    }

    /// The reason every declined row carries.
    pub fn reason(&self) -> String {
        format!(
            "the in-process judges are not fit for {}: {} gave the right verdict on {} of {} \
             plain conversations of examples/conversations.jsonl ({}); use a judge the size \
             DeepEval and ragas wrote this metric for (--judge openai:MODEL, or any \
             OpenAI-compatible endpoint), or --protocol per-item to ask the local model anyway",
            self.metric,
            self.judge,
            self.right,
            self.of,
            self.wrong.as_deref().unwrap_or("")
        )
    }
}

/// Every committed measurement.
pub fn all() -> &'static [Fitness] {
    static ALL: OnceLock<Vec<Fitness>> = OnceLock::new();
    // Checked by this module's tests: a broken file cannot be released.
    ALL.get_or_init(|| {
        serde_json::from_str(include_str!("../../data/fitness.json"))
            .expect("data/fitness.json is a list of measurements")
    })
}

/// The measurement of `metric` that holds under `protocol`: the local
/// judge's, under [`Protocol::Grounding`] only.
pub fn of(metric: &str, protocol: Protocol) -> Option<&'static Fitness> {
    all()
        .iter()
        .find(|f| f.metric == metric)
        .filter(|_| protocol == Protocol::Grounding)
}

/// Why `metric` is declined under `prompts`, if it is.
pub fn declined(metric: &str, prompts: &PromptSet) -> Option<&'static Fitness> {
    of(metric, prompts.protocol()).filter(|f| f.unfit())
}

/// `metric` as it runs under `prompts`: itself, or declined.
pub fn under(metric: JudgedMetric, prompts: &PromptSet) -> JudgedMetric {
    match declined(metric.id().name(), prompts) {
        Some(unfit) => JudgedMetric::new(Declined {
            reason: unfit.reason(),
            metric,
        }),
        None => metric,
    }
}

/// A metric that asks nothing and fails every row it would have scored.
#[derive(Debug)]
struct Declined {
    metric: JudgedMetric,
    reason: String,
}

impl MetricUnit for Declined {
    fn def(&self) -> &'static JudgedDef {
        self.metric.id().def()
    }

    fn required(&self) -> Vec<Field> {
        self.metric.required()
    }

    fn steps(&self, _sample: &Sample) -> Vec<StepKey> {
        Vec::new()
    }

    fn directions(&self) -> Vec<(String, Direction)> {
        self.metric.directions()
    }

    fn score(&self, _inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        let failure = Failure {
            kind: FailureKind::Unfit,
            message: self.reason.clone(),
        };
        Ok(self
            .metric
            .outputs()
            .into_iter()
            .map(|name| (name, Outcome::Failed(failure.clone())))
            .collect())
    }

    fn params(&self) -> Vec<(String, String)> {
        self.metric.params()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::JudgedId;

    #[test]
    fn every_measurement_names_a_known_metric_and_what_it_got_wrong() {
        assert!(all().iter().any(Fitness::unfit));
        for f in all() {
            assert!(JudgedId::all().any(|id| id.name() == f.metric), "{f:?}");
            assert!(f.right <= f.of, "{f:?}");
            assert_eq!(f.unfit(), f.wrong.is_some(), "{f:?}: say what was wrong");
        }
    }

    #[test]
    fn a_declined_metric_asks_nothing_and_fails_each_row_with_the_reason() {
        let unfit = all().iter().find(|f| f.unfit()).unwrap();
        let id: JudgedId = unfit.metric.parse().unwrap();
        let prompts = PromptSet::builtin().unwrap();
        let grounding = prompts.clone().with_protocol(Protocol::Grounding);
        let metric = under(JudgedMetric::default_for(id), &grounding);
        let row = serde_json::json!({"messages": [
            {"role": "user", "content": "I live in Oslo."},
            {"role": "assistant", "content": "Oslo is lovely."}],
            "chatbot_role": "a travel assistant", "reference_topics": ["travel"]});
        let sample = Sample::from_json(1, row.as_object().unwrap()).unwrap();
        assert!(metric.steps(&sample).is_empty());
        let outcomes = metric
            .score(&sample, &crate::judged::step::Outputs::new())
            .unwrap();
        assert!(!outcomes.is_empty());
        for (_, outcome) in outcomes {
            let Outcome::Failed(f) = outcome else {
                panic!("{outcome:?}")
            };
            assert_eq!(f.kind, FailureKind::Unfit);
            assert!(f.message.contains(&unfit.metric), "{}", f.message);
            assert!(f.message.contains("--protocol per-item"), "{}", f.message);
        }
        let asked = under(
            JudgedMetric::default_for(id),
            &prompts.with_protocol(Protocol::PerItem),
        );
        assert!(!asked.steps(&sample).is_empty(), "per-item asks the model");
    }
}
