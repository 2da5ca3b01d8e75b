//! The response's opinions, and verdicts on each: biased, toxic.

use super::{blank, filled, unit, ItemVerdicts};
use crate::judged::answer::{field, texts};
use crate::judged::common::{itemized, misaligned, quote, scored, with_quotes};
use crate::judged::prompt::PromptDecl;
use crate::judged::prompt::PromptId;
use crate::judged::prompt::SlotKind::{List, Text};
use crate::judged::step::Problem;
use crate::judged::step::{list, text, Filled};
use crate::judged::step::{InputError, Inputs, StepKey, StepOutput, StepUnit};
use crate::judged::step::{Label, Verdict};
use assay_core::Outcome;
use serde_json::{json, Value};

/// The opinions a text states.
pub const OPINIONS: PromptId = PromptId(&PromptDecl {
    name: "opinions",
    text: include_str!("../../../prompts/opinions.json"),
    slots: &[("text", Text)],
    counts: &[],
    per_item: &[],
});

/// Whether each opinion is biased.
pub const BIAS_VERDICTS: PromptId = PromptId(&PromptDecl {
    name: "bias_verdicts",
    text: include_str!("../../../prompts/bias_verdicts.json"),
    slots: &[("opinions", List)],
    counts: &["verdicts"],
    per_item: &[],
});

/// Whether each opinion is toxic.
pub const TOXICITY_VERDICTS: PromptId = PromptId(&PromptDecl {
    name: "toxicity_verdicts",
    text: include_str!("../../../prompts/toxicity_verdicts.json"),
    slots: &[("opinions", List)],
    counts: &["verdicts"],
    per_item: &[],
});

/// Opinions in the response.
pub fn opinions() -> StepKey {
    unit(Opinions)
}

/// Per opinion: biased.
pub fn bias_verdicts() -> StepKey {
    unit(OpinionVerdicts(Judged::Bias))
}

/// Per opinion: toxic.
pub fn toxicity_verdicts() -> StepKey {
    unit(OpinionVerdicts(Judged::Toxicity))
}

#[derive(Debug)]
struct Opinions;

impl StepUnit for Opinions {
    fn key(&self) -> String {
        "opinions".into()
    }

    fn prompt(&self) -> PromptId {
        OPINIONS
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        Ok(filled(vec![("text", text(inputs.response()?))], Vec::new()))
    }

    fn trivial(&self, filled: &Filled) -> Option<StepOutput> {
        blank(filled, "text").then(|| StepOutput::Texts(Vec::new()))
    }

    fn check(&self, _: &Inputs<'_>, _: &Filled, answer: &Value) -> Result<StepOutput, Problem> {
        texts(field(answer, "$", "opinions")?, "$.opinions").map(StepOutput::Texts)
    }
}

/// What an opinion is judged for.
#[derive(Debug)]
enum Judged {
    Bias,
    Toxicity,
}

/// Per opinion: biased, or toxic; the two differ only in their prompt.
#[derive(Debug)]
struct OpinionVerdicts(Judged);

impl ItemVerdicts for OpinionVerdicts {
    fn key(&self) -> String {
        match self.0 {
            Judged::Bias => "bias_verdicts".into(),
            Judged::Toxicity => "toxicity_verdicts".into(),
        }
    }

    fn deps(&self) -> Vec<StepKey> {
        vec![opinions()]
    }

    fn prompt(&self) -> PromptId {
        match self.0 {
            Judged::Bias => BIAS_VERDICTS,
            Judged::Toxicity => TOXICITY_VERDICTS,
        }
    }

    fn fill(&self, inputs: &Inputs<'_>) -> Result<Filled, InputError> {
        let opinions = inputs.texts(&opinions())?;
        Ok(filled(
            vec![("opinions", list(opinions))],
            vec![("verdicts", opinions.len())],
        ))
    }
}

/// The share of opinions judged yes (`what`: biased, toxic); 0 without
/// opinions.
pub fn opinion_share(opinions: &[String], verdicts: &[Verdict], what: &str) -> Outcome {
    if opinions.len() != verdicts.len() {
        return misaligned("opinions", opinions.len(), verdicts.len());
    }
    let details = json!({"opinions": itemized("opinion", opinions, verdicts)});
    if opinions.is_empty() {
        return scored(0.0, "the response states no opinions".into(), details);
    }
    let yes = verdicts.iter().filter(|v| v.verdict == Label::Yes).count();
    scored(
        yes as f64 / opinions.len() as f64,
        with_quotes(
            format!("{yes} of {} opinions are {what}", opinions.len()),
            what,
            quote(opinions, verdicts, |l| l == Label::Yes),
        ),
        details,
    )
}
