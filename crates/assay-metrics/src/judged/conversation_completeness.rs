//! `conversation_completeness` (DeepEval `ConversationCompletenessMetric`):
//! the share of what the user wanted from a conversation that the
//! assistant met.
//!
//! Steps: the user's intentions, read from the whole conversation
//! ([`user_intentions`], prompt `user_intentions`); then for each, whether
//! the assistant met it ([`intentions_met`], prompt `intentions_met`, or
//! one `intention_met` request per intention under the per-item protocols,
//! which is how DeepEval asks).
//!
//! Value = met / intentions, as DeepEval computes it; details list each
//! intention with its verdict and reason. Where DeepEval gives 1 to a
//! conversation in which the user wanted nothing, assay skips it
//! (`no_intentions`). A conversation whose messages or contents could not
//! be read fails (`input`) naming the field.

use crate::judged::common::{
    itemized, misaligned, quote, scored, soft_share, with_quotes, with_soft_score,
};
use crate::judged::conversation::{
    readable, transcript, unreadable, Reading, TranscriptStep, TEXT_PARTS,
};
use crate::judged::metric::{single, JudgedDef, JudgedId, JudgedMetric, MetricUnit};
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::prompt::{ItemForm, PromptDecl, PromptId};
use crate::judged::step::{
    list, text, Filled, InputError, Inputs, Label, StepKey, UnitStep, Verdict,
};
use crate::judged::steps::ItemVerdicts;
use crate::spec::Direction;
use assay_core::{Field, Outcome, Sample, SkipReason};
use serde_json::json;
use std::sync::Arc;

/// What the user wanted from a conversation.
pub const USER_INTENTIONS: PromptId = PromptId(&PromptDecl {
    name: "user_intentions",
    text: include_str!("../../prompts/user_intentions.json"),
    slots: &[("turns", Text)],
    counts: &[],
    per_item: &[],
});

/// One intention met or not (the per-item form of [`INTENTIONS_MET`]).
pub const INTENTION_MET: PromptId = PromptId(&PromptDecl {
    name: "intention_met",
    text: include_str!("../../prompts/intention_met.json"),
    slots: &[("turns", Text), ("intention", Text)],
    counts: &[],
    per_item: &[],
});

/// Each intention met by the assistant or not.
pub const INTENTIONS_MET: PromptId = PromptId(&PromptDecl {
    name: "intentions_met",
    text: include_str!("../../prompts/intentions_met.json"),
    slots: &[("turns", Text), ("intentions", List)],
    counts: &["verdicts"],
    per_item: &[ItemForm {
        prompt: INTENTION_MET,
        list: "intentions",
        item: "intention",
        answers: "verdicts",
    }],
});

pub const EMPTY_INPUTS: &str =
    "skipped (no_intentions) when the user wants nothing of the conversation";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "conversation_completeness",
    summary: "share of the user's intentions the assistant met over the conversation (DeepEval)",
    direction: Direction::HigherIsBetter,
    required: &[Field::Messages],
    needs_contexts: false,
    prompts: &[USER_INTENTIONS, INTENTIONS_MET],
    params: &[],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || JudgedMetric::new(ConversationCompleteness),
    configure: None,
    named_params: None,
    per_output: None,
};

/// The metric (it has no parameters).
#[derive(Debug)]
pub struct ConversationCompleteness;

impl MetricUnit for ConversationCompleteness {
    fn def(&self) -> &'static JudgedDef {
        &DEF
    }

    fn steps(&self, sample: &Sample) -> Vec<StepKey> {
        match readable(sample, &TEXT_PARTS) {
            Some(messages) => {
                let turns = transcript(messages);
                vec![user_intentions(turns.clone()), intentions_met(turns)]
            }
            None => Vec::new(),
        }
    }

    fn score(&self, inputs: &Inputs<'_>) -> Result<Vec<(String, Outcome)>, InputError> {
        if let Some(outcome) = unreadable(inputs.sample, &TEXT_PARTS) {
            return single(ID, outcome);
        }
        let turns = transcript(readable(inputs.sample, &TEXT_PARTS).unwrap_or_default());
        let intentions = inputs.texts(&user_intentions(turns.clone()))?;
        single(
            ID,
            score(intentions, inputs.verdicts(&intentions_met(turns))?),
        )
    }
}

/// The outcome of the user's intentions and their verdicts (`yes`: met).
pub fn score(intentions: &[String], verdicts: &[Verdict]) -> Outcome {
    if intentions.is_empty() {
        return Outcome::Skipped(SkipReason::NoIntentions);
    }
    if intentions.len() != verdicts.len() {
        return misaligned("intentions", intentions.len(), verdicts.len());
    }
    let met = verdicts.iter().filter(|v| v.verdict == Label::Yes).count();
    let reason = with_quotes(
        format!(
            "the assistant met {met} of {} user intentions",
            intentions.len()
        ),
        "unmet",
        quote(intentions, verdicts, |l| l == Label::No),
    );
    scored(
        met as f64 / intentions.len() as f64,
        reason,
        with_soft_score(
            json!({"intentions": itemized("intention", intentions, verdicts)}),
            soft_share(verdicts, Label::Yes),
        ),
    )
}

/// What the user wanted from the conversation `turns` (a transcript).
pub fn user_intentions(turns: String) -> StepKey {
    TranscriptStep::key(USER_INTENTIONS, turns, Reading::Texts("intentions"))
}

/// Each of the user's intentions met or not over `turns`.
pub fn intentions_met(turns: String) -> StepKey {
    StepKey::Unit(UnitStep(Arc::new(IntentionsMet { turns })))
}

#[derive(Debug)]
struct IntentionsMet {
    turns: String,
}

impl ItemVerdicts for IntentionsMet {
    fn key(&self) -> String {
        format!("intentions_met\n{}", self.turns)
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![user_intentions(self.turns.clone())]
    }

    fn prompt(&self) -> PromptId {
        INTENTIONS_MET
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let intentions = inputs.texts(&user_intentions(self.turns.clone()))?;
        Ok(Filled {
            slots: [
                ("turns", text(&self.turns)),
                ("intentions", list(intentions)),
            ]
            .into(),
            counts: vec![("verdicts", intentions.len())],
            votes: 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_of_intentions_met() {
        // DeepEval's reading: two intentions, the second never met -> 0.5.
        let intentions = [
            "The user wants a replacement for order 4471.".to_string(),
            "The user wants the Saturday opening hours.".to_string(),
        ];
        let verdicts = [
            Verdict::new(Label::Yes, "sent"),
            Verdict::new(Label::No, "never given"),
        ];
        let Outcome::Scored {
            value,
            reason,
            details,
        } = score(&intentions, &verdicts)
        else {
            panic!()
        };
        assert_eq!(value, 0.5);
        let reason = reason.unwrap();
        assert!(
            reason.starts_with("the assistant met 1 of 2 user intentions"),
            "{reason}"
        );
        assert!(reason.contains("Saturday opening hours"), "{reason}");
        assert_eq!(details.to_json()["intentions"][1]["verdict"], "no");
    }

    #[test]
    fn wanting_nothing_is_a_skip_and_misaligned_verdicts_a_failure() {
        assert_eq!(score(&[], &[]), Outcome::Skipped(SkipReason::NoIntentions));
        let Outcome::Failed(f) = score(&["a".to_string()], &[]) else {
            panic!()
        };
        assert!(f.message.contains("intentions"), "{}", f.message);
    }
}
