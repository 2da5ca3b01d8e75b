//! The decision step of the grounding metrics as a trait, so that a model
//! read from a folder (`assay-classifier`) answers in place of the
//! lexical [`crate::Model`] without the metrics knowing which answered.

/// A claim's support by some texts, as a grounding model reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Verified {
    /// P(the texts support the claim).
    pub probability: f64,
    /// The part of the texts the verdict rests on (a grounding model's
    /// best window); empty when there was nothing to read.
    pub evidence: String,
}

impl Verified {
    /// The verdict in words, as a reason quotes it: the probability, the
    /// threshold it is read against, and the start of the best window.
    ///
    /// ```
    /// use assay_grounding::Verified;
    /// let v = Verified { probability: 0.97, evidence: "Radium was found in 1898.".into() };
    /// assert_eq!(
    ///     v.reason(0.5),
    ///     "P(supported) 0.97 (supported from 0.50); best window: \"Radium was found in 1898.\""
    /// );
    /// ```
    pub fn reason(&self, threshold: f64) -> String {
        let p = self.probability;
        if self.evidence.is_empty() {
            format!("P(supported) {p:.2} (supported from {threshold:.2}); no text to check against")
        } else {
            format!(
                "P(supported) {p:.2} (supported from {threshold:.2}); best window: \"{}\"",
                clip(&self.evidence, 240)
            )
        }
    }
}

/// The first `max` characters of `s`, with an ellipsis where it was cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

/// A model that answers "do these texts support this claim?".
pub trait Verifier: Send + Sync {
    /// What names the model in signatures and cache keys: its weights'
    /// hash, and every setting that changes its answers.
    fn identity(&self) -> &str;

    /// Each claim's support by `sources`, in order.
    fn verify(&self, claims: &[&str], sources: &[&str]) -> Result<Vec<Verified>, String>;

    /// P(supported) from which a claim reads as supported.
    fn threshold(&self) -> f64 {
        0.5
    }
}

/// A model is shown by its identity.
impl std::fmt::Debug for dyn Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.identity())
    }
}
