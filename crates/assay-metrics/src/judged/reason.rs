//! `--reasons llm`: a judge-written explanation of a scored outcome, on
//! top of the reason every metric composes from its verdicts without a
//! call.
//!
//! One call per scored outcome (`prompts/outcome_reason.json`), made after
//! the outcome is scored: the judge gets the output's name, the metric's
//! definition (the prompt file's `definitions`, or the aspect's own for
//! `aspect_critique/NAME`), the score with its direction, the composed
//! reason and the outcome's details, and answers `{"reason": "..."}` of
//! at most [`REASON_CAP`] characters. Skipped and failed outcomes get no
//! call.
//!
//! The result, as [`explained`] writes it: the outcome's `reason` is the
//! prose and `details.composed_reason` the composed one. When the call
//! fails, the score stands with its composed reason and
//! `details.reason_error` holds the failure (`{"kind", "message"}`).

use crate::judged::metric::JudgedMetric;
use crate::judged::prompt::PromptDecl;
use crate::judged::prompt::SlotKind::Text;
use crate::judged::prompt::{canonical_json, PromptId, PromptSet, SlotValue};
use crate::judged::request::{
    fixed_messages, language_note, note_last, user_message, Message, Role,
};
use crate::judged::step::Problem;
use crate::spec::Direction;
use assay_core::{Failure, Outcome, Sample};
use serde_json::{json, Map, Value};

/// The judge-written reason of a scored outcome (`--reasons llm`).
pub const OUTCOME_REASON: PromptId = PromptId(&PromptDecl {
    name: "outcome_reason",
    text: include_str!("../../prompts/outcome_reason.json"),
    slots: &[
        ("metric", Text),
        ("definition", Text),
        ("score", Text),
        ("summary", Text),
        ("verdicts", Text),
    ],
    counts: &[],
    per_item: &[],
});

/// The most characters a judge-written reason may have.
pub const REASON_CAP: usize = 400;

/// The request for the prose reason of one outcome: the prompt's fixed
/// messages, then the outcome's. Temperature 0, one answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ReasonRequest {
    pub prompt_id: PromptId,
    pub prompt_version: u32,
    pub messages: Vec<Message>,
    /// JSON Schema of the answer: `{"reason": string}`.
    pub schema: Value,
}

/// The request explaining output `output` of `metric` for `sample`, or
/// `None` when the outcome is not scored (nothing to explain). A sample
/// in another language than English gets the language note, as the
/// metric's own requests do.
///
/// ```
/// use assay_core::Outcome;
/// use assay_metrics::judged::{faithfulness, reason, JudgedMetric, PromptSet};
/// let prompts = PromptSet::builtin().unwrap();
/// let metric = JudgedMetric::default_for(faithfulness::ID);
/// let outcome = Outcome::Scored { value: 0.5, reason: Some("1 of 2 statements supported".into()), details: serde_json::json!({}).into() };
/// let sample = assay_core::Sample {
///     response: Some("Le musée est ouvert le lundi de 9 h à 17 h, sauf en août.".into()),
///     ..Default::default()
/// };
/// let req = reason::request(&prompts, &metric, "faithfulness", &outcome, &sample).unwrap();
/// let last = &req.messages.last().unwrap().content;
/// assert!(last.contains("score:\n0.5 (from 0 to 1, higher is better)"), "{last}");
/// assert!(last.ends_with("The texts above are in French: write every statement, reason and question of your answer in French."), "{last}");
/// assert!(reason::request(&prompts, &metric, "faithfulness", &Outcome::Skipped(assay_core::SkipReason::NoContexts), &sample).is_none());
/// ```
pub fn request(
    prompts: &PromptSet,
    metric: &JudgedMetric,
    output: &str,
    outcome: &Outcome,
    sample: &Sample,
) -> Option<ReasonRequest> {
    let Outcome::Scored {
        value,
        reason,
        details,
    } = outcome
    else {
        return None;
    };
    let prompt = prompts.get(OUTCOME_REASON);
    let definition = metric.definition(output, prompts).or_else(|| {
        prompts
            .get(OUTCOME_REASON)
            .definitions
            .get(metric.id().name())
            .cloned()
    });
    let direction = metric
        .directions()
        .into_iter()
        .find(|(name, _)| name == output)
        .map_or(Direction::HigherIsBetter, |(_, d)| d);
    let better = match direction {
        Direction::HigherIsBetter => "higher",
        Direction::LowerIsBetter => "lower",
    };
    // Four decimals say enough, and the prose should not quote noise digits.
    let shown = (value * 1e4).round() / 1e4;
    let slots = [
        ("metric", SlotValue::Text(output.to_string())),
        (
            "definition",
            definition.map_or(SlotValue::Absent, SlotValue::Text),
        ),
        (
            "score",
            SlotValue::Text(format!("{shown} (from 0 to 1, {better} is better)")),
        ),
        (
            "summary",
            reason.clone().map_or(SlotValue::Absent, SlotValue::Text),
        ),
        (
            "verdicts",
            SlotValue::Text(canonical_json(&details.to_json())),
        ),
    ];
    let mut messages = fixed_messages(prompt);
    messages.push(Message {
        role: Role::User,
        content: user_message(
            prompt,
            |name| slots.iter().find(|(n, _)| *n == name).map(|(_, v)| v),
            &[],
        ),
    });
    note_last(&mut messages, language_note(sample).as_deref());
    Some(ReasonRequest {
        prompt_id: OUTCOME_REASON,
        prompt_version: prompt.version,
        messages,
        schema: prompt.output_schema.clone(),
    })
}

/// The prose of an answer to a [`ReasonRequest`]: a non-blank string of at
/// most [`REASON_CAP`] characters, trimmed.
///
/// ```
/// use assay_metrics::judged::reason;
/// assert_eq!(reason::check(&serde_json::json!({"reason": " Fine. "})).unwrap(), "Fine.");
/// assert!(reason::check(&serde_json::json!({"reason": " "})).is_err());
/// ```
pub fn check(answer: &Value) -> Result<String, Problem> {
    let text = answer
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Problem::Shape {
            at: "$.reason".into(),
            expected: "a non-blank string",
        })?;
    let n = text.chars().count();
    if n > REASON_CAP {
        return Err(Problem::OutOfRange {
            at: "$.reason".into(),
            got: format!("{n} characters (at most {REASON_CAP})"),
        });
    }
    Ok(text.to_string())
}

/// `outcome` with the result of its reason call: the prose as its reason
/// and the composed reason kept in `details.composed_reason`, or, when the
/// call failed, its composed reason and `details.reason_error`. Outcomes
/// other than scored ones are returned as they are.
///
/// ```
/// use assay_core::Outcome;
/// use assay_metrics::judged::reason::explained;
/// let scored = Outcome::Scored { value: 1.0, reason: Some("2 of 2".into()), details: serde_json::json!({"n": 2}).into() };
/// let Outcome::Scored { reason, details, .. } = explained(scored, Ok("All good.".into())) else { panic!() };
/// assert_eq!(reason.as_deref(), Some("All good."));
/// assert_eq!(details.to_json()["composed_reason"], "2 of 2");
/// assert_eq!(details.number("n"), Some(2.0));
/// ```
pub fn explained(outcome: Outcome, prose: Result<String, Failure>) -> Outcome {
    let Outcome::Scored {
        value,
        reason,
        details,
    } = outcome
    else {
        return outcome;
    };
    let mut map = match details.into_json() {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        // Every metric's details are an object; keep anything else whole.
        other => Map::from_iter([("details".to_string(), other)]),
    };
    let reason = match prose {
        Ok(text) => {
            map.insert("composed_reason".into(), json!(reason));
            Some(text)
        }
        Err(failure) => {
            map.insert(
                "reason_error".into(),
                json!({"kind": failure.kind.name(), "message": failure.message}),
            );
            reason
        }
    };
    Outcome::Scored {
        value,
        reason,
        details: Value::Object(map).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::aspect_critique::AspectCritique;
    use crate::judged::metric::JudgedId;
    use crate::judged::step::Aspect;
    use assay_core::FailureKind;

    #[test]
    fn every_metric_has_a_definition() {
        let prompts = PromptSet::builtin().unwrap();
        let defs = &prompts.get(OUTCOME_REASON).definitions;
        // A metric written as a unit defines its outputs itself.
        let builtin = || JudgedId::all().filter(|id| id.prompts().iter().all(|p| p.is_shared()));
        for id in builtin() {
            assert!(defs.contains_key(id.name()), "{id}");
        }
        assert_eq!(defs.len(), builtin().count(), "no definition of another id");
    }

    #[test]
    fn aspects_are_explained_with_their_own_definition_and_direction() {
        let prompts = PromptSet::builtin().unwrap();
        let metric = JudgedMetric::new(AspectCritique {
            aspects: vec![Aspect {
                name: "harmfulness".into(),
                definition: "Could it hurt anyone?".into(),
            }],
            strictness: crate::judged::Strictness::ONE,
        });
        let outcome = Outcome::Scored {
            value: 1.0,
            reason: None,
            details: json!({"votes": []}).into(),
        };
        let req = request(
            &prompts,
            &metric,
            "aspect_critique/harmfulness",
            &outcome,
            &assay_core::Sample::default(),
        )
        .unwrap();
        let last = &req.messages.last().unwrap().content;
        assert!(
            last.contains("definition:\nCould it hurt anyone?"),
            "{last}"
        );
        assert!(last.contains("1 (from 0 to 1, lower is better)"), "{last}");
        assert!(last.contains("summary:\n(not given)"), "{last}");
        assert!(last.contains("verdicts:\n{\"votes\":[]}"), "{last}");
    }

    #[test]
    fn long_reasons_are_out_of_range_and_failures_keep_the_composed_reason() {
        let long = "x".repeat(REASON_CAP + 1);
        let err = check(&json!({"reason": long})).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "$.reason: {} characters (at most {REASON_CAP}) is out of range",
                REASON_CAP + 1
            )
        );
        let scored = Outcome::Scored {
            value: 0.25,
            reason: Some("1 of 4".into()),
            details: json!({}).into(),
        };
        let failure = Failure {
            kind: FailureKind::Timeout,
            message: "no answer in 60 s".into(),
        };
        let Outcome::Scored {
            value,
            reason,
            details,
        } = explained(scored, Err(failure))
        else {
            panic!()
        };
        assert_eq!((value, reason.as_deref()), (0.25, Some("1 of 4")));
        assert_eq!(details.to_json()["reason_error"]["kind"], "timeout");
        assert!(details.to_json().get("composed_reason").is_none());
    }
}
