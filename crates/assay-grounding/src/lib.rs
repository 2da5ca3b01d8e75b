//! Is this claim supported by this text? A grounding verdict without a
//! language model: [`Features`] of the claim against the text (coverage
//! of its content words and their bigrams, numbers and names the text
//! lacks, its best-matching sentence, negation) combined by a logistic
//! [`Model`] trained on human labels (`../shared/data/train`: XSum
//! hallucination spans, SummEdits, BEGIN, WiCE, HaluEval QA; see
//! [`train`]). The model's weights are the versioned data file
//! `model/grounding.json`, with the hashes of the files it was trained on
//! and its cross-validated figures; `train-grounding` rebuilds it exactly.
//!
//! Words are not meaning: a claim that puts another name, number, date,
//! unit or polarity in the slot of its closest sentence's ("Sydney" where
//! the text says "Canberra is the capital") is contradicted whatever else
//! the text holds, so [`Model::judge`] caps such a claim's probability at
//! [`CONFLICT_CAP`] ([`slots`]; a rule on top of the trained model, which
//! it leaves as it is).
//!
//! ```
//! use assay_grounding::{Model, Support};
//! let model = Model::builtin();
//! let support = Support::new(["Canberra is the capital city of Australia."]);
//! let yes = model.judge("The capital of Australia is Canberra.", &support);
//! let no = model.judge("The capital of Australia is Sydney, since 1901.", &support);
//! assert!(yes.probability > 0.5 && no.probability < 0.5);
//! assert_eq!(no.features.missing, ["sydney", "since", "1901"]);
//! // Sydney elsewhere in the text does not make it the capital.
//! let support = Support::new([
//!     "Canberra is the capital city of Australia.",
//!     "Sydney is its largest city.",
//! ]);
//! let no = model.judge("The capital of Australia is Sydney.", &support);
//! assert!(no.probability <= 0.1);
//! assert!(no.reason().contains("the closest sentence says Canberra where the claim says Sydney"));
//! ```

pub mod align;
pub mod demonstrations;
pub mod features;
pub mod fit;
pub mod language;
pub mod records;
pub mod slots;
pub mod train;
pub mod verifier;
pub mod words;

pub use features::{Features, Support, NAMES};
pub use verifier::{Verified, Verifier};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// The committed model file.
const BUILTIN: &str = include_str!("../model/grounding.json");

/// The highest P(supported) of a claim with a slot conflict
/// ([`Features::conflict`]): well below any threshold, so that the claim
/// reads as contradicted, but above zero, since the rule can misread a
/// sentence.
pub const CONFLICT_CAP: f64 = 0.1;

/// `p`, at most [`CONFLICT_CAP`] where the claim has a slot conflict.
pub fn capped(p: f64, conflict: bool) -> f64 {
    if conflict {
        p.min(CONFLICT_CAP)
    } else {
        p
    }
}

/// A trained grounding model, as `model/grounding.json` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// Bumped when the features or their meaning change.
    pub version: u32,
    /// The features' names, in order ([`NAMES`] for this version).
    pub features: Vec<String>,
    pub mean: Vec<f64>,
    pub scale: Vec<f64>,
    pub weights: Vec<f64>,
    pub bias: f64,
    /// A claim is supported from this probability: the one of best
    /// balanced accuracy on the cross-validation's out-of-fold
    /// predictions.
    pub threshold: f64,
    /// How it was trained: files and their hashes, rows, claims, folds.
    pub provenance: train::Provenance,
}

/// A verdict on one claim.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// P(the text supports the claim).
    pub probability: f64,
    /// The model's [`Model::threshold`].
    pub threshold: f64,
    pub features: Features,
}

impl Judgement {
    /// Whether the claim reads as supported (probability at least the
    /// model's threshold).
    pub fn supported(&self) -> bool {
        self.probability >= self.threshold
    }

    /// A reason naming the evidence: the best-matching sentence, the
    /// words the text lacks and a slot conflict, if any.
    pub fn reason(&self) -> String {
        let p = self.probability;
        // The sentence of a conflict is the one that says otherwise, which
        // may be another of the sentences as close as the first.
        let closest = match &self.features.conflict {
            Some(c) => Some(&c.sentence),
            None => self.features.best_sentence.as_ref(),
        };
        let evidence = match closest {
            Some(s) => format!("closest sentence: \"{}\"", clip(s, 160)),
            None => "the text has no sentence".to_string(),
        };
        let missing = if self.features.missing.is_empty() {
            "every content word is in the text".to_string()
        } else {
            format!("not in the text: {}", self.features.missing.join(", "))
        };
        let t = self.threshold;
        let conflict = match &self.features.conflict {
            Some(c) => format!("{c}; "),
            None => String::new(),
        };
        format!("P(supported) {p:.2} (supported from {t:.2}); {conflict}{missing}; {evidence}")
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

impl Model {
    /// The committed model.
    pub fn builtin() -> &'static Model {
        static MODEL: OnceLock<Model> = OnceLock::new();
        // The file is checked by the crate's tests; a broken one cannot
        // be built into a release.
        MODEL.get_or_init(|| {
            serde_json::from_str(BUILTIN).expect("model/grounding.json is a valid model")
        })
    }

    /// What identifies the committed model in signatures and cache keys:
    /// its version, the SHA-256 of its file and the version of the slot
    /// rule applied on top of it.
    pub fn builtin_identity() -> &'static str {
        static ID: OnceLock<String> = OnceLock::new();
        ID.get_or_init(|| {
            let hash = Sha256::digest(BUILTIN.as_bytes());
            let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
            format!(
                "grounding-v{}@sha256:{hex}+slots-v{}",
                Model::builtin().version,
                slots::VERSION
            )
        })
    }

    /// P(supported) for raw features.
    pub fn probability(&self, values: &[f64]) -> f64 {
        fit::logistic(values, &self.mean, &self.scale, &self.weights, self.bias)
    }

    /// The verdict on `claim` against `support`: the model's probability,
    /// at most [`CONFLICT_CAP`] where the claim puts another word in a
    /// slot of its closest sentence.
    pub fn judge(&self, claim: &str, support: &Support) -> Judgement {
        let features = Features::of(claim, support);
        let p = self.probability(&features.values);
        Judgement {
            probability: capped(p, features.conflict.is_some()),
            threshold: self.threshold,
            features,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_model_names_the_features_it_was_trained_on() {
        let m = Model::builtin();
        assert_eq!(m.features, NAMES);
        assert_eq!(m.weights.len(), NAMES.len());
        assert!(Model::builtin_identity().starts_with("grounding-v1@sha256:"));
    }

    /// Every word of "offers outdoor seating" is in the record, but the
    /// record marks it false: contradicted, the reason naming the key;
    /// saying it is not offered is no conflict.
    #[test]
    fn a_claim_of_what_a_record_marks_false_is_contradicted() {
        let record = "{'name': 'Blue Fig', 'attributes': {'OutdoorSeating': False, \
                      'RestaurantsTakeOut': True, 'Caters': 'None'}}";
        let support = Support::new(["Describe the business.", record]);
        let m = Model::builtin();
        let wrong = m.judge("Blue Fig offers outdoor seating.", &support);
        assert!(wrong.probability <= CONFLICT_CAP && !wrong.supported());
        assert!(wrong.reason().contains(
            "the record gives attributes.OutdoorSeating as False where the claim says outdoor seating"
        ));
        let right = m.judge("Blue Fig has no outdoor seating.", &support);
        assert_eq!(right.features.conflict, None);
        let catering = m.judge("Blue Fig also does catering.", &support);
        assert_eq!(
            catering.features.conflict.map(|c| c.kind),
            Some(slots::Kind::Record)
        );
        let takeout = m.judge("Blue Fig offers takeout.", &support);
        assert_eq!(takeout.features.conflict, None);
    }

    #[test]
    fn the_reason_names_the_missing_words_and_the_closest_sentence() {
        let support = Support::new(["Pride and Prejudice is an 1813 novel by Jane Austen."]);
        let j = Model::builtin().judge(
            "Pride and Prejudice was written by Charlotte Bronte.",
            &support,
        );
        assert!(!j.supported(), "{}", j.reason());
        let reason = j.reason();
        assert!(
            reason.contains("not in the text: written, charlotte, bronte"),
            "{reason}"
        );
        assert!(
            reason.contains("closest sentence: \"Pride and Prejudice is an 1813"),
            "{reason}"
        );
    }
}
