//! `topic_adherence` (ragas `TopicAdherenceScore`): whether an assistant
//! answers what falls within the topics it should keep to
//! (`reference_topics`) and turns away what falls outside them.
//!
//! Steps: the topics the user brought up, read from the whole
//! conversation ([`conversation_topics`], prompt `conversation_topics`);
//! for each, whether the assistant answered it or refused
//! ([`topics_answered`], prompt `topics_answered`, or one `topic_answered`
//! request per topic under the per-item protocols, which is how ragas
//! asks); and whether it falls within the reference topics
//! ([`topics_in_reference`], prompt `topics_in_reference`, one request as
//! in ragas).
//!
//! A topic answered and within the reference is a true positive, one
//! answered outside it a false positive, one refused within it a false
//! negative. Value = precision, recall or (default) F1 of those counts, as
//! ragas computes them, with its `1e-10` in each denominator (so a
//! conversation whose every topic was refused outside the reference
//! scores 0, as in ragas). Where ragas gives 0 to a conversation in which
//! the user brought up no topic, assay skips it (`no_topics`). A
//! conversation whose messages or contents could not be read fails
//! (`input`) naming the field.

use crate::judged::common::{misaligned, scored};
use crate::judged::conversation::{
    readable, transcript, unreadable, Reading, TranscriptStep, TEXT_PARTS,
};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::options::TopicMode;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{ItemForm, PromptDecl, PromptId, PromptSet};
use crate::judged::step::{
    list, text, Filled, InputError, Inputs, Label, StepKey, UnitStep, Verdict,
};
use crate::judged::steps::ItemVerdicts;
use crate::params::{param, ParamError, Values};
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;
use std::sync::Arc;

/// The topics the user brought up.
pub const CONVERSATION_TOPICS: PromptId = PromptId(&PromptDecl {
    name: "conversation_topics",
    text: include_str!("../../prompts/conversation_topics.json"),
    slots: &[("turns", Text)],
    counts: &[],
    per_item: &[],
});

/// One topic answered or refused (the per-item form of [`TOPICS_ANSWERED`]).
pub const TOPIC_ANSWERED: PromptId = PromptId(&PromptDecl {
    name: "topic_answered",
    text: include_str!("../../prompts/topic_answered.json"),
    slots: &[("turns", Text), ("topic", Text)],
    counts: &[],
    per_item: &[],
});

/// Each topic answered by the assistant or refused.
pub const TOPICS_ANSWERED: PromptId = PromptId(&PromptDecl {
    name: "topics_answered",
    text: include_str!("../../prompts/topics_answered.json"),
    slots: &[("turns", Text), ("topics", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: TOPIC_ANSWERED,
        list: "topics",
        item: "topic",
        answers: "verdicts",
    }],
});

/// Each topic within the reference topics or not.
pub const TOPICS_IN_REFERENCE: PromptId = PromptId(&PromptDecl {
    name: "topics_in_reference",
    text: include_str!("../../prompts/topics_in_reference.json"),
    slots: &[("reference_topics", List), ("topics", List)],
    counts: &["verdicts"],
    per_item: &[],
});

pub const EMPTY_INPUTS: &str =
    "skipped (no_topics) when the user brings up no topic; 0 when no topic is answered within the reference topics";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "topic_adherence",
    summary: "F1 of answering the topics within reference_topics and refusing the others (ragas)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages, Field::ReferenceTopics],
    needs_contexts: false,
    prompts: &[CONVERSATION_TOPICS, TOPICS_ANSWERED, TOPICS_IN_REFERENCE],
    params: &[param(
        "mode",
        "f1",
        "precision (answered topics within the reference), recall (reference topics answered) or f1",
    )],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(TopicAdherence { mode: TopicMode::F1 }),
    configure: Some(configure),
    named_params: None,
    per_output: None,
};

fn configure(values: &Values, _: &PromptSet) -> Result<JudgedMetric, ParamError> {
    Ok(JudgedMetric::new(TopicAdherence {
        mode: values.parse("mode")?,
    }))
}

/// The metric with its mode.
#[derive(Debug)]
pub struct TopicAdherence {
    pub mode: TopicMode,
}

impl MetricUnit for TopicAdherence {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        match (readable(sample, &TEXT_PARTS), &sample.reference_topics) {
            (Some(messages), Some(reference)) => {
                let turns = transcript(messages);
                vec![
                    conversation_topics(turns.clone()),
                    topics_answered(turns.clone()),
                    topics_in_reference(reference.clone(), turns),
                ]
            }
            _ => Vec::new(),
        }
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(outcome) = unreadable(inputs.sample, &TEXT_PARTS) {
            return single(ID, outcome);
        }
        let reference = inputs
            .sample
            .reference_topics
            .clone()
            .ok_or(InputError::MissingField(Field::ReferenceTopics))?;
        let turns = transcript(readable(inputs.sample, &TEXT_PARTS).unwrap_or_default());
        let topics = inputs.texts(&conversation_topics(turns.clone()))?;
        let answered = inputs.verdicts(&topics_answered(turns.clone()))?;
        let within = inputs.verdicts(&topics_in_reference(reference, turns))?;
        single(ID, score(self.mode, topics, answered, within))
    }

    fn params(&self) -> Vec<(String, String)> {
        vec![("mode".into(), self.mode.to_string())]
    }
}

/// ragas' guard against a zero denominator.
const EPSILON: f64 = 1e-10;

/// The outcome of the topics, each with its verdicts: answered (`yes`) or
/// refused, and within the reference topics (`yes`) or not.
pub fn score(
    mode: TopicMode,
    topics: &[String],
    answered: &[Verdict],
    within: &[Verdict],
) -> Outcome {
    if topics.is_empty() {
        return Outcome::Skipped(SkipReason::NoTopics);
    }
    if answered.len() != topics.len() {
        return misaligned("topics answered", topics.len(), answered.len());
    }
    if within.len() != topics.len() {
        return misaligned("topics in reference", topics.len(), within.len());
    }
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    let mut off_topic = Vec::new();
    let mut refused = Vec::new();
    for ((topic, a), w) in topics.iter().zip(answered).zip(within) {
        match (a.verdict == Label::Yes, w.verdict == Label::Yes) {
            (true, true) => tp += 1,
            (true, false) => {
                fp += 1;
                off_topic.push(topic.as_str());
            }
            (false, true) => {
                fn_ += 1;
                refused.push(topic.as_str());
            }
            (false, false) => {}
        }
    }
    let precision = tp as f64 / (tp as f64 + fp as f64 + EPSILON);
    let recall = tp as f64 / (tp as f64 + fn_ as f64 + EPSILON);
    let value = match mode {
        TopicMode::Precision => precision,
        TopicMode::Recall => recall,
        TopicMode::F1 => 2.0 * precision * recall / (precision + recall + EPSILON),
    };
    let mut reason = format!(
        "of {} topics, {tp} answered within the reference topics, {fp} answered outside them, {fn_} refused within them",
        topics.len()
    );
    for (what, list) in [("answered outside", &off_topic), ("refused", &refused)] {
        if !list.is_empty() {
            reason.push_str(&format!("; {what}: \"{}\"", list.join("\", \"")));
        }
    }
    let items: Vec<_> = topics
        .iter()
        .zip(answered)
        .zip(within)
        .map(|((topic, a), w)| {
            json!({
                "topic": topic,
                "answered": a.verdict.name(),
                "answered_reason": a.reason,
                "in_reference": w.verdict.name(),
                "in_reference_reason": w.reason,
            })
        })
        .collect();
    scored(
        value,
        reason,
        json!({
            "mode": mode.name(),
            "true_positives": tp,
            "false_positives": fp,
            "false_negatives": fn_,
            "topics": items,
        }),
    )
}

/// The topics the user brought up over `turns` (a transcript).
pub fn conversation_topics(turns: String) -> StepKey {
    TranscriptStep::key(CONVERSATION_TOPICS, turns, Reading::Texts("topics"))
}

/// Each topic of `turns` answered or refused.
pub fn topics_answered(turns: String) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(TopicsAnswered { turns })))
}

/// Each topic of `turns` within `reference` or not.
pub fn topics_in_reference(reference: Vec<String>, turns: String) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(TopicsInReference { reference, turns })))
}

#[derive(Debug)]
struct TopicsAnswered {
    turns: String,
}

impl ItemVerdicts for TopicsAnswered {
    fn key(&self) -> String {
        format!("topics_answered\n{}", self.turns)
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![conversation_topics(self.turns.clone())]
    }

    fn prompt(&self) -> PromptId {
        TOPICS_ANSWERED
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let topics = inputs.texts(&conversation_topics(self.turns.clone()))?;
        Ok(Filled {
            slots: [("turns", text(&self.turns)), ("topics", list(topics))].into(),
            counts: vec![("verdicts", topics.len())],
            votes: 1,
        })
    }
}

#[derive(Debug)]
struct TopicsInReference {
    reference: Vec<String>,
    turns: String,
}

impl ItemVerdicts for TopicsInReference {
    fn key(&self) -> String {
        format!(
            "topics_in_reference\n{}\n{}",
            serde_json::to_string(&self.reference).unwrap_or_default(),
            self.turns
        )
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![conversation_topics(self.turns.clone())]
    }

    fn prompt(&self) -> PromptId {
        TOPICS_IN_REFERENCE
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let topics = inputs.texts(&conversation_topics(self.turns.clone()))?;
        Ok(Filled {
            slots: [
                ("reference_topics", list(&self.reference)),
                ("topics", list(topics)),
            ]
            .into(),
            counts: vec![("verdicts", topics.len())],
            votes: 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topics() -> Vec<String> {
        ["penicillin", "pasta", "bombs", "vaccines"]
            .map(String::from)
            .to_vec()
    }

    fn value(outcome: Outcome) -> f64 {
        match outcome {
            Outcome::Scored { value, .. } => value,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answered_and_within_the_reference_count_as_ragas_counts_them() {
        use Label::{No, Yes};
        // penicillin: answered, in the reference (TP); pasta: answered,
        // outside (FP); bombs: refused, outside (neither); vaccines:
        // refused, in the reference (FN). TP 1, FP 1, FN 1.
        let answered = [Yes, Yes, No, No].map(|l| Verdict::new(l, ""));
        let within = [Yes, No, No, Yes].map(|l| Verdict::new(l, ""));
        let p = value(score(TopicMode::Precision, &topics(), &answered, &within));
        let r = value(score(TopicMode::Recall, &topics(), &answered, &within));
        let f = value(score(TopicMode::F1, &topics(), &answered, &within));
        assert!((p - 0.5).abs() < 1e-9 && p < 0.5, "{p}");
        assert!((r - 0.5).abs() < 1e-9 && r < 0.5, "{r}");
        assert!((f - 0.5).abs() < 1e-9, "{f}");
        let Outcome::Scored {
            reason, details, ..
        } = score(TopicMode::F1, &topics(), &answered, &within)
        else {
            panic!()
        };
        let reason = reason.unwrap();
        assert!(
            reason.starts_with("of 4 topics, 1 answered within the reference topics, 1 answered outside them, 1 refused within them"),
            "{reason}"
        );
        assert!(reason.contains("answered outside: \"pasta\""), "{reason}");
        assert!(reason.contains("refused: \"vaccines\""), "{reason}");
        assert_eq!(details.to_json()["topics"][2]["answered"], "no");
        assert_eq!(details.to_json()["false_negatives"], 1);
    }

    #[test]
    fn refusing_everything_outside_the_reference_scores_zero_as_in_ragas() {
        let no = [Label::No, Label::No, Label::No, Label::No].map(|l| Verdict::new(l, ""));
        for mode in TopicMode::ALL {
            assert_eq!(value(score(*mode, &topics(), &no, &no)), 0.0, "{mode}");
        }
        let yes = [Label::Yes, Label::Yes, Label::Yes, Label::Yes].map(|l| Verdict::new(l, ""));
        assert!(value(score(TopicMode::F1, &topics(), &yes, &yes)) > 1.0 - 1e-9);
    }

    #[test]
    fn no_topic_is_a_skip_and_misaligned_verdicts_a_failure() {
        assert_eq!(
            score(TopicMode::F1, &[], &[], &[]),
            Outcome::Skipped(SkipReason::NoTopics)
        );
        let Outcome::Failed(f) = score(TopicMode::F1, &topics(), &[], &[]) else {
            panic!()
        };
        assert!(f.message.contains("topics answered"), "{}", f.message);
    }
}
