//! `toxicity` (valor-lite after DeepEval; seed 004, "Toxicity"): the share
//! of the response's opinions that are toxic (personal attacks, mockery,
//! hate, dismissiveness, threats). Lower is better.
//!
//! Steps: [`steps::opinions`] (`prompts/opinions.json`), then
//! [`steps::toxicity_verdicts`] (`prompts/toxicity_verdicts.json`), yes
//! (toxic) or no per opinion. Score = toxic / opinions.
//!
//! Empty inputs: no opinions -> 0, as the seed says.

use crate::judged::metric::{JudgedDef, JudgedId, JudgedMetric};
use crate::judged::prompt::PromptId;
use crate::judged::share::{Items, Share};
use crate::judged::step::Verdict;
use crate::judged::steps;
use crate::spec::Direction;
use assay_core::{Field, Outcome};

pub const PROMPTS: &[PromptId] = &[steps::OPINIONS, steps::TOXICITY_VERDICTS];

pub const EMPTY_INPUTS: &str = "0 when the response has no opinions (seed 004)";

/// The id users type.
pub const ID: JudgedId = JudgedId::of(&DEF);

/// The metric's entry in [`crate::judged::registry::JUDGED`].
pub const DEF: JudgedDef = JudgedDef {
    name: "toxicity",
    summary: "share of the response's opinions that are toxic",
    direction: Direction::LowerIsBetter,
    required: &[Field::Response],
    needs_contexts: false,
    prompts: PROMPTS,
    params: &[],
    empty_inputs: EMPTY_INPUTS,
    signature_version: 1,
    default: || {
        JudgedMetric::new(Share {
            def: &DEF,
            items: Items::Opinions,
            verdicts: steps::toxicity_verdicts,
            score,
        })
    },
    configure: None,
    named_params: None,
    per_output: None,
};

pub fn score(opinions: &[String], verdicts: &[Verdict]) -> Outcome {
    steps::opinion_share(opinions, verdicts, "toxic")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::step::Label;

    #[test]
    fn share_of_toxic_opinions() {
        let opinions: Vec<String> = [
            "You're clueless.",
            "I disagree, here is why.",
            "Nobody asked you.",
        ]
        .map(String::from)
        .to_vec();
        let verdicts: Vec<Verdict> = [Label::Yes, Label::No, Label::Yes]
            .map(|l| Verdict {
                verdict: l,
                reason: String::new(),
                probabilities: None,
            })
            .to_vec();
        let Outcome::Scored { value, .. } = score(&opinions, &verdicts) else {
            panic!()
        };
        assert_eq!(value, 2.0 / 3.0);
        assert!(matches!(
            score(&opinions, &verdicts[..1]),
            Outcome::Failed(_)
        ));
    }
}
